"""Fake secrets of the kinds public secret scanners describe, each put into the log lines it turns up in.

The kinds come from the rule sets of gitleaks (``config/gitleaks.toml``), trufflehog's detectors,
detect-secrets' plugins and GitHub secret scanning's documented token prefixes; ``source`` names the
rule each follows. Values are generated from a seeded random generator in the published shape
(prefix, alphabet, length): none is a real credential.

A kind gives its value and the names it is usually held under (an environment variable, a config
field); :func:`cases` puts it into the contexts a training cluster's logs hold: an environment dump, a
``set -x`` echo, a JSON record with the secret in a nested field, a Python dict repr in a logging
line, logfmt, YAML, a traceback's frame locals, the JSON (Docker) and CRI envelopes. Kinds that
identify themselves by shape (a vendor prefix) also appear bare in prose and in error messages; kinds
with their own shape (URLs, PEM blocks, headers, connection strings) add their own lines.
"""

from __future__ import annotations

import base64
import json
import random
import re
import string
from dataclasses import dataclass, field

ALNUM = string.ascii_letters + string.digits
UPPER_DIGITS = string.ascii_uppercase + string.digits
LOWER_DIGITS = string.ascii_lowercase + string.digits
HEX = "0123456789abcdef"
URLSAFE = ALNUM + "_-"
B64 = ALNUM + "+/"

_rng = random.Random(6021)


def rand(n: int, alphabet: str = ALNUM) -> str:
    """``n`` characters of ``alphabet``, with letters and digits both where the alphabet has them."""
    while True:
        s = "".join(_rng.choice(alphabet) for _ in range(n))
        if n < 6 or not any(c.isalpha() for c in alphabet) or not any(c.isdigit() for c in alphabet):
            return s
        if any(c.isdigit() for c in s) and any(c.isalpha() for c in s):
            return s


def b64url(data: bytes) -> str:
    return base64.urlsafe_b64encode(data).decode().rstrip("=")


@dataclass
class Kind:
    name: str
    source: str
    secret: str
    env: str = ""                     # the environment variable it is held in ("" when none)
    key: str = ""                     # its name in a config or JSON record (default: env lower-cased)
    shaped: bool = False              # identifiable by its own shape: also appears bare in prose
    extra: list[tuple[str, str]] = field(default_factory=list)  # (context, text with {s}) of its own
    keyed: bool = True                # appears in the generic key = value contexts


def _pem(label: str, lines: int = 8) -> tuple[str, str]:
    body = "\n".join(rand(64, B64) for _ in range(lines)) + "\n" + rand(24, B64) + "=="
    return body, f"-----BEGIN {label}-----\n{body}\n-----END {label}-----"


def _jwt() -> str:
    head = b64url(json.dumps({"alg": "RS256", "typ": "JWT", "kid": rand(8)}).encode())
    body = b64url(json.dumps({"sub": rand(10), "iss": "https://auth.example.com", "exp": 1893456000}).encode())
    return f"{head}.{body}.{rand(86, URLSAFE)}"


