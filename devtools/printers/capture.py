"""Run the small programs under ``programs/`` with the real printers and cut their output into pieces.

A *capture* is what one run printed, as a list of pieces ``(kind, lines)``: ``kind`` "single" means
each line is a record of its own; any other kind is one multiline event from its first to its last
line. The cut comes from how each scenario is built (one failure per run), not from reading the
output, so the labels are only as good as the scenarios: each program prints one event per run.
"""

from __future__ import annotations

import itertools
import os
import re
import shutil
import signal
import subprocess
import sys
from collections.abc import Callable, Iterator
from dataclasses import dataclass
from pathlib import Path

from devtools.stack.maven import fetch_artifact

PROGRAMS = Path(__file__).parent / "programs"
GO = "/usr/local/go/bin/go"
RUSTC = "/root/.cargo/bin/rustc"
CARGO = "/root/.cargo/bin/cargo"
PYENV = Path("/root/.pyenv/versions")

Piece = tuple[str, list[str]]


@dataclass
class Capture:
    lang: str
    name: str  # scenario and printer version, for the labels' notes
    pieces: list[Piece]
    open_end: bool = False  # the event ends in free text (a message): no unprefixed print right after it
    printer: str = ""
    # written in one write() (a logging handler formats a whole record, stack included, then writes it):
    # another process's lines never come inside it
    atomic: bool = False


def _run(argv: list[str], cwd: Path, env: dict[str, str] | None = None, timeout: float = 60,
         merged: bool = False) -> str:
    """What the program wrote to stderr (``merged``: stdout and stderr in the order written)."""
    full = {k: v for k, v in os.environ.items() if not k.startswith(("RUST_", "GOTRACEBACK", "PYTHON"))}
    full.update(env or {})
    p = subprocess.run(argv, cwd=cwd, env=full, stdout=subprocess.PIPE,
                       stderr=subprocess.STDOUT if merged else subprocess.PIPE, timeout=timeout, check=False)
    return (p.stdout if merged else p.stderr).decode("utf-8", "replace")


def _event(kind: str, text: str) -> list[Piece]:
    """One event: the whole output, blank lines before and after it left outside."""
    lines = text.split("\n")
    if lines and lines[-1] == "":
        lines.pop()
    lead = 0
    while lead < len(lines) and not lines[lead].strip():
        lead += 1
    end = len(lines)
    while end > lead and not lines[end - 1].strip():
        end -= 1
    if end == lead:
        raise RuntimeError(f"{kind}: the program printed nothing on stderr")
    out: list[Piece] = []
    if lead:
        out.append(("blank", lines[:lead]))
    out.append((kind, lines[lead:end]))
    if end < len(lines):
        out.append(("blank", lines[end:]))
    return out


def _events_at(kind: str, text: str, start: re.Pattern[str]) -> list[Piece]:
    """Several events of one run, each from a line ``start`` matches to the next such line."""
    lines = text.rstrip("\n").split("\n")
    starts = [i for i, line in enumerate(lines) if start.match(line)] + [len(lines)]
    out: list[Piece] = [("single" if line.strip() else "blank", [line]) for line in lines[:starts[0]]]
    for a, b in itertools.pairwise(starts):
        out += _event(kind, "\n".join(lines[a:b]) + "\n")
    return out


def _version(argv: list[str]) -> str:
    p = subprocess.run(argv, capture_output=True, check=False)
    return (p.stdout or p.stderr).decode().strip().splitlines()[0]


# --- CPython: traceback, faulthandler, warnings, logging -----------------------------------------

PY_SCENARIOS = {
    # scenario: (kind, ends in free text). A traceback ends with the exception's message, which may
    # span lines (traceback.format_exception_only): what follows it is told apart only by being a
    # record of its own, so the line after a traceback is always one with a time or level.
    "plain": ("python_traceback", False), "chained": ("python_traceback", False),
    "context": ("python_traceback", False), "markers": ("python_traceback", False),
    "divide": ("python_traceback", False), "multiline_msg": ("python_traceback", True),
    "empty_msg": ("python_traceback", False), "notes": ("python_traceback", True),
    "group": ("python_traceback", False), "fatal": ("python_fatal", False),
    "fatal_abort": ("python_fatal", False), "dump_later": ("python_fatal", False),
    "warn": ("python_warning", False), "warn_multiline": ("python_warning", False),
    "recursion": ("python_traceback", False), "kbint": ("python_traceback", False),
    "thread": ("python_traceback", False), "syntax_import": ("python_traceback", False),
    "syntax_main": ("python_traceback", False), "assert": ("python_traceback", False),
    "warn_logging": ("python_warning", False), "print_exc": ("python_traceback", False),
    "unraisable": ("python_traceback", False), "process": ("python_traceback", False),
    "asyncio_task": ("python_traceback", False),
    **{f"logging_{f}": ("python_traceback", False)
       for f in ("default", "dashes", "brackets", "hf", "lightning", "fileline")},
}
BAD_CONFIG = "learning_rate = 3e-4\nwarmup = dict(steps=100,\nbatch_size = 8\n"


def python(work: Path) -> Iterator[Capture]:
    app = work / "py" / "app"
    app.mkdir(parents=True, exist_ok=True)
    shutil.copy(PROGRAMS / "train.py", app / "train.py")
    (app / "badconfig.py").write_text(BAD_CONFIG)
    for ver in ("3.11", "3.12", "3.13"):
        exe = next(PYENV.glob(f"{ver}.*/bin/python{ver}"))
        printer = _version([str(exe), "-VV"])
        for name, (kind, open_end) in PY_SCENARIOS.items():
            argv = [str(exe), "badconfig.py"] if name == "syntax_main" else [str(exe), "train.py", name]
            out = ""
            for _try in range(3):  # a signal scenario on a loaded machine may exit before printing
                out = _run(argv, app)
                if out.strip():
                    break
            yield Capture("python", f"{name} ({ver})", _event(kind, out), open_end or kind == "python_traceback",
                          printer, name.startswith(("logging_", "warn_logging")))
    # faulthandler lists the C extensions loaded from outside the stdlib: the project's venv has some
    venv = Path(sys.executable)
    out = _run([str(venv), "train.py", "fatal_ext"], app)
    yield Capture("python", "fatal_ext (venv)", _event("python_fatal", out), False, _version([str(venv), "-VV"]))


# CPython 3.13 colours what its default excepthook writes where PYTHON_COLORS=1 (or FORCE_COLOR) asks for it
# (Lib/_colorize.py, traceback.py's colorize=True: the file, line and function in magenta, the carets in red, the
# exception's type and message in bold): a CI runner or a job launcher that forces colours writes them into the log
PY_COLOR_SCENARIOS = ("plain", "chained", "context", "markers", "divide", "multiline_msg", "empty_msg", "notes",
                      "group", "recursion", "kbint", "thread", "syntax_import", "syntax_main", "assert", "process",
                      "print_exc", "unraisable", "asyncio_task")


def python_color(work: Path) -> Iterator[Capture]:
    """``programs/train.py``'s tracebacks under CPython 3.13 with ``PYTHON_COLORS=1``."""
    app = work / "pycolor" / "app"
    app.mkdir(parents=True, exist_ok=True)
    shutil.copy(PROGRAMS / "train.py", app / "train.py")
    (app / "badconfig.py").write_text(BAD_CONFIG)
    exe = next(PYENV.glob("3.13.*/bin/python3.13"))
    printer = _version([str(exe), "-VV"])
    for name in PY_COLOR_SCENARIOS:
        kind, open_end = PY_SCENARIOS[name]
        argv = [str(exe), "badconfig.py"] if name == "syntax_main" else [str(exe), "train.py", name]
        out = ""
        for _try in range(3):  # a signal scenario on a loaded machine may exit before printing
            out = _run(argv, app, {"PYTHON_COLORS": "1"})
            if out.strip():
                break
        # (asyncio's "Task exception was never retrieved" is one logging record, written at once)
        yield Capture("python_color", f"{name} (3.13, PYTHON_COLORS=1)", _event(kind, out),
                      open_end or kind == "python_traceback", printer, name == "asyncio_task")


# --- CPython's standard library beyond traceback: pools, logging's stack_info, asyncio, unittest ------

# scenario: (ends in free text, written in one write() by a logging handler). A traceback ends with
# its exception's message (free text: a record of its own follows it); a stack ends with a frame's
# source line
PYSTDLIB_SCENARIOS = {
    "futures_process": (True, False), "mp_pool": (True, False), "logging_stack_info": (False, True),
    "logging_stack_exc": (False, True), "print_stack": (False, False), "notes_chain": (True, False),
    "asyncio_callback": (True, True), "asyncio_callback_debug": (True, True), "asyncio_logged": (True, True),
}
UNITTEST_RULE = re.compile(r"^={70}$")


