"""Fake secrets of every kind the redactor knows, in the shapes their issuers use, for tests.

Each value is made at import from a seeded random generator (no real credential is written here) and
each kind comes with the lines it typically appears in: ``SAMPLES[kind] = (secret, [line, ...])``.
``SECRET_FRAGMENT_CHARS`` is how long a run of a secret may survive redaction before a test calls it a
leak (a kept scheme word or prefix such as ``hf_`` is shorter).
"""

from __future__ import annotations

import base64
import json
import random
import string

_rng = random.Random(20261201)
ALNUM = string.ascii_letters + string.digits
SECRET_FRAGMENT_CHARS = 8


def rand(n: int, alphabet: str = ALNUM) -> str:
    # Letters and digits both, as generated credentials have.
    while True:
        s = "".join(_rng.choice(alphabet) for _ in range(n))
        if n < 8 or (any(c.isdigit() for c in s) and any(c.isalpha() for c in s)) or alphabet.isdigit():
            return s


def _b64url(data: dict) -> str:
    return base64.urlsafe_b64encode(json.dumps(data).encode()).decode().rstrip("=")


HEX = "0123456789abcdef"
URLSAFE = ALNUM + "_-"

JWT = (_b64url({"alg": "HS256", "typ": "JWT"}) + "." + _b64url({"sub": rand(12), "exp": 1900000000}) + "."
       + rand(43, URLSAFE))
PEM_BODY = "\n".join(rand(64, ALNUM + "+/") for _ in range(6)) + "\n" + rand(20, ALNUM + "+/") + "=="
PEM = f"-----BEGIN RSA PRIVATE KEY-----\n{PEM_BODY}\n-----END RSA PRIVATE KEY-----"
PEM_JSON_BODY = rand(64, ALNUM + "+/")
BASIC_PW = rand(14)
BASIC = base64.b64encode(f"elastic:{BASIC_PW}".encode()).decode()

SAMPLES: dict[str, tuple[str, list[str]]] = {}


def _add(kind: str, secret: str, *lines: str) -> None:
    SAMPLES[kind] = (secret, [line.replace("{s}", secret) for line in lines])


_add("cli_password_flag", "Hunt3r2-" + rand(6),
     "torchrun train.py --db-host pg --password {s} --lr 3e-4", "python upload.py --password={s}",
     "launch: ['python', 'x.py', '--password', '{s}']")
_add("cli_token_flag", rand(32), "python push.py --token={s} --repo org/model", "accelerate launch --token {s} run.py")
_add("env_wandb_api_key", rand(40, HEX), "WANDB_API_KEY={s}", "export WANDB_API_KEY='{s}'",
     "environ({'WANDB_API_KEY': '{s}', 'HOME': '/root'})")
_add("env_hf_token", "hf_" + rand(34), "HF_TOKEN={s}", "HUGGING_FACE_HUB_TOKEN: {s}")
_add("env_aws_secret", rand(40, ALNUM + "/+"), "AWS_SECRET_ACCESS_KEY={s}", "aws_secret_access_key = {s}")
_add("env_openai_api_key", rand(48), "OPENAI_API_KEY={s} python eval.py", "os.environ['OPENAI_API_KEY'] = '{s}'")
_add("bearer_token", rand(40, URLSAFE + "."), "curl -H 'Authorization: Bearer {s}' https://api.example.com/v1",
     "headers={'Authorization': 'Bearer {s}', 'Accept': '*/*'}")
_add("jwt", JWT, "GET /api/runs?x=1 auth={s}", "token expired: {s}", "id_token {s}")
_add("basic_auth", BASIC, "Authorization: Basic {s}", "curl -H 'authorization: basic {s}' http://es:9200")
_add("slack_bot_token", "xoxb-" + rand(12, string.digits) + "-" + rand(13, string.digits) + "-" + rand(24),
     "slack notify failed for {s}: channel_not_found", "SLACK_BOT_TOKEN={s}")
_add("slack_webhook", "T0" + rand(9, string.ascii_uppercase + string.digits) + "/B0"
     + rand(9, string.ascii_uppercase + string.digits) + "/" + rand(24),
     "posting alert to https://hooks.slack.com/services/{s}")
_add("openai_key", "sk-" + rand(48), "openai.api_key = {s}", "Incorrect API key provided: {s}.")
_add("openai_project_key", "sk-proj-" + rand(64, URLSAFE), "using key {s} for judge model")
_add("anthropic_key", "sk-ant-api03-" + rand(93, URLSAFE) + "AA", "anthropic client key={s}", "x-api-key: {s}")
_add("github_pat", "ghp_" + rand(36), "git clone https://{s}@github.com/org/repo.git", "GH token {s} rejected")
_add("github_oauth", "gho_" + rand(36), "oauth token {s} expired")
_add("github_fine_grained", "github_pat_" + rand(22) + "_" + rand(59), "push with {s}")
_add("gitlab_pat", "glpat-" + rand(20, URLSAFE), "CI_JOB_TOKEN unset, using {s}")
_add("huggingface_token", "hf_" + rand(34), "login --token {s}", "Token is valid: {s} (permission: write)")
_add("aws_access_key_id", "AKIA" + rand(16, string.ascii_uppercase + string.digits), "Found credentials: {s} in env",
     "aws_access_key_id = {s}")
_add("azure_account_key", rand(86, ALNUM + "+/") + "==",
     "conn=DefaultEndpointsProtocol=https;AccountName=ckpts;AccountKey={s};EndpointSuffix=core.windows.net")
_add("azure_sas_sig", rand(43, ALNUM + "%") + "%3D",
     "GET https://ckpts.blob.core.windows.net/c/m.bin?sv=2022-11-02&ss=b&sig={s}&se=2026-12-31 403")
_add("google_api_key", "AIza" + rand(35, URLSAFE), "gemini judge key {s}", "?key={s}&alt=json")
_add("google_service_account", PEM_JSON_BODY,
     json.dumps({"type": "service_account", "project_id": "ml-prod", "private_key_id": rand(40, HEX),
                 "private_key": "-----BEGIN PRIVATE KEY-----\n" + PEM_JSON_BODY + "\n" + rand(64, ALNUM + "+/")
                 + "\n-----END PRIVATE KEY-----\n", "client_email": "sa@ml-prod.iam.gserviceaccount.com"}))
_add("pem_private_key", PEM_BODY.splitlines()[2], "loaded key:\n" + PEM + "\nfrom /etc/ssl/key.pem")
_add("redis_url_password", "Rp" + rand(14), "connecting to redis://:{s}@redis-master:6379/0")
_add("postgres_url_password", "Pg" + rand(14), "sqlalchemy.url = postgresql://trainer:{s}@db:5432/runs")
_add("https_url_password", "Hs" + rand(14), "pip install --index-url https://deploy:{s}@pypi.internal/simple x")
_add("stripe_key", "sk_live_" + rand(24), "stripe.api_key={s}", "charge failed with key {s}")
_add("npm_token", "npm_" + rand(36), "//registry.npmjs.org/:_authToken={s}", "npm token {s}")
_add("pypi_token", "pypi-AgEIcHlwaS5vcmc" + rand(60, URLSAFE), "twine upload -p {s} dist/*", "TWINE_PASSWORD={s}")
_add("discord_bot_token", "MT" + rand(24, ALNUM) + "." + rand(6, URLSAFE) + "." + rand(27, URLSAFE),
     "bot.run({s!r})".replace("{s!r}", "'{s}'"), "discord client login with {s}")
