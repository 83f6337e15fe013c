"""Captures of the Python frameworks training clusters run (Ray, PySpark, TensorFlow), each installed with
``pip install --target`` into a directory of its own (never the project's environment) and run under
CPython 3.12 from pyenv. See ``capture.py`` for what a capture is.
"""

from __future__ import annotations

import os
import re
import shutil
import subprocess
from collections.abc import Callable, Iterator
from pathlib import Path

from devtools.printers.capture import PROGRAMS, PYENV, Capture, Piece, _event, _version

CACHE = Path.home() / ".cache"


# the Hugging Face libraries need torch: one directory holds both
TARGET_DIRS = {"hf": "sluice-torch"}


def _target(lang: str, module: str) -> Path:
    """The ``pip install --target`` directory of ``lang``'s framework (``SLUICE_<LANG>_TARGET``)."""
    target = Path(os.environ.get(f"SLUICE_{lang.upper()}_TARGET", CACHE / TARGET_DIRS.get(lang, f"sluice-{lang}")))
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


# --- PyTorch: its errors through Python, autograd's anomaly mode, DataLoader workers, torchrun ------------

# scenario: TORCH_SHOW_CPP_STACKTRACES (c10's error message then carries "Exception raised from ... (most recent
# call first):" and the C++ frames)
TORCH_SCENARIOS = {"shape": "1", "shape_plain": "0", "index": "1", "view": "0", "anomaly": "0", "dataloader": "0",
                   "compile": "0", "load": "0", "warn": "0", "store": "0"}
# torchrun runs: (scenario, torchrun's own arguments)
TORCHRUN_SCENARIOS = (("dist_raise", ()), ("dist_timeout", ()), ("dist_record", ()), ("dist_raise", ("--tee", "3")))
# torch._logging's TorchLogsFormatter (torch/_logging/_internal.py): "Lmmdd hh:mm:ss.uuuuuu pid path:line] " on
# every line of a record's message (a record over lines repeats the same head)
TORCH_LOG_HEAD = re.compile(r"^[VIWEC]\d{4} \d\d:\d\d:\d\d\.\d{6} \d+ \S+:\d+\] ")
# init_process_group's excepthook (distributed_c10d.py _distributed_excepthook) writes "[rankN]: " before every
# non-empty line of a rank's traceback; torchrun --tee writes "[<role><local_rank>]:" before every line it tails
# c10's own log records (c10/util/Logging.cpp MessageLogger: "[Lmmdd hh:mm:ss.nnnnnnnnn file:line] "): a warning
# that carries an error's what() holds its "Exception raised from ..." line and frames, and ends with the
# newline what() ends with (a blank line after the record)
C10_HEAD = re.compile(r"^\[[VIWEF]\d{4} \d\d:\d\d:\d\d\.\d+ \S+:\d+\] ")
RANK_LINE = re.compile(r"^(?:\[default\d+\]:)?\[rank\d+\]: ")
# faulthandler's dump (a rank that aborts under @record, which enables it): "Fatal Python error: ..." to the
# "Extension modules: ..." line
FATAL_HEAD = "Fatal Python error: "
TRACEBACK = "Traceback (most recent call last):"


def _run_end(lines: list[str], i: int, keep: Callable[[str], object]) -> int:
    """The index after the lines following ``lines[i]`` that ``keep`` takes (the end of its run)."""
    j = i + 1
    while j < len(lines) and keep(lines[j]):
        j += 1
    return j


def _warning_end(lines: list[str], i: int) -> int:
    return _run_end(lines, i, lambda line: line.startswith(" "))


def _torch_log_end(lines: list[str], i: int) -> int:
    head = TORCH_LOG_HEAD.match(lines[i]).group(0)  # type: ignore[union-attr]
    return _run_end(lines, i, lambda line: line.startswith(head))


def _c10_end(lines: list[str], i: int) -> int:
    return _run_end(lines, i, lambda line: line.strip() and not (C10_HEAD.match(line) or line == TRACEBACK))


def _rank_end(lines: list[str], i: int) -> int:
    # one rank's traceback: its lines behind the same "[rankN]: " (another rank's traceback may follow at once)
    rank = RANK_LINE.match(lines[i]).group(0)  # type: ignore[union-attr]
    return _run_end(lines, i, lambda line: line.startswith(rank))


