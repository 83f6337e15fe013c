"""The dev19 round of the secrets probe: credentials as other programs print them into a GPU cluster's logs.

Each case names the printer and a URL of its code or documentation, and is written the way that code writes it.
Values are drawn from a seeded random generator in the published shape, so none is a real credential. Groups:

- tracebacks' locals: rich's ``show_locals`` panels (a long value wrapped inside the box), loguru's and
  better_exceptions' ``diagnose`` arrows (``└ 'value'`` under the source line that names the variable), IPython's
  verbose frames (``in login(token='...')``), pytest's ``--showlocals`` columns;
- process listings: ``ps auxww``, ``/proc/PID/cmdline`` with its NUL separators, ``docker inspect``'s Env array,
  ``kubectl describe pod``'s Environment, ``kubectl get secret`` data in base64, ``helm get values``;
- HTTP and RPC client debug: botocore's prepared request with bytes headers, presigned URLs, http.client's
  ``send: b'...'`` bodies, curl -v cookies, grpc's header trace;
- connection strings in many schemes, ODBC and ADO strings, git remotes, package index URLs, .npmrc, docker's
  config.json, ansible -vvv, terraform plans, trackers' configs, webhooks, Sentry DSNs, remote-write auth;
- encodings: PEM bodies one line per event, JSON-escaped keys, base64, percent-encoding, JSON inside JSON inside
  JSON, Python bytes reprs, and keys in Cyrillic, Chinese, Japanese and Korean.

``_look_alikes`` hold no secret and must come out as written: the printers' own masks (terraform's ``(sensitive
value)``, kubectl's ``<set to the key ...>``, npm's ``(protected)``, Prometheus' ``<secret>``, ansible's no_log
placeholder, pip's ``****``), hashes, digests, ETags, UUIDs, commit SHAs, model ids, token counts, public
certificates, AWS's documented example keys and placeholders.

Scored blind (written before the redactor saw it): 9/57 kinds, 16/83 cases leaked; 2/26 look-alikes lost (AWS's
example secret key under ``aws_secret_access_key``, and a vLLM metrics line the parser lifts into numbers, so that no
text is left to find: replaced by its engine config line, which keeps its token counts as text). Left leaking on
purpose: a loguru arrow line alone (``└ 'value'`` with no source line to name it) and token words with a password's
punctuation in their value (``токен: QBOK^do2g.z9``), judged as ``token`` is.

    python -m devtools.secret_probe generate dev19    # writes tests/fixtures/secret_probe/dev19.jsonl only
"""

from __future__ import annotations

import json
from pathlib import Path
from urllib.parse import quote

from devtools.secret_probe_draws import Case, Draws, LookAlike, b64, case_rows, keep_rows, write_rows
from devtools.secret_probe_draws import compact_json as j
from devtools.secret_probe_kinds import ALNUM, B64, HEX, URLSAFE

_draws = Draws(19019)
rand, uuid4 = _draws.rand, _draws.uuid4
pw, pwu = _draws.password, _draws.url_password
_DIGITS = "0123456789"
_EMPTY_SHA = "e3b0c44298fc1c149afbf4c8996fb92427ae41e4649b934ca495991b7852b855"

