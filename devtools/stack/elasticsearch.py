"""Elasticsearch (8.x or 9.x) from the integ-test-zip distribution on Maven Central, run as a non-root user.

The integ-test-zip is the server with a minimal module set (transport-netty4, x-pack-core,
x-pack-security, apm): composable index templates, bulk, search and aliases are there; ILM and
data streams are not (``GET /_ilm/policy`` answers "no handler"), so the hot tier uses daily
indices and its own retention job against this server. Written down in the README.

With ``stack.tls`` the node runs with security on: https with the stack's certificate, a file-realm
superuser from ``elasticsearch.username`` / ``elasticsearch.password`` (made with the distribution's
own ``elasticsearch-users`` tool, the password given on stdin), and API keys (``_security/api_key``).
Issuing API keys creates the ``.security`` index, whose analyzer needs components of the
analysis-common module that this distribution lacks: a small stable plugin built from
``scripts/stack/elasticsearch/security-analysis`` (its README says what and why) provides them.
"""

from __future__ import annotations

import hashlib
import os
import pwd
import shutil
import ssl
import stat
import subprocess
import tempfile
import zipfile
from pathlib import Path

import httpx
from pydantic import SecretStr

from devtools.stack.base import Service, run_checked
from devtools.stack.java import find_java_home
from devtools.stack.maven import fetch_artifact
from devtools.stack.tls import ensure_certificates, tls_files
from streams.config import REPO_ROOT, port_of
from streams.errors import StackError

SECURITY_ANALYSIS = REPO_ROOT / "scripts" / "stack" / "elasticsearch" / "security-analysis"


