"""The dev14 round of the secrets probe: credentials inside structured and encoded data as programs log it.

Each case names the program or format that prints it and a URL of its documentation or code. Values are drawn
from a seeded random generator in the published shape, so none is a real credential. The places are the
structured ones: JSON records with the secret nested at depth, JSON serialized inside a JSON string, Python,
Ruby and Go reprs of structs and maps, logfmt, URL-encoded form bodies and query strings (percent-encoded
values), HTTP Basic auth, Kubernetes Secret manifests (``data`` in base64, ``stringData``), ``docker inspect`` and
``kubectl describe`` environments, ``env``/``printenv``/``set``/``export -p`` dumps, YAML and TOML config prints of
ML tools, connection strings of many database URL schemes, JWTs wrapped over two lines, AWS SigV4 headers,
``.netrc`` lines, pip and npm config dumps, git's credential helper protocol, and private keys JSON-escaped.
``_look_alikes`` are values of the same places that hold no secret and must come out as written.

    python -m devtools.secret_probe generate dev14    # writes tests/fixtures/secret_probe/dev14.jsonl only
"""

from __future__ import annotations

import base64
import json
from pathlib import Path
from urllib.parse import quote

from devtools.secret_probe_draws import Case, Draws, LookAlike, case_rows, keep_rows, write_rows
from devtools.secret_probe_kinds import ALNUM, B64, HEX, LOWER_DIGITS, UPPER_DIGITS, URLSAFE, b64url

PUNCT = "!@#$%^&*/+=?"

_draws = Draws(14014)
rand, uuid4 = _draws.rand, _draws.uuid4
_TS = "2026-05-01 10:14:22,481"
_ISO = "2026-05-01T10:14:22.481Z"

K8S_SECRETS = "https://kubernetes.io/docs/concepts/configuration/secret/"
KUBECTL_DESCRIBE = "https://kubernetes.io/docs/reference/kubectl/generated/kubectl_describe/"
GO_FMT = "https://pkg.go.dev/fmt#hdr-Printing"
LOGFMT = "https://brandur.org/logfmt"
RFC7617 = "https://www.rfc-editor.org/rfc/rfc7617"
RFC6749 = "https://www.rfc-editor.org/rfc/rfc6749#section-4.4"
SQLA_URL = "https://docs.sqlalchemy.org/en/20/core/engines.html#database-urls"
NETRC = "https://www.gnu.org/software/inetutils/manual/html_node/The-_002enetrc-file.html"
SIGV4 = "https://docs.aws.amazon.com/IAM/latest/UserGuide/create-signed-request.html"


def password(n: int = 20) -> str:
    """A password with punctuation in it, as password managers make them."""
    while True:
        s = rand(n, ALNUM + PUNCT)
        if any(c in PUNCT for c in s):
            return s


def b64(s: str) -> str:
    return base64.b64encode(s.encode()).decode()


def jwt() -> str:
    head = b64url(json.dumps({"alg": "RS256", "typ": "JWT", "kid": rand(12)}).encode())
    body = b64url(json.dumps({"sub": f"system:serviceaccount:ml:{rand(6, LOWER_DIGITS)}",
                              "iss": "https://kubernetes.default.svc", "exp": 1893456000}).encode())
    return f"{head}.{body}.{rand(342, URLSAFE)}"


def pem_body(lines: int = 6) -> list[str]:
    return [rand(70, B64) for _ in range(lines)] + [rand(24, B64) + "=="]


def fold(line: str, width: int) -> list[str]:
    """``line`` cut every ``width`` characters, as a terminal or fold(1) wraps it."""
    return [line[i:i + width] for i in range(0, len(line), width)]


def _nested_json() -> list[Case]:
    f: list[Case] = []
    add = f.append
    tok = rand(48, URLSAFE)
    add(("json_nested_bearer", "a JSON access log with request headers (pino-http's req.headers; "
         "https://github.com/pinojs/pino-http#custom-serializers)", tok, [
        ("pino_req_headers", '{"level":30,"time":1777630462481,"req":{"id":7,"method":"POST","url":"/v1/jobs",'
                             '"headers":{"host":"api.acme.io","authorization":"Bearer {s}",'
                             '"content-type":"application/json"}},"msg":"request completed"}'),
    ]))
    tok = rand(40, URLSAFE)
    add(("json_nested_bearer", "a structlog JSON record with the request dict (structlog JSONRenderer; "
         "https://www.structlog.org/en/stable/api.html#structlog.processors.JSONRenderer)", tok, [
        ("structlog_request", '{"event":"upstream call","request":{"headers":{"Authorization":"Bearer {s}",'
                              '"Accept":"*/*"},"url":"https://mlflow.acme.io/api/2.0/mlflow/runs/create"},'
                              '"level":"debug","timestamp":"' + _ISO + '"}'),
    ]))
    tok = rand(44, URLSAFE)
    add(("json_nested_header_list", "Elastic Common Schema http.request.headers as lists (ECS; "
         "https://www.elastic.co/guide/en/ecs/current/ecs-http.html)", tok, [
        ("ecs_header_list", '{"@timestamp":"' + _ISO + '","http":{"request":{"method":"GET","headers":'
                            '{"x-api-key":["{s}"],"user-agent":["python-requests/2.32.3"]}}},'
                            '"log.level":"info","message":"proxied"}'),
    ]))
    pw = password()
    add(("json_nested_password", "a Winston JSON record with a config object at depth 4 "
         "(https://github.com/winstonjs/logform#json)", pw, [
        ("winston_deep", '{"level":"info","message":"starting","meta":{"config":{"services":{"postgres":'
                         '{"host":"db.internal","user":"trainer","password":"{s}","port":5432}}}}}'),
    ]))
    sec = rand(40, B64)
    add(("json_nested_aws", "a Go zap JSON record of an AWS config struct (zap.Any; "
         "https://pkg.go.dev/go.uber.org/zap#Any)", sec, [
        ("zap_any_struct", '{"level":"debug","ts":1777630462.481,"caller":"store/s3.go:88","msg":"s3 client",'
                           '"cfg":{"Region":"us-east-1","Credentials":{"AccessKeyID":"AKIA' + rand(16, UPPER_DIGITS)
                           + '","SecretAccessKey":"{s}","SessionToken":""}}}'),
    ]))
    tok = "hf_" + rand(34, ALNUM)
    add(("json_nested_array", "a JSON record whose env is a list of name/value objects (a Kubernetes pod spec "
         "logged by an operator; https://kubernetes.io/docs/tasks/inject-data-application/"
         "define-environment-variable-container/)", tok, [
        ("pod_spec_env_list", '{"level":"info","msg":"creating pod","spec":{"containers":[{"name":"trainer",'
                              '"env":[{"name":"NCCL_DEBUG","value":"INFO"},{"name":"HF_TOKEN","value":"{s}"}]}]}}'),
    ]))
    return f


def _json_in_json() -> list[Case]:
    f: list[Case] = []
    add = f.append
    pw = password(18)
    add(("json_escaped_in_json", "a JSON log whose body field holds a serialized JSON request "
         "(Python json.dumps of a string; https://docs.python.org/3/library/json.html)", pw, [
        ("body_string", '{"level":"info","msg":"login request","body":"{\\"username\\":\\"svc-train\\",'
                        '\\"password\\":\\"{s}\\"}"}'),
    ]))
    sec = rand(40, URLSAFE)
    add(("json_escaped_in_json", "a Docker json-file record of a JSON log line with a serialized body inside "
         "(https://docs.docker.com/engine/logging/drivers/json-file/)", sec, [
        ("docker_double_escaped", '{"log":"{\\"msg\\":\\"token exchange\\",\\"body\\":\\"{\\\\\\"client_secret'
                                  '\\\\\\":\\\\\\"{s}\\\\\\",\\\\\\"grant_type\\\\\\":\\\\\\"client_credentials'
                                  '\\\\\\"}\\"}\\n","stream":"stdout","time":"' + _ISO + '"}'),
    ]))
    key = "sk-proj-" + rand(48, URLSAFE)
    add(("json_escaped_in_json", "an AWS Lambda / CloudWatch record whose event body is JSON in a string "
         "(https://docs.aws.amazon.com/lambda/latest/dg/python-logging.html)", key, [
        ("lambda_event_body", '{"timestamp":"' + _ISO + '","level":"INFO","message":"event",'
                              '"event":{"httpMethod":"POST","body":"{\\"api_key\\": \\"{s}\\", \\"model\\": '
                              '\\"gpt-4o\\"}"}}'),
    ]))
    tok = rand(64, HEX)
    add(("json_escaped_in_json", "a Python logging line printing json.dumps of a dict as a repr "
         "(https://docs.python.org/3/library/logging.html)", tok, [
        ("repr_of_json_string", _TS + " DEBUG client: payload='{\"auth\": {\"token\": \"{s}\"}, \"retries\": 3}'"),
    ]))
    return f