_add("discord_webhook", rand(68, URLSAFE), "notify https://discord.com/api/webhooks/123456789012345678/{s}")
_add("twilio_api_key", "SK" + rand(32, HEX), "twilio client {s} created")
_add("sendgrid_key", "SG." + rand(22, URLSAFE) + "." + rand(43, URLSAFE), "mail via {s}")
_add("mailchimp_key", rand(32, HEX) + "-us12", "mailchimp key {s} invalid")
_add("telegram_bot_token", "9009786150:AA" + rand(33, URLSAFE), "tg bot https://api.telegram.org/bot{s}/send")
_add("databricks_token", "dapi" + rand(32, HEX), "DATABRICKS host x token {s}")
_add("nvidia_api_key", "nvapi-" + rand(64, URLSAFE), "ngc config set key {s}")
_add("replicate_token", "r8_" + rand(37), "REPLICATE_API_TOKEN={s}", "replicate run with {s}")
_add("groq_key", "gsk_" + rand(52), "groq judge {s}")
_add("square_token", "sq0atp-" + rand(22, URLSAFE), "square oauth {s}")
_add("google_oauth_token", "ya29." + rand(60, URLSAFE), "access token ya29 refreshed: {s}")
_add("curl_user_password", "Cu" + rand(12), "curl -u elastic:{s} https://es:9200/_cat/indices")
_add("password_with_spaces", "Stap1er horse; battery " + rand(6), 'db.connect(password="{s}")',
     "password: '{s}'", '{"user": "svc", "password": "{s}"}')
_add("json_password", "J" + rand(15), '{"msg": "login ok", "password": "{s}"}')
_add("nested_json_secret", "N" + rand(23),
     '{"event": "cfg", "config": {"db": {"host": "pg", "password": "{s}"}, "lr": 0.001}}',
     '{"log": "{\\"level\\": \\"info\\", \\"client_secret\\": \\"{s}\\"}"}')
_add("high_entropy_secret_key", rand(32, URLSAFE), "session_token = {s}", "refresh_token: {s}",
     '"x-auth-token": "{s}"')
_add("fullwidth_key_name", "Fw" + rand(12), "ｐａｓｓｗｏｒｄ＝{s}", "ＡＰＩ＿ＫＥＹ: {s}")
_add("zero_width_key_name", "Zw" + rand(12), "pass\u200bword={s}", "api\u200d_key: {s}", "to\u00adken={s}")
_add("cookie_header", rand(32, URLSAFE), "Cookie: sessionid={s}; csrftoken=abc", "set-cookie: sid={s}; Path=/")
_add("k8s_secret_env", rand(24, URLSAFE), "MLFLOW_TRACKING_PASSWORD={s}", "DB_PASS={s}")

# Vendor token families with a published prefix (one sample per rule of secret_rules.py).
UPPER = string.ascii_uppercase + string.digits
_add("alibaba_access_key_id", "LTAI" + rand(20), "ALIBABA_CLOUD_ACCESS_KEY_ID={s}", "oss client key id {s}")
_add("azure_ad_client_secret", "aB1" + "8Q~" + rand(34, ALNUM + "_~.-"), "msal: secret {s} expired")
_add("google_oauth_client_secret", "GOCSPX-" + rand(28, URLSAFE), "client {s} rejected")
_add("google_refresh_token", "1//0" + rand(60, URLSAFE), "refresh with {s}")
_add("digitalocean_token", "dop_v1_" + rand(64, HEX), "doctl auth init -t {s}")
_add("docker_hub_token", "dckr_pat_" + rand(27, URLSAFE), "echo {s} | docker login -u bot --password-stdin")
_add("hashicorp_vault_token", "hvs." + rand(90, URLSAFE), "vault: using {s}")
_add("terraform_cloud_token", rand(14) + ".atlasv1." + rand(67, URLSAFE), "tfe token {s}")
_add("grafana_token", "glsa_" + rand(32) + "_" + rand(8, HEX), "grafana sa {s}", )
_add("grafana_cloud_token", "glc_" + rand(80, ALNUM + "+/") + "==", "grafana cloud {s}")
_add("newrelic_key", "NRAK-" + rand(27, UPPER), "newrelic key {s}")
_add("sentry_token", "sntrys_" + rand(100, ALNUM + "+/") + "=", "sentry-cli --auth-token {s} releases")
_add("shopify_token", "shpat_" + rand(32, HEX), "shopify {s}")
_add("linear_api_key", "lin_api_" + rand(40), "linear {s}")
_add("mailgun_key", "key-" + rand(32, HEX), "mailgun {s}")
_add("pulumi_token", "pul-" + rand(40, HEX), "pulumi {s}")
_add("doppler_token", "dp.pt." + rand(43), "doppler {s}")
_add("atlassian_api_token", "ATATT3xFfGF0" + rand(180, URLSAFE), "jira {s}")
_add("age_secret_key", "AGE-SECRET-KEY-1" + rand(58, "QPZRY9X8GF2TVDW0S3JN54KHCE6MUA7L"), "sops age {s}")
_add("dynatrace_token", "dt0c01." + rand(24, UPPER) + "." + rand(64, UPPER), "dynatrace {s}")
_add("postman_key", "PMAK-" + rand(24, HEX) + "-" + rand(34, HEX), "postman {s}")
_add("notion_token", "ntn_" + rand(11, string.digits) + rand(35), "notion {s}")
_add("langsmith_key", "lsv2_pt_" + rand(32, HEX) + "_" + rand(10, HEX), "langsmith {s}")
_add("xai_key", "xai-" + rand(80), "grok judge {s}")
_add("tailscale_key", "tskey-auth-" + rand(12) + "-" + rand(30), "tailscale up --authkey={s}", "tailscale key {s}")
_add("rubygems_token", "rubygems_" + rand(48, HEX), "gem push with {s}")
_add("figma_token", "figd_" + rand(40, URLSAFE), "figma {s}")
_add("airtable_token", "pat" + rand(14) + "." + rand(64, HEX), "airtable {s}")
_add("facebook_token", "EAAC" + rand(120), "graph api {s}")
_add("slack_config_token", "xoxe.xoxp-1-" + rand(120), "slack config {s}")

# Key-name families: "<word>_KEY" with a generated value, a session id, a cookie map, a password with '&'.
_add("qualified_key_name", "/" + rand(60, ALNUM + "+/") + "+" + rand(23, ALNUM + "+/") + "==",
     "AZURE_STORAGE_KEY={s}", "dd_app_key: {s}", '{"settings": {"storage_key": "{s}"}}')
_add("session_id_value", rand(40, URLSAFE), '{"req": {"cookies": {"sessionid": "{s}"}}}', "session_id={s}",
     "PHPSESSID: {s}")