RICH_SCOPE = "https://github.com/Textualize/rich/blob/master/rich/scope.py"
LOGURU_DIAGNOSE = "https://github.com/Delgan/loguru/blob/master/loguru/_better_exceptions.py"
IPY_ULTRATB = "https://github.com/ipython/ipython/blob/main/IPython/core/ultratb.py"
PYTEST_LOCALS = "https://github.com/pytest-dev/pytest/blob/main/src/_pytest/_code/code.py"
PS = "https://gitlab.com/procps-ng/procps/-/blob/master/src/ps/output.c"
PROC_CMDLINE = "https://man7.org/linux/man-pages/man5/proc_pid_cmdline.5.html"
DOCKER_INSPECT = "https://docs.docker.com/reference/cli/docker/inspect/"
KUBECTL_DESCRIBE = "https://github.com/kubernetes/kubectl/blob/master/pkg/describe/describe.go"
K8S_OPAQUE_DOC = "https://kubernetes.io/docs/concepts/configuration/secret/"
HELM_VALUES = "https://helm.sh/docs/helm/helm_get_values/"
BOTOCORE = "https://github.com/boto/botocore/blob/develop/botocore/endpoint.py"
AWS_PRESIGN = "https://docs.aws.amazon.com/AmazonS3/latest/API/sigv4-query-string-auth.html"
HTTP_CLIENT = "https://github.com/python/cpython/blob/main/Lib/http/client.py"
CURL_VERBOSE = "https://everything.curl.dev/usingcurl/verbose/index.html"
GRPC_TRACE = "https://github.com/grpc/grpc/blob/master/doc/environment_variables.md"
REDIS_URL = "https://redis-py.readthedocs.io/en/stable/connections.html#redis.Redis.from_url"
AMQP_URI = "https://www.rabbitmq.com/docs/uri-spec"
MONGO_SRV = "https://www.mongodb.com/docs/manual/reference/connection-string/"
LIBPQ = "https://www.postgresql.org/docs/16/libpq-connect.html#LIBPQ-CONNSTRING-URIS"
MSSQL_JDBC = "https://learn.microsoft.com/en-us/sql/connect/jdbc/building-the-connection-url"
ODBC = "https://learn.microsoft.com/en-us/sql/connect/odbc/dsn-connection-string-attribute"
GIT_REMOTE = "https://git-scm.com/docs/git-remote"
GIT_CREDENTIAL = "https://git-scm.com/docs/git-credential#IOFMT"
PIP_CONFIG = "https://pip.pypa.io/en/stable/topics/configuration/"
NPMRC = "https://docs.npmjs.com/cli/v10/configuring-npm/npmrc#auth-related-configuration"
DOCKER_CONFIG = "https://docs.docker.com/reference/cli/docker/login/#credential-stores"
ANSIBLE = "https://docs.ansible.com/ansible/latest/reference_appendices/logging.html"
TERRAFORM_PLAN = "https://developer.hashicorp.com/terraform/cli/commands/plan"
MLFLOW_AUTH = "https://mlflow.org/docs/latest/auth/index.html#using-environment-variables"
WANDB_NETRC = "https://github.com/wandb/wandb/blob/main/wandb/sdk/lib/apikey.py"
COMET = "https://www.comet.com/docs/v2/guides/experiment-management/configure-sdk/"
NEPTUNE = "https://docs.neptune.ai/setup/setting_api_token/"
SLACK_HOOK = "https://api.slack.com/messaging/webhooks"
DISCORD_HOOK = "https://discord.com/developers/docs/resources/webhook"
TEAMS_HOOK = ("https://learn.microsoft.com/en-us/microsoftteams/platform/webhooks-and-connectors/how-to/"
              "add-incoming-webhook")
SENTRY_DSN = "https://docs.sentry.io/concepts/key-terms/dsn-explainer/"
PROM_RW = "https://prometheus.io/docs/prometheus/latest/configuration/configuration/#remote_write"
VMAGENT = "https://docs.victoriametrics.com/vmagent/#advanced-usage"
DOCKER_JSON = "https://github.com/moby/moby/blob/master/daemon/logger/jsonfilelog/jsonfilelog.go"
PYBYTES = "https://docs.python.org/3/library/stdtypes.html#bytes"


def _tracebacks() -> list[Case]:
    f: list[Case] = []
    add = f.append
    p = pw(18)
    add(("rich_locals_password", "rich's show_locals panel: right-aligned names, ' = ', the repr (" + RICH_SCOPE + ")",
         p, [
            ("rich_locals_box", "│ ╭─────────────────────── locals ───────────────────────╮ │\n"
                                "│ │     host = 'db.internal'                              │ │\n"
                                f"│ │ password = '{p}'                 │ │\n"
                                "│ │     user = 'etl'                                      │ │\n"
                                "│ ╰──────────────────────────────────────────────────────╯ │"),
            ("rich_locals_dict", "│ │  creds = {'user': 'etl', 'password': '" + p + "'}     │ │"),
        ]))
    tok = "hf_" + rand(34, ALNUM)
    add(("rich_locals_wrapped", "rich wraps a long repr inside the panel, so the value is cut at the box edge ("
         + RICH_SCOPE + ")", tok, [
            ("rich_wrapped_token", "│ │    kwargs = {                                 │ │\n"
                                   "│ │                 'repo_id': 'acme/lm-7b',       │ │\n"
                                   f"│ │                 'token': '{tok[:20]}   │ │\n"
                                   f"│ │ {tok[20:]}',                           │ │\n"
                                   "│ │             }                                 │ │"),
        ]))
    p = pw(20)
    add(("loguru_diagnose_arrow", "loguru's diagnose: the value on an arrow line under the source line naming it ("
         + LOGURU_DIAGNOSE + ")", p, [
            ("loguru_arrows", "  File \"/opt/app/db.py\", line 41, in connect\n"
                              "    conn = psycopg2.connect(host=host, user=user, password=password)\n"
                              "    │                        │         │          └ '" + p + "'\n"
                              "    │                        │         └ 'etl'\n"
                              "    │                        └ 'db.internal'\n"
                              "    └ <module 'psycopg2' from '/usr/lib/python3/dist-packages/psycopg2/__init__.py'>"),
            ("loguru_arrow_alone", f"    │          └ '{p}'"),
        ]))
    p = pwu(18)
    url = f"postgresql://etl:{p}@db.internal:5432/features"
    add(("loguru_diagnose_dsn", "loguru's diagnose arrow holding a DSN (" + LOGURU_DIAGNOSE + ")", p, [
            ("loguru_dsn", "    engine = create_engine(url)\n             │             └ '" + url + "'\n"
                           "             └ <function create_engine at 0x7f3a2c1e4d30>"),
        ]))
    tok = "sk-proj-" + rand(48, URLSAFE)
    add(("ipython_verbose_args", "IPython's verbose traceback prints each frame's call with its arguments ("
         + IPY_ULTRATB + ")", tok, [
            ("ipython_frame_args", "File /opt/app/llm.py:88, in complete(prompt='Hello', model='gpt-4o', "
                                   f"api_key='{tok}', timeout=30)\n     86 def complete(prompt, model, api_key, "
                                   "timeout):\n---> 88     return client.post(prompt)"),
            ("ipython_locals_old", "/opt/app/llm.py in complete(prompt, model, api_key, timeout)\n"
                                   "     86 def complete(prompt, model, api_key, timeout):\n"
                                   "---> 88     return client.post(prompt)\n"
                                   "        global client = <openai.OpenAI object at 0x7f0c>\n"
                                   f"        api_key = '{tok}'"),
        ]))
    p = pw(16)
    add(("pytest_showlocals", "pytest --showlocals: names padded to a column, ' = ', the repr (" + PYTEST_LOCALS + ")",
         p, [
            ("pytest_locals", "cfg        = {'db': {'host': 'localhost', 'pass': '" + p + "'}}\n"
                              "expected   = 3\nsecret_ref = 'prod/db'"),
            ("pytest_local_pwd", f"pwd        = '{p}'\nuser       = 'etl'"),
        ]))
    return f


