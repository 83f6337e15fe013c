"""A local certificate authority and one server certificate for the secured local stack.

Made once, at install time, under ``<stack dir>/tls/``: ``ca.pem`` (what clients trust: point
``kafka.ssl_cafile``, ``elasticsearch.ca_certs`` and ``object_store.ca_bundle`` at it), and
``server.pem`` / ``server-key.pem`` for 127.0.0.1 and localhost, which Kafka, Elasticsearch, the
object store and the registry's TLS front serve, and ``client.pem`` / ``client-key.pem``, a client
certificate (subject ``CN=sluice``) for mutual TLS: point ``kafka.ssl_certfile`` / ``ssl_keyfile``
(and ``registry.ssl_certfile`` / ``ssl_keyfile``) at them. Keys are written owner-readable only.
Generated with ``cryptography`` (no keytool or openssl run), so the same code works wherever the
Python environment does.
"""

from __future__ import annotations

import datetime as dt
import ipaddress
import os
from dataclasses import dataclass
from pathlib import Path

from cryptography import x509
from cryptography.hazmat.primitives import hashes, serialization
from cryptography.hazmat.primitives.asymmetric import ec
from cryptography.x509.oid import ExtendedKeyUsageOID, NameOID

# Long enough that a developer's stack never expires under them; it is a loopback-only CA.
VALID_DAYS = 3650


# The subject of the client certificate: Kafka's SSL principal is then "User:CN=sluice".
CLIENT_NAME = "sluice"


@dataclass(frozen=True)
class TlsFiles:
    ca: Path
    ca_key: Path
    cert: Path
    key: Path
    client_cert: Path
    client_key: Path


def tls_files(directory: Path) -> TlsFiles:
    return TlsFiles(directory / "ca.pem", directory / "ca-key.pem", directory / "server.pem",
                    directory / "server-key.pem", directory / "client.pem", directory / "client-key.pem")


def ensure_certificates(directory: Path, hosts: tuple[str, ...] = ("127.0.0.1", "localhost")) -> TlsFiles:
    """The CA, server and client certificates in ``directory``, made if missing (kept otherwise)."""
    files = tls_files(directory)
    if not all(p.is_file() for p in (files.ca, files.ca_key, files.cert, files.key)):
        directory.mkdir(parents=True, exist_ok=True)
        ca_key, ca_cert = make_ca("Sluice local stack CA")
        key, cert = make_server_cert(ca_key, ca_cert, hosts)
        _write(files.ca_key, _key_pem(ca_key), private=True)
        _write(files.key, _key_pem(key), private=True)
        _write(files.ca, ca_cert.public_bytes(serialization.Encoding.PEM))
        _write(files.cert, _chain_pem(cert, ca_cert))
        files.client_cert.unlink(missing_ok=True)  # signed by the CA that was just replaced
    if not (files.client_cert.is_file() and files.client_key.is_file()):
        loaded = serialization.load_pem_private_key(files.ca_key.read_bytes(), password=None)
        if not isinstance(loaded, ec.EllipticCurvePrivateKey):
            raise TypeError(f"{files.ca_key} is not the EC key this module makes; remove {directory} to start over")
        ca_cert = x509.load_pem_x509_certificate(files.ca.read_bytes())
        key, cert = make_client_cert(loaded, ca_cert, CLIENT_NAME)
        _write(files.client_key, _key_pem(key), private=True)
        _write(files.client_cert, _chain_pem(cert, ca_cert))
    return files


def _chain_pem(cert: x509.Certificate, ca_cert: x509.Certificate) -> bytes:
    return cert.public_bytes(serialization.Encoding.PEM) + ca_cert.public_bytes(serialization.Encoding.PEM)