def all_kinds() -> list[Kind]:  # noqa: PLR0915 - one statement per kind: a table
    """The first round of kinds: vendor tokens, and the secrets of the usual notations."""
    _rng.seed(6021)
    k: list[Kind] = []
    add = k.append
    # -- cloud providers --------------------------------------------------------------------------------------
    add(Kind("aws_access_key_id", "gitleaks aws-access-token; GitHub AKIA", "AKIA" + rand(16, UPPER_DIGITS),
             "AWS_ACCESS_KEY_ID", shaped=True))
    add(Kind("aws_secret_access_key", "detect-secrets AWSKeyDetector; trufflehog AWS", rand(40, B64),
             "AWS_SECRET_ACCESS_KEY"))
    add(Kind("aws_session_token", "trufflehog AWSSessionKey", "FwoGZXIvYXdzE" + rand(300, B64) + "=",
             "AWS_SESSION_TOKEN"))
    add(Kind("gcp_api_key", "gitleaks gcp-api-key; GitHub AIza", "AIza" + rand(35, URLSAFE), "GOOGLE_API_KEY",
             shaped=True))
    sa_body, _ = _pem("PRIVATE KEY")
    sa_line = sa_body.splitlines()[3]
    sa = {"type": "service_account", "project_id": "ml-prod-311", "private_key_id": rand(40, HEX),
          "private_key": f"-----BEGIN PRIVATE KEY-----\n{sa_body}\n-----END PRIVATE KEY-----\n",
          "client_email": "trainer@ml-prod-311.iam.gserviceaccount.com", "client_id": "1" + rand(20, string.digits)}
    add(Kind("gcp_service_account_key", "gitleaks gcp-service-account; trufflehog GCP", sa_line, keyed=False,
             extra=[("sa_json_log", "loading credentials " + json.dumps(sa)),
                    ("sa_json_nested", json.dumps({"level": "debug", "msg": "auth", "creds": sa}))]))
    add(Kind("gcp_oauth_access_token", "trufflehog GoogleOauth2; gitleaks gcp", "ya29.a0" + rand(150, URLSAFE),
             "GOOGLE_OAUTH_ACCESS_TOKEN", shaped=True))
    acct = rand(86, B64) + "=="
    add(Kind("azure_storage_account_key", "gitleaks azure-storage-account-key; detect-secrets AzureStorageKeyDetector",
             acct, "AZURE_STORAGE_KEY", keyed=True,
             extra=[("conn_string", "AZURE_STORAGE_CONNECTION_STRING=DefaultEndpointsProtocol=https;AccountName=ckpt01;"
                                    "AccountKey={s};EndpointSuffix=core.windows.net"),
                    ("conn_string_json", '{"msg":"blob client","conn":"DefaultEndpointsProtocol=https;AccountName=c;'
                                         'AccountKey={s};EndpointSuffix=core.windows.net"}')]))
    sas_sig = rand(43, ALNUM) + "%3D"
    add(Kind("azure_sas_token", "gitleaks azure SAS; trufflehog AzureSAS", sas_sig, keyed=False,
             extra=[("http_error", "azure.core.exceptions.ClientAuthenticationError: Server failed to authenticate "
                                   "the request. RequestUrl: https://ckpt01.blob.core.windows.net/ckpts/step-100.pt?"
                                   "sp=racwdl&st=2024-05-01T00:00:00Z&se=2024-06-01T00:00:00Z&spr=https&sv=2022-11-02"
                                   "&sr=c&sig={s}"),
                    ("sas_conn", "SharedAccessSignature=sv=2022-11-02&ss=b&srt=sco&sp=rl&se=2025-01-01&sig={s}")]))
    add(Kind("azure_ad_client_secret", "gitleaks azure-ad-client-secret",
             rand(3, ALNUM) + "8Q~" + rand(34, ALNUM + "_~.-"), "AZURE_CLIENT_SECRET", shaped=True))
    add(Kind("azure_devops_pat", "trufflehog AzureDevopsPersonalAccessToken", rand(52,
             "abcdefghijklmnopqrstuvwxyz234567"),
             "AZURE_DEVOPS_EXT_PAT"))
    add(Kind("azure_openai_key", "trufflehog AzureOpenAI", rand(32, HEX), "AZURE_OPENAI_API_KEY"))
    add(Kind("alibaba_access_key_id", "gitleaks alibaba-access-key-id", "LTAI" + rand(20, ALNUM),
             "ALIBABA_CLOUD_ACCESS_KEY_ID", shaped=True))
    add(Kind("digitalocean_token", "gitleaks digitalocean-pat", "dop_v1_" + rand(64, HEX), "DIGITALOCEAN_TOKEN",
             shaped=True))
    # -- AI APIs, model hubs, experiment trackers -----------------------------------------------------------
    add(Kind("huggingface_token", "gitleaks huggingface-access-token; GitHub hf_", "hf_" + rand(34, ALNUM), "HF_TOKEN",
             shaped=True, extra=[("cli", "+ huggingface-cli login --token {s} --add-to-git-credential")]))
    add(Kind("huggingface_org_token", "gitleaks huggingface-organization-api-token", "api_org_" + rand(34, ALNUM),
             "HUGGINGFACE_ORG_TOKEN", shaped=True))
    add(Kind("openai_key", "gitleaks openai-api-key; GitHub sk-", "sk-" + rand(20) + "T3BlbkFJ" + rand(20),
             "OPENAI_API_KEY", shaped=True,
             extra=[("sdk_error", "openai.AuthenticationError: Error code: 401 - {'error': {'message': 'Incorrect API "
                                  "key provided: {s}. You can find your API key at https://platform.openai.com/account"
                                  "/api-keys.', 'type': 'invalid_request_error'}}")]))
    add(Kind("openai_project_key", "gitleaks openai-api-key (sk-proj-)", "sk-proj-" + rand(156, URLSAFE),
             "OPENAI_API_KEY", shaped=True))
    add(Kind("anthropic_key", "gitleaks anthropic-api-key", "sk-ant-api03-" + rand(93, URLSAFE) + "AA",
             "ANTHROPIC_API_KEY", shaped=True))
    add(Kind("anthropic_admin_key", "gitleaks anthropic-admin-api-key", "sk-ant-admin01-" + rand(93, URLSAFE) + "AA",
             "ANTHROPIC_ADMIN_KEY", shaped=True))
    wandb = rand(40, HEX)
    add(Kind("wandb_api_key", "trufflehog WandB (40 hex)", wandb, "WANDB_API_KEY",
             extra=[("cli", "+ wandb login {s}"), ("cli_relogin", "$ wandb login --relogin {s}"),
                    ("netrc", "machine api.wandb.ai\n  login user\n  password {s}")]))
    add(Kind("cohere_key", "trufflehog Cohere", rand(40, ALNUM), "COHERE_API_KEY"))
    add(Kind("replicate_token", "trufflehog Replicate; GitHub r8_", "r8_" + rand(37, ALNUM), "REPLICATE_API_TOKEN",
             shaped=True))
    add(Kind("groq_key", "trufflehog Groq; GitHub gsk_", "gsk_" + rand(52, ALNUM), "GROQ_API_KEY", shaped=True))
    add(Kind("nvidia_ngc_key", "trufflehog NVAPI", "nvapi-" + rand(64, URLSAFE), "NGC_API_KEY", shaped=True))
    add(Kind("comet_api_key", "trufflehog Comet", rand(25, ALNUM), "COMET_API_KEY"))
    neptune = base64.b64encode(json.dumps({"api_address": "https://app.neptune.ai", "api_url": "https://app.neptune.ai",
                                           "api_key": f"{rand(8, HEX)}-{rand(4, HEX)}-{rand(4, HEX)}-{rand(4, HEX)}-"
                                                      f"{rand(12, HEX)}"}).encode()).decode()
    add(Kind("neptune_api_token", "trufflehog Neptune", neptune, "NEPTUNE_API_TOKEN"))
    add(Kind("mlflow_tracking_password", "MLflow MLFLOW_TRACKING_PASSWORD (generic password)", "mlf-" + rand(20),
             "MLFLOW_TRACKING_PASSWORD"))
    # -- code hosting, CI, registries ---------------------------------------------------------------------
    add(Kind("github_pat_classic", "gitleaks github-pat; GitHub ghp_", "ghp_" + rand(36), "GITHUB_TOKEN", shaped=True,
             extra=[("git_url", "fatal: unable to access 'https://x-access-token:{s}@github.com/org/repo.git/': "
                                "The requested URL returned error: 403")]))
    add(Kind("github_fine_grained_pat", "gitleaks github-fine-grained-pat", "github_pat_" + rand(22) + "_" + rand(59),
             "GH_TOKEN", shaped=True))
    add(Kind("github_oauth", "gitleaks github-oauth; GitHub gho_", "gho_" + rand(36), "GITHUB_OAUTH_TOKEN",
             shaped=True))
    add(Kind("github_app_token", "gitleaks github-app-token; GitHub ghs_", "ghs_" + rand(36), "GITHUB_APP_TOKEN",
             shaped=True))
    add(Kind("gitlab_pat", "gitleaks gitlab-pat; GitHub glpat-", "glpat-" + rand(20, URLSAFE), "GITLAB_TOKEN",
             shaped=True))
    add(Kind("gitlab_runner_token", "gitleaks gitlab-runner-authentication-token", "glrt-" + rand(20, URLSAFE),
             "CI_RUNNER_TOKEN", shaped=True))
    add(Kind("npm_token", "gitleaks npm-access-token; GitHub npm_", "npm_" + rand(36), "NPM_TOKEN", shaped=True,
             extra=[("npmrc", "//registry.npmjs.org/:_authToken={s}")]))
    add(Kind("pypi_token", "gitleaks pypi-upload-token; GitHub pypi-", "pypi-AgEIcHlwaS5vcmc" + rand(70, URLSAFE),
             "TWINE_PASSWORD", shaped=True, extra=[("cli", "+ twine upload -u __token__ -p {s} dist/*")]))
    add(Kind("docker_hub_pat", "GitHub dckr_pat_; trufflehog DockerHub", "dckr_pat_" + rand(27, URLSAFE),
             "DOCKERHUB_TOKEN", shaped=True,
             extra=[("cli", "+ echo {s} | docker login -u ci-bot --password-stdin"),
                    ("cli_p", "+ docker login -u ci-bot -p {s} registry-1.docker.io")]))
    add(Kind("databricks_token", "gitleaks databricks-api-token", "dapi" + rand(32, HEX), "DATABRICKS_TOKEN",
             shaped=True))
    add(Kind("vault_service_token", "gitleaks hashicorp-vault-service-token (hvs.)", "hvs." + rand(90, URLSAFE),
             "VAULT_TOKEN", shaped=True))
    add(Kind("vault_batch_token", "gitleaks vault-batch-token (hvb.)", "hvb." + rand(138, URLSAFE), "VAULT_TOKEN",
             shaped=True))
    add(Kind("terraform_cloud_token", "gitleaks hashicorp-tf-api-token", rand(14, ALNUM) + ".atlasv1." + rand(67,
             URLSAFE),
             "TFE_TOKEN", shaped=True))
    add(Kind("grafana_service_account_token", "gitleaks grafana-service-account-token", "glsa_" + rand(32) + "_"
             + rand(8, HEX), "GRAFANA_TOKEN", shaped=True))
    add(Kind("grafana_cloud_token", "gitleaks grafana-cloud-api-token", "glc_" + rand(80, B64) + "==",
             "GRAFANA_CLOUD_TOKEN", shaped=True))
    add(Kind("datadog_api_key", "trufflehog Datadog (32 hex)", rand(32, HEX), "DD_API_KEY"))
    add(Kind("datadog_app_key", "trufflehog Datadog (40 hex)", rand(40, HEX), "DD_APP_KEY"))
    add(Kind("newrelic_user_key", "gitleaks new-relic-user-api-key", "NRAK-" + rand(27, UPPER_DIGITS),
             "NEW_RELIC_API_KEY", shaped=True))
    add(Kind("sentry_auth_token", "gitleaks sentry-org-token (sntrys_)", "sntrys_" + rand(100, B64) + "=",
             "SENTRY_AUTH_TOKEN", shaped=True))
    add(Kind("shopify_access_token", "gitleaks shopify-access-token", "shpat_" + rand(32, HEX), "SHOPIFY_TOKEN",
             shaped=True))
    add(Kind("linear_api_key", "gitleaks linear-api-key", "lin_api_" + rand(40), "LINEAR_API_KEY", shaped=True))
    add(Kind("doppler_token", "gitleaks doppler-api-token", "dp.pt." + rand(43), "DOPPLER_TOKEN", shaped=True))
    add(Kind("pulumi_token", "gitleaks pulumi-api-token", "pul-" + rand(40, HEX), "PULUMI_ACCESS_TOKEN", shaped=True))
    add(Kind("atlassian_api_token", "gitleaks atlassian-api-token (ATATT)", "ATATT3xFfGF0" + rand(170, URLSAFE) + "="
             + rand(8, HEX).upper(), "JIRA_API_TOKEN", shaped=True))
    add(Kind("heroku_api_key", "gitleaks heroku-api-key (UUID under a heroku key)",
             f"{rand(8, HEX)}-{rand(4, HEX)}-{rand(4, HEX)}-{rand(4, HEX)}-{rand(12, HEX)}", "HEROKU_API_KEY"))
    # -- chat, mail, payments --------------------------------------------------------------------------------
    add(Kind("slack_bot_token", "gitleaks slack-bot-token; GitHub xoxb-", "xoxb-" + rand(12, string.digits) + "-"
             + rand(13, string.digits) + "-" + rand(24), "SLACK_BOT_TOKEN", shaped=True))
    add(Kind("slack_user_token", "gitleaks slack-user-token; GitHub xoxp-", "xoxp-" + rand(12, string.digits) + "-"
             + rand(12, string.digits) + "-" + rand(13, string.digits) + "-" + rand(32, HEX), "SLACK_USER_TOKEN",
             shaped=True))
    add(Kind("slack_webhook", "gitleaks slack-webhook-url", "T0" + rand(9, UPPER_DIGITS) + "/B0" + rand(9, UPPER_DIGITS)
             + "/" + rand(24), "SLACK_WEBHOOK_URL", keyed=False,
             extra=[("http_error", "requests.exceptions.HTTPError: 404 Client Error: Not Found for url: "
                                   "https://hooks.slack.com/services/{s}"),
                    ("json", '{"level":"error","msg":"alert delivery failed","webhook":"https://hooks.slack.com/'
                             'services/{s}","status":404}')]))
    add(Kind("discord_webhook", "gitleaks discord-webhook", rand(68, URLSAFE), keyed=False,
             extra=[("log", "WARNING notifier: POST https://discord.com/api/webhooks/1234567890123456789/{s} -> 429")]))
    add(Kind("telegram_bot_token", "gitleaks telegram-bot-api-token", "7" + rand(9, string.digits) + ":AA"
             + rand(33, URLSAFE), "TELEGRAM_BOT_TOKEN", shaped=True))
    add(Kind("stripe_secret_key", "gitleaks stripe-access-token; GitHub sk_live_", "sk_live_" + rand(99),
             "STRIPE_API_KEY",
             shaped=True))
    add(Kind("stripe_restricted_key", "gitleaks stripe-access-token (rk_live_)", "rk_live_" + rand(99),
             "STRIPE_RESTRICTED_KEY", shaped=True))
    add(Kind("twilio_api_key", "gitleaks twilio-api-key (SK + 32 hex)", "SK" + rand(32, HEX), "TWILIO_API_KEY",
             shaped=True))
    add(Kind("twilio_auth_token", "trufflehog Twilio (32 hex auth token)", rand(32, HEX), "TWILIO_AUTH_TOKEN"))
    add(Kind("sendgrid_key", "gitleaks sendgrid-api-token; GitHub SG.", "SG." + rand(22, URLSAFE) + "."
             + rand(43, URLSAFE), "SENDGRID_API_KEY", shaped=True))
    add(Kind("mailgun_key", "gitleaks mailgun-private-api-token", "key-" + rand(32, HEX), "MAILGUN_API_KEY",
             shaped=True))
    # -- generic web credentials -----------------------------------------------------------------------------
    jwt = _jwt()
    add(Kind("jwt", "gitleaks jwt; detect-secrets JwtTokenDetector", jwt, "ID_TOKEN", shaped=True))
    bearer = rand(48, URLSAFE)
    add(Kind("bearer_header", "gitleaks authorization header; trufflehog", bearer, keyed=False,
             extra=[("curl", "+ curl -sS -H 'Authorization: Bearer {s}' https://api.internal/v1/jobs"),
                    ("headers_dict", "DEBUG urllib3: headers={'User-Agent': 'python-requests/2.31', "
                                     "'Authorization': 'Bearer {s}'}"),
                    ("json_headers", '{"msg":"request","http":{"headers":{"authorization":"Bearer {s}"}}}'),
                    ("http_dump", "send: b'GET /v1/models HTTP/1.1\\r\\nHost: api.internal\\r\\n"
                                  "Authorization: Bearer {s}\\r\\n\\r\\n'")]))
    basic_pw = "Bp" + rand(14)
    basic = base64.b64encode(f"svc-trainer:{basic_pw}".encode()).decode()
    add(Kind("basic_header", "detect-secrets BasicAuthDetector; gitleaks", basic, keyed=False,
             extra=[("header", "> Authorization: Basic {s}"),
                    ("json_headers", '{"msg":"proxy","headers":{"Proxy-Authorization":"Basic {s}"}}')]))
    add(Kind("cookie_session", "gitleaks generic (session cookie)", rand(40, URLSAFE), keyed=False,
             extra=[("cookie", "> Cookie: sessionid={s}; csrftoken=" + rand(32)),
                    ("set_cookie", "< Set-Cookie: session={s}; Path=/; HttpOnly; Secure"),
                    ("json", '{"req":{"cookies":{"sessionid":"{s}"}},"status":302}')]))
    add(Kind("django_secret_key", "gitleaks generic-api-key (SECRET_KEY)", "django-insecure-" + rand(50,
             ALNUM + "!@#%^&*(-_=+)"),
             "DJANGO_SECRET_KEY"))
    # -- passwords in URLs and configurations ---------------------------------------------------------------
    add(Kind("redis_url_password", "gitleaks url credentials; trufflehog Redis", "Rd" + rand(22), keyed=False,
             extra=[("error", "redis.exceptions.ConnectionError: Error 111 connecting to redis://:{s}@redis-master:6379/0."),
                    ("env", "CELERY_BROKER_URL=redis://default:{s}@redis.svc:6379/1")]))
    add(Kind("postgres_url_password", "trufflehog Postgres; gitleaks url credentials", "Pg" + rand(18), keyed=False,
             extra=[("sqlalchemy", "sqlalchemy.exc.OperationalError: (psycopg2.OperationalError) connection to server "
                                   "failed\n(Background on this error at: https://sqlalche.me/e/20/e3q8)\n"
                                   "engine url: postgresql+psycopg2://mlflow:{s}@pg.mlflow.svc:5432/mlflow"),
                    ("json", '{"msg":"db","dsn":"postgres://trainer:{s}@10.0.3.4:5432/runs?sslmode=require"}')]))
    add(Kind("mongodb_srv_password", "trufflehog MongoDB", "Mg" + rand(18), keyed=False,
             extra=[("error", "pymongo.errors.OperationFailure: bad auth : Authentication failed., full error: uri="
                              "mongodb+srv://etl:{s}@cluster0.ab1cd.mongodb.net/?retryWrites=true")]))
    add(Kind("amqp_url_password", "trufflehog RabbitMQ", "Aq" + rand(18), keyed=False,
             extra=[("log", "[celery] Cannot connect to amqp://worker:{s}@rabbitmq:5672//: timed out.")]))
    add(Kind("mysql_url_password", "gitleaks url credentials", "My" + rand(18), keyed=False,
             extra=[("logfmt", 'level=warn msg="retrying" dsn="mysql://root:{s}@tcp(db:3306)/optuna"')]))
    add(Kind("https_url_password", "gitleaks url credentials (http basic in URL)", "Ht" + rand(18), keyed=False,
             extra=[("pip", "ERROR: Could not find a version that satisfies the requirement x (from versions: none) "
                            "index https://ci:{s}@nexus.internal/repository/pypi/simple"),
                    ("http_error", "urllib3.exceptions.MaxRetryError: HTTPSConnectionPool(host='es', port=9200): Max "
                                   "retries exceeded with url: https://elastic:{s}@es:9200/_bulk")]))
    add(Kind("kafka_sasl_password", "gitleaks generic (sasl.password); librdkafka config", "Kf" + rand(22), keyed=False,
             extra=[("config_dump", "%7|1714550400.123|CONFREAD|rdkafka#producer-1| sasl.username=ml-logs "
                                    "sasl.password={s} sasl.mechanisms=SCRAM-SHA-512"),
                    ("dict", "INFO producer config: {'bootstrap.servers': 'kafka:9093', 'sasl.mechanism': 'PLAIN', "
                             "'sasl.username': 'ml', 'sasl.password': '{s}'}"),
                    ("jaas", "sasl.jaas.config = org.apache.kafka.common.security.plain.PlainLoginModule required "
                             "username=\"ml\" password=\"{s}\";")]))
    add(Kind("human_password", "detect-secrets KeywordDetector (password = ...)", "Tr0ub4dor&3-" + rand(5),
             "DB_PASSWORD",
             extra=[("cli_long", "+ python ingest.py --db-host pg --db-password '{s}' --batch 64"),
                    ("mysql_p", "+ mysql -h db -u root -p'{s}' -e 'select 1'"),
                    ("psql_env", "PGPASSWORD='{s}' psql -h db -U trainer")]))
    add(Kind("yaml_passwd", "detect-secrets KeywordDetector (passwd:)", "Yw" + rand(16), keyed=False,
             extra=[("yaml", "smtp:\n  host: mail.internal\n  user: alerts\n  passwd: {s}\n  port: 587"),
                    ("yaml_quoted", "ldap:\n  bind_dn: cn=svc\n  bind_passwd: \"{s}\"")]))
    add(Kind("yaml_secret", "detect-secrets KeywordDetector (secret:)", "Ys" + rand(24, URLSAFE), keyed=False,
             extra=[("yaml", "oauth:\n  client_id: trainer-ui\n  client_secret: {s}\n  redirect: /cb"),
                    ("hydra", "[2024-05-01 12:00:00,000][__main__][INFO] - cfg: {'auth': {'secret': '{s}'}}")]))
    add(Kind("json_escaped_password", "detect-secrets KeywordDetector (JSON in a JSON string)", "Je" + rand(18),
             keyed=False,
             extra=[("json_in_json", '{"log":"{\\"level\\":\\"info\\",\\"db\\":{\\"password\\":\\"{s}\\"}}\\n",'
                                     '"stream":"stdout","time":"2024-05-01T12:00:00.000Z"}'),
                    ("unicode_escaped", '{"msg":"cfg","payload":"{\\u0022password\\u0022: \\u0022{s}\\u0022}"}'),
                    ("array", '{"msg":"users","items":[{"name":"a","password":"{s}"}]}')]))
    add(Kind("cli_password_short_flag", "gitleaks generic (CLI -p)", "Cp" + rand(14), keyed=False,
             extra=[("mysqladmin", "+ mysqladmin -u root -p{s} status"),
                    ("argv_list", "INFO launcher: argv=['sshpass', '-p', '{s}', 'ssh', 'node-3']"),
                    ("sshpass", "+ sshpass -p {s} rsync -a ckpt/ node-3:/data/")]))
    add(Kind("k8s_secret_data", "trufflehog k8s Secret (base64 data)",
             base64.b64encode(("Kd" + rand(22)).encode()).decode(), keyed=False,
             extra=[("yaml", "apiVersion: v1\nkind: Secret\nmetadata:\n  name: trainer-db\ntype: Opaque\ndata:\n"
                             "  username: dHJhaW5lcg==\n  password: {s}"),
                    ("kubectl_json", '{"apiVersion":"v1","kind":"Secret","metadata":{"name":"wandb"},"data":'
                                     '{"api-key":"{s}"}}')]))
    add(Kind("os_environ_repr", "detect-secrets KeywordDetector (environ repr)", "Oe" + rand(30, URLSAFE), keyed=False,
             extra=[("environ", "DEBUG env: environ({'PATH': '/usr/bin', 'HF_HUB_TOKEN': '{s}', 'HOME': '/root'})"),
                    ("dict_get", "os.environ['SECRET_TOKEN'] = '{s}'")]))
    # -- private keys ------------------------------------------------------------------------------------
    rsa_body, rsa = _pem("RSA PRIVATE KEY")
    add(Kind("pem_rsa_in_traceback", "gitleaks private-key; detect-secrets PrivateKeyDetector",
             rsa_body.splitlines()[2], keyed=False,
             extra=[("traceback", "Traceback (most recent call last):\n  File \"/app/sign.py\", line 12, in <module>\n"
                                  "    key = load_pem_private_key(data)\nValueError: Could not deserialize key data:\n"
                                  + rsa)]))
    ec_body, ec = _pem("EC PRIVATE KEY", 3)
    add(Kind("pem_ec_in_json_string", "gitleaks private-key (JSON-escaped)", ec_body.splitlines()[1], keyed=False,
             extra=[("json", json.dumps({"level": "error", "msg": "bad key", "key": ec}))]))
    ossh_body, ossh = _pem("OPENSSH PRIVATE KEY", 6)
    add(Kind("openssh_private_key", "gitleaks private-key (OPENSSH)", ossh_body.splitlines()[4], keyed=False,
             extra=[("cat", "+ cat ~/.ssh/id_ed25519\n" + ossh)]))
    enc_body, enc = _pem("ENCRYPTED PRIVATE KEY", 5)
    add(Kind("encrypted_private_key", "detect-secrets PrivateKeyDetector (ENCRYPTED)", enc_body.splitlines()[2],
             keyed=False, extra=[("log", "DEBUG tls: loaded client key\n" + enc)]))
    pgp_body, pgp = _pem("PGP PRIVATE KEY BLOCK", 5)
    add(Kind("pgp_private_key", "detect-secrets PrivateKeyDetector (PGP)", pgp_body.splitlines()[3], keyed=False,
             extra=[("gpg", "gpg: exporting\n" + pgp.replace("BLOCK-----\n", "BLOCK-----\n\n", 1))]))
    add(Kind("age_secret_key", "gitleaks age-secret-key", "AGE-SECRET-KEY-1" + rand(58,
             "QPZRY9X8GF2TVDW0S3JN54KHCE6MUA7L"),
             "SOPS_AGE_KEY", shaped=True))
    return k


