"""Which key names hold secrets, and which values look like one.

A key is cut into words at separators (``_ - . :`` and spaces) and at camelCase humps, lower-cased, and
judged by the words it ends with: ``DB_PASSWORD``, ``dbPassword`` and ``db.password`` end in a
password; ``password_reset_url``, ``secret_name`` and ``token_acc`` end in something else and are
not secrets. Three strengths:

- ``strong``: any value but a placeholder is a secret (passwords, secrets, API and access keys);
- ``weak``: the value must also look like a credential (``token``: ``pad_token: <pad>`` and
  ``tokens: 512`` are training configuration, ``hf_token: x7Yq...`` is not);
- ``code``: a one-time code (``otp``, ``totp``): the value must be 6 to 10 digits;
- ``header``: the value runs to the end of the line (``Authorization``, ``Cookie``), its scheme word kept;
- ``generated``: the value must look machine-generated (16+ characters of a token alphabet, high entropy):
  keys that end in ``key`` after another word (``DD_APP_KEY``, ``AZURE_STORAGE_KEY``), in ``session id``,
  or that sit under a ``cookies`` map, as gitleaks' generic-api-key holds any ``*key`` to an entropy floor.
  ``cache_key: step-1000`` stays; a key whose qualifier names something that is not secret
  (``public_key``, ``partition_key``) is not looked at.
"""

from __future__ import annotations

import base64
import binascii
import math
import re
from collections import Counter
from collections.abc import Callable, Iterable

STRONG_ENDINGS = frozenset({
    "password", "passwd", "passphrase", "passwords", "secret", "secrets", "clientsecret",
    "apikey", "accesskey", "secretkey", "privatekey", "accountkey", "sharedaccesskey", "sshkey", "signingkey",
    "encryptionkey", "masterkey", "sessionkey", "licensekey", "credential", "credentials",
    "apikeys", "accesskeys", "secretkeys", "privatekeys",
    "requirepass", "masterauth",  # redis.conf's server and replica passwords
    # the variables programs document as their password: mysql(1) MYSQL_PWD, sshpass(1) -e SSHPASS, redis-cli
    # REDISCLI_AUTH
    "mysqlpwd", "sshpass", "rediscliauth",
    # Confluent clients' basic.auth.user.info (schema registry credentials as KEY:SECRET)
    "authuserinfo",
    # sssd-ldap(5) ldap_default_authtok (the bind password); nslcd.conf(5) bindpw, slapd.conf(5) rootpw
    "authtok", "bindpw", "rootpw",
    # Consul's and Nomad's ACL tokens (SecretID; their CLIs print "SecretID:" and "Secret ID = "), Vault AppRole's
    # secret_id: the half that logs in, beside an AccessorID / secret_id_accessor that does not
    "secretid",
    "creds",  # skopeo's --creds, --src-creds, --dest-creds USER:PASSWORD
    "authident",  # yarn's npmAuthIdent "user:password"
    "psk",  # a pre-shared key: wpa_supplicant.conf(5) psk=, hostapd's wpa_psk
    "secretkeybase",  # Rails' secret_key_base (rails credentials:show)
    "honeycombteam",  # Honeycomb's API key header, X-Honeycomb-Team
    "clickhousekey",  # ClickHouse's HTTP interface takes the user's password in X-ClickHouse-Key
    # OAuth's device flow (RFC 8628 3.2: device_code, polled for the tokens) and PKCE (RFC 7636 4.1: code_verifier,
    # which redeems the code); SAML 2.0's HTTP-POST binding (SAMLResponse: base64 of the signed assertion, a bearer
    # credential at the service provider)
    "devicecode", "codeverifier", "samlresponse",
    # the password's word of other languages configs are written in, where it holds "pass" (the keyword the
    # finders look for): German Passwort, French mot de passe
    "passwort", "motdepasse",
    # a one-time or fixed passcode that logs in (RSA SecurID's and Duo's "passcode" a VPN or SSH login script takes,
    # openconnect's --passwd-on-stdin reads it; Cisco's anyconnect profile calls it so)
    "passcode",
})
# The password's word in the languages configs, forms and locale files are written in, matched as a whole word of
# the key (``db_senha``, ``Kennwort``), never as the end of a longer one (``enclave`` is no ``clave``): Dutch,
# Portuguese, Spanish (with and without its tilde), Turkish and Romanian, Polish (with and without its stroke),
# Russian, Chinese (and its pinyin), Japanese, German, Czech, Slovak, Swedish, Norwegian and Danish, Finnish,
# Hungarian, Estonian, Croatian and Serbian, Korean.
FOREIGN_PASSWORD_WORDS = frozenset({
    "wachtwoord", "senha", "contraseña", "contrasena", "parola", "hasło", "haslo", "пароль", "密码", "mima",
    "パスワード", "kennwort", "clave", "heslo", "lösenord", "losenord", "passord", "adgangskode", "salasana",
    "jelszó", "jelszo", "parool", "lozinka", "비밀번호", "şifre", "sifre",
})
# A secret key's and a token's word in the scripts configs and locale files are also written in: Russian секрет and
# токен, Chinese 密钥 / 秘钥 (secret key), 口令 (passphrase) and 令牌 (token), Japanese シークレット, 秘密鍵 and
# トークン, Korean 암호 (password), 비밀키 and 토큰. A token's word is weak, as ``token`` is.
FOREIGN_SECRET_WORDS = frozenset({"секрет", "密钥", "秘钥", "口令", "シークレット", "秘密鍵", "암호", "비밀키"})
FOREIGN_TOKEN_WORDS = frozenset({"токен", "令牌", "トークン", "토큰"})
# Russian puts the noun a key names first and what it belongs to after it, inflected (пароль_бд: the database's
# password; токен_доступа: the access token); the word heading a two-word key names its value, as the last does in
# English: such a key is judged as its English order (ключ_api as api_key, ключ_кэша as a cache key, which holds a
# secret only when machine-made). (A key where the word follows, inflected, names something else: длина_пароля is the
# password's length.)
HEAD_FIRST_SECRET_WORDS = {"пароль": "password", "секрет": "secret", "токен": "token", "ключ": "key"}
FOREIGN_KEY_WORDS = FOREIGN_PASSWORD_WORDS | FOREIGN_SECRET_WORDS | FOREIGN_TOKEN_WORDS | frozenset(
    HEAD_FIRST_SECRET_WORDS)