def pystdlib(work: Path) -> Iterator[Capture]:
    """``programs/pystdlib.py`` under CPython 3.11-3.13: one event per run, and unittest's report (each
    failure from its '=' rule to its exception's message; the closing '-' rule, ``Ran N tests`` and
    the verdict are lines of their own)."""
    app = work / "pystdlib"
    app.mkdir(parents=True, exist_ok=True)
    shutil.copy(PROGRAMS / "pystdlib.py", app / "pystdlib.py")
    for ver in ("3.11", "3.12", "3.13"):
        exe = next(PYENV.glob(f"{ver}.*/bin/python{ver}"))
        printer = _version([str(exe), "-VV"])
        for name, (open_end, atomic) in PYSTDLIB_SCENARIOS.items():
            out = _run([str(exe), "pystdlib.py", name], app)
            yield Capture("pystdlib", f"{name} ({ver})", _event("python_traceback", out), open_end, printer, atomic)
        out = _run([str(exe), "pystdlib.py", "unittest"], app)
        lines = out.rstrip("\n").split("\n")
        close = max(i for i, line in enumerate(lines) if line == "-" * 70)
        pieces = _events_at("python_traceback", "\n".join(lines[:close]) + "\n", UNITTEST_RULE)
        pieces += [("single" if line.strip() else "blank", [line]) for line in lines[close:]]
        yield Capture("pystdlib", f"unittest ({ver})", pieces, True, printer)


# --- third-party Python printers: rich, loguru, absl-py, structlog, IPython, typer, tqdm --------------

# scenario, failure (programs/pylibs.py FAILURES), console width (Rich lays boxes out to it; logs are
# written with no terminal), kind ("single": a record of one line)
PYLIB_SCENARIOS: tuple[tuple[str, str, int, str], ...] = (
    ("rich_install", "plain", 100, "python_traceback"), ("rich_install", "chained", 100, "python_traceback"),
    ("rich_install", "chained", 200, "python_traceback"), ("rich_install", "multiline", 100, "python_traceback"),
    ("rich_install", "group", 100, "python_traceback"), ("rich_install", "syntax", 100, "python_traceback"),
    ("rich_install", "notes", 200, "python_traceback"), ("rich_handler", "group", 100, "python_traceback"),
    ("rich_print_exception", "plain", 100, "python_traceback"),
    ("rich_print_exception", "context", 200, "python_traceback"),
    ("rich_locals", "plain", 100, "python_traceback"), ("rich_locals", "chained", 200, "python_traceback"),
    ("rich_handler", "plain", 100, "python_traceback"), ("rich_handler", "chained", 200, "python_traceback"),
    ("rich_handler", "chained", 100, "python_traceback"), ("rich_handler", "context", 80, "python_traceback"),
    ("typer", "plain", 100, "python_traceback"),
    ("loguru_exception", "plain", 0, "python_traceback"), ("loguru_exception", "chained", 0, "python_traceback"),
    ("loguru_nodiag", "plain", 0, "python_traceback"), ("loguru_nodiag", "chained", 0, "python_traceback"),
    ("loguru_nodiag", "group", 0, "python_traceback"), ("loguru_exception", "context", 0, "python_traceback"),
    ("loguru_nobacktrace", "plain", 0, "python_traceback"),
    ("loguru_catch", "plain", 0, "python_traceback"), ("loguru_catch", "multiline", 0, "python_traceback"),
    ("loguru_catch_nodiag", "plain", 0, "python_traceback"), ("loguru_format", "chained", 0, "python_traceback"),
    ("loguru_serialize", "plain", 0, "single"), ("rich_handler_locals", "chained", 100, "python_traceback"),
    ("absl_exception", "plain", 0, "python_traceback"), ("absl_exception", "chained", 0, "python_traceback"),
    ("absl_error_exc_info", "plain", 0, "python_traceback"), ("absl_before_flags", "plain", 0, "python_traceback"),
    ("structlog_plain", "plain", 0, "python_traceback"), ("structlog_plain", "chained", 0, "python_traceback"),
    ("structlog_rich", "plain", 100, "python_traceback"), ("structlog_rich", "chained", 200, "python_traceback"),
    ("structlog_better", "plain", 0, "python_traceback"), ("structlog_json", "plain", 0, "single"),
    ("ipython_context", "plain", 0, "python_traceback"), ("ipython_context", "chained", 0, "python_traceback"),
    ("ipython_verbose", "plain", 0, "python_traceback"), ("ipython_plain", "plain", 0, "python_traceback"),
    ("ipython_verbosetb", "chained", 0, "python_traceback"),
    ("tqdm_redirect", "plain", 0, "python_traceback"), ("structlog_default", "plain", 0, "python_traceback"),
    # a terminal forced (FORCE_COLOR, docker's tty): Rich writes colours and file links into the log
    ("rich_install+color", "chained", 100, "python_traceback"),
    ("rich_handler+color", "plain", 100, "python_traceback"),
    ("rich_handler+color", "context", 80, "python_traceback"),
    ("structlog_default+color", "plain", 0, "python_traceback"),
)
PYLIBS = ("rich", "typer", "loguru", "absl-py", "structlog", "better-exceptions", "ipython", "tqdm")


def pylibs(work: Path) -> Iterator[Capture]:
    """The venv's Python with the dev extra's printers (``pyproject.toml``)."""
    from importlib.metadata import version

    app = work / "pylibs"
    app.mkdir(parents=True, exist_ok=True)
    shutil.copy(PROGRAMS / "pylibs.py", app / "pylibs.py")
    exe = sys.executable
    for scenario, fail, width, kind in PYLIB_SCENARIOS:
        name, _, color = scenario.partition("+")
        lib = {"absl": "absl-py"}.get(name.split("_")[0], name.split("_")[0])
        printer = f"{lib} {version(lib)}" if lib in PYLIBS else lib
        env = {"COLUMNS": str(width or 80), **({"FORCE_COLOR": "1"} if color else {})}
        out = _run([exe, "pylibs.py", name, fail, str(width or 100)], app, env)
        if kind == "single":
            pieces: list[Piece] = [("single", [line]) for line in out.rstrip("\n").split("\n")]
        elif name == "tqdm_redirect":
            # the bar's last redraw after the record (and its newline at close) is a line of its own
            lines = out.rstrip("\n").split("\n")
            pieces = [*_event(kind, "\n".join(lines[:-1]) + "\n"), ("single", lines[-1:])]
        else:
            pieces = _event(kind, out)
        # (the event ends with the exception's message, free text: a record of its own follows). Each
        # printer writes its event in one write() (a Rich console renders it whole, loguru's and
        # structlog's sinks and logging handlers write the formatted record, IPython prints the joined
        # traceback); tqdm.write puts the record between its bar's redraws
        yield Capture("pylibs", f"{scenario} {fail} (width {width})" if width else f"{scenario} {fail}", pieces,
                      kind != "single", printer, name != "tqdm_redirect")


# --- Java: Throwable.printStackTrace, uncaught handler, java.util.logging, a PatternLayout ---------

JAVA_SCENARIOS = ("caused_by", "suppressed", "multiline", "multiline_cause", "uncaught_main", "uncaught_thread",
                  "jul", "jul_warning", "pattern", "pattern_multiline", "logback", "initializer", "no_message",
                  "dump_stack")
JAVA_HOMES = {"17": "/usr/lib/jvm/java-17-openjdk-amd64", "25": "/usr/lib/jvm/temurin-25-jdk-amd64"}


def java(work: Path) -> Iterator[Capture]:
    for ver, home in JAVA_HOMES.items():
        out_dir = work / f"java{ver}"
        out_dir.mkdir(parents=True, exist_ok=True)
        subprocess.run([f"{home}/bin/javac", "-d", str(out_dir), str(PROGRAMS / "java" / "Trainer.java")], check=True)
        printer = _version([f"{home}/bin/java", "-version"])
        for name in JAVA_SCENARIOS:
            out = _run([f"{home}/bin/java", "-cp", str(out_dir), "Trainer", name], out_dir)
            yield Capture("java", f"{name} (java {ver})", _event("java_stack", out), "multiline" in name, printer,
                          name.startswith(("jul", "pattern", "logback")))