def _reprs() -> list[Case]:
    f: list[Case] = []
    add = f.append
    key = rand(40, HEX)
    add(("python_dataclass_repr", "Python dataclass repr (https://docs.python.org/3/library/dataclasses.html)", key, [
        ("dataclass", _TS + " INFO train: TrackerConfig(project='llm-pretrain', entity='acme', api_key='{s}', "
                            "mode='online')"),
    ]))
    pw = password(16)
    add(("python_namedtuple_repr", "Python namedtuple repr with a double-quoted field "
         "(https://docs.python.org/3/library/collections.html#collections.namedtuple)", pw, [
        ("namedtuple", _TS + " DEBUG db: DSN(host='pg.internal', port=5432, user='ml', password=\"{s}\")"),
    ]))
    key = "sk-ant-api03-" + rand(93, URLSAFE) + "AA"
    add(("python_dict_repr_nested", "Python dict repr of a nested config (OmegaConf/Hydra cfg printed with print(); "
         "https://omegaconf.readthedocs.io/en/latest/usage.html)", key, [
        ("dict_repr", "{'model': {'name': 'claude-3-5-sonnet'}, 'client': {'anthropic_api_key': '{s}', "
                      "'timeout': 60}}"),
    ]))
    tok = rand(36, ALNUM)
    add(("ruby_struct_inspect", "Ruby Struct#inspect (https://docs.ruby-lang.org/en/3.3/Struct.html#method-i-inspect)",
         tok, [
        ("ruby_struct", 'I, [2026-05-01T10:14:22.481 #7]  INFO -- : #<struct Settings host="api.acme.io", '
                        'api_token="{s}", retries=3>'),
    ]))
    pw = password(18)
    add(("ruby_hash_inspect", "Ruby Hash#inspect, hash-rocket and 3.4 styles "
         "(https://docs.ruby-lang.org/en/3.4/Hash.html#method-i-inspect)", pw, [
        ("ruby_rocket", 'D, [2026-05-01T10:14:22.481 #7] DEBUG -- : params: {"user"=>"svc", "password"=>"{s}"}'),
        ("ruby_symbol_keys", 'D, [2026-05-01T10:14:22.481 #7] DEBUG -- : {username: "svc", password: "{s}"}'),
    ]))
    tok = "ya29." + rand(120, URLSAFE)
    rt = "1//0g" + rand(90, URLSAFE)
    add(("go_struct_plusv", "Go fmt %+v of an *oauth2.Token (https://pkg.go.dev/golang.org/x/oauth2#Token; " + GO_FMT
         + ")", tok, [
        ("oauth2_token_plusv", "2026/05/01 10:14:22 token: &{AccessToken:{s} TokenType:Bearer RefreshToken:" + rt
                               + " Expiry:2026-05-01 11:14:21.481 +0000 UTC raw:<nil> expiryDelta:0}"),
    ]))
    add(("go_struct_plusv_refresh", "Go fmt %+v of an *oauth2.Token, the refresh token "
         "(https://pkg.go.dev/golang.org/x/oauth2#Token)", rt, [
        ("oauth2_refresh_plusv", "2026/05/01 10:14:22 token: &{AccessToken:ya29.Xx TokenType:Bearer RefreshToken:{s}"
                                 " Expiry:2026-05-01 11:14:21.481 +0000 UTC}"),
    ]))
    pw = rand(24, ALNUM)
    add(("go_struct_v", "Go fmt %v of a struct (field values only) and %+v (" + GO_FMT + ")", pw, [
        ("go_plusv_password", "2026/05/01 10:14:22 config: {Host:pg.internal Port:5432 User:trainer Password:{s} "
                              "SSLMode:require}"),
    ]))
    pw = rand(22, ALNUM)
    add(("go_map_print", "Go fmt %v of a map[string]string (" + GO_FMT + ")", pw, [
        ("go_map", "time=2026-05-01T10:14:22Z level=DEBUG msg=\"redis opts\" opts=map[addr:redis:6379 db:0 "
                   "password:{s} username:default]"),
        ("go_map_first", "2026/05/01 10:14:22 secrets: map[password:{s} user:admin]"),
    ]))
    key = rand(32, HEX)
    add(("go_struct_sharpv", "Go fmt %#v of a pointer to a struct (" + GO_FMT + ")", key, [
        ("go_sharpv", '2026/05/01 10:14:22 &config.Client{Endpoint:"https://api.acme.io", APIKey:"{s}", '
                      'Timeout:30000000000}'),
    ]))
    return f


def _logfmt_and_forms() -> list[Case]:
    f: list[Case] = []
    add = f.append
    pw = rand(20, ALNUM)
    add(("logfmt", "logfmt key=value records (" + LOGFMT + "; go-kit log, "
         "https://pkg.go.dev/github.com/go-kit/log#NewLogfmtLogger)", pw, [
        ("logfmt_bare", 'ts=2026-05-01T10:14:22.481Z level=debug caller=db.go:41 msg="connecting" user=ml '
                        'db_password={s} host=pg.internal'),
    ]))
    tok = rand(40, URLSAFE)
    add(("logfmt", "logfmt with a quoted value (" + LOGFMT + "; logrus TextFormatter, "
         "https://github.com/sirupsen/logrus#formatters)", tok, [
        ("logfmt_quoted", 'time="2026-05-01T10:14:22Z" level=info msg="registry login" registry=ghcr.io '
                          'token="{s}" user=ci-bot'),
        ("logfmt_auth_header", 'time="2026-05-01T10:14:22Z" level=debug msg="request" method=GET '
                               'auth="Bearer {s}" path=/v2/_catalog'),
    ]))
    sec = rand(40, URLSAFE)
    add(("form_client_secret", "an OAuth 2.0 client-credentials body, application/x-www-form-urlencoded (" + RFC6749
         + ")", sec, [
        ("requests_body", _TS + " DEBUG urllib3: body=client_id=ml-pipeline&client_secret={s}"
                                "&grant_type=client_credentials&scope=read"),
        ("http_client_send", "send: b'POST /oauth/token HTTP/1.1\\r\\nHost: auth.acme.io\\r\\nContent-Type: "
                             "application/x-www-form-urlencoded\\r\\n\\r\\n'\nsend: b'grant_type=client_credentials&"
                             "client_secret={s}&client_id=ml-pipeline'"),
    ]))
    raw = password(20)
    enc = quote(raw, safe="")
    add(("form_password_percent", "an OAuth 2.0 password grant with a percent-encoded password "
         "(https://www.rfc-editor.org/rfc/rfc6749#section-4.3)", enc, [
        ("password_grant", _TS + " DEBUG oauthlib: body grant_type=password&username=svc-train&password={s}"
                                 "&scope=openid"),
    ]))
    raw_rt = "1//0g" + rand(60, URLSAFE)
    enc_rt = quote(raw_rt, safe="")
    add(("form_refresh_token_percent", "a refresh-token grant with the token percent-encoded (Google OAuth; "
         "https://developers.google.com/identity/protocols/oauth2/web-server#offline)", enc_rt, [
        ("refresh_grant", "> POST /token HTTP/2\n> content-type: application/x-www-form-urlencoded\n>\n"
                          "client_id=4077.apps.googleusercontent.com&refresh_token={s}&grant_type=refresh_token"),
    ]))
    tok = rand(43, URLSAFE)
    add(("query_access_token", "an access token in a query string (RFC 6750 section 2.3; "
         "https://www.rfc-editor.org/rfc/rfc6750#section-2.3)", tok, [
        ("nginx_access_log", '10.0.3.7 - - [01/May/2026:10:14:22 +0000] "GET /api/v1/metrics?run=17&'
                             'access_token={s} HTTP/1.1" 200 512 "-" "python-requests/2.32.3"'),
        ("uvicorn_access", 'INFO:     10.0.3.7:51234 - "GET /ws?token={s}&session=eval HTTP/1.1" 101'),
    ]))
    key = rand(32, HEX)
    add(("query_api_key_encoded_url", "a URL percent-encoded inside another URL's query (redirect_uri carrying a "
         "key; https://url.spec.whatwg.org/#application/x-www-form-urlencoded)", key, [
        ("nested_url", "GET /login?next=https%3A%2F%2Fdash.acme.io%2Fexport%3Fapi_key%3D{s}%26fmt%3Dcsv HTTP/1.1"),
    ]))
    return f


