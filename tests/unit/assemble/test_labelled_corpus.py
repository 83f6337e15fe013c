"""Every labelled part of the corpus in the repository, scored as ``tests/multiline_score.py`` scores it.

The training corpus and the dev part of ``corpus/wild`` keep the level the grammars reached (the
floors below: the share of labelled multiline events and of single lines that come out exactly as
labelled). The held-out test part is scored when present, but nothing is asserted on it yet: its
floor is set once, when the rules are final. A part without labels in this checkout is skipped.
"""

from __future__ import annotations

from collections import Counter

import pytest
from corpus_helpers import CORPUS

from tests.multiline_score import labelled_files, score_file

# part: (multiline events met, single lines met), as shares of the labelled ones
FLOORS = {
    "training": (0.98, 0.995),
    # wild/dev took in excerpts the rules had never seen, so its floor is the level measured with them:
    # raise it as the grammars reach those kinds.
    "wild/dev": (0.93, 0.98),
    # wild/dev2: a second set of fresh pastes, scored blind before its rules were written; its floor is the level
    # the rules reached on it.
    "wild/dev2": (0.85, 0.98),
    # wild/dev3 was scored blind first (37/42 whole), then its misses were fixed from their printers
    "wild/dev3": (1.0, 1.0),
    # wild/dev4 (Java, Go, sanitizers, C/C++ fatal dumps) was scored blind at 30/48 and 81/87; its floor is
    # the level its rules reached
    "wild/dev4": (0.87, 0.95),
    # wild/dev5 (C/C++ crash dumps, sanitizers, Go panics with the lines around them) was scored blind at 38/48
    # and 23/23; its floor is the level its rules reached
    "wild/dev5": (0.91, 1.0),
    # wild/dev6 (C/C++ crash output and sanitizers, Go, Java, Python, Rust as pasted into issues) was scored blind
    # at 40/53 and 97/103; its floor is the level its rules reached
    "wild/dev6": (0.90, 0.99),
    # wild/dev7 (stacks shortened by an elision line where they were pasted) was scored blind at 6/8 and 8/9; its
    # floor is the level its rules reached
    "wild/dev7": (1.0, 0.88),
    # wild/dev8 (training-cluster logs as pasted into issues) was scored blind at 22/27 and 90/90; its floor is the
    # level its rules reached
    "wild/dev8": (0.85, 1.0),
    # wild/dev9 (training-cluster logs behind launcher and relay prefixes, ranks interleaved) was scored blind at
    # 29/46 and 69/70; its floor is the level its rules reached
    "wild/dev9": (0.78, 0.98),
    # wild/dev10 (native crash output under GPU/ML stacks: glog, c10, Paddle, gdb, NCCL, sanitizers, Go, Rust, JVM)
    # was scored blind at 16/21 and 137/137; its floor is the level its rules reached
    "wild/dev10": (1.0, 1.0),
    # wild/dev11 (records hard-wrapped by a terminal at its width) was scored blind at 2/8 and 5/5 (four files); its
    # floor is the level its rule reached
    "wild/dev11": (0.75, 1.0),
    # wild/dev12 (Python tracebacks as ML users paste them: multi-line messages, exception lines alone, IPython,
    # Rich, carets, logging records) was scored blind at 31/47 and 61/69; its floor is the level its rules reached
    "wild/dev12": (0.93, 0.98),
    # wild/dev13 (CPython's standard-library printers other than the plain traceback: thread excepthook,
    # unraisablehook, atexit, logging's handleError, asyncio's handler, multiprocessing, _RemoteTraceback,
    # faulthandler, warnings; torch's DataLoader message) was scored blind at 24/37 and 58/60 (29 files), a second
    # round of 7 files at 7/9 and 13/14; its floor is the level its rules reached
    "wild/dev13": (0.97, 0.98),
    # wild/dev14 (Python tracebacks as third-party renderers print them: loguru's diagnose, better_exceptions, Rich
    # and Typer panels, IPython's ultratb layouts, per-line heads) was scored blind at 23/28 and 18/20; its floor
    # is the level its rules reached
    "wild/dev14": (0.96, 0.95),
    # wild/dev15 (a mixed round of cluster logs: Python tracebacks and warnings, the tokenizers fork warning, Spark
    # and Kafka stacks, Go panics, c10/glog/Paddle dumps, Rust, compute-sanitizer) was scored blind at 20/35 and
    # 44/44 (29 files), a second round of 2 files at 1/1 and 8/8; its floor is the level its rules reached
    "wild/dev15": (0.91, 1.0),
    # wild/dev16 (multi-rank Python output: tracebacks and warnings behind launcher and Ray prefixes, per-rank
    # repeats, torchrun's records and box, mpirun/horovodrun tags) was scored blind at 24/32 and 46/52 (23 files), a
    # second round of 1 file at 1/1 and 4/4;
    # its floor is the level its rules reached
    "wild/dev16": (1.0, 1.0),
    # wild/dev17 (Python tracebacks and warnings in training and serving logs: chains, exception groups, SyntaxError
    # carets, multi-line messages, rank/pdsh/Ray/vLLM prefixes, journald in other locales, a bar before a warning)
    # was scored blind at 30/38 and 40/48 (28 files), a second round of 5 files at 7/7 and 13/13; its floor is the
    # level its rules reached
    "wild/dev17": (0.88, 1.0),
    # wild/dev18 (non-Python printers around GPU clusters: JVM stacks under log4j heads, Go panics and goroutine
    # dumps, Rust panics, glog/dmlc/c10 dumps, NCCL, gdb, compute-sanitizer, Node.js, .NET) was scored blind at
    # 28/37 and 102/103 (34 files), a second round of 4 files at 4/4 and 1/3; its floor is the level its rules reached
    "wild/dev18": (0.97, 0.97),
    # wild/dev19 (output behind relay and viewer prefixes: compose, kubectl, CRI, Heroku, Cloud Foundry, Ray, pdsh,
    # journald, a stream logger; records of one second that stay apart) was scored blind at 9/13 and 70/72, a second
    # round of 3 files (Celery's redirected stdout) at 2/3; its floor is the level its rules reached
    "wild/dev19": (0.87, 1.0),
    # wild/dev20 (inference serving and data pipelines: gunicorn, uvicorn and Starlette exception groups, pm2,
    # Airflow's task runner, Celery, Ray Serve, PySpark in Java stacks, TGI's launcher) was scored blind at 16/20
    # and 37/37, a second round of 5 files (Dask's and tornado's records without a time, gunicorn around mlflow) at
    # 2/6 and 26/26; its floor is the level its rules reached
    "wild/dev20": (0.96, 1.0),
    # wild/dev21 (Python tracebacks in training, serving and CI log contexts: CI timestamps, relay prefixes, logging
    # formatters, torch elastic's shutdown records, messages over many lines, chains) was scored blind at 39/48 and
    # 53/69; after its rules 45/48 and 54/68 (one label corrected from logging's stack_info); the floor is that level
    "wild/dev21": (0.93, 0.79),
    # wild/dev22 (non-Python printers around GPU clusters: sanitizers and valgrind, Rust panics and anyhow/eyre
    # reports, Java stacks under log4j heads, gdb thread dumps, glog/absl CHECK failures, UCX and Open MPI signal
    # reports, nvidia-smi, JSON and config dumps) was scored blind at 36/50 and 86/87; after its rules 43/50 and
    # 86/87; its floor is the level its rules reached
    "wild/dev22": (0.85, 0.98),
    # wild/dev23 (Python tracebacks in GPU training framework logs: torch elastic's and mp.spawn's launchers, Ray and
    # verl, Composer, mmcv, JAX, pip builds, threading and unraisable reports, loguru and Rich) was scored blind at
    # 29/39 and 67/74, after its rules 33/39 and 83/85 (with its pip pastes then labelled pip line by pip line); a
    # second round of 3 files at 3/3 and 22/22 against those rules; with pip's error box one event, as dev24 reads it,
    # the floor is the level reached (37/43 and 83/85)
    "wild/dev23": (0.86, 0.97),
    # wild/dev24 (Python tracebacks and the lines around them on the ops side of ML clusters: KServe, BentoML, MLflow
    # under gunicorn, JupyterHub's tornado records, Django, Flask, Celery, Dask in pytest, Prefect, optuna, wandb,
    # Katib, pip's build-error boxes) was scored blind at 18/32 and 93/103, after its rules 29/32 and 103/103; a
    # second round of 4 files (pip's boxes, Dask's Compute Failed) at 3/4 and 4/4, a third of 2 (pip 20-21's
    # "Command errored out" record) blind at 0/2 and 7/7; its floor is the level reached, 34/38 and 114/114
    "wild/dev24": (0.89, 1.0),
    # wild/dev25 (Go panics and goroutine dumps of k8s components, device plugins and exporters, log4j Java stacks
    # of Kafka Connect, Spark on YARN and Flink, Elasticsearch's and Logstash's layouts, Rust panics, glog/absl,
    # Node) was scored blind at 23/32 and 79/81, a second round of 11 files at 6/14 and 21/22; its floor is the
    # level its rules reached (most misses left are paste artifacts: prose or a Markdown tag above a dump, a
    # terminal's wrap under a long paragraph, a tab a copy put in klog's head)
    "wild/dev25": (0.78, 0.97),
    # wild/dev26 (Python tracebacks around the Hugging Face libraries and notebooks: IPython 7 and 8, Colab and
    # JupyterLab copies, ComfyUI's records and dialog, Windows paths, Flask's and Tornado's records, RecursionError,
    # SyntaxError reports, chains) was scored blind at 20/32 and 33/35, a second round of 4 files (ComfyUI's dialog,
    # a VS Code copy) at 3/4 and 4/4 against the first round's rules; its floor is the level its rules reached
    # (30/36 and 37/39; misses left are paste artifacts: quote markers, flattened numbering, a trimmed exception line)
    "wild/dev26": (0.83, 0.94),
    # wild/dev27 (native crash and error output on GPU nodes: c10 frames and FatalSignalHandler dumps, faulthandler,
    # absl/glog checks and TSL's stack trace, gdb, Open MPI boxes, UCX, TensorRT/onnxruntime records, nvcc under make
    # and pip, dmesg and journal kernel traces) was scored blind at 19/30 and 108/108 (then one gdb stop relabelled
    # to the corpus's convention, 29 events); its rules reached 23/29 and 110/110, and a later round's rule for UCX's
    # message split at its newlines under one prefix 27/29 (left: a box cut before its closing rule, a vendor's
    # signal report); its floor is that level
    "wild/dev27": (0.93, 1.0),
    # wild/dev30 (multi-process launcher output, every line behind its process's prefix: srun, Open MPI's and
    # PRRTE's tags, horovodrun, mpiexec -prepend-rank, torchrun --tee, pdsh, Ray, vLLM and SkyPilot relays,
    # kubectl --prefix, Determined) was scored blind at 15/21 and 155/159, after its rules 18/21 and 158/159; a
    # second round of 2 files at 1/2 and 5/5; its floor is the level reached (19/23 and 163/164; left: Determined's
    # line led by a blank before horovodrun's stamp, a Ray worker's native frames, and an error record before the
    # interpreter's own traceback, which the rules join as logger.exception's)
    "wild/dev30": (0.82, 0.99),
    # wild/dev28 (build output on GPU clusters: GCC's and Clang's diagnostics with include stacks, notes and carets,
    # nvcc's EDG diagnostics, ninja's FAILED blocks, CMake's messages, pip's and torch's extension builds) was scored
    # blind at 23/51 and 66/73; its floor is the level its rules reached (48/51 and 66/73; left: a docker build
    # prefix not read as one, a RuntimeWarning and a RuntimeError whose messages go on over lines, and indented pip
    # and build-script lines a generic deeper-line rule joins to the line above)
    "wild/dev28": (0.94, 0.90),
    # wild/dev29 (errors of ML compilers and frameworks other than eager PyTorch: JAX's filtered tracebacks and
    # XlaRuntimeError, XLA's RET_CHECK stack, TensorFlow's glog records, statuses and notebook tracebacks, dynamo's
    # records and BackendCompilerFailed, Triton's CompilationError, ONNX Runtime in Python and .NET, TensorRT) was
    # scored blind at 21/34 and 82/85 (one label, left out by mistake, written after that run; then Hydra's line
    # relabelled to the corpus's convention), a second round of 6 files at 6/8 and 4/5 against the first round's
    # rules; its floor is the level its rules reached (37/42 and 88/89; left: a Rich box cut above, JAX's message
    # paragraphs under IPython, a logging record's message cut above its traceback, an elision right under a
    # traceback, a shell command's continuation)
    "wild/dev29": (0.88, 0.98),
    # wild/dev31 (a random mix of LLM training and RL post-training stacks: verl's and OpenRLHF's drivers and Ray
    # workers, TRL's vLLM server, SGLang, torchtitan, unsloth, LLaMA-Factory, ms-swift, NeMo-RL, DeepSpeed, axolotl,
    # Liger, flash-attention) was scored blind at 37/42 and 108/110, after its rules 40/42 and 108/110; a second
    # round of 5 files at 3/3 and 28/28; its floor is the level reached (43/45 and 136/138; left: a traceback with
    # another process's records spliced between its frames, and a terminal copy that joined and padded its rows)
    "wild/dev31": (0.95, 0.98),
    # wild/dev32 (the infrastructure around GPU training as its output lands in node and job logs: nccl-tests'
    # tables, dcgmi diag's table, DCGM and the device plugin, kubelet and containerd under journald, volcano's klog,
    # controller-runtime's zap records and stacktraces, the kernel's Xid lines, hung-task and unwinder dumps, Slurm's
    # daemons, the fabric manager under systemd, UCX, ibstat and ibv_devinfo) was scored blind at 12/22 and 200/213;
    # its floor is the level its rules reached (18/22 and 201/213; left: dcgmi diag's table cut before its closing
    # rule (held rows are read again alone, as Ray Tune's), nccl-tests' header with its '#' lost in the paste, a
    # terminal's wrap confirmed by no record after it, frames under prose that ends with a colon)
    "wild/dev32": (0.81, 0.94),
    # wild/dev33 (Python errors from notebooks, IDEs and Windows/macOS desktop setups: conda's error report, pip's
    # boxes and verbose records, PowerShell's error records, cmd.exe, ComfyUI's records, dialog and Markdown report,
    # ipykernel's record with ultratb, asyncio's repr over lines, VS Code's copied notebook error, Streamlit's and
    # text-generation-webui's copies, PyInstaller) was scored blind at 28/44 and 85/101; its floor is the level its
    # rules reached (42/44 and 96/101; left: a PowerShell record whose command's name wrapped before its " : ",
    # a traceback copied with every newline doubled, an installer's echo lines under a line ending with ':'); a
    # second round of 4 files (PowerShell's records, VS Code's copy) at 4/4 and 7/7 against those rules
    "wild/dev33": (0.95, 0.95),
    # wild/dev34 (LLM inference serving stacks: vLLM's engine-core and worker prefixes, Ray Serve's controller and
    # RayTaskError, text-generation-inference's launcher, Triton's glog records and tables, TensorRT-LLM and Open
    # MPI, llama.cpp's server and ggml's CUDA check, Ollama's journald Go stacks and GIN lines, LMDeploy, SGLang) was
    # scored blind at 21/28 and 123/123, after its rules 23/28; a second round of 5 files at 2/4 and 24/24, 3/4
    # after one more rule; its floor is the level reached (26/32 and 147/147; left: a framed table and an Open MPI
    # help box cut before their closing rule, Open MPI frames of two ranks interleaved with their report's head cut,
    # Triton records behind a log viewer's severity and time, Docker Desktop's time before a list under its
    # header, a CI paste whose grep separator stands between two parts of one traceback)
    "wild/dev34": (0.81, 0.99),
    # wild/dev35 (orchestration and data pipelines around training: Airflow's task, log-reader, Celery and pod
    # manager lines, Dask's records and Compute Failed fields, Ray Data's worker prefixes, Prefect, Dagster, Argo and
    # Kubeflow Pipelines, Flyte, Metaflow, MLflow Projects, Spark, Beam and Dataflow, datasets' map) was scored blind
    # at 23/31 and 129/131; its floor is the level its rules reached (25/31 and 129/131; left: a message ending in a
    # newline before its traceback, Dagster's comma-joined frames, Flyte's message over lines, a client-side Compute
    # Failed field no released Dask prints, prose ending in ':' before a traceback, Metaflow's indented echo)
    "wild/dev35": (0.80, 0.98),
    # wild/dev36 (Python tracebacks in the shapes of CPython 3.11-3.14 and its ecosystem: position markers, the new
    # REPL, exception groups and PEP 678 notes, trio's and anyio's MultiError details, RecursionError, SyntaxError
    # hints, the free-threaded build's GIL warning, -X importtime, pytest's report styles) was scored blind at 22/31
    # and 41/45; its floor is the level its rules reached (27/31 and 43/45; left: paste artifacts, a Markdown heading
    # under an exception line, two pytest reports cut above their titles, a terminal's wrap of a warning)
    "wild/dev36": (0.87, 0.95),
}


