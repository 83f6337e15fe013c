"""What a secret looks like: one row per kind, as data.

The kinds are the ones maintained scanners document (detect-secrets' plugins, gitleaks' and
trufflehog's detectors, the vendors' own token formats); ``source`` names where each is described.
The patterns are written here from those formats, not copied from any scanner's rule file.

A row finds its secrets one of two ways: ``pattern`` (a Python regex; the secret is its group ``s``,
or the whole match) or ``finder`` (the name of a function in :mod:`streams.assemble.secret_finders`
for what a regex says badly: PEM blocks, ``key = value`` assignments). ``needles`` are lower-case
literals that a text must contain for the row to find anything; a row whose kind has no literal
gives ``gate`` instead, a regex (Hyperscan's dialect, matched case-insensitively) that does the same.
With Hyperscan the gate is sharper: a ``pattern`` row is gated by the pattern itself (translated to
Hyperscan's dialect), a row with ``gate`` by that regex, and only the rest by their needles.
``check`` names a test the candidate must pass (see :data:`streams.assemble.secret_keys.CHECKS`).
``verbatim`` rows also run on the text as written when it holds percent-escapes: a URL's password may hold
``%40`` and ``%2F``, which decoded would end it early.
"""

from __future__ import annotations

import re
from dataclasses import dataclass

from streams.assemble.secret_commands import PROGRAMS
from streams.assemble.secret_finders import B64_WORD_NEEDLES
from streams.assemble.secret_keys import FOREIGN_KEY_WORDS, FOREIGN_PASSWORD_KEYWORDS


@dataclass(frozen=True, slots=True)
class SecretRule:
    kind: str
    needles: tuple[str, ...] = ()
    pattern: str = ""
    finder: str = ""
    gate: str = ""
    check: str = ""
    source: str = ""
    verbatim: bool = False  # also matched on the text as written, before its percent-escapes are decoded


# Token characters of the URL-safe base64 family most vendors use.
_T = r"[A-Za-z0-9_\-]"
# A secret-naming word inside a key, then a separator (= : := =>), or a --flag followed by a value.
_KW = (r"(pass|pwd|secret|token|auth|credential|creds|psk|cookie|sessionid|session_id|sessid|key|[_.\-]pat|bindpw"
       r"|rootpw|device_?code|code_?verifier|samlresponse|[\"'](?:sig|refresh|access|[th]?otp|mfa_?code)"
       # the password's, secret's and token's word in other languages (secret_keys.FOREIGN_KEY_WORDS)
       + "|" + FOREIGN_PASSWORD_KEYWORDS + ")")
# JSON loggers' quoted keys too short or common as words to look for elsewhere (secret_keys.GENERATED_ENDINGS and
# CODE_ENDINGS: a SAS signature, a token pair's refresh and access, a one-time code)
_QUOTED_KEY_NEEDLES = ('"sig"', '"refresh"', '"access"', '"otp"', '"totp"', '"hotp"', '"mfa',
                       "'sig'", "'refresh'", "'access'", "'otp'", '\\"sig\\"', '\\"refresh\\"',
                       '\\"access\\"', '\\"otp\\"')
_KW_NEEDLES = ("pass", "pwd", "secret", "token", "key", "auth", "credential", "creds", "psk", "cookie", "session",
               "sessid", "_pat", "-pat", ".pat", "bindpw", "rootpw", "device_code", "devicecode", "code_verifier",
               "codeverifier", "samlresponse", *_QUOTED_KEY_NEEDLES, *sorted(FOREIGN_KEY_WORDS))
# (Hyperscan scans UTF-8 bytes: \x80-\xff are a key's letters past ASCII, as in пароль_бд)
_ASSIGNMENT_GATE = (rf"{_KW}[A-Za-z0-9_.\-\x80-\xff]*(\\{{0,7}}[\"'`]\]?|\]|\[[0-9]{{1,4}}\])?[ \t]*(:=|=>|[:=])"
                    rf"|{_KW}[ \t]+[0-9]{{1,3}}[ \t]*[:=]"
                    rf"|{_KW}( [A-Za-z][A-Za-z0-9]*){{1,2}}[ \t]*[:=]"
                    # (a flag and its value as the items of an argv list: a repr's "', '", JSON.stringify's '","')
                    rf"|-[A-Za-z0-9_.\-]*{_KW}[A-Za-z0-9_.\-]*(\\?[\"'][ \t]*,[ \t]*|[ \t]+)[^ \t\-]"
                    rf"|(^|\n)[ \t]*[A-Za-z0-9_.\-]*{_KW}[A-Za-z0-9_.\-]*[ \t]+[^ \t\r\n]+[ \t]*\r?(\n|$)")

# An environment variable's name that names a secret (as key_strength judges a key, in one regex).
CREDENTIAL_VARIABLE = r"[A-Za-z0-9_]*(?i:token|key|secret|passw(?:or)?d|pass|pwd|credentials?)[A-Za-z0-9_]*"
# A traced command (bash xtrace's '+ ') whose output is a secret alone on its line: printenv NAME (printenv(1) prints
# the value only), kubectl get secret with a jsonpath or go-template into its data (decoded by base64 -d or not),
# argocd admin initial-password.
SECRET_PRINTING_COMMAND = (r"\++[ \t]+(?:printenv[ \t]+" + CREDENTIAL_VARIABLE
                           + r"|kubectl\b[^\r\n]{0,200}?\bget[ \t]+secrets?\b[^\r\n]{0,200}?\{\{?[ \t]*\.data\b"
                             r"[^\r\n]{0,200}|argocd[ \t]+admin[ \t]+initial-password\b[^\r\n]{0,200})[ \t]*\r?")
SECRET_PRINTING_NEEDLES = ("printenv", "get secret", "initial-password")
# (the gate's needles: words other rows already look for, so that the pure-Python gate has few more to try)
_PRINTING_GATE_NEEDLES = ("printenv", "secret", "password")

# A program of the command table (secret_commands) as a word, followed by its arguments (a blank, or an argv
# list's next item).
_COMMAND_GATE = (r"(^|[^A-Za-z0-9_.\-])(" + "|".join(re.escape(p) for p in PROGRAMS) + r")(\.exe)?['\"]?,?[ \t]")