class ElasticsearchService(Service):
    name = "elasticsearch"
    start_timeout_s = 180.0

    def port(self) -> int:
        return port_of(self.settings.elasticsearch.url)

    def endpoint(self) -> str:
        return self.settings.elasticsearch.url

    # Elasticsearch refuses to start as root. As root we run it as a system user that owns only its
    # own directory; its files must then sit where that user can reach them.
    def run_as(self) -> str | None:
        return self.settings.stack.elasticsearch_user if os.geteuid() == 0 else None

    @property
    def es_root(self) -> Path:
        if self.run_as() is None or _world_traversable(self.home.parent):
            return self.home
        digest = hashlib.sha256(str(self.home).encode()).hexdigest()[:12]
        return Path(tempfile.gettempdir()) / f"sluice-stack-{digest}" / "elasticsearch"

    @property
    def dist(self) -> Path:
        return self.es_root / f"elasticsearch-{self.settings.stack.elasticsearch_version}"

    def install(self) -> None:
        version = self.settings.stack.elasticsearch_version
        if (self.dist / "bin" / "elasticsearch").is_file():
            return
        archive = fetch_artifact(
            f"org.elasticsearch.distribution.integ-test-zip:elasticsearch:{version}:zip", self.home / "download"
        )
        self.es_root.mkdir(parents=True, exist_ok=True)
        tmp = self.es_root / "unpack.tmp"
        shutil.rmtree(tmp, ignore_errors=True)
        _unzip(archive, tmp)
        (tmp / f"elasticsearch-{version}").rename(self.dist)
        tmp.rmdir()

    def prepare(self) -> None:
        self.home.mkdir(parents=True, exist_ok=True)
        for sub in ("data", "logs", "config", "tmp"):
            (self.es_root / sub).mkdir(parents=True, exist_ok=True)
        conf = self.es_root / "config"
        for item in (self.dist / "config").iterdir():
            target = conf / item.name
            if item.is_dir():
                shutil.copytree(item, target, dirs_exist_ok=True)
            elif not target.exists() or item.name != "elasticsearch.yml":
                shutil.copy2(item, target)
        settings = {
            "cluster.name": "sluice",
            "node.name": "sluice-1",
            "discovery.type": "single-node",
            "network.host": "127.0.0.1",
            "http.port": str(self.port()),
            "transport.port": "0",
            "path.data": str(self.es_root / "data"),
            "path.logs": str(self.es_root / "logs"),
            "xpack.security.enabled": "false",
            # A developer's or CI's disk is often fuller than a server's; do not go read-only at 90%.
            "cluster.routing.allocation.disk.threshold_enabled": "false",
            "action.destructive_requires_name": "false",
            **self.settings.stack.elasticsearch_extra,
        }
        if self.settings.stack.tls:
            settings.update(self._security_settings(conf))
        if self.settings.stack.tls:
            self._install_security_analysis()
        (conf / "elasticsearch.yml").write_text("".join(f"{k}: {v}\n" for k, v in settings.items()))
        if self.settings.stack.tls:
            self._add_file_user()
        user = self.run_as()
        if user is not None:
            _ensure_user(user)
            run_checked(["chown", "-R", f"{user}:", str(self.es_root)], "giving Elasticsearch its directory")
            if self.es_root != self.home:
                link = self.home / "files"
                if not link.is_symlink():
                    link.symlink_to(self.es_root)

    def env(self) -> dict[str, str]:
        env = {k: v for k, v in os.environ.items() if not k.startswith(("ES_", "JAVA_"))}
        java = find_java_home(self.java_major(), self.settings.stack.elasticsearch_java_home)
        heap = self.settings.stack.elasticsearch_heap
        env.update(
            ES_JAVA_HOME=str(java),
            ES_PATH_CONF=str(self.es_root / "config"),
            ES_JAVA_OPTS=f"-Xms{heap} -Xmx{heap}",
            ES_TMPDIR=str(self.es_root / "tmp"),
        )
        if self.run_as():
            env["HOME"] = str(self.es_root)
        return env

    def java_major(self) -> int:
        """Elasticsearch 9 runs on Java 21+, 8.x on 17+ (the integ-test-zip bundles no JDK)."""
        major = int(self.settings.stack.elasticsearch_version.split(".")[0])
        return 21 if major >= 9 else 17

    def workdir(self) -> Path:
        return self.es_root

    def command(self) -> list[str]:
        return [str(self.dist / "bin" / "elasticsearch")]

    def _security_settings(self, conf: Path) -> dict[str, str]:
        es = self.settings.elasticsearch
        if not es.url.startswith("https://"):
            raise StackError(f"stack.tls is on but elasticsearch.url is {es.url}; use https://")
        self._superuser()
        certs = ensure_certificates(self.root / "tls")
        # Elasticsearch reads TLS files only from inside its config directory.
        (conf / "certs").mkdir(exist_ok=True)
        for src in (certs.ca, certs.cert, certs.key):
            shutil.copy2(src, conf / "certs" / src.name)
        return {
            "xpack.security.enabled": "true",
            "xpack.security.http.ssl.enabled": "true",
            "xpack.security.http.ssl.certificate": f"certs/{certs.cert.name}",
            "xpack.security.http.ssl.key": f"certs/{certs.key.name}",
            "xpack.security.http.ssl.certificate_authorities": f"certs/{certs.ca.name}",
            "xpack.security.authc.api_key.enabled": "true",
        }

    def _install_security_analysis(self) -> None:
        """Compile the security-analysis stable plugin against this node's own jars, once."""
        target = self.dist / "plugins" / SECURITY_ANALYSIS.name
        if (target / "stable-plugin-descriptor.properties").is_file():
            return
        java_home = find_java_home(self.java_major(), self.settings.stack.elasticsearch_java_home)
        build = self.es_root / "tmp" / "security-analysis-build"
        shutil.rmtree(build, ignore_errors=True)
        classes = build / "classes"
        sources = sorted(str(p) for p in (SECURITY_ANALYSIS / "src").rglob("*.java"))
        run_checked([str(java_home / "bin" / "javac"), "--release", str(self.java_major()), "-nowarn",
                     "-cp", str(self.dist / "lib" / "*"), "-d", str(classes), *sources],
                    "compiling the security-analysis plugin for Elasticsearch")
        staged = build / SECURITY_ANALYSIS.name
        staged.mkdir()
        with zipfile.ZipFile(staged / "security-analysis.jar", "w") as jar:
            for path in sorted(classes.rglob("*.class")):
                jar.write(path, path.relative_to(classes).as_posix())
        shutil.copy2(SECURITY_ANALYSIS / "named_components.json", staged / "named_components.json")
        (staged / "stable-plugin-descriptor.properties").write_text(
            "description=Analysis components of the .security index (uax_url_email, pattern_capture, lowercase, "
            "unique)\n"
            f"version=1.0\nname={SECURITY_ANALYSIS.name}\njava.version={self.java_major()}\n"
            f"elasticsearch.version={self.settings.stack.elasticsearch_version}\n")
        target.parent.mkdir(parents=True, exist_ok=True)
        staged.rename(target)
        shutil.rmtree(build, ignore_errors=True)

    def _superuser(self) -> tuple[str, SecretStr]:
        es = self.settings.elasticsearch
        if not es.username or es.password is None:
            raise StackError("a TLS local Elasticsearch needs elasticsearch.username and elasticsearch.password "
                             "(or password_file): the stack makes that user a superuser")
        return es.username, es.password

    def _add_file_user(self) -> None:
        username, password = self._superuser()
        users_tool = str(self.dist / "bin" / "elasticsearch-users")
        env = self.env()
        for cmd, stdin in (([users_tool, "userdel", username], None),
                           ([users_tool, "useradd", username, "-r", "superuser"],
                            f"{password.get_secret_value()}\n" * 2)):
            proc = subprocess.run(cmd, input=stdin, env=env, capture_output=True, text=True, check=False,
                                  cwd=self.es_root)
            if proc.returncode != 0 and cmd[1] == "useradd":
                tail = "\n".join((proc.stdout + proc.stderr).strip().splitlines()[-10:])
                raise StackError(f"adding the Elasticsearch user {username!r} failed "
                                 f"(exit {proc.returncode}): {tail}")

    def _auth(self) -> dict[str, object]:
        """httpx arguments that reach a secured node: its CA, and the configured user or API key."""
        if not self.settings.stack.tls:
            return {}
        es = self.settings.elasticsearch
        kwargs: dict[str, object] = {"verify": ssl.create_default_context(cafile=tls_files(self.root / "tls").ca)}
        if es.api_key is not None:
            kwargs["headers"] = {"Authorization": f"ApiKey {es.api_key.get_secret_value()}"}
        elif es.username and es.password is not None:
            kwargs["auth"] = (es.username, es.password.get_secret_value())
        return kwargs

    def healthy(self) -> bool:
        try:
            resp = httpx.get(f"{self.endpoint()}/_cluster/health", timeout=2, **self._auth())  # type: ignore[arg-type]
        except (httpx.HTTPError, OSError):  # OSError: the CA file is not there yet
            return False
        return resp.status_code == 200 and resp.json().get("status") in ("yellow", "green")


def _world_traversable(path: Path) -> bool:
    for part in [path, *path.parents]:
        if not part.exists():
            continue
        if not part.stat().st_mode & stat.S_IXOTH:
            return False
    return True


def _ensure_user(user: str) -> None:
    try:
        pwd.getpwnam(user)
    except KeyError:
        useradd = shutil.which("useradd")
        if useradd is None:
            raise StackError(f"user {user!r} is missing and useradd is not available; create it") from None
        run_checked([useradd, "--system", "--no-create-home", "--shell", "/usr/sbin/nologin", user],
                    f"creating the {user!r} user for Elasticsearch")


def _unzip(archive: Path, dest: Path) -> None:
    """Unpack keeping the executable bits (zipfile alone drops them)."""
    with zipfile.ZipFile(archive) as zf:
        for info in zf.infolist():
            path = zf.extract(info, dest)
            mode = (info.external_attr >> 16) & 0o777
            if mode:
                Path(path).chmod(mode)