_add("password_with_ampersand", "Tr0ub4dor&3" + rand(6), "DB_PASSWORD={s}", "--db-password {s} --epochs 3",
     "db_password: {s}")

# Passwords of commands' short flags, a W&B key after "wandb", a netrc entry.
_add("short_password_flag", "Sp" + rand(14), "+ mysql -h db -u root -p{s} -e 'select 1'",
     "+ mysqldump -u root -p'{s}' runs",
     "+ sshpass -p {s} rsync -a ckpt/ node-3:/data/", "argv=['sshpass', '-p', '{s}', 'ssh', 'node-3']",
     "+ redis-cli -h redis -a {s} ping", "cmd: ['redis-cli', '-a', '{s}', 'info']",
     "+ docker login -u ci -p {s} registry.internal", "run(['/usr/bin/docker', 'login', '-u', 'ci', '-p', '{s}'])",
     "+ zip -q -P {s} -r ckpt.zip ckpt/", "run(['zip', '-P', '{s}', '-r', 'ckpt.zip', 'ckpt'])",
     "CalledProcessError: Command '['mysql', '-u', 'root', '-p{s}', '-e', 'select 1']' returned non-zero exit "
     "status 1.")
_add("wandb_login", rand(40, HEX), "+ wandb login {s}", "wandb: Appending key for api.wandb.ai: {s}")
_add("netrc_password", "Nr" + rand(14), "machine api.wandb.ai\n  login user\n  password {s}",
     "machine pypi.internal login ci password {s}", "default login anonymous password {s}",
     "machine ftp.internal login trainer account ml password {s}")

# Name/value records, Kubernetes Secrets, secrets next to their key id or vendor keyword, encoded credentials.
_add("name_value_record", "Nv" + rand(18),
     '{"env": [{"name": "DB_PASSWORD", "value": "{s}"}, {"name": "LR", "value": "1"}]}',
     "- name: MLFLOW_TRACKING_PASSWORD\n  value: {s}", "EnvVar{Name:HF_API_TOKEN,Value:{s},ValueFrom:nil,}")
_add("k8s_secret_manifest", base64.b64encode(("Ks" + rand(20)).encode()).decode(),
     "apiVersion: v1\nkind: Secret\nmetadata:\n  name: db\ndata:\n  DATABASE_URL: {s}\n  user: dXNlcg==",
     '{"apiVersion": "v1", "kind": "Secret", "data": {"conn": "{s}"}}')
_add("aws_secret_next_to_key_id", rand(40, ALNUM + "+/"), "using AKIA" + rand(16, UPPER) + ":{s} for s3",
     "AKIA" + rand(16, UPPER) + " {s}")
_add("twilio_auth_token", rand(32, HEX), "twilio client AC" + rand(32, HEX) + " auth {s}", "Twilio token {s}")
_add("datadog_key", rand(32, HEX), "datadog agent api key {s} rejected", "DD_API: {s}")
_add("heroku_api_key", f"{rand(8, HEX)}-{rand(4, HEX)}-{rand(4, HEX)}-{rand(4, HEX)}-{rand(12, HEX)}",
     "heroku auth {s}")
_add("url_query_key", rand(39, URLSAFE), "GET https://maps.example.com/api/geocode?address=x&key={s} 403")
_add("private_key_base64", base64.b64encode(PEM.encode()).decode(), "  tls.key: {s}")
_add("docker_config_auth",
     base64.b64encode(json.dumps({"auths": {"reg.internal": {"auth": BASIC}}}).encode()).decode(),
     "  .dockerconfigjson: {s}")
_add("go_mysql_dsn", "My" + rand(14), "level=info dsn=root:{s}@tcp(mysql:3306)/runs?parseTime=true",
     "sql.Open(mysql, ml:{s}@unix(/run/mysqld/mysqld.sock)/meta)")
_add("ldap_bind_password", "Ld" + rand(14),
     "SimpleLDAPObject.simple_bind_s(('cn=hub,ou=svc,dc=acme,dc=io', '{s}'), {})")
_add("oracle_credentials", "Or" + rand(12), "url=jdbc:oracle:thin:scott/{s}@db:1521/orcl",
     "+ sqlplus -s app/{s}@//db/x")

# Labels written as words, XML elements, `config set`, a password echoed into --password-stdin.
_add("labelled_key", rand(24), "Your API Key: {s}", "Client Secret = {s}", "Secret Access Key: {s}")
_add("xml_password", "Xm" + rand(14), "<server><id>nexus</id><password>{s}</password></server>",
     "<ns:apiKey type='x'>{s}</ns:apiKey>")
_add("config_set", rand(40, ALNUM + "/+"), "+ aws configure set aws_secret_access_key {s}",
     "+ npm config set //registry.npmjs.org/:_authToken {s}")
_add("stdin_password", "Si" + rand(14), "+ echo {s} | docker login -u bot --password-stdin registry.internal",
     "+ echo {s} | sudo -S systemctl restart nvidia-fabricmanager", "+ echo 'root:{s}' | chpasswd")
_add("env_password_with_brackets", "P@ss(w0rd)!{" + rand(6) + "}<" + rand(4) + ">",
     "DB_PASSWORD={s}", "+ export ADMIN_PASSWORD={s}")

# Prefixed tokens of more vendors (gitleaks), and the notations of configs, client dumps and exception printers.
_add("platform_token", "sha256~" + rand(43, URLSAFE), "+ oc login --token={s} --server=https://api:6443",
     "token {s} expired")
_add("platform_token_heroku", "HRKU-AA" + rand(58, URLSAFE), "heroku: using {s}")
_add("platform_token_harness", "pat." + rand(22, URLSAFE) + "." + rand(24) + "." + rand(20), "harness key {s}")
_add("devtool_token", "ico-" + rand(32), "infracost: {s} rejected")
_add("devtool_token_onepassword", f"A3-{rand(6, UPPER)}-{rand(11, UPPER)}-{rand(5, UPPER)}-{rand(5, UPPER)}-"
     f"{rand(5, UPPER)}", "op: secret key {s}")
_add("devtool_token_clickhouse", "4b1d" + rand(38), "clickhouse cloud {s}")
_add("commerce_token", "EZAK" + rand(54), "easypost client {s}")
_add("commerce_token_flutterwave", "FLWSECK_TEST-" + rand(32, "abcdefgh0123456789") + "-X", "flw {s}")
_add("gitlab_routable_pat", "glpat-" + rand(38, URLSAFE) + ".01" + rand(7, string.ascii_lowercase + string.digits),
     "GITLAB_TOKEN {s} rejected")
_add("teams_webhook", rand(32, HEX) + "/" + f"{rand(8, HEX)}-{rand(4, HEX)}-{rand(4, HEX)}-{rand(4, HEX)}-"
     f"{rand(12, HEX)}",
     "POST https://x.webhook.office.com/webhookb2/a@b/IncomingWebhook/{s} -> 400")
_add("cookie_repr", rand(32, HEX), "<RequestsCookieJar[<Cookie _gitlab_session={s} for gitlab.internal/>]>")
_add("auth_tuple", "At" + rand(16), "requests.get(url, auth=('svc', '{s}'))", "basic_auth=(\"elastic\", \"{s}\")",
     "HTTPBasicAuth('svc', '{s}')")