def _basic_auth() -> list[Case]:
    f: list[Case] = []
    add = f.append
    cred = b64(f"svc-train:{password(18)}")
    add(("basic_auth", "HTTP Basic credentials, base64(user:password) (" + RFC7617 + "); curl -v", cred, [
        ("curl_v", "> GET /api/v2/artifacts HTTP/1.1\n> Host: artifactory.acme.io\n> Authorization: Basic {s}\n"
                   "> User-Agent: curl/8.5.0"),
    ]))
    cred = b64(f"admin:{password(14)}")
    add(("basic_auth", "HTTP Basic in a JSON-logged header map (" + RFC7617 + ")", cred, [
        ("json_headers", '{"level":"debug","msg":"outgoing","headers":{"authorization":"Basic {s}",'
                         '"accept":"application/json"}}'),
    ]))
    cred = b64(f"ml:{rand(24, ALNUM)}")
    add(("basic_auth", "HTTP Basic in Python http.client's debuglevel send line (" + RFC7617 + "; "
         "https://docs.python.org/3/library/http.client.html#http.client.HTTPConnection.set_debuglevel)", cred, [
        ("http_client", "send: b'GET /simple/torch/ HTTP/1.1\\r\\nHost: pypi.acme.io\\r\\nAuthorization: "
                        "Basic {s}\\r\\nAccept-Encoding: identity\\r\\n\\r\\n'"),
    ]))
    cred = b64(f"proxyuser:{password(16)}")
    add(("proxy_basic_auth", "Proxy-Authorization Basic (https://www.rfc-editor.org/rfc/rfc9110#section-11.7.2)",
         cred, [
        ("proxy_auth", "> CONNECT huggingface.co:443 HTTP/1.1\n> Host: huggingface.co:443\n"
                       "> Proxy-Authorization: Basic {s}\n> Proxy-Connection: Keep-Alive"),
    ]))
    cred = b64(f"_json_key_base64:{rand(60, B64)}")
    add(("basic_auth_go_header", "Go http.Header printed with %v: map[Authorization:[Basic ...]] (" + GO_FMT
         + "; https://pkg.go.dev/net/http#Header)", cred, [
        ("go_header_map", "2026/05/01 10:14:22 request headers: map[Accept:[application/json] "
                          "Authorization:[Basic {s}] User-Agent:[Go-http-client/1.1]]"),
    ]))
    return f


def _kubernetes() -> list[Case]:
    f: list[Case] = []
    add = f.append
    pw = b64(password(20))
    add(("k8s_secret_data", "kubectl get secret -o yaml, data values base64 (" + K8S_SECRETS + ")", pw, [
        ("get_yaml", "apiVersion: v1\ndata:\n  password: {s}\n  username: " + b64("trainer") + "\nkind: Secret\n"
                     "metadata:\n  name: pg-creds\n  namespace: ml\ntype: Opaque"),
    ]))
    tok = b64(rand(40, ALNUM))
    add(("k8s_secret_data", "kubectl get secret -o json (" + K8S_SECRETS + ")", tok, [
        ("get_json", '{\n    "apiVersion": "v1",\n    "data": {\n        "api-token": "{s}"\n    },\n'
                     '    "kind": "Secret",\n    "metadata": {\n        "name": "wandb",\n        "namespace": "ml"'
                     '\n    },\n    "type": "Opaque"\n}'),
    ]))
    auth = b64(f"robot$ml+ci:{rand(32, ALNUM)}")
    dockercfg = b64(json.dumps({"auths": {"harbor.acme.io": {"auth": auth}}}))
    add(("k8s_dockerconfigjson", "kubectl get secret of type kubernetes.io/dockerconfigjson "
         "(https://kubernetes.io/docs/concepts/configuration/secret/#docker-config-secrets)", dockercfg, [
        ("dockerconfigjson", "apiVersion: v1\ndata:\n  .dockerconfigjson: {s}\nkind: Secret\nmetadata:\n"
                             "  name: regcred\ntype: kubernetes.io/dockerconfigjson"),
    ]))
    key = rand(40, B64)
    add(("k8s_secret_stringdata", "a Secret manifest with stringData printed by kubectl apply --dry-run=client "
         "-o yaml (" + K8S_SECRETS + ")", key, [
        ("string_data", "apiVersion: v1\nkind: Secret\nmetadata:\n  name: s3-creds\nstringData:\n"
                        "  AWS_ACCESS_KEY_ID: AKIA" + rand(16, UPPER_DIGITS) + "\n  AWS_SECRET_ACCESS_KEY: {s}\n"
                        "type: Opaque"),
    ]))
    t = jwt()
    add(("k8s_sa_token_data", "a service-account token Secret: data.token base64 of a JWT (" + K8S_SECRETS + ")",
         b64(t)[:200], [
        ("sa_token", "apiVersion: v1\ndata:\n  ca.crt: " + b64("-----BEGIN CERTIFICATE-----\nMIIB")
                     + "\n  namespace: " + b64("ml") + "\n  token: " + b64(t) + "\nkind: Secret\ntype: "
                     "kubernetes.io/service-account-token"),
    ]))
    pw = password(16)
    add(("kubectl_describe_env", "kubectl describe pod's Environment section (" + KUBECTL_DESCRIBE + ")", pw, [
        ("describe_env", "Containers:\n  trainer:\n    Image:  ghcr.io/acme/trainer:1.4\n    Environment:\n"
                         "      NCCL_DEBUG:                INFO\n      MLFLOW_TRACKING_PASSWORD:  {s}\n"
                         "      DB_PASSWORD:               <set to the key 'password' in secret 'pg-creds'>  "
                         "Optional: false\n    Mounts:\n      /data from data (rw)"),
    ]))
    key = rand(40, HEX)
    add(("docker_inspect_env", "docker inspect's Config.Env list (https://docs.docker.com/reference/cli/docker/"
         "inspect/)", key, [
        ("inspect_env", '        "Env": [\n            "PATH=/usr/local/sbin:/usr/local/bin:/usr/sbin:/usr/bin",\n'
                        '            "WANDB_API_KEY={s}",\n            "CUDA_VERSION=12.4.1"\n        ],'),
    ]))
    tok = "hf_" + rand(34, ALNUM)
    add(("docker_inspect_env", "docker inspect --format '{{json .Config.Env}}' (one line) "
         "(https://docs.docker.com/reference/cli/docker/inspect/)", tok, [
        ("inspect_env_json_line", '["PATH=/usr/bin","HF_TOKEN={s}","HF_HOME=/cache/hf"]'),
    ]))
    return f


