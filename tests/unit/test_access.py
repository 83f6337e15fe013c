"""Connection settings become the clients' own configuration: Kafka (librdkafka and aiokafka under
Faust), the schema registry, and the OAuth token provider. The servers themselves are exercised in
tests/integration/test_security.py."""

from __future__ import annotations

import asyncio
import ssl
from pathlib import Path
from typing import Any

import pytest
from pydantic import SecretStr, ValidationError

from devtools.stack.tls import ensure_certificates
from streams.clients import faust_broker_credentials, kafka_ssl_context, registry_client
from streams.config import KafkaSettings, ObjectStoreSettings, RegistrySettings
from streams.oauth import AiokafkaTokenProvider, ClientCredentials, TokenError


@pytest.fixture(scope="module")
def certs(tmp_path_factory: pytest.TempPathFactory) -> Any:
    return ensure_certificates(tmp_path_factory.mktemp("tls"))


def test_mutual_tls_reaches_librdkafka_and_faust(certs: Any) -> None:
    kafka = KafkaSettings(security_protocol="ssl", ssl_cafile=str(certs.ca), ssl_certfile=str(certs.client_cert),
                          ssl_keyfile=str(certs.client_key))
    conf = kafka.client_config()
    assert conf["security.protocol"] == "SSL"
    assert (conf["ssl.certificate.location"], conf["ssl.key.location"]) == (str(certs.client_cert),
                                                                             str(certs.client_key))
    import faust

    credentials = faust_broker_credentials(kafka)
    assert isinstance(credentials, faust.SSLCredentials)
    assert credentials.context.verify_mode == ssl.CERT_REQUIRED and credentials.context.check_hostname
    # The client certificate is loaded: a context without it has no certificate to present.
    assert kafka_ssl_context(kafka).get_ca_certs()
    with pytest.raises(ValidationError, match="together"):
        KafkaSettings(security_protocol="SSL", ssl_certfile=str(certs.client_cert))


def test_a_client_key_that_does_not_match_is_an_error_at_start(certs: Any) -> None:
    kafka = KafkaSettings(security_protocol="SSL", ssl_certfile=str(certs.client_cert), ssl_keyfile=str(certs.key))
    with pytest.raises(ssl.SSLError):
        kafka_ssl_context(kafka)


@pytest.mark.parametrize("mechanism", ["PLAIN", "scram-sha-256", "SCRAM-SHA-512"])
def test_sasl_user_and_password(mechanism: str) -> None:
    kafka = KafkaSettings(security_protocol="SASL_SSL", sasl_mechanism=mechanism, sasl_username="sluice-hot",
                          sasl_password=SecretStr("pw"))
    conf = kafka.client_config()
    assert (conf["sasl.mechanism"], conf["sasl.username"], conf["sasl.password"]) == (mechanism.upper(),
                                                                                       "sluice-hot", "pw")
    credentials = faust_broker_credentials(kafka)
    assert credentials.mechanism.value == mechanism.upper() and credentials.password == "pw"


def test_oauthbearer_uses_librdkafkas_oidc_client_and_a_token_provider_for_faust() -> None:
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
    import faust

    credentials = faust_broker_credentials(kafka)
    assert isinstance(credentials, faust.OAuthCredentials)
    assert isinstance(credentials.oauth_cb, AiokafkaTokenProvider)
    assert "s3cret" not in repr(credentials.oauth_cb)
    with pytest.raises(ValidationError, match="token_endpoint_url"):
        KafkaSettings(security_protocol="SASL_SSL", sasl_mechanism="OAUTHBEARER")
    with pytest.raises(ValidationError, match="GSSAPI"):
        KafkaSettings(sasl_mechanism="GSSAPI")


def test_token_kept_until_most_of_its_lifetime_has_passed() -> None:
    now = [1000.0]
    grant = ClientCredentials("https://idp.example/token", "sluice", SecretStr("s3cret"), scope="kafka",
                              clock=lambda: now[0])
    request = grant.request()
    assert request["data"] == {"grant_type": "client_credentials", "scope": "kafka"}
    assert request["auth"] == ("sluice", "s3cret")
    assert grant.cached() is None
    assert grant.accept(200, {"access_token": "tok-1", "expires_in": 100}) == "tok-1"
    now[0] += 79
    assert grant.cached() == "tok-1"
    now[0] += 2
    assert grant.cached() is None, "renewed at 80% of the lifetime"
    with pytest.raises(TokenError, match="401 \\(invalid_client\\)") as refused:
        grant.accept(401, {"error": "invalid_client"})
    assert "s3cret" not in str(refused.value)


def test_token_provider_asks_the_endpoint_once_for_concurrent_connections() -> None:
    import httpx

    calls: list[httpx.Request] = []

    def endpoint(request: httpx.Request) -> httpx.Response:
        calls.append(request)
        return httpx.Response(200, json={"access_token": f"tok-{len(calls)}", "expires_in": 3600})

    provider = AiokafkaTokenProvider(ClientCredentials("https://idp.example/token", "sluice", SecretStr("s3cret")),
                                     transport=httpx.MockTransport(endpoint))

    async def connect_three() -> list[str]:
        return list(await asyncio.gather(provider.token(), provider.token(), provider.token()))

    assert asyncio.run(connect_three()) == ["tok-1"] * 3
    assert len(calls) == 1
    assert calls[0].headers["authorization"].startswith("Basic ")
    assert b"grant_type=client_credentials" in calls[0].content


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
