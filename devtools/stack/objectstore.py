"""S3-compatible object store: S3Proxy (Apache-2.0, a real S3 server) over a local filesystem.

S3Proxy implements the S3 REST API (SigV2/SigV4, multipart upload, listing) on top of jclouds'
filesystem blob store. It does not implement bucket lifecycle rules; Sluice reports that instead of
pretending (see the cold tier).

It checks every request's signature against one key: the configured static key when
``object_store`` sets one, else the local stack's own (:data:`LOCAL_KEY`), which Sluice's clients
find through boto3's default credential chain: ``python -m devtools`` and the test suite put it in
the environment (:func:`local_credentials_env`).

With ``stack.tls`` it serves https only (``object_store.endpoint_url`` must say https) with the
stack's certificate, from a PKCS#12 keystore whose throwaway password lives in the 0600 config.
"""

from __future__ import annotations

import secrets
from pathlib import Path

from pydantic import SecretStr

from devtools.stack.base import Service
from devtools.stack.java import find_java_home
from devtools.stack.maven import fetch_artifact
from devtools.stack.tls import ensure_certificates
from streams.config import ObjectStoreSettings, port_of
from streams.errors import StackError

# The local stack's key: nothing outside this machine accepts it.
LOCAL_KEY = ("sluice", "sluice-local-secret")


def local_credentials_env() -> dict[str, str]:
    """The environment through which the default credential chain finds the local stack's key."""
    return {"AWS_ACCESS_KEY_ID": LOCAL_KEY[0], "AWS_SECRET_ACCESS_KEY": LOCAL_KEY[1]}


def server_key(store: ObjectStoreSettings) -> tuple[str, str]:
    """The key the server checks: the configured static key, else the local stack's."""
    if store.access_key_id is not None and store.secret_access_key is not None:
        return store.access_key_id, store.secret_access_key.get_secret_value()
    return LOCAL_KEY


class ObjectStoreService(Service):
    name = "objectstore"
    start_timeout_s = 60.0

    def port(self) -> int:
        return port_of(self.settings.object_store.endpoint_url)

    def endpoint(self) -> str:
        return self.settings.object_store.endpoint_url

    def _jar(self) -> Path:
        version = self.settings.stack.s3proxy_version
        return fetch_artifact(f"org.gaul:s3proxy:{version}:jar:jar-with-dependencies", self.home / "lib")

    def install(self) -> None:
        self._jar()

    def prepare(self) -> None:
        identity, credential = server_key(self.settings.object_store)
        (self.home / "data").mkdir(parents=True, exist_ok=True)
        props = {
            "s3proxy.endpoint": f"http://127.0.0.1:{self.port()}",
            "s3proxy.authorization": "aws-v2-or-v4",
            "s3proxy.identity": identity,
            "s3proxy.credential": credential,
            "jclouds.provider": "filesystem-nio2",
            "jclouds.filesystem.basedir": str(self.home / "data"),
            "s3proxy.ignore-unknown-headers": "true",
        }
        if self.settings.stack.tls:
            props.pop("s3proxy.endpoint")
            props.update(self._tls_props())
        conf = self.home / "s3proxy.conf"
        conf.write_text("".join(f"{k}={v}\n" for k, v in props.items()))
        conf.chmod(0o600)  # holds the secret

    def _tls_props(self) -> dict[str, str]:
        from cryptography import x509
        from cryptography.hazmat.primitives.serialization import BestAvailableEncryption, load_pem_private_key
        from cryptography.hazmat.primitives.serialization.pkcs12 import serialize_key_and_certificates

        if not self.endpoint().startswith("https://"):
            raise StackError(f"stack.tls is on but object_store.endpoint_url is {self.endpoint()}; use https://")
        certs = ensure_certificates(self.root / "tls")
        key = load_pem_private_key(certs.key.read_bytes(), password=None)
        chain = x509.load_pem_x509_certificates(certs.cert.read_bytes())
        password = secrets.token_urlsafe(24)
        keystore = self.home / "keystore.p12"
        keystore.touch(mode=0o600)
        keystore.write_bytes(serialize_key_and_certificates(
            b"s3proxy", key, chain[0], chain[1:], BestAvailableEncryption(password.encode())))  # type: ignore[arg-type]
        return {"s3proxy.secure-endpoint": f"https://127.0.0.1:{self.port()}",
                "s3proxy.keystore-path": str(keystore), "s3proxy.keystore-password": password}

    def command(self) -> list[str]:
        java = find_java_home(17) / "bin" / "java"
        return [str(java), "-Xmx256m", "-XX:+UseSerialGC", "-jar", str(self._jar()),
                "--properties", str(self.home / "s3proxy.conf")]

    def healthy(self) -> bool:
        from streams.clients import s3_client

        identity, credential = server_key(self.settings.object_store)
        store = self.settings.object_store.model_copy(update={
            "access_key_id": identity, "secret_access_key": SecretStr(credential), "profile": None})
        try:
            s3_client(store, timeout_s=2).list_buckets()
        except Exception:  # noqa: BLE001 - any failure means "not yet"
            return False
        return True
