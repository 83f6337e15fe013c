"""The dev17 round of the secrets probe: credentials inside structured records and dumps that ML tooling prints.

Each case names the printer and a URL of its documentation or code. Values are drawn from a seeded random generator
in the published shape (most without a vendor prefix, so only the key or the place finds them), so none is a real
credential. The secret sits as a JSON field value at any depth under key names in every notation (camelCase,
snake_case, kebab, dotted, upper case, with prefixes and suffixes: ``hfToken``, ``WANDB_API_KEY``, ``x-api-key``,
``db.password``, ``clientSecret``, ``private_key_id``), in JSON text escaped inside a JSON string, in Python reprs
(dicts, argparse's Namespace, dataclasses such as TrainingArguments, OmegaConf's DictConfig, pydantic models with a
plain ``str`` beside a ``SecretStr``), in YAML, TOML and INI dumps, in environment dumps (``env``, ``export -p``,
``docker inspect``'s ``Config.Env``, a pod's ``env`` list of name/value pairs as ``kubectl get -o json|yaml`` prints
it), logfmt, URLs with credentials in the userinfo or the query string, HTTP debug dumps (http.client's
``send: b'...'``, curl -v, requests' headers dict, aiohttp's RequestInfo), and connection strings (libpq, JDBC,
SQLAlchemy, MongoDB SRV, Redis, AMQP, Kafka's SASL JAAS config). ``_look_alikes`` are values of the same records
that hold no secret (token counts, tokenizer paths, key names without a value, masks, hashes, commit SHAs, request
ids, a minimum password length) and must come out as written.

    python -m devtools.secret_probe generate dev17    # writes tests/fixtures/secret_probe/dev17.jsonl only
"""

from __future__ import annotations

import json
from pathlib import Path
from urllib.parse import quote

from devtools.secret_probe_draws import Case, Draws, LookAlike, case_rows, keep_rows, write_rows
from devtools.secret_probe_kinds import ALNUM, B64, HEX, URLSAFE

_draws = Draws(17017)
rand, uuid4 = _draws.rand, _draws.uuid4
_ISO = "2026-06-11T14:03:27.512Z"
_PWCHARS = ALNUM + "!#%^*-_."

# Printers and their public documentation or code.
PYJSON = "https://github.com/python/cpython/blob/main/Lib/json/encoder.py"
TRANSFORMERS_ARGS = "https://github.com/huggingface/transformers/blob/main/src/transformers/training_args.py"
NAMESPACE_REPR = "https://github.com/python/cpython/blob/3.12/Lib/argparse.py"
DATACLASS_REPR = "https://github.com/python/cpython/blob/main/Lib/dataclasses.py"
OMEGACONF = "https://omegaconf.readthedocs.io/en/2.3_branch/structured_config.html"
HYDRA = "https://hydra.cc/docs/tutorials/basic/your_first_app/simple_cli/"
PYDANTIC_SECRETSTR = "https://docs.pydantic.dev/latest/api/types/#pydantic.types.SecretStr"
PYDANTIC_REPR = "https://github.com/pydantic/pydantic/blob/main/pydantic/_internal/_repr.py"
PYYAML = "https://pyyaml.org/wiki/PyYAMLDocumentation"
TOML = "https://toml.io/en/v1.0.0#table"
TOMLKIT = "https://github.com/python-poetry/tomlkit/blob/master/docs/quickstart.rst"
CONFIGPARSER = "https://docs.python.org/3/library/configparser.html#supported-ini-file-structure"
AWS_CREDS_FILE = "https://docs.aws.amazon.com/cli/v1/userguide/cli-configure-files.html"
COREUTILS_ENV = "https://www.gnu.org/software/coreutils/manual/html_node/env-invocation.html"
BASH_EXPORT = "https://www.gnu.org/software/bash/manual/html_node/Bourne-Shell-Builtins.html#index-export"
DOCKER_INSPECT = "https://docs.docker.com/engine/api/v1.46/#tag/Container/operation/ContainerInspect"
K8S_ENVVAR = "https://kubernetes.io/docs/reference/kubernetes-api/workload-resources/pod-v1/#environment-variables"
KUBECTL_GET = "https://kubernetes.io/docs/reference/kubectl/generated/kubectl_get/"
GO_LOGFMT = "https://github.com/go-logfmt/logfmt/blob/main/encode.go"
RFC3986 = "https://datatracker.ietf.org/doc/html/rfc3986#section-3.2.1"
RFC6750 = "https://datatracker.ietf.org/doc/html/rfc6750#section-2.3"
HTTP_CLIENT = "https://github.com/python/cpython/blob/main/Lib/http/client.py#L1050"
CURL_VERBOSE = "https://everything.curl.dev/usingcurl/verbose/index.html"
REQUESTS_PREP = "https://requests.readthedocs.io/en/latest/api/#requests.PreparedRequest"
AIOHTTP_REQINFO = "https://docs.aiohttp.org/en/stable/client_reference.html#aiohttp.RequestInfo"
HTTPX_HEADERS = "https://github.com/encode/httpx/blob/master/httpx/_models.py"
LIBPQ = "https://www.postgresql.org/docs/16/libpq-connect.html"
SQLALCHEMY_URL = "https://docs.sqlalchemy.org/en/20/core/engines.html#sqlalchemy.engine.URL"
PGJDBC = "https://jdbc.postgresql.org/documentation/use/#connection-parameters"
MYSQL_JDBC = "https://dev.mysql.com/doc/connector-j/en/connector-j-reference-jdbc-url-format.html"
MSSQL_JDBC = "https://learn.microsoft.com/en-us/sql/connect/jdbc/building-the-connection-url"
MONGO_SRV = "https://www.mongodb.com/docs/manual/reference/connection-string-formats/#srv-connection-format"
REDIS_URL = "https://www.iana.org/assignments/uri-schemes/prov/redis"
AMQP_URI = "https://www.rabbitmq.com/docs/uri-query-parameters"
KAFKA_JAAS = "https://kafka.apache.org/documentation/#security_sasl_plain_clientconfig"
KAFKA_SCRAM = "https://kafka.apache.org/documentation/#security_sasl_scram_clientconfig"
LIBRDKAFKA = "https://github.com/confluentinc/librdkafka/blob/master/CONFIGURATION.md"
CELERY = "https://docs.celeryq.dev/en/stable/getting-started/backends-and-brokers/redis.html"
GCP_SA_KEY = "https://cloud.google.com/iam/docs/service-account-creds#key-types"