def make_ca(common_name: str) -> tuple[ec.EllipticCurvePrivateKey, x509.Certificate]:
    key = ec.generate_private_key(ec.SECP256R1())
    name = x509.Name([x509.NameAttribute(NameOID.COMMON_NAME, common_name)])
    now = dt.datetime.now(dt.UTC)
    cert = (
        x509.CertificateBuilder()
        .subject_name(name).issuer_name(name).public_key(key.public_key())
        .serial_number(x509.random_serial_number())
        .not_valid_before(now - dt.timedelta(minutes=5)).not_valid_after(now + dt.timedelta(days=VALID_DAYS))
        .add_extension(x509.BasicConstraints(ca=True, path_length=0), critical=True)
        .add_extension(x509.KeyUsage(digital_signature=True, key_cert_sign=True, crl_sign=True,
                                     content_commitment=False, key_encipherment=False, data_encipherment=False,
                                     key_agreement=False, encipher_only=False, decipher_only=False), critical=True)
        .add_extension(x509.SubjectKeyIdentifier.from_public_key(key.public_key()), critical=False)
        .sign(key, hashes.SHA256())
    )
    return key, cert


def make_server_cert(ca_key: ec.EllipticCurvePrivateKey, ca_cert: x509.Certificate,
                     hosts: tuple[str, ...]) -> tuple[ec.EllipticCurvePrivateKey, x509.Certificate]:
    key = ec.generate_private_key(ec.SECP256R1())
    sans: list[x509.GeneralName] = []
    for host in hosts:
        try:
            sans.append(x509.IPAddress(ipaddress.ip_address(host)))
        except ValueError:
            sans.append(x509.DNSName(host))
    now = dt.datetime.now(dt.UTC)
    cert = (
        x509.CertificateBuilder()
        .subject_name(x509.Name([x509.NameAttribute(NameOID.COMMON_NAME, hosts[0])]))
        .issuer_name(ca_cert.subject).public_key(key.public_key())
        .serial_number(x509.random_serial_number())
        .not_valid_before(now - dt.timedelta(minutes=5)).not_valid_after(now + dt.timedelta(days=VALID_DAYS))
        .add_extension(x509.SubjectAlternativeName(sans), critical=False)
        .add_extension(x509.BasicConstraints(ca=False, path_length=None), critical=True)
        .add_extension(x509.ExtendedKeyUsage([ExtendedKeyUsageOID.SERVER_AUTH, ExtendedKeyUsageOID.CLIENT_AUTH]),
                       critical=False)
        .add_extension(x509.AuthorityKeyIdentifier.from_issuer_public_key(ca_key.public_key()), critical=False)
        .sign(ca_key, hashes.SHA256())
    )
    return key, cert


def make_client_cert(ca_key: ec.EllipticCurvePrivateKey, ca_cert: x509.Certificate,
                     name: str) -> tuple[ec.EllipticCurvePrivateKey, x509.Certificate]:
    """A certificate that identifies a client (``CN=<name>``, client-auth usage only)."""
    key = ec.generate_private_key(ec.SECP256R1())
    now = dt.datetime.now(dt.UTC)
    cert = (
        x509.CertificateBuilder()
        .subject_name(x509.Name([x509.NameAttribute(NameOID.COMMON_NAME, name)]))
        .issuer_name(ca_cert.subject).public_key(key.public_key())
        .serial_number(x509.random_serial_number())
        .not_valid_before(now - dt.timedelta(minutes=5)).not_valid_after(now + dt.timedelta(days=VALID_DAYS))
        .add_extension(x509.BasicConstraints(ca=False, path_length=None), critical=True)
        .add_extension(x509.ExtendedKeyUsage([ExtendedKeyUsageOID.CLIENT_AUTH]), critical=False)
        .add_extension(x509.AuthorityKeyIdentifier.from_issuer_public_key(ca_key.public_key()), critical=False)
        .sign(ca_key, hashes.SHA256())
    )
    return key, cert


def _key_pem(key: ec.EllipticCurvePrivateKey) -> bytes:
    # PKCS#8, unencrypted: the form both Kafka's PEM keystore and Elasticsearch read without a password.
    return key.private_bytes(serialization.Encoding.PEM, serialization.PrivateFormat.PKCS8,
                             serialization.NoEncryption())


def _write(path: Path, data: bytes, private: bool = False) -> None:
    tmp = path.with_suffix(path.suffix + ".tmp")
    fd = os.open(tmp, os.O_WRONLY | os.O_CREAT | os.O_TRUNC, 0o600 if private else 0o644)
    with os.fdopen(fd, "wb") as out:
        out.write(data)
    tmp.replace(path)