def _unspaced(word: str) -> bool:
    """A word of a script written without spaces between words (Han, kana, Hangul as keys join it): a key ending in
    it is one compound word (数据库密码 is the database's password, アクセストークン an access token)."""
    return all("\u3040" <= c <= "\u9fff" or "\uac00" <= c <= "\ud7af" for c in word)


_UNSPACED_STRONG = tuple(w for w in FOREIGN_PASSWORD_WORDS | FOREIGN_SECRET_WORDS if _unspaced(w))
_UNSPACED_WEAK = tuple(w for w in FOREIGN_TOKEN_WORDS if _unspaced(w))
# The same words as a regex's alternatives, in lower, capitalised and upper case (Hyperscan folds the case of ASCII
# letters only), longest first.
FOREIGN_PASSWORD_KEYWORDS = "|".join(sorted({v for w in FOREIGN_KEY_WORDS for v in (w, w.capitalize(), w.upper())},
                                            key=lambda v: (-len(v), v)))
# Keys that end in a secret's word but name where the secret is kept: Helm charts' existingSecret (Bitnami's
# convention) names a Kubernetes Secret object whose keys hold the values.
REFERENCE_ENDINGS = frozenset({"existingsecret"})
# Dotted keys whose secret word is followed by what it is for (an account, a container), so that the key ends in a
# host name: hadoop-azure's ``fs.azure.account.key.ACCOUNT.blob.core.windows.net`` (and Spark's ``spark.hadoop.``
# copy), its OAuth client secret and SAS keys.
QUALIFIED_SECRET_KEYS = re.compile(r"(?i)(?:^|\.)fs\.azure\.(?:account\.key|account\.oauth2\.client\.secret|sas)\."
                                   # composer's auth.json: a token per host (github-oauth.HOST, gitlab-token.HOST)
                                   r"|(?:^|\.)(?:github-oauth|gitlab-token|gitlab-oauth|bearer)\.")