# log4j2 and logback from Maven Central (the project's way of fetching jars: devtools.stack.maven)
JVM_LOGGERS = {
    "log4j2": ("org.example.train.Log4j2Worker", "Log4j2Worker.java",
               ("org.apache.logging.log4j:log4j-api:2.24.3", "org.apache.logging.log4j:log4j-core:2.24.3")),
    "logback": ("org.example.train.LogbackWorker", "LogbackWorker.java",
                ("ch.qos.logback:logback-classic:1.5.18", "ch.qos.logback:logback-core:1.5.18",
                 "org.slf4j:slf4j-api:2.0.17")),
}
JVM_LOGGER_SCENARIOS = ("caused_by", "suppressed", "multiline", "jdk_frames")


def java_loggers(work: Path) -> Iterator[Capture]:
    """log4j2's PatternLayout with ``%xEx`` (extended frames "~[jar:version]", "[?:?]") and logback's
    (its ThrowableProxyConverter: "... N common frames omitted"): an INFO record, then an ERROR record
    with its throwable, written by the logger at once."""
    jars = work / "jars"
    src = PROGRAMS / "jvmlog"
    for lib, (main, source, coords) in JVM_LOGGERS.items():
        cp = ":".join(str(fetch_artifact(c, jars)) for c in coords)
        for ver, home in JAVA_HOMES.items():
            out_dir = work / f"{lib}{ver}"
            out_dir.mkdir(parents=True, exist_ok=True)
            subprocess.run([f"{home}/bin/javac", "-cp", cp, "-d", str(out_dir), str(src / "Failures.java"),
                            str(src / source)], check=True)
            printer = f"{lib} {coords[-1].rsplit(':', 1)[1] if lib == 'log4j2' else coords[0].rsplit(':', 1)[1]}"
            for name in JVM_LOGGER_SCENARIOS:
                out = _run([f"{home}/bin/java", "-cp", f"{out_dir}:{cp}", main, name], out_dir)
                first, rest = out.split("\n", 1)  # the INFO record before the failure
                yield Capture("java_loggers", f"{lib} {name} (java {ver})",
                              [("single", [first]), *_event("java_stack", rest)], False,
                              f"{printer}, {_version([f'{home}/bin/java', '-version'])}", True)


def jvm_fatal(work: Path) -> Iterator[Capture]:
    """HotSpot's fatal error header ('#' lines from a bare "#" to the one after the bug report URL) on
    a SIGSEGV in native code, after the program's own line."""
    for ver, home in JAVA_HOMES.items():
        out_dir = work / f"crash{ver}"
        out_dir.mkdir(parents=True, exist_ok=True)
        subprocess.run([f"{home}/bin/javac", "-nowarn", "-d", str(out_dir), str(PROGRAMS / "java" / "Crash.java")],
                       check=True, capture_output=True)
        out = _run([f"{home}/bin/java", f"-XX:ErrorFile={out_dir}/hs_err.log", "-XX:-CreateCoredumpOnCrash",
                    "-cp", str(out_dir), "Crash"], out_dir, merged=True)
        # the program's line before the crash (and JDK 25's "WARNING: ..." lines about sun.misc.Unsafe)
        head, sep, rest = out.partition("#\n# A fatal error has been detected")
        if not sep:
            raise RuntimeError(f"java {ver}: expected HotSpot's fatal error header, got:\n{out}")
        singles = [("single", [line]) for line in head.rstrip("\n").split("\n")]
        yield Capture("jvm_fatal", f"SIGSEGV (java {ver})", [*singles, *_event("jvm_fatal_error", sep + rest)],
                      False, _version([f"{home}/bin/java", "-version"]))


# --- Go: the runtime's panic and fatal error dumps -----------------------------------------------

GO_SCENARIOS = {"plain": "single", "errors_new": "single", "multiline": "single", "repanic": "single",
                "nil_pointer": "single", "index": "single", "nil_map": "single", "goroutines": "all",
                "deadlock": "single", "deadlock_wg": "all", "concurrent_map": "single", "custom_error": "single",
                "stack_overflow": "single"}
GO_SYSTEM = ("nil_pointer", "goroutines", "repanic")  # GOTRACEBACK=system adds runtime frames and gp= headers


def go(work: Path, lang: str = "go", toolchain: str = "local") -> Iterator[Capture]:
    """``programs/go`` built and run by the local Go (``toolchain`` "local") or by a toolchain the go
    command fetches from the Go module proxy (``GOTOOLCHAIN=go1.22.12``: golang.org/toolchain)."""
    src = work / lang / "worker"
    src.mkdir(parents=True, exist_ok=True)
    for f in ("main.go", "main_test.go", "go.mod"):
        shutil.copy(PROGRAMS / "go" / f, src / f)
    env = {"GOCACHE": str(work / "gocache"), "GOFLAGS": "-mod=mod", "GOTOOLCHAIN": toolchain}
    subprocess.run([GO, "build", "-o", "worker", "."], cwd=src, env={**os.environ, **env}, check=True)
    printer = _version(["env", f"GOTOOLCHAIN={toolchain}", GO, "version"])
    for name, tb in GO_SCENARIOS.items():
        out = _run(["./worker", name], src, {"GOTRACEBACK": tb}, timeout=300)
        yield Capture(lang, f"{name} (GOTRACEBACK={tb})", _event("go_panic", out), False, printer)
    for name in GO_SYSTEM:
        out = _run(["./worker", name], src, {"GOTRACEBACK": "system"})
        yield Capture(lang, f"{name} (GOTRACEBACK=system)", _event("go_panic", out), False, printer)
    # `go test`: the failed test's header and its t.Log lines (indented under it), the panic, then the
    # package's "FAIL\t<pkg>\t<time>" and "FAIL" lines
    out = _run([GO, "test", "."], src, env, merged=True, timeout=600)
    lines = out.rstrip("\n").split("\n")
    p = next(i for i, line in enumerate(lines) if line.startswith("panic: "))
    fail = next(i for i, line in enumerate(lines) if line.startswith("FAIL\t"))
    yield Capture(lang, "go test", [("go_test", lines[:p]), *_event("go_panic", "\n".join(lines[p:fail]) + "\n"),
                                    ("single", lines[fail:])], False, printer)
    # log.Panicf writes its record, then panics with the same text
    out = _run(["./worker", "log_panic"], src)
    first, rest = out.split("\n", 1)
    yield Capture(lang, "log_panic", [("single", [first]), *_event("go_panic", rest)], False, printer)
    # the race detector (runtime/race, ThreadSanitizer's Go report): a report between two '=' rules,
    # then the program's own lines and "Found N data race(s)" at exit
    subprocess.run([GO, "build", "-race", "-o", "worker_race", "."], cwd=src, env={**os.environ, **env}, check=True)
    out = _run(["./worker_race", "race"], src)
    lines = out.rstrip("\n").split("\n")
    close = lines.index("==================", 1)
    yield Capture(lang, "race (-race)", [("go_race", lines[:close + 1]), ("single", lines[close + 1:])], False,
                  printer)
    # SIGQUIT to a stuck worker (what `kill -QUIT` or a supervisor's stack request sends): "SIGQUIT: quit",
    # "PC=.. m=N sigcode=N", every goroutine, then the registers (dumpregs): one dump after its first line
    with subprocess.Popen(["./worker", "hang"], cwd=src, stderr=subprocess.PIPE,
                          env={k: v for k, v in os.environ.items() if not k.startswith("GOTRACEBACK")}) as proc:
        stderr = proc.stderr
        if stderr is None:
            raise RuntimeError("go hang: no stderr pipe")
        first = stderr.readline().decode()
        proc.send_signal(signal.SIGQUIT)
        rest = stderr.read().decode("utf-8", "replace")
    yield Capture(lang, "hang (SIGQUIT)", [("single", [first.rstrip("\n")]), *_event("go_panic", rest)], False,
                  printer)
    # `go run` prints the child's exit status after the dump: a record of its own
    for name in ("plain", "nil_map", "deadlock"):
        out = _run([GO, "run", ".", name], src, env, timeout=600)
        lines = out.rstrip("\n").split("\n")
        if not lines[-1].startswith("exit status"):
            raise RuntimeError(f"go run {name}: expected an exit status line, got {lines[-1]!r}")
        pieces = [*_event("go_panic", "\n".join(lines[:-1]) + "\n"), ("single", lines[-1:])]
        yield Capture(lang, f"{name} (go run)", pieces, False, printer)


def go122(work: Path) -> Iterator[Capture]:
    """The same runs under go1.22.12, whose runtime prints the layouts before Go 1.23: a recovered and
    re-raised panic as ``panic: v [recovered]`` and a nested ``\tpanic: v`` line, goroutine headers and
    ``created by`` lines of that release."""
    yield from go(work, "go122", "go1.22.12")


# --- Go's logging and error libraries: zap, logrus, zerolog, klog, slog, pkg/errors ------------------