# (a literal, so that the samples drawn after it stay as they were)
_add("auth_pair_list", "Lp4sVq8mZt2Rk7Wn", '{"basic_auth": ["elastic", "{s}"]}', "http_auth: ['elastic', '{s}']")
_add("auth_scheme_word", rand(40, URLSAFE), "Authorization: SSWS {s}", "{'Authorization': 'Bot {s}'}")
_add("xml_name_value_attributes", "Xv" + rand(16), '<add key="ClearTextPassword" value="{s}" />',
     '<property name="hibernate.connection.password" value="{s}"/>')
_add("yaml_block_scalar", "Yb" + rand(20), "db:\n  password: |\n    {s}\n  port: 5432", "hub:\n  token: >-\n    {s}")
_add("pydantic_input_value", "Pv" + rand(14), "1 validation error for Settings\ndb_password\n  String should have at "
     "least 24 characters [type=string_too_short, input_value='{s}', input_type=str]")
_add("url_encoded_assignment", "Ue" + rand(20), "GET /cb?next=%2Fx%3Faccess_token%3D{s}%26s%3D1",
     "redirect_uri=https%3A%2F%2Fci%3A{s}%40nexus%2Fsimple")
_add("name_value_pair", rand(32), "scope headers=[(b'host', b'api'), (b'x-api-key', b'{s}')]",
     "params=[('q', 'x'), ('api_key', '{s}')]")
_add("url_token_user", "x" + rand(39, URLSAFE), "fatal: could not read from https://{s}@github.com/org/repo.git",
     "https%3A%2F%2Fu%40corp:{s}@proxy:3128")
_add("sql_password", "Sq" + rand(14), "CREATE USER app WITH PASSWORD '{s}';", "ALTER ROLE app LOGIN PASSWORD '{s}'",
     "CREATE USER 'app'@'%' IDENTIFIED BY '{s}';")
_add("cli_secret_argument", "Hp" + rand(14), "+ htpasswd -b -B /etc/nginx/.htpasswd admin {s}",
     "+ gh secret set HF_TOKEN --repo org/x --body {s}", "+ poetry config http-basic.private ci {s}",
     "+ mc alias set ckpt http://minio:9000 TRAINERACCESS01 {s}", "+ smbclient //nas/data -U 'HPC\\trainer%{s}' -c ls",
     "+ curl --proxy-user proxyuser:{s} -x http://proxy:3128 https://hf.co",
     "+ mc admin user add ckpt trainer {s}", "+ grafana cli admin reset-admin-password {s}",
     "+ nextflow secrets set WANDB_KEY {s}",
     "    api.add_space_secret(repo_id='acme/demo', key='MISTRAL', value='{s}')")
# A value as a column-aligned table or a space-separated config prints it; colour codes between key and value; a
# shell word quoted whole; keys that name what their secret is for; records that name their value.
_add("column_aligned_value", "Ca" + rand(18), "password           {s}", "    HTTP_Passwd   {s}", "requirepass {s}")
_add("colour_coded_assignment", "Cc" + rand(18), "\x1b[36mapi_key\x1b[0m=\x1b[35m{s}\x1b[0m",
     "Settings(\x1b[33mdb_password\x1b[0m\x1b[1m=\x1b[0m\x1b[32m'{s}'\x1b[0m)",
     '{"log":"\\u001b[36mdb_password\\u001b[0m=\\u001b[35m{s}\\u001b[0m"}')
_add("colour_coded_token", "hf_" + rand(34), "\x1b[36mcred\x1b[0m=\x1b[35m{s}\x1b[0m")
_add("quoted_shell_word", "Qw" + rand(10) + " violet-" + rand(10), "+ export 'DB_PASSWORD={s}'",
     "+ docker run -e 'PGPASSWORD={s}' -e X=1 img")
_add("qualified_key", rand(86, ALNUM + "+/") + "==",
     "spark.hadoop.fs.azure.account.key.ckpt01.dfs.core.windows.net={s}",
     "<name>fs.s3a.secret.key</name>\n  <value>{s}</value>")
_add("record_value", "Rv" + rand(20),
     '{"Parameter": {"Name": "/prod/train/db_password", "Type": "SecureString", "Value": "{s}", "Version": 3}}',
     '{"db_password": {"sensitive": true, "type": "string", "value": "{s}"}}',
     '[{"keyName": "key1", "permissions": "FULL", "value": "{s}"}]', '{"username":"trainer","key":"{s}"}')
_add("bytes_and_backtick_values", rand(28), "headers={'X-Amz-Security-Token': b'{s}'}", "- `hub_token`: {s}",
     "+ keytool -importkeystore -srcstorepass {s} -deststorepass {s}")
_add("diagnosed_locals", "Dg" + rand(18),
     "    client = connect(host, db_password)\n             │       │     └ '{s}'\n"
     "             │       └ 'pg'\n             └ <function connect>")

# Credentials whose printer or format gives them away: fixed base64 heads, bootstrap tokens, workflow commands, a
# netloc, a heading above its value, two-column tables, secret stores' CLIs.
_add("aws_session_token", "IQoJb3JpZ2luX2VjE" + rand(200, ALNUM + "+/") + "=", "upload failed with credentials {s}",
     "X-Amz-Security-Token: {s}")
_add("elasticsearch_enrollment_token", base64.b64encode(json.dumps(
     {"ver": "8.13.2", "adr": ["10.0.0.2:9200"], "fgr": rand(64, HEX), "key": rand(20) + ":" + rand(22)}).encode()
     ).decode(), "  {s}")
_add("bootstrap_token", rand(6, string.ascii_lowercase + string.digits) + ".k" + rand(15, string.ascii_lowercase
     + string.digits), "kubeadm join 10.0.0.1:6443 --token {s} --discovery-token-ca-cert-hash sha256:" + "0" * 64,
     "{s}   23h   2024-05-02T12:00:00Z   authentication,signing   <none>   "
     "system:bootstrappers:kubeadm:default-node-token")
_add("masked_value", rand(32), "+ echo '::add-mask::{s}'")
_add("k3s_token", rand(32, HEX), "K10" + rand(64, HEX) + "::server:{s}")
_add("vault_unseal_key", rand(43, ALNUM + "+/") + "=", "Unseal Key 1: {s}", "Recovery Key 3: {s}")
_add("netloc_password", "Nl" + rand(14), "SplitResult(scheme='https', netloc='ci:{s}@nexus', path='/', query='', "
     "fragment='')")
_add("heading_value", "Hv" + rand(16) + "*",
     "Password for the elastic user (reset with `elasticsearch-reset-password`):\n  {s}\n")
_add("table_row", rand(64), "| API Key    | ABCDEFGHIJKLMNOP |\n| API Secret | {s} |", "| secret       | {s} |")
_add("store_cli_value", "Sc" + rand(14), "+ az keyvault secret set --vault-name kv --name db --value '{s}'",
     "+ aws ssm put-parameter --name /x --type SecureString --value {s}",
     "+ kubectl create secret generic db --from-literal=pw={s}", "+ dvc remote modify --local nas password {s}",
     "+ rclone config create ckpt s3 secret_access_key {s}", "+ ngrok config add-authtoken {s}")