def _diagnosed(source: str, values: list[tuple[str, str]]) -> str:
    """A source line and the values of its names as loguru's and better-exceptions' ``diagnose`` print them:
    one line per name, rightmost first, a ``└`` under the name's first character and ``│`` under the
    names to its left."""
    cols = sorted((re.search(rf"\b{re.escape(name)}\b", source).start(), value)  # type: ignore[union-attr]
                  for name, value in values)
    lines = [source]
    for i in range(len(cols) - 1, -1, -1):
        row = [" "] * cols[i][0]
        for c, _v in cols[:i]:
            row[c] = "│"
        lines.append("".join(row) + "└ " + cols[i][1])
    return "\n".join(lines)


def later_kinds() -> list[Kind]:  # noqa: PLR0915 - one statement per kind: a table
    """The second round: vendor shapes from gitleaks' rules not probed before, and notations that carry known
    kinds in ways the first round did not try (config formats printed into logs, manifests, escapes,
    encodings, debug dumps of HTTP clients, exception printers)."""
    _rng.seed(20261205)
    k: list[Kind] = []
    add = k.append
    ud = UPPER_DIGITS
    # -- vendor shapes (gitleaks config/gitleaks.toml rule ids) -------------------------------------------------
    add(Kind("openshift_user_token", "gitleaks openshift-user-token", "sha256~" + rand(43, URLSAFE),
             "OPENSHIFT_TOKEN", shaped=True,
             extra=[("oc_login", "+ oc login --token={s} --server=https://api.ocp.internal:6443")]))
    add(Kind("heroku_api_key_v2", "gitleaks heroku-api-key-v2", "HRKU-AA" + rand(58, URLSAFE), "HEROKU_API_KEY",
             shaped=True))
    add(Kind("harness_pat", "gitleaks harness-api-key", "pat." + rand(22, URLSAFE) + "." + rand(24) + "." + rand(20),
             "HARNESS_PLATFORM_API_KEY", shaped=True))
    add(Kind("sourcegraph_token", "gitleaks sourcegraph-access-token", "sgp_" + rand(16, HEX) + "_" + rand(40, HEX),
             "SRC_ACCESS_TOKEN", shaped=True))
    add(Kind("infracost_token", "gitleaks infracost-api-token", "ico-" + rand(32), "INFRACOST_API_KEY", shaped=True))
    add(Kind("readme_token", "gitleaks readme-api-token", "rdme_" + rand(70, LOWER_DIGITS), "README_API_KEY",
             shaped=True))
    add(Kind("scalingo_token", "gitleaks scalingo-api-token", "tk-us-" + rand(48, URLSAFE), "SCALINGO_API_TOKEN",
             shaped=True))
    add(Kind("easypost_key", "gitleaks easypost-api-token", "EZAK" + rand(54), "EASYPOST_API_KEY", shaped=True))
    add(Kind("shippo_token", "gitleaks shippo-api-token", "shippo_live_" + rand(40, HEX), "SHIPPO_API_TOKEN",
             shaped=True))
    add(Kind("duffel_token", "gitleaks duffel-api-token", "duffel_live_" + rand(43, URLSAFE), "DUFFEL_ACCESS_TOKEN",
             shaped=True))
    add(Kind("frameio_token", "gitleaks frameio-api-token", "fio-u-" + rand(64, URLSAFE), "FRAMEIO_TOKEN",
             shaped=True))
    add(Kind("typeform_token", "gitleaks typeform-api-token", "tfp_" + rand(59, URLSAFE), "TYPEFORM_TOKEN",
             shaped=True))
    add(Kind("flutterwave_secret_key", "gitleaks flutterwave-secret-key",
             "FLWSECK_TEST-" + rand(32, "abcdefgh0123456789") + "-X", "FLW_SECRET_KEY", shaped=True))
    add(Kind("artifactory_api_key", "gitleaks artifactory-api-key", "AKCp" + rand(69), "ARTIFACTORY_API_KEY",
             shaped=True))
    add(Kind("clickhouse_cloud_secret", "gitleaks clickhouse-cloud-api-secret-key", "4b1d" + rand(38),
             "CLICKHOUSE_SECRET_KEY", shaped=True))
    add(Kind("maxmind_license_key", "gitleaks maxmind-license-key", rand(6) + "_" + rand(29) + "_mmk",
             "MAXMIND_LICENSE_KEY", shaped=True))
    add(Kind("settlemint_token", "gitleaks settlemint-personal-access-token", "sm_pat_" + rand(16),
             "SETTLEMINT_ACCESS_TOKEN", shaped=True))
    add(Kind("cloudflare_origin_ca_key", "gitleaks cloudflare-origin-ca-key", "v1.0-" + rand(24, HEX) + "-"
             + rand(146, HEX), "CF_ORIGIN_CA_KEY", shaped=True))
    add(Kind("adobe_client_secret", "gitleaks adobe-client-secret", "p8e-" + rand(32), "ADOBE_CLIENT_SECRET",
             shaped=True))
    add(Kind("onepassword_secret_key", "gitleaks 1password-secret-key",
             f"A3-{rand(6, ud)}-{rand(11, ud)}-{rand(5, ud)}-{rand(5, ud)}-{rand(5, ud)}", "OP_SECRET_KEY",
             shaped=True))
    add(Kind("gitlab_routable_pat", "gitleaks gitlab-pat-routable",
             "glpat-" + rand(38, URLSAFE) + ".01" + rand(7, LOWER_DIGITS), "GITLAB_TOKEN", shaped=True))
    add(Kind("gitlab_session_cookie", "gitleaks gitlab-session-cookie", rand(32, HEX), keyed=False,
             extra=[("cookie", "> Cookie: _gitlab_session={s}; known_sign_in=1"),
                    ("set_cookie", "< set-cookie: _gitlab_session={s}; path=/; expires=Thu, 02 May 2024; HttpOnly"),
                    ("cookiejar", "DEBUG session: <RequestsCookieJar[<Cookie _gitlab_session={s} for "
                                  "gitlab.internal/>]>")]))
    teams = f"{rand(32, HEX)}/{rand(8, HEX)}-{rand(4, HEX)}-{rand(4, HEX)}-{rand(4, HEX)}-{rand(12, HEX)}"
    add(Kind("teams_webhook", "gitleaks microsoft-teams-webhook", teams, keyed=False,
             extra=[("http_error", "requests.exceptions.HTTPError: 400 Client Error: Bad Request for url: "
                                   "https://contoso.webhook.office.com/webhookb2/0a1b2c3d-0000-4000-8000-000000000001@"
                                   "0a1b2c3d-0000-4000-8000-000000000002/IncomingWebhook/{s}"),
                    ("env", "TEAMS_WEBHOOK_URL=https://contoso.webhook.office.com/webhookb2/x@y/IncomingWebhook/{s}")]))
    add(Kind("okta_api_token", "gitleaks okta-access-token (SSWS scheme)", "00" + rand(40, URLSAFE), "OKTA_API_TOKEN",
             extra=[("header", "> Authorization: SSWS {s}"),
                    ("headers_dict", "DEBUG okta: headers={'Accept': 'application/json', "
                                     "'Authorization': 'SSWS {s}'}")]))
    # -- notations ------------------------------------------------------------------------------------------------
    add(Kind("kubectl_secret_sorted", "gitleaks kubernetes-secret-yaml (data before kind, as kubectl sorts keys)",
             base64.b64encode(("Ks" + rand(22)).encode()).decode(), keyed=False,
             extra=[("get_yaml", "apiVersion: v1\ndata:\n  connection-string: {s}\nkind: Secret\nmetadata:\n"
                                 "  name: runs-db\n  namespace: train\ntype: Opaque"),
                    ("list_yaml", "apiVersion: v1\nitems:\n- apiVersion: v1\n  data:\n    dsn: {s}\n  kind: Secret\n"
                                  "  metadata:\n    name: runs-db\nkind: List")]))
    add(Kind("kubeconfig_token", "trufflehog kubeconfig; gitleaks generic (token:)", rand(64), keyed=False,
             extra=[("yaml", "users:\n- name: trainer\n  user:\n    token: {s}\ncontexts:\n- name: prod"),
                    ("json", '{"kind":"Config","users":[{"name":"trainer","user":{"token":"{s}"}}]}')]))
    add(Kind("k8s_env_values", "detect-secrets KeywordDetector over pod env (name/value)", "Ke" + rand(20),
             keyed=False,
             extra=[("block", "    env:\n    - name: DB_PASSWORD\n      value: {s}\n"
                               "    - name: LOG_LEVEL\n      value: info"),
                    ("flow", "env: [{name: HF_TOKEN, value: {s}}, {name: SEED, value: '1'}]"),
                    ("helm_set", "+ helm upgrade --install trainer ./chart --set env.WANDB_API_KEY={s} --wait"),
                    ("describe", "    Environment:\n      DB_PASSWORD:  {s}\n      LOG_LEVEL:    info")]))
    add(Kind("spring_properties", "gitleaks generic-api-key (Spring/Java properties)", "Sp" + rand(18), keyed=False,
             extra=[("properties", "spring.datasource.username=app\nspring.datasource.password={s}"),
                    ("jdbc_query", "spring.datasource.url=jdbc:mysql://db:3306/app?user=root&password={s}&useSSL=false"),
                    ("jvm_flag", "+ java -Dspring.datasource.password={s} -Xmx8g -jar serve.jar"),
                    ("boot_env", "2024-05-01 12:00:00.123  INFO 1 --- [main] o.s.b.SpringApplication : "
                                 "{spring.datasource.password={s}, server.port=8080}")]))
    add(Kind("xml_attributes", "gitleaks nuget-config-password; detect-secrets KeywordDetector (XML)", "Xa" + rand(18),
             keyed=False,
             extra=[("nuget", '<packageSourceCredentials><feed><add key="Username" value="ci" />'
                              '<add key="ClearTextPassword" value="{s}" /></feed></packageSourceCredentials>'),
                    ("spring_xml", '<property name="hibernate.connection.password" value="{s}"/>'),
                    ("tomcat", '<user username="admin" password="{s}" roles="manager-gui"/>')]))
    add(Kind("ini_sections", "detect-secrets KeywordDetector (INI, my.cnf, .pypirc)", "In" + rand(18), keyed=False,
             extra=[("mycnf", "[client]\nuser = root\npassword = {s}\nhost = db"),
                    ("pypirc", "[distutils]\nindex-servers = private\n\n[private]\nrepository = https://nexus/pypi\n"
                               "username = ci\npassword = {s}"),
                    ("hocon", 'api {\n  credentials {\n    "access_key" = "TRAINER01"\n'
                              '    "secret_key" = "{s}"\n  }\n}')]))
    add(Kind("registry_configs", "gitleaks npm/pip credentials; url credentials", "Np" + rand(20), keyed=False,
             extra=[("npmrc", "//nexus.internal/repository/npm/:_password={s}\n//nexus.internal/repository/npm/:"
                              "username=ci"),
                    ("pip_conf", "[global]\nindex-url = https://ci:{s}@nexus.internal/repository/pypi/simple"),
                    ("uv_env", "UV_INDEX_PRIVATE_PASSWORD={s}"),
                    ("poetry", "+ poetry config http-basic.private ci {s}")]))
    add(Kind("docker_config_auths", "trufflehog Docker (config.json auths)",
             base64.b64encode(("ci-bot:" + rand(20)).encode()).decode(), keyed=False,
             extra=[("compact", '{"auths":{"registry.internal:5000":{"auth":"{s}"}}}'),
                    ("pretty", '{\n\t"auths": {\n\t\t"ghcr.io": {\n\t\t\t"auth": "{s}"\n\t\t}\n\t}\n}'),
                    ("gitlab_ci", 'DOCKER_AUTH_CONFIG={"auths":{"registry.gitlab.com":{"auth":"{s}"}}}')]))
    add(Kind("json_escaped_twice", "detect-secrets KeywordDetector (JSON escaped twice)", "Jd" + rand(20),
             keyed=False,
             extra=[("unicode_twice", '{"log":"{\\"payload\\":\\"{\\\\u0022api_key\\\\u0022: '
                                      '\\\\u0022{s}\\\\u0022}\\"}"}'),
                    ("quotes_twice", '{"log":"{\\"msg\\":\\"{\\\\\\"password\\\\\\":\\\\\\"{s}\\\\\\"}\\"}\\n"}')]))
    add(Kind("url_encoded_values", "gitleaks generic-api-key (URL-encoded query strings)", "Ue" + rand(22),
             keyed=False,
             extra=[("redirect", "GET /login?next=%2Fcallback%3Faccess_token%3D{s}%26state%3Dab12 HTTP/1.1\" 302"),
                    ("encoded_url", "redirect_uri=https%3A%2F%2Fci%3A{s}%40nexus.internal%2Fsimple&x=1"),
                    ("form_body", "DEBUG body: b'grant_type=password&username=ci&password={s}&client_id=cli'")]))
    add(Kind("api_key_headers", "gitleaks curl-auth-header (X-Api-Key, api-key)", rand(40), keyed=False,
             extra=[("curl_v", "> GET /v1/runs HTTP/2\n> Host: api.internal\n> X-Api-Key: {s}\n> accept: */*"),
                    ("http_client", "send: b'GET /v1 HTTP/1.1\\r\\nHost: api\\r\\napi-key: {s}\\r\\n\\r\\n'"),
                    ("asgi_scope", "DEBUG scope={'type': 'http', 'headers': [(b'host', b'api'), "
                                   "(b'x-api-key', b'{s}')]}"),
                    ("httpx", "DEBUG request headers: Headers({'host': 'api', 'x-api-key': '{s}'})"),
                    ("aiohttp", "<CIMultiDictProxy('Host': 'api', 'X-API-Key': '{s}')>")]))
    add(Kind("auth_schemes", "RFC 7235 credentials after any auth-scheme (OAuth, Bot, GenieKey)", rand(40, URLSAFE),
             keyed=False,
             extra=[("oauth", "> Authorization: OAuth {s}"),
                    ("bot", "DEBUG discord: headers={'Authorization': 'Bot {s}', 'User-Agent': 'x'}"),
                    ("geniekey", '{"msg":"notify","headers":{"Authorization":"GenieKey {s}"}}')]))
    add(Kind("python_auth_tuple", "gitleaks generic (auth tuples: requests, elasticsearch-py)", "Pt" + rand(18),
             keyed=False,
             extra=[("requests", "    resp = requests.get(url, auth=('svc-trainer', '{s}'), timeout=10)"),
                    ("elasticsearch", "INFO es: Elasticsearch(['https://es:9200'], basic_auth=(\"elastic\", \"{s}\"))"),
                    ("http_basic", "DEBUG auth=HTTPBasicAuth('svc-trainer', '{s}')")]))
    add(Kind("odbc_braced_password", "gitleaks generic (ODBC connection strings, braced values)", "Ob" + rand(18),
             keyed=False,
             extra=[("azure_sql", "Driver={ODBC Driver 18 for SQL Server};Server=tcp:x.database.windows.net,1433;"
                                  "Uid=sa;Pwd={{s}};Encrypt=yes"),
                    ("pyodbc", "pyodbc.connect('DRIVER={PostgreSQL};SERVER=db;UID=u;PWD={{s}}')")]))
    add(Kind("connection_strings", "trufflehog JDBC, AzureServiceBus, RabbitMQ, MongoDB; Kafka JAAS", "Cs" + rand(18),
             keyed=False,
             extra=[("jdbc_sqlserver", "jdbc:sqlserver://db:1433;databaseName=runs;user=sa;password={s};encrypt=true"),
                    ("servicebus", "Endpoint=sb://ns.servicebus.windows.net/;SharedAccessKeyName=send;"
                                   "SharedAccessKey={s}"),
                    ("scram_jaas", "sasl.jaas.config=org.apache.kafka.common.security.scram.ScramLoginModule required "
                                   "username='ml' password='{s}';"),
                    ("mongo_replica", "mongodb://u:{s}@h1:27017,h2:27017/?replicaSet=rs0&authSource=admin")]))
    add(Kind("toml_configs", "detect-secrets KeywordDetector (TOML: poetry, uv, multi-line strings)", "Tm" + rand(18),
             keyed=False,
             extra=[("poetry", '[tool.poetry.http-basic.private]\nusername = "ci"\npassword = "{s}"'),
                    ("uv_index", '[[tool.uv.index]]\nname = "private"\nurl = "https://ci:{s}@nexus/simple"'),
                    ("triple_quoted", "[database]\npassword = '''{s}'''\nhost = \"db\""),
                    ("triple_double", '[api]\ntoken = """{s}"""')]))
    add(Kind("yaml_block_scalar", "detect-secrets KeywordDetector (YAML block scalars)", "Yb" + rand(24), keyed=False,
             extra=[("literal", "db:\n  host: pg\n  password: |\n    {s}\n  port: 5432"),
                    ("folded", "hub:\n  token: >-\n    {s}\n  repo: org/model")]))
    diag_secret = "Ld" + rand(22)
    loguru = ("Traceback (most recent call last):\n  File \"/app/train.py\", line 40, in <module>\n    main()\n"
              "    └ <function main at 0x7f3c2a1b0d30>\n> File \"/app/train.py\", line 31, in main\n"
              + _diagnosed("    client = connect(host, db_password)",
                           [("connect", "<function connect at 0x7f2a>"), ("host", "'pg.internal'"),
                            ("db_password", "'{s}'")])
              + "\npsycopg2.OperationalError: FATAL:  password authentication failed for user \"trainer\"")
    better = ("Traceback (most recent call last):\n  File \"/app/push.py\", line 9, in login\n"
              + _diagnosed("    session.post(url, auth=(user, api_token))",
                           [("session", "<requests.sessions.Session object at 0x7f>"), ("url", "'https://api/login'"),
                            ("user", "'svc'"), ("api_token", "'{s}'")])
              + "\nrequests.exceptions.HTTPError: 401 Client Error")
    add(Kind("diagnose_locals", "gitleaks generic; loguru and better-exceptions diagnose (values under names)",
             diag_secret, keyed=False, extra=[("loguru", loguru), ("better_exceptions", better)]))
    add(Kind("pydantic_input_value", "gitleaks generic (a validation error echoes a secret field's input)",
             "Pv" + rand(14), keyed=False,
             extra=[("settings", "pydantic_core._pydantic_core.ValidationError: 1 validation error for Settings\n"
                                 "db_password\n  String should have at least 24 characters [type=string_too_short, "
                                 "input_value='{s}', input_type=str]"),
                    ("nested", "2 validation errors for TrainerConfig\nwandb.api_key\n  String should match pattern "
                               "'^[0-9a-f]{40}$' [type=string_pattern_mismatch, input_value='{s}', input_type=str]")]))
    pfx_body, pfx = _pem("OPENSSH PRIVATE KEY", 5)
    add(Kind("pem_prefixed_lines", "gitleaks private-key (each line behind a log prefix)", pfx_body.splitlines()[2],
             keyed=False,
             extra=[("cloud_init", "\n".join(f"May  1 12:00:00 node-3 cloud-init[812]: {line}"
                                              for line in pfx.splitlines())),
                    ("kubectl_prefix", "\n".join(f"[pod/trainer-0/setup] {line}" for line in pfx.splitlines()))]))
    add(Kind("env_notations", "detect-secrets KeywordDetector (docker inspect Env, /proc environ, systemd)",
             "En" + rand(20), keyed=False,
             extra=[("docker_inspect", '"Env": [\n    "PATH=/usr/local/bin",\n    "DB_PASSWORD={s}",\n'
                                       '    "LANG=C.UTF-8"\n]'),
                    ("proc_environ", "HOSTNAME=trainer-0\\x00DB_PASSWORD={s}\\x00HOME=/root"),
                    ("systemd", "Environment=\"API_TOKEN={s}\" \"LOG_LEVEL=info\"")]))
    add(Kind("tracker_configs", "trufflehog WandB/Comet/Neptune; ClearML and MLflow settings dumps", "Tr" + rand(30),
             keyed=False,
             extra=[("wandb_settings", "wandb: DEBUG Settings(api_key='{s}', base_url='https://api.wandb.ai')"),
                    ("comet_ini", "[comet]\napi_key = {s}\nworkspace = ml-team"),
                    ("clearml_env", "CLEARML_API_SECRET_KEY={s}"),
                    ("mlflow_env", "MLFLOW_TRACKING_URI=https://trainer:{s}@mlflow.internal")]))
    return k