def _records(text: str, heads: tuple[tuple[re.Pattern[str], str], ...]) -> list[Piece]:
    """One run's records cut where each begins: a record starts at a line one of ``heads`` matches (the
    head its library writes first, which the program's messages never hold) and runs to the next; a
    record of one line is a single, a longer one an event of its head's kind. Blank lines after a
    record (a formatter's separator, the end of a dump) are left outside it; lines before the first
    head are single."""
    lines = text.rstrip("\n").split("\n")
    starts = [i for i, line in enumerate(lines) if any(h.match(line) for h, _k in heads)] + [len(lines)]
    out: list[Piece] = [("single" if line.strip() else "blank", [line]) for line in lines[:starts[0]]]
    for a, b in itertools.pairwise(starts):
        kind = next(k for h, k in heads if h.match(lines[a]))
        end = b
        while end > a + 1 and not lines[end - 1].strip():
            end -= 1
        out.append(("single" if end == a + 1 else kind, lines[a:end]))
        if end < b:
            out.append(("blank", lines[end:b]))
    return out


GO_PANIC_HEAD = (re.compile(r"^panic: "), "go_panic")  # the runtime's dump after a logger's panic
# zapcore's ConsoleEncoder (ISO 8601 time, capital level, tab-separated)
ZAP_CONSOLE_HEAD = re.compile(r"^\d{4}-\d\d-\d\dT\d\d:\d\d:\d\d\.\d{3}(?:Z|[+-]\d\d:?\d\d)\t[A-Z]+\t")
KLOG_HEAD = re.compile(r"^[IWEF]\d{4} \d\d:\d\d:\d\d\.\d{6} ")  # klog's header (glog's layout)
GOLOG_HEAD = re.compile(r"^\d{4}/\d\d/\d\d \d\d:\d\d:\d\d ")  # the standard log package, LstdFlags
LINE_HEAD = re.compile(r"^(?:\{|time=|\d{1,2}:\d\d[AP]M )")  # JSON, logrus/slog text, zerolog's console (Kitchen)
# scenario: (heads that start its records, klog flags). Which line starts a record comes from each
# library's encoder: zapcore's ConsoleEncoder writes the entry's line, then (for Warn and above in a
# development config) "\n" + the stacktrace; the JSON encoders, logrus's and slog's text handlers and
# zerolog's writers quote or escape newlines, so their records are one line; klog writes a multi-line
# string value as "key=<" + tab-indented lines + " >" (internal/serialize writeStringValue), and on
# Fatal with -logtostderr=false the calling goroutine's stack after the record (dbg.Stacks(false));
# pkg/errors' "%+v" is the messages and each "\n<func>\n\t<file>:<line>" frame, written by log in one
# Output call
GOLIB_SCENARIOS: dict[str, tuple[tuple[tuple[re.Pattern[str], str], ...], tuple[str, ...]]] = {
    **dict.fromkeys(("zap_dev_error", "zap_dev_pkgerrors", "zap_dev_warn_multiline", "zap_dev_dpanic",
                     "zap_sugar_error"), (((ZAP_CONSOLE_HEAD, "go_log_stack"), GO_PANIC_HEAD), ())),
    **dict.fromkeys(("zap_prod_error", "zap_prod_panic", "logrus_error", "logrus_multiline", "logrus_json",
                     "logrus_panic", "zerolog_console", "zerolog_json", "slog_text", "slog_json"),
                    (((LINE_HEAD, "single"), GO_PANIC_HEAD), ())),
    **dict.fromkeys(("klog_errors", "klog_multiline", "klog_fatal"), (((KLOG_HEAD, "klog_record"),), ())),
    "klog_fatal_stderr": (((KLOG_HEAD, "klog_record"),), ("-logtostderr=false", "-alsologtostderr")),
    **dict.fromkeys(("pkgerrors_log", "pkgerrors_withstack"), (((GOLOG_HEAD, "go_log_stack"),), ())),
}
GOLIB_MODULES = ("go.uber.org/zap", "github.com/sirupsen/logrus", "github.com/rs/zerolog", "k8s.io/klog/v2",
                 "github.com/pkg/errors")


def golibs(work: Path) -> Iterator[Capture]:
    """``programs/golibs`` (its go.mod and go.sum pin the modules, fetched from the Go module proxy): an
    INFO record, then a failure as each library prints it; klog's Fatal also from its FATAL log file
    (the file's header, then the record and every goroutine's stack)."""
    src = work / "golibs"
    src.mkdir(parents=True, exist_ok=True)
    for f in ("main.go", "go.mod", "go.sum"):
        shutil.copy(PROGRAMS / "golibs" / f, src / f)
    env = {"GOCACHE": os.environ.get("GOCACHE", str(work / "gocache")), "GOFLAGS": "-mod=readonly",
           "GOTOOLCHAIN": "local"}
    subprocess.run([GO, "build", "-o", "golibs", "."], cwd=src, env={**os.environ, **env}, check=True)
    mods = dict(re.findall(r"^\t(\S+) (v\S+)$", (src / "go.mod").read_text(), re.M))
    printer = f"{_version([GO, 'version'])}; " + ", ".join(f"{m} {mods[m]}" for m in GOLIB_MODULES)
    for name, (heads, flags) in GOLIB_SCENARIOS.items():
        log_dir = [f"-log_dir={work / 'klog_stderr'}"] if flags else []
        out = _run(["./golibs", name.removesuffix("_stderr"), *flags, *log_dir], src)
        pieces = _records(out, heads)
        # a record of one line after the last event: a panic's dump and stacks end with a frame, the
        # rest (klog's " >", a message) is told apart from what follows by being a record of its own
        yield Capture("golibs", name, pieces, True, printer, not any(k == "go_panic" for k, _p in pieces))
    logs = src / "klog"
    logs.mkdir(exist_ok=True)
    _run(["./golibs", "klog_fatal", "-logtostderr=false", f"-log_dir={logs}"], src)
    fatal = next(logs.glob("golibs.*.FATAL.*"))
    lines = fatal.read_text().rstrip("\n").split("\n")
    if not lines[3].startswith("Log line format: "):
        raise RuntimeError(f"klog's log file header: expected 4 lines, got {lines[:5]}")
    yield Capture("golibs", "klog_fatal (FATAL log file)",
                  [("glog_header", lines[:4]), *_records("\n".join(lines[4:]), ((KLOG_HEAD, "klog_record"),))],
                  False, printer, True)


# --- Rust's error and logging crates: anyhow, eyre, color-eyre, env_logger, tracing-subscriber, tokio ---

ENV_LOGGER_HEAD = (re.compile(r"^\[\d{4}-\d\d-\d\dT\S+Z +[A-Z]+ +\S+\] "), "rust_log")  # env_logger's default
TRACING_HEAD = (re.compile(r"^ *\d{4}-\d\d-\d\dT\d\d:\d\d:\d\d\.\d+Z +[A-Z]+ "), "rust_log")  # tracing-subscriber fmt
RUST_THREAD_HEAD = (re.compile(r"^thread '[^']*' .*panicked at "), "rust_panic")  # std's default panic hook
REPORT_HEAD = (re.compile(r"^(?:Error: |The application panicked)"), "rust_error")  # Termination / a panic hook
# scenario: RUST_BACKTRACE values it runs under. What one event is comes from each crate's code:
# anyhow's and eyre's Debug write the message, "\n\nCaused by:" and the causes indented under their
# numbers, (eyre) "\n\nLocation:\n" and the place, "\n\nStack backtrace:\n" and std's backtrace;
# color-eyre's handler the same in its sections (and its panic hook "The application panicked
# (crashed)." to its backtrace note); `main` returning Err has std print "Error: {err:?}"; env_logger
# and tracing-subscriber's fmt write a record's message as it is, so a message of several lines is one
# record to the next head (pretty: the message, then "  at file:line" and "  in span with fields", then a
# blank line)
RUSTLIB_SCENARIOS: dict[str, tuple[str, ...]] = {
    "anyhow": ("0", "1"), "anyhow_multiline": ("0",), "eyre": ("0", "1"), "color_eyre": ("0", "1"),
    "color_eyre_color": ("0",), "color_eyre_panic": ("0", "1"), "env_logger": ("0", "1"),
    "tracing_full": ("0",), "tracing_pretty": ("0",), "tracing_compact": ("0",), "tokio_panic": ("0", "1"),
}
RUSTLIB_CRATES = ("anyhow", "eyre", "color-eyre", "env_logger", "tracing-subscriber", "tokio")