def j(obj: object) -> str:
    return json.dumps(obj, separators=(",", ":"))


def pw(n: int = 16) -> str:
    """A password as people choose them for services: letters, digits and a few symbols."""
    return rand(n, _PWCHARS)


def pwu(n: int = 16) -> str:
    """A password that a URL's userinfo or query holds unescaped (RFC 3986's unreserved characters and two of its
    sub-delims)."""
    return rand(n, ALNUM + "-_.~!*")


# Labelled a secret when the round was written, found no secret after: a service-account key's private_key_id is the
# key's id, which every JWT the key signs carries in its header (``kid``) and ``gcloud iam service-accounts keys list``
# prints (https://google.aip.dev/auth/4112); it is a look-alike below.
_NOT_SECRET_KEYS = frozenset({"private_key_id"})


def _json_keys() -> list[Case]:
    """A secret as a JSON field's value, under key names in every notation, flat, deep and escaped in a string."""
    keys: list[tuple[str, str, str]] = [
        # (key, value, where the key comes from)
        ("hfToken", rand(34, ALNUM), "huggingface.js' hub options (https://huggingface.co/docs/huggingface.js/hub/README)"),
        ("WANDB_API_KEY", rand(40, HEX), "wandb's environment variables (https://github.com/wandb/wandb/blob/main/wandb/sdk/wandb_settings.py)"),
        ("x-api-key", rand(40, ALNUM), "an API gateway's key header (https://docs.aws.amazon.com/apigateway/latest/developerguide/api-gateway-api-key-source.html)"),
        ("db.password", pw(18), "Spring-style dotted properties flattened into JSON (https://docs.spring.io/spring-boot/appendix/application-properties/index.html)"),
        ("clientSecret", rand(40, URLSAFE), "MSAL's confidential client options (https://learn.microsoft.com/en-us/entra/identity-platform/msal-client-application-configuration)"),
        ("aws_secret_access_key", rand(40, B64), "boto3's credential names (" + AWS_CREDS_FILE + ")"),
        ("private_key_id", rand(40, HEX), "a service-account key file (" + GCP_SA_KEY + ")"),
        ("hub_token", rand(37, ALNUM), "transformers' TrainingArguments.hub_token (" + TRANSFORMERS_ARGS + ")"),
        ("openaiApiKey", rand(48, ALNUM), "LangChain.js' ChatOpenAI fields (https://js.langchain.com/docs/integrations/chat/openai/)"),
        ("api-key", rand(32, HEX), "Azure OpenAI's api-key header (https://learn.microsoft.com/en-us/azure/ai-services/openai/reference#authentication)"),
        ("accessToken", rand(40, URLSAFE), "an OAuth client's camelCase token response"),
        ("refresh_token", rand(64, URLSAFE), "RFC 6749's token response (https://datatracker.ietf.org/doc/html/rfc6749#section-4.1.4)"),
        ("AWS_SESSION_TOKEN", rand(120, B64), "the AWS CLI's environment variables (https://docs.aws.amazon.com/cli/latest/userguide/cli-configure-envvars.html)"),
        ("secretKey", rand(40, B64), "MinIO's client config (https://min.io/docs/minio/linux/reference/minio-mc/mc-alias-set.html)"),
        ("SECRET_KEY", rand(50, ALNUM + "!@#%^&*(-_=+)"), "Django's SECRET_KEY (https://docs.djangoproject.com/en/5.0/ref/settings/#secret-key)"),
        ("webhook_secret", rand(32, ALNUM), "a webhook signer's secret"),
        ("mlflow_tracking_password", pw(14), "MLflow's basic-auth variables (https://mlflow.org/docs/latest/auth/index.html)"),
        ("CLEARML_API_SECRET_KEY", rand(50, ALNUM), "ClearML's credentials (https://clear.ml/docs/latest/docs/configs/env_vars/)"),
        ("cometApiKey", rand(25, ALNUM), "Comet's config keys (https://www.comet.com/docs/v2/guides/experiment-management/configure-sdk/)"),
        ("storage.accountKey", rand(86, B64) + "==", "an Azure storage client's dotted config"),
        ("gcs.hmac.secret", rand(40, B64), "a GCS HMAC key's secret as a dotted field (https://cloud.google.com/storage/docs/authentication/hmackeys)"),
        ("Password", pw(15), "a .NET options object serialised with PascalCase keys"),
        ("DB_PASS", pw(16), "a twelve-factor app's DB_PASS"),
        ("pinecone_api_key", uuid4(), "Pinecone's client (https://docs.pinecone.io/reference/api/authentication)"),
        ("signingKey", rand(44, B64), "a JWT signer's HMAC key"),
        ("encryption_key", rand(44, B64), "a Fernet key in a config (https://cryptography.io/en/latest/fernet/)"),
        ("authToken", rand(32, HEX), "Twilio's Node client options (https://www.twilio.com/docs/usage/secure-credentials)"),
        ("redis.password", pw(20), "a dotted Redis config"),
        ("ssl.keystore.password", pw(14), "Kafka's keystore password (https://kafka.apache.org/documentation/#brokerconfigs_ssl.keystore.password)"),
        ("apiSecret", rand(64, HEX), "an exchange client's apiSecret"),
        ("X-Auth-Token", rand(32, HEX), "OpenStack's token header (https://docs.openstack.org/api-guide/quick-start/api-quick-start.html)"),
        ("githubToken", "ghp_" + rand(36, ALNUM), "a CI action's input (https://docs.github.com/en/actions/security-for-github-actions/security-guides/automatic-token-authentication)"),
        ("neptune_api_token", rand(120, B64), "Neptune's api token variable (https://docs.neptune.ai/setup/setting_api_token/)"),
        ("client-secret", rand(34, URLSAFE), "an OIDC client's kebab option"),
        ("masterKey", rand(44, B64), "Meilisearch's master key (https://www.meilisearch.com/docs/learn/security/basic_security)"),
        ("s3SecretAccessKey", rand(40, B64), "a camelCase S3 client config"),
        ("OPENAI_API_KEY", rand(48, ALNUM), "OpenAI's variable, here without its sk- prefix (a proxy's key)"),
        ("passwd", pw(12), "a legacy config's passwd"),
        ("bearerToken", rand(40, URLSAFE), "a camelCase client option"),
    ]
    f: list[Case] = []
    for n, (key, value, source) in enumerate(keys):
        if key in _NOT_SECRET_KEYS:  # drawn all the same, so that the values after it stay as they were
            continue
        flat = {"ts": _ISO, "level": "debug", "msg": "client config", key: value, "timeout": 30}
        deep = {"level": "info", "event": "resolved config",
                "config": {"services": [{"name": "primary", "auth": {key: value, "region": "eu-west-1"}}]}}
        inner = j({"kind": "settings", "data": {key: value}})
        escaped = {"log": inner + "\n", "stream": "stdout", "time": _ISO}
        ctxs = [(f"json_flat_{n}", j(flat)), (f"json_deep_{n}", j(deep))]
        if n % 2 == 0:
            ctxs.append((f"json_in_json_{n}", j(escaped)))
        elif n % 4 == 1:
            ctxs.append((f"json_pretty_{n}", json.dumps(deep, indent=2)))
        f.append((f"json_key_{key}", source + "; " + PYJSON, value, ctxs))
    return f