def _env_dumps_and_configs() -> list[Case]:
    f: list[Case] = []
    add = f.append
    sec = rand(40, B64)
    add(("bash_set_dump", "bash's set builtin quoting a value (https://www.gnu.org/software/bash/manual/"
         "html_node/The-Set-Builtin.html)", sec, [
        ("set_quoted", "BASH_VERSION='5.2.21(1)-release'\nAWS_SECRET_ACCESS_KEY='{s}'\nHOSTNAME=gpu-node-17"),
    ]))
    tok = "hf_" + rand(34, ALNUM)
    add(("export_p_dump", "bash export -p / declare -x (https://www.gnu.org/software/bash/manual/html_node/"
         "Bash-Builtins.html)", tok, [
        ("declare_x", 'declare -x HF_HOME="/cache/hf"\ndeclare -x HUGGING_FACE_HUB_TOKEN="{s}"\n'
                      'declare -x OLDPWD'),
    ]))
    pw = rand(32, ALNUM)
    add(("printenv_dump", "printenv (https://www.gnu.org/software/coreutils/manual/html_node/printenv-invocation.html)",
         pw, [
        ("printenv", "RAY_ADDRESS=ray://head:10001\nRAY_REDIS_PASSWORD={s}\nRAY_USAGE_STATS_ENABLED=0"),
    ]))
    key = rand(40, HEX)
    add(("deepspeed_pdsh_cmd", "DeepSpeed's multinode runner logging its pdsh command with exports "
         "(deepspeed/launcher/multinode_runner.py; https://github.com/microsoft/DeepSpeed/blob/master/deepspeed/"
         "launcher/multinode_runner.py)", key, [
        ("pdsh_exports", "[2026-05-01 10:14:22,481] [INFO] [runner.py:568:main] cmd = pdsh -S -f 1024 -w "
                         "node1,node2 export PYTHONPATH=/workspace; export WANDB_API_KEY={s}; export "
                         "NCCL_IB_HCA=mlx5; cd /workspace; /usr/bin/python -u -m deepspeed.launcher.launch"),
    ]))
    key2 = rand(40, HEX)
    add(("deepspeed_env_file", "the .deepspeed_env file DeepSpeed exports to every node "
         "(https://www.deepspeed.ai/getting-started/#multi-node-environment-variables)", key2, [
        ("deepspeed_env_cat", "$ cat ~/.deepspeed_env\nNCCL_SOCKET_IFNAME=eth0\nWANDB_API_KEY={s}"),
    ]))
    key = rand(40, HEX)
    add(("wandb_settings", "wandb's settings file and the netrc it writes (https://docs.wandb.ai/guides/track/"
         "environment-variables/)", key, [
        ("netrc_multiline", "$ cat ~/.netrc\nmachine api.wandb.ai\n  login user\n  password {s}"),
    ]))
    tok = rand(40, ALNUM)
    add(("netrc_one_line", ".netrc one-line form (" + NETRC + ")", tok, [
        ("netrc_line", "machine artifactory.acme.io login ci-bot password {s}"),
        ("netrc_macdef_style", "default login anonymous password {s}"),
    ]))
    pw = password(18)
    add(("toml_config", "a TOML config print (tomllib; https://toml.io/en/v1.0.0) of a tracker", pw, [
        ("toml_section", "[mlflow]\ntracking_uri = \"https://mlflow.acme.io\"\ntracking_username = \"ml\"\n"
                         "tracking_password = \"{s}\"\n\n[s3]\nbucket = \"ckpt\""),
    ]))
    key = rand(40, HEX)
    add(("toml_config", "a TOML dotted key with a secret (https://toml.io/en/v1.0.0#keys)", key, [
        ("toml_dotted", "wandb.api_key = \"{s}\"\nwandb.project = \"pretrain\""),
    ]))
    pw = password(16)
    add(("ray_cluster_yaml", "a Ray cluster YAML's head_start_ray_commands with --redis-password "
         "(https://docs.ray.io/en/latest/cluster/vms/references/ray-cluster-configuration.html)", pw, [
        ("ray_yaml", "head_start_ray_commands:\n  - ray stop\n  - ray start --head --port=6379 "
                     "--redis-password='{s}' --dashboard-host=0.0.0.0"),
    ]))
    tok = rand(40, URLSAFE)
    add(("hydra_yaml_nested", "OmegaConf.to_yaml of a nested logger config "
         "(https://omegaconf.readthedocs.io/en/latest/usage.html#to-yaml)", tok, [
        ("hydra_yaml", "trainer:\n  max_epochs: 3\nlogger:\n  mlflow:\n    tracking_uri: https://mlflow.acme.io\n"
                       "    auth:\n      token: {s}\n  wandb:\n    project: pretrain"),
    ]))
    pw = password(20)
    add(("pip_config_list", "pip config list (https://pip.pypa.io/en/stable/cli/pip_config/)",
         quote(pw, safe=""), [
        ("pip_config", "global.extra-index-url='https://ci:{s}@pypi.acme.io/simple'\n"
                       "global.timeout='60'"),
    ]))
    tok = "npm_" + rand(36, ALNUM)
    add(("npm_config", "npm config list / .npmrc with _authToken (https://docs.npmjs.com/cli/v10/configuring-npm/"
         "npmrc#auth-related-configuration)", tok, [
        ("npmrc_cat", "//registry.npmjs.org/:_authToken={s}\nregistry=https://registry.npmjs.org/"),
        ("npm_config_list", '; "user" config from /home/ci/.npmrc\n\n//npm.acme.io/:_authToken = "{s}"\n'
                            'fund = false'),
    ]))
    tok = rand(36, ALNUM)
    add(("yarnrc_token", ".yarnrc.yml npmAuthToken (https://yarnpkg.com/configuration/yarnrc#npmAuthToken)", tok, [
        ("yarnrc", "npmScopes:\n  acme:\n    npmAlwaysAuth: true\n    npmAuthToken: {s}\n"
                   "    npmRegistryServer: \"https://npm.acme.io\""),
    ]))
    tok = "gho_" + rand(36, ALNUM)
    add(("git_credential_fill", "git credential fill output (https://git-scm.com/docs/git-credential#IOFMT)", tok, [
        ("credential_fill", "$ printf 'protocol=https\\nhost=github.com\\n' | git credential fill\n"
                            "protocol=https\nhost=github.com\nusername=x-access-token\npassword={s}"),
    ]))
    pw = rand(20, ALNUM)
    add(("git_credential_store", "git-credential-store's file (https://git-scm.com/docs/git-credential-store#_"
         "storage_format)", pw, [
        ("credentials_file", "$ cat ~/.git-credentials\nhttps://ml-bot:{s}@gitlab.acme.io"),
    ]))
    return f