def _fatal_end(lines: list[str], i: int) -> int:
    j = i + 1
    while j < len(lines) and not lines[j - 1].startswith("Extension modules: "):
        j += 1
    return j


# where each printer's output begins, where it ends, and the kind of event it is when over one line
TorchPrinter = tuple[Callable[[str], object], Callable[[list[str], int], int], str]
TORCH_PRINTERS: tuple[TorchPrinter, ...] = (
    (PY_WARNING.match, _warning_end, "python_warning"),
    (TORCH_LOG_HEAD.match, _torch_log_end, "multiline"),
    (C10_HEAD.match, _c10_end, "cpp_frames"),
    (RANK_LINE.match, _rank_end, "python_traceback"),
    (lambda line: line.startswith(FATAL_HEAD), _fatal_end, "python_fatal"),
)


def _torch_pieces(out: str, printers: tuple[TorchPrinter, ...] = TORCH_PRINTERS) -> list[Piece]:
    """One run's output (stdout and stderr in one pipe) cut where each printer's output begins: warnings
    (the head, the message's further lines and the source line, each indented), torch._logging records (a
    message over lines repeats the head), c10's records, a rank's traceback (its "[rankN]: " lines),
    faulthandler's dump, and the uncaught traceback, to the end."""
    lines = out.rstrip("\n").split("\n")
    pieces: list[Piece] = []
    i = 0
    while i < len(lines):
        if lines[i] == TRACEBACK:
            end = len(lines)
            while not lines[end - 1].strip():
                end -= 1
            return [*pieces, ("python_traceback", lines[i:end]), *_singles(lines[end:])]
        j = next((end(lines, i) for starts, end, _ in printers if starts(lines[i])), i + 1)
        kind = next((k for starts, _, k in printers if starts(lines[i])), "single")
        pieces += [(kind, lines[i:j])] if j > i + 1 else _singles(lines[i:j])
        i = j
    return pieces


def pytorch(work: Path) -> Iterator[Capture]:
    """``programs/torch/step.py`` under CPython 3.12 with PyTorch (CPU) from a ``pip install --target``
    directory (``~/.cache/sluice-torch``): what one run wrote to stdout and stderr, unbuffered, in order;
    the distributed scenarios under ``torchrun --standalone --nproc-per-node 2`` (gloo): the ranks' lines,
    torchrun's records and its own traceback with the ChildFailedError box."""
    target = _target("torch", "torch")
    src = work / "torch"
    src.mkdir(parents=True, exist_ok=True)
    shutil.copy(PROGRAMS / "torch" / "step.py", src / "step.py")
    exe = _python312()
    printer = _printer(target, ("torch",), exe)
    base = {"PYTHONPATH": str(target), "PYTHONUNBUFFERED": "1", "CUDA_VISIBLE_DEVICES": ""}
    runs = [(name, [str(exe), "step.py", name], {"TORCH_SHOW_CPP_STACKTRACES": cpp})
            for name, cpp in TORCH_SCENARIOS.items()]
    runs += [(f"{name} (torchrun {' '.join(args)})".replace(" )", ")"),
              [str(exe), str(target / "bin" / "torchrun"), "--standalone", "--nproc-per-node", "2", *args,
               "step.py", name], {}) for name, args in TORCHRUN_SCENARIOS]
    for name, argv, env in runs:
        full = {k: v for k, v in os.environ.items()
                if not k.startswith(("PYTHON", "TORCH", "OMP_", "LOGLEVEL"))} | base | env
        p = subprocess.run(argv, cwd=src, env=full, stdout=subprocess.PIPE, stderr=subprocess.STDOUT,
                           timeout=180, check=False)
        # a traceback ends with the error's message (free text)
        yield Capture("torch", name, _torch_pieces(p.stdout.decode("utf-8", "replace")), True, printer)


LANGS["torch"] = pytorch


# --- Hugging Face: Trainer's bar and log dicts, transformers' records, an error inside Trainer.train -------