def _reprs() -> list[Case]:
    f: list[Case] = []
    add = f.append
    tok = "hf_" + rand(34, ALNUM)
    add(("training_args_hub_token", "transformers' TrainingArguments dataclass repr of older releases (no masking) ("
         + TRANSFORMERS_ARGS + ")", tok, [
            ("training_args_repr", "TrainingArguments(output_dir='out', overwrite_output_dir=False, do_train=True, "
                                   "per_device_train_batch_size=8, learning_rate=5e-05, push_to_hub=True, "
                                   f"hub_model_id='acme/llama-ft', hub_strategy='every_save', hub_token='{tok}', "
                                   "hub_private_repo=True, gradient_checkpointing=False)"),
        ]))
    key = rand(40, HEX)
    add(("namespace_wandb_key", "argparse's Namespace repr of a training script's arguments (" + NAMESPACE_REPR + ")",
         key, [
            ("namespace_repr", f"Namespace(batch_size=32, epochs=10, lr=0.0003, model='resnet50', wandb_key='{key}', "
                               "wandb_project='cls', seed=42)"),
            ("namespace_logged", f"2026-06-11 14:03:27,512 - INFO - args: Namespace(api_key='{key}', "
                                 "data_dir='/data', num_workers=8)"),
        ]))
    tok = rand(40, URLSAFE)
    add(("namespace_hf_token_dashed_dest", "argparse's Namespace: --hf-token becomes hf_token (" + NAMESPACE_REPR + ")",
         tok, [("namespace_hf_token", f"Namespace(model_name_or_path='meta-llama/Llama-3-8B', hf_token='{tok}', "
                                      "max_seq_len=4096)")]))
    p = pw(16)
    add(("dataclass_db_password", "a dataclass repr of a data-loading config (" + DATACLASS_REPR + ")", p, [
        ("dataclass_repr", f"DataConfig(host='pg.internal', port=5432, user='etl', password='{p}', "
                           "database='features', sslmode='require')"),
        ("dataclass_in_log", f"[rank0]: loaded DataConfig(host='pg.internal', user='etl', password='{p}')"),
    ]))
    key = rand(40, B64)
    add(("dataclass_nested_s3", "a nested dataclass repr (" + DATACLASS_REPR + ")", key, [
        ("dataclass_nested", "TrainConfig(model=ModelConfig(name='vit-b16', dtype='bf16'), storage=S3Config("
                             f"bucket='ckpts', access_key_id='AKIA{rand(16, 'ABCDEFGHIJKLMNOPQRSTUVWXYZ234567')}', "
                             f"secret_access_key='{key}'), seed=0)"),
    ]))
    key = rand(40, HEX)
    add(("omegaconf_dictconfig_print", "print(cfg) of an OmegaConf DictConfig (a dict repr) (" + OMEGACONF + ")", key, [
        ("omegaconf_print", "{'model': {'name': 'gpt2', 'n_layer': 12}, 'logger': {'wandb': {'project': 'lm', "
                            f"'entity': 'acme', 'api_key': '{key}'}}}}, 'trainer': {{'max_steps': 10000}}}}"),
    ]))
    p = pw(18)
    add(("hydra_to_yaml_nested", "Hydra's config printed with OmegaConf.to_yaml (" + HYDRA + ")", p, [
        ("hydra_yaml", "[2026-06-11 14:03:27,512][__main__][INFO] - \ndb:\n  driver: postgresql\n  user: trainer\n"
                       f"  pass: {p}\n  host: pg.internal\ntrainer:\n  max_epochs: 5\n"),
    ]))
    tok = rand(48, ALNUM)
    add(("pydantic_plain_str_beside_secretstr", "a pydantic-settings model repr: a SecretStr is masked, a plain str "
         "field is not (" + PYDANTIC_SECRETSTR + "; " + PYDANTIC_REPR + ")", tok, [
            ("pydantic_v2_repr", "Settings(app_name='inference', db_password=SecretStr('**********'), "
                                 f"openai_key='{tok}', debug=False)"),
            ("pydantic_v1_str", f"app_name='inference' db_password=SecretStr('**********') openai_key='{tok}' "
                                "debug=False"),
        ]))
    tok = rand(32, ALNUM)
    add(("pydantic_model_dump", "model_dump() of a pydantic model printed as a dict (" + PYDANTIC_REPR + ")", tok, [
        ("pydantic_dump", f"settings: {{'service_url': 'https://api.internal', 'service_token': '{tok}', "
                          "'retries': 3}"),
    ]))
    p = pw(16)
    add(("environ_repr", "os.environ's repr (environ({...})) (https://docs.python.org/3/library/os.html#os.environ)",
         p, [("environ_print", "environ({'PATH': '/usr/local/bin:/usr/bin', 'HOSTNAME': 'train-0', "
                               f"'MINIO_ROOT_PASSWORD': '{p}', 'HOME': '/root'}})")]))
    key = rand(64, HEX)
    add(("attrs_repr_signing", "an attrs class repr (https://www.attrs.org/en/stable/overview.html)", key, [
        ("attrs_repr", f"WebhookConfig(url='https://hooks.internal/ci', signing_secret='{key}', retries=5)"),
    ]))
    p = pw(14)
    add(("namedtuple_auth", "a namedtuple repr with a password field "
         "(https://github.com/python/cpython/blob/main/Lib/collections/__init__.py)", p, [
            ("namedtuple_repr", f"Credentials(username='svc-train', password='{p}')"),
        ]))
    tok = rand(36, ALNUM)
    add(("dict_repr_upper_keys", "a dict repr of settings with upper-case keys (Flask's app.config) "
         "(https://flask.palletsprojects.com/en/3.0.x/config/)", tok, [
            ("flask_config_repr", f"<Config {{'DEBUG': False, 'SECRET_KEY': '{tok}', 'SESSION_COOKIE_NAME': 'session',"
                                  " 'JSON_SORT_KEYS': False}}>"),
        ]))
    return f


