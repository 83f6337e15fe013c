"""The dev18 round of the secrets probe: maps of secrets, password keys in other languages, and the newest credential
shapes as the tools that issue them print them.

Each case names the printer and a URL of its documentation or code. Values are drawn from a seeded random generator
in the published shape, so none is a real credential. Three groups:

- a map of secrets written as text inside one event: a parent key that names secrets (``secrets:``,
  ``credentials:``, ``auth:``, ``passwords:``) over indented lines whose own keys are harmless (``hf:``, ``db:``,
  ``primary:``), as YAML, as a pretty-printed Python dict (pprint) and as pretty-printed JSON;
- password keys named in other languages (``wachtwoord``, ``senha``, ``contraseña``, ``passwort``,
  ``mot_de_passe``, ``parola``, ``hasło``, ``пароль``, ``密码``, ``パスワード``, ``kennwort``, ``clave``) and the Secret
  a SealedSecret or ExternalSecret controller writes, printed with its last-applied configuration inline as JSON;
- the newest vendors' shapes (Hugging Face, OpenAI's project and service-account keys, Anthropic, W&B's 40 and 86
  character keys, GitHub fine-grained tokens, GitLab, Slack, Stripe, Databricks, Azure SAS and connection strings, a
  GCP service-account JSON over lines, AWS STS triples, docker's config auths, a kubeconfig's client-key-data, JWTs
  split over lines, private keys in env dumps, DSNs in many schemes), each in a realistic line: a debug dump, an env
  listing, a config print, a traceback's locals, a curl -v transcript, a CLI's output.

``_look_alikes`` hold no secret and must come out as written: hashes, ids, masks, token counts, commit SHAs, UUIDs,
public keys, placeholders, a SealedSecret's ciphertext (made to be committed), an ExternalSecret's remote keys.

    python -m devtools.secret_probe generate dev18    # writes tests/fixtures/secret_probe/dev18.jsonl only
"""

from __future__ import annotations

import base64
import json
from pathlib import Path

from devtools.secret_probe_draws import Case, Draws, LookAlike, b64, case_rows, keep_rows, write_rows
from devtools.secret_probe_draws import compact_json as j
from devtools.secret_probe_kinds import ALNUM, B64, HEX, URLSAFE

_draws = Draws(18018)
rand, uuid4 = _draws.rand, _draws.uuid4
pw, pwu, pem_body = _draws.password, _draws.url_password, _draws.pem_body
_ISO = "2026-07-02T09:41:15.207Z"
_UPPER32 = "ABCDEFGHIJKLMNOPQRSTUVWXYZ234567"
_DIGITS = "0123456789"

PYYAML = "https://pyyaml.org/wiki/PyYAMLDocumentation"
PPRINT = "https://github.com/python/cpython/blob/main/Lib/pprint.py"
PYJSON = "https://github.com/python/cpython/blob/main/Lib/json/encoder.py"
RICH_TB = "https://github.com/Textualize/rich/blob/master/rich/traceback.py"
PY_TB_LOCALS = "https://github.com/python/cpython/blob/main/Lib/traceback.py#L330"
PYTEST_SHOWLOCALS = "https://docs.pytest.org/en/stable/how-to/output.html#modifying-python-traceback-printing"
CURL_VERBOSE = "https://everything.curl.dev/usingcurl/verbose/index.html"
COREUTILS_ENV = "https://www.gnu.org/software/coreutils/manual/html_node/env-invocation.html"
SEALED = "https://github.com/bitnami-labs/sealed-secrets#usage"
ESO = "https://external-secrets.io/latest/api/externalsecret/"
KUBECTL_APPLY = "https://kubernetes.io/docs/tasks/manage-kubernetes-objects/declarative-config/"
HF_TOKENS = "https://huggingface.co/docs/hub/security-tokens"
OPENAI_KEYS = "https://platform.openai.com/docs/api-reference/authentication"
ANTHROPIC = "https://docs.anthropic.com/en/api/getting-started#authentication"
WANDB_LOGIN = "https://docs.wandb.ai/ref/cli/wandb-login/"
GH_PAT = "https://github.blog/engineering/platform-security/behind-githubs-new-authentication-token-formats/"
GLPAT = "https://docs.gitlab.com/ee/security/token_overview.html#gitlab-tokens"
SLACK = "https://api.slack.com/authentication/token-types"
STRIPE = "https://docs.stripe.com/keys"
DATABRICKS = "https://docs.databricks.com/en/dev-tools/auth/pat.html"
AZURE_SAS = "https://learn.microsoft.com/en-us/rest/api/storageservices/create-account-sas"
AZURE_CONN = "https://learn.microsoft.com/en-us/azure/storage/common/storage-configure-connection-string"
GCP_SA_KEY = "https://cloud.google.com/iam/docs/keys-create-delete#creating"
AWS_STS = "https://docs.aws.amazon.com/cli/latest/reference/sts/assume-role.html"
DOCKER_CONFIG = "https://docs.docker.com/reference/cli/docker/login/#credential-stores"
KUBECONFIG = "https://kubernetes.io/docs/concepts/configuration/organize-cluster-access-kubeconfig/"
JWT = "https://datatracker.ietf.org/doc/html/rfc7519#section-3.1"
LIBPQ = "https://www.postgresql.org/docs/16/libpq-connect.html#LIBPQ-CONNSTRING-URIS"
SQLALCHEMY_URL = "https://docs.sqlalchemy.org/en/20/core/engines.html#database-urls"