WEAK_ENDINGS = frozenset({"token", "pass", "pwd", "auth", "pat", "apitoken", "authkey"})
# Endings of one-word compounds that hold a credential (``hftoken``, keytool's ``-storepass`` and ``-keypass``).
COMPOUND_WEAK_ENDINGS = ("token", "passwd", "apitoken", "storepass", "keypass")
HEADER_ENDINGS = frozenset({"authorization", "cookie"})
# A header value shorter than this carries no credential (a cookie is name=value, a scheme a token).
HEADER_MIN_CHARS = 4
GENERATED_ENDINGS = frozenset({
    "sessionid", "sessid",
    # an Azure SAS token's signature (its sig= field, the HMAC that grants the access; loggers print the token's
    # fields as keys of their own: https://learn.microsoft.com/en-us/rest/api/storageservices/create-service-sas)
    "sig",
    # djangorestframework-simplejwt's token pair is {"refresh": ..., "access": ...} (TokenObtainPairView's response,
    # https://django-rest-framework-simplejwt.readthedocs.io/en/latest/getting_started.html#usage): a token under a
    # bare refresh or access key; "refresh": "30s" and "access": "read-only" are settings, not machine-made
    "refresh", "access",
})
# A one-time code: 6 to 10 digits (RFC 4226 5.3 HOTP and RFC 6238 TOTP values; an SMS or e-mail login code), which
# logs in while it lasts. ``otp: 26`` (an Erlang/OTP release) is too short to be one.
CODE_ENDINGS = frozenset({"otp", "totp", "hotp", "otpcode", "mfacode"})
_ONE_TIME_CODE = re.compile(r"[0-9]{6,10}")
# "<word> key" is a secret's name unless the word says what kind of key it is and that kind is public or an
# index: gitleaks' generic-api-key keyword "key" with these qualifiers left out.
NOT_SECRET_KEY_QUALIFIERS = frozenset({
    "public", "pub", "cache", "sort", "partition", "primary", "foreign", "object", "idempotency",
    "lookup", "dict", "row", "group", "shard", "hash", "s3", "gcs", "file", "map", "index", "unique", "composite",
    "record", "message", "kafka", "metric", "label", "column", "join", "dedup", "event", "config", "field", "attr",
    "state", "lock", "task", "job", "bucket", "model", "data", "dataset", "input", "output", "target", "sample",
    "batch", "layer", "param", "embedding", "query", "kv", "rng", "seed", "sharding", "checkpoint", "ckpt", "cursor",
    "order", "range", "hot", "host", "node", "pod", "run", "trace", "span", "request", "id",
    "socket",  # RFC 6455's Sec-WebSocket-Key: a random nonce of the handshake, no credential
    "name", "type", "prefix", "path", "search", "cluster", "topic", "stream", "queue", "schema", "table", "item",
    # Comet ML's experiment key: the experiment's id (32 hex digits, Experiment.get_key(), shown in its URL and in
    # every "COMET INFO: Experiment is live" line), no credential
    "experiment",
})
PARENT_SECRET_WORDS = frozenset({"cookie", "cookies"})
# A map of secrets keyed by what each opens, as a nested record's path is lifted (secrets.hf, credentials.huggingface,
# api_keys.openai, passwords.db): a one-word key right under such a parent holds a machine-made value.
# (credentials.project_id, two words, is a service-account file's field, not one of them)
SECRET_MAP_PARENTS = frozenset({"secrets", "credentials", "passwords", "apikeys", "tokens"})
# Words after the secret word that still name its value: ``password_value``, ``api_key_b64``, kubeconfig's
# ``client-key-data``.
VALUE_SUFFIXES = frozenset({"value", "b64", "base64", "str", "string", "raw", "plain", "plaintext", "encoded",
                            "data"})

# Words a key names the copy of a secret by, after the secret's own words: a version (API_KEY_V2, whose digits are
# dropped), a rotation (DB_PASSWORD_NEW, PASSWORD_OLD, password_current), a role (TOKEN_PRIMARY, KEY_BACKUP), a
# deployment (API_KEY_PROD, DB_PASSWORD_STAGING) or an access level (HF_TOKEN_READ, HF_TOKEN_WRITE, as Hugging Face's
# token roles are named): the key is judged without them, as without a value suffix.
QUALIFIER_SUFFIXES = frozenset({"v", "new", "old", "current", "curr", "next", "prev", "previous", "primary",
                                "secondary", "backup", "prod", "production", "staging", "read", "write", "ro", "rw"})

# A label written as a sentence ("Your new secret key is: X", google-authenticator): the verb ends it.
COPULAS = frozenset({"is", "was"})

