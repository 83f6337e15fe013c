"""The dev16 round of the secrets probe: credentials inside JSON log records, as application loggers and log agents
print them.

Each case names the logger or agent that prints the record and a URL of its documentation or code. Values are drawn
from a seeded random generator in the published shape, so none is a real credential. The records are those of
structlog's JSONRenderer, python-json-logger, pino (with pino-http's request serializer), bunyan, zap, zerolog,
logrus' JSONFormatter, Go's slog JSONHandler (groups as nested objects), logstash-logback-encoder, Serilog's compact
JSON, ECS loggers (dotted keys), Cloud Logging's jsonPayload and OpenTelemetry's logRecord attributes (a list of
``{key, value: {stringValue}}``), and the envelopes agents put around them (docker's json-file ``log`` holding a JSON
line, Fluent Bit's ``[time, {record}]``, Vector's and Filebeat's ``message``). The secret sits under key names the
rules did not know (``sas``, ``sig``, ``jwt``, ``refresh``, ``connectionString``, ``dsn``), in a value that is itself
JSON text, a URL with credentials or a query string with a token, in arrays of objects and header pairs, under dotted,
dashed, camelCase and upper-case keys, deep in nesting, and in records an agent escaped once more. ``_look_alikes`` are
values of the same records that hold no secret (ids, hashes, token counts, ``token_type``, ``expires_in``, key names
without a value, masks) and must come out as written.

    python -m devtools.secret_probe generate dev16    # writes tests/fixtures/secret_probe/dev16.jsonl only
"""

from __future__ import annotations

import json
from pathlib import Path
from urllib.parse import quote

from devtools.secret_probe_draws import Case, Draws, LookAlike, case_rows, keep_rows, write_rows
from devtools.secret_probe_kinds import ALNUM, B64, HEX, URLSAFE, b64url

_draws = Draws(16016)
rand, uuid4 = _draws.rand, _draws.uuid4
_ISO = "2026-05-02T08:41:09.117Z"

STRUCTLOG = "https://www.structlog.org/en/stable/api.html#structlog.processors.JSONRenderer"
PYJSONLOG = "https://github.com/nhairs/python-json-logger/blob/main/src/pythonjsonlogger/core.py"
PINO = "https://github.com/pinojs/pino/blob/main/docs/api.md"
PINO_HTTP = "https://github.com/pinojs/pino-std-serializers/blob/master/lib/req.js"
BUNYAN = "https://github.com/trentm/node-bunyan#core-fields"
ZAP = "https://github.com/uber-go/zap/blob/master/zapcore/json_encoder.go"
ZEROLOG = "https://github.com/rs/zerolog/blob/master/README.md"
LOGRUS = "https://github.com/sirupsen/logrus/blob/master/json_formatter.go"
SLOG = "https://pkg.go.dev/log/slog#JSONHandler"
LOGSTASH = "https://github.com/logfellow/logstash-logback-encoder#standard-fields"
SERILOG = "https://github.com/serilog/serilog-formatting-compact#format-details"
ECS = "https://www.elastic.co/guide/en/ecs-logging/overview/current/intro.html"
GCL = "https://cloud.google.com/logging/docs/reference/v2/rest/v2/LogEntry"
OTEL = "https://opentelemetry.io/docs/specs/otel/protocol/file-exporter/"
DOCKER = "https://docs.docker.com/engine/logging/drivers/json-file/"
FLUENTBIT = "https://docs.fluentbit.io/manual/pipeline/outputs/standard-output"
VECTOR = "https://vector.dev/docs/reference/configuration/sources/kubernetes_logs/#output-data"
FILEBEAT = "https://www.elastic.co/guide/en/beats/filebeat/current/exported-fields-log.html"


def j(obj: object) -> str:
    return json.dumps(obj, separators=(",", ":"))


def jwt() -> str:
    head = b64url(json.dumps({"alg": "HS256", "typ": "JWT"}).encode())
    body = b64url(json.dumps({"sub": "u-4821", "scope": "read write", "exp": 1893456000}).encode())
    return f"{head}.{body}.{rand(43, URLSAFE)}"


