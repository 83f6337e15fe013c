"""Connection settings become the clients' own configuration: Kafka (librdkafka, under every stage
and the shipper) and the schema registry. The servers themselves are exercised in
tests/integration/test_security.py."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pytest
from pydantic import SecretStr, ValidationError

from devtools.stack.tls import ensure_certificates
from streams.clients import registry_client
from streams.config import KafkaSettings, ObjectStoreSettings, RegistrySettings


@pytest.fixture(scope="module")
def certs(tmp_path_factory: pytest.TempPathFactory) -> Any:
    return ensure_certificates(tmp_path_factory.mktemp("tls"))


def test_mutual_tls_reaches_librdkafka(certs: Any) -> None:
    kafka = KafkaSettings(security_protocol="ssl", ssl_cafile=str(certs.ca), ssl_certfile=str(certs.client_cert),
                          ssl_keyfile=str(certs.client_key))
    conf = kafka.client_config()
    assert conf["security.protocol"] == "SSL"
    assert (conf["ssl.certificate.location"], conf["ssl.key.location"]) == (str(certs.client_cert),
                                                                             str(certs.client_key))
    from confluent_kafka import Producer

    Producer({**conf, "log_level": 0})  # librdkafka loads the certificate and key when the client is made
    with pytest.raises(ValidationError, match="together"):
        KafkaSettings(security_protocol="SSL", ssl_certfile=str(certs.client_cert))


def test_a_client_key_that_does_not_match_is_an_error_at_start(certs: Any) -> None:
    from confluent_kafka import KafkaException, Producer

    kafka = KafkaSettings(security_protocol="SSL", ssl_certfile=str(certs.client_cert), ssl_keyfile=str(certs.key))
    with pytest.raises(KafkaException, match="ssl"):
        Producer({**kafka.client_config(), "log_level": 0})


@pytest.mark.parametrize("mechanism", ["PLAIN", "scram-sha-256", "SCRAM-SHA-512"])
def test_sasl_user_and_password(mechanism: str) -> None:
    kafka = KafkaSettings(security_protocol="SASL_SSL", sasl_mechanism=mechanism, sasl_username="sluice-hot",
                          sasl_password=SecretStr("pw"))
    conf = kafka.client_config()
    assert (conf["sasl.mechanism"], conf["sasl.username"], conf["sasl.password"]) == (mechanism.upper(),
                                                                                       "sluice-hot", "pw")


def test_oauthbearer_uses_librdkafkas_oidc_client() -> None:
    kafka = KafkaSettings(security_protocol="SASL_SSL", sasl_mechanism="OAUTHBEARER",
                          sasl_oauthbearer_token_endpoint_url="https://idp.example/token",
                          sasl_oauthbearer_client_id="sluice-assemble",
                          sasl_oauthbearer_client_secret=SecretStr("s3cret"), sasl_oauthbearer_scope="kafka")
    conf = kafka.client_config()
    assert conf["sasl.oauthbearer.method"] == "oidc"
    assert conf["sasl.oauthbearer.token.endpoint.url"] == "https://idp.example/token"
    assert (conf["sasl.oauthbearer.client.id"], conf["sasl.oauthbearer.client.secret"],
            conf["sasl.oauthbearer.scope"]) == ("sluice-assemble", "s3cret", "kafka")
    assert "sasl.password" not in conf
    from confluent_kafka import Producer

    Producer({**conf, "log_level": 0})  # librdkafka accepts the combination (it would raise on a bad key)
    with pytest.raises(ValidationError, match="token_endpoint_url"):
        KafkaSettings(security_protocol="SASL_SSL", sasl_mechanism="OAUTHBEARER")
    with pytest.raises(ValidationError, match="GSSAPI"):
        KafkaSettings(sasl_mechanism="GSSAPI")


@pytest.mark.parametrize(("given", "expected"), [
    ({"username": "reader", "password": SecretStr("pw")}, {"basic.auth.user.info": "reader:pw"}),
    ({"bearer_token": SecretStr("tok")}, {"bearer.auth.credentials.source": "STATIC_TOKEN",
                                          "bearer.auth.token": "tok"}),
    ({"oauth_token_endpoint_url": "https://idp.example/token", "oauth_client_id": "c",
      "oauth_client_secret": SecretStr("s")}, {"bearer.auth.credentials.source": "OAUTHBEARER",
                                               "bearer.auth.client.id": "c", "bearer.auth.client.secret": "s"}),
])
def test_registry_auth_reaches_the_schema_registry_client(given: dict[str, Any], expected: dict[str, str],
                                                          certs: Any) -> None:
    settings = RegistrySettings(url="https://registry.example/apis/ccompat/v7", ca_certs=str(certs.ca),
                                ssl_certfile=str(certs.client_cert), ssl_keyfile=str(certs.client_key), **given)
    conf = settings.client_config()
    assert expected.items() <= conf.items()
    assert conf["ssl.ca.location"] == str(certs.ca)
    registry_client(settings)  # the real client accepts every key (it raises on an unknown one)


def test_registry_takes_one_way_to_authenticate(tmp_path: Path) -> None:
    with pytest.raises(ValidationError, match="one way"):
        RegistrySettings(username="u", password=SecretStr("p"), bearer_token=SecretStr("t"))
    token = tmp_path / "token"
    token.write_text("from-a-file\n")
    assert RegistrySettings(bearer_token_file=token).client_config()["bearer.auth.token"] == "from-a-file"


def test_object_store_static_key_only_when_both_halves_are_set() -> None:
    assert not ObjectStoreSettings().static_key(), "the default is the default credential chain"
    assert ObjectStoreSettings(access_key_id="AKIA", secret_access_key=SecretStr("s")).static_key()
    with pytest.raises(ValidationError, match="together"):
        ObjectStoreSettings(access_key_id="AKIA")
    with pytest.raises(ValidationError, match="profile"):
        ObjectStoreSettings(access_key_id="AKIA", secret_access_key=SecretStr("s"), profile="p")
