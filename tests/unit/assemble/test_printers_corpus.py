"""``corpus/printers``: multiline events printed by the real printers (CPython's traceback, faulthandler and
warnings, the JDK's printStackTrace, java.util.logging, log4j2 and logback, HotSpot's fatal error header, the Go
runtime, Rust's panic hook, CPython's concurrent.futures, multiprocessing.pool, logging's stack_info, asyncio and
unittest, CPython 3.13's coloured tracebacks (PYTHON_COLORS=1), Node.js's uncaught exception report and
util.inspect, valgrind and gcc's sanitizers, Open MPI's mpirun,
JAX's filtered tracebacks, Ray's driver and forwarded worker lines, PySpark's log4j2 records and driver
tracebacks, TensorFlow's C++ log records and graph execution errors, PyTorch's c10 errors, anomaly mode, DataLoader
workers, dynamo, c10 log records and torchrun's failures, torch.compile's, inductor's, torch.fx's, torch.export's
and DDP's errors and TORCH_LOGS records, transformers' Trainer output, records and loading report,
PyTorch Lightning's Trainer lines, model summaries and bar, wandb's terminal log, argparse's, click's and fire's usage
errors, Hydra's job errors, pytest's failure report, glibc's backtrace_symbols_fd, gdb, glog, clang's sanitizers,
abseil's failure signal handler, lldb's stop reports and backtraces, boost::stacktrace, the go1.22 runtime's layouts;
rich, loguru, absl-py, structlog, IPython, typer, tqdm; Go's zap, logrus, zerolog, klog, slog and pkg/errors;
Rust's anyhow, eyre, color-eyre, env_logger, tracing-subscriber, tokio), each followed at once by a single-line
record, bare and under launchers' per-line prefixes. Labels come from how the files were made
(``devtools/printers``), so nothing short of every event whole and every single line alone is right.
"""

from __future__ import annotations

import json
from collections.abc import Callable
from pathlib import Path

import pytest
from corpus_helpers import CORPUS

from devtools.printers.compose import MARKUPS, RELAYS, markup, relay
from tests.multiline_score import labelled_files, score_file

PRINTERS = CORPUS / "printers"
LANGS = ("absl", "boost", "c", "cli", "glog", "go", "go122", "golibs", "hf", "java", "java_loggers", "jax", "jvm_fatal",
         "lightning", "lldb", "memcheck", "mpi", "node", "pylibs", "pyspark", "pystdlib", "pytest", "python",
         "python_color", "ray", "rust", "rustlibs", "sanitizers", "tensorflow", "torch", "torch_compile")


@pytest.mark.parametrize("lang", LANGS)
def test_every_printed_event_whole_and_every_record_alone(lang: str) -> None:
    files = labelled_files([PRINTERS / lang])
    assert files, f"{PRINTERS / lang} holds no labelled files: regenerate with python -m devtools.printers"
    misses: list[str] = []
    kinds: set[str] = set()
    for path, labels in files:
        s = score_file(path, labels)
        kinds.update(k for k in s.total if k != "single")
        misses += s.misses
    assert kinds, f"{lang}: no multiline event is labelled"
    assert not misses, f"{lang}: {len(misses)} labelled events not met\n" + "\n".join(misses[:40])


def _bare_files_as(name: str, tmp_path: Path, make: Callable[[str, dict], str]) -> list[str]:
    misses: list[str] = []
    for lang in LANGS:
        bare = PRINTERS / lang / f"{lang}_bare_s1.log"
        labels = json.loads((PRINTERS / lang / "labels" / f"{lang}_bare_s1.json").read_text())
        path = tmp_path / f"{lang}_{name}.log"
        # (read as written: a tqdm line holds "\r" redraws, which universal newlines would split)
        path.write_text(make(bare.read_bytes().decode("utf-8"), labels), encoding="utf-8", newline="")
        misses += score_file(path, labels).misses
    return misses


@pytest.mark.parametrize("name", sorted(RELAYS))
def test_every_event_whole_under_each_relays_prefix(name: str, tmp_path: Path) -> None:
    # the bare files again, each line behind the prefix another launcher, relay or viewer writes:
    # the prefix is stripped for the decision, so the events are the bare file's
    misses = _bare_files_as(name, tmp_path, lambda text, labels: relay(text, labels, RELAYS[name]))
    assert not misses, f"under {RELAYS[name]!r}: {len(misses)} labelled events not met\n" + "\n".join(misses[:20])


@pytest.mark.parametrize("name", sorted(MARKUPS))
def test_every_event_whole_with_colours_and_blanks_on_each_line(name: str, tmp_path: Path) -> None:
    misses = _bare_files_as(name, tmp_path, lambda text, labels: markup(text, labels, MARKUPS[name]))
    assert not misses, f"with {name}: {len(misses)} labelled events not met\n" + "\n".join(misses[:20])
