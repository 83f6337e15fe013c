"""Credentials as ML clients, cloud CLIs and secret stores print them (the eleventh probe round, dev10): the storage
account keys az and PowerShell list as table rows, Cerebras' API keys, the entries secret stores' CLIs take (vault kv
put, modal, fly, doppler, databricks secrets, a value piped into docker secret create or gcloud secrets), SSM's
SecureString parameters, W&B's config.yaml, huggingface_hub's add_space_secret and vault kv get's Data table; and
what those printers write besides a secret, which must stay as written."""

from __future__ import annotations

from types import SimpleNamespace

import pytest

from streams.assemble.redact import Redactor

# 64 bytes of base64, as the Storage listKeys response holds a key
ACCOUNT_KEY = "5OS8c+IebNUxn7YJAZG6xBkDJuku78rjPq4yZtuWmo8a2AdqebLlf3X/7+GJswmpOOPuB77FfZJFjydtQ07wvv=="
CEREBRAS = "csk-04v5n46sn8uxg8hxr698s7lo6d0cq7yhecxo4posqdppdby9"


@pytest.fixture(scope="module", params=[True, False], ids=["hyperscan", "substring"])
def redact(request: pytest.FixtureRequest) -> Redactor:
    return Redactor(prefer_hyperscan=request.param)


@pytest.mark.parametrize(("text", "secret"), [
    # az storage account keys list -o table (older releases, then with the CreationTime column)
    (f"KeyName    Permissions    Value\n---------  -------------  {'-' * 88}\nkey1       FULL           {ACCOUNT_KEY}",
     ACCOUNT_KEY),
    (f"CreationTime                      KeyName    Permissions    Value\n"
     f"2026-05-01T10:12:03.114155+00:00  key2       FULL           {ACCOUNT_KEY}", ACCOUNT_KEY),
    (f"2026-05-01T10:12:03.114155+00:00\tkey1\tFULL\t{ACCOUNT_KEY}", ACCOUNT_KEY),  # -o tsv
    (f"kerb1      READ           {ACCOUNT_KEY}", ACCOUNT_KEY),  # --expand kerb
    (f"KeyName Value{' ' * 80} Permissions CreationTime\nkey1    {ACCOUNT_KEY} Full        5/1/2026 10:12:03 AM",
     ACCOUNT_KEY),  # Get-AzStorageAccountKey
    (f"INFO judge: cerebras client ready ({CEREBRAS}, llama3.1-70b)", CEREBRAS),
    (f"    client = Cerebras(api_key=key)\n    │                         └ '{CEREBRAS}'", CEREBRAS),  # loguru locals
    (f"INFO judge: cerebras client ready ({CEREBRAS.replace('csk-', 'csk_')})", CEREBRAS[4:]),
])
def test_credentials_that_ml_clients_and_cloud_clis_print_are_redacted(redact: Redactor, text: str,
                                                                       secret: str) -> None:
    out = redact(text)
    assert secret not in out and "[REDACTED:" in out, out


@pytest.mark.parametrize("line", [
    "KeyName    Permissions    Value",
    "key1       FULL           (hidden)",
    # an npm lockfile's integrity is base64 of 64 bytes too, under no key name
    '"integrity": "sha512-5OS8c+IebNUxn7YJAZG6xBkDJuku78rjPq4yZtuWmo8a2AdqebLlf3X/7+GJswmpOOPuB77FfZJFjydtQ07wvv=="',
    "cache key1 hit: sha512 " + ACCOUNT_KEY[:40],
    "INFO cluster csk-prod-a100-east ready (16 nodes)",
    "model=llama3.1-70b provider=cerebras max_tokens=1024",
])
def test_what_those_printers_write_besides_a_secret_stays(redact: Redactor, line: str) -> None:
    assert redact(line) == line


VALUE = "Vk7mZp2vR4xTL9wdQ3"