def _processes() -> list[Case]:
    f: list[Case] = []
    add = f.append
    p = pw(16)
    add(("ps_auxww_flags", "ps auxww: a process's full command line (" + PS + ")", p, [
        ("ps_db_password", "etl      41233  3.1  0.4 812344 70212 ?  Sl   09:41   0:03 python -m loader "
                           f"--db-host db.internal --db-password {p} --batch 512"),
        ("ps_pgpassword_env", f"root      1201  0.0  0.0   4364  3224 ?  Ss   09:40   0:00 env PGPASSWORD={p} "
                              "psql -h db.internal -U etl -c \\copy"),
    ]))
    tok = rand(40, HEX)
    add(("proc_cmdline_nul", "/proc/PID/cmdline: arguments separated by NUL bytes (" + PROC_CMDLINE + ")", tok, [
        ("cmdline_nul", "python\x00train.py\x00--wandb-key\x00" + tok + "\x00--epochs\x003\x00"),
        ("cmdline_nul_eq", "python\x00-m\x00trainer\x00--wandb_api_key=" + tok + "\x00"),
    ]))
    p = pw(22)
    add(("docker_inspect_env", "docker inspect: Config.Env, a JSON array of NAME=value strings (" + DOCKER_INSPECT
         + ")", p, [
            ("inspect_env_pretty", '        "Env": [\n            "PATH=/usr/local/sbin:/usr/local/bin",\n'
                                   f'            "MLFLOW_TRACKING_PASSWORD={p}",\n            "NCCL_DEBUG=INFO"\n'
                                   "        ],"),
            ("inspect_env_oneline", j({"Config": {"Env": ["CUDA_VISIBLE_DEVICES=0,1", f"REDIS_PASS={p}"]}})),
        ]))
    tok = "hf_" + rand(34, ALNUM)
    add(("kubectl_describe_env", "kubectl describe pod: Environment lines, name padded to a column ("
         + KUBECTL_DESCRIBE + ")", tok, [
            ("describe_env", "    Environment:\n      HF_HOME:              /cache/hf\n"
                             f"      HUGGING_FACE_HUB_TOKEN:  {tok}\n      NCCL_DEBUG:           INFO\n"),
        ]))
    p = pw(16)
    add(("kubectl_secret_yaml_b64", "kubectl get secret -o yaml: data values base64 (" + K8S_OPAQUE_DOC + ")", b64(p), [
        ("secret_yaml", f"apiVersion: v1\ndata:\n  password: {b64(p)}\n  username: ZXRs\nkind: Secret\n"
                        "metadata:\n  name: db-creds\ntype: Opaque\n"),
        ("secret_yaml_other_key", f"apiVersion: v1\ndata:\n  db-root: {b64(p)}\n  host: ZGIuaW50ZXJuYWw=\n"
                                  "kind: Secret\n"),
    ]))
    auth = b64("ci:" + (gh := "ghp_" + rand(36, ALNUM)))
    dcj = b64(j({"auths": {"ghcr.io": {"auth": auth}}}))
    add(("kubectl_secret_dockerconfigjson", "kubectl get secret -o json of a registry Secret: .dockerconfigjson "
         "base64 of config.json (" + K8S_OPAQUE_DOC + ")", gh, [
            ("dockerconfigjson", json.dumps({"apiVersion": "v1", "data": {".dockerconfigjson": dcj},
                                             "kind": "Secret", "type": "kubernetes.io/dockerconfigjson"}, indent=4)),
        ]))
    p = pw(18)
    add(("helm_get_values", "helm get values: USER-SUPPLIED VALUES as YAML (" + HELM_VALUES + ")", p, [
        ("helm_values", f"USER-SUPPLIED VALUES:\nauth:\n  rootPassword: {p}\npostgresql:\n  enabled: true\n"),
        ("helm_values_nested", f"USER-SUPPLIED VALUES:\nminio:\n  rootUser: admin\n  rootPassword: \"{p}\"\n"),
    ]))
    return f