def _secret_maps() -> list[Case]:
    """A parent key that names secrets over children whose own keys are harmless."""
    f: list[Case] = []
    add = f.append
    tok, p = "hf_" + rand(34, ALNUM), pw(16)
    add(("map_yaml_secrets_hf", "yaml.dump of a job spec's secrets map (" + PYYAML + ")", tok, [
        ("yaml_secrets", f"job:\n  name: llama-ft\n  secrets:\n    hf: {tok}\n    region: us-east-1\n"),
        ("yaml_secrets_log", f"[2026-07-02 09:41:15,207][launcher][INFO] - resolved job spec:\nsecrets:\n  hf: {tok}\n"
                             "  wandb: offline\nresources:\n  gpus: 8\n"),
    ]))
    add(("map_yaml_secrets_db", "yaml.dump of a job spec's secrets map (" + PYYAML + ")", p, [
        ("yaml_secrets_db", f"secrets:\n  db: {p}\n  queue: default\n"),
        ("yaml_credentials_db", f"credentials:\n  primary: '{p}'\n  user: etl\n"),
    ]))
    key = rand(40, HEX)
    add(("map_yaml_credentials_nested", "a Helm values dump whose credentials map holds keys per service "
         "(https://helm.sh/docs/chart_template_guide/values_files/)", key, [
            ("helm_credentials", f"tracking:\n  credentials:\n    wandb: {key}\n    host: https://api.wandb.ai\n"),
        ]))
    p = pw(18)
    add(("map_auth_values", "an auth block whose values are keyed by environment", p, [
        ("yaml_auth_env", f"auth:\n  type: basic\n  prod: {p}\n  ttl: 3600\n"),
        ("yaml_passwords", f"passwords:\n  admin: {p}\n  readonly_user: viewer\n"),
    ]))
    tok = "hf_" + rand(34, ALNUM)
    p2 = pw(16)
    add(("map_pprint_credentials", "pprint of a nested dict over lines (" + PPRINT + ")", p2, [
        ("pprint_credentials", "{'credentials': {'db': '" + p2 + "',\n                 'hf': '" + tok + "',\n"
                               "                 'user': 'etl'},\n 'model': 'llama-3-8b'}"),
        ("pprint_secrets_first", "{'secrets': {'postgres': '" + p2 + "',\n             'region': 'eu-west-1'}}"),
    ]))
    add(("map_pprint_credentials_hf", "pprint of a nested dict over lines (" + PPRINT + ")", tok, [
        ("pprint_credentials_hf", "{'credentials': {'db': 'etl_ro',\n                 'hf': '" + tok + "'},\n"
                                  " 'model': 'llama-3-8b'}"),
    ]))
    key = rand(48, ALNUM)
    add(("map_json_pretty_auth", "json.dumps(indent=2) of a config whose auth map holds keys (" + PYJSON + ")", key, [
        ("json_pretty_auth", json.dumps({"service": "embedder", "auth": {"primary": key, "region": "eu"}}, indent=2)),
        ("json_pretty_secrets", json.dumps({"secrets": {"openai": key}, "timeout": 30}, indent=4)),
    ]))
    key = rand(32, HEX)
    add(("map_json_compact_secrets", "a JSON record whose secrets map holds values under harmless keys ("
         + PYJSON + ")", key, [
            ("json_secrets_flat", j({"level": "debug", "msg": "loaded", "secrets": {"svc": key, "n": 2}})),
            ("dict_repr_secrets", "config: {'secrets': {'svc': '" + key + "', 'n': 2}}"),
        ]))
    tok = rand(40, URLSAFE)
    add(("map_toml_secrets_table", "a TOML secrets table printed (https://toml.io/en/v1.0.0#table)", tok, [
        ("toml_secrets", f'[secrets]\nprimary = "{tok}"\nowner = "ml-platform"\n'),
    ]))
    return f


