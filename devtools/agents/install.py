"""Install the real agents the integration tests run: rsyslog with omkafka, and an OpenTelemetry Collector.

- rsyslog: the Debian packages ``rsyslog`` and ``rsyslog-kafka``, through apt-get (as root, as CI
  runs) when ``rsyslogd`` or its omkafka module is missing.
- The collector: built once with the collector builder from the Go module proxy, from
  ``otelcol-builder.yaml`` (the filelog receiver and the kafka exporter only), into
  ``<stack dir>/otelcol/<manifest hash>/otelcol-sluice``; a changed manifest builds a new one. The
  Go module and build caches go under ``<stack dir>/otelcol/go`` so the stack directory holds it all.

Both take a file lock around their check and install, so that ``make test`` can build them beside the
running suite while a test that needs one waits for the build instead of starting a second.

Fluent Bit is not here: its build is not part of the project (its records are fixtures).
"""

from __future__ import annotations

import fcntl
import hashlib
import os
import shutil
import subprocess
import tempfile
import time
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from pathlib import Path

from streams.errors import StackError

HERE = Path(__file__).resolve().parent
MANIFEST = HERE / "otelcol-builder.yaml"
BUILDER = "go.opentelemetry.io/collector/cmd/builder@v0.165.0"
RSYSLOG_PACKAGES = ("rsyslog", "rsyslog-kafka")
OMKAFKA_DIRS = (Path("/usr/lib/x86_64-linux-gnu/rsyslog"), Path("/usr/lib/aarch64-linux-gnu/rsyslog"),
                Path("/usr/lib/rsyslog"))

Log = Callable[[str], None]


@contextmanager
def _exclusive(lock: Path) -> Iterator[None]:
    """One installer at a time on this machine; a second waits for the first and then finds its result."""
    lock.parent.mkdir(parents=True, exist_ok=True)
    with lock.open("a") as f:
        fcntl.flock(f, fcntl.LOCK_EX)
        try:
            yield
        finally:
            fcntl.flock(f, fcntl.LOCK_UN)


def rsyslogd() -> Path | None:
    found = shutil.which("rsyslogd") or ("/usr/sbin/rsyslogd" if Path("/usr/sbin/rsyslogd").exists() else None)
    if found is None or not any((d / "omkafka.so").exists() for d in OMKAFKA_DIRS):
        return None
    return Path(found)


def ensure_rsyslog(log: Log = print) -> Path:
    if (path := rsyslogd()) is not None:
        return path
    with _exclusive(Path(tempfile.gettempdir()) / "sluice-rsyslog-install.lock"):
        return _install_rsyslog(log)


def _install_rsyslog(log: Log) -> Path:
    path = rsyslogd()
    if path is not None:
        return path
    if os.geteuid() != 0 or shutil.which("apt-get") is None:
        raise StackError(f"rsyslog with omkafka is missing: install the packages {' '.join(RSYSLOG_PACKAGES)} "
                         "(apt-get install rsyslog rsyslog-kafka) and run again")
    log(f"installing {' '.join(RSYSLOG_PACKAGES)} with apt-get")
    env = {**os.environ, "DEBIAN_FRONTEND": "noninteractive"}
    started = time.monotonic()
    subprocess.run(["apt-get", "update", "-qq"], check=True, env=env)
    subprocess.run(["apt-get", "install", "-y", "-q", "--no-install-recommends", *RSYSLOG_PACKAGES],
                   check=True, env=env, stdout=subprocess.DEVNULL)
    log(f"rsyslog installed in {time.monotonic() - started:.0f}s")
    path = rsyslogd()
    if path is None:
        raise StackError("apt-get installed rsyslog but rsyslogd or omkafka.so is still not found")
    return path


def otelcol_path(stack_dir: Path) -> Path:
    digest = hashlib.sha256(MANIFEST.read_bytes()).hexdigest()[:12]
    return stack_dir / "otelcol" / digest / "otelcol-sluice"


def ensure_otelcol(stack_dir: Path, log: Log = print) -> Path:
    """The collector binary, built the first time (a few minutes: Go modules and compilation)."""
    binary = otelcol_path(stack_dir)
    if binary.exists():
        return binary
    with _exclusive(stack_dir / "otelcol" / "build.lock"):
        return _build_otelcol(stack_dir, binary, log)


def _build_otelcol(stack_dir: Path, binary: Path, log: Log) -> Path:
    if binary.exists():  # built by the holder of the lock this call waited for
        return binary
    go = shutil.which("go") or ("/usr/local/go/bin/go" if Path("/usr/local/go/bin/go").exists() else None)
    if go is None:
        raise StackError("building the OpenTelemetry Collector needs Go (1.24 or later) on PATH")
    home = stack_dir / "otelcol"
    gopath = home / "go"
    env = {**os.environ, "GOPATH": str(gopath), "GOCACHE": str(home / "go-build"), "GOBIN": str(home / "bin"),
           "GOFLAGS": "-modcacherw", "PATH": f"{Path(go).parent}{os.pathsep}{os.environ.get('PATH', '')}"}
    started = time.monotonic()
    log(f"building the OpenTelemetry Collector into {binary.parent} (once; a few minutes)")
    if not (home / "bin" / "builder").exists():
        subprocess.run([go, "install", BUILDER], check=True, env=env)
    work = binary.parent
    work.mkdir(parents=True, exist_ok=True)
    manifest = work / "builder.yaml"
    manifest.write_text(MANIFEST.read_text().replace("output_path: ./build", f"output_path: {work / 'src'}"))
    out = subprocess.run([str(home / "bin" / "builder"), "--config", str(manifest)], env=env,
                         stdout=subprocess.PIPE, stderr=subprocess.STDOUT, check=False)
    if out.returncode != 0:
        raise StackError(f"the collector builder failed ({out.returncode}):\n"
                         f"{out.stdout.decode(errors='replace')[-3000:]}")
    shutil.move(str(work / "src" / "otelcol-sluice"), binary)
    # the build cache and the generated sources are most of a gigabyte and serve no later run; the
    # module cache stays, for a rebuild after a manifest change
    shutil.rmtree(home / "go-build", ignore_errors=True)
    shutil.rmtree(work / "src", ignore_errors=True)
    log(f"collector built in {time.monotonic() - started:.0f}s: {binary}")
    return binary