def _app_loggers() -> list[Case]:
    f: list[Case] = []
    add = f.append
    sas = "sv=2022-11-02&ss=b&srt=co&sp=rwdlac&se=2026-06-01T00:00:00Z&sig=" + quote(rand(44, B64), safe="")
    add(("structlog_sas_key", "structlog's JSONRenderer with an Azure SAS under a key named sas (" + STRUCTLOG
         + "; https://learn.microsoft.com/en-us/azure/storage/common/storage-sas-overview)", sas.split("sig=")[1], [
            ("structlog_sas", j({"container": "ckpts", "sas": sas, "event": "uploading shard", "level": "info",
                                 "timestamp": _ISO})),
        ]))
    sig = rand(43, URLSAFE)
    add(("structlog_sig_key", "structlog's JSONRenderer with a signature under 'sig' (" + STRUCTLOG + ")", sig, [
        ("structlog_sig", j({"event": "webhook verified", "sig": sig, "alg": "hmac-sha256", "level": "debug",
                             "logger": "hooks", "timestamp": _ISO})),
    ]))
    tok = jwt()
    add(("pyjsonlog_jwt_extra", "python-json-logger's record with a JWT under 'jwt' passed in extra= (" + PYJSONLOG
         + ")", tok.rsplit(".", 1)[1], [
            ("pyjsonlog_jwt", j({"asctime": "2026-05-02 08:41:09,117", "levelname": "DEBUG", "name": "auth",
                                 "message": "token issued", "jwt": tok, "user_id": 4821})),
        ]))
    ref = rand(64, URLSAFE)
    add(("pyjsonlog_refresh", "python-json-logger's record of an OAuth client's response, the refresh token under "
         "'refresh' (" + PYJSONLOG + "; https://datatracker.ietf.org/doc/html/rfc6749#section-5.1)", ref, [
            ("pyjsonlog_refresh_key", j({"asctime": "2026-05-02 08:41:09,117", "levelname": "INFO", "name": "oauth",
                                         "message": "tokens refreshed", "refresh": ref, "expires_in": 3600})),
        ]))
    pw = rand(18, ALNUM)
    conn = f"Server=tcp:sql-prod.database.windows.net,1433;Database=feat;User ID=ml_app;Password={pw};Encrypt=True;"
    add(("serilog_connection_string", "Serilog's compact JSON with an ADO.NET connection string as a property ("
         + SERILOG + "; https://learn.microsoft.com/en-us/dotnet/framework/data/adonet/connection-strings)", pw, [
            ("serilog_connstr", j({"@t": _ISO, "@mt": "Opening {ConnectionString}", "@l": "Debug",
                                   "ConnectionString": conn, "SourceContext": "Feat.Db"})),
        ]))
    pw = rand(16, ALNUM)
    add(("pino_dsn_url", "pino's record with a database URL with credentials under 'dsn' (" + PINO + ")", pw, [
        ("pino_dsn", j({"level": 30, "time": 1777711269117, "pid": 42, "hostname": "gw-1",
                        "dsn": f"postgres://gw:{pw}@pg.internal:5432/gw?sslmode=require", "msg": "db pool ready"})),
    ]))
    tok = rand(40, ALNUM)
    add(("pino_http_rawheaders", "pino-http's request serializer: headers as an object (" + PINO_HTTP + ")", tok, [
        ("pino_http_auth_header", j({"level": 30, "time": 1777711269117, "pid": 42, "hostname": "gw-1",
                                     "req": {"id": 7, "method": "GET", "url": "/v1/models",
                                             "headers": {"host": "gw:8080", "authorization": "Bearer " + tok,
                                                         "user-agent": "curl/8.5.0"},
                                             "remoteAddress": "10.0.3.7", "remotePort": 51234},
                                     "msg": "request completed"})),
    ]))
    cookie = rand(32, ALNUM)
    add(("pino_set_cookie_array", "pino-http's response serializer: set-cookie as an array of strings (" + PINO_HTTP
         + "; https://nodejs.org/api/http.html#responsegetheadername)", cookie, [
            ("pino_set_cookie", j({"level": 30, "time": 1777711269117, "res": {"statusCode": 302, "headers": {
                "location": "/home", "set-cookie": [f"sid={cookie}; Path=/; HttpOnly; Secure",
                                                    "theme=dark; Path=/"]}}, "msg": "request completed"})),
        ]))
    tok = rand(40, ALNUM)
    add(("header_pairs_array", "headers as [name, value] pairs in a record (undici's and fetch's Headers iterated; "
         "https://developer.mozilla.org/en-US/docs/Web/API/Headers/entries; " + BUNYAN + ")", tok, [
            ("bunyan_header_pairs", j({"name": "sync", "hostname": "w1", "pid": 9, "level": 20,
                                       "headers": [["accept", "application/json"], ["authorization", "token " + tok]],
                                       "msg": "outgoing request", "time": _ISO, "v": 0})),
        ]))
    key = rand(40, B64)
    add(("zap_secret_access_key", "zap's JSON encoder with AWS credentials as fields, camelCase as the SDK's struct "
         "(" + ZAP + "; https://docs.aws.amazon.com/STS/latest/APIReference/API_Credentials.html)", key, [
            ("zap_aws_creds", j({"level": "debug", "ts": 1777711269.117, "caller": "s3sync/creds.go:88",
                                 "msg": "assumed role", "credentials": {"accessKeyId": "ASIA" + rand(16, "ABCDEFGHIJKLM"
                                                                                                       "NOPQRSTUVWXYZ234567"),
                                                                        "secretAccessKey": key,
                                                                        "expiration": "2026-05-02T09:41:09Z"}})),
        ]))
    tok = rand(356, B64)
    add(("zerolog_session_token_header", "zerolog's record with the STS session token under x-amz-security-token ("
         + ZEROLOG + "; https://docs.aws.amazon.com/AmazonS3/latest/API/RESTCommonRequestHeaders.html)", tok, [
            ("zerolog_amz_token", j({"level": "debug", "x-amz-security-token": tok, "bucket": "ckpts",
                                     "time": "2026-05-02T08:41:09Z", "message": "signing request"})),
        ]))
    pw = rand(20, ALNUM)
    add(("logrus_pgpassword_env", "logrus' JSONFormatter with the process environment as a field (" + LOGRUS
         + "; https://www.postgresql.org/docs/current/libpq-envars.html)", pw, [
            ("logrus_env_map", j({"env": {"PGHOST": "pg.internal", "PGUSER": "etl", "PGPASSWORD": pw},
                                  "level": "info", "msg": "starting migration", "time": "2026-05-02T08:41:09Z"})),
            ("logrus_env_list", j({"env": ["PGHOST=pg.internal", "PGUSER=etl", "PGPASSWORD=" + pw],
                                   "level": "info", "msg": "exec psql", "time": "2026-05-02T08:41:09Z"})),
        ]))
    pw = rand(14, ALNUM) + "!"
    add(("slog_group_db_pass", "slog's JSONHandler with a group (slog.Group) nesting db_pass (" + SLOG + ")", pw, [
        ("slog_group", j({"time": "2026-05-02T08:41:09.117Z", "level": "INFO", "msg": "config loaded",
                          "config": {"db": {"host": "pg", "port": 5432, "db_user": "app", "db_pass": pw}}})),
    ]))
    key = rand(40, URLSAFE)
    add(("slog_client_secret_camel", "slog's JSONHandler logging an OAuth client config with clientSecret (" + SLOG
         + ")", key, [
            ("slog_oauth_client", j({"time": "2026-05-02T08:41:09.117Z", "level": "DEBUG", "msg": "oidc client",
                                     "oauth": {"clientId": "grafana", "clientSecret": key,
                                               "scopes": ["openid", "email"]}})),
        ]))
    ver = rand(64, URLSAFE)
    add(("logstash_code_verifier_query", "logstash-logback-encoder's record of a token request with PKCE's "
         "code_verifier in a form body (" + LOGSTASH + "; https://datatracker.ietf.org/doc/html/rfc7636#section-4.5)",
         ver, [
            ("logstash_form_body", j({"@timestamp": "2026-05-02T08:41:09.117+00:00", "@version": "1",
                                      "message": "POST /oauth2/token body=grant_type=authorization_code&code="
                                                 + rand(24, URLSAFE) + "&code_verifier=" + ver
                                                 + "&redirect_uri=https%3A%2F%2Fapp%2Fcb",
                                      "logger_name": "c.a.auth.TokenClient", "thread_name": "http-nio-8080-exec-3",
                                      "level": "DEBUG", "level_value": 10000})),
        ]))
    pk = [rand(64, B64) for _ in range(4)] + [rand(24, B64) + "=="]
    pem = "-----BEGIN PRIVATE KEY-----\n" + "\n".join(pk) + "\n-----END PRIVATE KEY-----\n"
    add(("logstash_private_key_camel", "logstash-logback-encoder's structured argument (kv) privateKey with a PEM ("
         + LOGSTASH + ")", pk[1], [
            ("logstash_private_key", j({"@timestamp": "2026-05-02T08:41:09.117+00:00", "@version": "1",
                                        "message": "loaded signing material", "level": "INFO",
                                        "privateKey": pem, "keyId": "k-2026-05"})),
        ]))
    return f