def _http() -> list[Case]:
    f: list[Case] = []
    add = f.append
    st = "IQoJb3JpZ2luX2Vj" + rand(180, B64) + "="
    add(("botocore_prepared_request", "botocore's debug of the prepared request: headers as a dict of bytes ("
         + BOTOCORE + ")", st, [
            ("boto_bytes_headers", "2026-07-02 09:41:15,207 botocore.endpoint [DEBUG] Sending http request: "
                                   "<AWSPreparedRequest stream_output=False, method=GET, url=https://acme-ml.s3."
                                   "amazonaws.com/ckpt/step-100.pt, headers={'User-Agent': b'Boto3/1.34.0', "
                                   f"'X-Amz-Date': b'20260702T094115Z', 'X-Amz-Security-Token': b'{st}', "
                                   "'Authorization': b'AWS4-HMAC-SHA256 Credential=ASIAQ3EGWXYZ12345678/20260702/"
                                   "us-east-1/s3/aws4_request, SignedHeaders=host;x-amz-date, Signature="
                                   + rand(64, HEX) + "'}>"),
        ]))
    st2 = "FwoGZXIvYXdzE" + rand(160, B64)
    add(("s3_presigned_url", "a presigned URL with the session token percent-encoded (" + AWS_PRESIGN + ")", st2, [
        ("presigned_encoded", "download url: https://acme-ml.s3.amazonaws.com/ckpt/step-100.pt?X-Amz-Algorithm="
                              "AWS4-HMAC-SHA256&X-Amz-Credential=ASIAQ3EGWXYZ12345678%2F20260702%2Fus-east-1%2Fs3%2F"
                              "aws4_request&X-Amz-Date=20260702T094115Z&X-Amz-Expires=3600&X-Amz-SignedHeaders=host"
                              f"&X-Amz-Security-Token={quote(st2, safe='')}&X-Amz-Signature={rand(64, HEX)}"),
    ]))
    cs, rt = "GOCSPX-" + rand(28, URLSAFE), "1//0g" + rand(98, URLSAFE)
    add(("http_client_send_body", "http.client's debuglevel prints each send as a bytes repr, body included ("
         + HTTP_CLIENT + ")", rt, [
            ("send_form_body", "send: b'POST /token HTTP/1.1\\r\\nHost: oauth2.googleapis.com\\r\\n"
                               "Content-Type: application/x-www-form-urlencoded\\r\\n\\r\\n'\n"
                               f"send: b'grant_type=refresh_token&client_id=1234.apps.googleusercontent.com&"
                               f"client_secret={cs}&refresh_token={rt}'\nreply: 'HTTP/1.1 200 OK\\r\\n'"),
        ]))
    add(("http_client_send_secret", "http.client's send of a token request body (" + HTTP_CLIENT + ")", cs, [
        ("send_client_secret", f"send: b'client_id=1234.apps.googleusercontent.com&client_secret={cs}"
                               "&grant_type=client_credentials'"),
    ]))
    sess = rand(43, URLSAFE)
    add(("curl_cookie", "curl -v: the Cookie request header and Set-Cookie response header (" + CURL_VERBOSE + ")",
         sess, [
            ("curl_cookie_req", "> GET /api/runs HTTP/2\n> Host: mlflow.internal\n"
                                f"> Cookie: _ga=GA1.2.1234.5678; session={sess}; theme=dark\n>"),
            ("curl_set_cookie", "< HTTP/2 200\n< set-cookie: sessionid=" + sess + "; Path=/; HttpOnly; Secure\n"
                                "< content-type: application/json"),
        ]))
    tok = "ya29.a0" + rand(150, URLSAFE)
    add(("grpc_header_trace", "grpc's http trace (GRPC_TRACE=http) prints each header frame's fields ("
         + GRPC_TRACE + ")", tok, [
            ("grpc_hdr", "I0702 09:41:15.207000 140212 chttp2_transport.cc:1412] HTTP:1:HDR:CLI: "
                         f"authorization: Bearer {tok}"),
            ("grpc_metadata_repr", "grpc call metadata: (('x-goog-request-params', 'name=projects/p'), "
                                   f"('authorization', 'Bearer {tok}'))"),
        ]))
    return f