def rustlibs(work: Path) -> Iterator[Capture]:
    """``programs/rustlibs`` (Cargo.lock pins the crates, fetched from crates.io), built with cargo:
    each error report, panic and log record as its crate writes it."""
    crate = work / "rustlibs"
    (crate / "src").mkdir(parents=True, exist_ok=True)
    for f in ("Cargo.toml", "Cargo.lock", "src/main.rs"):
        shutil.copy(PROGRAMS / "rustlibs" / f, crate / f)
    subprocess.run([CARGO, "build", "--locked", "-q"], cwd=crate, check=True)
    lock = (crate / "Cargo.lock").read_text()
    versions = dict(re.findall(r'^name = "([^"]+)"\nversion = "([^"]+)"', lock, re.M))
    printer = f"{_version([RUSTC, '-V'])}; " + ", ".join(f"{c} {versions[c]}" for c in RUSTLIB_CRATES)
    exe = str(crate / "target" / "debug" / "rustlibs")
    heads = (ENV_LOGGER_HEAD, TRACING_HEAD, RUST_THREAD_HEAD, REPORT_HEAD)
    for name, modes in RUSTLIB_SCENARIOS.items():
        for bt in modes:
            out = _run([exe, name], crate, {"RUST_BACKTRACE": bt})
            pieces = _records(out, heads)
            yield Capture("rustlibs", f"{name} (RUST_BACKTRACE={bt})", pieces, True, printer,
                          not name.endswith("panic"))


# --- Rust: the default panic hook and std's backtrace printer --------------------------------------

RUST_PANIC_RE = re.compile(r"^thread '[^']*' .*panicked at ")
RUST_SCENARIOS = {"panic": ("0", "1"), "unwrap": ("0", "1", "full"), "expect": ("1",), "index": ("0", "full"),
                  "multiline": ("0", "1"), "thread": ("0", "1"), "thread_unnamed": ("0", "1")}


def rust(work: Path) -> Iterator[Capture]:
    src = work / "rust"
    src.mkdir(parents=True, exist_ok=True)
    shutil.copy(PROGRAMS / "rust" / "main.rs", src / "main.rs")
    subprocess.run([RUSTC, "-g", "-o", "loader", "main.rs"], cwd=src, check=True)
    printer = _version([RUSTC, "-V"])
    for name, modes in RUST_SCENARIOS.items():
        for bt in modes:
            out = _run(["./loader", name], src, {"RUST_BACKTRACE": bt})
            yield Capture("rust", f"{name} (RUST_BACKTRACE={bt})", _event("rust_panic", out),
                          name == "multiline" and bt == "0", printer)
    # a panic in a destructor while unwinding: the hook prints each panic, then the runtime aborts
    for bt in ("0", "1"):
        out = _run(["./loader", "double"], src, {"RUST_BACKTRACE": bt})
        yield Capture("rust", f"double (RUST_BACKTRACE={bt})", _events_at("rust_panic", out, RUST_PANIC_RE), True,
                      printer)
    # under `cargo run`: cargo's "Finished"/"Running" lines before the panic
    crate = work / "cargo" / "loader"
    (crate / "src").mkdir(parents=True, exist_ok=True)
    (crate / "Cargo.toml").write_text('[package]\nname = "loader"\nversion = "0.1.0"\nedition = "2021"\n')
    shutil.copy(PROGRAMS / "rust" / "main.rs", crate / "src" / "main.rs")
    subprocess.run([CARGO, "build", "--offline", "-q"], cwd=crate, check=True)
    for name, bt in (("panic", "0"), ("thread", "1")):
        out = _run([CARGO, "run", "--offline", "--", name], crate, {"RUST_BACKTRACE": bt})
        lines = out.rstrip("\n").split("\n")
        first = next(i for i, line in enumerate(lines) if "panicked at" in line)
        lead = first - 1 if first and not lines[first - 1].strip() else first
        last = len(lines) - 1  # (cargo execs the program on Unix: it writes nothing after the panic)
        pieces: list[Piece] = [("single", lines[:lead]), ("blank", lines[lead:first]),
                               ("rust_panic", lines[first:last + 1]), ("single", lines[last + 1:])]
        yield Capture("rust", f"{name} (cargo run, RUST_BACKTRACE={bt})", pieces, False, printer)


# --- C: glibc backtrace_symbols_fd, and gdb's bt of the crashing program ---------------------------

GDB_STOP_RE = re.compile(r"^(?:0x[0-9a-f]+ in )?\S+ \(.*\) at \S+:\d+$")
GDB_FRAME_RE = re.compile(r"^#\d+ ")
GDB_LOCALS_RE = re.compile(r"^(?:\s+\S|No locals\.$|No symbol table info available\.$)")  # `bt full`
GDB_THREAD_RE = re.compile(r"^Thread \d+ \(.*\):$")


def _gdb_pieces(out: str) -> list[Piece]:
    """gdb batch output: the stop location and its source line (one event), each ``bt`` (frames, with
    ``bt full``'s locals under each, and the ``Thread N (...):`` line ``thread apply all`` prints
    before them), the rest single."""
    lines = out.rstrip("\n").split("\n")
    pieces: list[Piece] = []
    i = 0
    while i < len(lines):
        line = lines[i]
        if GDB_STOP_RE.match(line) and i + 1 < len(lines) and re.match(r"^\d+\t", lines[i + 1]):
            pieces.append(("gdb_stop", lines[i:i + 2]))
            i += 2
        elif GDB_FRAME_RE.match(line) or (GDB_THREAD_RE.match(line) and i + 1 < len(lines)
                                          and GDB_FRAME_RE.match(lines[i + 1])):
            j = i + 1
            while j < len(lines) and (GDB_FRAME_RE.match(lines[j]) or GDB_LOCALS_RE.match(lines[j])):
                j += 1
            pieces.append(("gdb_bt", lines[i:j]))
            i = j
        else:
            pieces.append(("single" if line.strip() else "blank", [line]))
            i += 1
    return pieces


def native(work: Path) -> Iterator[Capture]:
    src = work / "c"
    src.mkdir(parents=True, exist_ok=True)
    shutil.copy(PROGRAMS / "c" / "crash.c", src / "crash.c")
    gcc = _version(["gcc", "--version"])
    for exe, flags in (("crash", ["-rdynamic"]), ("crash_static_syms", [])):
        subprocess.run(["gcc", "-g", "-O0", "-pthread", *flags, "-o", exe, "crash.c"], cwd=src, check=True)
        for name in ("handler", "abort"):
            out = _run([f"./{exe}", name], src)
            yield Capture("c", f"{name} ({exe}, {' '.join(flags) or 'no -rdynamic'})",
                          _event("glibc_backtrace", out), False, gcc)
    # AddressSanitizer's report, from its '=' rule to the shadow bytes' legend; "==PID==ABORTING" after
    # it is written by Die(), a line of its own
    subprocess.run(["gcc", "-g", "-fsanitize=address", "-o", "crash_asan", "crash.c"], cwd=src, check=True)
    out = _run(["./crash_asan", "heap_overflow"], src)
    report, aborting = out.rstrip("\n").rsplit("\n", 1)
    if not aborting.endswith("==ABORTING"):
        raise RuntimeError(f"ASan: expected ==PID==ABORTING last, got {aborting!r}")
    yield Capture("c", "heap_overflow (gcc -fsanitize=address)",
                  [*_event("llvm_sanitizer", report + "\n"), ("single", [aborting])], False, gcc)
    # libstdc++'s verbose terminate handler: "terminate called after throwing ..." + "  what():  message"
    shutil.copy(PROGRAMS / "cpp" / "terminate.cpp", src / "terminate.cpp")
    subprocess.run(["g++", "-g", "-pthread", "-o", "terminate", "terminate.cpp"], cwd=src, check=True)
    for name in ("runtime", "out_of_range", "multiline", "thread", "int"):
        out = _run(["./terminate", name], src)
        pieces = _event("cpp_terminate", out)
        if name == "int":  # no what(): one line
            pieces = [("single", pieces[0][1])]
        # (what() is free text, over lines or not: the line after it is told apart by being a record)
        yield Capture("c", f"terminate {name} (g++)", pieces, True, gcc)
    gdb = _version(["gdb", "--version"])
    for name, cmds in (("segv", ["bt"]), ("thread", ["bt", "thread apply all bt"]), ("segv", ["bt full"]),
                       ("abort_plain", ["bt"])):
        argv = ["gdb", "-q", "-nx", "-batch", "-ex", "run"]
        for c in cmds:
            argv += ["-ex", c]
        out = _run([*argv, "--args", "./crash", name], src, timeout=120, merged=True)
        pieces = _gdb_pieces(out)
        if not any(k == "gdb_bt" for k, _ in pieces):
            raise RuntimeError(f"gdb {name}: no backtrace in its output:\n{out}")
        yield Capture("c", f"gdb {name} ({' / '.join(cmds)})", pieces, False, gdb)