def _foreign_keys() -> list[Case]:
    """Password keys named in other languages, in JSON, YAML, key=value and reprs."""
    f: list[Case] = []
    add = f.append
    words = [
        ("wachtwoord", "Dutch"), ("senha", "Portuguese"), ("contraseña", "Spanish"), ("contrasena", "Spanish, "
         "ASCII"), ("passwort", "German"), ("mot_de_passe", "French"), ("parola", "Turkish and Romanian"),
        ("hasło", "Polish"), ("haslo", "Polish, ASCII"), ("пароль", "Russian"), ("密码", "Chinese"),
        ("mima", "Chinese pinyin"), ("パスワード", "Japanese"), ("kennwort", "German"), ("clave", "Spanish"),
        ("Passwort", "German, capitalised"), ("motDePasse", "French, camelCase"), ("db_senha", "Portuguese, "
         "prefixed"),
    ]
    for n, (word, lang) in enumerate(words):
        p = pw(14)
        ctxs = [(f"json_{n}", json.dumps({"usuario": "etl", word: p, "host": "db.interno"}, ensure_ascii=False)),
                (f"yaml_{n}", f"database:\n  user: etl\n  {word}: {p}\n  port: 5432\n")]
        if n % 2 == 0:
            ctxs.append((f"kv_{n}", f"connect host=db.interno user=etl {word}={p} port=5432"))
        else:
            ctxs.append((f"repr_{n}", f"DBConfig(user='etl', {word}='{p}', port=5432)"))
        if n % 3 == 0:
            ctxs.append((f"json_escaped_{n}", json.dumps({word: p, "user": "etl"})))
        add((f"foreign_password_{word}", f"a password key in {lang} (a locale's config, a form field)", p, ctxs))
    p = pw(20)
    last = j({"apiVersion": "v1", "kind": "Secret", "metadata": {"name": "db-creds", "namespace": "ml"},
              "stringData": {"password": p, "username": "etl"}, "type": "Opaque"})
    add(("sealed_secret_unsealed_last_applied", "the Secret a SealedSecret's controller writes, with kubectl's "
         "last-applied-configuration annotation inline (" + SEALED + "; " + KUBECTL_APPLY + ")", p, [
            ("secret_last_applied_json", json.dumps({"apiVersion": "v1", "kind": "Secret", "metadata": {
                "annotations": {"kubectl.kubernetes.io/last-applied-configuration": last + "\n"},
                "name": "db-creds", "ownerReferences": [{"kind": "SealedSecret", "name": "db-creds"}]},
                "type": "Opaque"}, indent=4)),
            ("secret_last_applied_yaml", "metadata:\n  annotations:\n    kubectl.kubernetes.io/"
                                         f"last-applied-configuration: |\n      {last}\n  name: db-creds\n"),
        ]))
    tok = rand(40, URLSAFE)
    add(("external_secret_target_template", "an ExternalSecret whose target template holds a literal token "
         "inline (" + ESO + ")", tok, [
            ("eso_template_json", j({"apiVersion": "external-secrets.io/v1beta1", "kind": "ExternalSecret",
                                     "spec": {"target": {"name": "hub", "template": {"data": {
                                         "token": tok, "endpoint": "https://hub.internal"}}},
                                         "data": [{"secretKey": "password", "remoteRef": {"key": "prod/db"}}]}})),
        ]))
    p = pw(16)
    add(("k8s_secret_data_b64", "kubectl get secret -o json: data values are base64 of the secret (" + SEALED + ")",
         b64(p), [
            ("secret_data_json", json.dumps({"apiVersion": "v1", "data": {"password": b64(p), "username": b64("etl")},
                                             "kind": "Secret", "metadata": {"name": "db-creds"}}, indent=4)),
        ]))
    return f


