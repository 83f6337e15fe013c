"""Lay captured events out in log files between single-line records, and label them by construction.

Every event is followed at once by a single-line record (where greedy rules swallow a line), and
preceded by a few. A *wrapper* writes the per-process prefix a launcher or collector puts on every
line (torchrun's ``[rank3]:``, Ray's ``(Worker pid=.., ip=..)``, ``docker logs --timestamps``);
lines of other processes then come between the events, each with its own prefix. Blank lines
inside an event carry the prefix, as the launcher writes them; blank lines between events are
left bare.
"""

from __future__ import annotations

import json
import random
import re
from collections.abc import Callable
from dataclasses import dataclass
from datetime import UTC, datetime, timedelta

from devtools.printers.capture import Capture

T0 = datetime(2026, 12, 1, 17, 44, 5, 123456, tzinfo=UTC)


@dataclass
class Clock:
    t: datetime = T0

    def tick(self, rng: random.Random) -> datetime:
        self.t += timedelta(milliseconds=rng.randint(3, 4000), microseconds=rng.randint(0, 999))
        return self.t


def _loss(rng: random.Random) -> float:
    return round(rng.uniform(0.8, 3.5), 4)


# single-line records: name -> (record with a time or level of its own, maker)
Maker = Callable[[random.Random, datetime], str]
RECORDS: dict[str, tuple[bool, Maker]] = {
    # Python logging's BASIC_FORMAT "%(levelname)s:%(name)s:%(message)s"
    "py_default": (True, lambda r, t: f"INFO:trainer:step {r.randint(1, 9999)} loss={_loss(r)}"),
    # Ray's own records: ray_constants.LOGGER_FORMAT
    # "%(asctime)s\t%(levelname)s %(filename)s:%(lineno)s -- %(message)s"
    "ray_log": (True, lambda r, t: f"{t:%Y-%m-%d %H:%M:%S},{t.microsecond // 1000:03d}\tINFO worker.py:"
                                   f"{r.randint(100, 3000)} -- Connecting to existing Ray cluster at address: "
                                   f"10.0.0.{r.randint(2, 9)}:6379..."),
    # "%(asctime)s - %(name)s - %(levelname)s - %(message)s"
    "py_dashes": (True, lambda r, t: f"{t:%Y-%m-%d %H:%M:%S},{t.microsecond // 1000:03d} - trainer - INFO - "
                                     f"step {r.randint(1, 9999)}/10000 loss={_loss(r)} lr=3.0e-04"),
    # glog / absl / klog: Lmmdd hh:mm:ss.uuuuuu threadid file:line] msg (level I: absl's W/E records
    # carry the traceback of logging.exception below them, so before an unrelated one they would lie)
    "glog": (True, lambda r, t: f"I{t:%m%d %H:%M:%S}.{t.microsecond:06d} {r.randint(1, 99999):>6} "
                                f"trainer.cc:{r.randint(20, 900)}] step {r.randint(1, 9999)} "
                                f"took {r.uniform(0.1, 3):.3f}s"),
    # NCCL_DEBUG=INFO: host:pid:tid [dev] NCCL INFO ...
    "nccl": (True, lambda r, t: f"gpu-node-{r.randint(1, 8)}:{r.randint(1000, 99999)}:{r.randint(1000, 99999)} "
                                f"[{r.randint(0, 7)}] NCCL INFO Channel {r.randint(0, 3):02d}/04 :    0   1   2   3"),
    # DeepSpeed's logger "[%(asctime)s] [%(levelname)s] [%(filename)s:%(lineno)d:%(funcName)s] %(message)s"
    "deepspeed": (True, lambda r, t: f"[{t:%Y-%m-%d %H:%M:%S},{t.microsecond // 1000:03d}] [INFO] "
                                     f"[logging.py:128:log_dist] [Rank 0] step={r.randint(1, 9999)}, skipped=0, "
                                     f"lr=[2.9e-05], mom=[(0.9, 0.95)]"),
    # vLLM "%(levelname)s %(asctime)s [%(filename)s:%(lineno)d] %(message)s"
    "vllm": (True, lambda r, t: f"INFO {t:%m-%d %H:%M:%S} [metrics.py:{r.randint(300, 500)}] Avg prompt throughput: "
                                f"{r.uniform(10, 900):.1f} tokens/s, Running: {r.randint(0, 64)} reqs"),
    "json": (True, lambda r, t: json.dumps({"timestamp": t.isoformat(timespec="milliseconds").replace("+00:00", "Z"),
                                            "level": "INFO", "task_id": "train-qwen7b-lora-001",
                                            "step": r.randint(1, 9999), "loss": _loss(r),
                                            "gpu_memory_mb": r.randint(10000, 80000)})),
    # Go's log package default flags, and Rust env_logger's default format
    "go_log": (True, lambda r, t: f"{t:%Y/%m/%d %H:%M:%S} worker {r.randint(0, 15)}: shard {r.randint(0, 999)} done"),
    "env_logger": (True, lambda r, t: f"[{t:%Y-%m-%dT%H:%M:%SZ} INFO  loader] shard {r.randint(0, 999)} loaded"),
    # log4j PatternLayout "%d %-5p %c - %m%n"
    "log4j": (True, lambda r, t: f"{t:%Y-%m-%d %H:%M:%S},{t.microsecond // 1000:03d} INFO  org.example.train.Trainer"
                                 f" - checkpoint {r.randint(1, 99)} saved"),
    # loguru's default format "{time:YYYY-MM-DD HH:mm:ss.SSS} | {level: <8} | {name}:{function}:{line} - {message}"
    "loguru": (True, lambda r, t: f"{t:%Y-%m-%d %H:%M:%S}.{t.microsecond // 1000:03d} | INFO     | __main__:train:"
                                  f"{r.randint(20, 400)} - step {r.randint(1, 9999)} loss={_loss(r)}"),
    # rich.logging.RichHandler at 100 columns: time, level, message, then the caller right-aligned
    "rich_log": (True, lambda r, t: f"[{t:%m/%d/%y %H:%M:%S}] INFO     "
                                    f"{f'step {r.randint(1, 9999)} loss={_loss(r)}':<58}"
                                    f"train.py:{r.randint(20, 400):<3}"),
    # structlog's ConsoleRenderer(colors=False): ISO time, the padded level, the event padded to 30, keys
    "structlog": (True, lambda r, t: f"{t.isoformat(timespec='microseconds').replace('+00:00', 'Z')} [info     ] "
                                     f"{'step done':<30} loss={_loss(r)} step={r.randint(1, 9999)}"),
    # transformers' explicit format (its example scripts): "[%(levelname)s|%(filename)s:%(lineno)s] %(asctime)s >> "
    "hf_explicit": (True, lambda r, t: f"[INFO|trainer.py:{r.randint(700, 2500)}] {t:%Y-%m-%d %H:%M:%S},"
                                       f"{t.microsecond // 1000:03d} >> Saving model checkpoint to "
                                       f"out/checkpoint-{r.randint(1, 99) * 100}"),
    # Hydra's job logging (hydra/conf/hydra/job_logging/default.yaml): "[%(asctime)s][%(name)s][%(levelname)s] - "
    "hydra_log": (True, lambda r, t: f"[{t:%Y-%m-%d %H:%M:%S},{t.microsecond // 1000:03d}][__main__][INFO] - "
                                     f"epoch {r.randint(0, 9)} step {r.randint(1, 9999)} loss={_loss(r)}"),
    # transformers Trainer's printed log dict, a tqdm bar that ended with a newline, plain prints
    "hf_dict": (False, lambda r, t: f"{{'loss': {_loss(r)}, 'grad_norm': {r.uniform(0.1, 9):.4f}, "
                                    f"'learning_rate': 2e-05, 'epoch': {r.uniform(0, 3):.2f}}}"),
    "tqdm": (False, lambda r, t: _tqdm(r)),
    "print": (False, lambda r, t: r.choice(["Saving model checkpoint to /ckpt/step_1200",
                                            "Epoch 3/10", "loading shards...", "done.",
                                            f"rank {r.randint(0, 7)} ready", "Training completed."])),
}
LANG_RECORDS = {
    "python": ("py_default", "py_dashes", "glog", "nccl", "deepspeed", "vllm", "json", "hf_dict", "tqdm", "print"),
    "python_color": ("py_default", "py_dashes", "glog", "nccl", "deepspeed", "vllm", "json", "hf_dict", "tqdm",
                     "print"),
    "pystdlib": ("py_default", "py_dashes", "glog", "nccl", "deepspeed", "vllm", "json", "hf_dict", "tqdm", "print"),
    "pylibs": ("py_dashes", "glog", "nccl", "loguru", "rich_log", "structlog", "json", "hf_dict", "tqdm", "print"),
    "java": ("log4j", "json", "py_dashes", "print"),
    "java_loggers": ("log4j", "json", "py_dashes", "print"),
    "jvm_fatal": ("log4j", "json", "print"),
    "go": ("go_log", "glog", "json", "print"),
    "go122": ("go_log", "glog", "json", "print"),
    "node": ("json", "py_dashes", "glog", "print"),
    "rust": ("env_logger", "json", "glog", "print"),
    "golibs": ("go_log", "glog", "json", "print"),
    "rustlibs": ("env_logger", "json", "glog", "print"),
    "c": ("glog", "nccl", "py_default", "print"),
    "glog": ("glog", "nccl", "py_default", "print"),
    "absl": ("glog", "nccl", "py_default", "print"),
    "lldb": ("glog", "nccl", "py_default", "print"),
    "boost": ("glog", "nccl", "py_default", "print"),
    "sanitizers": ("glog", "nccl", "py_default", "print"),
    "memcheck": ("glog", "nccl", "py_default", "print"),
    "mpi": ("glog", "nccl", "py_dashes", "print"),
    "jax": ("py_dashes", "glog", "nccl", "json", "hf_dict", "tqdm", "print"),
    "pyspark": ("log4j", "py_dashes", "json", "print"),
    "tensorflow": ("py_dashes", "glog", "json", "hf_dict", "print"),
    "ray": ("ray_log", "py_dashes", "glog", "json", "hf_dict", "tqdm", "print"),
    "torch": ("py_dashes", "glog", "nccl", "deepspeed", "json", "hf_dict", "tqdm", "print"),
    "torch_compile": ("py_dashes", "glog", "nccl", "deepspeed", "json", "hf_dict", "tqdm", "print"),
    "hf": ("py_dashes", "hf_explicit", "nccl", "deepspeed", "json", "hf_dict", "tqdm", "print"),
    "lightning": ("py_dashes", "hydra_log", "glog", "nccl", "json", "hf_dict", "tqdm", "print"),
    "pytest": ("py_dashes", "glog", "json", "hf_dict", "print"),
    "cli": ("py_dashes", "hydra_log", "glog", "json", "print"),
}


