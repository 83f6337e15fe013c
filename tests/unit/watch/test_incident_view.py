"""How `sluice incident` prints an incident: the root event whole, the timeline by rank, the collateral."""

from __future__ import annotations

from pathlib import Path

from test_first_failure import Run

from devtools.testing.jobs import JOB_EPOCH_MS, job_events, oom_job, timeouts_everywhere_job
from streams.watch.incident_view import render, summary_line


def decided(job) -> tuple[dict, list[dict]]:
    events = job_events([job])
    (record,) = Run().events(events).later(events[-1], 3600_000).incidents.values()
    return record, events


def test_the_root_event_whole_then_every_rank_from_the_root(corpus: Path) -> None:
    record, events = decided(oom_job(corpus, JOB_EPOCH_MS))
    root = next(e for e in events if e["event_id"] == record["root_event_id"])
    text = render(record, root)
    body = text[text.index("Root cause:"):text.index("Timeline:")]
    assert all(f"  {line}" in body for line in root["message"].splitlines())
    rows = text[text.index("Timeline:"):text.index("Collateral:")].splitlines()[1:-1]
    assert len(rows) == len(record["timeline"]) and rows[0].split()[:4] == ["+0.000s", "oom-node-1:5", "root",
                                                                            "cuda_oom"]
    assert [r.split()[0] for r in rows] == sorted((r.split()[0] for r in rows), key=lambda s: (len(s), s))
    assert "nccl_timeout       4 rank(s)" in text
    gone = render(record, None)
    assert "not in the events index" in gone and record["root_message"] in gone


def test_an_unknown_root_says_so_with_when_the_collectives_began(corpus: Path) -> None:
    record, _ = decided(timeouts_everywhere_job(corpus, JOB_EPOCH_MS))
    text = render(record, None)
    assert "Root cause: unknown (only collateral errors" in text
    assert "the first timed-out collective began at 2026-01-01 00:00:00.000Z" in text
    assert "times from the first error" in text
    assert summary_line(record).split()[3] == "unknown"