HF_SCENARIOS = ("train", "train_info", "label_error", "loss_error", "warn", "accelerate")
# accelerate/commands/launch.py _validate_launch_command: one logger.warning (no handler: logging's last resort
# writes the message alone), a tab-led line per default it used between these two
ACCEL_DEFAULTS = "The following values were not passed to `accelerate launch` and had defaults used instead:"
ACCEL_DEFAULTS_END = "To avoid this warning pass in values for each of the problematic parameters"
HF_PACKAGES = ("transformers", "accelerate", "torch", "tqdm")
# transformers.utils.logging.enable_explicit_format (what its example scripts set):
# "[%(levelname)s|%(filename)s:%(lineno)s] %(asctime)s >> %(message)s"; a message may hold newlines and blank
# lines (Trainer's "\n\nTraining completed. ...\n\n\n", from_pretrained's LOAD REPORT table and its notes).
# It may come after a tqdm bar's last redraw on the same line: the bar writes no newline until it closes.
HF_HEAD = re.compile(r"\[(?:DEBUG|INFO|WARNING|ERROR|CRITICAL)\|[\w.]+:\d+\] \d{4}-\d\d-\d\d \d\d:\d\d:\d\d,\d{3} >> ")


def _hf_record_end(lines: list[str], i: int) -> int:
    j = _run_end(lines, i, lambda line: not (HF_HEAD.search(line) or line.startswith("\r") or
                                             PY_WARNING.match(line) or line.endswith(TRACEBACK)))
    while not lines[j - 1].strip():
        j -= 1  # the blank lines a message ends with are not its record's
    return j


def _hf_pieces(out: str) -> list[Piece]:
    """One run's output (stdout and stderr in one pipe): tqdm's lines (a bar's redraws after "\\r", the log
    dicts it writes over them, each line a record), warnings, transformers' records (a message over lines
    runs to the next record, bar or warning), and the uncaught traceback (after the open bar's last redraw
    on its line) to its message; the bar's redraw at exit after it is a line of its own."""
    lines = out.rstrip("\n").split("\n")
    pieces: list[Piece] = []
    i = 0
    while i < len(lines):
        line = lines[i]
        j = i + 1
        if line.endswith(TRACEBACK):  # to its message: the bar's redraw at exit or the launcher's traceback follows
            j = next((k for k in range(i + 1, len(lines)) if lines[k].startswith("\r") or lines[k] == TRACEBACK),
                     len(lines))
            pieces.append(("python_traceback", lines[i:j]))
        elif line.startswith(ACCEL_DEFAULTS):
            j = next(k for k in range(i, len(lines)) if lines[k].startswith(ACCEL_DEFAULTS_END)) + 1
            pieces.append(("multiline", lines[i:j]))
        elif PY_WARNING.match(line):
            j = _warning_end(lines, i)
            pieces.append(("python_warning", lines[i:j]))
        elif HF_HEAD.search(line):
            j = _hf_record_end(lines, i)
            pieces += [("multiline", lines[i:j])] if j > i + 1 else _singles([line])
        else:
            pieces += _singles([line])
        i = j
    return pieces


def hf(work: Path) -> Iterator[Capture]:
    """``programs/hf/train.py`` under CPython 3.12 with transformers, accelerate and PyTorch (CPU) from a
    ``pip install --target`` directory (``~/.cache/sluice-torch``, with torch): a tiny Llama built from a
    config, trained by ``Trainer`` for a few steps, and a script under ``accelerate launch --cpu``; what one run
    wrote to stdout and stderr, unbuffered."""
    target = _target("hf", "transformers")
    src = work / "hf"
    src.mkdir(parents=True, exist_ok=True)
    shutil.copy(PROGRAMS / "hf" / "train.py", src / "train.py")
    exe = _python312()
    printer = _printer(target, HF_PACKAGES, exe)
    env = {"PYTHONPATH": str(target), "PYTHONUNBUFFERED": "1", "CUDA_VISIBLE_DEVICES": "", "HF_HUB_OFFLINE": "1",
           "HF_HOME": str(work / "hf" / "home")}
    for name in HF_SCENARIOS:
        full = {k: v for k, v in os.environ.items() if not k.startswith(("PYTHON", "HF_", "TRANSFORMERS_"))} | env
        launch = [str(target / "bin" / "accelerate"), "launch", "--cpu"] if name == "accelerate" else []
        p = subprocess.run([str(exe), *launch, "train.py", name], cwd=src, env=full, stdout=subprocess.PIPE,
                           stderr=subprocess.STDOUT, timeout=300, check=False)
        # a traceback ends with the error's message (free text)
        yield Capture("hf", name, _hf_pieces(p.stdout.decode("utf-8", "replace")), True, printer)


