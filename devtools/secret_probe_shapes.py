"""The third probe round: secrets in the shapes the programs of a GPU cluster print them, one case per shape.

Where :mod:`devtools.secret_probe_kinds` puts each vendor's token into a fixed set of notations, this round
starts from the printers: what a CLI, a library's debug log, a config dump or a traceback formatter writes
when a credential passes through it (colour codes, tables, name/value records, positional arguments, percent
escapes, split records). Each case names in ``source`` the program and the document or code its shape follows.
Values come from a seeded generator (none is a real credential).

``rows()`` gives every case; :func:`split` keeps a random third aside (``holdout6.jsonl``), to be scored once,
after the rules are done.
"""

from __future__ import annotations

import base64
import random
import string

ALNUM = string.ascii_letters + string.digits
HEX = "0123456789abcdef"
URLSAFE = ALNUM + "_-"
B64 = ALNUM + "+/"
SEED = 20260611

_rng = random.Random(SEED)


def rand(n: int, alphabet: str = ALNUM) -> str:
    while True:
        s = "".join(_rng.choice(alphabet) for _ in range(n))
        if any(c.isdigit() for c in s) and any(c.isalpha() for c in s):
            return s


def _cases() -> list[tuple[str, str, str, str, str]]:  # noqa: PLR0915 - one statement per case: a table
    """(kind, context, source, secret, text) with ``{s}`` standing for the secret in the text."""
    c: list[tuple[str, str, str, str, str]] = []

    def add(kind: str, context: str, source: str, secret: str, text: str) -> None:
        c.append((kind, context, source, secret, text))

    _rng.seed(SEED)
    # -- colour codes around keys and values -----------------------------------------------------------------
    add("ansi_colored", "structlog_console", "structlog dev.ConsoleRenderer: key in kv_key (cyan), '=', value in "
        "kv_value (magenta), each followed by the reset code", "St" + rand(22),
        "2024-05-01 12:00:00 [info     ] \x1b[1mclient ready                  \x1b[0m \x1b[36mapi_key\x1b[0m="
        "\x1b[35m{s}\x1b[0m \x1b[36mretries\x1b[0m=\x1b[35m3\x1b[0m")
    add("ansi_colored", "structlog_shaped", "structlog dev.ConsoleRenderer colouring a value that has a vendor prefix",
        "hf_" + rand(34), "2024-05-01 12:00:00 [info     ] \x1b[1mhub login                     \x1b[0m "
        "\x1b[36mrepo\x1b[0m=\x1b[35morg/llm-7b\x1b[0m \x1b[36mcred\x1b[0m=\x1b[35m{s}\x1b[0m")
    add("ansi_colored", "rich_repr", "rich ReprHighlighter styles: repr.attrib_name yellow, repr.attrib_equal bold, "
        "repr.str green (a RichHandler writing to a forced terminal)", "Rr" + rand(20),
        "[05/01/24 12:00:00] INFO     Settings(\x1b[33mdb_host\x1b[0m\x1b[1m=\x1b[0m\x1b[32m'pg.internal'\x1b[0m, "
        "\x1b[33mdb_password\x1b[0m\x1b[1m=\x1b[0m\x1b[32m'{s}'\x1b[0m, \x1b[33mport\x1b[0m\x1b[1m=\x1b[0m"
        "\x1b[1;36m5432\x1b[0m)")
    add("ansi_colored", "colorlog_line", "colorlog ColoredFormatter: the whole record in the level's colour",
        "gho_" + rand(36), "\x1b[33m2024-05-01 12:00:00 WARNING  git: retrying with token \x1b[1m{s}\x1b[0m\x1b[0m")
    # -- traceback printers that show values ---------------------------------------------------------------
    add("traceback_values", "rich_show_locals", "rich.traceback show_locals=True: a 'locals' panel, names right-"
        "aligned, values as reprs", "Rl" + rand(24),
        "╭───────────────────── Traceback (most recent call last) ─────────────────────╮\n"
        "│ /app/train.py:12 in connect                                                 │\n"
        "│                                                                             │\n"
        "│    9 def connect(host, db_password):                                        │\n"
        "│ ❱ 12 │   raise ConnectionError(host)                                        │\n"
        "│                                                                             │\n"
        "│ ╭──────────────── locals ─────────────────╮                                 │\n"
        "│ │ db_password = '{s}' │                                 │\n"
        "│ │        host = 'pg.internal'             │                                 │\n"
        "│ ╰─────────────────────────────────────────╯                                 │\n"
        "╰─────────────────────────────────────────────────────────────────────────────╯\n"
        "ConnectionError: pg.internal")
    add("traceback_values", "ipython_verbose", "IPython ultratb VerboseTB: the frame's call written with "
        "inspect.formatargvalues (name=repr(value))", "Iv" + rand(24),
        "---------------------------------------------------------------------------\n"
        "HTTPError                                 Traceback (most recent call last)\n"
        "File /app/hub.py:8, in push(repo_id='org/llm-7b', token='{s}', private=True)\n"
        "      6 def push(repo_id, token, private=True):\n"
        "----> 8     api.upload_folder(repo_id=repo_id, token=token)\n\n"
        "HTTPError: 401 Client Error: Unauthorized")
    add("traceback_values", "pdb_args", "pdb's 'args' command: one 'name = repr' line per argument",
        "Pd" + rand(20), "> /app/db.py(14)connect()\n-> conn = psycopg2.connect(dsn)\n(Pdb) args\n"
        "host = 'pg.internal'\nuser = 'trainer'\npassword = '{s}'\n(Pdb) c")
    # -- argument and config dumps ---------------------------------------------------------------------------
    add("config_dumps", "vllm_namespace", "vLLM api_server: logger.info('args: %s', args), an argparse Namespace",
        "tk-" + rand(24), "INFO 05-01 12:00:00 api_server.py:1043] args: Namespace(host=None, port=8000, "
        "uvicorn_log_level='info', allow_credentials=False, api_key='{s}', lora_modules=None, "
        "model='meta-llama/Llama-3-8B', tokenizer=None, seed=0)")
    add("config_dumps", "pprint_nested", "pprint.pformat of a nested config (one key per line, nested dicts "
        "indented under their key)", "Pp" + rand(22),
        "{'data': {'path': '/datasets/pile', 'workers': 8},\n 'db': {'host': 'pg.internal',\n        'password': "
        "'{s}',\n        'port': 5432},\n 'seed': 42}")
    add("config_dumps", "omegaconf_yaml", "Hydra/OmegaConf.to_yaml(cfg) printed at job start", "Oc" + rand(24),
        "[2024-05-01 12:00:00,123][__main__][INFO] - Config:\nmodel:\n  name: llama-7b\n  dtype: bf16\n"
        "logger:\n  wandb:\n    project: pretrain\n    api_key: {s}\n  csv: true\ntrainer:\n  max_steps: 1000")
    add("config_dumps", "deepspeed_comet", "DeepSpeed config.print: '  name ....... value' with a pydantic model's "
        "str for nested configs (comet monitor)", rand(25),
        "[2024-05-01 12:00:00,123] [INFO] [config.py:1001:print]   comet_config ................. enabled=True "
        "samples_log_interval=100 project='llm' workspace='ml' api_key='{s}' experiment_name=None")
    add("config_dumps", "kaggle_json", "Kaggle API: ~/.kaggle/kaggle.json is {\"username\": ..., \"key\": ...}",
        rand(32, HEX), "+ cat /root/.kaggle/kaggle.json\n{\"username\":\"mltrainer\",\"key\":\"{s}\"}")
    add("config_dumps", "shell_quoted_env", "bash xtrace quotes a word that holds spaces with single quotes "
        "(export 'NAME=value with spaces')", "Sq9x" + rand(6) + " violet-Staple-" + rand(8),
        "+ export 'DB_PASSWORD={s}'")
    add("config_dumps", "docker_run_quoted", "bash xtrace of docker run -e with a quoted NAME=value",
        "Dq7y" + rand(6) + " maple-Orbit-" + rand(8),
        "+ docker run --rm -e 'PGPASSWORD={s}' -e LOG_LEVEL=info postgres:16 psql -h db -U trainer")
    # -- tables and name/value records of cloud CLIs ---------------------------------------------------------
    add("cli_tables", "vault_kv_get", "vault kv get: the Data section as a 'Key  Value' table", "Vk" + rand(22),
        "====== Secret Path ======\nsecret/data/train/db\n\n======= Metadata =======\nKey                Value\n"
        "---                -----\ncreated_time       2024-05-01T12:00:00.000000Z\nversion            3\n\n"
        "====== Data ======\nKey         Value\n---         -----\npassword    {s}\nusername    trainer")
    add("cli_tables", "vault_read_creds", "vault read database/creds/ROLE: lease fields, then password and username",
        "A1a-" + rand(16), "Key                Value\n---                -----\n"
        "lease_id           database/creds/readonly/2f6a614c-4aa2-7b19-24b9-ad944a8d4de6\n"
        "lease_duration     1h\nlease_renewable    true\npassword           {s}\n"
        "username           v-root-readonly-x6q809467q98yp4yx4z4-1714564800")
    add("cli_tables", "terraform_output_json", "terraform output -json: each output an object with sensitive, "
        "type and value", "Tf" + rand(22),
        "{\n  \"db_password\": {\n    \"sensitive\": true,\n    \"type\": \"string\",\n    \"value\": \"{s}\"\n  },\n"
        "  \"endpoint\": {\n    \"sensitive\": false,\n    \"type\": \"string\",\n"
        "    \"value\": \"pg.internal\"\n  }\n}")
    add("cli_tables", "aws_ssm_parameter", "aws ssm get-parameter --with-decryption: Parameter with Name, Type, "
        "Value", "Ss" + rand(22),
        "{\n    \"Parameter\": {\n        \"Name\": \"/prod/train/db_password\",\n        \"Type\": \"SecureString\",\n"
        "        \"Value\": \"{s}\",\n        \"Version\": 3,\n        \"LastModifiedDate\": \"2024-05-01T12:00:00\",\n"
        "        \"ARN\": \"arn:aws:ssm:us-east-1:123456789012:parameter/prod/train/db_password\",\n"
        "        \"DataType\": \"text\"\n    }\n}")
    add("cli_tables", "az_storage_keys", "az storage account keys list: [{creationTime, keyName, permissions, value}]",
        rand(86, B64) + "==",
        "[\n  {\n    \"creationTime\": \"2024-05-01T12:00:00.000000+00:00\",\n    \"keyName\": \"key1\",\n"
        "    \"permissions\": \"FULL\",\n    \"value\": \"{s}\"\n  }\n]")
    add("cli_tables", "redis_config_get", "redis-cli CONFIG GET requirepass: numbered reply lines", "Rc" + rand(20),
        "127.0.0.1:6379> CONFIG GET requirepass\n1) \"requirepass\"\n2) \"{s}\"")
    # -- config files of the stack, printed by a setup script -------------------------------------------------
    add("config_files", "hadoop_core_site", "hadoop-aws docs: core-site.xml <property><name>fs.s3a.secret.key</name>"
        "<value>...</value>", rand(40, B64),
        "<configuration>\n  <property>\n    <name>fs.s3a.access.key</name>\n    <value>TRAINER01</value>\n"
        "  </property>\n  <property>\n    <name>fs.s3a.secret.key</name>\n    <value>{s}</value>\n  </property>\n"
        "</configuration>")
    add("config_files", "spark_azure_account_key", "hadoop-azure docs: fs.azure.account.key.ACCOUNT.blob.core."
        "windows.net (Spark: spark.hadoop. prefix)", rand(86, B64) + "==",
        "+ spark-submit --conf spark.hadoop.fs.azure.account.key.ckpt01.dfs.core.windows.net={s} "
        "--conf spark.executor.memory=16g train.py")
    add("config_files", "pgpass", "PostgreSQL libpq-pgpass: hostname:port:database:username:password",
        "Pg" + rand(20), "+ cat /root/.pgpass\ndb.internal:5432:*:trainer:{s}")
    add("config_files", "redis_conf", "redis.conf: requirepass / masterauth, space separated", "Rq" + rand(22),
        "+ grep -E '^(requirepass|masterauth|port)' /etc/redis/redis.conf\nport 6379\nrequirepass {s}")
    add("config_files", "fluentbit_classic", "Fluent Bit classic config: '    Key   Value', es output's HTTP_Passwd",
        "Fb" + rand(22), "[OUTPUT]\n    Name          es\n    Match         *\n    Host          es.internal\n"
        "    HTTP_User     fluent\n    HTTP_Passwd   {s}\n    tls           On")
    add("config_files", "netrc_default", "netrc(5): the 'default' entry, and 'account' between login and password",
        "Nd" + rand(22), "default login anonymous password {s}")
    add("config_files", "netrc_account", "netrc(5): machine, login, account, password tokens in any order",
        "Na" + rand(22), "machine ftp.internal login trainer account ml password {s}")
    # -- CLI arguments documented as secrets ------------------------------------------------------------------
    add("cli_secret_args", "openssl_passout", "openssl-passphrase-options(1): -passout pass:PASSWORD",
        "Os" + rand(20), "+ openssl pkcs12 -export -in tls.crt -inkey tls.key -out bundle.p12 -passout pass:{s}")
    add("cli_secret_args", "az_login_sp", "az login --service-principal -u APP_ID -p PASSWORD --tenant TENANT",
        rand(3) + "8Q~" + rand(34, ALNUM + "_~.-"),
        "+ az login --service-principal -u 0a1b2c3d-0000-4000-8000-00000000000a -p {s} --tenant "
        "0a1b2c3d-0000-4000-8000-00000000000b")
    add("cli_secret_args", "az_login_sp_plain", "az login --service-principal -u APP_ID -p PASSWORD (a client secret "
        "without the Q~ marker)", "Az" + rand(22),
        "+ az login --service-principal -u 0a1b2c3d-0000-4000-8000-00000000000a -p {s} --tenant t")
    add("cli_secret_args", "mc_alias_set", "MinIO client: mc alias set ALIAS URL ACCESSKEY SECRETKEY",
        rand(40, B64), "+ mc alias set ckpt http://minio.internal:9000 TRAINERACCESS01 {s}")
    add("cli_secret_args", "sudo_stdin", "sudo(8) -S reads the password from standard input", "Su" + rand(18),
        "+ echo {s} | sudo -S systemctl restart nvidia-fabricmanager")
    add("cli_secret_args", "sqlcmd_P", "sqlcmd -S SERVER -U USER -P PASSWORD", "Sc" + rand(20),
        "+ /opt/mssql-tools18/bin/sqlcmd -S tcp:db,1433 -U sa -P '{s}' -Q 'SELECT 1'")
    add("cli_secret_args", "zip_P", "zip(1) -P password", "Zp" + rand(20), "+ zip -q -P {s} -r ckpt.zip ckpt/")
    add("cli_secret_args", "ipmitool_P", "ipmitool(1) -I lanplus -H BMC -U USER -P PASSWORD", "Ip" + rand(18),
        "+ ipmitool -I lanplus -H 10.0.0.17 -U admin -P {s} chassis power status")
    add("cli_secret_args", "ldapsearch_w", "ldapsearch(1) -D BINDDN -w PASSWD", "Lw" + rand(20),
        "+ ldapsearch -x -H ldap://ldap.internal -D cn=admin,dc=hpc,dc=local -w {s} -b dc=hpc,dc=local uid=trainer")
    add("cli_secret_args", "smbclient_U", "smbclient(1) -U [DOMAIN\\]USERNAME[%PASSWORD]", "Sm" + rand(20),
        "+ smbclient //nas/datasets -U 'HPC\\trainer%{s}' -c 'ls'")
    add("cli_secret_args", "curl_oauth2_bearer", "curl(1) --oauth2-bearer TOKEN", rand(40, URLSAFE),
        "+ curl -sS --oauth2-bearer {s} https://api.internal/v1/runs")
    add("cli_secret_args", "curl_proxy_user", "curl(1) -U/--proxy-user USER:PASSWORD", "Px" + rand(20),
        "+ curl -sS --proxy-user proxyuser:{s} -x http://proxy:3128 https://huggingface.co")
    add("cli_secret_args", "papermill_p", "papermill CLI: -p NAME VALUE parameters", "Pm" + rand(22),
        "+ papermill train.ipynb out.ipynb -p db_password {s} -p epochs 3")
    add("cli_secret_args", "called_process_mysql", "subprocess.CalledProcessError: Command '[...]' (the argv list's "
        "repr) with mysql's attached -pPASSWORD", "Cp" + rand(20),
        "subprocess.CalledProcessError: Command '['mysql', '-h', 'db', '-u', 'root', '-p{s}', '-e', 'select 1']' "
        "returned non-zero exit status 1.")
    add("cli_secret_args", "rabbitmqctl_add_user", "rabbitmqctl add_user USERNAME PASSWORD", "Rb" + rand(20),
        "+ rabbitmqctl add_user trainer {s}")
    # -- HTTP client debug output ----------------------------------------------------------------------------
    add("http_debug", "curl_http2_headers", "curl 8 verbose over HTTP/2: '* [HTTP/2] [1] [name: value]' request "
        "header lines", rand(40, URLSAFE),
        "* [HTTP/2] [1] OPENED stream for https://api.internal/v1/runs\n* [HTTP/2] [1] [:method: GET]\n"
        "* [HTTP/2] [1] [:path: /v1/runs]\n* [HTTP/2] [1] [authorization: Bearer {s}]\n"
        "* [HTTP/2] [1] [user-agent: curl/8.5.0]")
    add("http_debug", "curl_http2_apikey", "curl 8 verbose over HTTP/2, an API-key header", rand(40),
        "* [HTTP/2] [1] [:authority: api.internal]\n* [HTTP/2] [1] [x-api-key: {s}]\n* [HTTP/2] [1] [accept: */*]")
    add("http_debug", "botocore_canonical", "botocore.auth DEBUG: 'CanonicalRequest:' then the canonical headers, "
        "x-amz-security-token among them", "FwoGZXIvYXdzE" + rand(200, B64) + "=",
        "2024-05-01 12:00:00,123 botocore.auth [DEBUG] CanonicalRequest:\nGET\n/ckpt/step-100.pt\n\n"
        "host:ckpt.s3.amazonaws.com\nx-amz-content-sha256:UNSIGNED-PAYLOAD\nx-amz-date:20240501T120000Z\n"
        "x-amz-security-token:{s}\n\nhost;x-amz-content-sha256;x-amz-date;x-amz-security-token\nUNSIGNED-PAYLOAD")
    add("http_debug", "botocore_sts_body", "botocore.parsers DEBUG: 'Response body:' then the bytes repr of STS's "
        "AssumeRole XML", rand(40, B64),
        "2024-05-01 12:00:00,123 botocore.parsers [DEBUG] Response body:\nb'<AssumeRoleResponse xmlns=\"https://sts."
        "amazonaws.com/doc/2011-06-15/\">\\n  <AssumeRoleResult>\\n    <Credentials>\\n      <AccessKeyId>ASIA"
        "Y34FZKBOKMUTVV7A</AccessKeyId>\\n      <SecretAccessKey>{s}</SecretAccessKey>\\n      <Expiration>"
        "2024-05-01T13:00:00Z</Expiration>\\n    </Credentials>\\n  </AssumeRoleResult>\\n</AssumeRoleResponse>'")
    add("http_debug", "botocore_prepared", "botocore.endpoint DEBUG: 'Sending http request: <AWSPreparedRequest ..."
        " headers={...}>' with bytes header values", "IQoJb3JpZ2luX2Vj" + rand(180, B64) + "==",
        "2024-05-01 12:00:00,123 botocore.endpoint [DEBUG] Sending http request: <AWSPreparedRequest "
        "stream_output=False, method=GET, url=https://ckpt.s3.amazonaws.com/step-100.pt, headers={'User-Agent': "
        "b'Boto3/1.34.0', 'X-Amz-Date': b'20240501T120000Z', 'X-Amz-Security-Token': b'{s}', 'Authorization': "
        "b'AWS4-HMAC-SHA256 Credential=ASIAY34FZKBOKMUTVV7A/20240501/us-east-1/s3/aws4_request'}>")
    add("http_debug", "gchat_webhook", "Google Chat incoming webhook URL: ...messages?key=...&token=...",
        rand(43, URLSAFE) + "%3D",
        "requests.exceptions.HTTPError: 400 Client Error: Bad Request for url: https://chat.googleapis.com/v1/"
        "spaces/AAAAx1y2z3w/messages?key=AIzaSyDdI0hCZtE6vySjMm-WEfRq3CPzqKqqsHI&token={s}")
    add("http_debug", "git_extraheader", "actions/checkout's http.<url>.extraheader as 'git config --list' prints it",
        base64.b64encode(("x-access-token:ghs_" + rand(36)).encode()).decode(),
        "+ git config --list\nuser.name=ci\nhttp.https://github.com/.extraheader=AUTHORIZATION: basic {s}\n"
        "core.bare=false")
    # -- escapes --------------------------------------------------------------------------------------------
    add("escapes", "sqlalchemy_percent_password", "SQLAlchemy docs: special characters of a URL's password "
        "percent-escaped (kx%40jj5%2Fg)", "Kx%40" + rand(6) + "%2F" + rand(8),
        "sqlalchemy.exc.OperationalError: (psycopg2.OperationalError) connection failed\n"
        "[SQL: engine=postgresql+psycopg2://trainer:{s}@pghost10/appdb]")
    add("escapes", "json_in_json_ansi", "a Docker json-file record whose log line is coloured by structlog",
        "Ja" + rand(22),
        "{\"log\":\"2024-05-01 12:00:00 [info     ] \\u001b[1mready\\u001b[0m \\u001b[36mdb_password\\u001b[0m="
        "\\u001b[35m{s}\\u001b[0m\\n\",\"stream\":\"stderr\",\"time\":\"2024-05-01T12:00:00.1Z\"}")
    pad = "x" * 16300
    add("escapes", "cri_partial_split", "containerd's CRI log: a line over 16 KiB written as P records then an F "
        "record, the split inside the value", "Cr" + rand(30),
        "2024-05-01T12:00:00.100000000Z stderr P " + ("INFO config dump " + pad)[:16360] + " db_password={s[:12]}\n"
        "2024-05-01T12:00:00.100000001Z stderr F {s[12:]} retries=3")
    return c


def rows() -> list[dict[str, str]]:
    out = []
    for kind, context, source, secret, raw in _cases():
        text = raw.replace("{s[:12]}", secret[:12]).replace("{s[12:]}", secret[12:]).replace("{s}", secret)
        out.append({"kind": kind, "source": source, "context": context, "secret": secret, "text": text})
    return out


def split(all_rows: list[dict[str, str]]) -> tuple[list[dict[str, str]], list[dict[str, str]]]:
    """(dev2, holdout6): a random third of the cases held out, on a seed of their own."""
    ids = sorted(f"{r['kind']}/{r['context']}" for r in all_rows)
    held = set(random.Random(SEED + 6).sample(ids, len(ids) // 3))
    return ([r for r in all_rows if f"{r['kind']}/{r['context']}" not in held],
            [r for r in all_rows if f"{r['kind']}/{r['context']}" in held])