def _tqdm(r: random.Random) -> str:
    n = r.randint(0, 1000)
    pct = n * 100 // 1000
    full = pct // 10
    bar = "█" * full + (" " * (10 - full))
    return f"{pct:3d}%|{bar}| {n}/1000 [00:{r.randint(10, 59)}<01:{r.randint(10, 59)}, {r.uniform(1, 9):5.2f}it/s]"


# per-process prefixes written on every line by launchers and collectors
Wrapper = Callable[[int, datetime], str]
WRAPPERS: dict[str, Wrapper] = {
    "bare": lambda rank, t: "",
    "rank": lambda rank, t: f"[rank{rank}]:",  # torchrun --local-ranks-filter / log prefix
    "default": lambda rank, t: f"[default{rank}]:",  # torch elastic's tee before the rank prefix
    "ray": lambda rank, t: f"(RayWorkerWrapper pid={41000 + rank}, ip=10.0.0.{rank + 2}) ",
    "docker_ts": lambda rank, t: t.isoformat(timespec="microseconds").replace("+00:00", "") + "000Z ",
}


# prefixes other launchers, relays and viewers write before every line of one process's output, each
# as its writer prints it; ``relay`` lays an already composed bare file out under one of them
RELAYS: dict[str, str] = {
    "compose": "trainer-1  | ",  # docker compose logs: the service, padded to the longest name
    "kubectl_prefix": "[pod/train-worker-3/pytorch] ",  # kubectl logs --prefix
    "kubectl_ts": "2026-12-01T17:44:05.123456789Z ",  # kubectl logs --timestamps (RFC 3339, nanoseconds)
    "github_actions": "2026-12-01T17:44:05.1234567Z ",  # a GitHub Actions job log (7-digit fraction)
    "jenkins": "[2026-12-01T17:44:05.123Z] ",  # Jenkins' timestamper
    "ts": "Dec 01 17:44:05 ",  # moreutils ts, its default format
    "srun": "3: ",  # srun --label (slurm _build_label "%*d: "), fewer than 11 tasks
    "srun_padded": " 3: ",  # the same with 11 to 100 tasks: ids right-aligned
    "srun_padded3": "  3: ",  # and with 101 to 1000
    "srun_hetjob": "P1 3: ",  # a heterogeneous job's component and task
    "mpirun": "[1,3]<stderr>:",  # OpenMPI mpirun --tag-output
    "pdsh": "node03: ",  # pdsh / DeepSpeed's multi-node runner
    "deepspeed_worker": "worker-3: ",
    "journald": "Dec 01 17:44:05 gpu-node-3 python[41233]: ",  # journalctl -u (short)
    "journald_precise": "Dec 01 17:44:05.123456 gpu-node-3 python[41233]: ",  # journalctl -o short-precise
    "journald_iso": "2026-12-01T17:44:05+0000 gpu-node-3 python[41233]: ",  # journalctl -o short-iso
    "rsyslog": "2026-12-01T17:44:05.123456+00:00 gpu-node-3 trainer[41233]: ",  # RSYSLOG_FileFormat
    "ray_old": "(pid=41233) ",  # Ray before named actors in the prefix
    "ray_actor": "(TrainTrainable pid=41233, ip=10.0.0.5) ",
    "raylet": "(raylet) ",
    "vllm_worker": "(VllmWorker rank=1 pid=41233) ",
    "vllm_engine": "(EngineCore_DP0 pid=41233) ",
}