def _score(part: str) -> tuple[Counter, Counter, list[str]]:
    d = CORPUS / part
    if not (d / "labels").is_dir():
        pytest.skip(f"{d}/labels is not in this checkout")
    met: Counter = Counter()
    total: Counter = Counter()
    misses: list[str] = []
    for path, labels in labelled_files([d]):
        s = score_file(path, labels)
        met.update(s.met)
        total.update(s.total)
        misses += s.misses
    return met, total, misses


@pytest.mark.parametrize("part", sorted(FLOORS))
def test_labelled_part_keeps_its_level(part: str) -> None:
    met, total, misses = _score(part)
    multi = sum(v for k, v in total.items() if k != "single")
    multi_met = sum(v for k, v in met.items() if k != "single")
    floor_multi, floor_single = FLOORS[part]
    detail = "\n".join(misses[:40])
    assert multi_met >= floor_multi * multi, f"{part}: {multi_met}/{multi} multiline events whole\n{detail}"
    assert met["single"] >= floor_single * total["single"], (
        f"{part}: {met['single']}/{total['single']} single lines alone\n{detail}")


def test_held_out_part_is_scored_without_a_floor_yet() -> None:
    _met, total, _misses = _score("wild/test")
    assert sum(total.values()) > 0  # scored; its floor comes once the rules are final
