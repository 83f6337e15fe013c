"""What every local server has in common: install once, start detached, health-check, stop.

A service keeps everything under ``<stack dir>/<name>/`` and its log in ``<stack dir>/logs``;
its pid lives in ``<stack dir>/run/<name>.pid``. ``up`` is idempotent: a live, healthy
service is left alone.
"""

from __future__ import annotations

import contextlib
import os
import random
import signal
import socket
import subprocess
import time
from abc import ABC, abstractmethod
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path

from streams.config import Settings
from streams.errors import StackError

Log = Callable[[str], None]


@dataclass(frozen=True)
class ServiceStatus:
    name: str
    running: bool
    healthy: bool
    pid: int | None
    endpoint: str
    rss_mb: float | None
    detail: str = ""


class Service(ABC):
    name: str = ""
    # Seconds to wait for the first healthy answer after start.
    start_timeout_s: float = 120.0

    def __init__(self, settings: Settings, log: Log = print) -> None:
        self.settings = settings
        self.root = settings.stack.dir
        self.home = self.root / self.name
        self.log = log

    # -- what each server defines ---------------------------------------------------------
    @abstractmethod
    def endpoint(self) -> str: ...

    @abstractmethod
    def install(self) -> None:
        """Fetch and unpack what the server needs; a no-op when already done."""

    @abstractmethod
    def command(self) -> list[str]:
        """The foreground command that runs the server."""

    @abstractmethod
    def healthy(self) -> bool:
        """One cheap probe: does the server answer its real protocol?"""

    def prepare(self) -> None:  # noqa: B027 - optional hook; most servers need no preparation
        """First-start work (format storage, write config); runs before every start."""

    def env(self) -> dict[str, str]:
        return dict(os.environ)

    def run_as(self) -> str | None:
        return None

    def workdir(self) -> Path:
        return self.home

    # -- shared lifecycle ------------------------------------------------------------------
    @property
    def pid_file(self) -> Path:
        return self.root / "run" / f"{self.name}.pid"

    @property
    def log_file(self) -> Path:
        return self.root / "logs" / f"{self.name}.log"

    def pid(self) -> int | None:
        try:
            pid = int(self.pid_file.read_text().strip())
        except (FileNotFoundError, ValueError):
            return None
        return pid if _alive(pid) else None

    def up(self) -> None:
        if self.pid() is not None and self.healthy():
            self.log(f"{self.name}: already running at {self.endpoint()}")
            return
        if self.pid() is not None:
            self.log(f"{self.name}: process alive but not answering yet; waiting")
            self.wait_healthy()
            return
        self._check_port_free()
        self.home.mkdir(parents=True, exist_ok=True)
        self.install()
        self.prepare()
        (self.root / "run").mkdir(parents=True, exist_ok=True)
        self.log_file.parent.mkdir(parents=True, exist_ok=True)
        started = time.monotonic()
        with self.log_file.open("ab") as out:
            proc = subprocess.Popen(
                self.command(),
                stdout=out,
                stderr=subprocess.STDOUT,
                stdin=subprocess.DEVNULL,
                env=self.env(),
                cwd=self.workdir(),
                start_new_session=True,  # survives the CLI; `stack down` stops the whole group
                user=self.run_as(),
            )
        self.pid_file.write_text(str(proc.pid))
        self.wait_healthy(proc)
        self.log(f"{self.name}: up at {self.endpoint()} in {time.monotonic() - started:.1f}s (pid {proc.pid})")

    def wait_healthy(self, proc: subprocess.Popen[bytes] | None = None) -> None:
        deadline = time.monotonic() + self.start_timeout_s
        while time.monotonic() < deadline:
            if proc is not None and proc.poll() is not None:
                raise StackError(
                    f"{self.name} exited with code {proc.returncode} while starting; "
                    f"read {self.log_file} for the reason"
                )
            if self.healthy():
                return
            time.sleep(0.5)
        raise StackError(
            f"{self.name} did not answer at {self.endpoint()} within {self.start_timeout_s:.0f}s; "
            f"read {self.log_file}, then `python -m devtools stack down` and `python -m devtools stack up`"
        )

    def down(self, timeout_s: float = 30.0) -> None:
        pid = self.pid()
        if pid is None:
            self.pid_file.unlink(missing_ok=True)
            self.log(f"{self.name}: not running")
            return
        with contextlib.suppress(ProcessLookupError):
            os.killpg(pid, signal.SIGTERM)
        deadline = time.monotonic() + timeout_s
        while time.monotonic() < deadline and _alive(pid):
            time.sleep(0.2)
        if _alive(pid):
            with contextlib.suppress(ProcessLookupError):
                os.killpg(pid, signal.SIGKILL)
            self.log(f"{self.name}: did not stop in {timeout_s:.0f}s, killed")
        self.pid_file.unlink(missing_ok=True)
        self.log(f"{self.name}: stopped")

    def status(self) -> ServiceStatus:
        pid = self.pid()
        healthy = pid is not None and self.healthy()
        return ServiceStatus(self.name, pid is not None, healthy, pid, self.endpoint(), _rss_mb(pid))

    def _check_port_free(self) -> None:
        port = self.port()
        with socket.socket() as sock:
            sock.settimeout(0.5)
            if sock.connect_ex(("127.0.0.1", port)) == 0:
                raise StackError(
                    f"{self.name}: port {port} on 127.0.0.1 is taken by another process; stop it, or set "
                    f"another port in sluice.yaml / the SLUICE_* environment"
                )

    @abstractmethod
    def port(self) -> int: ...


