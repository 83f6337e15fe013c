"""Credentials as ML clients and cloud CLIs print them (the eleventh probe round, dev10): the storage account keys az
and PowerShell list as table rows, and Cerebras' API keys; and what those printers write besides a secret, which must
stay as written."""

from __future__ import annotations

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