# what terminals, copies and editors do to every line on the way into a file
MARKUPS: dict[str, Callable[[str], str]] = {
    "stderr_red": lambda line: f"\x1b[31m{line}\x1b[0m",  # a wrapper colouring a child's stderr
    "bold": lambda line: "\x1b[1m" + line,  # an attribute set and never reset
    "level_colours": lambda line: re.sub(r"\b(DEBUG|INFO|WARNING|WARN|ERROR)\b", "\x1b[32m\\1\x1b[0m", line),
    "erase_line": lambda line: "\x1b[2K\r" + line,  # a progress bar's redraw before the line
    "ray_colour": lambda line: "\x1b[36m(RayWorkerWrapper pid=41233, ip=10.0.0.5)\x1b[0m " + line,
    "ray_colour_copied": lambda line: "[36m(RayWorkerWrapper pid=41233, ip=10.0.0.5)[0m " + line,  # ESC lost
    "trailing_blanks": lambda line: line + "  ",
    "crlf": lambda line: line + "\r",
}


def markup(text: str, labels: dict, mark: Callable[[str], str]) -> str:
    """``text`` with ``mark`` applied to every line that is not blank outside an event."""
    inside: set[int] = set()
    for ev in labels["events"]:
        inside.update(ev["lines"] if "lines" in ev else range(ev["first"], ev["last"] + 1))
    lines = text.split("\n")
    end = [lines.pop()] if lines and lines[-1] == "" else []
    return "\n".join(mark(line) if line.strip() or no in inside else line
                     for no, line in enumerate(lines, 1)) + ("\n" if end else "")