@pytest.mark.parametrize("text", [
    f"+ vault kv put -mount=secret llm/providers mistral={VALUE} region=eu-west-1",
    f"+ vault kv patch secret/llm cohere='{VALUE}'",
    f"+ modal secret create llm-providers MISTRAL={VALUE} REGION=eu",
    f"+ fly secrets set MISTRAL={VALUE} -a rag-api",
    f"+ flyctl secrets set COHERE=\"{VALUE}\" --stage",
    f"+ doppler secrets set COHERE={VALUE} --project rag --config prd",
    f"+ databricks secrets put-secret llm mistral --string-value {VALUE}",
    f"+ databricks secrets put --scope ml --key cohere --string-value '{VALUE}'",
    f"+ printf '%s' '{VALUE}' | docker secret create mistral -",
    f"running: printf '{VALUE}' | docker secret create cohere_v2 -",
    f"+ echo -n {VALUE} | gcloud secrets versions add mistral --data-file=-",
    f"+ echo {VALUE} | sudo podman secret create mistral -",
    f'{{\n    "Parameter": {{\n        "Name": "/llm/mistral",\n        "Type": "SecureString",\n'
    f'        "Value": "{VALUE}",\n        "Version": 3\n    }}\n}}',
    f"mistral_api_key:\n  desc: null\n  value: {VALUE}",
    f"  File \"/app/deploy.py\", line 9, in <module>\n"
    f"    api.add_space_secret(repo_id=\"acme/rag-demo\", key=\"MISTRAL\", value=\"{VALUE}\")",
    f"api.add_space_secret('acme/rag-demo', 'MISTRAL', '{VALUE}')",
])
def test_the_values_secret_stores_are_given_are_redacted(redact: Redactor, text: str) -> None:
    out = redact(text)
    assert VALUE not in out and "[REDACTED:" in out, out


@pytest.mark.parametrize("line", [
    "+ vault kv get -mount=secret -field=region llm/providers",
    "+ vault kv metadata put -max-versions=5 secret/llm",
    "+ modal secret list",
    "+ fly secrets unset MISTRAL -a rag-api",
    "+ fly deploy --env LOG_LEVEL=debug",
    "+ databricks secrets list-secrets llm",
    "+ echo done | tee /tmp/status",
    "+ printf '%s\\n' ready | docker secret ls",
    '{"Parameter": {"Name": "/llm/model", "Type": "String", "Value": "meta-llama/Llama-3.1-8B-Instruct"}}',
    "lr_scheduler_type:\n  desc: null\n  value: cosine_with_restarts",
    "pad_token:\n  desc: null\n  value: <pad>",
    "api.add_space_variable('acme/rag-demo', 'MODEL', 'mistral-large-latest')",
    "api.add_space_secret('acme/rag-demo', 'MISTRAL', os.environ['MISTRAL'])",
])
def test_what_secret_stores_print_besides_a_secret_stays(redact: Redactor, line: str) -> None:
    assert redact(line) == line


def test_the_entries_of_vault_kv_gets_data_table_are_redacted_per_source() -> None:
    """vault kv get prints each line apart, so each is an event: the rows after its "Data" heading are the secret's
    entries, whatever they are named; its Metadata table's rows, and what follows the table, stay."""
    redact = Redactor()

    def event(message: str, file: str = "a.log") -> str:
        out = SimpleNamespace(kind="event", value={"message": message, "source": {"file": file}})
        return str(redact.output(out).value["message"])

    for line in ("======= Metadata =======", "Key                Value", "---                -----",
                 "version            3", "====== Data ======", "Key        Value", "---        -----"):
        assert event(line) == line
    assert event(f"mistral    {VALUE}", file="b.log") == f"mistral    {VALUE}"  # another source's line
    assert event(f"mistral    {VALUE}") == "mistral    [REDACTED:secret]"
    assert event("region     eu-west-1") == "region     [REDACTED:secret]"
    assert event("+ python serve.py") == "+ python serve.py"
    assert event("INFO  serving on :8080") == "INFO  serving on :8080"  # the table ended
