"""Captures of the Python frameworks training clusters run (Ray, PySpark, TensorFlow), each installed with
``pip install --target`` into a directory of its own (never the project's environment) and run under
CPython 3.12 from pyenv. See ``capture.py`` for what a capture is.
"""

from __future__ import annotations

import os
import re
import shutil
import subprocess
from collections.abc import Iterator
from pathlib import Path

from devtools.printers.capture import PROGRAMS, PYENV, Capture, Piece, _version

CACHE = Path.home() / ".cache"


def _target(lang: str, module: str) -> Path:
    """The ``pip install --target`` directory of ``lang``'s framework (``SLUICE_<LANG>_TARGET``)."""
    target = Path(os.environ.get(f"SLUICE_{lang.upper()}_TARGET", CACHE / f"sluice-{lang}"))
    if not (target / module).is_dir():
        raise RuntimeError(f"{lang} captures need {target}: pip install --target {target} {lang}")
    return target


def _printer(target: Path, names: tuple[str, ...], exe: Path) -> str:
    from importlib.metadata import distributions

    dists = {d.metadata["Name"].lower(): d.version for d in distributions(path=[str(target)])}
    return ", ".join(f"{n} {dists.get(n)}" for n in names) + f", {_version([str(exe), '-VV'])}"


def _python312() -> Path:
    return next(PYENV.glob("3.12.*/bin/python3.12"))


def _run_both(argv: list[str], cwd: Path, env: dict[str, str], timeout: float) -> tuple[str, str]:
    """(stdout, stderr) of one run, each as written."""
    full = {k: v for k, v in os.environ.items() if not k.startswith(("PYTHON", "RAY_"))}
    full.update(env)
    p = subprocess.run(argv, cwd=cwd, env=full, capture_output=True, timeout=timeout, check=False)
    return p.stdout.decode("utf-8", "replace"), p.stderr.decode("utf-8", "replace")


def _singles(lines: list[str]) -> list[Piece]:
    return [("single" if line.strip() else "blank", [line]) for line in lines]


# --- Ray: the driver's view of failing tasks and actors, and of the workers' own lines --------------------

# print_worker_logs (ray/_private/worker.py) writes "(<task or actor name> pid=N[, ip=..])" in colour
# before each line a worker wrote; the raylet's and the autoscaler's lines come as "(raylet) ..."
RAY_FORWARDED = re.compile(r"^(?:\x1b\[\d+m)?\([\w.]+ pid=\d+")

# scenario: how the driver's stderr is cut. "traceback": CPython's traceback of the uncaught error,
# from "Traceback (most recent call last):" to the end; "record": the logging record that starts with
# the line holding the marker, with its traceback, to the end; "forwarded": the worker's forwarded lines
# are one event (its traceback) and the last of them a record of its own; "forwarded+traceback": the
# worker's forwarded lines one event, then the driver's traceback one event; "singles": every line a
# record of its own (prints, logging records and the deduplicator's "[repeated Nx across cluster]").
RAY_SCENARIOS = {
    "task_error": "traceback", "task_error_chained": "traceback", "actor_died": "traceback",
    "actor_init": "forwarded+traceback", "get_timeout": "traceback", "nested": "traceback",
    "worker_crash": "traceback", "actor_error": "traceback", "dependency": "traceback", "unhandled": "record",
    "worker_traceback_print_exc": "forwarded", "worker_traceback_exception": "forwarded",
    "worker_logs": "singles",
}
RAY_UNHANDLED = "Unhandled error (suppress with 'RAY_IGNORE_UNHANDLED_ERRORS=1'): "


def _ray_pieces(cut: str, stderr: str, stdout: str) -> list[Piece]:
    lines = stderr.rstrip("\n").split("\n")
    forwarded = [i for i, line in enumerate(lines) if RAY_FORWARDED.match(line)]
    if forwarded and forwarded != list(range(forwarded[0], forwarded[-1] + 1)):
        raise RuntimeError(f"ray: the workers' lines came between the driver's: {lines}")
    pieces: list[Piece] = []
    if cut == "singles":
        pieces = _singles(lines)
    elif cut == "record":
        start = next(i for i, line in enumerate(lines) if RAY_UNHANDLED in line)
        pieces = [*_singles(lines[:start]), ("python_traceback", lines[start:])]
    else:
        tb = lines.index("Traceback (most recent call last):") if "traceback" in cut else len(lines)
        if cut.startswith("forwarded"):
            if not forwarded or forwarded[-1] >= tb:
                raise RuntimeError(f"ray: expected the worker's lines before the driver's traceback: {lines}")
            a, b = forwarded[0], forwarded[-1] + 1
            pieces = _singles(lines[:a])
            if cut == "forwarded":  # the task's traceback, then its record "skipping shard 17"
                pieces += [("python_traceback", lines[a:b - 1]), *_singles(lines[b - 1:b])]
            else:
                pieces.append(("python_traceback", lines[a:b]))
            pieces += _singles(lines[b:tb])
        else:
            pieces = _singles(lines[:tb])
        if tb < len(lines):
            pieces.append(("python_traceback", lines[tb:]))
    # the raylet's lines go to the driver's stdout (written by another thread, after the error here)
    if stdout.strip():
        pieces += _singles(stdout.rstrip("\n").split("\n"))
    return pieces