def every_kind() -> list[Kind]:
    """Every round's kinds, the first round first."""
    return all_kinds() + later_kinds()


_TS = "2024-05-01 12:00:00,123"


def _generic(kd: Kind) -> list[tuple[str, str]]:
    env = kd.env
    key = kd.key or env.lower()
    return [
        ("env_dump", f"+ printenv\nHOSTNAME=trainer-0\n{env}={{s}}\nNCCL_DEBUG=INFO\nCUDA_VISIBLE_DEVICES=0,1"),
        ("export_echo", f"+ export {env}={{s}}"),
        ("json_nested", '{"ts":"2024-05-01T12:00:00Z","level":"info","msg":"settings loaded","settings":'
                        f'{{"run":{{"name":"llm-7b","seed":42,"{key}":"{{s}}"}}}}}}'),
        ("dict_repr", f"{_TS} - trainer - INFO - config: {{'lr': 0.0003, '{key}': '{{s}}', 'seed': 42}}"),
        ("logfmt", f'time=2024-05-01T12:00:00Z level=info msg="client init" {key}={{s}} retries=3'),
        ("yaml", f"run:\n  name: llm-7b\n  {key}: {{s}}\n  seed: 42"),
        ("docker_json", json.dumps({"log": f"{_TS} INFO env {env}={{s}}\n", "stream": "stderr",
                                    "time": "2024-05-01T12:00:00.123456789Z"})),
        ("cri", f"2024-05-01T12:00:00.123456789Z stderr F {_TS} INFO trainer: {key}={{s}}"),
        ("traceback_locals",
         "Traceback (most recent call last):\n  File \"/app/train.py\", line 88, in main\n"
         f"    client = connect({key}={key})\n  File \"/app/client.py\", line 12, in connect\n"
         "    raise PermissionError(\"401 Unauthorized\")\nPermissionError: 401 Unauthorized\n"
         f"Locals at frame connect:\n    {key} = '{{s}}'\n    retries = 3"),
        ("cli_flag", f"+ python train.py --{key.replace('_', '-')} {{s}} --epochs 3"),
    ]