# --- Node.js: the uncaught exception report and util.inspect's errors ----------------------------

# scenario: ends with the process's "Node.js vX" line (the uncaught report of src/node_errors.cc) or with
# util.inspect's closing brace / last frame (console.error)
NODE_SCENARIOS = ("uncaught", "uncaught_multiline", "rejection", "cause", "aggregate", "syscall")
NODE_CONSOLE = ("cause", "aggregate", "syscall")


def node(work: Path) -> Iterator[Capture]:
    """``programs/node/worker.js`` under the machine's node: an uncaught exception and an unhandled
    rejection (the throw's source line and caret, a blank line, the stack, a blank line, ``Node.js
    vX``: one report), ``console.error(err)`` of an error with a cause, an AggregateError and a system
    error's own properties (``{ [cause]: ... }``, ``[errors]: [ ... ]``, ``errno: -2, ...`` to ``}``)."""
    src = work / "node"
    src.mkdir(parents=True, exist_ok=True)
    shutil.copy(PROGRAMS / "node" / "worker.js", src / "worker.js")
    printer = "node " + _version(["node", "--version"])
    for name in NODE_SCENARIOS:
        out = _run(["node", "worker.js", name], src)
        # (console.error formats the error with util.inspect and writes it in one write(): another
        # process's lines never come inside it)
        yield Capture("node", name, _event("node_error", out), False, printer, name in NODE_CONSOLE)


# --- valgrind memcheck and gcc's sanitizers (UBSan, LeakSanitizer, ThreadSanitizer) ------------------

VG_SCENARIOS = ("invalid_read", "uninit", "double_free", "leak")
VG_PREFIX_RE = re.compile(r"^==\d+== ?")


def _valgrind_pieces(out: str) -> list[Piece]:
    """valgrind's messages, each line behind "==PID== ": a message ends with the prefix alone (m_errormgr.c
    pp_Error, the leak checker and print_preamble write an empty message after theirs; where two come, the
    second is the space before the next section, written by the same writer and taken with the message
    before it), a multi-line one indents its stack and descriptions under its first line; the preamble
    (tool, copyright, version, command) is one message. Lines at the prefix's column with no empty message
    after them are one-line messages of their own ("For lists of ...", "ERROR SUMMARY: ...")."""
    lines = out.rstrip("\n").split("\n")
    pieces: list[Piece] = []
    para: list[str] = []

    def body(line: str) -> str:
        return VG_PREFIX_RE.sub("", line, count=1)

    i = 0
    while i < len(lines):
        line = lines[i]
        if not VG_PREFIX_RE.match(line):
            pieces.extend(("single", [x]) for x in para)
            para.clear()
            pieces.append(("single" if line.strip() else "blank", [line]))
            i += 1
            continue
        if body(line).strip():
            para.append(line)
            i += 1
            continue
        j = i
        while j < len(lines) and VG_PREFIX_RE.match(lines[j]) and not body(lines[j]).strip():
            j += 1
        if para:  # a message and the empty message after it
            pieces.append(("valgrind", [*para, *lines[i:j]]))
            para.clear()
        else:
            pieces.append(("ignore", lines[i:j]))
        i = j
    pieces.extend(("single", [x]) for x in para)
    return pieces


def memcheck(work: Path) -> Iterator[Capture]:
    """``programs/memcheck/worker.c`` (one bug per scenario) under valgrind's memcheck, and built with
    gcc's -fsanitize=undefined (UBSAN_OPTIONS=print_stacktrace=1: the runtime error, frames, SUMMARY; without
    it one line), =leak (from the '=' rule to SUMMARY) and =thread (between its two '=' rules; "ThreadSanitizer:
    reported N warnings" at exit is a line of its own)."""
    src = work / "memcheck"
    src.mkdir(parents=True, exist_ok=True)
    shutil.copy(PROGRAMS / "memcheck" / "worker.c", src / "worker.c")
    gcc = _version(["gcc", "--version"])
    subprocess.run(["gcc", "-g", "-O0", "-pthread", "-o", "worker", "worker.c"], cwd=src, check=True)
    vg = _version(["valgrind", "--version"])
    for name in VG_SCENARIOS:
        out = _run(["valgrind", "--leak-check=full", "./worker", name], src)
        yield Capture("memcheck", f"valgrind {name}", _valgrind_pieces(out), False, vg)
    for flag, exe in (("undefined", "worker_ubsan"), ("leak", "worker_lsan"), ("thread", "worker_tsan")):
        subprocess.run(["gcc", "-g", "-O0", "-pthread", f"-fsanitize={flag}", "-o", exe, "worker.c"], cwd=src,
                       check=True)
    for trace in ("0", "1"):
        out = _run(["./worker_ubsan", "overflow"], src, {"UBSAN_OPTIONS": f"print_stacktrace={trace}"})
        pieces = _event("llvm_sanitizer", out)
        if trace == "0":  # the runtime error's line alone
            pieces = [("single", [line]) for _k, p in pieces for line in p if line.strip()]
        yield Capture("memcheck", f"ubsan overflow (print_stacktrace={trace})", pieces, False, gcc)
    out = _run(["./worker_lsan", "leak"], src)
    yield Capture("memcheck", "lsan leak", _event("llvm_sanitizer", out), False, gcc)
    out = _run(["./worker_tsan", "race"], src)
    lines = out.rstrip("\n").split("\n")
    close = lines.index("==================", 1)
    yield Capture("memcheck", "tsan race", [("llvm_sanitizer", lines[:close + 1]),
                                            *[("single", [x]) for x in lines[close + 1:]]], False, gcc)


# --- OpenMPI's mpirun: help boxes (show_help) and opal's signal handler ---------------------------

MPI_RULE = "-" * 74  # opal_show_help's rule around every help message
# (scenario, mpirun options): --tag-output puts "[job,rank]<stderr>:" before each write of a rank's output
MPI_RUNS = (("abort", ()), ("segv", ()), ("exit", ()), ("abort", ("--tag-output",)), ("segv", ("--tag-output",)),
            ("abort", ("--tag-output", "--timestamp-output")))


def _mpi_pieces(out: str) -> list[Piece]:
    """mpirun's output cut by what writes it: opal_show_help's messages, each from its rule to the next
    (help-*.txt text, blank lines inside), opal's signal handler (opal/util/stacktrace.c: "*** Process
    received signal ***" to "*** End of error message ***", a rank's one report), other lines single."""
    lines = out.rstrip("\n").split("\n")
    pieces: list[Piece] = []
    i = 0
    while i < len(lines):
        line = lines[i]
        if line == MPI_RULE:
            j = lines.index(MPI_RULE, i + 1)
            pieces.append(("mpi_help", lines[i:j + 1]))
            i = j + 1
        elif line.endswith("*** Process received signal ***"):
            j = next(k for k in range(i, len(lines)) if lines[k].endswith("*** End of error message ***"))
            pieces.append(("ompi_backtrace", lines[i:j + 1]))
            i = j + 1
        else:
            pieces.append(("single" if line.strip() else "blank", [line]))
            i += 1
    return pieces


def mpi(work: Path) -> Iterator[Capture]:
    """``programs/mpi/allreduce.c`` under Open MPI's mpirun (Debian: apt-get install openmpi-bin
    libopenmpi-dev), two ranks, rank 1 failing: MPI_Abort's help box, a SIGSEGV (opal's signal report,
    then mpirun's "Primary job terminated normally" and "exited on signal 11" boxes), a non-zero exit
    ("exited with non-zero status" box), also under --tag-output and --timestamp-output."""
    src = work / "mpi"
    src.mkdir(parents=True, exist_ok=True)
    shutil.copy(PROGRAMS / "mpi" / "allreduce.c", src / "allreduce.c")
    subprocess.run(["mpicc", "-g", "-O0", "-o", "allreduce", "allreduce.c"], cwd=src, check=True)
    printer = _version(["mpirun", "--version"])
    for name, opts in MPI_RUNS:
        out = _run(["mpirun", "--oversubscribe", "--allow-run-as-root", *opts, "-np", "2", "./allreduce", name],
                   src, merged=True, timeout=120)
        yield Capture("mpi", f"{name} ({' '.join(opts) or 'mpirun'})", _mpi_pieces(out), False, printer)


# --- JAX on CPU: the uncaught exception through jit, filtered and not ----------------------------------

