"""The kinds table: what each real failure event is to a job (root, collateral, report), and what its
message says about the rank. Events come from the corpus through the assemble core; the texts that no
corpus file carries are the printers' own format strings (ProcessGroupNCCL, NCCL, torch elastic)."""

from __future__ import annotations

from pathlib import Path

import pytest
from helpers import corpus_events

from streams.watch.incident_rules import (
    COLLATERAL,
    KINDS,
    PRECEDENCE,
    REPORT,
    ROLES,
    ROOT,
    failure_sign,
    reported_kind,
    rules_table,
)

SGLANG = "training/sglang_nccl_watchdog_timeout_hardwrapped.log"
ACCELERATE = "training/accelerate_deepspeed_6gpu_sigkill_childfailederror_x2.log"
ILLEGAL = "training/vllm_worker_nccl_illegal_memory_watchdog_chained.log"
BUS = "training/bigscience_tr1-13B_dataloader_bus_error_interleaved_tracebacks.log"
OOM = "training/bigscience_tr1-13B_init_then_cuda_oom_at_barrier.log"
VERL = "training/verl_fsdp_ray_nccl_warn_cuda_failure_700.log"


def signs(corpus: Path, rel: str) -> list[tuple[dict, object]]:
    return [(e, s) for e in corpus_events(corpus / rel, "t") if (s := failure_sign(e)) is not None]


def test_watchdog_timeouts_are_collateral_with_the_rank_and_how_long_the_collective_waited(corpus: Path) -> None:
    found = signs(corpus, SGLANG)
    assert found and all(s.role == COLLATERAL for _, s in found)
    timeout = next(s for e, s in found if "Watchdog caught collective operation timeout" in e["message"])
    assert (timeout.kind, timeout.rank, timeout.waited_ms) == ("nccl_timeout", 6, 600050)
    terminate = next(s for e, s in found if e["message"].startswith("terminate called"))
    assert terminate.kind == "nccl_timeout" and terminate.rank == 6, "the rank from [PG ID 0 ... Rank 6]"


def test_torch_elastic_reports_name_the_killed_rank_and_its_signal(corpus: Path) -> None:
    found = signs(corpus, ACCELERATE)
    kinds = [s.kind for _, s in found]
    assert kinds.count("launcher_exit") == 2 and kinds.count("childfailed_box") == 2
    exits = [s for _, s in found if s.kind == "launcher_exit"]
    assert [(s.rank, s.proc, s.signal) for s in exits] == [(None, "local_rank 4", "SIGKILL"),
                                                          (None, "local_rank 3", "SIGKILL")]
    boxes = [s for _, s in found if s.kind == "childfailed_box"]
    assert [(s.rank, s.host, s.signal) for s in boxes] == [(4, "r1n2a6000bittensor", "SIGKILL"),
                                                          (3, "r1n2a6000bittensor", "SIGKILL")]
    assert all(s.role == REPORT and reported_kind(s.signal, e["error_class"]) == "killed" for e, s in found
               if s.role == REPORT)
    assert {s.kind for _, s in found if s.role == COLLATERAL} == {"terminated"}, "Sending process ... SIGTERM"


def test_a_cuda_error_the_nccl_watchdog_noticed_is_the_rank_s_own(corpus: Path) -> None:
    found = signs(corpus, ILLEGAL)
    watchdog = next(s for e, s in found if "Process group watchdog thread terminated" in e["message"]
                    and e["message"].startswith("[rank3]"))
    assert (watchdog.kind, watchdog.role, watchdog.rank) == ("cuda_error", ROOT, 3)
    worker = next(s for e, s in found if "pid=350" in e["message"])
    assert (worker.kind, worker.proc) == ("nccl_error", "VllmWorkerProcess pid=350"), "unhandled cuda error: its own"


def test_dataloader_and_oom_tracebacks_are_root_with_the_line_that_says_so(corpus: Path) -> None:
    bus = [s for _, s in signs(corpus, BUS)]  # two ranks' tracebacks, interleaved on one stdout
    assert [(s.kind, s.role) for s in bus] == [("dataloader_worker", ROOT)] * len(bus) and bus
    assert bus[0].line is not None and bus[0].line.startswith("RuntimeError: DataLoader worker (pid 30882) is killed")
    (oom,) = [s for _, s in signs(corpus, OOM)]
    assert (oom.kind, oom.role) == ("cuda_oom", ROOT)