LANGS["hf"] = hf


# --- PyTorch Lightning and wandb: the Trainer's lines, its model summary, its bar, wandb's terminal log ----

LIGHTNING_SCENARIOS = ("fit", "rich", "step_error", "misconfig", "warn", "wandb", "wandb_error")
LIGHTNING_PACKAGES = ("pytorch-lightning", "torchmetrics", "wandb", "torch", "rich", "tqdm")
# the frameworks' directories, first wins: Lightning's (with Hydra, fire), torch's, wandb's
LIGHTNING_PATH = ("sluice-lightning", "sluice-torch", "sluice-wandb")
# ModelSummary (utilities/model_summary/model_summary.py _format_summary_table, logged in one log.info with
# a newline before it): the header "  | Name | Type | Params | Mode ...", a '-' rule, a row per layer, the rule
# again, then a total per line ("161       Trainable params"); RichModelSummary (callbacks/rich_model_summary.py
# summarize): two console.print calls, the box table, then a grid of "Trainable params: 161" lines
PL_SUMMARY_HEAD = re.compile(r"^ *\| Name +\| Type +\| Params")
_PL_TOTALS = (r"Trainable params|Non-trainable params|Total params|Total estimated model params size \(MB\)"
              r"|Modules in (?:train|eval) mode|Total F[Ll][Oo][Pp]s")
PL_SUMMARY_LINE = re.compile(rf"^(?:-+$| *[\d.]+ +\| |\S+(?: [KMBT])? +(?:{_PL_TOTALS}))")
PL_GRID_LINE = re.compile(rf"^(?:{_PL_TOTALS}): ")
# wandb's terminal log (sdk/lib/printer.py display -> errors/term.py _log): one call's lines each behind
# "wandb: "; the calls of more than one line: _header_sync_info's offline message (its lines after the first
# begin so), the footer's panel (a newline, "Run history:" and its grid, "Run summary:" and its grid, each
# grid ending with a newline: an empty "wandb: " line before and after), _footer_sync_info's two lines
WANDB = "wandb: "
WANDB_OFFLINE = "wandb: W&B syncing is set to `offline`"
WANDB_OFFLINE_MORE = ("wandb: Run data is saved locally in ", "wandb: View this run in the terminal with ")
WANDB_SYNC = "wandb: You can sync this run to the cloud by running:"


def _summary_end(lines: list[str], i: int) -> int:
    return _run_end(lines, i, PL_SUMMARY_LINE.match)


def _wandb_panel_end(lines: list[str], i: int) -> int:
    return _run_end(lines, i, lambda line: line.startswith(WANDB) and not line.startswith(WANDB_SYNC))


def _wandb_piece(lines: list[str], i: int) -> tuple[int, Piece]:
    """The end and the piece of one wandb call that starts at ``lines[i]``."""
    line, j = lines[i], i + 1
    if line.startswith(WANDB_OFFLINE):
        while j < len(lines) and lines[j].startswith(WANDB_OFFLINE_MORE):
            j += 1
        return j, ("multiline", lines[i:j])
    if line.rstrip() == WANDB.rstrip() and i + 1 < len(lines) and lines[i + 1] == "wandb: Run history:":
        j = _wandb_panel_end(lines, i)
        return j, ("wandb_summary", lines[i:j])
    if line.startswith(WANDB_SYNC):
        return i + 2, ("multiline", lines[i:i + 2])
    return j, ("single" if line.strip() else "blank", [line])