def _yaml_toml_ini() -> list[Case]:
    f: list[Case] = []
    add = f.append
    key = rand(40, HEX)
    add(("yaml_dump_nested_api_key", "yaml.dump of a nested config (" + PYYAML + ")", key, [
        ("yaml_nested", f"logging:\n  backend: wandb\n  wandb:\n    api_key: {key}\n    project: lm-pretrain\n"),
        ("yaml_flow", f"logging: {{backend: wandb, wandb: {{api_key: {key}, project: lm-pretrain}}}}"),
    ]))
    p = pw(16)
    add(("yaml_list_of_credentials", "yaml.dump of a list of database entries (" + PYYAML + ")", p, [
        ("yaml_list", f"databases:\n- name: features\n  user: etl\n  password: '{p}'\n- name: runs\n  user: ro\n"),
    ]))
    tok = rand(40, URLSAFE)
    add(("yaml_camel_token", "a Helm values dump with a camelCase token key "
         "(https://helm.sh/docs/chart_template_guide/values_files/)", tok, [
            ("helm_values", f"global:\n  registry:\n    authToken: {tok}\n    server: registry.internal\n"),
        ]))
    p = pw(18)
    add(("toml_inline_table", "a TOML inline table with a password (" + TOML + ")", p, [
        ("toml_inline", f'db = {{ host = "pg.internal", user = "app", password = "{p}" }}'),
    ]))
    tok = rand(40, URLSAFE)
    add(("toml_table_token", "tomlkit's dump of a table with a token (" + TOMLKIT + ")", tok, [
        ("toml_table", f'[tool.tracker]\nurl = "https://track.internal"\napi_token = "{tok}"\nproject = "lm"\n'),
    ]))
    key = rand(40, B64)
    add(("ini_aws_credentials", "the AWS shared credentials file printed (" + AWS_CREDS_FILE + "; "
         + CONFIGPARSER + ")", key, [
            ("aws_credentials_file", "[default]\naws_access_key_id = AKIA"
                                     f"{rand(16, 'ABCDEFGHIJKLMNOPQRSTUVWXYZ234567')}\naws_secret_access_key = {key}"
                                     "\nregion = us-east-1\n"),
        ]))
    p = pw(14)
    add(("ini_colon_password", "configparser's colon delimiter (" + CONFIGPARSER + ")", p, [
        ("ini_colon", f"[server]\nhost: ftp.internal\nuser: upload\npassword: {p}\n"),
    ]))
    tok = rand(32, ALNUM)
    add(("streamlit_secrets_toml", "Streamlit's secrets.toml printed "
         "(https://docs.streamlit.io/develop/concepts/connections/secrets-management)", tok, [
            ("streamlit_secrets", f'[connections.snowflake]\naccount = "xy12345"\nuser = "app"\n'
                                  f'token = "{tok}"\n'),
        ]))
    return f