def _shapes() -> list[Case]:
    f: list[Case] = []
    add = f.append
    tok = "hf_" + rand(34, ALNUM)
    add(("hf_token_shapes", "Hugging Face user access tokens (" + HF_TOKENS + ")", tok, [
        ("hf_rich_locals", "│ │   token = '" + tok + "'                                │ │"),
        ("hf_tb_locals", "    repo_id = 'acme/llama-ft'\n    token = '" + tok + "'\n    revision = 'main'"),
        ("hf_curl_v", "> GET /api/whoami-v2 HTTP/2\n> Host: huggingface.co\n> user-agent: curl/8.5.0\n"
                      f"> authorization: Bearer {tok}\n> accept: */*\n"),
        ("hf_git_credential", f"https://user:{tok}@huggingface.co"),
    ]))
    tok = "sk-proj-" + rand(74, URLSAFE) + "T3BlbkFJ" + rand(74, URLSAFE)
    add(("openai_project_key", "OpenAI project keys (" + OPENAI_KEYS + ")", tok, [
        ("openai_env", f"SHELL=/bin/bash\nOPENAI_API_KEY={tok}\nOPENAI_ORG_ID=org-{rand(24, ALNUM)}\n"),
        ("openai_pytest_locals", f"client     = <openai.OpenAI object at 0x7f3a2c1d9e50>\nkey        = '{tok}'\n"
                                 "model      = 'gpt-4o-mini'"),
        ("openai_error", f"openai.AuthenticationError: Error code: 401 - {{'error': {{'message': 'Incorrect API key "
                         f"provided: {tok}. You can find your API key at https://platform.openai.com/account/api-keys.'"
                         ", 'type': 'invalid_request_error'}}}}"),
    ]))
    tok = "sk-svcacct-" + rand(74, URLSAFE) + "T3BlbkFJ" + rand(74, URLSAFE)
    add(("openai_svcacct_key", "OpenAI service-account keys (" + OPENAI_KEYS + ")", tok, [
        ("svcacct_headers", f"headers={{'Authorization': 'Bearer {tok}', 'OpenAI-Beta': 'assistants=v2'}}"),
        ("svcacct_yaml", f"llm:\n  provider: openai\n  key: {tok}\n"),
    ]))
    tok = "sk-ant-api03-" + rand(93, URLSAFE) + "AA"
    add(("anthropic_key", "Anthropic API keys (" + ANTHROPIC + ")", tok, [
        ("anthropic_curl", f"> POST /v1/messages HTTP/2\n> Host: api.anthropic.com\n> x-api-key: {tok}\n"
                           "> anthropic-version: 2023-06-01\n"),
        ("anthropic_repr", f"Anthropic(api_key='{tok}', base_url='https://api.anthropic.com', max_retries=2)"),
        ("anthropic_bare", f"using key {tok} for claude-3-5-sonnet"),
    ]))
    key = rand(40, HEX)
    add(("wandb_40_netrc", "wandb login writes ~/.netrc (" + WANDB_LOGIN + ")", key, [
        ("netrc_cat", f"machine api.wandb.ai\n  login user\n  password {key}\n"),
        ("wandb_login_cmd", f"+ wandb login --relogin {key}"),
    ]))
    key = rand(86, URLSAFE)
    add(("wandb_86_key", "W&B's newer 86-character API keys (" + WANDB_LOGIN + ")", key, [
        ("wandb86_netrc", f"machine api.wandb.ai\n  login user\n  password {key}\n"),
        ("wandb86_login", f"$ wandb login {key}\nwandb: Appending key for api.wandb.ai to your netrc file: "
                          "/root/.netrc"),
        ("wandb86_env", f"WANDB_PROJECT=lm\nWANDB_API_KEY={key}\n"),
    ]))
    tok = "github_pat_" + rand(22, ALNUM) + "_" + rand(59, ALNUM)
    add(("github_fine_grained", "GitHub fine-grained personal access tokens (" + GH_PAT + ")", tok, [
        ("gh_remote", f"remote.origin.url=https://x-access-token:{tok}@github.com/acme/train.git"),
        ("gh_bare_log", f"DEBUG resolved git credential; using {tok}"),
        ("gh_actions_env", f"  GH_TOKEN: {tok}\n  GITHUB_REPOSITORY: acme/train\n"),
    ]))
    tok = "glpat-" + rand(20, URLSAFE)
    add(("gitlab_pat", "GitLab personal access tokens (" + GLPAT + ")", tok, [
        ("glpat_header", f"> PRIVATE-TOKEN: {tok}"),
        ("glpat_pip", f"Looking in indexes: https://__token__:{tok}@gitlab.internal/api/v4/projects/42/packages/pypi/"
                      "simple"),
    ]))
    tok = "xoxb-" + rand(11, _DIGITS) + "-" + rand(13, _DIGITS) + "-" + rand(24, ALNUM)
    add(("slack_bot_token", "Slack bot tokens (" + SLACK + ")", tok, [
        ("slack_sdk_debug", f"DEBUG:slack_sdk.web.base_client:Sending a request - url: https://slack.com/api/chat."
                            f"postMessage, query_params: {{}}, body_params: {{}}, files: {{}}, json_body: {{'channel': "
                            f"'#alerts'}}, headers: {{'Authorization': '(redacted)', 'token': '{tok}'}}"),
        ("slack_env", f"SLACK_BOT_TOKEN={tok}\n"),
    ]))
    tok = "xapp-1-A" + rand(10, _UPPER32) + "-" + rand(13, _DIGITS) + "-" + rand(64, HEX)
    add(("slack_app_token", "Slack app-level tokens (" + SLACK + ")", tok, [
        ("slack_app_yaml", f"slack:\n  app_token: {tok}\n  socket_mode: true\n"),
    ]))
    tok = "sk_live_" + rand(99, ALNUM)
    add(("stripe_live_key", "Stripe secret keys (" + STRIPE + ")", tok, [
        ("stripe_curl_u", f"+ curl https://api.stripe.com/v1/charges -u {tok}:"),
        ("stripe_repr", f"<StripeClient api_key='{tok}'>"),
    ]))
    tok = "whsec_" + rand(32, ALNUM)
    add(("stripe_webhook_secret", "Stripe webhook signing secrets (" + STRIPE + ")", tok, [
        ("stripe_listen", f"> Ready! Your webhook signing secret is {tok} (^C to quit)"),
    ]))
    tok = "rk_live_" + rand(99, ALNUM)
    add(("stripe_restricted_key", "Stripe restricted keys (" + STRIPE + ")", tok, [
        ("stripe_rk_env", f"declare -x STRIPE_KEY=\"{tok}\""),
    ]))
    tok = "dapi" + rand(32, HEX)
    add(("databricks_pat", "Databricks personal access tokens (" + DATABRICKS + ")", tok, [
        ("databrickscfg", f"[DEFAULT]\nhost  = https://adb-1234567890123456.7.azuredatabricks.net\ntoken = {tok}\n"),
        ("databricks_cli_debug", f"> GET /api/2.0/clusters/list\n> * Authorization: Bearer {tok}\n< HTTP/2.0 200 OK"),
        ("databricks_bare", f"cluster auth resolved with {tok}-2"),
    ]))
    return f