def _lightning_pieces(out: str) -> list[Piece]:
    """One run's output (stdout and stderr in one pipe): the Trainer's lines (each a record), the model
    summary (one log record), the bar's redraws after "\\r" (a line each; a warning written over them on
    their line is one line with them), warnings (Lightning's own formatwarning writes those from its package
    on one line: ``lightning_fabric/utilities/warnings.py _custom_format_warning``; others with their source
    line), wandb's calls, and each traceback (after the bar's last redraw on its line) to its message."""
    lines = out.rstrip("\n").split("\n")
    pieces: list[Piece] = []
    i = 0
    while i < len(lines):
        line = lines[i]
        j = i + 1
        if line.endswith(TRACEBACK):  # to its message: the bar's redraw at exit or wandb's footer follows
            j = next((k for k in range(i + 1, len(lines))
                      if lines[k].startswith(("\r", WANDB)) or lines[k].endswith(TRACEBACK)), len(lines))
            while not lines[j - 1].strip():
                j -= 1
            pieces.append(("python_traceback", lines[i:j]))
        elif PY_WARNING.match(line):
            j = _warning_end(lines, i)
            pieces.append(("python_warning", lines[i:j]))
        elif PL_SUMMARY_HEAD.match(line):
            j = _summary_end(lines, i)
            pieces.append(("model_summary", lines[i:j]))
        elif line.startswith("\u250f"):  # Rich's box: its top edge to its bottom edge
            j = next(k for k in range(i, len(lines)) if lines[k].startswith("\u2514")) + 1
            pieces.append(("table", lines[i:j]))
        elif line.startswith("Trainable params: "):
            while j < len(lines) and PL_GRID_LINE.match(lines[j]):
                j += 1
            pieces.append(("model_summary", lines[i:j]))
        elif line.startswith(WANDB):
            j, piece = _wandb_piece(lines, i)
            pieces.append(piece)
        else:
            pieces += _singles([line])
        i = j
    return pieces


def _framework_path() -> str:
    dirs = [Path(os.environ.get(f"SLUICE_{d.split('-')[1].upper()}_TARGET", CACHE / d)) for d in LIGHTNING_PATH]
    for d, module in zip(dirs, ("pytorch_lightning", "torch", "wandb"), strict=True):
        if not (d / module).is_dir():
            raise RuntimeError(f"lightning and cli captures need {d}: pip install --target {d} ... (README.md)")
    return os.pathsep.join(str(d) for d in dirs)


def _printer_of(path: str, names: tuple[str, ...], exe: Path) -> str:
    from importlib.metadata import distributions

    dists = {d.metadata["Name"].lower(): d.version for d in distributions(path=path.split(os.pathsep))}
    return ", ".join(f"{n} {dists.get(n)}" for n in names) + f", {_version([str(exe), '-VV'])}"


def _merged(argv: list[str], cwd: Path, env: dict[str, str]) -> str:
    full = {k: v for k, v in os.environ.items()
            if not k.startswith(("PYTHON", "WANDB_", "HYDRA_", "TORCH", "COLUMNS", "LINES", "CLI"))} | env
    p = subprocess.run(argv, cwd=cwd, env=full, stdout=subprocess.PIPE, stderr=subprocess.STDOUT, timeout=300,
                       check=False)
    return p.stdout.decode("utf-8", "replace")


def lightning(work: Path) -> Iterator[Capture]:
    """``programs/lightning/fit.py`` under CPython 3.12 with PyTorch Lightning, wandb and PyTorch (CPU) from
    ``pip install --target`` directories (``~/.cache/sluice-lightning``, ``sluice-torch``, ``sluice-wandb``):
    what one run wrote to stdout and stderr, unbuffered; wandb offline (``WANDB_MODE=offline``)."""
    path = _framework_path()
    # (not under a directory named "lightning": Lightning's formatwarning writes every warning whose file's
    # path holds that word on one line, the user's own too)
    src = work / "pl_run"
    src.mkdir(parents=True, exist_ok=True)
    shutil.copy(PROGRAMS / "lightning" / "fit.py", src / "fit.py")
    exe = _python312()
    printer = _printer_of(path, LIGHTNING_PACKAGES, exe)
    env = {"PYTHONPATH": path, "PYTHONUNBUFFERED": "1", "CUDA_VISIBLE_DEVICES": "", "WANDB_MODE": "offline",
           "COLUMNS": "80"}
    for name in LIGHTNING_SCENARIOS:
        out = _merged([str(exe), "fit.py", name], src, env)
        # a traceback ends with the error's message (free text)
        yield Capture("lightning", name, _lightning_pieces(out), True, printer)


LANGS["lightning"] = lightning


# --- command lines: argparse's, click's and fire's usage errors, Hydra's job errors, python -m ---------