_add("hashicorp_vault_legacy_token", "s." + rand(24), "id                  {s}", "VAULT_TOKEN used: {s}")
_add("jwk_private", rand(43, URLSAFE), '{"kty":"EC","crv":"P-256","x":"' + rand(43, URLSAFE) + '","y":"'
     + rand(43, URLSAFE) + '","d":"{s}"}')
_add("smtp_auth", base64.b64encode(b"\0alerts@lab\0" + rand(14).encode()).decode(),
     "send: 'AUTH PLAIN {s}\\r\\n'")
_add("postfix_sasl_passwd", "Ps" + rand(12) + "%", "[smtp.internal]:587 alerts@lab.internal:{s}")
_add("putty_private_lines", "AAAAI" + rand(43, ALNUM + "+/"),
     "PuTTY-User-Key-File-3: ssh-ed25519\nEncryption: none\nPrivate-Lines: 1\n{s}\nPrivate-MAC: " + rand(64, HEX))
_add("botocore_signature", rand(64, HEX), "2024-05-01 12:00:00,123 botocore.auth [DEBUG] Signature:\n{s}")
_add("conda_channel_token", "ml-" + rand(30, URLSAFE), "  - https://conda.anaconda.org/t/{s}/ml-team")

# Credentials as tools print them in transcripts and command output (the eighth probe round): protocol logins, CLI
# tables, traced commands whose output is a secret, key files and folded tokens.
_add("smtp_auth_login_answer", base64.b64encode(rand(14).encode()).decode(),
     "<-  334 UGFzc3dvcmQ6\n -> {s}\n<-  235 2.7.0 Authentication successful")
_add("login_command", "Lc" + rand(10) + "%" + rand(2), "*cmd* 'PASS {s}'", "  12:00.03 > b'KJAB2 LOGIN alerts \"{s}\"'",
     "[zk: zk-0:2181(CONNECTED) 0] addauth digest sluice:{s}")
_add("ipsec_psk", rand(28, ALNUM + "+/"), '10.0.0.1 203.0.113.7 : PSK "{s}"')
_add("column_table", rand(32), "SID                                 Friendly Name  Secret\nSK" + rand(32, HEX)
     + "  ci-notify      {s}")
_add("command_output", "Co" + rand(10) + "^" + rand(2), "+ printenv HF_TOKEN\n{s}",
     "+ kubectl get secret db -o 'jsonpath={.data.password}'\n+ base64 -d\n{s}")
_add("fish_variable", rand(40, URLSAFE), "$NEPTUNE_API_TOKEN[1]: |{s}|")
_add("composer_auth", rand(20, URLSAFE), '{"gitlab-token": {"gitlab.internal": "{s}"}}')
_add("jwt_folded", JWT, "[05/01/24 12:00:00] INFO     token " + JWT[:40] + "     auth.py:88\n"
     + "\n".join(" " * 29 + JWT[i:i + 40] for i in range(40, len(JWT), 40)))
_add("heading_value_escaped", rand(40), "proc.stdout='Created service token for ci:\\n{s}\\nStore it now.\\n'")
_add("jwt_base64", base64.b64encode(JWT.encode()).decode(), "+ kubectl get secret t -o 'jsonpath={.data.token}'\n{s}")
_add("nats_nkey_seed", "SU" + rand(56, "ABCDEFGHIJKLMNOPQRSTUVWXYZ234567"),
     "-----BEGIN USER NKEY SEED-----\n{s}\n------END USER NKEY SEED------")
_add("minisign_secret_key", "RWRTY0Iy" + rand(140, ALNUM + "+/") + "==",
     "untrusted comment: minisign encrypted secret key\n{s}")
_add("flyio_token", "fm2_" + rand(120, ALNUM + "+/"), "FlyV1 {s}")
_add("oauth_code", "4/0A" + rand(60, URLSAFE), '"GET /oauth2/callback?state=' + rand(20) + '&code={s} HTTP/1.1" 302')
_add("terraform_random_password", "Tr" + rand(20),
     '{"type": "random_password", "name": "db", "instances": [{"attributes": {"result": "{s}"}}]}')
_add("jenkins_initial_password", rand(32, HEX),
     "Please use the following password to proceed to installation:\n\n{s}\n")
_add("stated_password", "Sp" + rand(14), "generated random password is '{s}'")

# Passwords as programs' arguments (the table of secret_commands: a line per form), the variables programs document as
# their password, libpq's password file, redis-cli's numbered replies, a URL password holding percent-escapes.
_add("command_password", "Cm" + rand(10) + "#!" + rand(2),
     "+ sqlcmd -S db -U sa -P '{s}' -Q 'SELECT 1'", "exec: bcp dbo.runs out r.dat -S db -U sa -P{s} -c",
     "CalledProcessError: Command '['/usr/bin/mariadb-dump', '-u', 'bk', '-p{s}', 'runs']' returned non-zero exit "
     "status 2.", "+ mysqladmin -u root password '{s}'", "+ redis-cli --user default --pass '{s}' ping",
     "+ ipmitool -I lanplus -H bmc -U ADMIN -P '{s}' power status", "+ ipmitool user set password 3 '{s}' 20",
     "+ ldapsearch -x -D cn=admin,dc=lab -w '{s}' -b dc=lab", "+ ldappasswd -x -W -s '{s}' uid=t,dc=lab",
     "+ useradd -m -p '{s}' trainer", "+ rabbitmqctl add_user celery '{s}'",
     "['rabbitmqctl', 'change_password', 'celery', '{s}']", "+ openssl pkcs12 -export -in c.pem -passout 'pass:{s}'",
     "+ openssl enc -aes-256-cbc -k '{s}' -in x", "+ openssl passwd -6 -salt ab12 '{s}'",
     "+ keytool -list -keystore ks.jks -storepass '{s}'", "+ jarsigner -keystore r.jks -keypass '{s}' app.jar r",
     "+ curl --cert /etc/ssl/c.pem:'{s}' https://x", "+ curl --pass '{s}' --key k.pem sftp://x/",
     "+ lftp -u ci,'{s}' sftp://x", "+ mount -t cifs //nas/d /mnt -o username=svc,password='{s}',vers=3.0",
     "+ az login -u ci@lab -p '{s}'", "+ papermill a.ipynb b.ipynb -p db_password '{s}'",
     "+ mosquitto_pub -u s -P '{s}' -t t -m 1", "+ snmpget -v3 -u mon -A '{s}' pdu 1.3.6",
     "+ ssh-keygen -t ed25519 -N '{s}' -f k", "+ 7z a '-p{s}' c.7z c/", "+ rdesktop -u adm -p '{s}' win-1",
     "+ xfreerdp /u:adm '/p:{s}' /v:win-1", "+ nmcli device wifi connect lab password '{s}'",
     "+ wpa_passphrase lab '{s}'", "+ htpasswd -nbB -C 12 admin '{s}'", "+ mongosh -u admin -p '{s}' db",
     "+ twine upload -u __token__ -p '{s}' dist/*", "+ podman login -u ci -p '{s}' reg",
     "+ unzip -P '{s}' data.zip")