def _cloud_shapes() -> list[Case]:
    f: list[Case] = []
    add = f.append
    sig = rand(43, B64) + "="
    add(("azure_sas_sig", "an Azure account SAS (" + AZURE_SAS + ")", sig, [
        ("sas_url", "azcopy copy 'https://acmeml.blob.core.windows.net/ckpt?sv=2022-11-02&ss=b&srt=sco&sp=rwdlac"
                    "&se=2026-07-03T09:41:15Z&st=2026-07-02T01:41:15Z&spr=https&sig="
                    + sig.replace("+", "%2B").replace("/", "%2F").replace("=", "%3D") + "' /data/ckpt"),
        ("sas_token_env", f"AZURE_STORAGE_SAS_TOKEN=?sv=2022-11-02&ss=b&srt=sco&sp=rl&se=2026-07-03&sig={sig}\n"),
    ]))
    key = rand(86, B64) + "=="
    add(("azure_conn_string", "an Azure storage connection string (" + AZURE_CONN + ")", key, [
        ("azure_conn_env", "AZURE_STORAGE_CONNECTION_STRING=DefaultEndpointsProtocol=https;AccountName=acmeml;"
                           f"AccountKey={key};EndpointSuffix=core.windows.net"),
        ("azure_conn_repr", "BlobServiceClient.from_connection_string('DefaultEndpointsProtocol=https;AccountName="
                            f"acmeml;AccountKey={key};EndpointSuffix=core.windows.net')"),
    ]))
    key = rand(43, B64) + "="
    add(("azure_servicebus_conn", "an Azure Service Bus connection string (" + AZURE_CONN + ")", key, [
        ("servicebus_conn", "Endpoint=sb://acme-ml.servicebus.windows.net/;SharedAccessKeyName=RootManageSharedAccessKey;"
                            f"SharedAccessKey={key}"),
    ]))
    body = pem_body()
    sa = {"type": "service_account", "project_id": "acme-ml", "private_key_id": rand(40, HEX),
          "private_key": "-----BEGIN PRIVATE KEY-----\n" + body + "\n-----END PRIVATE KEY-----\n",
          "client_email": "trainer@acme-ml.iam.gserviceaccount.com", "client_id": rand(21, _DIGITS)}
    add(("gcp_sa_json_lines", "a GCP service-account key file printed over lines (" + GCP_SA_KEY + ")", body, [
        ("sa_cat", json.dumps(sa, indent=2)),
        ("sa_log", "DEBUG credentials file contents: " + json.dumps(sa)),
    ]))
    secret, session = rand(40, B64), "IQoJb3JpZ2luX2VjE" + rand(300, B64)
    sts = {"Credentials": {"AccessKeyId": "ASIA" + rand(16, _UPPER32), "SecretAccessKey": secret,
                           "SessionToken": session, "Expiration": "2026-07-02T10:41:15+00:00"},
           "AssumedRoleUser": {"AssumedRoleId": "AROA" + rand(17, _UPPER32) + ":train",
                               "Arn": "arn:aws:sts::123456789012:assumed-role/train/train"}}
    add(("aws_sts_secret", "aws sts assume-role's output (" + AWS_STS + ")", secret, [
        ("sts_json", json.dumps(sts, indent=4)),
        ("sts_export", f"export AWS_ACCESS_KEY_ID=ASIA{rand(16, _UPPER32)}\nexport AWS_SECRET_ACCESS_KEY={secret}\n"
                       f"export AWS_SESSION_TOKEN={session}\n"),
    ]))
    add(("aws_sts_session", "aws sts assume-role's output (" + AWS_STS + ")", session, [
        ("sts_json_session", json.dumps(sts, indent=4)),
        ("sts_text", f"CREDENTIALS\tASIA{rand(16, _UPPER32)}\t2026-07-02T10:41:15+00:00\t{secret}\t{session}"),
    ]))
    p = pw(18)
    auth = b64("robot$ml+ci:" + p)
    add(("docker_config_auths", "docker's config.json auths (" + DOCKER_CONFIG + ")", auth, [
        ("docker_config_cat", json.dumps({"auths": {"registry.internal:5000": {"auth": auth}},
                                          "credsStore": ""}, indent="\t")),
        ("dockerconfigjson", j({"auths": {"https://index.docker.io/v1/": {"username": "acme", "password": p,
                                                                            "auth": auth}}})),
    ]))
    add(("docker_config_password", "docker's config.json auths with the password too (" + DOCKER_CONFIG + ")", p, [
        ("dockerconfigjson_pw", j({"auths": {"https://index.docker.io/v1/": {"username": "acme", "password": p,
                                                                               "auth": auth}}})),
    ]))
    key_pem = "-----BEGIN RSA PRIVATE KEY-----\n" + pem_body(8) + "\n-----END RSA PRIVATE KEY-----\n"
    kd = b64(key_pem)
    add(("kubeconfig_client_key_data", "a kubeconfig's client-key-data (" + KUBECONFIG + ")", kd, [
        ("kubectl_config_view_raw", f"users:\n- name: admin\n  user:\n    client-key-data: {kd}\n"),
        ("kubeconfig_json", j({"users": [{"name": "admin", "user": {"client-key-data": kd}}]})),
    ]))
    header = base64.urlsafe_b64encode(b'{"alg":"RS256","typ":"JWT","kid":"k1"}').decode().rstrip("=")
    claims = {"iss": "https://login.internal.example", "aud": "train", "nonce": rand(180, URLSAFE)}
    payload = base64.urlsafe_b64encode(json.dumps(claims).encode()).decode().rstrip("=")
    sig = rand(342, URLSAFE)
    jwt = f"{header}.{payload}.{sig}"
    add(("jwt_split_lines", "a JWT (" + JWT + ") a console wrapped at a fixed width", payload, [
        ("jwt_wrapped_76", "id_token: " + "\n".join(jwt[i:i + 76] for i in range(0, len(jwt), 76))),
        ("jwt_bearer_wrapped", "Authorization: Bearer " + jwt[:100] + "\n" + jwt[100:200] + "\n" + jwt[200:]),
    ]))
    add(("jwt_split_sig", "a JWT (" + JWT + ") a console wrapped at a fixed width", sig, [
        ("jwt_wrapped_sig", "id_token: " + "\n".join(jwt[i:i + 76] for i in range(0, len(jwt), 76))),
    ]))
    body = pem_body(5)
    add(("private_key_env_dump", "a private key in an env dump (" + COREUTILS_ENV + ")", body, [
        ("env_multiline_pem", "HOSTNAME=train-0\nSSH_PRIVATE_KEY=-----BEGIN OPENSSH PRIVATE KEY-----\n" + body
                              + "\n-----END OPENSSH PRIVATE KEY-----\nHOME=/root\n"),
        ("env_escaped_pem", "JWT_SIGNING_KEY=-----BEGIN EC PRIVATE KEY-----\\n" + body.replace("\n", "\\n")
                            + "\\n-----END EC PRIVATE KEY-----"),
    ]))
    dsns = [("postgresql", "5432/features"), ("mysql+pymysql", "3306/runs"), ("mongodb+srv", "features?retryWrites"
             "=true"), ("redis", "6379/0"), ("amqps", "5671/ml"), ("mssql+pyodbc", "1433/dw?driver=ODBC+Driver+18"),
            ("oracle+oracledb", "1521/?service_name=ORCLPDB1"), ("neo4j+s", "7687"), ("cockroachdb", "26257/defaultdb"),
            ("clickhouse", "8443/default"), ("nats", "4222"), ("sftp", "22/upload"), ("ldaps", "636"),
            ("influxdb", "8086/metrics"), ("elasticsearch+https", "9200")]
    for scheme, rest in dsns:
        p = pwu(16)
        url = f"{scheme}://svc_ml:{p}@host.internal:{rest}"
        add((f"dsn_{scheme}", "a connection URL with credentials (" + LIBPQ + "; " + SQLALCHEMY_URL + ")", p, [
            (f"dsn_env_{scheme}", f"DATABASE_URL={url}\n"),
            (f"dsn_locals_{scheme}", f"    engine_url = '{url}'"),
            (f"dsn_json_{scheme}", j({"msg": "connecting", "dsn": url})),
        ]))
    return f