# (a letter that is no ASCII capital continues a word: contraseña, hasło, пароль, 密码 are one word each)
_WORD = re.compile(r"[A-Z]+(?![a-z])|[A-Z]?[^\W\d_A-Z]+|[0-9]+")
# Values that stand for a secret without being one: unset, masked, a reference to be filled in.
_PLACEHOLDER = re.compile(
    r"(?i)(?:|none|null|nil|true|false|undefined|n/?a|-|[*•#]+|x{3,}|\.{3,}|\[redacted.*|<[^<>]*>|\$\{[^}]*\}|(?-i:\$[A-Z_][A-Z0-9_]*)|\$\(.*\)"
    r"|\{\{.*\}\}|%\(\w+\)s|%s|\?"
    r"|\?\?\?"  # OmegaConf's MISSING: a mandatory value not given yet, as Hydra prints the config
    r"|os\.environ/[A-Za-z_][A-Za-z0-9_]*"  # LiteLLM's config reads a key from the environment: os.environ/NAME
    # printers' own masks: httpx's Headers repr ('[secure]'), Ansible's no_log module arguments
    r"|\[(?:secure|hidden|masked|filtered)\]|value_specified_in_no_log_parameter"
    r"|redacted"  # azcopy's scrubbed SAS (sig=REDACTED)
    # a mask word between stars, as sanitizers write it ('***REDACTED***', '**MASKED**')
    r"|\*+(?:redacted|masked|hidden|filtered|removed)\*+"
    # the key an OpenAI-compatible client is given for a server that checks none (vLLM's and SGLang's docs:
    # api_key="EMPTY")
    r"|empty"
    # where a secret is kept, not the secret: an AWS ARN (Secrets Manager's SecretId, an SSM parameter), a 1Password
    # secret reference (op://vault/item/field), an App Service Key Vault reference (@Microsoft.KeyVault(...))
    r"|arn:aws[\w\-]*:[\w\-]+:[\w\-]*:[0-9]{12}:\S+|op://\S+|@Microsoft\.KeyVault\(.*\)"
    r"|yes|no)")  # MySQL's "Access denied ... (using password: YES)" says whether one was given
_SCHEME = re.compile(r"(?i)(?:bearer|basic|token|apikey|api-key|digest|negotiate|ntlm|hoba|mutual|"
                     r"aws4-hmac-sha256|sharedaccesssignature|sharedkey|splunk|dsn|key)\s+")


def key_words(key: str) -> list[str]:
    """``"AWS_SECRET_ACCESS_KEY"`` -> ``["aws", "secret", "access", "key"]``; numbers dropped."""
    return [w.lower() for w in _WORD.findall(key) if not w.isdigit()]


def key_strength(key: str, extra_strong: Iterable[str] = ()) -> str | None:
    """``"strong"``, ``"weak"``, ``"header"`` or None for a key name (see the module's docstring)."""
    if "." in key and QUALIFIED_SECRET_KEYS.search(key):
        return "strong"
    words = key_words(key)
    while words and (words[-1] in VALUE_SUFFIXES or words[-1] in COPULAS or words[-1] in QUALIFIER_SUFFIXES) and len(
            words) > 1:
        words.pop()
    if not words:
        return None
    strong = STRONG_ENDINGS.union(extra_strong) if extra_strong else STRONG_ENDINGS
    endings = {"".join(words[-n:]) for n in (1, 2, 3) if n <= len(words)}
    if endings & REFERENCE_ENDINGS:
        return None
    last = words[-1]
    parent, _dot, child = key.rpartition(".")
    generated = (endings & GENERATED_ENDINGS or any(last.endswith(w) for w in GENERATED_ENDINGS)
                 or (len(key_words(child)) == 1 and parent.rpartition(".")[2].lower().replace("_", "").replace(
                     "-", "") in SECRET_MAP_PARENTS)
                 or PARENT_SECRET_WORDS.intersection(words[:-1])
                 or (last == "key" and len(words) > 1 and words[-2] not in NOT_SECRET_KEY_QUALIFIERS))
    # The last two: one word that is a compound without humps or separators ("mypassword", "hftoken").
    for strength, found in (("header", endings & HEADER_ENDINGS), ("code", endings & CODE_ENDINGS),
                            ("strong", endings & strong), ("strong", endings & FOREIGN_PASSWORD_WORDS),
                            ("strong", endings & FOREIGN_SECRET_WORDS), ("weak", endings & FOREIGN_TOKEN_WORDS),
                            ("weak", endings & WEAK_ENDINGS), ("strong", any(last.endswith(w) for w in strong)),
                            ("strong", last.endswith(_UNSPACED_STRONG)), ("weak", last.endswith(_UNSPACED_WEAK)),
                            ("weak", any(last.endswith(w) for w in COMPOUND_WEAK_ENDINGS)),
                            ("generated", generated)):
        if found:
            return strength
    if len(words) == 2 and words[0] in HEAD_FIRST_SECRET_WORDS:
        return key_strength(f"{words[1]}_{HEAD_FIRST_SECRET_WORDS[words[0]]}")
    return None