def _env_dumps() -> list[Case]:
    f: list[Case] = []
    add = f.append
    envs: list[tuple[str, str]] = [
        ("HUGGING_FACE_HUB_TOKEN", rand(37, ALNUM)),
        ("WANDB_API_KEY", rand(40, HEX)),
        ("MLFLOW_TRACKING_PASSWORD", pw(16)),
        ("POSTGRES_PASSWORD", pw(18)),
        ("RABBITMQ_DEFAULT_PASS", pw(16)),
        ("AZURE_OPENAI_API_KEY", rand(32, HEX)),
        ("COHERE_API_KEY", rand(40, ALNUM)),
        ("R2_SECRET_ACCESS_KEY", rand(64, HEX)),
        ("KAFKA_SASL_PASSWORD", pw(20)),
        ("AWS_SECRET_ACCESS_KEY", rand(40, B64)),
    ]
    for name, value in envs:
        add((f"env_{name.lower()}", "env / printenv (" + COREUTILS_ENV + "), export -p (" + BASH_EXPORT
             + "), docker inspect's Config.Env (" + DOCKER_INSPECT + ")", value, [
                (f"printenv_{name}", f"PATH=/usr/local/bin:/usr/bin\nHOSTNAME=train-7f9c\n{name}={value}\n"
                                     "NCCL_DEBUG=INFO\n"),
                (f"export_p_{name}", f'declare -x HOSTNAME="train-7f9c"\ndeclare -x {name}="{value}"\n'),
                (f"docker_env_{name}", json.dumps({"Config": {"Hostname": "7f9c", "Env": [
                    "PATH=/usr/local/sbin:/usr/local/bin", f"{name}={value}", "PYTHONUNBUFFERED=1"],
                    "Image": "acme/train:2.3"}}, indent=4)),
            ]))
    k8s: list[tuple[str, str]] = [
        ("HF_TOKEN", rand(37, ALNUM)),
        ("DATABASE_PASSWORD", pw(18)),
        ("S3_SECRET_KEY", rand(40, B64)),
        ("OPENAI_API_KEY", rand(48, ALNUM)),
        ("GRAFANA_ADMIN_PASSWORD", pw(14)),
        ("APP_CLIENT_SECRET", rand(40, URLSAFE)),
    ]
    for name, value in k8s:
        env = [{"name": "NCCL_DEBUG", "value": "INFO"}, {"name": name, "value": value},
               {"name": "WORLD_SIZE", "value": "8"}]
        pod = {"apiVersion": "v1", "kind": "Pod", "metadata": {"name": "train-0", "namespace": "ml"},
               "spec": {"containers": [{"name": "trainer", "image": "acme/train:2.3", "env": env}]}}
        add((f"k8s_env_{name.lower()}", "kubectl get pod -o json|yaml: the container's env list of name/value "
             "pairs (" + K8S_ENVVAR + "; " + KUBECTL_GET + ")", value, [
                (f"kubectl_json_{name}", json.dumps(pod, indent=4)),
                (f"kubectl_yaml_{name}", "spec:\n  containers:\n  - env:\n    - name: NCCL_DEBUG\n      value: INFO\n"
                                         f"    - name: {name}\n      value: {value}\n    image: acme/train:2.3\n"),
                (f"kubectl_json_compact_{name}", j(pod)),
            ]))
    p = pw(16)
    add(("systemctl_environment", "systemctl show -p Environment (a unit's Environment= on one line) "
         "(https://www.freedesktop.org/software/systemd/man/latest/systemctl.html)", p, [
            ("systemctl_show", f"Environment=PYTHONUNBUFFERED=1 DB_USER=etl DB_PASSWORD={p} LANG=C.UTF-8"),
        ]))
    tok = rand(40, ALNUM)
    add(("powershell_env_table", "PowerShell's Get-ChildItem Env: table "
         "(https://learn.microsoft.com/en-us/powershell/module/microsoft.powershell.core/about/about_environment_provider)",
         tok, [("pwsh_env", "Name                           Value\n----                           -----\n"
                            "COMPUTERNAME                   TRAIN-01\n"
                            f"HF_API_TOKEN                   {tok}\nNUMBER_OF_PROCESSORS           32\n")]))
    return f


def _logfmt() -> list[Case]:
    f: list[Case] = []
    add = f.append
    for key, value in (("db_password", pw(16)), ("api_key", rand(32, ALNUM)), ("auth.token", rand(40, URLSAFE)),
                       ("clientSecret", rand(40, URLSAFE)), ("X-Api-Key", rand(32, HEX))):
        add((f"logfmt_{key}", "logfmt lines as go-logfmt writes them (" + GO_LOGFMT + ")", value, [
            (f"logfmt_bare_{key}", f'time={_ISO} level=debug msg="dial upstream" {key}={value} retries=3'),
            (f"logfmt_quoted_{key}", f'time={_ISO} level=debug msg="dial upstream" {key}="{value}" retries=3'),
        ]))
    return f


def _urls() -> list[Case]:
    f: list[Case] = []
    add = f.append
    params = (("api_key", rand(32, ALNUM)), ("access_token", rand(40, URLSAFE)), ("token", rand(40, ALNUM)),
              ("apikey", rand(32, HEX)), ("private_token", rand(20, URLSAFE)), ("client_secret", rand(40, URLSAFE)),
              ("password", pwu(14)), ("auth", rand(40, ALNUM)), ("X-Amz-Signature", rand(64, HEX)),
              ("code", rand(40, URLSAFE)))
    for name, value in params:
        url = f"https://api.internal.example/v2/export?format=parquet&{name}={quote(value, safe='~!*')}&page=2"
        add((f"url_query_{name}", "a URL with a credential in its query string (" + RFC6750 + ")", value, [
            (f"url_in_log_{name}", f"2026-06-11 14:03:27,512 urllib3.connectionpool DEBUG https://api.internal.example"
                                   f":443 \"GET /v2/export?format=parquet&{name}={quote(value, safe='~!*')}&page=2 "
                                   "HTTP/1.1\" 200 5123"),
            (f"url_in_json_{name}", j({"level": "info", "msg": "fetching", "url": url})),
        ]))
    users = (("https", "svc-train", pwu(16), "artifacts.internal.example/repo/simple/"),
             ("git+https", "oauth2", rand(40, URLSAFE), "git.internal.example/ml/data.git"),
             ("ftp", "upload", pwu(12), "ftp.internal.example/in/"),
             ("wss", "bot", rand(32, ALNUM), "stream.internal.example/v1/events"),
             ("s3", "minio", rand(40, B64).replace("/", "x").replace("+", "y"), "minio.internal:9000/ckpts"))
    for scheme, user, secret, rest in users:
        add((f"url_userinfo_{scheme}", "a URL with user and password in its userinfo (" + RFC3986 + ")", secret, [
            (f"userinfo_plain_{scheme}", f"Looking in indexes: {scheme}://{user}:{secret}@{rest}"),
            (f"userinfo_json_{scheme}", j({"event": "remote", "remote": f"{scheme}://{user}:{secret}@{rest}"})),
        ]))
    return f