# (name, CLI library, arguments, HYDRA_FULL_ERROR, the kind of the event the run prints). argparse
# (ArgumentParser.error: print_usage, then "prog: error: message"), click (UsageError.show: the usage and the
# "Try ... for help." hint, a blank line, "Error: message"), fire (core.py _DisplayError: "ERROR: ..." and
# helptext.UsageText: "Usage:", the availability lines, a blank line, "For detailed information on this
# command, run:" and the help command): one event each. Hydra (_internal/utils.py run_and_report): the job's
# records (hydra/conf/hydra/job_logging/default.yaml "[%(asctime)s][%(name)s][%(levelname)s] - %(message)s",
# on stdout) each a line, then JobReturn.return_value's "Error executing job with overrides: [...]", the
# traceback without Hydra's frames: one event; after a blank line "Set the environment variable
# HYDRA_FULL_ERROR=1 for a complete stack trace.", a write of its own: a line of its own; with
# HYDRA_FULL_ERROR=1 the line and CPython's whole traceback; a CompactHydraException (an override it cannot
# apply): its message and its cause's (OmegaConf's "    full_key:" lines): one event, then the same hint.
# ``python -m`` of a missing module: one line.
CLI_SCENARIOS: tuple[tuple[str, str, tuple[str, ...], str, str], ...] = (
    ("argparse_required", "argparse", ("data",), "", "usage_error"),
    ("argparse_choice", "argparse", ("--config", "c.yaml", "--model", "llama-huge", "data"), "", "usage_error"),
    ("click_missing", "click", ("data",), "", "usage_error"),
    ("click_value", "click", ("--lr", "x", "data"), "", "usage_error"),
    ("fire_required", "fire", ("train",), "", "usage_error"),
    ("fire_consume", "fire", ("train", "--data_dir", "d", "--bogus", "1"), "", "usage_error"),
    ("fire_key", "fire", ("evaluate",), "", "usage_error"),
    ("hydra_job", "hydra", ("optim.lr=0.1",), "", "python_traceback"),
    ("hydra_full", "hydra", ("optim.lr=0.1",), "1", "python_traceback"),
    ("hydra_override", "hydra", ("optim.lrr=0.1",), "", "hydra_error"),
    ("hydra_append", "hydra", ("+epochs=3",), "", "hydra_error"),
)
HYDRA_RECORD = re.compile(r"^\[\d{4}-\d\d-\d\d \d\d:\d\d:\d\d,\d{3}\]\[[\w.]+\]\[[A-Z]+\] - ")
HYDRA_HINT = "Set the environment variable HYDRA_FULL_ERROR=1 for a complete stack trace."
CLI_PACKAGES = ("hydra-core", "omegaconf", "click", "fire")


# what the program itself prints before the library's error (fire runs the command, then fails on what is left)
CLI_PRINT = "training on "


def _cli_pieces(out: str, kind: str) -> list[Piece]:
    """The job's Hydra records and the program's prints a line each; the rest of the run one event, the blank
    lines around it left out."""
    lines = out.rstrip("\n").split("\n")
    i = 0
    while i < len(lines) and (HYDRA_RECORD.match(lines[i]) or lines[i].startswith(CLI_PRINT)):
        i += 1
    # Hydra's hint after the report is a write of its own (run_and_report): a line of its own
    hint = len(lines) if lines[-1] != HYDRA_HINT else len(lines) - 1
    return [*_singles(lines[:i]), *_event(kind, "\n".join(lines[i:hint]) + "\n"), *_singles(lines[hint:])]


def cli(work: Path) -> Iterator[Capture]:
    """``programs/cli/train.py`` under CPython 3.12 with click, fire, Hydra and OmegaConf from the
    ``pip install --target`` directories above, each run's command line one the library refuses (or a job
    that raises under Hydra); and ``python -m`` of a module that does not exist."""
    path = _framework_path()
    src = work / "cli"
    src.mkdir(parents=True, exist_ok=True)
    shutil.copy(PROGRAMS / "cli" / "train.py", src / "train.py")
    exe = _python312()
    printer = _printer_of(path, CLI_PACKAGES, exe)
    base = {"PYTHONPATH": path, "PYTHONUNBUFFERED": "1", "COLUMNS": "80"}
    for name, lib, args, full_error, kind in CLI_SCENARIOS:
        env = base | {"CLI": lib} | ({"HYDRA_FULL_ERROR": full_error} if full_error else {})
        out = _merged([str(exe), "train.py", *args], src, env)
        # a usage error's and a traceback's last line is a message (free text); Hydra's hint ends its report
        yield Capture("cli", name, _cli_pieces(out, kind), kind != "hydra_error", printer)
    out = _merged([str(exe), "-m", "trainer_missing"], src, base)
    yield Capture("cli", "python -m", _singles(out.rstrip("\n").split("\n")), False, printer)


