"""Per-class alerts: OOM, CUDA error, NCCL timeout, a killed rank, one alert per (task, class) however many
ranks report it. This is the mode of sources without a task_id, and of every source with job incidents
turned off (``watch.incidents``); tasks get job incidents otherwise (test_first_failure.py)."""

from __future__ import annotations

from pathlib import Path

from helpers import MIN, corpus_events, obs

from devtools.testing.watch import MemoryWatchStore
from streams.watch import WatchEngine, WatchSettings

OOM = "training/bigscience_tr1-13B_init_then_cuda_oom_at_barrier.log"
KV_OOM = "training/vllm_serve_jamba_cuda_oom_kv_cache.log"
NCCL = "training/sglang_nccl_watchdog_timeout_hardwrapped.log"
NCCL_CHAINED = "training/vllm_worker_nccl_illegal_memory_watchdog_chained.log"
CHILD_FAILED = "training/accelerate_deepspeed_6gpu_sigkill_childfailederror_x2.log"


def run(events: list[dict], conf: WatchSettings | None = None):
    conf = conf or WatchSettings(incidents=False)
    engine, store = WatchEngine(conf), MemoryWatchStore(conf)
    return [c for e in events for c in engine.observe(obs(e), store)], store


def test_oom_on_every_rank_is_one_alert_with_the_ranks_folded_in(corpus: Path) -> None:
    events = [e for r in range(4) for e in corpus_events(corpus / OOM, "t-oom", rank=r, host=f"n{r // 2}")]
    changes, _ = run(events)
    new = [c.alert for c in changes if c.new]
    assert [a["rule"] for a in new] == ["cuda_oom"]
    final = changes[-1].alert
    assert final["alert_id"] == new[0]["alert_id"]
    assert final["count"] == 4 and final["details"]["ranks"] == "n0:0,n0:1,n1:2,n1:3"
    assert final["severity"] == "critical" and final["task_id"] == "t-oom"
    assert "OutOfMemory" in final["summary"] or "out of memory" in final["summary"].lower()


def test_kv_cache_oom(corpus: Path) -> None:
    changes, _ = run(corpus_events(corpus / KV_OOM, "t-kv"))
    assert {c.alert["rule"] for c in changes if c.new} == {"cuda_oom"}
    assert "torch.OutOfMemoryError" in changes[0].alert["details"]["error_type"]


def test_nccl_watchdog_timeout_lines_fold_into_one_alert(corpus: Path) -> None:
    changes, _ = run(corpus_events(corpus / NCCL, "t-nccl"))
    new = [c.alert for c in changes if c.new]
    assert [a["rule"] for a in new] == ["nccl_timeout"]
    assert changes[-1].alert["count"] == 5


def test_chained_nccl_and_cuda_errors_are_one_alert_each(corpus: Path) -> None:
    changes, _ = run(corpus_events(corpus / NCCL_CHAINED, "t-ill"))
    assert sorted(c.alert["rule"] for c in changes if c.new) == ["cuda_error", "nccl_error"]


def test_childfailederror_and_the_exitcode_line_are_one_signal_incident(corpus: Path) -> None:
    changes, _ = run(corpus_events(corpus / CHILD_FAILED, "t-kill"))
    new = [c.alert for c in changes if c.new]
    assert [a["rule"] for a in new] == ["signal"]
    assert changes[-1].alert["count"] == 4 and changes[-1].alert["details"]["signal"] == "SIGKILL"


def test_redelivered_events_are_not_counted_twice(corpus: Path) -> None:
    events = corpus_events(corpus / NCCL, "t-nccl")
    changes, _ = run(events + events)
    assert changes[-1].alert["count"] == 5


def test_cooldown_window_opens_a_new_incident_with_a_new_id(corpus: Path) -> None:
    conf = WatchSettings(incidents=False, cooldown_s=600)
    first = corpus_events(corpus / OOM, "t-oom", rank=0)
    inside = [{**e, "timestamp": e["timestamp"] + 9 * MIN, "event_id": e["event_id"] + "b"} for e in first]
    after = [{**e, "timestamp": e["timestamp"] + 10 * MIN, "event_id": e["event_id"] + "c"} for e in first]
    changes, _ = run(first + inside + after, conf)
    new = [c.alert for c in changes if c.new]
    assert len(new) == 2 and new[0]["alert_id"] != new[1]["alert_id"]
    assert [c.alert["count"] for c in changes] == [1, 2, 1]


def test_alert_ids_are_deterministic_across_replays(corpus: Path) -> None:
    events = corpus_events(corpus / OOM, "t-oom")
    assert run(events)[0][0].alert == run(events)[0][0].alert


def test_classes_not_configured_raise_nothing(corpus: Path) -> None:
    changes, _ = run(corpus_events(corpus / NCCL, "t"),
                     WatchSettings(incidents=False, incident_classes={"cuda_oom": "critical"}))
    assert changes == []


def test_avro_decoded_datetimes_are_event_time(corpus: Path) -> None:
    from datetime import UTC, datetime

    event = corpus_events(corpus / OOM, "t")[0]
    when = datetime.fromtimestamp(event["timestamp"] / 1000, tz=UTC)
    assert obs({**event, "timestamp": when}).ts_ms == event["timestamp"]


def test_a_source_without_a_task_id_alerts_per_class_with_incidents_on(corpus: Path) -> None:
    events = [{**e, "task_id": None} for e in corpus_events(corpus / NCCL, "unused")]
    changes, store = run(events, WatchSettings())
    assert [c.alert["rule"] for c in changes if c.new] == ["nccl_timeout"]
    assert not any(k.endswith("|first-failure") for k in store.incidents), "no job incident without a task"