def _http_dumps() -> list[Case]:
    f: list[Case] = []
    add = f.append
    tok = rand(40, URLSAFE)
    add(("http_client_send_bytes", "http.client's debuglevel=1 send: line (bytes repr with \\r\\n) ("
         + HTTP_CLIENT + ")", tok, [
            ("http_client_send", "send: b'GET /api/v1/runs HTTP/1.1\\r\\nHost: tracker.internal\\r\\nUser-Agent: "
                                 "python-requests/2.32.3\\r\\nAccept-Encoding: gzip, deflate\\r\\nAccept: */*\\r\\n"
                                 f"Connection: keep-alive\\r\\nAuthorization: Bearer {tok}\\r\\n\\r\\n'"),
        ]))
    key = rand(40, ALNUM)
    add(("http_client_send_api_key", "http.client's send: line with an x-api-key header (" + HTTP_CLIENT + ")", key, [
        ("http_client_send_xkey", "send: b'POST /v1/embed HTTP/1.1\\r\\nHost: embed.internal\\r\\nContent-Length: 31"
                                  f"\\r\\nx-api-key: {key}\\r\\nContent-Type: application/json\\r\\n\\r\\n'"),
    ]))
    tok = rand(40, ALNUM)
    add(("curl_verbose_headers", "curl -v's request headers (" + CURL_VERBOSE + ")", tok, [
        ("curl_v", "*   Trying 10.0.4.2:443...\n* Connected to api.internal (10.0.4.2) port 443\n> GET /v1/models "
                   f"HTTP/2\n> Host: api.internal\n> user-agent: curl/8.5.0\n> accept: */*\n> authorization: Token "
                   f"{tok}\n>\n< HTTP/2 200\n"),
        ("curl_v_private_token", f"> GET /api/v4/projects HTTP/1.1\n> Host: git.internal\n> PRIVATE-TOKEN: {tok}\n"),
    ]))
    tok = rand(40, URLSAFE)
    add(("requests_headers_dict", "requests' PreparedRequest.headers printed (a CaseInsensitiveDict repr) ("
         + REQUESTS_PREP + ")", tok, [
            ("requests_headers", "{'User-Agent': 'python-requests/2.32.3', 'Accept-Encoding': 'gzip, deflate', "
                                 f"'Accept': '*/*', 'Connection': 'keep-alive', 'X-Auth-Token': '{tok}'}}"),
        ]))
    tok = rand(48, ALNUM)
    add(("aiohttp_request_info", "aiohttp's ClientResponseError with its RequestInfo repr (" + AIOHTTP_REQINFO + ")",
         tok, [
            ("aiohttp_reqinfo", "aiohttp.client_exceptions.ClientResponseError: 401, message='Unauthorized', url="
                                "URL('https://api.internal/v1/chat') request_info=RequestInfo(url=URL('https://api."
                                "internal/v1/chat'), method='POST', headers=<CIMultiDictProxy('Host': 'api.internal', "
                                f"'Authorization': 'Bearer {tok}', 'Content-Type': 'application/json')>, "
                                "real_url=URL('https://api.internal/v1/chat'))"),
        ]))
    tok = rand(32, HEX)
    add(("httpx_headers_nonstandard", "httpx's Headers repr masks authorization but not other headers ("
         + HTTPX_HEADERS + ")", tok, [
            ("httpx_headers", f"Headers({{'host': 'api.internal', 'x-api-token': '{tok}', 'authorization': "
                              "'[secure]'})"),
        ]))
    cookie = rand(40, URLSAFE)
    add(("http_client_header_set_cookie", "http.client's debuglevel header: lines of a response ("
         + HTTP_CLIENT + ")", cookie, [
            ("http_client_header", f"reply: 'HTTP/1.1 200 OK\\r\\n'\nheader: Content-Type: text/html\nheader: "
                                   f"Set-Cookie: sessionid={cookie}; HttpOnly; Path=/\n"),
        ]))
    return f


def _connection_strings() -> list[Case]:
    f: list[Case] = []
    add = f.append
    p = pwu(16)
    add(("libpq_keyword_value", "libpq's keyword/value connection string (" + LIBPQ + ")", p, [
        ("libpq_kv", f"connecting: host=pg.internal port=5432 dbname=features user=etl password={p} sslmode=require"),
        ("libpq_kv_quoted", f"dsn=\"host=pg.internal user=etl password='{p}' dbname=features\""),
    ]))
    p = pwu(16)
    add(("sqlalchemy_url", "SQLAlchemy database URLs with a driver (" + SQLALCHEMY_URL + ")", p, [
        ("sqlalchemy_pg", f"create_engine('postgresql+psycopg2://etl:{p}@pg.internal:5432/features')"),
        ("sqlalchemy_mysql", f"{{'sqlalchemy.url': 'mysql+pymysql://app:{p}@mysql.internal/runs?charset=utf8mb4'}}"),
    ]))
    p = pwu(16)
    add(("jdbc_query_password", "JDBC URLs with user and password as parameters (" + PGJDBC + "; " + MYSQL_JDBC + ")",
         p, [
            ("jdbc_pg", f"spark.read.jdbc url=jdbc:postgresql://pg.internal:5432/features?user=etl&password={p}"
                        "&ssl=true"),
            ("jdbc_mysql", f"jdbc:mysql://mysql.internal:3306/runs?user=app&password={p}&useSSL=true"),
        ]))
    p = pwu(16)
    add(("jdbc_sqlserver_semicolon", "SQL Server's JDBC URL with ;password= (" + MSSQL_JDBC + ")", p, [
        ("jdbc_mssql", f"jdbc:sqlserver://sql.internal:1433;databaseName=feat;user=ml;password={p};encrypt=true;"),
    ]))
    p = pwu(18)
    add(("mongodb_srv", "a MongoDB SRV connection string (" + MONGO_SRV + ")", p, [
        ("mongo_srv", f"MongoClient('mongodb+srv://trainer:{p}@cluster0.ab1cd.mongodb.net/?retryWrites=true&w=majority')"),
        ("mongo_srv_json", j({"level": "info", "mongoUri": f"mongodb+srv://trainer:{p}@cluster0.ab1cd.mongodb.net/"})),
    ]))
    p = pwu(20)
    add(("redis_url_default_user", "a Redis URL with the default user (" + REDIS_URL + "; " + CELERY + ")", p, [
        ("redis_url", f"broker_url = 'redis://default:{p}@redis.internal:6379/0'"),
        ("rediss_url", f"[celery] Connected to rediss://:{p}@redis.internal:6380/1"),
    ]))
    p = pwu(16)
    add(("amqp_uri", "an AMQP URI (" + AMQP_URI + ")", p, [
        ("amqp", f"[INFO/MainProcess] Connected to amqp://worker:{p}@rabbit.internal:5672/ml"),
        ("amqps_json", j({"broker": f"amqps://worker:{p}@rabbit.internal:5671/ml"})),
    ]))
    p = pwu(20)
    add(("kafka_jaas_plain", "Kafka's SASL/PLAIN JAAS config (" + KAFKA_JAAS + ")", p, [
        ("jaas_props", "sasl.jaas.config=org.apache.kafka.common.security.plain.PlainLoginModule required "
                       f"username=\"alice\" password=\"{p}\";"),
        ("jaas_config_dump", "\tsasl.jaas.config = org.apache.kafka.common.security.plain.PlainLoginModule required "
                             f"username='alice' password='{p}';"),
        ("jaas_json", j({"kafka": {"sasl.jaas.config": "org.apache.kafka.common.security.scram.ScramLoginModule "
                                                       f"required username=\"alice\" password=\"{p}\";"}})),
    ]))
    p = rand(64, B64)
    add(("kafka_scram_confluent", "Confluent Cloud's API secret in a SCRAM/PLAIN JAAS line (" + KAFKA_SCRAM + ")", p, [
        ("jaas_confluent", "sasl.jaas.config=org.apache.kafka.common.security.plain.PlainLoginModule required "
                           f"username=\"{rand(16, 'ABCDEFGHIJKLMNOPQRSTUVWXYZ234567')}\" password=\"{p}\";"),
    ]))
    p = pwu(18)
    add(("librdkafka_sasl_password", "librdkafka's sasl.password in a config dict (" + LIBRDKAFKA + ")", p, [
        ("rdkafka_dict", "{'bootstrap.servers': 'kafka.internal:9093', 'security.protocol': 'SASL_SSL', "
                         f"'sasl.mechanisms': 'SCRAM-SHA-512', 'sasl.username': 'ml', 'sasl.password': '{p}'}}"),
        ("rdkafka_props", f"sasl.username=ml\nsasl.password={p}\n"),
    ]))
    p = pwu(16)
    add(("clickhouse_snowflake_urls", "ClickHouse and Snowflake SQLAlchemy URLs "
         "(https://github.com/snowflakedb/snowflake-sqlalchemy)", p, [
            ("snowflake_url", f"engine: snowflake://etl:{p}@xy12345.eu-west-1/features/public?warehouse=ml"),
            ("clickhouse_url", f"clickhouse+native://default:{p}@ch.internal:9000/default"),
        ]))
    return f


