"""Credentials of the eighteenth probe round (dev17, inside structured records and dumps ML tooling prints) and the
values beside them that must stay, one test per rule: the name of an environment variable that holds a secret is
no secret (a job's list of the secrets it needs, ``password: DB_PASSWORD`` in a config)."""

from __future__ import annotations

import pytest

from streams.assemble.redact import Redactor


@pytest.fixture(scope="module")
def redact() -> Redactor:
    return Redactor()


@pytest.mark.parametrize("line", [
    "required secrets: ['HF_TOKEN', 'WANDB_API_KEY']",
    "{'secrets': ['OPENAI_API_KEY', 'AWS_SECRET_ACCESS_KEY']}",
    "password: DB_PASSWORD",
    "api_key = 'OPENAI_API_KEY'",
    # a compose service's secrets and a pod's Secret names: objects that hold a secret, by their names
    "services:\n  db:\n    secrets:\n      - db_password\n      - source: db_root\n",
    "secrets: ['db_password', 'hf-token']",
])
def test_the_name_of_a_variable_that_holds_a_secret_stays(redact: Redactor, line: str) -> None:
    """A value in upper case whose words name a secret says which variable holds it."""
    assert redact(line) == line


@pytest.mark.parametrize(("line", "value"), [
    ("password: AB12_CD34_EF56", "AB12_CD34_EF56"),
    ("HF_TOKEN=HF_TOKEN_X9Q2KD7W", "HF_TOKEN_X9Q2KD7W"),
    ("secrets: ['Xk9pQ2mN4vL8']", "Xk9pQ2mN4vL8"),
    ("DB_PASSWORD=s3cret-pass_2", "s3cret-pass_2"),
])
def test_an_upper_case_value_whose_words_name_no_secret_is_still_one(redact: Redactor, line: str, value: str) -> None:
    assert value not in redact(line)


@pytest.mark.parametrize("line", [
    "password: ???",
    "{'db': {'host': 'pg.internal', 'password': '???'}}",
])
def test_omegaconf_s_missing_value_stays(redact: Redactor, line: str) -> None:
    """OmegaConf prints a mandatory value not given yet as ``???`` (``MISSING``); Hydra's config dump shows it."""
    assert redact(line) == line


PASSWORD = "Qm3xT9vLp2Wz"


@pytest.mark.parametrize("text", [
    f'{{"ParameterKey": "DbPassword", "ParameterValue": "{PASSWORD}"}}',
    f'[\n    {{\n        "ParameterKey": "AdminPassword",\n        "ParameterValue": "{PASSWORD}"\n    }}\n]',
    f"aws cloudformation create-stack --stack-name ml --parameters ParameterKey=DbPassword,ParameterValue={PASSWORD}"
    " ParameterKey=Env,ParameterValue=prod",
])
def test_a_cloudformation_parameter_value_under_a_secret_s_key_is_redacted(redact: Redactor, text: str) -> None:
    """CloudFormation names a stack parameter in ParameterKey and gives it in ParameterValue (describe-stacks'
    output, create-stack's --parameters shorthand); the other parameters stay."""
    out = redact(text)
    assert PASSWORD not in out and out.replace("[REDACTED:secret]", PASSWORD) == text


def test_a_cloudformation_parameter_that_is_no_secret_stays(redact: Redactor) -> None:
    line = '[{"ParameterKey": "InstanceType", "ParameterValue": "p4d.24xlarge"}, {"ParameterKey": "Env", ' \
           '"ParameterValue": "prod"}]'
    assert redact(line) == line


@pytest.mark.parametrize("line", [
    # json.dumps of a record whose field is json.dumps of a record holding the secret, printed as text
    'cfg="{\\\\\\"password\\\\\\":\\\\\\"' + PASSWORD + '\\\\\\"}"',
    # the repr of a JSON string holding escaped JSON ('{"a": "{\\"password\\": ...}"}')
    "body: '{\"a\": \"{\\\\\"db_password\\\\\": \\\\\"" + PASSWORD + "\\\\\"}\"}'",
])
def test_a_secret_in_json_escaped_twice_is_redacted(redact: Redactor, line: str) -> None:
    """A record held as a string in a record that is itself a string: its quotes carry two or three backslashes."""
    assert "\\\\" in line and PASSWORD not in redact(line)


ES_PASSWORD = "Lq8mZt2Rk7WnVp4s"


@pytest.mark.parametrize("text", [
    f'{{"level": "info", "msg": "es client", "basic_auth": ["elastic", "{ES_PASSWORD}"]}}',
    f"es:\n  http_auth: [elastic, {ES_PASSWORD}]",
    f"{{'hosts': ['https://es:9200'], 'http_auth': ['elastic', '{ES_PASSWORD}']}}",
    f'{{"es.basic_auth": "[\\"elastic\\",\\"{ES_PASSWORD}\\"]"}}',
])
def test_a_user_and_password_pair_written_as_a_list_is_redacted(redact: Redactor, text: str) -> None:
    """json.dumps writes requests' and elasticsearch-py's auth tuple as a list; YAML and a list repr print one."""
    out = redact(text)
    assert ES_PASSWORD not in out and "elastic" in out


def test_a_lifted_auth_list_is_redacted(redact: Redactor) -> None:
    out = redact.mapping({"es.basic_auth": f'["elastic","{ES_PASSWORD}"]', "es.hosts": '["https://es:9200"]'})
    assert ES_PASSWORD not in out["es.basic_auth"] and out["es.hosts"] == '["https://es:9200"]'