_add("documented_password_variable", "Dv" + rand(10) + "!" + rand(2), "+ MYSQL_PWD='{s}' mysql -u root",
     "+ export SSHPASS='{s}'", "REDISCLI_AUTH={s}")
_add("pgpass_line", "Pp" + rand(10) + "!" + rand(2), "+ echo 'db:5432:runs:trainer:{s}' >> ~/.pgpass",
     "*:5432:*:replicator:{s}", "db.internal:5432:runs:trainer:{s}")
_add("numbered_reply", "Nr" + rand(10) + "#" + rand(2), '1) "requirepass"\n2) "{s}"',
     '1) "maxmemory"\n2) "0"\n3) "masterauth"\n4) "{s}"')
_add("url_password_percent_escaped", "Ue" + rand(4) + "%40" + rand(4) + "%2F" + rand(4) + "%3A" + rand(3),
     "sqlalchemy.url = postgresql://trainer:{s}@db:5432/runs", "redis://default:{s}@redis:6379/0 refused")
_add("url_password_raw_at", "Ua" + rand(5) + "@" + rand(8), "postgresql://trainer:{s}@db:5432/runs")

# The ninth round's printers (dev8): ML platform and SRE tools' startup lines, debug dumps and server logs.
_add("connection_token", rand(40), "Web UI available at http://localhost:8000?tkn={s}",
     "http://127.0.0.1:3000/?folder=/home/coder&tkn={s}")
_add("restricted_api_key", "Ra" + rand(14) + "*" + rand(3),
     "+ tritonserver --model-repository=/models --http-restricted-api=model-repository,shared-memory:admin-key={s}",
     "| http_restricted_api              | model-repository:admin-key={s}            |")
_add("redis_monitor_auth", "Rm" + rand(12) + "#" + rand(2), '1714557600.123456 [0 10.0.0.5:51234] "AUTH" "{s}"',
     '1714557600.223456 [0 10.0.0.6:40022] "AUTH" "trainer" "{s}"',
     '1714557600.323456 [0 10.0.0.7:40100] "HELLO" "3" "AUTH" "default" "{s}" "SETNAME" "ray-gcs"')
_add("psql_variable", "Pv" + rand(10) + "%" + rand(2), "\\set pw '{s}'\nALTER USER airflow PASSWORD :'pw';",
     "\\set db_password '{s}'")
_add("redis_acl_password", "Ra" + rand(14), '1714557600.4 [0 10.0.0.5:51234] "ACL" "SETUSER" "ci" "on" ">{s}" "~*"',
     "+ redis-cli ACL SETUSER worker on '>{s}' '~queue:*' +@list")
_add("aws_ecr_token", "eyJwYXlsb2FkIjoi" + rand(120, ALNUM + "+/") + "==", "{s}")
_add("honeycomb_key", rand(32, HEX), "X-Honeycomb-Team: {s}", "OTEL_EXPORTER_OTLP_HEADERS=x-honeycomb-team={s}")
_add("aws_configure_prompt", rand(40, ALNUM + "/+"), "AWS Secret Access Key [****************m9Zb]: {s}")
_add("gcp_secret_payload", rand(24, ALNUM) + "==", '{"payload": {"data": "{s}", "dataCrc32c": "2796612201"}}')
_add("azure_storage_account_key", rand(86, ALNUM + "+/") + "==", "key1       FULL           {s}",
     "2026-05-01T10:12:03.114155+00:00\tkey2\tFULL\t{s}")
_add("cerebras_key", "csk-" + rand(48, string.ascii_lowercase + string.digits), "cerebras judge ready ({s})")
_add("stdin_secret", "Ds" + rand(14), "+ printf '%s' '{s}' | docker secret create mistral -",
     "+ echo -n {s} | gcloud secrets versions add mistral --data-file=-")
_add("secret_store_command", "Vk" + rand(14), "+ vault kv put -mount=secret llm/providers mistral={s} region=eu",
     "+ fly secrets set MISTRAL={s} -a rag-api", "+ databricks secrets put-secret llm mistral --string-value {s}")
# The thirteenth round's formats (dev12): vendors' prefixes, webhooks whose path is the key, prompts and config files.
_add("service_api_key", "pcsk_" + rand(5) + "_" + rand(63), "pinecone client initialised with {s} env=us-east-1-aws",
     "neonctl: using napi_" + rand(64, string.ascii_lowercase + string.digits) + " and {s}")
_add("bedrock_api_key", "ABSK" + rand(128, ALNUM + "+/"), 'declare -x AWS_BEARER_TOKEN_BEDROCK="{s}"',
     "bedrock: calling converse with {s}")
_add("bitwarden_access_token", f"0.{rand(8, HEX)}-{rand(4, HEX)}-4{rand(3, HEX)}-a{rand(3, HEX)}-{rand(12, HEX)}."
     + rand(30) + ":" + rand(22, ALNUM + "+/") + "==", "+ bws secret list --access-token {s}")
_add("webhook_path", rand(26, string.ascii_lowercase + string.digits),
     "notify: POST https://chat.acme.io/hooks/{s} -> 200",
     "rocketchat: https://chat.acme.io/hooks/" + rand(24) + "/{s}")
_add("ifttt_webhook", rand(22, URLSAFE), "POST https://maker.ifttt.com/trigger/train_done/with/key/{s} 200")
_add("redis_cli_auth", "Rc" + rand(12) + "!" + rand(2), "127.0.0.1:6379> AUTH default {s}",
     "redis-master:6380[2]> auth {s}")
_add("curl_config_user", "Cu" + rand(12) + "^" + rand(2), '# ~/.curlrc\nuser = "ci:{s}"', '--proxy-user "svc:{s}"')
# the fourteenth round's vendor formats (gitleaks' rules, trufflehog's detectors), each family's rule row with one
_add("ci_service_token", "squ_" + rand(40, "0123456789abcdef"), "ci: uploading report with {s}",
     "+ sonar-scanner -Dsonar.token={s}")
_add("ci_service_token_octopus", "API-" + rand(26, "ABCDEFGHIJKLMNOPQRSTUVWXYZ0123456789"),
     "Octopus: the API key {s} you provided was not valid")
_add("saas_app_token", "pat-na1-" + f"{rand(8, HEX)}-{rand(4, HEX)}-{rand(4, HEX)}-{rand(4, HEX)}-{rand(12, HEX)}",
     "hubspot sync: token {s} lacks scope crm.objects.contacts.read")
_add("saas_app_token_ngrok", "2" + rand(26) + "_4" + rand(20), "+ ngrok config add-authtoken {s}")
_add("saas_app_token_asana", "2/" + rand(16, "0123456789") + "/" + rand(16, "0123456789") + ":" + rand(32, HEX),
     "ASANA_ACCESS_TOKEN={s}")