def _look_alikes() -> list[LookAlike]:
    sha = rand(40, HEX)
    rid = uuid4()
    return [
        ("max_tokens", "an LLM client's request", "4096", j({"model": "gpt-4o", "max_tokens": 4096,
                                                             "temperature": 0.2})),
        ("num_tokens_yaml", "a data-prep config", "num_tokens: 4096",
         "dataset:\n  num_tokens: 4096\n  seq_len: 2048\n"),
        ("max_new_tokens_repr", "GenerationConfig's repr", "max_new_tokens=512",
         "GenerationConfig(max_new_tokens=512, do_sample=True, pad_token_id=0, eos_token_id=2)"),
        ("tokenizer_path", "a training config", "meta-llama/Meta-Llama-3-8B",
         j({"tokenizer": "meta-llama/Meta-Llama-3-8B", "tokenizer_kwargs": {"use_fast": True}})),
        ("tokenizer_name_or_path", "Namespace of a script", "/models/tokenizers/sp-32k.model",
         "Namespace(tokenizer_name_or_path='/models/tokenizers/sp-32k.model', vocab_size=32000)"),
        ("hub_token_masked", "TrainingArguments' to_dict masks *_token fields (" + TRANSFORMERS_ARGS + ")",
         "hub_token=<HUB_TOKEN>",
         "TrainingArguments(\n_n_gpu=8,\nhub_model_id=acme/llama-ft,\nhub_private_repo=None,\nhub_strategy=every_save,"
         "\nhub_token=<HUB_TOKEN>,\nlearning_rate=2e-05,\n)"),
        ("secretstr_masked", "pydantic's SecretStr repr", "SecretStr('**********')",
         "Settings(db_password=SecretStr('**********'), debug=False)"),
        ("password_stars", "a config printer's mask", "'****'", "{'user': 'etl', 'password': '****', 'port': 5432}"),
        ("redacted_placeholder", "a logger's placeholder", "<redacted>",
         j({"msg": "config", "api_key": "<redacted>", "region": "eu-west-1"})),
        ("httpx_secure", "httpx's masked authorization (" + HTTPX_HEADERS + ")", "'[secure]'",
         "Headers({'host': 'api.internal', 'authorization': '[secure]'})"),
        ("sqlalchemy_masked_url", "SQLAlchemy's Engine repr hides the password",
         "Engine(postgresql+psycopg2://etl:***@pg.internal:5432/features)",
         "INFO sqlalchemy.engine: Engine(postgresql+psycopg2://etl:***@pg.internal:5432/features)"),
        ("password_min_length", "a policy config", "password_min_length: 8",
         "auth:\n  password_min_length: 8\n  password_require_digit: true\n"),
        ("commit_sha", "a run's git commit", sha, j({"run": "lm-7b", "git_commit": sha, "dirty": False})),
        ("request_id_uuid", "a request id", rid, j({"level": "info", "request_id": rid, "status": 200})),
        ("x_request_id_header", "a response header dump", "x-request-id: req_" + (r1 := rand(24, ALNUM)),
         "< HTTP/2 200\n< content-type: application/json\n< x-request-id: req_" + r1 + "\n"),
        ("key_names_only", "a list of the secret names a job expects", "['HF_TOKEN', 'WANDB_API_KEY']",
         "required secrets: ['HF_TOKEN', 'WANDB_API_KEY']"),
        ("env_empty_value", "an env dump with an empty value: the next variable is not its value",
         "WANDB_MODE=offline",
         "WANDB_API_KEY=\nWANDB_MODE=offline\n"),
        ("env_placeholder", "a compose file's variable", "${HF_TOKEN}", "environment:\n  HF_TOKEN: ${HF_TOKEN}\n"),
        ("k8s_secret_key_ref", "an env entry taken from a Secret (" + K8S_ENVVAR + ")", '"name":"hf-credentials"',
         j({"name": "HF_TOKEN", "valueFrom": {"secretKeyRef": {"name": "hf-credentials", "key": "token"}}})),
        ("k8s_env_plain", "a pod's env entry that is no secret", '"value":"mlx5_0,mlx5_1"',
         j({"env": [{"name": "NCCL_IB_HCA", "value": "mlx5_0,mlx5_1"}, {"name": "WORLD_SIZE", "value": "16"}]})),
        ("token_budget", "an agent config", "token_budget: 8192", "agent:\n  token_budget: 8192\n  max_turns: 20\n"),
        ("tokens_per_second", "a throughput line", "tokens_per_second=3021.4",
         "throughput tokens_per_second=3021.4 mfu=0.41"),
        ("pad_token", "a tokenizer's special tokens", "'pad_token': '<pad>'",
         "special tokens: {'pad_token': '<pad>', 'eos_token': '</s>'}"),
        ("use_auth_token_bool", "a from_pretrained call logged", "use_auth_token=True",
         "from_pretrained('acme/llama-ft', use_auth_token=True, revision='main')"),
        ("password_file_path", "a config naming a password file", "/run/secrets/db_password",
         "db:\n  password_file: /run/secrets/db_password\n"),
        ("api_key_env_name", "a config naming the variable that holds the key", "api_key_env: OPENAI_API_KEY",
         "llm:\n  api_key_env: OPENAI_API_KEY\n  model: gpt-4o\n"),
        ("sa_token_uri", "a service-account file's public fields (" + GCP_SA_KEY + ")",
         '"token_uri": "https://oauth2.googleapis.com/token"',
         '{"type": "service_account", "project_id": "acme-ml", '
         '"client_email": "trainer@acme-ml.iam.gserviceaccount.com",'
         ' "token_uri": "https://oauth2.googleapis.com/token"}'),
        ("revision_sha", "a model revision", (rev := rand(40, HEX)), j({"model": "acme/llama-ft", "revision": rev})),
        ("checksum", "a shard's checksum", (ck := rand(64, HEX)),
         j({"file": "model-00001-of-00004.safetensors", "sha256": ck})),
        ("cache_key", "a build cache key", (cache := rand(64, HEX)), j({"cache_key": cache, "hit": True})),
        ("idempotency_key", "a request's idempotency key", (ik := uuid4()), j({"idempotency_key": ik, "ok": True})),
        ("redis_no_password", "a Redis URL without credentials", "redis://redis.internal:6379/0",
         "broker_url = 'redis://redis.internal:6379/0'"),
        ("jaas_mechanism", "a Kafka client's non-secret SASL settings", "sasl.mechanism=SCRAM-SHA-512",
         "security.protocol=SASL_SSL\nsasl.mechanism=SCRAM-SHA-512\n"),
        ("jaas_username", "the user of a JAAS line stays", 'username="alice"',
         'sasl.jaas.config=org.apache.kafka.common.security.plain.PlainLoginModule required username="alice" '
         'password="' + pw(20) + '";'),
        ("auth_type", "an auth scheme name", "AUTH_TYPE=oauth2", "AUTH_TYPE=oauth2\nAUTH_PROVIDER=keycloak\n"),
        ("password_null", "a config with no password", "password: null", "db:\n  user: etl\n  password: null\n"),
        ("hash_algorithm", "a password hashing config", "argon2id",
         j({"password_hash_algorithm": "argon2id", "password_hash_iterations": 3})),
        ("hf_home_path", "an env dump's cache paths", "HF_HOME=/root/.cache/huggingface",
         "HF_HOME=/root/.cache/huggingface\nHF_HUB_ENABLE_HF_TRANSFER=1\n"),
        ("trace_id", "an OpenTelemetry trace id", (tid := rand(32, HEX)),
         j({"trace_id": tid, "span_id": rand(16, HEX)})),
        ("url_query_no_secret", "a URL with plain query parameters", "?format=parquet&page=2&limit=100",
         "GET https://api.internal/v2/export?format=parquet&page=2&limit=100"),
        ("run_id_hex", "an MLflow run id", (mr := rand(32, HEX)), j({"run_id": mr, "experiment_id": "7"})),
        ("secret_name", "a Secret's name", "secret_name: hf-token-v2", "mount:\n  secret_name: hf-token-v2\n"),
        ("keystore_type", "a Kafka keystore's type", "ssl.keystore.type = PKCS12",
         "\tssl.keystore.location = /etc/kafka/ks.p12\n\tssl.keystore.password = [hidden]\n"
         "\tssl.keystore.type = PKCS12\n"),
        ("kafka_hidden", "Kafka's ConsumerConfig hides passwords as [hidden]", "ssl.truststore.password = [hidden]",
         "\tssl.truststore.location = /etc/kafka/ts.jks\n\tssl.truststore.password = [hidden]\n"),
        ("docker_image_digest", "docker inspect's image digest", "sha256:" + (dg := rand(64, HEX)),
         json.dumps({"Id": "sha256:" + dg, "Config": {"Env": ["PATH=/usr/bin", "LANG=C.UTF-8"]}}, indent=4)),
        ("private_key_id", "a service-account key's id, the kid of the JWTs it signs (https://google.aip.dev/auth/4112)",
         (kid := rand(40, HEX)), j({"type": "service_account", "project_id": "acme-ml", "private_key_id": kid})),
        ("total_tokens_usage", "an LLM usage block", '"total_tokens": 1523',
         '{"usage": {"prompt_tokens": 1201, "completion_tokens": 322, "total_tokens": 1523}}'),
    ]


def rows() -> list[dict[str, str]]:
    _draws.reset()
    groups = (_json_keys, _reprs, _yaml_toml_ini, _env_dumps, _logfmt, _urls, _http_dumps, _connection_strings)
    return case_rows(case for group in groups for case in group()) + keep_rows(_look_alikes())


def write(path: Path) -> int:
    return write_rows(path, rows())