LANGS["cli"] = cli


# --- PyTorch 2's compiler stack: torch.compile, dynamo's logs, inductor, torch.fx, torch.export, DDP ---------

# scenario: the environment of its run (TORCH_LOGS turns on torch._logging's artifacts; CXX is inductor's compiler,
# "{bad_cxx}" a compiler that fails on inductor's kernels, written into the run's directory)
TORCH_COMPILE_SCENARIOS: dict[str, dict[str, str]] = {
    "backend": {}, "backend_verbose": {"TORCHDYNAMO_VERBOSE": "1"}, "inductor_cxx": {"CXX": "/nonexistent/g++"},
    "inductor_cpp": {"CXX": "{bad_cxx}"}, "fx": {}, "export": {}, "export_nonstrict": {},
    "graph_breaks": {"TORCH_LOGS": "graph_breaks"},
    "recompiles": {"TORCH_LOGS": "recompiles"}, "recompile_limit": {}, "checkpoint": {},
}
TORCH_COMPILE_TORCHRUN = ("ddp_unused",)
# torch.export's wrapper (torch/export/_trace.py) prints the partial graph of a failed trace to stderr before it
# raises again, once per nested wrapper: dynamo's GraphModule.print_readable (strict: "class GraphModule(...):"
# and its indented body, blank lines inside) or torch.fx's python_code ("def forward(...):" after blank lines)
GRAPH_PRINT = re.compile(r"^(?:class GraphModule\(|def forward\()")
# a compiler that fails on inductor's kernels (the build of its vector-ISA probes as well): the real g++ with a
# header that does not compile forced in, so the diagnostics are g++'s own
BAD_CXX = """#!/bin/sh
for a in "$@"; do case "$a" in *.cpp) exec g++ -include "$(dirname "$0")/bad.h" "$@";; esac; done
exec g++ "$@"
"""
BAD_H = 'static_assert(sizeof(long) == 3, "kernel ABI: long is not 3 bytes");\n'


def _graph_end(lines: list[str], i: int) -> int:
    j = _run_end(lines, i, lambda line: not line.strip() or line.startswith(" "))
    while not lines[j - 1].strip():
        j -= 1  # print's newline after the code's own
    return j


TORCH_COMPILE_PRINTERS: tuple[TorchPrinter, ...] = (*TORCH_PRINTERS, (GRAPH_PRINT.match, _graph_end, "multiline"))


def torch_compile(work: Path) -> Iterator[Capture]:
    """``programs/torch_compile/compile.py`` under CPython 3.12 with PyTorch (CPU) from the ``pip install
    --target`` directory of the torch captures: torch.compile's, dynamo's, inductor's (its C++ backend with g++),
    torch.fx's and torch.export's errors and logs, and DDP's reducer error under ``torchrun --nproc-per-node 2``
    (gloo); what one run wrote to stdout and stderr, unbuffered, in order."""
    target = _target("torch", "torch")
    src = work / "torch_compile"
    src.mkdir(parents=True, exist_ok=True)
    shutil.copy(PROGRAMS / "torch_compile" / "compile.py", src / "compile.py")
    bad = src / "cc"
    bad.mkdir(exist_ok=True)
    (bad / "g++").write_text(BAD_CXX)
    (bad / "g++").chmod(0o755)
    (bad / "bad.h").write_text(BAD_H)
    exe = _python312()
    printer = _printer(target, ("torch",), exe) + f", {_version(['g++', '--version'])}"
    base = {"PYTHONPATH": str(target), "PYTHONUNBUFFERED": "1", "CUDA_VISIBLE_DEVICES": ""}
    runs = [(name, [str(exe), "compile.py", name], {k: v.format(bad_cxx=bad / "g++") for k, v in env.items()})
            for name, env in TORCH_COMPILE_SCENARIOS.items()]
    runs += [(f"{name} (torchrun)", [str(exe), str(target / "bin" / "torchrun"), "--standalone", "--nproc-per-node",
                                     "2", "compile.py", name], {}) for name in TORCH_COMPILE_TORCHRUN]
    for n, (name, argv, env) in enumerate(runs):
        cache = work / "torch_compile" / f"inductor{n}"  # no kernel compiled by an earlier run
        full = {k: v for k, v in os.environ.items()
                if not k.startswith(("PYTHON", "TORCH", "OMP_", "LOGLEVEL", "CXX", "CC"))} | base | env
        full["TORCHINDUCTOR_CACHE_DIR"] = str(cache)
        p = subprocess.run(argv, cwd=src, env=full, stdout=subprocess.PIPE, stderr=subprocess.STDOUT,
                           timeout=300, check=False)
        # a traceback ends with the error's message (free text; dynamo's footer is part of it)
        out = p.stdout.decode("utf-8", "replace")
        yield Capture("torch_compile", name, _torch_pieces(out, TORCH_COMPILE_PRINTERS), True, printer)