def ray(work: Path) -> Iterator[Capture]:
    """``programs/ray/driver.py`` under CPython 3.12 with Ray from a ``pip install --target`` directory
    (``~/.cache/sluice-ray``): one local single-CPU Ray instance per scenario, the driver's stderr (its
    own records and traceback, and the workers' lines it forwards under ``(name pid=..)``), then its
    stdout (the raylet's lines)."""
    target = _target("ray", "ray")
    src = work / "ray"
    src.mkdir(parents=True, exist_ok=True)
    shutil.copy(PROGRAMS / "ray" / "driver.py", src / "driver.py")
    exe = _python312()
    printer = _printer(target, ("ray",), exe)
    for name, cut in RAY_SCENARIOS.items():
        for attempt in range(3):  # the log monitor's timing: the workers' lines may come late
            out, err = _run_both([str(exe), "driver.py", name], src, {"PYTHONPATH": str(target)}, timeout=180)
            try:
                pieces = _ray_pieces(cut, err, out)
                break
            except (RuntimeError, ValueError, StopIteration):
                if attempt == 2:
                    raise
        # a driver's traceback ends with the error's message (free text); the unhandled error is one
        # logging record, written at once
        yield Capture("ray", name, pieces, cut != "singles", printer, cut == "record")


# --- PySpark: log4j2's console records of the JVM, then the driver's traceback ---------------------------

PYSPARK_SCENARIOS = ("udf", "rdd", "analysis", "analysis_jvm")
# Spark's log4j2-defaults.properties: "%d{yy/MM/dd HH:mm:ss} %p %c{1}: %m%n%ex" on System.err (a record's
# message lines and its throwable under its head, until the next head)
SPARK_HEAD = re.compile(r"^\d\d/\d\d/\d\d \d\d:\d\d:\d\d [A-Z]+ [\w$.]+: ")
# lines written with System.err.println beside the records: org.apache.spark.internal.Logging's
# "Using Spark's default log4j profile" and "Setting default log level", the JVM's incubator warning
SPARK_PRINTLN = ("Using Spark's default log4j profile: ", "Setting default log level to ",
                 "To adjust logging level use sc.setLogLevel(", "WARNING: Using incubator modules: ")
# PySpark's own logger (pyspark/logger/logger.py JSONFormatter: one json.dumps per record, the exception inside
# it), which logs a query's AnalysisException as "SQLQueryContextLogger" before the driver raises it
PYSPARK_JSON = re.compile(r'^\{"ts": ')
JAVA17 = "/usr/lib/jvm/java-17-openjdk-amd64"


# the driver's own warnings (warnings.formatwarning: "file:line: Category: message", then the source line
# indented by two), PySpark's "Arrow optimization failed to enable" among them
PY_WARNING = re.compile(r"^\S+\.py:\d+: [A-Z]\w*Warning: ")


def _pyspark_pieces(stderr: str) -> list[Piece]:
    lines = stderr.rstrip("\n").split("\n")
    tb = lines.index("Traceback (most recent call last):")
    pieces: list[Piece] = []
    i = 0
    while i < tb:
        j = i + 1
        if PY_WARNING.match(lines[i]):
            pieces.append(("python_warning", lines[i:i + 2]))  # a message of one line here
            i += 2
            continue
        if SPARK_HEAD.match(lines[i]):
            while (j < tb and not SPARK_HEAD.match(lines[j]) and not lines[j].startswith(SPARK_PRINTLN)
                   and not PY_WARNING.match(lines[j]) and not PYSPARK_JSON.match(lines[j])):
                j += 1
        end = j
        while end > i + 1 and not lines[end - 1].strip():
            end -= 1  # a message that ends with a newline (a task's failure reason): the blank line after
        pieces += _singles(lines[i:end]) if end == i + 1 else [("java_stack", lines[i:end])]
        pieces += _singles(lines[end:j])
        i = j
    return [*pieces, ("python_traceback", lines[tb:])]