@pytest.mark.parametrize("text", ['{"auth": ["basic", "bearer"]}', "auth: [oauth2, jwt, session]",
                                  "{'auth': ['token', 'session']}"])
def test_a_list_of_auth_schemes_stays(redact: Redactor, text: str) -> None:
    assert redact(text) == text
    assert redact.mapping({"auth": text.partition(": ")[2]}) == {"auth": text.partition(": ")[2]}


TOKEN = "Xk29dLq8Pz3mWn7vRt5y"


@pytest.mark.parametrize("key", ["API_KEY_V2", "ApiKeyV2", "secret_access_key_v2", "DB_PASSWORD_NEW", "PASSWORD_OLD",
                                 "password_current", "TOKEN_PRIMARY", "OPENAI_API_KEY_BACKUP", "API_KEY_PROD",
                                 "DB_PASSWORD_STAGING", "HF_TOKEN_READ", "hf_token_write"])
def test_a_secret_s_key_with_a_version_rotation_role_or_scope_after_it_holds_one(redact: Redactor, key: str) -> None:
    assert TOKEN not in redact(f"{key}={TOKEN}")
    assert TOKEN not in redact.mapping({key: TOKEN})[key]


@pytest.mark.parametrize("line", ["tokens_read: 123456", "token_write: 2048", "num_tokens_prev=4096",
                                  "cache_key_v2=step-1000", "password_read_from_file: true"])
def test_a_qualified_key_that_holds_no_secret_stays(redact: Redactor, line: str) -> None:
    assert redact(line) == line


@pytest.mark.parametrize("line", [
    f"helm upgrade --install gw ./chart --set auth.apiKeys[0]={TOKEN} --set replicas=2",
    f"spring.datasource.password[0]={TOKEN}",
    f"passwords[1]: {TOKEN}",
])
def test_a_list_item_of_a_secret_s_key_given_by_its_index_is_redacted(redact: Redactor, line: str) -> None:
    """Helm's --set and Spring's properties name a list's item by its index after the key."""
    assert TOKEN not in redact(line)


@pytest.mark.parametrize("line", ["tokens[0]: 50256", "input_tokens[0] = 101", "keys[0]=model.layers.0.weight"])
def test_an_indexed_key_that_holds_no_secret_stays(redact: Redactor, line: str) -> None:
    assert redact(line) == line


@pytest.mark.parametrize("text", [
    f"api_keys:\n- {TOKEN}\n- Zq81mNx4Lp2Rw7Vt9k\n",
    f"auth:\n  api_keys:\n  - {TOKEN}\n  - 'Zq81mNx4Lp2Rw7Vt9k'\n  timeout: 30\n",
])
def test_the_items_of_a_yaml_block_sequence_under_a_secret_s_key_are_redacted(redact: Redactor, text: str) -> None:
    """yaml.dump and OmegaConf.to_yaml print a list under its key, one ``- item`` a line."""
    out = redact(text)
    assert TOKEN not in out and "Zq81mNx4Lp2Rw7Vt9k" not in out and out.count("- ") == 2


@pytest.mark.parametrize("text", ["passwords:\n  - name: db\n    value: ${DB_PASSWORD}\n",
                                  "secrets:\n- HF_TOKEN\n- WANDB_API_KEY\n", "tokens:\n- hello\n- world\n",
                                  "special_tokens:\n  - <pad>\n  - </s>\n"])
def test_a_block_sequence_that_holds_no_secret_stays(redact: Redactor, text: str) -> None:
    assert redact(text) == text


@pytest.mark.parametrize("line", [
    f"setenv HF_TOKEN {TOKEN}",
    f'setenv       DB_PASSWORD     "{TOKEN}"',
    f"Step 5/10 : ENV HF_TOKEN {TOKEN}",
    f"#7 [3/6] ENV WANDB_API_KEY {TOKEN}",
])
def test_a_variable_set_with_a_space_before_its_value_is_redacted(redact: Redactor, line: str) -> None:
    """csh's and Environment Modules' ``setenv NAME value``; a Dockerfile's ``ENV NAME value`` in docker build's
    echo of its steps."""
    assert TOKEN not in redact(line)


@pytest.mark.parametrize("line", ["setenv HF_HOME /scratch/hf", "ENV MAX_TOKENS 4096",
                                  "setenv TOKENIZERS_PARALLELISM false", "ENV HF_TOKEN $HF_TOKEN"])
def test_a_variable_set_with_a_space_that_holds_no_secret_stays(redact: Redactor, line: str) -> None:
    assert redact(line) == line


@pytest.mark.parametrize("key", ["secrets.hf", "credentials.huggingface", "cfg.api_keys.openai", "passwords.db",
                                 "tokens.github"])
def test_a_one_word_key_of_a_map_of_secrets_holds_one(redact: Redactor, key: str) -> None:
    """A config's map of secrets keyed by what each opens, as a JSON record's nested map is lifted."""
    assert TOKEN not in redact.mapping({"msg": "loaded", key: TOKEN})[key]


def test_the_fields_of_a_map_of_secrets_that_hold_none_stay(redact: Redactor) -> None:
    fields = {"credentials.type": "service_account", "credentials.project_id": "acme-ml-training-402113",
              "credentials.client_id": "104857392013847561234", "credentials.private_key_id": "3335d2ccce9de140bb50a6",
              "secrets.provider": "vault", "tokens.input": "1234", "tokens.model": "meta-llama/Llama-3-8B"}
    assert redact.mapping(fields) == fields