def _urls() -> list[Case]:
    f: list[Case] = []
    add = f.append
    p = pwu(20)
    add(("redis_empty_user", "redis-py's URL with only a password (" + REDIS_URL + ")", p, [
        ("redis_url", f"Connecting to redis://:{p}@redis-master.ml.svc:6379/0"),
        ("rediss_url", f"CELERY_BROKER_URL=rediss://:{p}@cache.internal:6380/1?ssl_cert_reqs=none"),
    ]))
    p = pwu(18)
    add(("amqp_url", "an AMQP URI (" + AMQP_URI + ")", p, [
        ("amqp_kombu", f"[2026-07-02 09:41:15,207: INFO/MainProcess] Connected to amqp://worker:{p}@rabbit:5672//"),
    ]))
    p = pwu(24)
    add(("mongodb_srv", "a MongoDB SRV connection string (" + MONGO_SRV + ")", p, [
        ("mongo_srv", f"MONGO_URI=mongodb+srv://ml_rw:{p}@cluster0.ab1cd.mongodb.net/?retryWrites=true&w=majority"),
    ]))
    p = pwu(16)
    add(("libpq_password_param", "a libpq URI with the password as a query parameter (" + LIBPQ + ")", p, [
        ("pg_query_password", f"dsn=postgresql://db.internal:5432/features?user=etl&password={p}&sslmode=require"),
    ]))
    p = pw(16).replace(";", "")
    add(("jdbc_sqlserver", "a SQL Server JDBC URL with ;password= (" + MSSQL_JDBC + ")", p, [
        ("jdbc_semicolon", f"jdbc:sqlserver://sql.internal:1433;databaseName=feat;user=sa;password={p};encrypt=true"),
    ]))
    p = pw(18)
    add(("odbc_braced_pwd", "an ODBC connection string, the password in braces (" + ODBC + ")", p, [
        ("odbc_pwd_braces", "Driver={ODBC Driver 18 for SQL Server};Server=tcp:sql.internal,1433;Database=feat;"
                            f"Uid=sa;Pwd={{{p}}};Encrypt=yes;"),
        ("ado_password", f"Data Source=sql.internal;Initial Catalog=feat;User ID=sa;Password={p};"),
    ]))
    tok = "glpat-" + rand(20, URLSAFE)
    add(("git_remote_v", "git remote -v: name, tab, URL, (fetch)/(push) (" + GIT_REMOTE + ")", tok, [
        ("remote_v", f"origin\thttps://oauth2:{tok}@gitlab.com/acme/lm.git (fetch)\n"
                     f"origin\thttps://oauth2:{tok}@gitlab.com/acme/lm.git (push)"),
    ]))
    p = pwu(16)
    add(("git_clone_password", "git clone's progress line with a password in the URL (" + GIT_REMOTE + ")", p, [
        ("clone_into", f"+ git clone https://jdoe:{p}@git.acme.internal/ml/data.git\nCloning into 'data'..."),
    ]))
    tok = "hf_" + rand(34, ALNUM)
    add(("git_credential_fill", "git credential fill's key=value output (" + GIT_CREDENTIAL + ")", tok, [
        ("credential_fill", f"protocol=https\nhost=huggingface.co\nusername=acme-bot\npassword={tok}\n"),
    ]))
    p = pwu(20)
    add(("pip_config_list", "pip config list: key='value' lines (" + PIP_CONFIG + ")", p, [
        ("pip_config", f"global.extra-index-url='https://ci:{p}@pypi.acme.internal/simple'\n"
                       "global.timeout='60'"),
        ("uv_env", f"UV_INDEX_ACME_PASSWORD={p}"),
    ]))
    tok = "npm_" + rand(36, ALNUM)
    add(("npmrc_authtoken", ".npmrc's per-registry _authToken (" + NPMRC + ")", tok, [
        ("npmrc_line", f"//registry.npmjs.org/:_authToken={tok}"),
        ("npmrc_cat", f"+ cat ~/.npmrc\n@acme:registry=https://npm.acme.internal/\n"
                      f"//npm.acme.internal/:_authToken=\"{tok}\"\nalways-auth=true"),
    ]))
    p = pw(16)
    add(("npmrc_auth_b64", ".npmrc's _auth: base64 of user:password (" + NPMRC + ")", b64("ci:" + p), [
        ("npmrc_auth", f"//npm.acme.internal/:_auth={b64('ci:' + p)}"),
    ]))
    auth = b64("acme-bot:" + pw(20))
    add(("docker_config_auths", "docker's config.json: auths map, auth = base64(user:password) (" + DOCKER_CONFIG
         + ")", auth, [
            ("docker_config_pretty", json.dumps({"auths": {"registry.acme.internal": {"auth": auth}}}, indent="\t")),
        ]))
    tok = "hvs." + rand(24, ALNUM)
    add(("ansible_vvv_module_args", "ansible -vvv prints a task's module_args (" + ANSIBLE + ")", tok, [
        ("ansible_invocation", 'ok: [gpu01] => {"changed": false, "invocation": {"module_args": {"url": '
                               '"https://vault.internal/v1/kv/data/ml", "headers": {"X-Vault-Token": "' + tok
                               + '"}, "method": "GET"}}, "status": 200}'),
    ]))
    tok = rand(40, HEX)
    add(("terraform_plan_env_map", "terraform plan: a map attribute over lines, keys quoted (" + TERRAFORM_PLAN + ")",
         tok, [
            ("tf_env_map", "      + environment = {\n          + \"NCCL_DEBUG\"    = \"INFO\"\n"
                           f"          + \"WANDB_API_KEY\" = \"{tok}\"\n        }}"),
            ("tf_container_env", "      ~ env {\n          + name  = \"WANDB_API_KEY\"\n"
                                 f"          + value = \"{tok}\"\n        }}"),
        ]))
    p = pw(20)
    add(("mlflow_tracking_env", "MLflow's basic-auth environment (" + MLFLOW_AUTH + ")", p, [
        ("mlflow_env", f"MLFLOW_TRACKING_USERNAME=admin\nMLFLOW_TRACKING_PASSWORD={p}"),
        ("mlflow_uri", f"2026/07/02 09:41:15 INFO mlflow.tracking.fluent: Tracking URI: https://admin:{p}"
                       "@mlflow.internal"),
    ]))
    key = rand(40, HEX)
    add(("wandb_netrc", "W&B writes its key as a .netrc password (" + WANDB_NETRC + ")", key, [
        ("netrc_cat", f"machine api.wandb.ai\n  login user\n  password {key}"),
    ]))
    key = rand(25, ALNUM)
    add(("comet_config", "Comet's .comet.config printed (" + COMET + ")", key, [
        ("comet_ini", f"[comet]\napi_key = {key}\nworkspace = acme\n"),
    ]))
    nk = b64(j({"api_address": "https://app.neptune.ai", "api_url": "https://app.neptune.ai",
                "api_key": uuid4()}))
    add(("neptune_token", "Neptune's API token: base64 of a JSON holding its key (" + NEPTUNE + ")", nk, [
        ("neptune_env", f"NEPTUNE_API_TOKEN=\"{nk}\""),
    ]))
    hook = rand(24, ALNUM)
    add(("slack_webhook", "a Slack incoming webhook URL (" + SLACK_HOOK + ")", hook, [
        ("slack_url", f"alertmanager: posting to https://hooks.slack.com/services/T0{rand(8, ALNUM).upper()}/"
                      f"B0{rand(8, ALNUM).upper()}/{hook}"),
    ]))
    hook = rand(68, URLSAFE)
    add(("discord_webhook", "a Discord webhook URL (" + DISCORD_HOOK + ")", hook, [
        ("discord_url", f"notify url=https://discord.com/api/webhooks/{rand(18, _DIGITS)}/{hook}"),
    ]))
    hook = rand(32, HEX)
    add(("teams_webhook", "a Teams incoming webhook URL (" + TEAMS_HOOK + ")", hook, [
        ("teams_url", f"TEAMS_WEBHOOK=https://acme.webhook.office.com/webhookb2/{uuid4()}@{uuid4()}/IncomingWebhook/"
                      f"{hook}/{uuid4()}"),
    ]))
    key = rand(32, HEX)
    add(("sentry_dsn", "a Sentry DSN: its key in the userinfo (" + SENTRY_DSN + ")", key, [
        ("sentry_init", f"sentry_sdk.init(dsn='https://{key}@o{rand(6, _DIGITS)}.ingest.sentry.io/"
                        f"{rand(16, _DIGITS)}')"),
    ]))
    p = pw(20)
    add(("vmagent_basic_auth_flag", "vmagent's remote-write basic auth flag in a ps line (" + VMAGENT + ")", p, [
        ("vmagent_flag", "vmagent -remoteWrite.url=https://prom.acme.internal/api/v1/write "
                         f"-remoteWrite.basicAuth.username=gpu -remoteWrite.basicAuth.password={p}"),
    ]))
    return f