def _alive(pid: int) -> bool:
    try:
        os.kill(pid, 0)
    except ProcessLookupError:
        return False
    except PermissionError:
        return True
    # A zombie child still answers kill(0); treat it as gone.
    try:
        state = Path(f"/proc/{pid}/stat").read_text().split(")")[-1].split()[0]
    except (FileNotFoundError, IndexError):
        return False
    return state != "Z"


def _rss_mb(pid: int | None) -> float | None:
    """Resident memory of the process group led by ``pid`` (a wrapper script plus its JVM)."""
    if pid is None:
        return None
    total_kb = 0
    for stat in Path("/proc").glob("[0-9]*/stat"):
        try:
            fields = stat.read_text().split(")")[-1].split()
            pgid = int(fields[2])
            if pgid != pid:
                continue
            status = (stat.parent / "status").read_text()
        except (FileNotFoundError, ProcessLookupError, ValueError, IndexError):
            continue
        for line in status.splitlines():
            if line.startswith("VmRSS:"):
                total_kb += int(line.split()[1])
    return total_kb / 1024 if total_kb else None


def run_checked(cmd: list[str], what: str, cwd: Path | None = None, env: dict[str, str] | None = None) -> None:
    """Run an install step; on failure, say which step and show the tail of its output."""
    proc = subprocess.run(cmd, cwd=cwd, env=env, capture_output=True, text=True, check=False)
    if proc.returncode != 0:
        tail = "\n".join((proc.stdout + proc.stderr).strip().splitlines()[-20:])
        raise StackError(f"{what} failed (exit {proc.returncode}): {' '.join(cmd)}\n{tail}")


def free_port() -> int:
    """A TCP port on 127.0.0.1 that nothing listens on now (the OS picks it)."""
    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        return int(sock.getsockname()[1])


def free_listen_port(low: int = 20_000, high: int = 32_000) -> int:
    """A port on 127.0.0.1 for a server that another process binds later: drawn below the range the OS
    hands to outgoing connections (32768 and up on Linux), so that no client connection made meanwhile
    takes it, as it can take a port from ``free_port``."""
    rng = random.SystemRandom()
    for _ in range(500):
        port = rng.randrange(low, high)
        with socket.socket() as sock:
            try:
                sock.bind(("127.0.0.1", port))
            except OSError:
                continue
            return port
    raise StackError(f"no free port between {low} and {high} on 127.0.0.1 after 500 tries; "
                     "free some, or give the servers ports yourself")


def tcp_open(port: int, host: str = "127.0.0.1") -> bool:
    with socket.socket() as sock:
        sock.settimeout(0.5)
        return sock.connect_ex((host, port)) == 0


def stop_gracefully(proc: subprocess.Popen[bytes], timeout_s: float = 30.0) -> None:
    """SIGINT (a worker drains and commits), then SIGKILL if it has not exited in ``timeout_s``."""
    if proc.poll() is None:
        proc.send_signal(signal.SIGINT)
        try:
            proc.wait(timeout_s)
        except subprocess.TimeoutExpired:
            proc.kill()


def memory_mb(pid: int, field: str = "VmRSS") -> float:
    """A memory figure of a process from /proc/<pid>/status, in MiB: ``VmRSS`` (resident now) or
    ``VmHWM`` (the most it has been resident)."""
    for line in Path(f"/proc/{pid}/status").read_text().splitlines():
        if line.startswith(f"{field}:"):
            return int(line.split()[1]) / 1024
    return 0.0


def cpu_seconds(pid: int) -> float:
    """CPU time (user + system) a process has used so far, from /proc (benchmarks compare processes)."""
    fields = Path(f"/proc/{pid}/stat").read_text().rsplit(")", 1)[1].split()
    return (int(fields[11]) + int(fields[12])) / os.sysconf("SC_CLK_TCK")