def _structured() -> list[Case]:
    f: list[Case] = []
    add = f.append
    pw = rand(18, ALNUM)
    add(("ecs_dotted_url_userinfo", "ECS's dotted url.original with credentials in the userinfo (" + ECS
         + "; https://www.elastic.co/guide/en/ecs/current/ecs-url.html)", pw, [
            ("ecs_url_original", j({"@timestamp": _ISO, "log.level": "info", "message": "fetching index",
                                    "ecs.version": "1.6.0", "url.original": f"https://indexer:{pw}@es.internal:9200/"
                                                                            "_cat/indices"})),
        ]))
    tok = rand(40, ALNUM)
    add(("ecs_query_token", "ECS's url.query with an access token in the query string (" + ECS + ")", tok, [
        ("ecs_url_query", j({"@timestamp": _ISO, "log.level": "info", "message": "GET /export",
                             "url.path": "/export", "url.query": f"format=csv&access_token={tok}&page=2"})),
    ]))
    tok = rand(48, ALNUM)
    add(("gcl_json_payload_nested", "Cloud Logging's LogEntry with jsonPayload holding a request with an api key "
         "header (" + GCL + ")", tok, [
            ("gcl_x_goog_api_key", j({"insertId": "1x9v2k3f" + rand(6, "abcdefghijklmnop"),
                                      "jsonPayload": {"message": "upstream call", "request": {"headers": {
                                          "X-Goog-Api-Key": tok, "Content-Type": "application/json"}}},
                                      "resource": {"type": "k8s_container", "labels": {"cluster_name": "ml"}},
                                      "severity": "DEBUG", "timestamp": _ISO})),
        ]))
    pw = rand(20, ALNUM)
    add(("otel_attributes_connstr", "OpenTelemetry's logRecord attributes as key/value pairs (OTLP JSON), a "
         "connection string under db.connection_string (" + OTEL + "; "
         "https://opentelemetry.io/docs/specs/semconv/database/database-spans/)", pw, [
            ("otel_log_record", j({"resourceLogs": [{"resource": {"attributes": [
                {"key": "service.name", "value": {"stringValue": "feat"}}]}, "scopeLogs": [{"logRecords": [{
                    "timeUnixNano": "1777711269117000000", "severityText": "INFO",
                    "body": {"stringValue": "db connect"}, "attributes": [
                        {"key": "db.system", "value": {"stringValue": "mysql"}},
                        {"key": "db.connection_string",
                         "value": {"stringValue": f"mysql://feat:{pw}@mysql.internal:3306/feat"}}]}]}]}]})),
        ]))
    tok = rand(40, ALNUM)
    add(("otel_attributes_token", "OpenTelemetry's logRecord attribute pairs with a bearer token under "
         "http.request.header.authorization, its value an array (" + OTEL + "; "
         "https://opentelemetry.io/docs/specs/semconv/http/http-spans/)", tok, [
            ("otel_header_attr", j({"timeUnixNano": "1777711269117000000", "body": {"stringValue": "request"},
                                    "attributes": [{"key": "http.request.header.authorization",
                                                    "value": {"arrayValue": {"values": [
                                                        {"stringValue": "Bearer " + tok}]}}}]})),
        ]))
    key = rand(32, ALNUM)
    inner = j({"service": "billing", "stripe": {"mode": "live", "apiKey": "sk_live_" + key}})
    add(("json_text_value", "a JSON config serialized into a string field of a structlog record (" + STRUCTLOG
         + ")", key, [
            ("structlog_json_in_string", j({"event": "config", "config_json": inner, "level": "debug",
                                            "timestamp": _ISO})),
        ]))
    tok = rand(40, ALNUM)
    add(("message_extra_split", "python-json-logger's record where the message names the credential and extra "
         "holds it under a generic key (" + PYJSONLOG + ")", tok, [
            ("pyjsonlog_message_value", j({"asctime": "2026-05-02 08:41:09,117", "levelname": "WARNING",
                                           "name": "deploy", "message": "using deploy token", "value": tok,
                                           "expires": "2026-06-01"})),
        ]))
    pw = rand(20, ALNUM)
    add(("array_of_objects_creds", "an array of datasource objects in a record (Grafana's provisioning, logged by "
         "a zap encoder; " + ZAP + "; https://grafana.com/docs/grafana/latest/administration/provisioning/)", pw, [
            ("zap_datasources", j({"level": "info", "ts": 1777711269.117, "msg": "provisioned",
                                   "datasources": [{"name": "prom", "url": "http://prom:9090"},
                                                   {"name": "pg", "user": "grafana",
                                                    "secureJsonData": {"password": pw}}]})),
        ]))
    pin = "48213977"
    add(("numbers_as_strings", "a one-time passcode as a numeric string in a bunyan record (" + BUNYAN + ")",
         pin, [
            ("bunyan_otp", j({"name": "mfa", "hostname": "w1", "pid": 9, "level": 20, "otp": pin,
                              "msg": "sent code", "time": _ISO, "v": 0})),
        ]))
    return f