DEFAULT_RULES: tuple[SecretRule, ...] = (
    # -- blocks and assignments (functions) -------------------------------------------------------------
    SecretRule("private_key", ("private key",), finder="pem",
               source="detect-secrets PrivateKeyDetector; gitleaks private-key"),
    SecretRule("assignment", gate=_ASSIGNMENT_GATE,
               needles=_KW_NEEDLES,
               finder="assignment",
               source="detect-secrets KeywordDetector; gitleaks generic-api-key; env dumps, CLI flags, headers"),
    SecretRule("secret_map", ("secrets", "credentials", "creds", "passwords", "auth", "tokens", "apikeys",
                              "api_keys", "api-keys"), finder="secret_map",
               gate=r"(secrets|credentials|creds|passwords|auth|tokens|api[_\-]?keys)[\"']?[ \t]*"
                    r"(:[ \t]*(\{|\r?\n)|\])",
               source="detect-secrets KeywordDetector over a map of secrets: the values under a key that names "
                      "secrets (yaml.dump, pprint, json.dumps(indent=...), a TOML table)"),
    SecretRule("name_value_pair", _KW_NEEDLES, finder="name_value_pair",
               gate=rf"[(\[][ \t]*\"?b?[\"'][A-Za-z0-9_.\-]*{_KW}[A-Za-z0-9_.\-]*[\"']\"?[ \t]*,[ \t]*\"?b?[\"']"
                    rf"|\{{[ \t]*[A-Za-z0-9_@]*{_KW}[A-Za-z0-9_@]*,[ \t]*(<<)?\""
                    rf"|\([A-Za-z0-9_.\-]*{_KW}[A-Za-z0-9_.\-]*,[^\s()]"
                    rf"|configuration property: [A-Za-z0-9_.\-]*{_KW}[A-Za-z0-9_.\-]*, "
                    rf"|(setenv|ENV)[ \t]+[A-Za-z0-9_]*{_KW}[A-Za-z0-9_]*[ \t]+[^\s]",
               source="detect-secrets KeywordDetector over (name, value) pairs: raw headers of ASGI, h11 and httpx, "
                      "query parameters before urlencode; csh's and Environment Modules' setenv NAME value, a "
                      "Dockerfile's ENV NAME value"),
    SecretRule("name_value", ("value",), finder="name_value",
               gate=rf"(name|key)[\"']?[ \t]*[:=][ \t]*[\"']?[A-Za-z0-9_.\-]*{_KW}[A-Za-z0-9_.\-]*[\"']?[ \t]*(,|\n| )"
                    r"([ \t]*,?[ \t]*\r?\n[ \t]*\"[A-Za-z]+\"[ \t]*:[^\r\n]*){0,3}[ \t\r\n,]*([+~\-][ \t]+)?"
                    r"[\"']?(parameter)?value",
               source="detect-secrets KeywordDetector over name/value records (k8s env, ECS, SSM, terraform plan's "
                      "set and env blocks, CloudFormation's ParameterKey/ParameterValue as describe-stacks prints "
                      "them and --parameters takes them: https://docs.aws.amazon.com/AWSCloudFormation/latest/"
                      "APIReference/API_Parameter.html); gitleaks nuget-config-password (XML <add key=... value=...>)"),
    SecretRule("record_value", ('"value"', '"key"', '"encoded"'), finder="record_value",
               gate=r"\"(value|key|encoded)\"[ \t]*:[ \t]*\"",
               source="detect-secrets KeywordDetector over records that name their value: aws ssm get-parameter, "
                      "az storage account keys list, terraform output -json, kaggle.json, Elasticsearch's create API "
                      "key response (encoded)"),
    SecretRule("k8s_secret", ("secret",), finder="k8s_secret", gate=r"kind[\"']?[ \t]*:[ \t]*[\"']?Secret",
               source="gitleaks kubernetes-secret-yaml"),
    SecretRule("keyed_value", ("</", "config", "input_value=", "value:"), finder="keyed_value",
               gate=rf"<[A-Za-z0-9_:.\-]*{_KW}[A-Za-z0-9_:.\-]*[^<>]*>[^<]+</|config[a-z:]*[ \t]+set[ \t]"
                    rf"|<name>[^<]*{_KW}[^<]*</name>"
                    rf"|<[A-Za-z_][A-Za-z0-9_:.\-]*[ \t][^<>]*(key|name)=[\"'][^\"'<>]*{_KW}[^<>]*>[^<]+</"
                    rf"|{_KW}[A-Za-z0-9_]*[ \t]*\{{([ \t]*\r?\n)?[ \t]*value:[ \t]*\""
                    r"|input_value="
                    rf"|{_KW}[A-Za-z0-9_.\-]*:[ \t]*\r?\n[ \t]+desc:",
               source="detect-secrets KeywordDetector (XML elements, and elements named by a key or name attribute: "
                      "Java's Properties.storeToXML, Spring's <entry key>); aws/npm/yarn/pip/git config set; "
                      "pydantic ValidationError's input_value under the field's name; protobuf text format's "
                      "wrapper messages (name { value: \"...\" }); W&B's config.yaml (name:, desc:, value:)"),
    SecretRule("table_row", _KW_NEEDLES, finder="table_row",
               gate=rf"(^|\n)[ \t]*\|\|?[^|\r\n]*{_KW}[^|\r\n]*\|[ \t]*[^| \t\r\n]+[ \t]*(\|[^|\r\n]+)*\|\|?[ \t]*\r?"
                    r"(\n|$)",
               source="detect-secrets KeywordDetector over two-column tables (| Field | Value |): cliff's show "
                      "output (openstack), confluent api-key create, prettytable and tabulate dumps, the AWS CLI's "
                      "--output table (|| Key | Value ||)"),
    SecretRule("column_table", ("secret", "token", "password"), finder="column_table",
               gate=r"(  |\t)(secret|token|password)[ \t]*\r?\n[^\r\n]*[A-Za-z0-9]",
               source="detect-secrets KeywordDetector over column tables: the machine-made cell under a heading "
                      "that names a secret (twilio api:core:keys:create)"),
    SecretRule("jwk_private", ('"kty"',), finder="jwk_private",
               source="RFC 7517/7518 JSON Web Keys: the private members (d, p, q, dp, dq, qi; an oct key's k) of a "
                      "key printed by jose or step crypto jwk"),
    # Mail and key-file printers whose credential has no key name before it.
    SecretRule("smtp_auth", ("auth plain", "auth login", "auth xoauth2"),
               r"\bAUTH (?:PLAIN|LOGIN|XOAUTH2) (?P<s>[A-Za-z0-9+/]{8,}={0,2})",
               source="RFC 4954 AUTH with an initial response, as smtplib's set_debuglevel prints its send: lines "
                      "(PLAIN: base64 of NUL user NUL password, RFC 4616; XOAUTH2: the bearer token)"),
    SecretRule("smtp_auth", ("ugfzc3dvcmq6",),
               r"\b334[ \t]+UGFzc3dvcmQ6[^\r\n]{0,40}(?:\r?\n[^\r\n]{0,40}\bUGFzc3dvcmQ6[^\r\n]{0,40}){0,2}\r?\n"
               r"[ \t]*(?:send: b?'|[A-Z]: |[<>~*\-]+[ \t]+)?(?P<s>[A-Za-z0-9+/]{4,}={0,2})(?![A-Za-z0-9+/=])",
               source="RFC 4954 AUTH LOGIN: the client's base64 answer on the line after the server's 334 UGFzc3dvcmQ6 "
                      "('Password:'), in one event: swaks' ' -> ' lines, curl -v's '> ', smtplib's send:"),
    SecretRule("login_command", ("pass",),
               r"(?m)(?:\*cmd\* b?['\"]|^[ \t]*(?:>|->|-->|C:)[ \t]*)PASS[ \t]+(?P<s>[^\s'\"]+)",
               check="not_placeholder",
               source="POP3 (RFC 1939) and FTP (RFC 959) PASS commands as poplib's and ftplib's set_debuglevel print "
                      "them (*cmd* 'PASS x'; ftplib masks its own) and curl -v's '> PASS x'"),
    SecretRule("login_command", ("login ",),
               r"(?:>|C:)[ \t]*b?['\"]?[A-Za-z0-9]{1,12} LOGIN (?:\"(?:\\.|[^\"\\\r\n])*\"|[^\s\"'{}]+) "
               r"(?P<s>\"(?:\\.|[^\"\\\r\n])+\"|[^\s\"']+)", check="not_placeholder",
               source="IMAP LOGIN user password (RFC 3501 6.2.3) as imaplib's debug prints it (> b'TAG LOGIN user "
                      "\"pw\"'), curl -v's '> A001 LOGIN user pw'"),
    SecretRule("login_command", ("auth",), r"\baddauth[ \t]+digest[ \t]+[^\s:]+:(?P<s>\S+)",
               source="ZooKeeper's zkCli addauth digest user:password (ZooKeeper Programmer's Guide: ACL schemes)"),
    SecretRule("ipsec_psk", ("psk", "auth"),
               r"(?m)^[^\r\n#]*:[ \t]*(?:PSK|XAUTH|EAP)[ \t]+(?P<q>[\"'])(?P<s>[^\"'\r\n]+)(?P=q)",
               source="strongSwan/libreswan ipsec.secrets: selectors : PSK \"secret\" (ipsec.secrets(5))"),
    SecretRule("command_output", _PRINTING_GATE_NEEDLES,
               r"(?m)^" + SECRET_PRINTING_COMMAND + r"\n(?:\++[ \t][^\r\n]*\r?\n)*(?P<s>\S{6,})[ \t]*\r?$",
               source="gitleaks generic: the output of a traced command that prints a secret (printenv NAME, kubectl "
                      "get secret -o jsonpath='{.data.x}' | base64 -d, argocd admin initial-password) in one event "
                      "(as events of their own: Redactor.output)"),
    SecretRule("fish_variable", ("token", "key", "secret", "pass", "pwd", "credential"),
               r"(?m)^\$" + CREDENTIAL_VARIABLE + r"(?:\[[0-9]{1,3}\])?:[ \t](?:originally inherited as[ \t])?"
               r"\|(?P<s>[^|\r\n]+)\|[ \t]*\r?$", check="not_placeholder",
               source="fish's set --show: '$NAME[1]: |value|' and '$NAME: originally inherited as |value|'"),
    SecretRule("composer_auth", ("auth", "token", "bearer"),
               r"\"(?:github-oauth|gitlab-token|gitlab-oauth|bitbucket-oauth|bearer)\"[ \t]*:[ \t]*\{\s*"
               r"\"[^\"\r\n]{1,200}\"[ \t]*:[ \t]*\"(?P<s>[^\"\r\n]+)\"", check="not_placeholder",
               source="composer auth.json (getcomposer.org: authentication): tokens in maps keyed by host"),
    SecretRule("jwt", ("eyj",), finder="folded_jwt",
               source="detect-secrets JwtTokenDetector over a JWT a console renderer folded onto indented continuation "
                      "lines (rich's RichHandler into a file)"),
    SecretRule("putty_private_lines", ("private-lines:",),
               r"(?m)^Private-Lines: [0-9]{1,3}[ \t]*\r?\n"
               r"(?P<s>[A-Za-z0-9+/]+={0,2}(?=[ \t]*\r?$)(?:[ \t]*\r?\n[A-Za-z0-9+/]+={0,2}(?=[ \t]*\r?$))*)",
               source="PuTTY-User-Key-File-2/3 (PuTTY docs, appendix C): the base64 lines after Private-Lines: N, "
                      "in one event (its lines as events of their own: Redactor.output)"),
    SecretRule("postfix_sasl_passwd", ("]",),
               r"(?m)^[ \t]*\[[A-Za-z0-9.\-]+\](?::[0-9]{1,5})?[ \t]+[^\s:]+:(?P<s>\S+)[ \t]*\r?$",
               check="not_placeholder",
               source="postfix sasl_passwd map lines: [relayhost]:port user:password (postfix SASL_README)"),
    SecretRule("botocore_signature", ("signature:",), r"(?m)\bSignature:\r?\n(?P<s>[0-9a-f]{64})\r?$",
               source="botocore.auth SigV4Auth.add_auth: logger.debug('Signature:\\n%s', signature)"),
    SecretRule("conda_channel_token", ("/t/",), r"\bhttps?://[^\s/'\"]+/t/(?P<s>[A-Za-z0-9_\-]{16,})/",
               check="generated_with_digits",
               source="anaconda.org token channels https://conda.anaconda.org/t/<TOKEN>/<channel> (anaconda.org "
                      "docs; conda prints them in config --show channels)"),
    SecretRule("diagnosed", ("└",), finder="diagnosed",
               source="detect-secrets KeywordDetector over loguru's and better-exceptions' diagnose (values "
                      "printed under the variable names of the frame's source line)"),
    # A secret store's create command reading the value from stdin: echo/printf VALUE | the command.
    SecretRule("stdin_secret", ("secret create", "secrets create", "versions add"),
               r"\b(?:echo[ \t]+(?:-[neE]+[ \t]+)?|printf[ \t]+(?:(?:'%s'|\"%s\")[ \t]+)?)"
               r"['\"]?(?P<s>[^\s'\"|;&]+)['\"]?[ \t]*\|[ \t]*(?:sudo[ \t]+)?"
               r"(?:(?:docker|podman)[ \t]+secret[ \t]+create|gcloud[ \t]+secrets[ \t]+(?:create|versions[ \t]+add))\b",
               check="not_placeholder",
               source="docker secret create NAME - and podman's (the value from stdin; Docker CLI reference), gcloud "
                      "secrets create|versions add NAME --data-file=- (gcloud reference)"),
    SecretRule("stdin_password", ("password-stdin", "sudo", "chpasswd"),
               r"\becho\s+(?:-[neE]+\s+)?['\"]?(?P<s>[^\s'\"|]+)['\"]?\s*\|[^\n|]*"
               r"(?:--password-stdin|\bsudo\s+(?:-[A-Za-z]+\s+)*-[A-Za-z]*S|\bchpasswd\b)",
               check="not_placeholder", source="docker/podman/helm login --password-stdin echoes (gitleaks generic); "
                                               "sudo(8) -S and chpasswd(8), which read the password from stdin"),
    # -- cloud providers --------------------------------------------------------------------------------
    SecretRule("aws_access_key_id", ("akia", "asia", "abia", "acca", "a3t"),
               r"\b(?:A3T[A-Z0-9]|AKIA|ASIA|ABIA|ACCA)[A-Z0-9]{16}\b",
               source="detect-secrets AWSKeyDetector; gitleaks aws-access-token"),
    SecretRule("google_api_key", ("aiza",), rf"\bAIza{_T}{{35}}(?!{_T})",
               source="gitleaks gcp-api-key; trufflehog GoogleAPIKey"),
    SecretRule("google_oauth_token", ("ya29.",), rf"\bya29\.{_T}{{20,}}", source="trufflehog GoogleOauth2"),
    SecretRule("azure_sas_signature", ("sig=", "signature="),
               r"(?i)[?&;](?:sig|signature|x-amz-signature|x-goog-signature|x-amz-security-token)=(?P<s>[^&\s#'\"]+)",
               check="not_placeholder",  # azcopy's job log scrubs its own SAS to sig=REDACTED
               source="detect-secrets AzureStorageKeyDetector; gitleaks azure-storage SAS; AWS/GCS signed URLs"),
    # A storage account key is 64 random bytes (88 base64 characters); the CLIs print the list of them as a table or
    # tsv row: the key's name (key1/key2, kerb1/kerb2 with $expand=kerb), then the permission and the value (az storage
    # account keys list -o table|tsv) or the value first (PowerShell's Get-AzStorageAccountKey).
    SecretRule("azure_storage_account_key", ("key1", "key2", "kerb1", "kerb2"),
               r"\b(?:key|kerb)[12][ \t]+(?:(?:FULL|READ|Full|Read)[ \t]+)?"
               r"(?P<s>[A-Za-z0-9+/]{86}==)(?![A-Za-z0-9+/=])",
               source="az storage account keys list (-o table, -o tsv) and Get-AzStorageAccountKey: the keyName, "
                      "permissions and value columns of the Storage listKeys response"),
    SecretRule("databricks_token", ("dapi",), r"\bdapi[0-9a-f]{32}(?:-\d+)?\b", source="gitleaks databricks-api-token"),
    # -- code hosting and package registries ------------------------------------------------------------
    SecretRule("github_token", ("ghp_", "gho_", "ghu_", "ghs_", "ghr_", "github_pat_"),
               r"\b(?:gh[pousr]_[A-Za-z0-9]{36,255}|github_pat_[A-Za-z0-9_]{22,255})\b",
               source="detect-secrets GitHubTokenDetector; gitleaks github-pat, github-fine-grained-pat"),
    SecretRule("gitlab_token", ("glpat-", "gldt-", "glrt-", "glptt-", "glft-", "glimt-", "glcbt-", "glsoat-",
                                "gloas-", "glagent-", "glffct-", "gr1348941"),
               rf"\b(?:gl(?:pat|dt|rt|ptt|ft|imt|cbt|soat|oas|agent|ffct)-{_T}{{20,}}(?:\.[0-9a-z]{{9}}\b)?"
               rf"|GR1348941{_T}{{20}})",
               source="detect-secrets GitLabTokenDetector; gitleaks gitlab-pat, gitlab-pat-routable (payload.crc), "
                      "gitlab-rrt and the other gl*- tokens"),
    SecretRule("npm_token", ("npm_",), r"\bnpm_[A-Za-z0-9]{36}\b", source="detect-secrets NpmDetector; gitleaks npm"),
    SecretRule("pypi_token", ("pypi-",), rf"\bpypi-AgE{_T}{{50,}}",
               source="detect-secrets PypiTokenDetector; gitleaks pypi-upload-token"),
    # -- model hubs and AI APIs -------------------------------------------------------------------------
    SecretRule("huggingface_token", ("hf_", "api_org_"), r"\b(?:hf|api_org)_[A-Za-z0-9]{30,}\b",
               source="gitleaks huggingface-access-token, huggingface-organization-api-token"),
    SecretRule("anthropic_key", ("sk-ant-",), rf"\bsk-ant-{_T}{{20,}}", source="gitleaks anthropic-api-key"),
    SecretRule("openai_key", ("sk-",), rf"\bsk-(?:proj-|svcacct-|admin-|None-)?{_T}{{20,}}",
               source="detect-secrets OpenAIDetector; gitleaks openai-api-key"),
    SecretRule("nvidia_api_key", ("nvapi-",), rf"\bnvapi-{_T}{{40,}}", source="trufflehog NVAPI (NGC)"),
    SecretRule("replicate_token", ("r8_",), r"\br8_[A-Za-z0-9]{37}\b", source="trufflehog Replicate"),
    SecretRule("groq_key", ("gsk_",), r"\bgsk_[A-Za-z0-9]{48,}\b", source="trufflehog Groq"),
    SecretRule("cerebras_key", ("csk-", "csk_"), r"\bcsk[-_][A-Za-z0-9]{32,}\b",
               source="Cerebras Inference API keys (CEREBRAS_API_KEY, created in cloud.cerebras.ai: csk- and a "
                      "generated tail; the SDKs also take csk_)"),
    # -- chat, mail, payments ---------------------------------------------------------------------------
    SecretRule("slack_token", ("xox", "xapp-"), r"\b(?:xox[abeoprs]|xapp|xoxe\.xox[bp])-[A-Za-z0-9\-.]{10,}",
               source="detect-secrets SlackDetector; gitleaks slack-bot-token, slack-user-token, slack-app-token"),
    SecretRule("slack_webhook", ("hooks.slack.com",),
               r"hooks\.slack\.com/(?:services|workflows|triggers)/(?P<s>[A-Za-z0-9+/_\-]{16,})",
               source="detect-secrets SlackDetector; gitleaks slack-webhook-url"),
    SecretRule("discord_webhook", ("discord",), r"discord(?:app)?\.com/api/webhooks/\d+/(?P<s>[\w\-]{20,})",
               source="gitleaks discord-webhook (trufflehog DiscordWebhook)"),
    SecretRule("discord_bot_token", gate=r"[MNO][A-Za-z0-9_\-]{23,25}\.[A-Za-z0-9_\-]{6}\.[A-Za-z0-9_\-]{27}",
               pattern=r"\b[MNO][A-Za-z\d_\-]{23,25}\.[A-Za-z\d_\-]{6}\.[A-Za-z\d_\-]{27,38}\b",
               source="detect-secrets DiscordBotTokenDetector"),
    SecretRule("telegram_bot_token", gate=r"[0-9]{8,10}:[A-Za-z0-9_\-]{35}",
               pattern=rf"(?<!\d)\d{{8,10}}:{_T}{{35}}(?!{_T})",  # the whole token: the bot id is part of it
               source="detect-secrets TelegramBotTokenDetector"),
    SecretRule("twilio_key", gate=r"(AC|SK)[0-9a-f]{32}", pattern=r"\b(?:AC|SK)[0-9a-f]{32}\b",
               source="detect-secrets TwilioKeyDetector; gitleaks twilio-api-key"),
    SecretRule("sendgrid_key", ("sg.",), rf"\bSG\.{_T}{{22}}\.{_T}{{43}}(?!{_T})",
               source="detect-secrets SendGridDetector; gitleaks sendgrid-api-token"),
    SecretRule("mailchimp_key", ("-us",), r"\b[0-9a-f]{32}-us\d{1,2}\b",
               source="detect-secrets MailchimpDetector; gitleaks mailchimp-api-key"),
    SecretRule("stripe_key", ("sk_live_", "sk_test_", "rk_live_", "rk_test_", "whsec_"),
               r"\b(?:[sr]k_(?:live|test)_[A-Za-z0-9]{16,}|whsec_[A-Za-z0-9+/=]{24,})",
               source="detect-secrets StripeDetector; gitleaks stripe-access-token"),
    SecretRule("square_token", ("sq0atp-", "sq0csp-"), rf"\bsq0(?:atp|csp)-{_T}{{22,60}}",
               source="detect-secrets SquareOAuthDetector"),
    # -- more vendor token families: a published prefix and alphabet each ---------------------------------
    SecretRule("alibaba_access_key_id", ("ltai",), r"\bLTAI[A-Za-z0-9]{20}\b", source="gitleaks alibaba-access-key-id"),
    SecretRule("azure_ad_client_secret", ("q~",), gate=r"[0-9]Q~[A-Za-z0-9_~.\-]{31,34}",
               pattern=r"(?<![A-Za-z0-9_~.\-])[A-Za-z0-9_~.]{3}\dQ~[A-Za-z0-9_~.\-]{31,34}(?![A-Za-z0-9_~.\-])",
               source="gitleaks azure-ad-client-secret"),
    SecretRule("google_oauth_client_secret", ("gocspx-",), rf"\bGOCSPX-{_T}{{28,}}",
               source="gitleaks gcp client secret (GOCSPX-); GitHub secret scanning google_oauth_client_secret"),
    SecretRule("google_refresh_token", ("1//0", "1%2f%2f0"), rf"(?<![\w/%])1(?://|%2[Ff]%2[Ff])0{_T}{{40,}}",
               source="trufflehog GoogleOauth2 refresh; also as a form body writes it (refresh_token=1%2F%2F0..., the "
                      "token request gcloud --log-http and oauthlib's debug print)"),
    SecretRule("digitalocean_token", ("do_v1_", "dop_v1_", "doo_v1_", "dor_v1_"), r"\bdo[opr]_v1_[a-f0-9]{64}\b",
               source="gitleaks digitalocean-pat, digitalocean-access-token, digitalocean-refresh-token"),
    SecretRule("docker_hub_token", ("dckr_pat_", "dckr_oat_"), rf"\bdckr_(?:pat|oat)_{_T}{{24,}}",
               source="GitHub secret scanning docker_personal_access_token; trufflehog DockerHub"),
    SecretRule("hashicorp_vault_token", ("hvs.", "hvb.", "hvr."), rf"\bhv[sbr]\.{_T}{{24,}}",
               source="gitleaks hashicorp-vault-service-token, vault-batch-token"),
    # Vault before 1.10: s.<24> service tokens (b. batch, r. recovery), as vault token lookup prints in its id row.
    SecretRule("hashicorp_vault_legacy_token", ("s.", "b.", "r."),
               r"(?<![\w.\-/])[sbr]\.(?P<s>[A-Za-z0-9]{24})(?![\w.\-])",
               check="generated_with_digits", source="Vault token formats (vault docs: tokens, s./b./r. prefixes)"),
    SecretRule("terraform_cloud_token", ("atlasv1",), r"\b[A-Za-z0-9]{14}\.atlasv1\.[A-Za-z0-9_\-=]{60,}",
               source="gitleaks hashicorp-tf-api-token"),
    SecretRule("grafana_token", ("glsa_", "glc_", "eyjrijoi"),
               r"\b(?:glsa_[A-Za-z0-9]{32}_[A-Fa-f0-9]{8}|glc_[A-Za-z0-9+/]{32,400}={0,2}|eyJrIjoi[A-Za-z0-9]{70,400}={0,2})",
               source="gitleaks grafana-service-account-token, grafana-cloud-api-token, grafana-api-key"),
    SecretRule("newrelic_key", ("nrak-", "nrjs-", "nrii-", "nral-"),
               r"\b(?:NRAK-[A-Za-z0-9]{27}|NRJS-[a-f0-9]{19}|NRII-[A-Za-z0-9\-]{32}|NRAL-[A-Za-z0-9]{20,})\b",
               source="gitleaks new-relic-user-api-key, new-relic-browser-api-token, new-relic-insert-key"),
    SecretRule("sentry_token", ("sntrys_", "sntryu_"), r"\bsntry[su]_[A-Za-z0-9+/=_]{40,}",
               source="gitleaks sentry-org-token, sentry-user-token"),
    SecretRule("shopify_token", ("shpat_", "shpss_", "shpca_", "shppa_"), r"\bshp(?:at|ss|ca|pa)_[a-fA-F0-9]{32}\b",
               source="gitleaks shopify-access-token, shopify-shared-secret, shopify-custom-access-token"),
    SecretRule("linear_api_key", ("lin_api_",), r"\blin_api_[A-Za-z0-9]{40}\b", source="gitleaks linear-api-key"),
    SecretRule("mailgun_key", ("key-", "pubkey-"), r"\b(?:pub)?key-[a-f0-9]{32}\b",
               source="gitleaks mailgun-private-api-token, mailgun-pub-key"),
    SecretRule("pulumi_token", ("pul-",), r"\bpul-[a-f0-9]{40}\b", source="gitleaks pulumi-api-token"),
    SecretRule("doppler_token", ("dp.pt.", "dp.st.", "dp.sa.", "dp.ct.", "dp.scim.", "dp.audit."),
               r"\bdp\.(?:pt|st|sa|ct|scim|audit)\.[A-Za-z0-9_\-.]{40,}", source="gitleaks doppler-api-token"),
    SecretRule("atlassian_api_token", ("atatt3",), r"\bATATT3[A-Za-z0-9_\-=]{50,}",
               source="gitleaks atlassian-api-token"),
    SecretRule("age_secret_key", ("age-secret-key-1",), r"\bAGE-SECRET-KEY-1[QPZRY9X8GF2TVDW0S3JN54KHCE6MUA7L]{58}\b",
               source="gitleaks age-secret-key"),
    SecretRule("dynatrace_token", ("dt0c01.",), r"\bdt0c01\.[A-Z0-9]{24}\.[A-Z0-9]{64}\b",
               source="gitleaks dynatrace-api-token"),
    SecretRule("postman_key", ("pmak-",), r"\bPMAK-[a-f0-9]{24}-[a-f0-9]{34}\b", source="gitleaks postman-api-token"),
    SecretRule("notion_token", ("ntn_", "secret_"), r"\b(?:ntn_[0-9]{11}[A-Za-z0-9]{35}|secret_[A-Za-z0-9]{43})\b",
               source="GitHub secret scanning notion_integration_token"),
    SecretRule("langsmith_key", ("lsv2_",), r"\blsv2_(?:pt|sk)_[a-f0-9]{32}_[a-f0-9]{10}\b",
               source="GitHub secret scanning langchain_api_key"),
    SecretRule("ai_service_key", ("xai-", "pplx-", "tvly-", "sk-or-"),
               r"\b(?:xai-[A-Za-z0-9]{60,}|pplx-[A-Za-z0-9]{40,}|tvly-(?:dev-)?[A-Za-z0-9]{24,})\b",
               source="GitHub secret scanning xai_api_key, perplexity_api_key, tavily_api_key"),
    SecretRule("tailscale_key", ("tskey-",), r"\btskey-(?:api|auth|client|webhook)?-?[A-Za-z0-9]{8,}-[A-Za-z0-9]{16,}",
               source="GitHub secret scanning tailscale_api_key"),
    SecretRule("package_registry_token", ("rubygems_", "oy2", "clojars_"),
               r"\b(?:rubygems_[a-f0-9]{48}|oy2[a-z0-9]{43}|CLOJARS_[a-z0-9]{60})\b",
               source="gitleaks rubygems-api-token, nuget-api-key, clojars-api-token"),
    SecretRule("saas_token", ("figd_", "pnu_", "sbp_", "pscale_", "fo1_", "ops_eyj", "xkeysib-", "sk.eyj"),
               r"\b(?:figd_[\w\-]{40}|pnu_[A-Za-z0-9]{36}|sbp_[a-f0-9]{40}|pscale_(?:tkn|pw|oauth)_[\w=.\-]{32,64}"
               r"|fo1_[\w\-]{43}|ops_eyJ[A-Za-z0-9+/=]{100,}|xkeysib-[a-f0-9]{64}-[A-Za-z0-9]{16}"
               r"|sk\.eyJ[A-Za-z0-9_\-]{50,}\.[A-Za-z0-9_\-]{20,})",
               source="gitleaks figma, prefect, supabase, planetscale, flyio, 1password, sendinblue, "
                      "mapbox secret token"),
    SecretRule("service_api_key", ("pcsk_", "napi_", "bkua_", "absk"),
               r"\b(?:pcsk_[A-Za-z0-9]{5}_[A-Za-z0-9]{50,}|napi_[a-z0-9]{64}|bkua_[a-f0-9]{40}"
               r"|ABSK[A-Za-z0-9+/]{60,}={0,2})(?![A-Za-z0-9_])",
               source="GitHub secret scanning pinecone_api_key (pcsk_), neon_api_key (napi_); Buildkite's API access "
                      "tokens (bkua_); Amazon Bedrock API keys (AWS_BEARER_TOKEN_BEDROCK: ABSK and base64)"),
    SecretRule("bitwarden_access_token",
               gate=r"0\.[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}\.[A-Za-z0-9]{30}:",
               pattern=r"(?<![\w.])0\.[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}\.[A-Za-z0-9]{30}:"
                       r"[A-Za-z0-9+/]{22}={0,2}",
               source="Bitwarden Secrets Manager machine-account access tokens (BWS_ACCESS_TOKEN: "
                      "0.<access token id>.<client secret>:<encryption key>)"),
    SecretRule("airtable_token", ("pat",), r"\bpat[A-Za-z0-9]{14}\.[a-f0-9]{64}\b",
               source="gitleaks airtable-personnal-access-token"),
    SecretRule("facebook_token", ("eaa",), r"\bEAA[MC][A-Za-z0-9]{100,}", source="gitleaks facebook-access-token"),
    # -- prefixed tokens of gitleaks' config/gitleaks.toml (one row per family of published prefixes) ----------
    SecretRule("platform_token", ("sha256~", "hrku-aa", "pat.", "sat.", "sgp_", "tk-us-", "dnkey-"),
               r"\b(?:sha256~[\w\-]{43}(?![\w\-])|HRKU-AA[\w\-]{58}|[ps]at\.[\w\-]{22}\.[A-Za-z0-9]{24}\.[A-Za-z0-9]{20}"
               r"|sgp_(?:[a-fA-F0-9]{16}_|local_)?[a-fA-F0-9]{40}\b|tk-us-[\w\-]{48}|dnkey-[\w=\-]{26}-[\w=\-]{52})",
               source="gitleaks openshift-user-token, heroku-api-key-v2, harness-api-key, sourcegraph-access-token, "
                      "scalingo-api-token, defined-networking-api-token"),
    SecretRule("devtool_token", ("ico-", "rdme_", "akcp", "cmvmd", "4b1d", "_mmk", "sm_pat_", "sm_aat_", "sm_sat_",
                                 "p8e-", "a3-", "v1.0-"),
               r"\b(?:ico-[A-Za-z0-9]{32}|rdme_[a-z0-9]{70}|AKCp[A-Za-z0-9]{69}|cmVmd[A-Za-z0-9]{59}"
               r"|4b1d(?=[0-9a-f]{0,37}[g-zA-Z])[A-Za-z0-9]{38}|[A-Za-z0-9]{6}_[A-Za-z0-9]{29}_mmk"
               r"|sm_[aps]at_[A-Za-z0-9]{16}|p8e-[A-Za-z0-9]{32}|v1\.0-[a-f0-9]{24}-[a-f0-9]{146}"
               r"|A3-[A-Z0-9]{6}-(?:[A-Z0-9]{11}|[A-Z0-9]{6}-[A-Z0-9]{5})-[A-Z0-9]{5}-[A-Z0-9]{5}-[A-Z0-9]{5})\b",
               source="gitleaks infracost-api-token, readme-api-token, artifactory-api-key and -reference-token, "
                      "clickhouse-cloud-api-secret-key, maxmind-license-key, settlemint tokens, adobe-client-secret, "
                      "cloudflare-origin-ca-key, 1password-secret-key"),
    SecretRule("commerce_token", ("ezak", "eztk", "shippo_", "duffel_", "fio-u-", "tfp_", "flwseck"),
               r"\b(?:EZ[AT]K[A-Za-z0-9]{54}|shippo_(?:live|test)_[a-fA-F0-9]{40}|duffel_(?:test|live)_[\w=\-]{43}"
               r"|fio-u-[\w=\-]{64}|tfp_[\w.=\-]{59}|FLWSECK(?:_TEST)?-[a-h0-9]{32}-X|FLWSECK(?:_TEST)?-[a-h0-9]{12})",
               source="gitleaks easypost-api-token, shippo-api-token, duffel-api-token, frameio-api-token, "
                      "typeform-api-token, flutterwave-secret-key and -encryption-key"),
    # -- formats of gitleaks' config/gitleaks.toml and trufflehog's pkg/detectors that name no key: the prefix
    # (or the punctuation of its parts) is the vendor's, the rest its published length and alphabet ------------
    SecretRule("ci_service_token", ("squ_", "sqp_", "sqa_", "sqco_", "ddp_", "ddw_", "nfp_", "ccipat_", "cfpat-",
                                    "atbb", "phx_", "api-"),
               r"\b(?:sq[upa]_[a-f0-9]{40}|sqco_[A-Za-z0-9]{59}|dd[pw]_[A-Za-z0-9]{36}|nfp_[A-Za-z0-9_]{36}"
               r"|CCIPAT_[A-Za-z0-9]{22}_[a-fA-F0-9]{40}|CFPAT-[\w\-]{43}|ATBB[A-Za-z0-9_=.\-]{28,64}"
               r"|phx_[A-Za-z0-9_]{43,48}|API-(?=[A-Z]{0,25}[0-9])[A-Z0-9]{26})(?![\w\-])",
               source="gitleaks sonar-api-token (squ_, sqp_, sqa_), octopus-deploy-api-key (API-); trufflehog "
                      "sonarcloud (sqco_), deno (ddp_, ddw_), netlify v2 (nfp_), circleci v2 (CCIPAT_), "
                      "contentfulpersonalaccesstoken (CFPAT-), bitbucketapppassword (ATBB), posthog (phx_)"),
    SecretRule("saas_app_token", ("pat-na1-", "pat-eu1-", "pk_", "api-", "sdk-", "access-sandbox-",
                                  "access-development-", "access-production-", "service:", "user:gh."),
               r"\b(?:pat-(?:na|eu)1-[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}"
               r"|pk_[0-9]{7,9}_[0-9A-Z]{32}"
               r"|(?:api|sdk)-[0-9a-f]{8}-[0-9a-f]{4}-4[0-9a-f]{3}-[89ab][0-9a-f]{3}-[0-9a-f]{12}"
               r"|access-(?:sandbox|development|production)-[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}"
               r"|(?:service:[\w\-]{1,64}|user:gh\.[\w\-]{1,64}):(?=[A-Za-z]{0,21}[0-9])[A-Za-z0-9]{22})(?![\w\-])",
               source="trufflehog hubspot_apikey v2 (pat-na1-), clickuppersonaltoken (pk_), launchdarkly (api-, sdk- "
                      "and a v4 UUID), apollo (service:GRAPH:key); gitleaks plaid-api-token (access-ENV-UUID)"),
    SecretRule("saas_app_token", ("ngrok", "authtoken"), r"\b2[A-Za-z0-9]{26}_[0-9][A-Za-z0-9]{20}\b",
               source="trufflehog ngrok (2, 26 characters, _, a digit and 20 more; its keyword ngrok or authtoken)"),
    SecretRule("saas_app_token", ("asana",), r"\b[0-9]{1,2}/[0-9]{16,}(?:/[0-9]{16,})?:[A-Za-z0-9]{32,}\b",
               source="trufflehog asanapersonalaccesstoken (N/USER:32, N/WORKSPACE/USER:32; its keyword asana)"),
    SecretRule("payment_token", ("eaaa", "sq0c", "live_", "test_"),
               r"\b(?:EAAA(?=[\w\-]{0,59}[0-9])[\w\-]{22,60}|(?:sandbox-)?sq0c[a-z]{2}-[\w\-]{40,50}"
               r"|(?:live|test)_[a-f0-9]{35}|live_(?=[\w\-]{0,39}[0-9])[\w\-]{40})(?![\w\-])",
               check="generated",
               source="gitleaks square-access-token (EAAA), lob-api-key, gocardless-api-token (live_); trufflehog "
                      "squareapp (sq0c.., sandbox-sq0c..), lob"),
    SecretRule("vendor_access_token", ("00d", "sl.", "sk_"),
               r"\b(?:00D[A-Za-z0-9]{12}![A-Za-z0-9_.]{90,}|sl\.(?:u\.)?[\w\-]{130,}|sk_[a-f0-9]{48}(?![\w\-]))",
               source="trufflehog salesforce (a session id: the org id, which starts 00D, then !, 96 more), dropbox "
                      "(sl., sl.u.), elevenlabs v2 (sk_ and 48 hex)"),
    SecretRule("yandex_cloud_key", ("aqvn", "yc", "t1."),
               r"\b(?:AQVN[\w\-]{35,38}|YC(?=[\w\-]{0,37}[0-9])[\w\-]{38}|t1\.[\w\-]+={0,2}\.[\w\-]{86}={0,2})"
               r"(?![\w\-])",
               source="gitleaks yandex-api-key (AQVN), yandex-aws-access-token (YC), yandex-access-token (t1.)"),
    SecretRule("oauth_client_secret", ("s-s4t2", "sc_", "ext_", "scauth_", "authress_"),
               r"\b(?:s-s4t2(?:ud|af)-[a-f0-9]{64}|(?:sc|ext|scauth|authress)_[A-Za-z0-9]{5,30}\.[a-z0-9]{4,6}"
               r"\.acc[_\-][a-z0-9\-]{10,32}\.[\w+/=\-]{30,120})(?![\w+/=\-])",
               source="gitleaks intra42-client-secret (s-s4t2ud-), authress-service-client-access-key"),
    SecretRule("sidekiq_credentials", ("contribsys",),
               r"(?i:contribsys(?:__|\.)com)[\"']?(?:[ \t]*[=:][ \t\"']*|[ \t]+)(?P<s>[0-9a-f]{8}:[0-9a-f]{8})\b",
               source="gitleaks sidekiq-secret: BUNDLE_ENTERPRISE__CONTRIBSYS__COM=user:pass, as bundler's variable "
                      "and `bundle config enterprise.contribsys.com user:pass` hold it"),
    SecretRule("sidekiq_credentials", ("contribsys",),
               r"\b(?P<s>[0-9a-f]{8}:[0-9a-f]{8})@(?:gems|enterprise)\.contribsys\.com\b",
               source="gitleaks sidekiq-sensitive-url: both halves of https://user:pass@enterprise.contribsys.com"),
    SecretRule("cli_secret_argument", ("snyk auth",),
               r"\bsnyk[ \t]+auth[ \t]+['\"]?(?P<s>[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12})\b",
               source="Snyk CLI: snyk auth <API_TOKEN> (gitleaks snyk-api-token: the token is a UUID)"),
    SecretRule("webhook_path", ("/hook", "/webhook"),
               r"\bhttps?://[^\s/?#@]{1,253}/(?:[^\s?#]{0,200}?/)?(?:web)?hooks?/"
               r"(?P<s>(?:catch/)?[A-Za-z0-9_\-]{6,}(?:/[A-Za-z0-9_\-]{6,}){0,3})", check="generated_with_digits",
               source="incoming webhooks whose path is the credential: Mattermost's /hooks/<key>, Rocket.Chat's "
                      "/hooks/<id>/<token>, Feishu's and Lark's /open-apis/bot/v2/hook/<uuid>, Zapier's "
                      "/hooks/catch/<id>/<key>/ (gitleaks slack-webhook-url, discord-webhook for the same shape)"),
    SecretRule("webhook_path", ("/with/key/",), r"/trigger/[^\s/?#]{1,100}/with/key/(?P<s>[A-Za-z0-9_\-]{16,})",
               source="IFTTT's Webhooks service: maker.ifttt.com/trigger/<event>/with/key/<key>"),
    SecretRule("teams_webhook", ("webhook.office.com",),
               r"webhook\.office\.com/webhookb2/[^\s/]{1,200}/IncomingWebhook/(?P<s>[A-Za-z0-9]{32}/[A-Za-z0-9\-]{36})",
               source="gitleaks microsoft-teams-webhook"),
    SecretRule("auth_tuple", ("auth", "credentials"),
               gate=r"(auth|credentials)['\"]?[ \t]*([=:][ \t]*\(?|\()[ \t]*b?['\"][^'\"\n]{0,256}['\"][ \t]*,[ \t]*"
                    r"b?['\"]",
               # (also a dict repr's 'auth': (user, password), as a logged kwargs dict prints it)
               pattern=r"(?i:\b[a-z_]{0,40}auth|\bcredentials)['\"]?"
                       r"[ \t]*(?:=[ \t]*\(?|:[ \t]*\(|\()[ \t]*"
                       r"b?(?P<q1>['\"])[^'\"\n]{0,256}(?P=q1)[ \t]*,[ \t]*b?(?P<q2>['\"])(?P<s>[^'\"\n]+)(?P=q2)",
               check="not_placeholder",
               source="gitleaks generic (user and password as a pair): requests' auth=(user, password), "
                      "HTTPBasicAuth(user, password), elasticsearch-py basic_auth=/http_auth="),
    # The same pair after json.dumps (a tuple becomes a list), in a YAML flow sequence or a list repr: only a pair
    # of two strings, and only a second one that looks like a credential ("auth": ["basic", "bearer"] lists schemes).
    SecretRule("auth_pair_list", ("auth", "credentials"),
               gate=r"(auth|credentials)\\?['\"]?[ \t]*[=:][ \t]*['\"]?\[[ \t]*\\?['\"]?[^'\"\\\n,\]]{0,256}\\?['\"]?"
                    r"[ \t]*,",  # (also a list held as JSON text in a string: "[\"elastic\",\"...\"]")
               pattern=r"(?:[A-Za-z_]{0,40}[Aa][Uu][Tt][Hh]|[Cc]redentials|CREDENTIALS)(?:\\?['\"])?"
                       r"[ \t]*[=:][ \t]*['\"]?\[[ \t]*"
                       r"(?:\\?['\"])?[^'\"\\\n,\[\]]{1,256}(?:\\?['\"])?[ \t]*,[ \t]*"
                       r"(?:\\?['\"])?(?P<s>[^'\"\\\s,\[\]]+)(?:\\?['\"])?[ \t]*\]",
               check="credential",
               source="gitleaks generic (user and password as a pair): elasticsearch-py's basic_auth and http_auth "
                      "and requests' auth given as a list, or a tuple json.dumps wrote as one "
                      "(https://elasticsearch-py.readthedocs.io/en/stable/api/elasticsearch.html)"),
    SecretRule("cookie_repr", ("<cookie ",), r"<Cookie [^\s=<>]{1,256}=(?P<s>[^\s<>]+) for ",
               check="credential",
               source="gitleaks generic (session cookies); http.cookiejar.Cookie's repr in a RequestsCookieJar"),
    SecretRule("cli_password_flag", tuple(sorted({p.lower() for p in PROGRAMS})), finder="command_secrets",
               gate=_COMMAND_GATE,
               source="gitleaks generic (CLI passwords): the (program, option) table of secret_commands, each row "
                      "from the program's manual"),
    # (a word naming a hash between the keyword and the hex says what the hex is: wandb's run summary prints a
    # logged git_commit as "wandb:   git_commit <sha>")
    SecretRule("wandb_api_key", ("wandb",),
               r"(?i:wandb)(?:(?!commit|sha|hash|digest|revision|checksum)[^\n]){0,40}?(?<![0-9a-f])(?P<s>[0-9a-f]{40})"
               r"(?![0-9a-f])",
               source="trufflehog WandB (keyword wandb, then 40 hex)"),
    SecretRule("netrc_password", ("machine", "default"),
               r"(?:\bmachine\s+\S+|\bdefault)\s+(?:(?:login|account)\s+\S+\s+)*password\s+(?P<s>\S+)",
               source="netrc(5) entries (curl, pip, wandb, git credentials), the default entry too, the login and "
                      "account tokens in any order; gitleaks generic"),
    # libpq's password file: hostname:port:database:username:password ('\\:' escapes a colon). On a line of its own
    # (cat ~/.pgpass), or anywhere in a text that names the file (echo '...' >> ~/.pgpass).
    SecretRule("pgpass_password", ("pgpass",), gate="pgpass", pattern=
               r"(?<![\w.:*\-])(?:[A-Za-z0-9][\w.\-]*|\*):(?:\d{1,5}|\*):[^\s:'\"]+:[^\s:'\"]+:(?P<s>[^\s'\"]+)",
               check="not_placeholder", source="libpq: The Password File (PostgreSQL docs, 34.16)"),
    SecretRule("pgpass_password", gate=r"(^|\n)[ \t]*([A-Za-z0-9][A-Za-z0-9_.\-]*|\*):([0-9]{1,5}|\*):"
                                       r"[A-Za-z0-9_.\-*$]+:[A-Za-z0-9_.\-*@$]+:[^ \t\r\n]+[ \t]*\r?(\n|$)",
               pattern=r"(?m)^[ \t]*(?:[A-Za-z0-9][\w.\-]*|\*):(?:\d{1,5}|\*):[\w.\-*$]+:[\w.\-*@$]+:"
                       r"(?P<s>(?:\\.|[^\s\\])+)[ \t]*\r?$",
               check="not_placeholder", source="libpq: The Password File (PostgreSQL docs, 34.16), a line alone"),
    SecretRule("numbered_reply", (') "',), finder="numbered_reply",
               gate=r"[0-9]+\)[ \t]+\"[^\"\n]*\"[ \t]*\r?\n[ \t]*[0-9]+\)[ \t]+\"",
               source="redis-cli's replies to CONFIG GET and HGETALL: a numbered list, each name then its value"),
    # -- credentials whose printer or format gives them away ------------------------------------------------------
    # An STS session token is base64 of a serialised structure whose first bytes are fixed, so every token of a
    # generation starts alike (IQoJb3JpZ2luX2Vj, FwoGZXIvYXdz); percent-escaped in a presigned URL.
    SecretRule("aws_session_token", ("iqojb3jpz2lux2vj", "fwogzxivyxdz"),
               r"\b(?:IQoJb3JpZ2luX2Vj|FwoGZXIvYXdz)(?:[A-Za-z0-9+/]|%2[BbFf]|%3[Dd]){40,}={0,2}",
               source="AWS STS session tokens (AWS_SESSION_TOKEN, X-Amz-Security-Token); trufflehog AWSSessionKey"),
    # base64 of {"ver":"...","adr":[...],"fgr":"...","key":"id:secret"}
    SecretRule("elasticsearch_enrollment_token", ("eyj2zxiioi",), r"\beyJ2ZXIiOi[A-Za-z0-9+/]{40,}={0,2}",
               source="Elasticsearch enrollment tokens (elasticsearch-create-enrollment-token, the first-start "
                      "banner)"),
    # [a-z0-9]{6}.[a-z0-9]{16} (token id, token secret) next to the word token on its line: kubeadm's --token, its
    # "[bootstrap-token] Using token:" and the TOKEN column of kubeadm token list (whose rows end in ...-token).
    SecretRule("bootstrap_token", ("token",), gate=r"token[^\n]{0,200}[a-z0-9]{6}\.[a-z0-9]{16}",
               pattern=r"(?i:token)[^\n]{0,200}?(?<![\w.\-])(?P<s>[a-z0-9]{6}\.(?=[a-z0-9]{0,15}[0-9])[a-z0-9]{16})(?![\w.\-])",
               source="Kubernetes bootstrap tokens (kubernetes.io: Authenticating with Bootstrap Tokens; kubeadm join, "
                      "kubeadm token create/list)"),
    SecretRule("bootstrap_token", ("token",), gate=r"[a-z0-9]{6}\.[a-z0-9]{16}[^\n]{0,200}token",
               pattern=r"(?<![\w.\-])(?P<s>[a-z0-9]{6}\.(?=[a-z0-9]{0,15}[0-9])[a-z0-9]{16})(?![\w.\-])(?=[^\n]{0,200}(?i:token))",
               source="Kubernetes bootstrap tokens, the word token after them (kubeadm token list's rows)"),
    SecretRule("k3s_token", ("k10",), r"\bK10[0-9a-f]{64}::[A-Za-z0-9_\-]{1,64}:(?P<s>[A-Za-z0-9]{8,})\b",
               source="k3s secure token format K10<CA hash>::<username>:<password> (docs.k3s.io, token command)"),
    SecretRule("masked_value", ("::add-mask::",), r"::add-mask::(?P<s>[^\s'\"]+)", check="not_placeholder",
               source="GitHub Actions workflow command ::add-mask::VALUE (the value is a secret by the command's "
                      "meaning; only the runner's own log masks it)"),
    SecretRule("url_credentials", ("netloc=",),
               r"\bnetloc=(?P<q>['\"])[^'\"\s:@/]*:(?P<s>[^'\"\s]+)@[^'\"\s@]+(?P=q)", check="not_placeholder",
               source="urllib.parse's SplitResult/ParseResult repr: netloc='user:password@host'"),
    # A heading that names a password, token or secret and ends in ':', the value alone on the next, indented line:
    # Elasticsearch's first-start banner ("Password for the elastic user (...):" then "  <password>") and printers
    # like it.
    SecretRule("heading_value", ("password", "passphrase", "passwd", "token", "secret", "api key", "apikey"),
               gate=r"(password|passphrase|passwd|token|secret|api ?key)[^\r\n]*:[ \t]*\r?\n"
                    r"[ \t]+[^ \t\r\n]+[ \t]*\r?(\n|$)",
               pattern=r"(?im)^[^\r\n]*?\b(?:password|passphrase|passwd|token|secret|api[ _\-]?key)\b"
                       r"[^\r\n]*:[ \t]*\r?\n[ \t]+(?P<s>\S+)[ \t]*\r?$",
               check="heading_value",
               source="detect-secrets KeywordDetector over a heading and its value (Elasticsearch's security "
                      "auto-configuration banner)"),
    SecretRule("heading_value", ("password", "passphrase", "token", "secret"),
               gate=r"(password|passphrase|token|secret)[^\r\n'\"]{0,60}:[ \t]*\\n[A-Za-z0-9_\-.+/=]{16}",
               pattern=r"(?i)\b(?:password|passphrase|token|secret)\b[^\r\n'\"]{0,60}:[ \t]*\\n"
                       r"(?P<s>[A-Za-z0-9_\-.+/=]{16,})(?=\\[nr]|['\"]|$)",
               check="generated",
               source="the same heading and value inside a repr or JSON string of captured output (\\n escapes "
                      "between them); the value must look machine-made"),
    # -- a secret found by a keyword or a key id near it (trufflehog's detectors pair the two) --------------
    SecretRule("aws_secret_access_key", ("akia", "asia"),
               r"\b(?:AKIA|ASIA)[A-Z0-9]{16}\b[^\n]{0,80}?(?<![A-Za-z0-9+/])(?P<s>[A-Za-z0-9+/]{40})(?![A-Za-z0-9+/=])",
               check="generated", source="trufflehog AWS (a key id, then its 40-character secret)"),
    SecretRule("twilio_auth_token", ("twilio",),
               r"(?i:twilio)[^\n]{0,60}?(?<![0-9a-f])(?<!AC)(?<!SK)(?P<s>[0-9a-f]{32})(?![0-9a-f])",
               source="trufflehog Twilio (keyword, then a 32-hex auth token; an AC sid may stand between)"),
    SecretRule("datadog_key", ("datadog", "dd_", "dd-", "ddog"),
               r"(?i:datadog|\bdd[_\-](?:api|app)|ddog)[^\n]{0,40}?(?<![0-9a-f])(?P<s>[0-9a-f]{32}|[0-9a-f]{40})(?![0-9a-f])",
               source="trufflehog Datadog (keyword, then a 32-hex API key or 40-hex application key)"),
    SecretRule("heroku_api_key", ("heroku",),
               r"(?i:heroku)[^\n]{0,40}?\b(?P<s>[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12})\b",
               source="gitleaks heroku-api-key (keyword, then a UUID)"),
    SecretRule("url_query_key", ("key=",), r"[?&;](?i:key|apikey|api_key|api-key|access_key)=(?P<s>[^&\s#'\"]+)",
               check="generated", source="gitleaks generic-api-key in query strings (Google ?key=, signed URLs)"),
    # -- encoded and structured credentials -----------------------------------------------------------------
    SecretRule("private_key_base64", ("ls0tls1crudjti",), r"\bLS0tLS1CRUdJTi[A-Za-z0-9+/]{40,}={0,2}",
               check="b64_private_key", source="gitleaks private-key (base64 of the PEM block: k8s tls.key)"),
    SecretRule("docker_config_auth", ("eyjhdxrocyi6",), r"\beyJhdXRocyI6[A-Za-z0-9+/]{20,}={0,2}",
               source="kubernetes.io/dockerconfigjson (base64 of {\"auths\": ...}); trufflehog Docker"),
    SecretRule("go_mysql_dsn", ("@tcp(", "@unix(", "@udp("),
               r"(?<![\w.\-:/])[\w.\-]{1,64}:(?P<s>[^\s:@/()'\"]{1,256})@(?:tcp6?|udp|unix)\(",
               check="not_placeholder", gate=r":[^\s:@/()'\"]{1,256}@(tcp6?|udp|unix)\(",
               source="go-sql-driver/mysql's DSN: user:password@tcp(host:port)/dbname, no scheme before it"),
    SecretRule("ldap_bind_password", ("cn=", "uid="),
               r"(?P<q>['\"])(?i:cn|uid)=[^'\"\r\n,]{1,100},[^'\"\r\n]{0,300}(?P=q)[ \t]*,[ \t]*"
               r"(?P<vq>['\"])(?!\()(?P<s>[^'\"\r\n]{1,256})(?P=vq)",
               check="not_placeholder",
               gate=r"['\"](cn|uid)=[^'\"\r\n,]{1,100},[^'\"\r\n]{0,300}['\"][ \t]*,[ \t]*['\"][^(]",
               source="python-ldap's simple_bind_s(who, cred) and bind(who, cred) as its trace and a traceback print "
                      "the call: a string right after a quoted bind DN is its password (a search's filter, which "
                      "RFC 4515 puts in parentheses, stays)"),
    SecretRule("oracle_credentials", ("jdbc:oracle", "sqlplus"),
               r"(?:\bjdbc:oracle:\w+:|\bsqlplus\s+(?:-[sSLM]\s+)*)[\w$#]+/(?P<s>[^@\s/'\"]+)@",
               source="gitleaks generic (user/password@db of Oracle JDBC and sqlplus)"),
    SecretRule("raw_headers", ("rawheaders", "rawtrailers"), finder="raw_headers",
               source="Node's IncomingMessage.rawHeaders: a flat list of header names and values"),
    SecretRule("base64_secret_text", tuple(n.lower() for n in B64_WORD_NEEDLES), finder="b64_text",
               source="base64 of a kubeconfig (KUBE_CONFIG_DATA of the kubectl GitHub actions) or of an env file, "
                      "its decoded text judged by the assignment rules"),
    SecretRule("jwt_base64", ("zxlk",), r"\bZXlK[A-Za-z0-9+/]{60,}={0,2}", check="b64_jwt",
               source="base64 of a JWT (a service-account token Secret's data.token, kubectl get secret -o "
                      "jsonpath='{.data.token}'): base64 of 'eyJ' is 'ZXlK'"),
    SecretRule("nats_nkey_seed", ("nkey",),
               r"-----BEGIN [A-Z ]*NKEY SEED-----[ \t]*\r?\n[ \t]*(?P<s>S[A-Z2-7]{20,})",
               source="NATS .creds files (nsc generate creds): the seed between BEGIN/END USER NKEY SEED lines"),
    SecretRule("aws_ecr_token", ("eyjwyxlsb2fkijoi", "qvdtomv5sndzwgxzyjjga0lqb2"),
               r"\b(?:eyJwYXlsb2FkIjoi|QVdTOmV5SndZWGxzYjJGa0lqb2)[A-Za-z0-9+/]{80,}={0,2}",
               source="Amazon ECR's registry password (aws ecr get-login-password: base64 of a JSON that opens "
                      "{\"payload\":\") and its authorization token (get-authorization-token: base64 of 'AWS:' and "
                      "that)"),
    SecretRule("honeycomb_key", ("x-honeycomb-team",),
               r"(?i)\bx-honeycomb-team\b['\"]?[ \t]*(?:[:=]|,)[ \t]*(?:\[)?['\"]?(?P<s>[A-Za-z0-9_]{20,})",
               source="Honeycomb's API key header X-Honeycomb-Team (docs.honeycomb.io), as header lines, dict reprs "
                      "and OTEL_EXPORTER_OTLP_HEADERS=x-honeycomb-team=KEY write it"),
    SecretRule("aws_configure_prompt", ("aws secret access key [",),
               r"(?m)AWS Secret Access Key \[[^\]\r\n]{0,40}\]:[ \t]*(?P<s>[^\s]+)", check="not_placeholder",
               source="aws configure's prompt: 'AWS Secret Access Key [****************ABCD]: ' then what was typed, "
                      "as a terminal capture (script(1)) records it"),
    SecretRule("gcp_secret_payload", ('"payload"', '\\"payload\\"', "payload {"),
               r"(?:\\?\"payload\\?\"[ \t]*:[ \t]*\{[ \t\r\n]*\\?\"data\\?\"[ \t]*:[ \t]*\\?\""
               r"|\bpayload[ \t]*\{[ \t\r\n]*data:[ \t]*\")"
               r"(?P<s>[A-Za-z0-9+/=_\-]{4,})",
               source="Google Secret Manager's AccessSecretVersionResponse (gcloud secrets versions access --log-http, "
                      "the client's printed proto): payload.data is the secret's value in base64; also as a "
                      "string inside a JSON record, its quotes escaped"),
    SecretRule("minisign_secret_key", ("rwrty0iy",), r"\bRWRTY0Iy[A-Za-z0-9+/]{80,}={0,2}",
               source="minisign secret key files (base64 of 'Ed' 'Sc' 'B2' and the encrypted key)"),
    SecretRule("flyio_token", ("fm1", "fm2_"),
               r"\bfm(?:1[ar]|2)_[A-Za-z0-9+/=_\-]{40,}(?:,fm(?:1[ar]|2)_[A-Za-z0-9+/=_\-]{20,})*",
               source="gitleaks flyio-access-token (fly tokens create: FlyV1 fm2_...,fm2_...)"),
    SecretRule("connection_token", ("tkn=",), r"[?&]tkn=(?P<s>[^&\s#'\"]{16,})", check="generated",
               source="VS Code's server (code serve-web) and openvscode-server's --connection-token, which their "
                      "'Web UI available at http://...?tkn=...' line carries as the query parameter tkn"),
    SecretRule("restricted_api_key", ("restricted-api", "restricted_api", "restricted-protocol",
                                      "restricted_protocol"),
               r"(?i)(?<![A-Za-z0-9])(?:https?|grpc)?[-_]?restricted[-_](?:api|protocol)\b[ \t|=]*"
               r"(?:[a-z\-]{1,40},){0,16}[a-z\-]{1,40}:[^=\s|,]{1,64}=(?P<s>[^\s,|'\"]+)", check="not_placeholder",
               source="Triton Inference Server's --http-restricted-api / --grpc-restricted-protocol="
                      "API[,API]:KEY=VALUE (the header a client must send), in its command line and its startup "
                      "options table"),
    SecretRule("redis_monitor_auth", ('"auth"',),
               r"(?m)\[[0-9]{1,5} [^\]\r\n]{1,100}\] \"(?i:auth)\"(?: \"(?:\\.|[^\"\\\r\n]){0,256}\")? "
               r"\"(?P<s>(?:\\.|[^\"\\\r\n]){1,256})\"(?=[ \t]*\r?$)", check="not_placeholder",
               source="redis MONITOR's lines (TIME [DB ADDR] \"CMD\" \"ARG\"...): AUTH password, or AUTH username "
                      "password with Redis 6 ACLs; the password is the command's last argument"),
    SecretRule("redis_monitor_auth", ('"auth"',),
               r"\] \"(?i:hello)\" \"[23]\" \"(?i:auth)\" \"(?:\\.|[^\"\\\r\n]){0,256}\" "
               r"\"(?P<s>(?:\\.|[^\"\\\r\n]){1,256})\"", check="not_placeholder",
               source="redis MONITOR of RESP3's HELLO protover AUTH username password (redis-py, Ray's GCS client)"),
    SecretRule("redis_cli_auth", ("> auth",),
               r"(?m)^[^\s>]{0,100}:[0-9]{1,5}(?:\[[0-9]{1,2}\])?> (?i:auth)[ \t]+(?:[^\s]{1,256}[ \t]+)?"
               r"(?P<s>[^\s]{1,256})[ \t]*\r?$", check="not_placeholder",
               source="redis-cli's interactive prompt (HOST:PORT[DB]>) echoing AUTH [username] password"),
    SecretRule("curl_config_user", ("user",),
               r"(?m)^[ \t]*(?:--)?(?:proxy-)?user(?:[ \t]*=[ \t]*|[ \t]+)\"[^\"\s:]{1,100}:"
               r"(?P<s>(?![0-9]+\")[^\"\r\n]{1,256})\"",
               check="not_placeholder",
               # (not after a colon, nor a number: compose's and a Dockerfile's user: "1000:1000" is a uid and gid)
               source="curl(1)'s config file (-K, ~/.curlrc): user = \"name:password\", proxy-user likewise"),
    SecretRule("psql_variable", ("\\set",),
               r"(?m)^[ \t]*\\set[ \t]+[A-Za-z0-9_]{0,40}(?i:pw|pwd|pass|passwd|password|secret|token)[ \t]+"
               r"'(?P<s>(?:''|[^'\r\n]){1,256})'", check="not_placeholder",
               source="psql's \\set NAME 'value' (psql(1) variables, echoed by psql -a), which a script then "
                      "interpolates as :'NAME' into ALTER USER ... PASSWORD"),
    SecretRule("oauth_code", ("code=",), r"[?&]code=(?P<s>[^&\s#'\"]{16,})", check="generated",
               source="OAuth 2.0 authorization responses (RFC 6749 4.1.2: ?code=...&state=...) in access logs"),
    SecretRule("terraform_random_password", ("password",),
               r"\"type\"[ \t]*:[ \t]*\"random_password\"(?:(?!\"type\")[\s\S]){0,2048}?"
               r"\"result\"[ \t]*:[ \t]*\"(?P<s>(?:\\.|[^\"\\\r\n])+)\"",
               source="terraform state / show -json: a hashicorp/random random_password's result is the password"),
    SecretRule("jenkins_initial_password", ("password",),
               r"password to proceed to installation:[ \t]*\r?\n(?:[ \t]*\r?\n)?[ \t]*(?P<s>[0-9a-f]{32})\b",
               source="Jenkins' first start: the generated admin password under 'Please use the following password "
                      "to proceed to installation:'"),
    SecretRule("stated_password", ("password", "passphrase", "token", "secret"),
               r"(?i)\b(?:password|passphrase|token|secret)[ \t]+(?:is|(?:was[ \t]+)?(?:set|changed|reset)[ \t]+to)"
               r"[ \t]*:?[ \t]*(?P<q>['\"`]?)(?P<s>[^\s'\"`]+)(?P=q)",
               check="heading_value",
               source="a sentence that states a password (gitea admin user create --random-password: 'generated "
                      "random password is '...''); detect-secrets KeywordDetector"),
    # -- generic web credentials ------------------------------------------------------------------------
    SecretRule("jwt", ("eyj",), r"\beyJ[A-Za-z0-9_\-]{5,}\.eyJ[A-Za-z0-9_\-]{5,}\.[A-Za-z0-9_\-]*",
               source="detect-secrets JwtTokenDetector; gitleaks jwt"),
    SecretRule("bearer_token", ("bearer",), r"(?i)\bbearer\s+(?P<s>[A-Za-z0-9._~+/=\-]{8,})", check="credential",
               source="gitleaks authorization headers; trufflehog"),
    SecretRule("basic_auth", ("basic",), r"(?i)\bbasic\s+(?P<s>[A-Za-z0-9+/]{6,}={0,2})(?![A-Za-z0-9+/=])",
               check="basic_auth", source="detect-secrets BasicAuthDetector (header form)"),
    # (the password ends at the '@' that ends the authority, the last one before the host: RFC 3986 3.2.1 wants
    # '@' percent-escaped there, but a raw one is common)
    SecretRule("url_credentials", ("://", ":\\/\\/"),
               r"\b[A-Za-z][A-Za-z0-9+.\-]*:(?:\\?/){2}[^\s/:'\"\\]*:(?P<s>[^\s@/'\"\\]+(?:@[^\s@/'\"\\]+)*)"
               r"@(?=[^\s@/'\"\\]*[/?#\s'\"\\]|[^\s@/'\"\\]*$)",
               verbatim=True, check="not_placeholder",
               source="detect-secrets BasicAuthDetector; gitleaks url credentials (the user may hold a "
                      "percent-escaped '@': user%40corp; the password %40, %2F, %3A). A password of asterisks is "
                      "the printer's mask: SQLAlchemy's URL repr (***), kombu's sanitized broker URL in celery's "
                      "banner (**), pip's redact_auth_from_url (****)"),
    SecretRule("url_token_user", ("://", ":\\/\\/"),
               r"\b[A-Za-z][A-Za-z0-9+.\-]*:(?:\\?/){2}(?P<s>[A-Za-z0-9_\-.~]{16,256})@",
               check="generated_with_digits",
               source="gitleaks url credentials without a password: a token as the user "
                      "(https://<token>@github.com, x-access-token)"),
    SecretRule("sql_password", ("password", "identified"),
               gate=r"(create|alter)[ \t]+(user|role|login)[^;\r\n]{0,200}[ \t]password[ \t]+['\"]"
                    r"|options[ \t]*\([^)\r\n]{0,400}password[ \t]+['\"]"
                    r"|identified([ \t]+with[ \t]+\w{1,64})?[ \t]+by[ \t]+['\"]|set[ \t]+password[^=;\r\n]{0,200}=",
               pattern=r"(?i)(?:\b(?:create|alter)[ \t]+(?:user|role|login)\b[^;\r\n]{0,200}?[ \t]password[ \t]+"
                       r"|\bidentified(?:[ \t]+with[ \t]+\w{1,64})?[ \t]+by[ \t]+"
                       r"|\boptions[ \t]*\([^)\r\n]{0,400}?[(, \t]password[ \t]+"
                       r"|\bset[ \t]+password\b[^=;\r\n]{0,200}?=[ \t]*(?:password\([ \t]*)?)"
                       r"(?P<q>['\"])(?P<s>[^'\"\r\n]{1,256})(?P=q)",
               check="not_placeholder",
               source="gitleaks generic (passwords in SQL: CREATE/ALTER USER|ROLE|LOGIN ... PASSWORD '...', "
                      "MySQL's IDENTIFIED [WITH plugin] BY '...' and SET PASSWORD [FOR user] = '...', as its general "
                      "log records); a data source's OPTIONS (..., password '...') (Spark SQL, PostgreSQL's "
                      "foreign servers and user mappings)"),
    SecretRule("cli_secret_argument", ("http-basic.",),
               r"\bpoetry[ \t]+config[ \t]+(?:--\S+[ \t]+)*http-basic\.\S+[ \t]+\S+[ \t]+['\"]?(?P<s>[^\s'\"]+)",
               source="Poetry's documented credential command: poetry config http-basic.REPO USER PASSWORD"),
    SecretRule("cli_secret_argument", ("gh secret",),
               r"\bgh[ \t]+secret[ \t]+set[ \t]+[^\n|;&]{0,200}?(?:--body|-b)(?:=|[ \t]+)['\"]?(?P<s>[^\s'\"]+)",
               source="gitleaks generic (CLI arguments documented as secrets): gh secret set NAME --body VALUE"),
    SecretRule("cli_secret_argument", ("mc alias", "mc config"),
               r"\bmc[ \t]+(?:alias[ \t]+set|config[ \t]+host[ \t]+add)[ \t]+(?:--?\S+[ \t]+)*"
               r"\S+[ \t]+\S+[ \t]+\S+[ \t]+['\"]?(?P<s>[^\s'\"]+)",
               source="MinIO client's documented credential command: mc alias set ALIAS URL ACCESSKEY SECRETKEY"),
    SecretRule("cli_secret_argument", ("admin user add",),
               r"\b(?:mc|mcli)[ \t]+admin[ \t]+user[ \t]+add[ \t]+(?:--?\S+[ \t]+)*\S+[ \t]+\S+[ \t]+"
               r"['\"]?(?P<s>[^\s'\"]+)",
               source="MinIO client: mc admin user add ALIAS ACCESSKEY SECRETKEY"),
    # (rules of their own rather than rows of the command table: "grafana" and "nextflow" are common words in
    # cluster logs, and the table's gate would read every line that names them)
    SecretRule("cli_secret_argument", ("reset-admin-password",),
               r"\bgrafana(?:-cli|[ \t]+cli)\b[^\r\n|;&]{0,200}?\breset-admin-password[ \t]+['\"]?"
               r"(?P<s>[^\s'\"-][^\s'\"]*)",
               source="grafana cli admin reset-admin-password <new password> (Grafana CLI docs)"),
    SecretRule("cli_secret_argument", ("add_space_secret",),
               r"\badd_space_secret\((?:[^()\r\n]{0,400}?\bvalue[ \t]*=[ \t]*"
               r"|(?:[ \t]*(?:[\w.]+|\"[^\"\r\n]*\"|'[^'\r\n]*')[ \t]*,){2}[ \t]*)['\"](?P<s>[^'\"\r\n]+)['\"]",
               check="not_placeholder",
               source="huggingface_hub HfApi.add_space_secret(repo_id, key, value, description=None): the value of a "
                      "Space's secret, whatever its key (a traceback's source line, a notebook cell)"),
    SecretRule("cli_secret_argument", ("nextflow secrets",),
               r"\bnextflow[ \t]+secrets[ \t]+(?:set[ \t]+\S+|put[ \t]+-n[ \t]+\S+[ \t]+-v)[ \t]+"
               r"['\"]?(?P<s>[^\s'\"]+)",
               source="Nextflow secrets: nextflow secrets set NAME VALUE (put -n NAME -v VALUE before 22.10)"),
    SecretRule("redis_acl_password", ("setuser",), gate=r"acl\"?[ \t]+\"?setuser\b[^\r\n]*[ \t]['\"]?[<>]",
               pattern=r"(?i)\bACL\"?[ \t]+\"?SETUSER\"?(?:[ \t]+(?!['\"]?[<>])"
               r"(?:\"(?:\\.|[^\"\\\r\n]){0,256}\"|'[^'\r\n]{0,256}'|[^\s'\"]{1,256})){0,32}"
               r"[ \t]+['\"]?[<>](?P<s>(?:\\.|[^\s'\"\\]){1,256})",
               source="Redis ACL SETUSER's rules (redis.io ACL docs): '>password' adds a password, '<password' removes "
                      "one ('#hash' is a SHA-256 and stays), as redis-cli and MONITOR print the command"),
    SecretRule("cli_secret_argument", ("smbclient", "rpcclient", "smbcacls", "smbget"),
               r"\b(?:smbclient|rpcclient|smbcacls|smbget)\b[^\n|;&]*?[ \t](?:-U[ \t]*|--user[= \t])['\"]?[^\s%'\"]+%"
               r"(?P<s>[^\s'\"]+)",
               source="Samba's client tools: -U [DOMAIN\\]USERNAME[%PASSWORD] (smbclient(1))"),
    SecretRule("cli_user_password", ("-u ", "-u=", "--user", "--proxy-user"),
               r"(?:^|\s)(?:-u|--user|--proxy-user)[\s=]+['\"]?[^\s:'\"@]+:(?P<s>[^\s'\"@]+)",
               source="gitleaks curl-auth-user; curl(1) --proxy-user USER:PASSWORD"),
    SecretRule("cli_user_password", ("curl",),
               r"\bcurl\b[^\r\n|;&]{0,400}?[ \t]-[A-Za-z0-9#:]+u[ \t]*['\"]?[^\s:'\"@]+:(?P<s>[^\s'\"@]+)",
               source="curl(1): -u, --user <user:password>; short options that take no value may go before it in "
                      "one word, as scripts write curl -fsSLu or -su"),
)

KINDS: tuple[str, ...] = tuple(r.kind for r in DEFAULT_RULES)