def relay(text: str, labels: dict, prefix: str) -> str:
    """``text`` (a composed file of one process) with ``prefix`` before every line: before blank lines
    too where they are inside a labelled event, as the relay writes the process's empty lines."""
    return markup(text, labels, lambda line: prefix + line)


def compose(captures: list[Capture], lang: str, wrapper: str, seed: int) -> tuple[str, dict]:
    """(file text, labels) for ``captures`` in a seeded order, with records around them."""
    rng = random.Random(f"{lang}/{wrapper}/{seed}")
    clock = Clock()
    wrap = WRAPPERS[wrapper]
    own = 3  # the rank whose failures these are
    names = LANG_RECORDS[lang]
    strong = tuple(n for n in names if RECORDS[n][0])
    lines: list[str] = []
    events: list[dict] = []

    def record(pool: tuple[str, ...], rank: int) -> None:
        t = clock.tick(rng)
        lines.append(wrap(rank, t) + RECORDS[rng.choice(pool)][1](rng, t))

    order = list(captures)
    rng.shuffle(order)
    for cap in order:
        for _ in range(rng.randint(1, 3)):
            record(names, rng.choice((own, own, rng.randint(0, 7))) if wrapper != "bare" else own)
        for kind, piece in cap.pieces:
            t = clock.tick(rng)
            first = len(lines) + 1
            for text in piece:
                # blank lines between pieces stay bare: which record a prefix-only line belongs to is
                # not decidable, and the score would hang on it
                lines.append(wrap(own, t) + text if kind != "blank" else "")
            if kind in ("single", "blank"):
                continue
            events.append({"first": first, "last": len(lines), "kind": kind})
        # a record of the same process right after the block
        record(strong if cap.open_end else names, own)
    labels = {
        "source": "generated by devtools/printers (python -m devtools.printers): real printer output, see README.md",
        "notes": f"{lang} events from {', '.join(sorted({c.printer for c in captures}))}; wrapper {wrapper}, "
                 f"seed {seed}; each event is followed at once by a single-line record",
        "license": "generated",
        "events": events,
    }
    return "\n".join(lines) + "\n", labels