def pyspark(work: Path) -> Iterator[Capture]:
    """``programs/pyspark/job.py`` under CPython 3.12 with PySpark from a ``pip install --target``
    directory (``~/.cache/sluice-pyspark``) on OpenJDK 17, ``local[1]``: Spark's log4j2 console records
    (each with its throwable), the lines Spark prints beside them, then the driver's traceback."""
    target = _target("pyspark", "pyspark")
    src = work / "pyspark"
    src.mkdir(parents=True, exist_ok=True)
    shutil.copy(PROGRAMS / "pyspark" / "job.py", src / "job.py")
    exe = _python312()
    printer = _printer(target, ("pyspark", "py4j"), exe) + f", {_version([f'{JAVA17}/bin/java', '-version'])}"
    env = {"PYTHONPATH": str(target), "JAVA_HOME": JAVA17, "PYSPARK_PYTHON": str(exe),
           "PYSPARK_DRIVER_PYTHON": str(exe)}
    for name in PYSPARK_SCENARIOS:
        _, err = _run_both([str(exe), "job.py", name], src, env, timeout=300)
        # the traceback ends with the exception's message (free text); log4j2 writes each record at once
        yield Capture("pyspark", name, _pyspark_pieces(err), True, printer)


# --- TensorFlow: its C++ log lines, Keras' progress lines, the uncaught error ------------------------------

TF_SCENARIOS = ("fit_gather", "check_numerics", "eager", "build")
# absl's log format (absl/log/internal/log_format.cc: "Lmmdd hh:mm:ss.uuuuuu threadid file:line] ", with Unix
# seconds in its time until absl's time zone is loaded: "I0000 00:00:1796174697.467135 ...") and TSL's
# older "yyyy-mm-dd hh:mm:ss.uuuuuu: L file:line] ": a record's message may hold newlines (cpu_feature_guard's
# "To enable the following instructions: ...", a status's "\t [[{{node ...}}]]"), its lines run to the next head
TF_HEAD = re.compile(r"^(?:[IWEF]\d{4} (?:\d\d:\d\d:\d\d|00:00:\d{9,11})\.\d{6} +\d+ "
                     r"|\d{4}-\d\d-\d\d \d\d:\d\d:\d\d\.\d{6}: [IWEF] )[^\s\]:]+:\d+\] ")
# lines of other writers among them: absl's raw log before InitializeLog, Keras' progress lines
# (keras/src/utils/progbar.py, verbose=2: "4/4 - 0s - 121ms/step - loss: 0.3668"; verbose=1: every step's bar
# redrawn after a "\r" in colours, "\r\x1b[1m1/4\x1b[0m \x1b[32m━━━━━...", on one line to the epoch's end; "Epoch 1/2")
TF_OTHER = re.compile(r"^(?:WARNING: All log messages before absl::InitializeLog\(\)|\d+/\d+ - "
                      r"|\r(?:\x1b\[[\d;]*m)?\d+/\d+|Epoch \d+/\d+$)")


def _tf_pieces(out: str) -> list[Piece]:
    lines = out.rstrip("\n").split("\n")
    tb = lines.index("Traceback (most recent call last):")
    pieces: list[Piece] = []
    i = 0
    while i < tb:
        if PY_WARNING.match(lines[i]):
            pieces.append(("python_warning", lines[i:i + 2]))
            i += 2
            continue
        j = i + 1
        if TF_HEAD.match(lines[i]):
            while j < tb and not (TF_HEAD.match(lines[j]) or TF_OTHER.match(lines[j]) or PY_WARNING.match(lines[j])):
                j += 1
        pieces += _singles(lines[i:j]) if j == i + 1 else [("multiline", lines[i:j])]
        i = j
    return [*pieces, ("python_traceback", lines[tb:])]


def tensorflow(work: Path) -> Iterator[Capture]:
    """``programs/tensorflow/fit.py`` under CPython 3.12 with TensorFlow from a ``pip install --target``
    directory (``~/.cache/sluice-tensorflow``: tensorflow-cpu and Keras 3): what one run wrote to stdout
    and stderr, unbuffered, in order: TensorFlow's C++ log records (a message over lines one event),
    Keras' progress lines, then the uncaught error's traceback."""
    target = _target("tensorflow", "tensorflow")
    src = work / "tensorflow"
    src.mkdir(parents=True, exist_ok=True)
    shutil.copy(PROGRAMS / "tensorflow" / "fit.py", src / "fit.py")
    exe = _python312()
    printer = _printer(target, ("tensorflow-cpu", "keras"), exe)
    env = {"PYTHONPATH": str(target), "PYTHONUNBUFFERED": "1", "CUDA_VISIBLE_DEVICES": ""}
    for name in TF_SCENARIOS:
        full = {k: v for k, v in os.environ.items() if not k.startswith(("PYTHON", "TF_"))} | env
        p = subprocess.run([str(exe), "fit.py", name], cwd=src, env=full, stdout=subprocess.PIPE,
                           stderr=subprocess.STDOUT, timeout=300, check=False)
        # the traceback ends with the error's message (free text)
        yield Capture("tensorflow", name, _tf_pieces(p.stdout.decode("utf-8", "replace")), True, printer)


LANGS = {"ray": ray, "pyspark": pyspark, "tensorflow": tensorflow}