def _envelopes() -> list[Case]:
    f: list[Case] = []
    add = f.append
    key = rand(40, ALNUM)
    app = j({"level": "info", "ts": 1777711269.117, "msg": "clients ready", "sas": "sv=2022-11-02&sig=" + key})
    add(("docker_json_log_inner", "docker's json-file driver: the log field holds the app's JSON line, escaped ("
         + DOCKER + ")", key, [
            ("docker_log_field", j({"log": app + "\n", "stream": "stdout", "time": "2026-05-02T08:41:09.117Z"})),
        ]))
    sec = rand(40, URLSAFE)
    app = j({"level": "debug", "msg": "oidc", "oidc": {"client_id": "web", "clientSecret": sec}})
    add(("fluentbit_stdout_escaped", "Fluent Bit's stdout output of a docker record: [time, {log: ...}] with the "
         "app's JSON line escaped inside (" + FLUENTBIT + ")", sec, [
            ("fluentbit_record", "[0] kube.var.log.containers.web-7f9c_default_web-1.log: [1777711269.117000000, "
             + j({"log": app + "\n", "stream": "stdout", "time": "2026-05-02T08:41:09.117Z"}) + "]"),
        ]))
    tok = jwt()
    app = j({"time": "2026-05-02T08:41:09Z", "level": "INFO", "msg": "ws connect",
             "headers": {"Sec-WebSocket-Protocol": "graphql-ws", "Cookie": "jwt=" + tok}})
    add(("vector_message_escaped_twice", "Vector's kubernetes_logs event, its message the container's JSON line, "
         "printed by its console sink as JSON (" + VECTOR + ")", tok.rsplit(".", 1)[1], [
            ("vector_k8s_event", j({"file": "/var/log/pods/ml_ws-0/ws/0.log", "kubernetes": {"pod_name": "ws-0"},
                                    "message": j({"log": app + "\n", "stream": "stdout"}),
                                    "source_type": "kubernetes_logs", "timestamp": _ISO})),
        ]))
    key = rand(32, ALNUM)
    app = j({"@timestamp": _ISO, "log.level": "info", "message": "starting exporter",
             "exporter": {"endpoint": "https://otlp.acme.io", "headers": "x-honeycomb-team=" + key}})
    add(("filebeat_message_json", "Filebeat's event with the container's ECS JSON line in message (" + FILEBEAT
         + "; https://opentelemetry.io/docs/specs/otel/protocol/exporter/#specifying-headers-via-environment-variables"
         ")", key, [
            ("filebeat_event", j({"@timestamp": _ISO, "message": app, "input": {"type": "container"},
                                  "log": {"file": {"path": "/var/log/containers/exp.log"}, "offset": 4821}})),
        ]))
    pw = rand(16, ALNUM)
    add(("gcl_text_payload_redis_url", "Cloud Logging's jsonPayload of a worker printing its broker URL under "
         "'broker' (" + GCL + "; https://docs.celeryq.dev/en/stable/userguide/configuration.html#broker-url)", pw, [
            ("gcl_broker", j({"jsonPayload": {"broker": f"rediss://:{pw}@redis.internal:6380/0",
                                              "message": "celery worker ready"},
                              "severity": "INFO", "timestamp": _ISO})),
        ]))
    return f