def test_nccl_warn_lines_are_no_failure(corpus: Path) -> None:
    found = signs(corpus, VERL)
    assert [s.kind for _, s in found] == ["cuda_error"], "the traceback; its NCCL WARN lines are not evidence"


def event(message: str, error_class: str | None = None, level: str | None = "ERROR", signal: str | None = None,
          error_type: str | None = None) -> dict:
    return {"message": message, "error_class": error_class, "level": level, "signal": signal,
            "error_type": error_type}


# The printers' own texts (ProcessGroupNCCL.cpp, NCCLUtils, TCPStore, torch elastic): no corpus file has them.
@pytest.mark.parametrize(("message", "error_class", "kind"), [
    ("[PG 0 Rank 3] NCCL watchdog thread terminated with exception: NCCL error: remote process exited or there "
     "was a network error, NCCL version 2.19.3\nncclRemoteError: A call failed possibly due to a network error or "
     "a remote process exiting prematurely.", "nccl_error", "peer_lost"),
    ("torch.distributed.DistBackendError: NCCL communicator was aborted on rank 1.", "nccl_error", "pg_aborted"),
    ("[PG ID 0 PG GUID 0(default_pg) Rank 25] Heartbeat monitor timed out! Process will be terminated after "
     "dumping debug info. workMetaList_.size()=2", None, "watchdog_hang"),
    ("torch.distributed.DistStoreError: Timed out after 901 seconds waiting for clients. 7/8 clients joined.",
     "python_exception", "rendezvous"),
    ("RuntimeError: [../third_party/gloo/gloo/transport/tcp/pair.cc:598] Connection closed by peer "
     "[10.0.0.2]:4917", "python_exception", "peer_lost"),
    ("torch.distributed.elastic.multiprocessing.api.SignalException: Process 4021 got signal: 15",
     "python_exception", "terminated"),
    ("RuntimeError: NCCL error in: ../torch/csrc/distributed/c10d/NCCLUtils.hpp:219, unhandled cuda error, "
     "NCCL version 2.14.3", "nccl_error", "nccl_error"),
])
def test_the_printers_texts(message: str, error_class: str | None, kind: str) -> None:
    error_type = message.split(":", 1)[0] if error_class == "python_exception" else None
    sign = failure_sign(event(message, error_class, error_type=error_type))
    assert sign is not None and sign.kind == kind
    assert sign.rank == (3 if "Rank 3]" in message else 25 if "Rank 25]" in message else None)


def test_deepspeed_launcher_exit_names_the_local_rank_and_signal() -> None:
    line = ("[2021-11-21 08:32:07,153] [ERROR] [launch.py:137:sigkill_handler] ['/usr/bin/python', '-u', "
            "'train.py', '--local_rank=3'] exits with return code = -9")
    sign = failure_sign(event(line))
    assert sign is not None and (sign.kind, sign.proc, sign.signal) == ("launcher_exit", "local_rank 3", "SIGKILL")


def test_unclassified_error_lines_count_only_with_the_frameworks_own_words() -> None:
    assert failure_sign(event("wandb: ERROR Connection refused: retrying in 4s")) is None
    assert failure_sign(event("ERROR:root:something failed", level="INFO")) is None
    assert failure_sign(event("step 10 loss 2.1", level="INFO")) is None
    assert failure_sign(event("FutureWarning: x", "python_exception", error_type="FutureWarning")) is None


def test_every_kind_has_a_role_and_a_reason() -> None:
    rows = rules_table()
    assert {name for name, _, _ in rows} == set(ROLES)
    assert all(role in (ROOT, COLLATERAL, REPORT) and len(why) > 20 for _, role, why in rows)
    assert set(PRECEDENCE) == {name for name, role in ROLES.items() if role == ROOT}, "every root kind ranked"
    assert all(k.text is not None or k.classes or k.signals or k.types is not None for k in KINDS)


def test_the_documented_table_is_the_code_s() -> None:
    doc = (Path(__file__).parents[3] / "docs" / "incidents.md").read_text()
    rows = [line for line in doc.splitlines() if line.startswith("| `")]
    documented = [tuple(cell.strip().strip("`") for cell in row.strip("|").split(" | ")) for row in rows]
    assert documented[:len(rules_table())] == rules_table()