def _look_alikes() -> list[LookAlike]:
    sha, sha256 = rand(40, HEX), rand(64, HEX)
    sealed = "AgB" + rand(400, B64) + "=="
    pub = "ssh-ed25519 AAAAC3NzaC1lZDI1NTE5AAAAI" + rand(43, B64) + " ci@acme"
    return [
        ("secrets_names_list", "a job spec's secret names", "secrets:\n    - hf-token\n    - wandb-key",
         "job:\n  secrets:\n    - hf-token\n    - wandb-key\n"),
        ("auth_type", "an auth block's type", "type: oauth2", "auth:\n  type: oauth2\n  enabled: true\n"),
        ("auth_ttl", "an auth block's lifetime", "ttl: 3600", "auth:\n  type: basic\n  ttl: 3600\n"),
        ("credentials_provider", "a credentials block naming its provider", "provider: vault",
         "credentials:\n  provider: vault\n  mount: kv\n"),
        ("env_nccl", "a pod spec's env map", "NCCL_DEBUG: INFO", "env:\n  NCCL_DEBUG: INFO\n  WORLD_SIZE: '8'\n"),
        ("secrets_mask", "a printer's mask under a secrets map", "hf: '****'", "secrets:\n  hf: '****'\n"),
        ("credentials_placeholder", "a template's placeholder", "db: ${DB_PASSWORD}",
         "credentials:\n  db: ${DB_PASSWORD}\n"),
        ("credentials_count", "a count of credentials", "credentials: 3", "loaded credentials: 3 (ok)"),
        ("sealed_ciphertext", "a SealedSecret's encryptedData: ciphertext made to be committed (" + SEALED + ")",
         sealed, j({"kind": "SealedSecret", "spec": {"encryptedData": {"password": sealed}}})),
        ("eso_remote_key", "an ExternalSecret's remote key reference (" + ESO + ")", '"key":"prod/db/password"',
         j({"kind": "ExternalSecret", "spec": {"data": [{"secretKey": "password",
                                                          "remoteRef": {"key": "prod/db/password"}}]}})),
        ("commit_sha", "a checkout's commit", sha, f"HEAD is now at {sha[:7]}; commit {sha}"),
        ("sha256_digest", "a checkpoint's digest", sha256, f"sha256:{sha256}  model.safetensors"),
        ("uuid_run", "a run id", (u := uuid4()), j({"run_id": u, "status": "RUNNING"})),
        ("token_count", "an LLM usage line", "prompt_tokens=1834", "usage prompt_tokens=1834 completion_tokens=211"),
        ("tokens_yaml", "a data config", "max_tokens: 8192", "generation:\n  max_tokens: 8192\n"),
        ("ssh_public_key", "an authorized key (a public key)", pub, "authorized_keys: " + pub),
        ("openai_key_masked", "OpenAI's masked key in an error", "sk-proj-****...T3Bl",
         "Incorrect API key provided: sk-proj-****...T3Bl."),
        ("hf_token_placeholder", "a README's placeholder", "hf_xxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxx",
         "export HF_TOKEN=hf_xxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxx"),
        ("wandb_run_path", "a wandb run path", "acme/lm/3f9k2x7q", "wandb: 🚀 View run at https://wandb.ai/acme/lm/"
                                                                  "runs/3f9k2x7q -> acme/lm/3f9k2x7q"),
        ("stripe_publishable", "a Stripe publishable key (public by design)", "pk_test_TYooMQauvdEDq54NiTphI7jx",
         "stripe.js init pk_test_TYooMQauvdEDq54NiTphI7jx"),
        ("k8s_uid", "an object's uid", (uid := uuid4()), f"metadata:\n  uid: {uid}\n"),
        ("foreign_password_policy", "a policy's minimum length in Portuguese", "senha_minima: 8",
         "politica:\n  senha_minima: 8\n"),
        ("password_label", "a form field's label", "Passwort vergessen?", "ui.label: Passwort vergessen?"),
        ("dsn_no_password", "a DSN with no password", "postgresql://svc_ml@host.internal:5432/features",
         "DATABASE_URL=postgresql://svc_ml@host.internal:5432/features"),
        ("dsn_masked", "SQLAlchemy's masked URL", "postgresql://svc_ml:***@host.internal:5432/features",
         "Engine(postgresql://svc_ml:***@host.internal:5432/features)"),
        ("cert_data", "a kubeconfig's CA data (public)", "certificate-authority-data: LS0tLS1CRUdJTiBDRVJUSUZJQ0FURS0t",
         "clusters:\n- cluster:\n    certificate-authority-data: LS0tLS1CRUdJTiBDRVJUSUZJQ0FURS0t\n"),
        ("jwt_alg", "a JWT header's fields", '"alg":"RS256"', j({"alg": "RS256", "typ": "JWT", "kid": "k1"})),
        ("databricks_host", "a Databricks workspace host", "adb-1234567890123456.7.azuredatabricks.net",
         "host = https://adb-1234567890123456.7.azuredatabricks.net"),
        ("azure_account_name", "an Azure account name", "AccountName=acmeml",
         "DefaultEndpointsProtocol=https;AccountName=acmeml;EndpointSuffix=core.windows.net"),
        ("request_id_hex", "a request id header", "x-request-id: " + (rid := rand(32, HEX)),
         "< x-request-id: " + rid + "\n< content-length: 12\n"),
    ]


def rows() -> list[dict[str, str]]:
    _draws.reset()
    groups = (_secret_maps, _foreign_keys, _shapes, _cloud_shapes)
    return case_rows(case for group in groups for case in group()) + keep_rows(_look_alikes())


def write(path: Path) -> int:
    return write_rows(path, rows())
