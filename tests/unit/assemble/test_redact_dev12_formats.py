"""Credentials in the formats and places of the thirteenth probe round (dev12): vendors' token prefixes (Pinecone,
Neon, Buildkite, Amazon Bedrock, Bitwarden), webhooks whose path is the key, XML elements named by a key attribute,
curl's config file, redis-cli's prompt, a data source's SQL OPTIONS, wandb login's and HTTPie's arguments, Rails'
token header and password words of other languages; and what those places also hold that must stay as written:
references to where a secret is kept, ciphertext meant to be committed, a load balancer's cookie."""

from __future__ import annotations

import pytest

from streams.assemble.redact import Redactor

PW = "Kq7mZp2vR4xTL9wd"
TOKEN = "c0d3f5a8b1e94d7fa2c6e8b0d4f1a3c5"


@pytest.fixture(scope="module", params=[True, False], ids=["hyperscan", "substring"])
def redact(request: pytest.FixtureRequest) -> Redactor:
    return Redactor(prefer_hyperscan=request.param)


PINECONE = "pcsk_4Tq2z_" + "Zx8vN3mK5pL7qR9sT1uW4yA6cE8gI0kM2oQ4sU6wY8aC0eG2iK4mO6"
NEON = "napi_" + "k3j5h7g9f1d3s5a7p9o1i3u5y7t9r1e3w5q7z9x1c3v5b7n9m1l3k5j7h9g1f3d5"
BUILDKITE = "bkua_" + "0f1e2d3c4b5a69788796a5b4c3d2e1f00f1e2d3c"
BEDROCK = "ABSK" + "QmVkcm9ja0FQSUtleS1hYmNkLWF0LTEyMzQ1Njc4OTAxMjpZbVZrY205amEwRlFTVXRsZVMxaFltTmtMV0YwTFRF" + "x9Z2"
BITWARDEN = "0.4f2a9c1e-7b3d-4e5f-8a9b-0c1d2e3f4a5b.Zx8vN3mK5pL7qR9sT1uW4yA6cE8gI0:q2W4e6R8t0Y2u4I6o8P0aQ=="


@pytest.mark.parametrize(("text", "secret"), [
    (f"pinecone client initialised with {PINECONE} env=us-east-1-aws", PINECONE),
    (f"neonctl: using {NEON} from NEON_API_KEY", NEON),
    (f"buildkite: token {BUILDKITE} has scopes read_builds", BUILDKITE),
    (f'declare -x AWS_BEARER_TOKEN_BEDROCK="{BEDROCK}"', BEDROCK),
    (f"+ bws secret list --access-token {BITWARDEN}", BITWARDEN),
    ("notify: POST https://chat.acme.io/hooks/uxko5dmm6ubcygw4svz3ok1zqm -> 200", "uxko5dmm6ubcygw4svz3ok1zqm"),
    ("alert: POST https://open.feishu.cn/open-apis/bot/v2/hook/7d3928a0-e332-4983-9cb2-c78ebea69e53 ok",
     "7d3928a0-e332-4983-9cb2-c78ebea69e53"),
    ("zapier: POST https://hooks.zapier.com/hooks/catch/9271978/z0g24g/ 200", "9271978/z0g24g"),
    ("POST https://maker.ifttt.com/trigger/train_done/with/key/fF7sRg4wRNZlkRA_5X4TkP 200", "fF7sRg4wRNZlkRA_5X4TkP"),
    (f'<entry key="db.user">ml</entry>\n<entry key="db.password">{PW}</entry>', PW),
    (f'<bean id="ds">\n  <property name="secretKey">{PW}</property>\n</bean>', PW),
    (f'# ~/.curlrc\nsilent\nuser = "ci:{PW}"\nretry = 3', PW),
    (f"127.0.0.1:6379> AUTH default {PW}\nOK", PW),
    (f"redis-master:6380[2]> auth {PW}", PW),
    (f"CREATE TABLE runs USING org.apache.spark.sql.jdbc OPTIONS (url 'jdbc:postgresql://pg/ml', user 'ml', "
     f"password '{PW}');", PW),
    (f"+ wandb login --relogin {TOKEN}{TOKEN[:8]}", TOKEN),
    (f"+ http -a admin:{PW} POST https://grafana.acme.io/api/dashboards/db", PW),
    (f'> Authorization: Token token="{TOKEN}", email="ml@acme.io"', TOKEN),
    (f"datenbank:\n  benutzer: ml\n  passwort: {PW}", PW),
    (f"MOT_DE_PASSE={PW}", PW),
])
def test_credentials_in_dev12_formats_are_redacted(redact: Redactor, text: str, secret: str) -> None:
    out = redact(text)
    assert secret not in out and "[REDACTED:" in out, out


@pytest.mark.parametrize("line", [
    "fetched SecretId=arn:aws:secretsmanager:us-east-1:123456789012:secret:prod/ml/db-Ab3dEf VersionStage=AWSCURRENT",
    "WANDB_API_KEY=op://ml-infra/wandb/credential",
    "DB_PASSWORD=@Microsoft.KeyVault(SecretUri=https://ml-kv.vault.azure.net/secrets/db/)",
    "        - name: PGPASSWORD\n          value: {{ .Values.postgresql.auth.password }}",
    "db:\n  password: ENC[AES256_GCM,data:kOaf5vUwJ0DIJbWtPRWV9RmsJSS8mOwS,"
    "iv:B1r7UJnLS4xoaFEEqYAmDhoFJv27dVjDUJkxTeF7Xls=,tag:mGDsDxL+nshF5kJXwobO4w==,type:str]",
    "kind: SealedSecret\nspec:\n  encryptedData:\n    password: AgBBkpDH0ReDgUPwJiRp7hNa36yBts2JY+q9ZaFqCKofhUICdkrK"
    "KdeAPlIbWVoyt3YKND0HtvcfNQRLW0aUS5leqvt2cCJ0hv62JRAAonXhvuENom8SW2gGN+DNJ7siHxNtBMqfPs0FKWd",
    "< Set-Cookie: AWSALB=yOidvSnwCMTcSHSvt2prcQCkk11YI8lbhyX+f0sJ4YgcBV6eJH6VwFHUwud4HTNYfK61nSCBfNR6LuNjSG8W7y8A=; "
    "Expires=Fri, 08 May 2026 10:14:22 GMT; Path=/",
    "see https://github.com/acme/trainer/settings/hooks/48213 and https://docs.acme.io/webhooks/incoming-setup",
    "wandb: Run summary: login 3 steps",
    "+ http -a admin POST https://grafana.acme.io/api/dashboards/db",
    '<entry key="db.user">ml</entry>',
    'services:\n  trainer:\n    user: "1000:1000"', 'user = "1000:1000"',
    "127.0.0.1:6379> GET session:42",
    "OPTIONS (url 'jdbc:postgresql://pg/ml', dbtable 'runs', user 'ml')",
])
def test_what_those_places_hold_besides_a_secret_stays(redact: Redactor, line: str) -> None:
    assert redact(line) == line