def _encodings() -> list[Case]:
    f: list[Case] = []
    add = f.append
    lines = [rand(64, B64) for _ in range(4)]
    body = "\n".join(lines)
    add(("pem_per_event_docker", "a private key cat'ed inside a container: one json-file record per line ("
         + DOCKER_JSON + ")", body, [
            ("pem_docker_lines", "\n".join(j({"log": line + "\n", "stream": "stdout", "time":
                                              f"2026-07-02T09:41:15.20{n}Z"}) for n, line in
                                           enumerate(["-----BEGIN PRIVATE KEY-----", *lines,
                                                      "-----END PRIVATE KEY-----"]))),
        ]))
    lines = [rand(70, B64) for _ in range(3)]
    add(("openssh_key_logged", "an OpenSSH private key echoed by a job with a logger prefix on each line ("
         + PYBYTES + ")", "\n".join(lines), [
            ("openssh_prefixed", "\n".join(f"2026-07-02 09:41:1{n} INFO setup: {line}" for n, line in
                                           enumerate(["-----BEGIN OPENSSH PRIVATE KEY-----",
                                                      "b3BlbnNzaC1rZXktdjEAAAAABG5vbmUAAAAEbm9uZQAAAAAAAAABAAAAMw",
                                                      *lines, "-----END OPENSSH PRIVATE KEY-----"]))),
        ]))
    p = pw(18)
    inner = j({"db": {"user": "etl", "password": p}})
    add(("json_in_json_in_json", "a JSON record whose field holds JSON text holding JSON text (" + DOCKER_JSON + ")",
         p, [
            ("triple_json", j({"log": j({"msg": "config", "payload": inner}) + "\n", "stream": "stdout"})),
        ]))
    p = pw(16)
    add(("url_encoded_form", "a form body logged percent-encoded twice (" + HTTP_CLIENT + ")", p, [
        ("form_double_encoded", "body=" + quote(f"username=etl&password={quote(p, safe='')}", safe='')),
    ]))
    tok = "sk-ant-api03-" + rand(93, URLSAFE) + "AA"
    add(("bytes_repr_json", "a Python bytes repr of a JSON body (" + PYBYTES + ")", tok, [
        ("bytes_json", "DEBUG request body: b'{\"model\": \"claude-3-5-sonnet\", \"api_key\": \"" + tok + "\"}'"),
        ("bytes_header", f"headers=[(b'content-type', b'application/json'), (b'x-api-key', b'{tok}')]"),
    ]))
    p = pw(16)
    add(("b64_env_file", "a base64 env file printed by a job (" + K8S_OPAQUE_DOC + ")", p, [
        ("b64_env", "ENV_FILE_B64=" + b64(f"DB_HOST=db.internal\nDB_PASSWORD={p}\n")),
    ]))
    p = pw(16)
    words = [("пароль_бд", "Russian"), ("ключ_api", "Russian"), ("токен", "Russian"), ("数据库密码", "Chinese"),
             ("访问令牌", "Chinese"), ("アクセストークン", "Japanese"), ("비밀번호", "Korean"), ("토큰", "Korean")]
    for n, (word, lang) in enumerate(words):
        p = pw(18)
        add((f"foreign_key_{n}", f"a secret under a key in {lang} (a locale's config print)", p, [
            (f"yaml_{n}", f"настройки:\n  хост: db.internal\n  {word}: {p}\n"),
            (f"json_{n}", json.dumps({"host": "db.internal", word: p}, ensure_ascii=n % 2 == 0)),
        ]))
    return f