def _connection_strings() -> list[Case]:
    f: list[Case] = []
    add = f.append
    schemes = [
        ("postgresql+psycopg2://trainer:{s}@pg.internal:5432/runs", SQLA_URL),
        ("mysql+pymysql://ml:{s}@mysql.internal/optuna?charset=utf8mb4", SQLA_URL),
        ("mongodb+srv://app:{s}@cluster0.ab1cd.mongodb.net/?retryWrites=true",
         "https://www.mongodb.com/docs/manual/reference/connection-string/"),
        ("rediss://default:{s}@redis.acme.io:6380/0", "https://www.iana.org/assignments/uri-schemes/prov/rediss"),
        ("amqps://celery:{s}@mq.acme.io:5671/ml", "https://www.rabbitmq.com/docs/uri-spec"),
        ("clickhouse://default:{s}@ch.internal:9000/metrics", "https://clickhouse.com/docs/en/interfaces/cli"),
        ("mssql+pyodbc://sa:{s}@sql.internal/ml?driver=ODBC+Driver+18", SQLA_URL),
        ("snowflake://etl:{s}@acme-xy12345/ML/PUBLIC?warehouse=WH",
         "https://docs.snowflake.com/en/developer-guide/python-connector/sqlalchemy"),
        ("nats://ml:{s}@nats.internal:4222", "https://docs.nats.io/using-nats/developer/connecting/userpass"),
        ("cockroachdb://root:{s}@crdb.internal:26257/defaultdb?sslmode=verify-full",
         "https://www.cockroachlabs.com/docs/stable/connection-parameters"),
    ]
    for n, (url, src) in enumerate(schemes):
        pw = rand(22, ALNUM)
        scheme = url.split(":", 1)[0]
        ctx = f"{scheme.replace('+', '_')}_url"
        line = [
            _TS + " INFO db: engine created url=" + url,
            '{"level":"info","msg":"connecting","dsn":"' + url + '"}',
            "DATABASE_URL=" + url,
        ][n % 3]
        add(("db_url_" + scheme.split("+")[0], f"{scheme} connection URL ({src})", pw, [(ctx, line)]))
    pw = password(18)
    add(("jdbc_url_params", "a JDBC URL with user and password parameters "
         "(https://jdbc.postgresql.org/documentation/use/#connecting-to-the-database)", pw, [
        ("jdbc", "INFO HikariDataSource: jdbcUrl=jdbc:postgresql://pg.internal:5432/feast?user=feast&password={s}"
                 "&ssl=true"),
    ]))
    pw = password(18)
    add(("ado_net_conn", "an ADO.NET / ODBC connection string (https://learn.microsoft.com/en-us/dotnet/framework/"
         "data/adonet/connection-string-syntax)", pw, [
        ("ado_net", "ConnectionString: Server=tcp:sql.acme.io,1433;Database=ml;User ID=etl;Password={s};"
                    "Encrypt=True;"),
    ]))
    pw = rand(20, ALNUM)
    add(("libpq_keyword_conn", "a libpq keyword/value connection string (https://www.postgresql.org/docs/current/"
         "libpq-connect.html#LIBPQ-CONNSTRING-KEYWORD-VALUE)", pw, [
        ("libpq_kv", "psycopg.connect: dbname=feast host=pg.internal user=feast password={s} sslmode=require"),
    ]))
    return f


def _wrapped_and_signed() -> list[Case]:
    f: list[Case] = []
    add = f.append
    t = jwt()
    lines = fold("token:      " + t, 80)
    add(("jwt_wrapped", "a JWT wrapped by the terminal at 80 columns (kubectl describe secret, token line; "
         + KUBECTL_DESCRIBE + ")", "\n".join([lines[0][len("token:      "):], *lines[1:]]), [
        ("describe_wrapped", "Data\n====\nca.crt:     1099 bytes\nnamespace:  2 bytes\n" + "\n".join(lines)),
    ]))
    t2 = jwt()
    lines = fold("> Authorization: Bearer " + t2, 120)
    add(("jwt_wrapped", "a JWT in an Authorization header folded by fold -w 120 "
         "(https://www.gnu.org/software/coreutils/manual/html_node/fold-invocation.html)",
         "\n".join([lines[0][len("> Authorization: Bearer "):], *lines[1:]]), [
        ("header_wrapped", "\n".join(lines)),
    ]))
    sig = rand(64, HEX)
    add(("sigv4_signature", "an AWS SigV4 Authorization header (" + SIGV4 + "), botocore debug", sig, [
        ("sigv4_header", "2026-05-01 10:14:22,481 botocore.endpoint [DEBUG] Sending http request: "
                         "<AWSPreparedRequest stream_output=False, method=GET, url=https://ckpt.s3.amazonaws.com/, "
                         "headers={'X-Amz-Date': b'20260501T101422Z', 'Authorization': b'AWS4-HMAC-SHA256 "
                         "Credential=AKIAIOSFODNN7EXAMPLE/20260501/us-east-1/s3/aws4_request, "
                         "SignedHeaders=host;x-amz-date, Signature={s}'}>"),
    ]))
    st = "IQoJb3JpZ2luX2Vj" + rand(300, B64)
    add(("sigv4_session_token", "X-Amz-Security-Token header of temporary credentials (" + SIGV4 + ")", st, [
        ("security_token_header", "send: b'GET /ckpt/step-100/ HTTP/1.1\\r\\nHost: s3.amazonaws.com\\r\\n"
                                  "X-Amz-Security-Token: {s}\\r\\nX-Amz-Date: 20260501T101422Z\\r\\n\\r\\n'"),
    ]))
    body = pem_body()
    add(("pem_json_escaped", "an OpenSSH private key in a JSON string, newlines as \\n (terraform output -json; "
         "https://developer.hashicorp.com/terraform/cli/commands/output)", "\n".join(body), [
        ("terraform_output", '{"ssh_private_key":{"sensitive":false,"type":"string","value":"-----BEGIN OPENSSH '
                             'PRIVATE KEY-----\\n' + "\\n".join(body) + '\\n-----END OPENSSH PRIVATE KEY-----\\n"}}'),
    ]))
    body = pem_body(5)
    add(("pem_json_escaped", "a GCP service-account key JSON with private_key (https://cloud.google.com/iam/docs/"
         "keys-create-delete)", "\n".join(body), [
        ("gcp_sa_json", '{"type": "service_account", "project_id": "ml-prod", "private_key_id": "'
                        + rand(40, HEX) + '", "private_key": "-----BEGIN PRIVATE KEY-----\\n'
                        + "\\n".join(body) + '\\n-----END PRIVATE KEY-----\\n", "client_email": '
                        '"trainer@ml-prod.iam.gserviceaccount.com"}'),
    ]))
    body = pem_body(4)
    add(("pem_python_repr", "an RSA key in a Python dict repr, newlines as \\n "
         "(https://docs.python.org/3/library/functions.html#repr)", "\n".join(body), [
        ("dict_repr_pem", "{'host': 'gpu-17', 'pkey': '-----BEGIN RSA PRIVATE KEY-----\\n"
                          + "\\n".join(body) + "\\n-----END RSA PRIVATE KEY-----\\n'}"),
    ]))
    return f


