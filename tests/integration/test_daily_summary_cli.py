"""`sluice summary` reads one day back from Elasticsearch and folds it per project."""

from __future__ import annotations

import asyncio
import json
from pathlib import Path

from click.testing import CliRunner

from devtools.testing.elasticsearch import corpus_events, settings_for
from streams.cli.main import cli
from streams.clients import es_client
from streams.config import Settings
from streams.sinks.elasticsearch.request import IndexNamer, document
from streams.sinks.elasticsearch.sink import HotSink

FILES = ("training/bigscience_tr1-13B_init_then_cuda_oom_at_barrier.log",
         "training/sglang_nccl_watchdog_timeout_hardwrapped.log",
         "training/ms_swift_sft_qwen2_7b_self_cognition_2024.log")
DAY_MS = 1_764_374_400_000  # 2025-11-29T00:00:00Z


def test_summary_of_a_day_counts_jobs_failures_and_top_errors(stack: Settings, corpus: Path, unique_name,
                                                               new_topic) -> None:
    project = unique_name("sum").replace("-", "")
    settings = settings_for(stack, project, new_topic("sum-dlq"), new_topic("sum-metrics"))
    sink = HotSink(settings.elasticsearch, settings.routing, settings.hot)
    asyncio.run(sink.start())  # installs the templates, as the hot worker does
    asyncio.run(sink.close())
    namer = IndexNamer(settings.routing)
    es = es_client(settings.elasticsearch)
    values = []
    for n, path in enumerate(FILES):
        for i, value in enumerate(corpus_events([corpus / path], project)):
            value["task_id"] = f"job-{n}"
            value["timestamp"] = DAY_MS + 3600_000 * n + i  # all on 2025-11-29
            values.append(value)
    lines = []
    for value in values:
        doc, ts = document(value)
        lines.append({"index": {"_index": namer.index_for(value, ts), "_id": value["event_id"]}})
        lines.append(doc)
    assert not es.bulk(operations=lines, refresh="wait_for")["errors"]

    result = CliRunner().invoke(cli, ["summary", "--day", "2025-11-29", "--project", project, "--index", "-o", "json"])
    assert result.exit_code == 0, result.output
    (report,) = json.loads(result.stdout)["reports"]
    events = [v for v in values if "message" in v]
    assert report["jobs_seen"] == 3
    assert report["events"] == len(events)
    assert report["metric_points"] == len(values) - len(events) > 0
    expected = {}
    for v in events:
        if v["error_class"]:
            expected[v["error_class"]] = expected.get(v["error_class"], 0) + 1
    assert report["failures_by_class"] == expected
    assert report["jobs_failed"] == 2, "the OOM job and the NCCL job; the SFT run is healthy"
    indexed = es.get(index=f"sluice-summary-{project}", id=f"{project}/2025-11-29")["_source"]
    assert indexed["events"] == report["events"]