# A file path: the key names the file that holds the secret (GOOGLE_APPLICATION_CREDENTIALS=/var/secrets/x.json),
# not the secret. Two separators or a file extension, so that base64 starting with '/' is not taken for one.
_FILE_PATH = re.compile(r"(?:~|\.{1,2})?/[\w.\-]+(?:/[\w.\-]+)+/?"
                        r"|(?:~|\.{1,2})?/[\w\-]+\.(?:json|pem|key|crt|p12|pfx|txt|yaml|yml|env|cfg|conf|ini|gpg|asc)")


def unquoted(value: str) -> str:
    """A value as its printer quoted it, judged by what is inside: a repr's string (``'x'``) or bytes
    (``b'x'``), as a dict repr lifted into attributes or loguru's ``diagnose`` prints them."""
    if len(value) > 1 and value[-1] in "'\"":
        if value[0] == value[-1]:
            return value[1:-1]
        if len(value) > 3 and value[0] in "bB" and value[1] == value[-1]:
            return value[2:-1]
    return value


# The name of an environment variable (upper case, words joined by '_') or of a secret object (lower case, joined by
# '_' or '-': a compose service's ``secrets: [db_password]``, a Kubernetes Secret's ``hf-token``): when its own words
# name a secret (``DB_PASSWORD``, ``HF_TOKEN``), it says which variable or object holds the secret, as a job's list of
# the secrets it needs or a config's ``password: DB_PASSWORD`` does; a generated value has no such words.
_VARIABLE_NAME = re.compile(r"[A-Z][A-Z0-9]*(?:_[A-Z0-9]+)+|[a-z]+(?:[_\-][a-z]+)+")


def is_placeholder(value: str, key: str = "") -> bool:
    v = value.strip()
    if _PLACEHOLDER.fullmatch(v) or (_FILE_PATH.fullmatch(v) and "+" not in v):
        return True
    if _VARIABLE_NAME.fullmatch(v) and key_strength(v) is not None:
        return True
    # argparse prints its metavar in upper case: "--password PASSWORD" in a usage line.
    return bool(key) and v == key.lstrip("-").upper().replace("-", "_")


def entropy(value: str) -> float:
    """Shannon entropy in bits per character."""
    n = len(value)
    return -sum(c / n * math.log2(c / n) for c in Counter(value).values()) if n else 0.0


_TOKEN_CHARS = re.compile(r"[A-Za-z0-9_\-.+/=~]{8,}")
_DOTTED_NAME = re.compile(r"[A-Za-z_$][\w$]*(?:\.[A-Za-z_$][\w$]*)+")
# A part of 16+ letters and digits mixed, letters after digits and back, is generated, not a name: Vault's legacy
# s.<24> tokens, a bootstrap token's secret half (the parts of class and module names seldom mix them so).
_GENERATED_PART = re.compile(r"(?<![^.])(?=[A-Za-z0-9]{16,}(?:\.|$))(?=[A-Za-z0-9]*[0-9][A-Za-z]+[0-9])")


def credential_like(value: str) -> bool:
    """Looks like a generated credential: 8+ characters of the token alphabet (base64, hex, URL-safe),
    not a path or a dotted name (``android.os.BinderProxy``), with letters and digits, or 20+ characters
    of high entropy (random letters)."""
    if not _TOKEN_CHARS.fullmatch(value) or (_DOTTED_NAME.fullmatch(value) and not _GENERATED_PART.search(value)):
        return False
    if value[0] in "/~." and "+" not in value and not value.endswith("="):
        return False  # a path; base64 may start with '/' too, and then mostly holds a '+' or ends in '='.
    has_alpha = any(c.isalpha() for c in value)
    has_digit = any(c.isdigit() for c in value)
    return (has_alpha and has_digit) or (len(value) >= 20 and "." not in value and entropy(value) >= 3.5)


_HEX = re.compile(r"[0-9a-f]+|[0-9A-F]+")
# Hex has at most 4 bits a character, and a random 32-character key (Kaggle's, Datadog's) falls under 3.5 about
# one time in five (one in twenty at 40): a long hex value is judged on a floor of its own.
HEX_MIN_CHARS = 32
HEX_MIN_ENTROPY = 3.0


def generated_like(value: str) -> bool:
    """A machine-made credential: 16+ characters of the token alphabet, credential-like, entropy 3.5+
    (gitleaks' generic-api-key floor), so that ``step-1000`` or ``model-final`` are not; 32+ hex digits with
    letters and digits on a floor of 3.0."""
    if len(value) < 16 or not credential_like(value):
        return False
    e = entropy(value)
    return e >= 3.5 or (len(value) >= HEX_MIN_CHARS and e >= HEX_MIN_ENTROPY and _HEX.fullmatch(value) is not None
                        and not value.isdigit() and not value.isalpha())