_add("payment_token", "EAAA" + rand(60, URLSAFE), "square: UNAUTHORIZED for {s}")
_add("vendor_access_token", "sl.u." + rand(140, URLSAFE), "dropbox: expired_access_token {s}")
_add("yandex_cloud_key", "AQVN" + rand(36, URLSAFE), "yc: api key {s} is not allowed for folder b1g0abc")
_add("oauth_client_secret", "s-s4t2ud-" + rand(64, HEX), "oauth: token exchange failed with {s}")
_add("sidekiq_credentials", rand(8, HEX) + ":" + rand(8, HEX), "BUNDLE_ENTERPRISE__CONTRIBSYS__COM={s}",
     "Fetching source index from https://{s}@enterprise.contribsys.com/")
_add("cli_secret_argument_snyk", f"{rand(8, HEX)}-{rand(4, HEX)}-{rand(4, HEX)}-{rand(4, HEX)}-{rand(12, HEX)}",
     "+ snyk auth {s}")
# GPU-cluster jobs' printers (the sixteenth probe round): curl's -u behind other short options, Node's rawHeaders, a
# kubeconfig shipped base64.
_add("cli_user_password_clustered", "Cu" + rand(18), "+ curl -fsSLu ml-bot:{s} -o model.tar https://artifacts.acme.io/m")
_add("raw_headers", rand(40), "rawHeaders: [ 'Host', 'api.acme.io', 'X-Api-Key', '{s}', 'Accept', '*/*' ]")
_add("base64_secret_text", base64.b64encode(("apiVersion: v1\nkind: Config\nusers:\n- name: ci\n  user:\n    token: "
                                             + rand(48) + "\n").encode()).decode(), "KUBE_CONFIG_DATA={s}")

# a map of secrets: the values under a key that names secrets, whatever their own key (secret_finders.secret_map)
_add("secret_map", "Pw" + rand(14), "job:\n  secrets:\n    db: {s}\n    region: us-east-1\n",
     "{'credentials': {'primary': '{s}',\n                 'user': 'etl'}}")