JAX_SCENARIOS = ("shape", "concrete", "nans")
# pip install --target ~/.cache/sluice-jax jax jaxlib (CPU wheels; never the project's environment)
JAX_TARGET = Path(os.environ.get("SLUICE_JAX_TARGET", Path.home() / ".cache" / "sluice-jax"))


def jax(work: Path) -> Iterator[Capture]:
    """``programs/jax/step.py`` under CPython 3.12 with JAX from a ``pip install --target`` directory
    (``JAX_TARGET``; nothing of it enters the project's environment): each run's traceback (JAX's
    filtering note after the message, a rule of dashes and "For simplicity, JAX has removed ..."), also with
    JAX_TRACEBACK_FILTERING=off and =remove_frames (the unfiltered trace, JAX's note under its message, then
    the chain to the filtered one); jax_debug_nans' "Invalid nan value ..." warnings before it are lines of
    their own."""
    if not (JAX_TARGET / "jax").is_dir():
        raise RuntimeError(f"JAX captures need {JAX_TARGET}: pip install --target {JAX_TARGET} jax jaxlib")
    src = work / "jax"
    src.mkdir(parents=True, exist_ok=True)
    shutil.copy(PROGRAMS / "jax" / "step.py", src / "step.py")
    exe = next(PYENV.glob("3.12.*/bin/python3.12"))
    from importlib.metadata import distributions

    dists = {d.metadata["Name"]: d.version for d in distributions(path=[str(JAX_TARGET)])}
    printer = f"jax {dists.get('jax')}, jaxlib {dists.get('jaxlib')}, {_version([str(exe), '-VV'])}"
    for filtering in ("", "off", "remove_frames"):
        for name in JAX_SCENARIOS:
            env = {"PYTHONPATH": str(JAX_TARGET), "JAX_PLATFORMS": "cpu",
                   **({"JAX_TRACEBACK_FILTERING": filtering} if filtering else {})}
            lines = _run([str(exe), "step.py", name], src, env, timeout=120).rstrip("\n").split("\n")
            tb = lines.index("Traceback (most recent call last):")
            pieces: list[Piece] = [("single", [x]) for x in lines[:tb]]
            pieces += _event("python_traceback", "\n".join(lines[tb:]) + "\n")
            yield Capture("jax", f"{name} (JAX_TRACEBACK_FILTERING={filtering or 'default'})", pieces, True,
                          printer)


GLOG_HEADER = "/usr/include/glog/logging.h"  # Debian: apt-get install libgoogle-glog-dev g++


def glog(work: Path) -> Iterator[Capture]:
    """glog (Debian's libgoogle-glog-dev): a CHECK failure and LOG(FATAL) (the FATAL record, then
    "*** Check failure stack trace: ***" and its frames), a SIGSEGV under InstallFailureSignalHandler,
    and a log file's header (``Log file created at:`` to ``Log line format:``)."""
    if not Path(GLOG_HEADER).exists():
        raise RuntimeError(f"glog captures need {GLOG_HEADER}: apt-get install libgoogle-glog-dev g++")
    src = work / "glog"
    src.mkdir(parents=True, exist_ok=True)
    shutil.copy(PROGRAMS / "glog" / "worker.cc", src / "worker.cc")
    subprocess.run(["g++", "-g", "-o", "worker", "worker.cc", "-lglog"], cwd=src, check=True)
    version = "glog " + _version(["dpkg-query", "-W", "-f", "${Version}", "libgoogle-glog-dev"])
    for name in ("check", "fatal", "segv"):
        first, rest = _run(["./worker", name], src).split("\n", 1)  # the INFO record "worker started"
        yield Capture("glog", name, [("single", [first]), *_event("cpp_frames", rest)], False, version)
    logs = src / "logs"
    logs.mkdir(exist_ok=True)
    _run(["./worker", "file", str(logs)], src)
    lines = (logs / "worker.ERROR").read_text().rstrip("\n").split("\n")
    if not lines[3].startswith("Log line format: "):
        raise RuntimeError(f"glog's log file header: expected 4 lines, got {lines}")
    yield Capture("glog", "file header", [("glog_header", lines[:4]), *[("single", [x]) for x in lines[4:]]],
                  False, version)


# --- clang's sanitizers (compiler-rt, llvm-symbolizer) ----------------------------------------------

CLANG = "clang++-14"  # Debian: apt-get install clang-14 llvm (llvm-symbolizer symbolizes the frames)
# (scenario, -fsanitize=, environment): one report per run
ClangRun = tuple[str, str, dict[str, str]]
CLANG_RUNS: tuple[ClangRun, ...] = (("heap_overflow", "address", {}), ("thread_overflow", "address", {}),
              ("use_after_free", "address", {}), ("double_free", "address", {}),
              # (without llvm-symbolizer on the PATH, or symbolize=0: "#N 0x..  (module+0x..) (BuildId: ..)")
              ("use_after_free", "address", {"ASAN_OPTIONS": "symbolize=0"}),
              ("race", "thread", {"TSAN_OPTIONS": "symbolize=0"}),
              ("stack_overflow", "address", {}), ("segv", "address", {}), ("leak", "leak", {}),
              ("uninit", "memory", {}), ("overflow", "undefined", {"UBSAN_OPTIONS": "print_stacktrace=1"}),
              ("shift", "undefined", {"UBSAN_OPTIONS": "print_stacktrace=1"}),
              ("overflow", "undefined", {}), ("race", "thread", {}))
# lines the runtimes write after a report, each a line of its own: Die() "==PID==ABORTING", MSan's
# "Exiting", TSan's "ThreadSanitizer: reported N warnings" at exit ("AddressSanitizer:DEADLYSIGNAL", which
# HandleDeadlySignal writes before the report of a signal, is taken as the report's head)
SANITIZER_OWN_LINE = re.compile(r"^(?:==\d+==ABORTING|Exiting|ThreadSanitizer: reported \d+ warnings)$")


def _sanitizer_pieces(out: str) -> list[Piece]:
    """A sanitizer's stderr: the report (from its '=' rule, ``WARNING:`` line or UBSan's ``runtime
    error:`` line to its SUMMARY, shadow bytes' legend, or TSan's closing rule) one event; the lines the
    runtime writes around it (``SANITIZER_OWN_LINE``) and a lone UBSan line each a line of its own."""
    lines = out.rstrip("\n").split("\n")
    own = [i for i, line in enumerate(lines) if SANITIZER_OWN_LINE.match(line)]
    body = [i for i in range(len(lines)) if i not in own and lines[i].strip()]
    if len(body) == 1:  # UBSan without print_stacktrace: its runtime error's line alone
        return [("single", [x]) for x in lines if x.strip()]
    a, b = body[0], body[-1] + 1
    if any(a < i < b for i in own):
        raise RuntimeError(f"a sanitizer's own line inside its report:\n{out}")
    return [*[("single", [lines[i]]) for i in own if i < a], ("llvm_sanitizer", lines[a:b]),
            *[("single", [lines[i]]) for i in own if i > b]]


def sanitizers(work: Path) -> Iterator[Capture]:
    """``programs/sanitizers/worker.cc`` built with clang's -fsanitize=address, leak, memory, undefined
    and thread (compiler-rt's reports: frames ``#N 0x.. in func file:line:col``, ``(module+0x..)
    (BuildId: ..)``), one bug per run."""
    if not shutil.which(CLANG):
        raise RuntimeError(f"the sanitizer captures need {CLANG}: apt-get install clang-14 llvm")
    src = work / "sanitizers"
    src.mkdir(parents=True, exist_ok=True)
    shutil.copy(PROGRAMS / "sanitizers" / "worker.cc", src / "worker.cc")
    printer = _version([CLANG, "--version"])
    for flag in sorted({f for _n, f, _e in CLANG_RUNS}):
        subprocess.run([CLANG, "-g", "-O0", "-fno-omit-frame-pointer", "-pthread", f"-fsanitize={flag}", "-o",
                        f"worker_{flag}", "worker.cc"], cwd=src, check=True)
    for name, flag, env in CLANG_RUNS:
        out = _run([f"./worker_{flag}", name], src, env)
        opts = " ".join(f"{k}={v}" for k, v in env.items())
        yield Capture("sanitizers", f"{name} (-fsanitize={flag}{', ' + opts if opts else ''})",
                      _sanitizer_pieces(out), False, printer)


# --- abseil's failure signal handler (TensorFlow, JAX and XLA install it) -----------------------------

ABSL_HEADER = "/usr/include/absl/debugging/failure_signal_handler.h"  # Debian: apt-get install libabsl-dev g++
ABSL_LIBS = ("failure_signal_handler", "symbolize", "stacktrace", "raw_logging_internal", "examine_stack",
             "debugging_internal", "demangle_internal")