# Keys their vendors document as public, shipped to browsers: Mapbox's pk. tokens (sk. is the secret one), Stripe's
# publishable keys.
_PUBLISHABLE = re.compile(r"pk\.eyJ[\w\-]+\.[\w\-]+|pk_(?:live|test)_[A-Za-z0-9]+")


_USER_PASSWORD = re.compile(r"[^\s:/@]{1,64}:[^\s/]{1,256}")
# A (user, password) tuple's repr: requests, httpx and aiohttp take auth=(user, password), elasticsearch-py
# basic_auth=(user, password) (https://requests.readthedocs.io/en/latest/user/authentication/#basic-authentication).
_AUTH_TUPLE = re.compile(r"""\([ \t]*b?(["'])[^"'\\]{0,256}\1[ \t]*,[ \t]*"""
                         r"""b?(["'])(?P<pw>(?:\\.|[^"'\\]){1,256})\2[ \t]*\)""")
# The pair as a list (json.dumps writes a tuple as one; elasticsearch-py takes either): its second string must look
# like a credential, as a list of two scheme names ("auth": ["basic", "bearer"]) is none.
_AUTH_LIST = re.compile(r"""\[[ \t]*(["'])[^"'\\]{0,256}\1[ \t]*,[ \t]*"""
                        r"""(["'])(?P<pw>(?:\\.|[^"'\\]){1,256})\2[ \t]*\]""")


# nsswitch.conf(5) (https://man7.org/linux/man-pages/man5/nsswitch.conf.5.html): a "passwd:" line names the services
# that look up the password database (getent, sssd and container entrypoints print it), not a password.
NSS_SERVICES = frozenset({"files", "compat", "db", "dns", "nis", "nisplus", "ldap", "sss", "systemd", "winbind",
                          "hesiod", "extrausers", "mymachines", "myhostname", "resolve", "cache", "altfiles",
                          "usrfiles", "wins", "mdns4_minimal", "mdns4", "mdns"})


def _nss_services(value: str, key: str) -> bool:
    words = value.split()
    return key == "passwd" and bool(words) and all(
        w in NSS_SERVICES or (w.startswith("[") and w.endswith("]") and "=" in w) for w in words)


# A key naming secrets in the plural counts them when its value is a small number ("loaded credentials: 3",
# "secrets: 2"): a list of secrets is printed as its items, not as one number.
PLURAL_SECRET_WORDS = frozenset({"secrets", "credentials", "creds", "passwords", "tokens", "keys", "apikeys"})
COUNT_MAX_DIGITS = 4


def _count(value: str, key: str) -> bool:
    v = value.strip()
    if len(v) > COUNT_MAX_DIGITS or not v.isdigit():
        return False
    words = key_words(key)
    return bool(words) and words[-1] in PLURAL_SECRET_WORDS


def is_secret_value(strength: str | None, value: str, key: str = "") -> bool:
    """Is ``value``, held under a key of this strength, a secret?"""
    if strength is None or is_placeholder(value, key) or _PUBLISHABLE.fullmatch(value.strip()):
        return False
    if _nss_services(value, key) or _count(value, key):
        return False
    if strength == "weak":
        # A key that ends in pass or pwd holds a password, which may hold any punctuation (smtp_pass='x%y',
        # ODBC's PWD={a;b}, Data::Dumper's 'pass' => '...'): one word with letters and digits will do there.
        v = value.strip()
        last = key_words(key)[-1:]
        return credential_like(v) or (last in (["pass"], ["pwd"]) and _heading_value(v)
                                      and not any(c.isspace() for c in v)) or (
            # an auth key's user:password pair (celery flower --basic_auth=, --auth USER:PASS), or its (user, password)
            # tuple as a kwargs repr lifted into attributes prints it (requests' and elasticsearch-py's auth=)
            last == ["auth"] and ((_USER_PASSWORD.fullmatch(v) is not None and _heading_value(v.partition(":")[2]))
                                  or ((t := _AUTH_TUPLE.fullmatch(v)) is not None and not is_placeholder(t["pw"]))
                                  or ((t := _AUTH_LIST.fullmatch(v)) is not None and credential_like(t["pw"]))))
    if strength in ("generated", "code"):
        # (a "base64:" head says how the key is written: Laravel's APP_KEY=base64:...)
        v = value.strip()
        return generated_like(v.removeprefix("base64:")) if strength == "generated" else (
            _ONE_TIME_CODE.fullmatch(v) is not None)
    # ("Array cookie:  ac" in AddressSanitizer's shadow-byte legend names no credential)
    if strength != "header":
        return True
    cookie = key.lower().endswith("cookie")
    return len(value.strip()) >= HEADER_MIN_CHARS and (not cookie or _cookie_holds_secret(value))