# Training and operations lines that look like secrets to a careless rule and must stay as they are.
NOT_SECRETS: list[str] = [
    "      api_key: os.environ/AZURE_API_KEY", "  api_key: ${oc.env:WANDB_API_KEY}",
    "wandb:   git_commit 607a30d783dfa663caf39e06633721c8d4cfcd7e", "| name        | trainer-ci |",
    "| token_count | 409600     |", "Secret name:\n  hf-token", "Number of tokens:\n  409600",
    "kubeadm join 10.0.0.1:6443 --token <token> --discovery-token-ca-cert-hash sha256:" + "7f" * 32,
    "+ dvc remote modify storage url s3://ckpts/llm", "+ kubectl create configmap runs --from-literal=user=trainer",
    "  Array cookie:            ac",  # AddressSanitizer's shadow-byte legend
    "{'loss': 1.234, 'grad_norm': 0.98, 'learning_rate': 2e-05, 'token_acc': 0.93, 'epoch': 0.5}",
    "token_acc: 0.93", "max_tokens=512", "--max-tokens 2048 --max_new_tokens=256",
    "tokenizer: meta-llama/Llama-2-7b-hf", "--tokenizer_name_or_path /models/tok",
    "pad_token: <pad>", "eos_token_id: 2", "Using pad_token, but it is not set yet.", "tokens_per_second: 1234.5",
    "See password_reset_url in the admin guide", "password_reset_url: https://id.example.com/reset",
    "secret_name: training-db-credentials", "secretName: wandb", "--password-file /run/secrets/db",
    "commit 3f786850e387550fdab836ed7e6dc881de23001b", "HEAD is now at 9fceb02d0ae598e95dc970b74767f19372d61af8",
    "run id 123e4567-e89b-12d3-a456-426614174000 started",
    "sha256:2cf24dba5fb0a30e26e83b2ac5b9e29e1b161e5c1fa7425e73043362938b9824",
    "Failed password for invalid user admin from 10.0.0.1 port 22 ssh2",
    "pam_unix(sshd:auth): authentication failure; logname= uid=0 euid=0 tty=NODEVssh ruser= rhost=1.2.3.4",
    "auth: enabled", "Basic usage: python train.py --help", "the bearer of this certificate",
    "PWD=/home/trainer/run", "see https://wandb.ai/team/llm/runs/hh9anoxx", "key_value_cache: enabled",
    "num_key_value_heads = 8", "monkey patching attention", "task-1234567890abcdefghijkl done", "disk-usage 93%",
    "checkpoint saved to s3://bucket/ckpt/step-1000/model.safetensors",
    "AccountName=ckpts;EndpointSuffix=core.windows.net", "usage: train.py [--password PASSWORD]",
    "Skipping AppWindowToken{df0798e token=Token{78af589 ActivityRecord{3b04890 u0 com.tencent.qt.qtl/.X}}}",
    "Bad activity token: android.os.BinderProxy@2bd79ce",
    "scikit-learn==1.4.2 sk-video==1.1.10", "TOKENIZERS_PARALLELISM=false", "NCCL_IB_DISABLE=1",
    "cache_key: step-1000-rank-3", "partition_key=4f9a2c1e8b7d6a5f4e3d2c1b0a9f8e7d", "DD_APP_KEY=<your-app-key>",
    "public_key: ssh-ed25519 AAAAC3NzaC1lZDI1NTE5AAAAIOMqqnkVzrm0SdG6UOoqKLsabgH5C9okWi0dh2l9GKJl",
    "docker run -p 8080:80 img", "psql -h db -p 5432 -U trainer", "mysql -u root -p runs", "ssh -p 2222 node-3",
    "GOOGLE_APPLICATION_CREDENTIALS=/var/secrets/google/credentials.json", "GET /x?key=step-1000",
    "EnvVar{Name:GOOGLE_APPLICATION_CREDENTIALS,Value:/var/secrets/google/key.json,ValueFrom:nil,}",
    "- name: EPOCHS\n  value: 3", "kind: ConfigMap\ndata:\n  lr: 0.001", "git clone https://heroku.com/app.git",
    "<tokenizer>bpe</tokenizer><max_tokens>512</max_tokens>", "+ git config --global user.name trainer",
    "+ echo $TOKEN | docker login -u bot --password-stdin reg", "password reset link: https://id.example.com/r",
    "Incorrect API key provided: sk-abc***xyz", "the key: value",
    "sort_key=created_at", "model_key: llama-7b-hf", "session_id=42",
    "WWW-Authenticate: Bearer realm=\"api\"", "auth=('svc', None)",
    "auth=(user, password)", '<add key="LogLevel" value="Information" />', "script: |\n  python train.py",
    "1 validation error for Config\nlr\n  Input should be a valid number [type=float_parsing, input_value='x']",
    "    train(model, epochs)\n          │      └ 3\n          └ <Model>", "GET /search?q=a%3Db%26c%3Dd",
    "apiVersion: v1", "<Cookie theme=dark for example.com/>",
    "spark://CoarseGrainedScheduler@bd6ddeaa3173:42367", "ssh://git@github.com/org/repo.git",
    "ALTER ROLE app PASSWORD NULL", "CREATE USER app WITH PASSWORD '${APP_PASSWORD}'", "htpasswd -v .htpasswd admin",
    "bypass: true", "- `hub_model_id`: org/model",
    "Password changed", "token    expired", "  keyring        24.3.0", "tokenizers     0.19.1", "passlib   1.7.4",
    '{"Name": "LOG_LEVEL", "Type": "String", "Value": "info"}', '{"key": "step-1000", "bucket": "ckpts"}',
    '{"user": "trainer", "key": "model.safetensors"}', "\x1b[36mtoken_acc\x1b[0m=\x1b[35m0.93\x1b[0m",
    "+ echo 3 | sudo tee /proc/sys/vm/drop_caches", "+ zip -r ckpt.zip ckpt/",
    "<name>fs.s3a.endpoint</name><value>http://minio:9000</value>", "+ export 'LOG_LEVEL=debug info'",
    "spark.hadoop.fs.azure.account.auth.type=OAuth",
    # short options that are no password, and commands that take none on the line
    "+ ls -p /data", "grep -P '\\d+ steps' train.log", "+ ssh -p 22 node-3 nvidia-smi", "+ python -W ignore train.py",
    "+ mysql -u root -p runs\nEnter password:", "+ rsync -P -a ckpt/ node-3:/data/",
    "+ mongosh -u admin -p --authenticationDatabase admin", "+ redis-cli --askpass -h redis ping",
    "+ openssl rsa -passin env:KEY_PASS -in key.pem", "+ openssl pkcs12 -passin file:/run/secrets/p12 -in c.p12",
    "+ openssl enc -d -aes-256-cbc -kfile /run/secrets/k -in x", "+ keytool -list -storepass:env STOREPASS -keystore k",
    "+ papermill in.ipynb out.ipynb -p lr 0.001 -p epochs 3 -p pad_token '<pad>'", "+ htpasswd -c /etc/.htpasswd admin",
    "+ ssh-keygen -t ed25519 -N '' -f /root/.ssh/id", "+ sshpass -f /run/secrets/pw ssh node-3",
    "+ sqlcmd -S db -E -Q 'SELECT 1'", "+ 7z a -p ckpt.7z ckpt/", "+ useradd -m -p \"$PASS_HASH\" trainer",
    "+ rabbitmqctl add_user celery \"$RABBIT_PASS\"", "+ az login --identity", "+ az vm create -n x -p 22",
    "+ docker login -u ci --password-stdin reg", "+ curl --cert /etc/ssl/client.pem https://x",
    "+ mount -t nfs -o vers=4,soft nas:/x /mnt", "+ ipmitool -I lanplus -H bmc -U ADMIN -E sdr list",
    "+ ldapsearch -x -W -D cn=admin -b dc=lab", "+ rdesktop -u adm -p - win-1", "mysql: [Warning] Using a password "
    "on the command line interface can be insecure.", "kernel: en0: BSSID changed to 0c:68:03:d6:9a:1f",
    '1) "maxmemory"\n2) "0"', '1) "requirepass"\n2) ""', "2607:f140:6000:8:c4f2:1a2b:3c4d:5e6f",
    "postgresql://trainer@db:5432/runs", "https://user@host/a@b",
    # printers' masks and public halves: SQLAlchemy's, kombu's and pip's masked URL passwords, pydantic's SecretStr,
    # a websocket handshake's nonce, an ACL token's accessor, a public JWK, Java packages that start with s.
    "Engine(postgresql+psycopg2://trainer:***@db:5432/runs)", "transport:   amqp://celery:**@rabbit:5672//",
    "Looking in indexes: https://ci:****@nexus.internal/simple",
    "settings=Settings(db_password=SecretStr('**********'))",
    "Sec-WebSocket-Key: dGhlIHNhbXBsZSBub25jZQ==", "secret_id_accessor    " + rand(8, HEX) + "-0000-4000-8000-"
    + rand(12, HEX), '{"kty":"RSA","kid":"k1","n":"' + rand(86, URLSAFE) + '","e":"AQAB"}',
    "at s.AbstractAutowireCapableBeanFactory.doCreateBean", "channels:\n  - https://conda.anaconda.org/t/<TOKEN>/ml",
    # and what the eighth round's printers write in a secret's place, or next to one's shape
    "*cmd* 'PASS ***************'", "--- PASS: TestShardByRank (0.00s)", " PASS  src/app.test.js (1.2 s)",
    "request headers=Headers({'host': 'api.internal', 'authorization': '[secure]'})",
    "=> Send header: Authorization: Basic <redacted>", "password:  24 bytes",
    "Access denied for user 'runs'@'10.0.3.11' (using password: YES)",
    "NAME      SECRETS   AGE\ndefault   1         5d", "GET /errors?code=404&lang=en HTTP/1.1",
    # and the ninth round's: azcopy's scrubbed SAS, redis MONITOR's other commands, psql variables naming no secret
    "INFO: Source: https://acct.blob.core.windows.net/ckpt?se=2024-06-01&sig=REDACTED&sp=rl",
    '1714557600.5 [0 10.0.0.5:51234] "GET" "emb:' + rand(40, HEX) + '"', "\\set ON_ERROR_STOP 'on'",
    "--http-restricted-api=model-repository:admin-key=${TRITON_ADMIN_KEY}",
    "llama_print_timings:        eval time =    1967.31 ms /   128 tokens (   65.06 tokens per second)",
    # and the thirteenth round's: references to where a secret is kept, ciphertext meant to be committed, a load
    # balancer's stickiness cookie, webhook paths that hold no key
    "fetched SecretId=arn:aws:secretsmanager:us-east-1:123456789012:secret:prod/ml/db-Ab3dEf",
    "WANDB_API_KEY=op://ml-infra/wandb/credential",
    "        - name: PGPASSWORD\n          value: {{ .Values.pg.password }}",
    "db:\n  password: ENC[AES256_GCM,data:" + rand(24, ALNUM + "+/") + ",iv:" + rand(43, ALNUM + "+/")
    + "=,tag:" + rand(22, ALNUM + "+/") + "==,type:str]",
    "spec:\n  encryptedData:\n    password: AgB" + rand(200, ALNUM + "+/") + "==",
    "< Set-Cookie: AWSALB=" + rand(80, ALNUM + "+/") + "=; Expires=Fri, 08 May 2026 10:14:22 GMT; Path=/",
    "see https://github.com/acme/trainer/settings/hooks/48213 and https://docs.acme.io/webhooks/incoming-setup",
    "+ wandb login --relogin", "+ http -a admin POST https://grafana.acme.io/api/dashboards/db",
    '<entry key="db.user">ml</entry>', "127.0.0.1:6379> GET session:42",
    # and the sixteenth round's: Comet's experiment key (an id), a sanitizer's mask, a CORS list of header names,
    # base64 of a config without a secret
    "COMET INFO: Experiment(project='llm', experiment_key='" + rand(32, HEX) + "')",
    "setting login settings: {'api_key': '***REDACTED***'}",
    "cors: { allowedHeaders: [ 'X-Api-Key', 'Authorization', 'Accept' ] }",
    "CONFIG_B64=" + base64.b64encode(b"model: llama-3-8b\nmax_tokens: 4096\npad_token: <pad>\n").decode(),
]