def absl(work: Path) -> Iterator[Capture]:
    """abseil (Debian's libabsl-dev): ``absl::InstallFailureSignalHandler``'s report of a SIGSEGV,
    SIGABRT, SIGFPE and a SIGSEGV in a thread (``*** SIGSEGV received at time=.. on cpu N ***``, ``PC: @``,
    the ``@`` frames: one event), and ABSL_RAW_CHECK's record (``[file : line] RAW: Check .. failed``: a
    line of its own) before the report of the abort it calls. The program's first line is a record."""
    if not Path(ABSL_HEADER).exists():
        raise RuntimeError(f"abseil captures need {ABSL_HEADER}: apt-get install libabsl-dev g++")
    src = work / "absl"
    src.mkdir(parents=True, exist_ok=True)
    shutil.copy(PROGRAMS / "absl" / "worker.cc", src / "worker.cc")
    subprocess.run(["g++", "-g", "-O0", "-fno-omit-frame-pointer", "-pthread", "-o", "worker", "worker.cc",
                    *[f"-labsl_{lib}" for lib in ABSL_LIBS]], cwd=src, check=True)
    version = "abseil " + _version(["dpkg-query", "-W", "-f", "${Version}", "libabsl-dev"])
    for name in ("segv", "abort", "fpe", "thread", "raw_check"):
        lines = _run(["./worker", name], src).rstrip("\n").split("\n")
        head = next(i for i, line in enumerate(lines) if line.startswith("*** SIG"))
        yield Capture("absl", name, [*[("single", [x]) for x in lines[:head]],
                                     *_event("cpp_frames", "\n".join(lines[head:]) + "\n")], False, version)


# --- lldb: the stop report and backtraces of the crashing program -----------------------------------

LLDB = "lldb-14"  # Debian: apt-get install lldb-14
LLDB_CMD_RE = re.compile(r"^\(lldb\) ")
LLDB_PROCESS_RE = re.compile(r"^Process \d+ ")  # "Process N stopped/launched/exited ...": the process's events
LLDB_THREAD_RE = re.compile(r"^[ *] thread #\d+")  # Thread::GetStatus: "* " marks the selected thread
LLDB_BT_CMDS = ("bt", "thread backtrace all", "bt all")


def _lldb_pieces(out: str) -> list[Piece]:
    """lldb's stdout: each echoed command a line; the process's stop report (``Process N stopped``, the
    thread's stop reason, frame #0 and the source lines around it, to the next process event or command)
    one ``lldb_stop``; the output of a backtrace command (threads' headers and ``frame #N`` lines) one
    ``lldb_bt``; other lines (``Process N launched``, ``Process N exited``) lines of their own."""
    lines = out.rstrip("\n").split("\n")
    pieces: list[Piece] = []
    i = 0
    while i < len(lines):
        line = lines[i]
        j = i + 1
        while j < len(lines) and not (LLDB_CMD_RE.match(lines[j]) or LLDB_PROCESS_RE.match(lines[j])):
            j += 1
        if line.startswith("Process ") and line.endswith(" stopped"):
            pieces.append(("lldb_stop", lines[i:j]))
            i = j
        elif LLDB_CMD_RE.match(line) and line[len("(lldb) "):] in LLDB_BT_CMDS and j > i + 1:
            # (a warning the command writes before the threads, "This version of LLDB has no plugin for the
            # language ...", is a line of its own)
            first = next(k for k in range(i + 1, j) if LLDB_THREAD_RE.match(lines[k]))
            pieces += [("single", [x]) for x in lines[i:first]]
            pieces.append(("lldb_bt", lines[first:j]))
            i = j
        else:
            pieces.append(("single" if line.strip() else "blank", [line]))
            i += 1
    return pieces


def lldb(work: Path) -> Iterator[Capture]:
    """``programs/c/crash.c`` under lldb (``-o run -o <bt> -o 'process kill' -o quit``): on a SIGSEGV, a
    SIGABRT and a SIGSEGV in a thread, the stop report, then ``bt`` or ``thread backtrace all``. Its
    stdout only (Debian's lldb-14 writes a Python ImportError of its packaging to stderr)."""
    if not shutil.which(LLDB):
        raise RuntimeError(f"lldb captures need {LLDB}: apt-get install lldb-14")
    src = work / "lldb"
    src.mkdir(parents=True, exist_ok=True)
    shutil.copy(PROGRAMS / "c" / "crash.c", src / "crash.c")
    subprocess.run(["gcc", "-g", "-O0", "-pthread", "-o", "crash", "crash.c"], cwd=src, check=True)
    printer = _version([LLDB, "--version"])
    for name, cmd in (("segv", "bt"), ("abort_plain", "bt"), ("thread", "thread backtrace all"), ("segv", "bt all")):
        p = subprocess.run([LLDB, "-o", "run", "-o", cmd, "-o", "process kill", "-o", "quit", "--", "./crash", name],
                           cwd=src, stdin=subprocess.DEVNULL, stdout=subprocess.PIPE, stderr=subprocess.DEVNULL,
                           timeout=180, check=False)
        pieces = _lldb_pieces(p.stdout.decode("utf-8", "replace"))
        if not any(k == "lldb_bt" for k, _ in pieces) or not any(k == "lldb_stop" for k, _ in pieces):
            raise RuntimeError(f"lldb {name}: no stop report or backtrace in its output:\n{p.stdout.decode()}")
        yield Capture("lldb", f"{name} ({cmd})", pieces, False, printer)


# --- boost::stacktrace in a fatal signal handler, after glibc's abort messages ------------------------

BOOST_HEADER = "/usr/include/boost/stacktrace.hpp"  # Debian: apt-get install libboost-stacktrace-dev g++
# the backend: gcc's libbacktrace (function, "at file:line"), or boost's default (addresses and modules)
BOOST_BACKENDS = {"backtrace": ["-DBOOST_STACKTRACE_USE_BACKTRACE", "-lbacktrace", "-ldl"], "basic": ["-ldl"]}
BOOST_STACK_HEAD = re.compile(r"^Received signal \d+ ")  # the program's handler's line before the stack


def boost(work: Path) -> Iterator[Capture]:
    """``programs/boost/worker.cc``: a SIGSEGV/SIGABRT handler writes a line and ``boost::stacktrace``'s
    frames (`` 0# func at file:line``, ``N# 0x.. in module``: one event) and raises the signal again, run
    by ``bash -c`` as a launcher's script does: glibc's message before it (``free(): invalid pointer``,
    ``free(): double free detected in tcache 2``, assert()'s ``Assertion `..' failed.``) and bash's report
    of the death after it (``bash: line 1: PID Aborted ...``) are lines of their own."""
    if not Path(BOOST_HEADER).exists():
        raise RuntimeError(f"boost captures need {BOOST_HEADER}: apt-get install libboost-stacktrace-dev g++")
    src = work / "boost"
    src.mkdir(parents=True, exist_ok=True)
    shutil.copy(PROGRAMS / "boost" / "worker.cc", src / "worker.cc")
    version = "boost " + _version(["dpkg-query", "-W", "-f", "${Version}", "libboost-stacktrace-dev"])
    for backend, flags in BOOST_BACKENDS.items():
        exe = f"worker_{backend}"
        subprocess.run(["g++", "-g", "-O0", "-o", exe, "worker.cc", *flags], cwd=src, check=True)
        for name in ("segv", "free", "double_free", "assert"):
            # ("; true": bash forks the program instead of exec'ing it, and reports its death)
            out = _run(["bash", "-c", f"./{exe} {name}; true"], src, merged=True)
            lines = out.rstrip("\n").split("\n")
            head = next(i for i, line in enumerate(lines) if BOOST_STACK_HEAD.match(line))
            end = next(i for i in range(head + 1, len(lines)) if lines[i].startswith("bash: "))
            yield Capture("boost", f"{name} ({backend})", [*[("single", [x]) for x in lines[:head]],
                                                          ("cpp_frames", lines[head:end]),
                                                          *[("single", [x]) for x in lines[end:]]], False, version)


LANGS: dict[str, Callable[[Path], Iterator[Capture]]] = {
    "python": python, "python_color": python_color, "pystdlib": pystdlib, "pylibs": pylibs, "java": java,
    "java_loggers": java_loggers,
    "jvm_fatal": jvm_fatal, "node": node, "go": go, "rust": rust, "c": native, "memcheck": memcheck, "mpi": mpi,
    "jax": jax, "glog": glog, "golibs": golibs, "rustlibs": rustlibs, "sanitizers": sanitizers, "absl": absl,
    "go122": go122, "lldb": lldb, "boost": boost}