# Records that hold a secret in a value field named by another of their fields, or by the key above them: a
# parameter store's {Name, Type, Value} (aws ssm get-parameter), a key list's {keyName, permissions, value}
# (az storage account keys list), terraform output -json's {"db_password": {"sensitive", "type", "value"}}, and
# kaggle.json's {"username", "key"} (the Kaggle API's documented credentials file).
RECORD_NAME_FIELDS = frozenset({"name", "key", "keyname", "parametername", "secretname"})
RECORD_VALUE_FIELDS = frozenset({"value", "secretvalue"})
RECORD_USER_FIELDS = frozenset({"username", "user"})
RECORD_FIELDS_MAX = 16  # a record with more fields is a document, not one named value


def record_secret(fields: dict[str, str], parent: str | None,
                  strength_of: Callable[[str], str | None]) -> tuple[str, str] | None:
    """(the field of a record that holds a secret, its strength), for a record whose lower-cased field names map to
    their string values; None when the record names no secret. ``parent`` is the key the record is held under."""
    if len(fields) > RECORD_FIELDS_MAX:
        return None
    value_field = next((f for f in fields if f in RECORD_VALUE_FIELDS), None)
    if value_field is not None and (strength := _record_strength(fields, parent, strength_of)) is not None:
        return value_field, strength
    if "key" in fields and RECORD_USER_FIELDS.intersection(fields):
        return "key", "generated"
    if "encoded" in fields and "api_key" in fields:  # Elasticsearch's API key: encoded is base64(id:api_key)
        return "encoded", "generated"
    return None


def _record_strength(fields: dict[str, str], parent: str | None,
                     strength_of: Callable[[str], str | None]) -> str | None:
    """The strength a name/value record's value has by its name field, its type or the key it is held under."""
    if fields.get("type") == "SecureString":  # SSM's GetParameter(s) --with-decryption: the type says it is one
        return "strong"
    for f in RECORD_NAME_FIELDS.intersection(fields):
        name = re.split(r"[/:]", fields[f].rstrip("/"))[-1]
        strength = strength_of(name) or ("generated" if key_words(name) == ["key"] else None)
        if strength is not None and strength != "header":
            return strength
    if parent is not None and (strength := strength_of(parent)) is not None and strength != "header":
        return strength
    return None


_LISTED_SCHEMES = ("digest", "aws4-hmac-sha256", "sharedkey", "hoba", "mutual")
# Any other word before a space is an auth-scheme too (RFC 7235: ``credentials = auth-scheme [ 1*SP ( token68 /
# #auth-param ) ]``): Okta's ``SSWS``, ``OAuth``, Discord's ``Bot``, ``GenieKey``. Its credentials run to the
# value's end, as a parameter list may follow.
_ANY_SCHEME = re.compile(r"[A-Za-z][A-Za-z0-9_.\-]{0,40}[ \t]+(?=\S)")


# A cookie header's name=value pairs (Set-Cookie's attributes among them), and the runs of token characters in a
# value: signed and encrypted session cookies percent-escape their separators (express's s%3A<id>.<sig>, Laravel's
# base64 JSON ending in %3D).
_COOKIE_PAIR = re.compile(r"([^=;,\s]{1,200})=\"?([^;\s\"]*)")
_TOKEN_RUN = re.compile(r"[A-Za-z0-9_\-.+/=~]{16,}")
# Cookie names that say the value is a session or a login, whatever its length: a short session id is as
# much a credential as a long one (PHPSESSID, JSESSIONID, connect.sid, sessionid, remember_token, XSRF-TOKEN).
_SESSION_COOKIE = re.compile(r"sess|sid|auth|token|login|remember|jwt|xsrf|csrf|sso", re.IGNORECASE)
SESSION_COOKIE_MIN_CHARS = 6
# Cookies that hold no credential however random they look: the AWS load balancers' stickiness cookies (AWSALB,
# AWSALBCORS, AWSALBTG, AWSALBTGCORS, AWSELB; their value names the chosen target, encrypted).
NOT_CREDENTIAL_COOKIES = frozenset({"awsalb", "awsalbcors", "awsalbtg", "awsalbtgcors", "awselb", "awselbcors"})


