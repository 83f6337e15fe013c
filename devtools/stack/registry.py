"""Schema registry with the Confluent REST API: Apicurio Registry 2.4.2 (ccompat API), H2 file storage.

Built from Maven Central by ``scripts/registry/install.sh``; ``scripts/registry/README.md`` says why
this version and what differs from Confluent's server.
"""

from __future__ import annotations

import os

import httpx

from devtools.stack.base import Service, run_checked
from devtools.stack.java import find_java_home
from streams.config import REPO_ROOT, port_of

SCRIPTS = REPO_ROOT / "scripts" / "registry"


class RegistryService(Service):
    name = "registry"
    start_timeout_s = 90.0

    def port(self) -> int:
        return port_of(self.settings.registry.url)

    def endpoint(self) -> str:
        return self.settings.registry.url

    def env(self) -> dict[str, str]:
        env = dict(os.environ)
        env["JAVA_HOME"] = str(find_java_home(17))
        return env

    def install(self) -> None:
        run_checked(["bash", str(SCRIPTS / "install.sh"), str(self.home)], "building the schema registry",
                    env=self.env())

    def command(self) -> list[str]:
        return ["bash", str(SCRIPTS / "run.sh"), str(self.home), str(self.port()), str(self.home / "data")]

    def healthy(self) -> bool:
        try:
            return httpx.get(f"{self.settings.registry.url}/subjects", timeout=2).status_code == 200
        except httpx.HTTPError:
            return False