def _look_alikes() -> list[LookAlike]:
    """(context, source, keep, text): values in the places above that hold no secret."""
    sha64, uid = rand(64, HEX), uuid4()
    plain_b64 = b64("training-config-v3")
    ns_b64 = b64("ml-prod")
    pub = "AAAAC3NzaC1lZDI1NTE5AAAAI" + rand(43, B64)
    return [
        ("sha256_digest", "docker inspect RepoDigests", sha64,
         f'"RepoDigests": ["ghcr.io/acme/trainer@sha256:{sha64}"]'),
        ("k8s_uid_json", "kubectl get -o json", uid, '{"metadata":{"name":"trainer-0","uid":"' + uid + '"}}'),
        ("request_id_json", "a JSON access log", (rq := uuid4()),
         '{"level":30,"req":{"id":"' + rq + '","headers":{"x-request-id":"' + rq + '"}},"msg":"ok"}'),
        ("trace_id_logfmt", "logfmt", (tr := rand(32, HEX)), f"level=info msg=done trace_id={tr} span_id=7a1b"),
        ("configmap_b64", "kubectl get configmap with binaryData", plain_b64,
         f"apiVersion: v1\nbinaryData:\n  version.txt: {plain_b64}\nkind: ConfigMap"),
        ("secret_namespace_b64", "a Secret's namespace field (base64 of a namespace name)", ns_b64,
         f"data:\n  namespace: {ns_b64}"),
        ("ssh_public_key", "authorized_keys line", "ssh-ed25519 " + pub,
         f"$ cat ~/.ssh/authorized_keys\nssh-ed25519 {pub} ml@gpu-17"),
        ("public_key_json", "a JWKS modulus", (n_ := rand(86, URLSAFE)),
         '{"keys":[{"kty":"RSA","kid":"k1","use":"sig","n":"' + n_ + '","e":"AQAB"}]}'),
        ("masked_stars_json", "a masked JSON field", "********",
         '{"request":{"headers":{"authorization":"********"}}}'),
        ("masked_redacted_word", "a masked header", "[REDACTED]", "> Authorization: Bearer [REDACTED]"),
        ("masked_pydantic", "pydantic SecretStr repr", "SecretStr('**********')",
         "Settings(api_key=SecretStr('**********'), model='gpt-4o')"),
        ("masked_sqlalchemy", "SQLAlchemy's URL repr masks the password", "postgresql://trainer:***@pg.internal/runs",
         "INFO sqlalchemy.engine: Engine(postgresql://trainer:***@pg.internal/runs)"),
        ("npm_protected", "npm config list hides tokens", '(protected)',
         '//registry.npmjs.org/:_authToken = (protected)'),
        ("describe_secret_bytes", "kubectl describe secret prints sizes", "password:  16 bytes",
         "Data\n====\npassword:  16 bytes\nusername:  7 bytes"),
        ("describe_secret_ref", "kubectl describe pod secretKeyRef", "<set to the key 'token' in secret 'hf'>",
         "    Environment:\n      HF_TOKEN:  <set to the key 'token' in secret 'hf'>  Optional: false"),
        ("max_tokens", "an LLM client option", "max_tokens=4096", "openai: create max_tokens=4096 temperature=0.2"),
        ("password_length", "a generator option", "password_length=16", "pwgen: password_length=16 symbols=true"),
        ("secret_name", "a Helm value naming a Secret", "secret_name=my-secret",
         "helm: set auth.existingSecret secret_name=my-secret"),
        ("secret_name_yaml", "a Secret reference in YAML", "secretName: tls-cert",
         "volumes:\n- name: tls\n  secret:\n    secretName: tls-cert"),
        ("key_names_only", "a list of required variable names", "HF_TOKEN, WANDB_API_KEY, AWS_SECRET_ACCESS_KEY",
         "error: missing required environment: HF_TOKEN, WANDB_API_KEY, AWS_SECRET_ACCESS_KEY"),
        ("key_file_path", "a path to a key file", "/home/ml/.ssh/id_ed25519",
         "ssh -i /home/ml/.ssh/id_ed25519 ml@gpu-17"),
        ("key_file_yaml", "a TLS key file path in a config", "/etc/ssl/private/server.key",
         "tls:\n  cert_file: /etc/ssl/certs/server.crt\n  key_file: /etc/ssl/private/server.key"),
        ("credentials_file_env", "a credentials file path in env", "/var/run/secrets/gcp/key.json",
         "GOOGLE_APPLICATION_CREDENTIALS=/var/run/secrets/gcp/key.json"),
        ("token_type", "an OAuth response", '"token_type":"Bearer"',
         '{"token_type":"Bearer","expires_in":"3599","scope":"read"}'),
        ("grant_type", "a form body without a secret", "grant_type=client_credentials&scope=read",
         "body=grant_type=client_credentials&scope=read"),
        ("redirect_uri_encoded", "a percent-encoded redirect", "redirect_uri=https%3A%2F%2Fapp.acme.io%2Fcallback",
         "GET /authorize?response_type=code&client_id=dash&redirect_uri=https%3A%2F%2Fapp.acme.io%2Fcallback"),
        ("code_challenge_method", "PKCE method", "code_challenge_method=S256",
         "GET /authorize?code_challenge_method=S256&response_type=code"),
        ("sigv4_signed_headers", "the public part of a SigV4 header", "SignedHeaders=host;x-amz-content-sha256",
         "Authorization scope: SignedHeaders=host;x-amz-content-sha256 region=us-east-1"),
        ("amz_content_sha", "x-amz-content-sha256 (a payload hash)", (ph := rand(64, HEX)),
         f"> x-amz-content-sha256: {ph}"),
        ("amz_unsigned", "x-amz-content-sha256 unsigned", "UNSIGNED-PAYLOAD",
         "> x-amz-content-sha256: UNSIGNED-PAYLOAD"),
        ("go_struct_no_secret", "Go %+v of a struct without secrets", "{Host:pg.internal Port:5432 User:trainer}",
         "2026/05/01 10:14:22 config: {Host:pg.internal Port:5432 User:trainer}"),
        ("go_map_no_secret", "Go map without secrets", "map[addr:redis:6379 db:0]",
         "2026/05/01 10:14:22 opts=map[addr:redis:6379 db:0]"),
        ("dataclass_no_secret", "a dataclass repr without secrets", "TrainConfig(lr=0.0003, warmup='cosine')",
         "INFO TrainConfig(lr=0.0003, warmup='cosine')"),
        ("ruby_hash_no_secret", "a Ruby hash", '{"user"=>"svc", "role"=>"reader"}',
         'D, [2026-05-01T10:14:22.481 #7] DEBUG -- : params: {"user"=>"svc", "role"=>"reader"}'),
        ("url_without_password", "a DB URL without a password", "postgresql://trainer@pg.internal:5432/runs",
         "db: url=postgresql://trainer@pg.internal:5432/runs"),
        ("redis_url_no_auth", "a Redis URL without credentials", "redis://redis.internal:6379/0",
         "CELERY_BROKER_URL=redis://redis.internal:6379/0"),
        ("netrc_no_password", "a .netrc line without a password", "machine github.com login ml-bot",
         "machine github.com login ml-bot"),
        ("git_credential_no_pw", "git credential input", "host=github.com",
         "protocol=https\nhost=github.com\nusername=ml-bot"),
        ("public_cert_json", "a certificate in JSON", "-----BEGIN CERTIFICATE-----",
         '{"ca":"-----BEGIN CERTIFICATE-----\\nMIIBszCCAVmgAwIBAgIU\\n-----END CERTIFICATE-----\\n"}'),
        ("public_key_pem_json", "a public key in JSON", "-----BEGIN PUBLIC KEY-----",
         '{"pub":"-----BEGIN PUBLIC KEY-----\\nMFkwEwYHKoZIzj0CAQYIKoZI\\n-----END PUBLIC KEY-----\\n"}'),
        ("git_sha", "git log", (gs := rand(40, HEX)), f"commit {gs}"),
        ("model_revision_json", "a HF revision in JSON", (rv := rand(40, HEX)),
         '{"model":{"id":"meta-llama/Llama-3-8B","revision":"' + rv + '"}}'),
        ("token_count_json", "token counts in a JSON usage", '"prompt_tokens":"812"',
         '{"usage":{"prompt_tokens":"812","completion_tokens":"97"}}'),
        ("batched_tokens", "vLLM's engine arguments", "max_num_batched_tokens=8192",
         "INFO llm_engine.py:161 Initializing an LLM engine with config: max_num_batched_tokens=8192, seed=0"),
        ("tokenizer_key", "a tokenizer option", "pad_token=<|endoftext|>",
         "tokenizer: pad_token=<|endoftext|> eos_token=<|endoftext|>"),
        ("basic_auth_word", "an auth scheme name", "auth_type: basic", "registry:\n  auth_type: basic\n  url: x"),
        ("password_policy", "a policy value", "password_policy=strong", "iam: password_policy=strong min_length=12"),
        ("wandb_run_path", "a wandb run path", "acme/pretrain/3k2j9x1q", "wandb: run acme/pretrain/3k2j9x1q"),
        ("docker_env_plain", "docker inspect env without secrets", "CUDA_VERSION=12.4.1",
         '"Env": ["PATH=/usr/bin", "CUDA_VERSION=12.4.1"]'),
        ("k8s_secret_type", "a Secret's type", "type: kubernetes.io/tls", "kind: Secret\ntype: kubernetes.io/tls"),
        ("sha1_etag_json", "an ETag in JSON", (et := rand(32, HEX)), '{"headers":{"etag":"\\"' + et + '\\""}}'),
        ("base64_json_config", "base64 of a plain JSON config in a log", (bc := b64('{"lr": 0.001, "bs": 32}')),
         f"INFO launcher: config_b64={bc}"),
        ("env_ref_placeholder", "a placeholder", "${DB_PASSWORD}",
         "DATABASE_URL=postgresql://ml:${DB_PASSWORD}@pg/runs"),
    ]