def _look_alikes() -> list[LookAlike]:
    sha = rand(64, HEX)
    rid = uuid4()
    return [
        ("token_type_bearer", "RFC 6749's token response fields", 'Bearer',
         j({"event": "token response", "token_type": "Bearer", "expires_in": 3600, "scope": "read",
            "timestamp": _ISO})),
        ("expires_in", "an OAuth response's lifetime", '3599',
         j({"level": 30, "msg": "refreshed", "expires_in": "3599", "refresh_expires_in": "86400"})),
        ("token_counts", "an LLM gateway's usage record", '322',
         j({"level": "info", "msg": "completion", "usage": {"prompt_tokens": "1201", "completion_tokens": "322"}})),
        ("request_id", "pino-http's request id", rid, j({"level": 30, "req": {"id": rid, "method": "GET"},
                                                        "msg": "request completed"})),
        ("sha256_digest", "a record with an image digest", "sha256:" + sha,
         j({"level": "info", "msg": "pulled", "image": "ghcr.io/acme/app@sha256:" + sha})),
        ("masked_password", "a logger's mask", '********',
         j({"level": "info", "msg": "db config", "password": "********", "user": "app"})),
        ("redacted_authorization", "pino's redact option's censor",
         '[Redacted]',
         j({"level": 30, "req": {"headers": {"authorization": "[Redacted]"}}, "msg": "request completed"})),
        ("key_names_without_value", "a record listing the secret keys it loaded", '["sas","clientSecret"]',
         j({"level": "info", "msg": "secrets mounted", "keys": ["sas", "clientSecret"]})),
        ("otel_trace_ids", "OTLP's trace and span ids", (tid := rand(32, HEX)),
         j({"traceId": tid, "spanId": rand(16, HEX), "body": {"stringValue": "ok"}})),
        ("docker_plain_log", "docker's json-file with a plain line", "listening on :8080",
         j({"log": "listening on :8080\n", "stream": "stdout", "time": "2026-05-02T08:41:09.117Z"})),
        ("gcl_insert_id", "Cloud Logging's insertId", '1x9v2k3fb7d2e0',
         j({"insertId": "1x9v2k3fb7d2e0", "jsonPayload": {"message": "ok"}, "severity": "INFO"})),
        ("sig_alg_name", "a signature algorithm's name", 'RS256',
         j({"event": "jwks", "kid": "k-2026-05", "sig": "RS256", "use": "sig"})),
        ("connection_string_no_pw", "a connection string without a password",
         "Server=tcp:sql.internal,1433;Database=feat;Authentication=Active Directory Managed Identity;",
         j({"@t": _ISO, "@mt": "Opening {ConnectionString}", "ConnectionString":
            "Server=tcp:sql.internal,1433;Database=feat;Authentication=Active Directory Managed Identity;"})),
        ("dsn_no_password", "a DSN without credentials", "postgres://pg.internal:5432/gw",
         j({"level": 30, "dsn": "postgres://pg.internal:5432/gw", "msg": "db pool ready"})),
        ("refresh_interval", "a record with a refresh interval", '30s',
         j({"level": "info", "msg": "dashboard", "refresh": "30s", "uid": "abc123XYZ"})),
        ("jwt_alg_config", "a JWT middleware's config", 'RS256',
         j({"level": "info", "msg": "auth config", "jwt": {"alg": "RS256", "leeway": "60s"}})),
        ("commit_sha", "a build record's commit", (c40 := rand(40, HEX)),
         j({"level": "info", "msg": "build info", "commit": c40, "go": "go1.22.3"})),
    ]


def rows() -> list[dict[str, str]]:
    _draws.reset()
    groups = (_app_loggers, _structured, _envelopes)
    return case_rows(case for group in groups for case in group()) + keep_rows(_look_alikes())


def write(path: Path) -> int:
    return write_rows(path, rows())