def _shaped(kd: Kind) -> list[tuple[str, str]]:
    return [
        ("prose", f"{_TS} WARNING client: request rejected (401) for credential {{s}}; check the key"),
        ("exception_message", "Traceback (most recent call last):\n  File \"/app/x.py\", line 3, in <module>\n"
                              "    run()\nRuntimeError: authentication failed with {s}"),
        ("json_message", '{"level":"error","msg":"auth failed for {s}","attempt":2}'),
        ("url_query", "HTTPError: 403 Client Error: Forbidden for url: https://api.example.com/v2/upload?"
                      "key={s}&alt=json"),
    ]


def cases(kd: Kind) -> list[tuple[str, str]]:
    """(context, text) for each place the kind is put; ``{s}`` replaced by the secret."""
    raw = (_generic(kd) if kd.keyed and kd.env else []) + (_shaped(kd) if kd.shaped else []) + kd.extra
    return [(ctx, text.replace("{s}", kd.secret)) for ctx, text in raw]


def split(kinds: list[Kind] | None = None) -> tuple[list[Kind], list[Kind]]:
    """(dev, holdout): each round of kinds split on its own, with its own seed, so that adding a round never
    moves a kind of an earlier one across the line. ``kinds`` narrows the answer to those given."""
    rounds = ((all_kinds(), 77, (1, 3)), (later_kinds(), 20261205, (35, 100)))
    held: set[str] = set()
    for round_kinds, seed, (num, den) in rounds:
        names = sorted(kd.name for kd in round_kinds)
        held.update(random.Random(seed).sample(names, len(names) * num // den))
    chosen = kinds if kinds is not None else every_kind()
    return [kd for kd in chosen if kd.name not in held], [kd for kd in chosen if kd.name in held]


# Lines of training and operations logs that hold no secret but look random: each redaction in them is a
# false positive. Hashes, ids and addresses come from generators in the shapes the tools print.
def decoys() -> list[str]:
    r = random.Random(4242)

    def h(n: int, alphabet: str = HEX) -> str:
        return "".join(r.choice(alphabet) for _ in range(n))

    uuid = f"{h(8)}-{h(4)}-{h(4)}-{h(4)}-{h(12)}"
    return [
        f"commit {h(40)}", f"HEAD is now at {h(7)} fix loss scaling", f"Merge: {h(7)} {h(7)}",
        f"run_id={uuid} status=RUNNING", f"mlflow.run_id: {h(32)}", f"trace_id={h(32)} span_id={h(16)}",
        f"sha256:{h(64)}", f"Digest: sha256:{h(64)}", f"image: nvcr.io/nvidia/pytorch:24.01-py3@sha256:{h(64)}",
        f"md5sum {h(32)}  model-00001-of-00004.safetensors", f"etag: \"{h(32)}\"",
        f"RuntimeError: CUDA error: an illegal memory access was encountered at 0x7f{h(10)}",
        f"  ptr=0x{h(12)} size=2097152 stream=0x{h(12)}", f"NCCL INFO comm 0x{h(12)} rank 3 nRanks 8 commId 0x{h(16)}",
        "tensor([[ 0.1234, -1.2345,  0.0012],\n        [ 2.3456,  0.9876, -0.5432]], device='cuda:0')",
        "{'loss': 1.2345, 'grad_norm': 0.8765, 'learning_rate': 1.9e-05, 'epoch': 0.42}",
        f"wandb: Syncing run fluent-sun-42 https://wandb.ai/team/proj/runs/{h(8, LOWER_DIGITS)}",
        f"wandb: Run data is saved locally in /wandb/run-20240501_120000-{h(8, LOWER_DIGITS)}",
        f"pod trainer-{h(10, LOWER_DIGITS)}-{h(5, LOWER_DIGITS)} scheduled on node gpu-a100-17",
        f"s3://ckpts/llm/{uuid}/step-1000/optimizer.pt", f"Downloading (…){h(10)}.safetensors: 100%",
        f"Loading checkpoint shards: 100%|██████████| 4/4 [00:12<00:00,  3.01s/it] cache={h(40)}",
        "token_ids=[101, 2023, 2003, 1037, 3231, 102] attention_mask=[1, 1, 1, 1, 1, 1]",
        f"input_ids: tensor([[  1, {r.randint(1000, 32000)}, {r.randint(1000, 32000)}]])",
        f"session {uuid} opened for user trainer", f"request_id: req_{h(24, ALNUM)}",
        f"X-Request-Id: {uuid}", f"blob {h(64)} uploaded (412 MB)",
        f"git+https://github.com/huggingface/transformers.git@{h(40)}",
        f"Successfully built flash-attn-2.5.6-cp310-cp310-linux_x86_64.whl sha256={h(64)}",
        f"cache key: {h(16)}-{h(16)}", f"kernel hash {h(64)} compiled in 3.2s",
        f"job_token_count=1234567 tokens/sec=98765.4 tokenizer=/models/tok-{h(6)}",
        "base64 thumbnail iVBORw0KGgoAAAANSUhEUgAAAAEAAAABCAYAAAAfFcSJAAAADUlEQVR42mNk"
        f"{h(12, ALNUM)}AAAAABJRU5ErkJggg==",
        f"dataset fingerprint {h(16)} saved", f"NVIDIA-SMI GPU-{uuid}", f"MIG-{uuid} 1g.10gb",
        f"container_id={h(64)}", f"{h(40)} refs/heads/main", "pip install torch==2.3.0+cu121 --index-url "
        "https://download.pytorch.org/whl/cu121", "password_reset_url: https://id.example.com/reset",
        "secret_name: training-db-credentials", "--password-file /run/secrets/db", "max_tokens=4096 pad_token=<pad>",
        "Using bos_token, but it is not set yet.", "auth: enabled", "PWD=/workspace/run",
        f"api_version=2024-02-01 model=gpt-4o deployment=eval-{h(6)}", f"checkpoint-{h(8)}.pt",
        f"SLURM_JOB_ID=1234567 SLURM_JOB_NAME=pretrain-{h(6, LOWER_DIGITS)}",
        f"ray: Started a local Ray instance. node_id={h(56)}", f"actor_id={h(32)} task_id={h(48)}",
    ]