def _more_reprs_and_encodings() -> list[Case]:  # noqa: PLR0915 - one statement per case: a table
    """A second batch, written and scored blind after the first: other languages' reprs, more encodings and
    launchers' argument forms."""
    f: list[Case] = []
    add = f.append
    pw = password(18)
    add(("java_tostring", "a Java record / Lombok @ToString repr (https://projectlombok.org/features/ToString)", pw, [
        ("lombok", "INFO  c.a.m.DbConfig - DataSourceProperties(url=jdbc:postgresql://pg/ml, username=ml, "
                   "password={s}, driverClassName=org.postgresql.Driver)"),
        ("java_record", "DEBUG ConnectionSpec[host=pg.internal, user=ml, password={s}]"),
    ]))
    key = rand(40, URLSAFE)
    add(("rust_debug", "Rust #[derive(Debug)] output, flat and pretty {:#?} "
         "(https://doc.rust-lang.org/std/fmt/trait.Debug.html)", key, [
        ("rust_debug_flat", 'DEBUG client: Config { endpoint: "https://api.acme.io", api_key: "{s}", retries: 3 }'),
        ("rust_debug_pretty", 'Config {\n    endpoint: "https://api.acme.io",\n    api_key: "{s}",\n    retries: 3,'
                              '\n}'),
    ]))
    pw = password(16)
    add(("kotlin_data_class", "Kotlin data class toString (https://kotlinlang.org/docs/data-classes.html)", pw, [
        ("kotlin", "I/Auth: Credentials(user=svc-train, password={s}, realm=ml)"),
    ]))
    pw = rand(20, ALNUM)
    add(("elixir_map", "Elixir inspect of a keyword list and a map (https://hexdocs.pm/elixir/Inspect.html)", pw, [
        ("elixir_keyword", '[debug] Repo config: [hostname: "pg.internal", username: "ml", password: "{s}", '
                           'database: "runs"]'),
        ("elixir_map", '[info] %{"password" => "{s}", "user" => "ml"}'),
    ]))
    pw = rand(20, ALNUM)
    add(("php_print_r", "PHP print_r and var_dump of an array (https://www.php.net/manual/en/function.print-r.php)",
         pw, [
        ("print_r", "Array\n(\n    [host] => db.internal\n    [password] => {s}\n    [port] => 3306\n)"),
        ("var_dump", 'array(2) {\n  ["user"]=>\n  string(2) "ml"\n  ["password"]=>\n  string(20) "{s}"\n}'),
    ]))
    pw = rand(20, ALNUM)
    add(("go_nested_struct", "Go fmt %+v of a nested struct and %#v of a map (" + GO_FMT + ")", pw, [
        ("go_nested_plusv", "2026/05/01 10:14:22 cfg: {Server:{Port:8080} DB:{User:ml Password:{s} Host:pg} "
                            "Debug:true}"),
        ("go_sharpv_map", '2026/05/01 10:14:22 map[string]string{"password":"{s}", "user":"ml"}'),
    ]))
    pw = rand(18, ALNUM)
    add(("dotnet_anonymous", ".NET anonymous type ToString (https://learn.microsoft.com/en-us/dotnet/csharp/"
         "fundamentals/types/anonymous-types)", pw, [
        ("dotnet", "info: Worker[0] settings { Host = pg.internal, User = ml, Password = {s} }"),
    ]))
    pw = password(18)
    add(("json_unicode_escaped", "a JSON string whose quotes are \\u0022 escapes (Go encoding/json with "
         "SetEscapeHTML; https://pkg.go.dev/encoding/json#Marshal)", pw, [
        ("u0022", '{"level":"info","msg":"payload","body":"{\\u0022user\\u0022:\\u0022ml\\u0022,'
                  '\\u0022password\\u0022:\\u0022{s}\\u0022}"}'),
    ]))
    tok = rand(40, URLSAFE)
    add(("python_bytes_json", "a Python bytes repr of a JSON body (httpx/requests debug; "
         "https://docs.python.org/3/library/stdtypes.html#bytes)", tok, [
        ("bytes_body", _TS + ' DEBUG httpcore: send_request_body.started body=b\'{"refresh_token": "{s}", '
                             '"grant_type": "refresh_token"}\''),
    ]))
    auth = b64url(json.dumps({"username": "ci-bot", "password": rand(24, ALNUM),
                              "serveraddress": "harbor.acme.io"}).encode())
    add(("docker_registry_auth_header", "the Docker Engine API's X-Registry-Auth header, base64url JSON "
         "(https://docs.docker.com/reference/api/engine/version/v1.45/#section/Authentication)", auth, [
        ("x_registry_auth", "> POST /v1.45/images/create?fromImage=harbor.acme.io%2Fml%2Ftrainer HTTP/1.1\n"
                            "> X-Registry-Auth: {s}"),
    ]))
    key = b64(f"{rand(20, ALNUM)}:{rand(22, ALNUM)}")
    add(("elastic_apikey_header", "Elasticsearch's Authorization: ApiKey base64(id:key) "
         "(https://www.elastic.co/guide/en/elasticsearch/reference/current/security-api-create-api-key.html)", key, [
        ("apikey_header", "> GET /_cluster/health HTTP/1.1\n> Authorization: ApiKey {s}"),
    ]))
    tok = rand(40, HEX)
    add(("token_scheme_header", "Authorization: Token (Django REST framework TokenAuthentication; "
         "https://www.django-rest-framework.org/api-guide/authentication/#tokenauthentication)", tok, [
        ("drf_token", "send: b'GET /api/runs/ HTTP/1.1\r\nAuthorization: Token {s}\r\n\r\n'"),
        ("httpx_headers", "DEBUG httpx: Headers({'host': 'label.acme.io', 'authorization': 'Token {s}'})"),
    ]))
    pw = password(16)
    add(("helm_set", "helm install --set with a password among other values (https://helm.sh/docs/helm/helm_install/)",
         pw.replace(",", "x"), [
        ("helm_set", "+ helm upgrade --install mlflow ./chart --set auth.username=ml,auth.password={s},replicas=2"),
    ]))
    key = rand(40, HEX)
    add(("systemd_environment", "systemctl cat's Environment= line (https://www.freedesktop.org/software/systemd/man/"
         "latest/systemd.exec.html#Environment=)", key, [
        ("systemd_env", '# /etc/systemd/system/trainer.service\n[Service]\nEnvironment="NCCL_DEBUG=INFO" '
                        '"WANDB_API_KEY={s}"\nExecStart=/usr/bin/python train.py'),
    ]))
    tok = "hf_" + rand(34, ALNUM)
    add(("docker_history_env", "docker history --no-trunc of an image built with a token in ENV "
         "(https://docs.docker.com/reference/cli/docker/image/history/)", tok, [
        ("history", "<missing>   3 days ago   /bin/sh -c #(nop)  ENV HF_TOKEN={s}   0B"),
    ]))
    tok = "hf_" + rand(34, ALNUM)
    add(("ray_runtime_env_json", "ray job submit --runtime-env-json (https://docs.ray.io/en/latest/cluster/"
         "running-applications/job-submission/cli.html)", tok, [
        ("runtime_env", "+ ray job submit --address http://head:8265 --runtime-env-json='{\"env_vars\": "
                        "{\"HF_TOKEN\": \"{s}\"}, \"working_dir\": \".\"}' -- python train.py"),
    ]))
    key = rand(40, HEX)
    add(("slurm_export", "sbatch/srun --export with a value (https://slurm.schedmd.com/sbatch.html#OPT_export)", key, [
        ("sbatch_export", "+ sbatch --export=ALL,WANDB_API_KEY={s},NCCL_DEBUG=INFO job.sh"),
    ]))
    pw = rand(20, ALNUM)
    add(("toml_inline_table", "a TOML inline table (https://toml.io/en/v1.0.0#inline-table)", pw, [
        ("inline_table", 'database = { host = "pg.internal", user = "ml", password = "{s}" }'),
    ]))
    pw = rand(20, ALNUM)
    add(("terraform_plan_attr", "terraform plan of an attribute not marked sensitive "
         "(https://developer.hashicorp.com/terraform/cli/commands/plan)", pw, [
        ("tf_plan", '  + resource "aws_db_instance" "runs" {\n      + engine          = "postgres"\n'
                    '      + master_password = "{s}"\n      + username        = "ml"'),
    ]))
    pw = rand(20, ALNUM)
    add(("mongo_create_user", "mongosh db.createUser with pwd (https://www.mongodb.com/docs/manual/reference/method/"
         "db.createUser/)", pw, [
        ("create_user", 'test> db.createUser({ user: "ml", pwd: "{s}", roles: [ "readWrite" ] })'),
    ]))
    pw = rand(20, ALNUM)
    add(("redis_monitor_auth", "redis-cli MONITOR showing an AUTH command (https://redis.io/docs/latest/commands/"
         "monitor/)", pw, [
        ("monitor", '1777630462.481234 [0 10.0.3.7:51234] "AUTH" "default" "{s}"'),
    ]))
    tok = "tk-" + rand(40, LOWER_DIGITS)
    add(("anaconda_url_token", "an anaconda.org channel URL with a token in its path (/t/<token>/) "
         "(https://docs.anaconda.com/anacondaorg/user-guide/tasks/work-with-tokens/)", tok, [
        ("condarc", "channels:\n  - https://conda.anaconda.org/t/{s}/acme-ml\n  - conda-forge"),
    ]))
    sig = quote(rand(43, B64) + "=", safe="")
    add(("azure_sas_sig", "an Azure SAS URL whose sig is percent-encoded (https://learn.microsoft.com/en-us/rest/api/"
         "storageservices/create-service-sas)", sig, [
        ("sas_url", "azcopy: copying https://acmeml.blob.core.windows.net/ckpt/step-100.pt?sv=2022-11-02&ss=b&srt=o"
                    "&sp=r&se=2026-05-02T00:00:00Z&sig={s}"),
    ]))
    st = quote("IQoJb3JpZ2luX2Vj" + rand(200, B64), safe="")
    add(("s3_presigned_token", "an S3 presigned URL's X-Amz-Security-Token, percent-encoded (" + SIGV4 + ")", st, [
        ("presigned", "GET https://ckpt.s3.amazonaws.com/step-100.pt?X-Amz-Algorithm=AWS4-HMAC-SHA256"
                      "&X-Amz-Security-Token={s}&X-Amz-Expires=3600"),
    ]))
    body = pem_body(5)
    add(("pem_crlf_escaped", "a private key JSON-escaped with \\r\\n (a Windows-made key in a JSON config)",
         "\n".join(body), [
        ("crlf_json", '{"sftp":{"host":"sftp.acme.io","private_key":"-----BEGIN RSA PRIVATE KEY-----\\r\\n'
                      + "\\r\\n".join(body) + '\\r\\n-----END RSA PRIVATE KEY-----"}}'),
    ]))
    body = pem_body(5)
    add(("pem_one_line_env", "a private key in an env var with its newlines turned to spaces "
         "(docker run -e of a key file read with $(cat ...) | tr)", " ".join(body), [
        ("env_spaces", "SSH_PRIVATE_KEY=-----BEGIN OPENSSH PRIVATE KEY----- " + " ".join(body)
                       + " -----END OPENSSH PRIVATE KEY-----"),
    ]))
    return f


