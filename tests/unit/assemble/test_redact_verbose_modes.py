"""Credentials as debug and verbose modes print them (the twelfth probe round, dev11): spark-submit --verbose's
property tuples, Flink's loaded configuration lines, terraform plan's name/value blocks, go-sql-driver/mysql's DSN,
python-ldap's bind calls, ClickHouse's password header, OAuth's device_code and code_verifier, SAML's SAMLResponse;
and what those printers write besides a secret, which must stay as written: Spark's mask, an LDAP search filter, a
Helm chart's existingSecret name."""

from __future__ import annotations

import pytest

from streams.assemble.redact import Redactor

PW = "Kq7mZp2vR4xTL9wd"
AWS = "wJalrXUtnFEMI/K7MDENG/bPxRfiCYzq8Vb3Tn5p"


@pytest.fixture(scope="module", params=[True, False], ids=["hyperscan", "substring"])
def redact(request: pytest.FixtureRequest) -> Redactor:
    return Redactor(prefer_hyperscan=request.param)


@pytest.mark.parametrize(("text", "secret"), [
    (f"  (spark.executor.memory,80g)\n  (spark.hadoop.fs.s3a.secret.key,{AWS})\n  (spark.executor.cores,16)", AWS),
    (f"(spark.executorEnv.DB_PASSWORD,{PW})", PW),
    ("2026-05-01 10:14:22,482 INFO  org.apache.flink.configuration.GlobalConfiguration           [] - Loading "
     f"configuration property: s3.secret-key, {AWS}", AWS),
    (f'      + set {{\n          + name  = "auth.rootPassword"\n          + value = "{PW}"\n        }}', PW),
    (f'  ~ env {{\n        name  = "DB_PASSWORD"\n      ~ value = "{PW}"\n    }}', PW),
    (f'level=info msg="connecting" dsn="mlmeta:{PW}@tcp(mysql.internal:3306)/mlmeta?parseTime=true"', PW),
    (f"db, err := sql.Open(\"mysql\", \"root:{PW}@unix(/var/run/mysqld/mysqld.sock)/runs\")", PW),
    (f"(('cn=jupyterhub,ou=svc,dc=acme,dc=io', '{PW}', None, None), {{}})", PW),
    (f'    conn.simple_bind_s("uid=bot,ou=people,dc=acme,dc=io", "{PW}")', PW),
    (f"> X-ClickHouse-User: ingest\n> X-ClickHouse-Key: {PW}^M", PW),
    (f'{{"device_code":"{AWS[:40].replace("/", "_")}","user_code":"WDJB-MJHT","interval":5}}',
     AWS[:40].replace("/", "_")),
    (f"grant_type=authorization_code&code=abc&client_id=ui&code_verifier={PW}{PW}", PW + PW),
    (f"POST /saml/acs: SAMLResponse=PHNhbWxwOlJlc3BvbnNl{PW}&RelayState=%2Fhome", "PHNhbWxwOlJlc3BvbnNl" + PW),
])
def test_credentials_in_verbose_output_are_redacted(redact: Redactor, text: str, secret: str) -> None:
    out = redact(text)
    assert secret not in out and "[REDACTED:" in out, out


@pytest.mark.parametrize("line", [
    "  (spark.hadoop.fs.s3a.secret.key,*********(redacted))",
    "  (spark.executor.memory,80g)",
    "Loading configuration property: taskmanager.numberOfTaskSlots, 8",
    '      + set {\n          + name  = "replicaCount"\n          + value = "3"\n        }',
    "conn.search('cn=users,dc=acme,dc=io', '(objectClass=person)')",
    "postgresql:\n  auth:\n    existingSecret: mlflow-db-credentials",
    '{"user_code":"WDJB-MJHT","verification_uri":"https://github.com/login/device"}',
    "> X-ClickHouse-Query-Id: 3f2a1b0c-9d8e-7f6a-5b4c-3d2e1f0a9b8c",
])
def test_what_those_printers_write_besides_a_secret_stays(redact: Redactor, line: str) -> None:
    assert redact(line) == line