def _cookie_holds_secret(value: str) -> bool:
    """A Cookie or Set-Cookie value holds a credential unless every cookie in it is plainly none: a preference
    (``theme=dark``) or an analytics id (``_ga=GA1.2.1234567890.1714557123``), neither machine-made nor named as a
    secret. A value without ``name=`` is taken as a credential."""
    pairs = _COOKIE_PAIR.findall(value)
    if not pairs:
        return bool(value.strip())
    for name, v in pairs:
        if name.lower() in NOT_CREDENTIAL_COOKIES:
            continue
        if len(v) >= SESSION_COOKIE_MIN_CHARS and _SESSION_COOKIE.search(name):
            return True
        if any(generated_like(run) for run in _TOKEN_RUN.findall(v.replace("%", " "))):
            return True
        strength = key_strength(name)
        if strength not in (None, "header") and is_secret_value(strength, v, name):
            return True
    return False


def header_secret_span(key: str, value: str) -> tuple[int, int]:
    """The secret part of a header's value (to the end of its line): a cookie's whole value, when a cookie in it
    holds a credential; after an ``Authorization`` scheme word, its one credential, or its parameter list
    (``Digest``, ``AWS4-HMAC-SHA256``)."""
    if key.lower().endswith("cookie"):
        return (0, len(value)) if _cookie_holds_secret(value) else (0, 0)
    m = _SCHEME.match(value)
    start = m.end() if m else 0
    if m and m.group().strip().lower() in _LISTED_SCHEMES:
        return start, len(value)
    if m is None and (other := _ANY_SCHEME.match(value)) is not None:
        return other.end(), len(value.rstrip())
    end = start
    while end < len(value) and not value[end].isspace() and value[end] not in ",;":
        end += 1
    return start, end


def _basic_auth(candidate: str) -> bool:
    """A ``Basic`` header credential: base64 of ``user:password``."""
    try:
        raw = base64.b64decode(candidate + "=" * (-len(candidate) % 4), validate=True)
    except (binascii.Error, ValueError):
        return False
    try:
        text = raw.decode("utf-8")
    except UnicodeDecodeError:
        return False
    return ":" in text and text.isprintable()


def _b64_private_key(candidate: str) -> bool:
    """Base64 of a PEM private-key block (a Kubernetes Secret's ``tls.key``, a CI variable)."""
    head = candidate[:80]
    try:
        text = base64.b64decode(head[: len(head) - len(head) % 4]).decode("ascii", "replace")
    except (binascii.Error, ValueError):
        return False
    return "PRIVATE KEY" in text


_JWT_HEAD = re.compile(r"eyJ[A-Za-z0-9_\-]{8,}\.eyJ")


def _b64_jwt(candidate: str) -> bool:
    """Base64 of a JWT (its head and the start of its claims decode to ``eyJ...``.``eyJ``)."""
    head = candidate[:400]
    try:
        text = base64.b64decode(head[: len(head) - len(head) % 4]).decode("ascii", "replace")
    except (binascii.Error, ValueError):
        return False
    return _JWT_HEAD.match(text) is not None


def _generated_with_digits(value: str) -> bool:
    """Machine-made and holding digits: a token, not a name in camel case (``spark://CoarseGrainedScheduler@``)."""
    return generated_like(value) and any(c.isdigit() for c in value) and any(c.isalpha() for c in value)


def _heading_value(value: str) -> bool:
    """A value printed alone under a heading that names a password or a token: a word of 8+ characters with letters
    and digits (a generated password may hold any punctuation), not a placeholder, a path or a URL."""
    return (len(value) >= 8 and not is_placeholder(value) and "://" not in value
            and any(c.isalpha() for c in value) and any(c.isdigit() for c in value))


# A vendor's token shape filled with a placeholder's character (hf_xxxx..., ghp_XXXX..., sk-****...) is a README's
# placeholder, as gitleaks' allow lists read it. Only those characters: a token filled with any other one
# (ghp_AAAA..., sk-0000...) is how a test or a redacted copy writes a secret, and documented example keys
# (AWS's ...EXAMPLE) are redacted too unless the operator lists them in ``redaction.allow``.
_FILLED = re.compile(r"([xX*\u2022])\1{11}\Z")


def placeholder_token(value: str) -> bool:
    """A token of a vendor's shape that stands for one: its last twelve characters one placeholder character."""
    return _FILLED.search(value) is not None


CHECKS: dict[str, Callable[[str], bool]] = {"heading_value": _heading_value,
                                            "credential": credential_like, "basic_auth": _basic_auth,
                                            "generated_with_digits": _generated_with_digits,
                                            "generated": generated_like, "b64_private_key": _b64_private_key,
                                            "b64_jwt": _b64_jwt,
                                            "not_placeholder": lambda value: not is_placeholder(value)}