LANGS["torch_compile"] = torch_compile


# --- pytest: its failure report -------------------------------------------------------------------------

# --tb styles: each run with -rA (every outcome in the short summary, and the PASSES section)
PYTEST_TB = ("long", "short", "native")
# _pytest/terminal.py: TerminalWriter.sep writes "<fill> title <fill>" to the terminal's width (COLUMNS).
# summary_failures, summary_errors and summary_passes write per report a "_" rule with its title ("test_x",
# "ERROR at setup of test_x"), then _outrep_summary: the report's longrepr (rep.toterminal: the frames, "E   "
# lines, "file:N: Error"; between two entries of --tb=long a "_ _ _" rule) and its sections, each under a "-"
# rule ("Captured stdout call", "Captured log call"): one event, to the next report's rule or the next "="
# section rule. Everything else it writes is a line of its own (the session header, the progress line, the "="
# rules, the short summary's lines), but summary_warnings' entry: the location line and the message indented
# under it (one event), a blank line, then "-- Docs: ..."
PYTEST_REPORT = re.compile(r"^_{3,} \S.* _{3,}$")
PYTEST_SECTION = re.compile(r"^=+ \S.* =+$")


def _pytest_pieces(out: str) -> list[Piece]:
    lines = out.rstrip("\n").split("\n")
    pieces: list[Piece] = []
    i = 0
    while i < len(lines):
        line, j = lines[i], i + 1
        if PYTEST_REPORT.match(line):
            j = _run_end(lines, i, lambda x: not (PYTEST_REPORT.match(x) or PYTEST_SECTION.match(x)))
            pieces.append(("pytest_report", lines[i:j]))
        elif "::" in line and j < len(lines) and lines[j].startswith("  "):  # a warning's location
            j = _run_end(lines, i, lambda x: x.startswith("  "))
            pieces.append(("pytest_warning", lines[i:j]))
        else:
            pieces += _singles([line])
        i = j
    return pieces


def pytest_report(work: Path) -> Iterator[Capture]:
    """``programs/pytest/test_train.py`` under the project's own pytest (its dev extra), ``COLUMNS=80``, once per
    ``--tb`` style with ``-rA``: what the run wrote to stdout."""
    import sys

    src = work / "pytest"
    src.mkdir(parents=True, exist_ok=True)
    shutil.copy(PROGRAMS / "pytest" / "test_train.py", src / "test_train.py")
    exe = Path(sys.executable)
    printer = f"pytest {_version([str(exe), '-m', 'pytest', '--version'])}, {_version([str(exe), '-VV'])}"
    for tb in PYTEST_TB:
        out = _merged([str(exe), "-m", "pytest", "-p", "no:cacheprovider", f"--tb={tb}", "-rA", "test_train.py"],
                      src, {"COLUMNS": "80"})
        # a report's last line is its longrepr's or its last section's (free text)
        yield Capture("pytest", f"--tb={tb} -rA", _pytest_pieces(out), True, printer)


LANGS["pytest"] = pytest_report