def _look_alikes() -> list[LookAlike]:
    sha, sha256, md5 = rand(40, HEX), rand(64, HEX), rand(32, HEX)
    cert = "MIIDdzCCAl+gAwIBAgIE" + rand(60, B64)
    return [
        ("tf_sensitive", "terraform's mask", "(sensitive value)", "      + password = (sensitive value)"),
        ("kubectl_secret_ref", "kubectl describe's secret reference (" + KUBECTL_DESCRIBE + ")",
         "<set to the key 'password' in secret 'db-creds'>",
         "      DB_PASSWORD:  <set to the key 'password' in secret 'db-creds'>  Optional: false"),
        ("npm_protected", "npm config list's mask (" + NPMRC + ")", "(protected)",
         "//registry.npmjs.org/:_authToken = (protected)"),
        ("prom_secret_mask", "Prometheus' config page mask (" + PROM_RW + ")", "password: <secret>",
         "remote_write:\n- url: https://prom.acme.internal/api/v1/write\n  basic_auth:\n    username: gpu\n"
         "    password: <secret>\n"),
        ("ansible_no_log", "ansible's no_log placeholder (" + ANSIBLE + ")", "VALUE_SPECIFIED_IN_NO_LOG_PARAMETER",
         '"module_args": {"password": "VALUE_SPECIFIED_IN_NO_LOG_PARAMETER", "login_user": "root"}'),
        ("pip_masked_index", "pip's masked index URL (" + PIP_CONFIG + ")", "https://ci:****@pypi.acme.internal/simple",
         "Looking in indexes: https://pypi.org/simple, https://ci:****@pypi.acme.internal/simple"),
        ("commit_sha", "git log's commit", sha, f"commit {sha}\nAuthor: CI <ci@acme.dev>"),
        ("image_digest", "a pulled image's digest", f"sha256:{sha256}",
         f"Digest: sha256:{sha256}\nStatus: Downloaded newer image for nvcr.io/nvidia/pytorch:24.05-py3"),
        ("etag", "an S3 ETag in curl -v", f'etag: "{md5}"', f'< etag: "{md5}"\n< content-length: 1048576'),
        ("amz_content_sha", "the empty body's SHA-256 header", _EMPTY_SHA,
         f"> x-amz-content-sha256: {_EMPTY_SHA}\n> x-amz-date: 20260702T094115Z"),
        ("uuid_job", "a job's uuid", (u := uuid4()), f"job_id={u} state=RUNNING"),
        ("model_id", "a model id", "meta-llama/Llama-3.1-8B-Instruct",
         "Loading checkpoint shards for meta-llama/Llama-3.1-8B-Instruct"),
        # (vLLM's metrics line, "Avg prompt throughput: 1834.2 tokens/s", is lifted into numbers and leaves no text to
        # find: its engine config line holds the token counts as text)
        ("token_counts", "vLLM's engine config line", "max_num_batched_tokens=8192",
         "INFO 07-02 09:41:15 llm_engine.py:161] Initializing an LLM engine with config: model='meta-llama/"
         "Llama-3.1-8B-Instruct', max_seq_len=8192, max_num_batched_tokens=8192, tokenizer_mode=auto"),
        ("max_tokens_arg", "a CLI's token limit", "--max-tokens 4096", "python serve.py --max-tokens 4096"),
        ("public_cert", "a public certificate in PEM", cert,
         f"-----BEGIN CERTIFICATE-----\n{cert}\n-----END CERTIFICATE-----"),
        ("placeholder_angle", "a README placeholder", "<YOUR_WANDB_API_KEY>",
         "export WANDB_API_KEY=<YOUR_WANDB_API_KEY>"),
        ("describe_env_plain", "kubectl describe's plain env", "NCCL_SOCKET_IFNAME:  eth0",
         "    Environment:\n      NCCL_SOCKET_IFNAME:  eth0\n"),
        ("ssh_fingerprint", "an ssh host key fingerprint", "SHA256:" + (fp := rand(43, B64).replace("/", "x")),
         f"ED25519 key fingerprint is SHA256:{fp}."),
        ("docker_login_warning", "docker login's warning", "Your password will be stored unencrypted",
         "WARNING! Your password will be stored unencrypted in /root/.docker/config.json."),
        ("secret_type", "a Secret's type", "type: kubernetes.io/dockerconfigjson",
         "kind: Secret\ntype: kubernetes.io/dockerconfigjson\n"),
        ("loguru_arrow_int", "loguru's arrow holding a count", "└ 8192", "    batch(n)\n          └ 8192"),
        ("rich_locals_path", "rich's locals holding a path", "ckpt_dir = '/mnt/ckpt/run-3f9k2x7q'",
         "│ │ ckpt_dir = '/mnt/ckpt/run-3f9k2x7q' │ │"),
        ("wandb_run_dir", "wandb's run directory", "run-20260702_094115-3f9k2x7q",
         "wandb: Run data is saved locally in /work/wandb/run-20260702_094115-3f9k2x7q"),
        ("pip_hash", "a requirement's hash", f"--hash=sha256:{sha256}", f"torch==2.3.1 --hash=sha256:{sha256}"),
        ("korean_password_label", "a Korean form label", "비밀번호 변경", "ui.label: 비밀번호 변경"),
    ]


def rows() -> list[dict[str, str]]:
    _draws.reset()
    groups = (_tracebacks, _processes, _http, _urls, _encodings)
    return case_rows(case for group in groups for case in group()) + keep_rows(_look_alikes())


def write(path: Path) -> int:
    return write_rows(path, rows())