def _one_event(cap: Capture) -> tuple[str, list[str]] | None:
    """The capture's event when it is its only piece besides blank lines."""
    pieces = [(k, p) for k, p in cap.pieces if k != "blank"]
    return pieces[0] if len(pieces) == 1 and pieces[0][0] != "single" else None


def compose_interleaved(captures: list[Capture], lang: str, wrapper: str, seed: int) -> tuple[str, dict]:
    """Two ranks failing at once: the lines of two events, each under its rank's prefix, interleaved as
    their writes reached the launcher's merged stream (labelled by their ``lines``)."""
    rng = random.Random(f"{lang}/{wrapper}/interleaved/{seed}")
    clock = Clock()
    wrap = WRAPPERS[wrapper]
    names = LANG_RECORDS[lang]
    strong = tuple(n for n in names if RECORDS[n][0])
    lines: list[str] = []
    events: list[dict] = []

    def record(pool: tuple[str, ...], rank: int) -> None:
        t = clock.tick(rng)
        lines.append(wrap(rank, t) + RECORDS[rng.choice(pool)][1](rng, t))

    order = [c for c in captures if _one_event(c) is not None]
    rng.shuffle(order)
    for a, b in zip(order[::2], order[1::2], strict=False):
        for _ in range(rng.randint(1, 3)):
            record(names, rng.randint(0, 7))
        (kind_a, ev_a), (kind_b, ev_b) = _one_event(a), _one_event(b)  # type: ignore[misc]
        queues = {3: list(ev_a), 5: list(ev_b)}
        atomic = {3: a.atomic, 5: b.atomic}
        got: dict[int, list[int]] = {3: [], 5: []}
        t = clock.tick(rng)
        while queues[3] or queues[5]:
            rank = rng.choice([r for r in (3, 5) if queues[r]])
            # a printer writes a line or a few at a time; a logging handler the whole record at once
            for _ in range(len(queues[rank]) if atomic[rank] else rng.randint(1, 4)):
                if queues[rank]:
                    lines.append(wrap(rank, t) + queues[rank].pop(0))
                    got[rank].append(len(lines))
        events.append({"lines": got[3], "kind": kind_a})
        events.append({"lines": got[5], "kind": kind_b})
        record(strong if a.open_end else names, 3)
        record(strong if b.open_end else names, 5)
    labels = {
        "source": "generated by devtools/printers (python -m devtools.printers): real printer output, see README.md",
        "notes": f"{lang} events of ranks 3 and 5 interleaved line by line under wrapper {wrapper}, seed {seed}; "
                 f"each pair is followed by a single-line record of each rank",
        "license": "generated",
        "events": events,
    }
    return "\n".join(lines) + "\n", labels
