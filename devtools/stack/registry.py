"""Schema registry with the Confluent REST API: Apicurio Registry 2.4.2 (ccompat API), H2 file storage.

Built from Maven Central by ``scripts/registry/install.sh``; ``scripts/registry/README.md`` says why
this version and what differs from Confluent's server.

With ``stack.tls`` the registry listens on ``stack.registry_internal_port`` only, behind
:mod:`devtools.stack.registry_front`, which serves ``registry.url`` (https) with the stack's
certificate and admits only ``registry.username`` / ``password`` or ``registry.bearer_token``, and
only clients with a certificate from the stack's CA when ``registry.ssl_certfile`` is set.
"""

from __future__ import annotations

import json
import os
import ssl
import sys
from typing import Any

import httpx

from devtools.stack.base import Service, run_checked
from devtools.stack.java import find_java_home
from devtools.stack.tls import ensure_certificates, tls_files
from streams.config import REPO_ROOT, port_of
from streams.errors import StackError

SCRIPTS = REPO_ROOT / "scripts" / "registry"


class RegistryService(Service):
    name = "registry"
    start_timeout_s = 90.0

    def port(self) -> int:
        return port_of(self.settings.registry.url)

    def endpoint(self) -> str:
        return self.settings.registry.url

    def install(self) -> None:
        run_checked(["bash", str(SCRIPTS / "install.sh"), str(self.home)], "building the schema registry",
                    env=self.env())

    def command(self) -> list[str]:
        if not self.settings.stack.tls:
            return ["bash", str(SCRIPTS / "run.sh"), str(self.home), str(self.port()), str(self.home / "data")]
        registry = ["bash", str(SCRIPTS / "run.sh"), str(self.home), str(self.settings.stack.registry_internal_port),
                    str(self.home / "data")]
        return [sys.executable, "-m", "devtools.stack.registry_front", str(self._front_config()), "--", *registry]

    def env(self) -> dict[str, str]:
        env = dict(os.environ)
        env["JAVA_HOME"] = str(find_java_home(17))
        env["PYTHONPATH"] = str(REPO_ROOT)  # the front is devtools code, run from this checkout
        return env

    def _front_config(self) -> Any:
        reg = self.settings.registry
        if not reg.url.startswith("https://"):
            raise StackError(f"stack.tls is on but registry.url is {reg.url}; use https://")
        if reg.username and reg.password is not None:
            auth: dict[str, Any] = {"basic": [reg.username, reg.password.get_secret_value()]}
        elif reg.bearer_token is not None:
            auth = {"bearer": reg.bearer_token.get_secret_value()}
        else:
            raise StackError("a TLS local registry needs registry.username and registry.password (or "
                             "registry.bearer_token): its front admits only that client")
        certs = ensure_certificates(self.root / "tls")
        conf = {"listen_port": self.port(), "upstream_port": self.settings.stack.registry_internal_port,
                "cert": str(certs.cert), "key": str(certs.key),
                "client_ca": str(certs.ca) if reg.ssl_certfile else None, **auth}
        path = self.home / "front.json"
        path.touch(mode=0o600)
        path.write_text(json.dumps(conf))
        return path

    def _client(self) -> dict[str, Any]:
        """httpx arguments that reach the registry as its configured client does."""
        if not self.settings.stack.tls:
            return {}
        reg = self.settings.registry
        context = ssl.create_default_context(cafile=tls_files(self.root / "tls").ca)
        if reg.ssl_certfile and reg.ssl_keyfile:
            context.load_cert_chain(reg.ssl_certfile, reg.ssl_keyfile)
        kwargs: dict[str, Any] = {"verify": context}
        if reg.username:
            kwargs["auth"] = (reg.username, reg.password.get_secret_value() if reg.password else "")
        elif reg.bearer_token is not None:
            kwargs["headers"] = {"Authorization": f"Bearer {reg.bearer_token.get_secret_value()}"}
        return kwargs

    def healthy(self) -> bool:
        try:
            return httpx.get(f"{self.settings.registry.url}/subjects", timeout=2, **self._client()).status_code == 200
        except (httpx.HTTPError, OSError):  # OSError: the CA file is not there yet
            return False