def _more_look_alikes() -> list[LookAlike]:
    """(context, source, keep, text): the second batch's look-alikes."""
    return [
        ("pwd_working_dir", "a shell's working directory", "PWD=/workspace/llm", "HOME=/root\nPWD=/workspace/llm"),
        ("pwd_yaml", "a working directory in YAML", "pwd: /home/ml/project", "job:\n  pwd: /home/ml/project"),
        ("nsswitch_passwd", "nsswitch.conf", "passwd:         files systemd", "passwd:         files systemd"),
        ("tf_sensitive", "terraform's sensitive mask", "(sensitive value)",
         "      + master_password = (sensitive value)"),
        ("tf_known_after", "terraform's unknown value", "(known after apply)",
         "      + password = (known after apply)"),
        ("lombok_masked", "a masked Java toString", "password=****",
         "DataSourceProperties(username=ml, password=****)"),
        ("rust_redacted", "a Rust Debug that hides its key", '"<redacted>"', 'Config { api_key: "<redacted>" }'),
        ("api_key_env_name", "a config naming the env var that holds a key", "api_key_env: OPENAI_API_KEY",
         "llm:\n  api_key_env: OPENAI_API_KEY"),
        ("password_file", "a path to a password file", "--password-file=/run/secrets/pg",
         "+ pg_dump --password-file=/run/secrets/pg runs"),
        ("password_stdin", "docker login --password-stdin", "--password-stdin",
         "+ docker login -u ci --password-stdin ghcr.io"),
        ("token_budget", "a context length", "max_model_len=128000", "vllm: max_model_len=128000 dtype=bfloat16"),
        ("credential_source", "an AWS config credential source", "credential_source = Ec2InstanceMetadata",
         "[profile ml]\ncredential_source = Ec2InstanceMetadata"),
        ("role_arn", "an AWS role ARN", "arn:aws:iam::123456789012:role/ml-trainer",
         "role_arn = arn:aws:iam::123456789012:role/ml-trainer"),
        ("go_values_only", "Go %v of a struct without secrets", "{pg.internal 5432 runs}",
         "2026/05/01 10:14:22 target: {pg.internal 5432 runs}"),
        ("x_amz_signed_headers", "presigned URL's public parameters", "X-Amz-SignedHeaders=host",
         "GET /o?X-Amz-Algorithm=AWS4-HMAC-SHA256&X-Amz-SignedHeaders=host&X-Amz-Expires=3600"),
        ("sas_permissions", "a SAS URL's public parameters", "sp=r&se=2026-05-02",
         "azcopy: list https://acmeml.blob.core.windows.net/ckpt?sp=r&se=2026-05-02"),
        ("print_r_plain", "PHP print_r without secrets", "[host] => db.internal",
         "Array\n(\n    [host] => db.internal\n    [port] => 3306\n)"),
        ("elixir_plain", "Elixir keyword list without secrets", 'hostname: "pg.internal"',
         '[debug] Repo config: [hostname: "pg.internal", database: "runs"]'),
        ("auth_mechanism", "an auth mechanism name", "authMechanism=SCRAM-SHA-256",
         "mongodb://ml@mongo.internal/?authMechanism=SCRAM-SHA-256"),
        ("key_vault_ref", "a Key Vault reference",
         "@Microsoft.KeyVault(SecretUri=https://kv.vault.azure.net/secrets/pg/)",
         "DB_PASSWORD=@Microsoft.KeyVault(SecretUri=https://kv.vault.azure.net/secrets/pg/)"),
    ]


def rows() -> list[dict[str, str]]:
    _draws.reset()
    groups = (_nested_json, _json_in_json, _reprs, _logfmt_and_forms, _basic_auth, _kubernetes,
              _env_dumps_and_configs, _connection_strings, _wrapped_and_signed)
    return (case_rows(case for group in groups for case in group()) + keep_rows(_look_alikes())
            + case_rows(_more_reprs_and_encodings()) + keep_rows(_more_look_alikes()))


def write(path: Path) -> int:
    return write_rows(path, rows())
