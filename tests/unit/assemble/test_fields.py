"""Events and metric points as the contract takes them: lifted fields, source metadata, bounds, encoding."""

from __future__ import annotations

import calendar
import io
import json
import math

import fastavro
import pytest

from streams.assemble.decode import decode_record
from streams.assemble.fields import EventBuilder, FieldLimits
from streams.assemble.lines import Block, empty_source
from streams.assemble.metadata import SourceMetadata
from streams.assemble.pipeline import Assembler, RawRecord
from streams.assemble.route import ProjectRouter
from streams.avro_writer import body_writer
from streams.config import RoutingSettings
from streams.contracts import parsed_schema
from streams.sinks.elasticsearch.request import IndexNamer
from streams.watch.observation import from_record

READ = calendar.timegm((2025, 4, 5, 12, 0, 0)) * 1000
CANON_MS = calendar.timegm((2025, 4, 5, 10, 23, 45)) * 1000 + 123
CANONICAL = ('{ "timestamp": "2025-04-05T10:23:45.123Z", "level": "INFO", "task_id": "train-qwen7b-lora-001", '
             '"model_name": "qwen-7b", "task_type": "lora_finetune", "phase": "training", "epoch": 3, "step": 1500, '
             '"loss": 2.17, "gpu_memory_mb": 18432, "gpu_utilization_pct": 87 }')
CONTRACT = {"event": "log_event", "metric": "metric_point"}


def feed(lines: list[str | bytes], *, key: bytes = b"node-1|train.log", read: int = READ, **opts) -> list:
    asm = Assembler(**opts)
    out = []
    for i, line in enumerate(lines):
        value = line if isinstance(line, bytes) else (line + "\n").encode()
        out += asm.feed(RawRecord("logs.raw", 0, i, value, key, read + i))
    return out + asm.flush_all()


def encoded(out) -> dict:
    """The output through the real Avro writer and back: what a consumer of the topic reads."""
    contract = CONTRACT[out.kind]
    body = body_writer(contract)(out.value)
    return fastavro.schemaless_reader(io.BytesIO(body), parsed_schema(contract))


def test_canonical_record_is_a_metric_point_with_every_field() -> None:
    (out,) = feed([CANONICAL])
    assert out.kind == "metric" and out.topic == "logs.metrics"
    point = encoded(out)
    assert point["timestamp"].timestamp() * 1000 == CANON_MS, "the record's own time"
    assert (point["task_id"], point["model_name"], point["task_type"], point["phase"]) == (
        "train-qwen7b-lora-001", "qwen-7b", "lora_finetune", "training")
    assert (point["epoch"], point["step"]) == (3.0, 1500)
    assert point["metrics"] == {"loss": 2.17, "gpu_memory_mb": 18432.0, "gpu_utilization_pct": 87.0}
    obs = from_record(out.value)  # the watch stage's idle rule reads the utilisation from it
    assert obs.gpu_util_pct == 87.0 and obs.task_id == "train-qwen7b-lora-001"


def test_record_without_step_metrics_is_an_event_with_typed_fields_and_its_task_type_index() -> None:
    line = CANONICAL.replace('"loss": 2.17, ', "").replace('"gpu_utilization_pct": 87 ', '"note": "ckpt" ')
    (out,) = feed([line])
    ev = encoded(out)
    assert out.kind == "event" and ev["level"] == "INFO" and ev["task_type"] == "lora_finetune"
    assert ev["gpu_memory_mb"] == 18432.0 and ev["step"] == 1500 and ev["epoch"] == 3.0
    assert ev["attributes"]["note"] == "ckpt"
    namer = IndexNamer(RoutingSettings())
    assert namer.index_for(out.value, out.value["timestamp"]) == "sluice-logs-default-lora_finetune-2025.04.05"


def test_a_traceback_after_records_keeps_their_task() -> None:
    record = '{"task_id": "t-7", "task_type": "sft", "msg": "step done", "level": "INFO"}'
    out = feed([record, "Traceback (most recent call last):", '  File "train.py", line 3, in <module>',
                "RuntimeError: boom", "done"], idle_timeout_ms=60_000)
    tb = next(o.value for o in out if o.value.get("multiline_kind") == "python_traceback")
    assert (tb["task_id"], tb["task_type"], tb["error_type"]) == ("t-7", "sft", "RuntimeError")


def test_labels_win_over_the_record_which_stays_in_attributes() -> None:
    b = block(['{"task_id": "from-record", "msg": "x"}'], labels={"task_id": "from-label"})
    ev = EventBuilder().build(b, "logs.raw", 0).value
    assert ev["task_id"] == "from-label" and ev["attributes"]["task_id"] == "from-record"


def test_single_json_line_message_is_its_message_key() -> None:
    (out,) = feed(['{"msg": "checkpoint saved", "level": "info", "path": "/ckpt/1"}'])
    assert out.value["message"] == "checkpoint saved" and out.value["attributes"]["path"] == "/ckpt/1"


@pytest.mark.parametrize(("line", "kept"), [
    ('{"timestamp": "9999-01-01T00:00:00Z", "msg": "far future"}', "9999-01-01T00:00:00Z"),
    ('{"timestamp": "1971-01-01T00:00:00Z", "msg": "far past"}', "1971-01-01T00:00:00Z"),
    ('{"ts": 99999999999999999999, "msg": "epoch from the year 5 million"}', None),
    ("2099-12-31 23:59:59 ERROR a clock gone wrong", "2099-12-31T23:59:59.000Z"),
])
def test_own_time_outside_the_window_is_not_believed(line: str, kept: str | None) -> None:
    (out,) = feed([line])
    ev = encoded(out)
    assert ev["timestamp"].timestamp() * 1000 == READ, "read time, not the line's"
    if kept is not None:
        assert ev["attributes"]["timestamp"] == kept and "timestamp_out_of_window" in ev["attributes"]["sluice.flags"]
    namer = IndexNamer(RoutingSettings())
    assert namer.index_for(out.value, out.value["timestamp"]).endswith("-2025.04.05")


def test_times_outside_years_1970_to_9999_are_not_believed_even_offline() -> None:
    b = block(['{"timestamp": "0001-01-01T00:00:00Z", "msg": "x"}'])
    ev = EventBuilder(limits=FieldLimits.offline()).build(b, "file", 0).value
    assert ev["timestamp"] == READ and "timestamp_out_of_window" in ev["attributes"]["sluice.flags"]


def test_year_99999_makes_no_index() -> None:
    (out,) = feed(['{"timestamp": "99999-01-01T00:00:00Z", "msg": "x"}'])
    assert out.value["timestamp"] == READ and out.value["attributes"]["timestamp"] == "99999-01-01T00:00:00Z"


def test_an_out_of_window_time_takes_the_sources_last_good_time() -> None:
    out = feed(["2025-04-05 11:00:00 INFO fine", "2099-01-01 00:00:00 INFO wrong clock"])
    # plus the 1 ms between the two lines' reads (streams.assemble.timebase)
    assert [o.value["timestamp"] for o in out] == [READ - 3600_000, READ - 3600_000 + 1]


def test_window_is_configurable_and_off_offline() -> None:
    line = '{"timestamp": "2019-01-01T00:00:00Z", "msg": "old backlog"}'
    assert feed([line])[0].value["timestamp"] == READ  # more than two years before its read time
    old = calendar.timegm((2019, 1, 1, 0, 0, 0)) * 1000
    assert feed([line], limits=FieldLimits(max_past_ms=None))[0].value["timestamp"] == old
    assert FieldLimits.offline().max_past_ms is None


@pytest.mark.parametrize("line", [
    '{"step": 9223372036854775808, "msg": "x"}',
    '{"step": -9223372036854775809, "max_steps": 3, "msg": "x"}',
    " iteration 99999999999999999999999/ 5 | lm loss: 1.0 |",
    '{"epoch": ' + "9" * 400 + ', "msg": "x"}',
])
def test_numbers_that_do_not_fit_the_contract_are_text_and_the_output_encodes(line: str) -> None:
    (out,) = feed([line])
    value = encoded(out)  # the real Avro writer: never a failing encode
    attrs = out.value.get("attributes") or {}
    assert value.get("step") is None and value.get("epoch") is None
    if out.kind == "event":
        assert "out_of_range" in attrs["sluice.flags"]
        assert any(v.isdigit() or v.lstrip("-").isdigit() for v in attrs.values())


def test_megatron_nan_loss_is_a_metric_point_that_encodes_nan() -> None:
    (out,) = feed([" iteration       20/     100 | lm loss: NAN | grad norm: nan | loss scale: 1.0 |"])
    point = encoded(out)
    assert out.kind == "metric" and point["step"] == 20
    assert math.isnan(point["metrics"]["loss"]) and math.isnan(point["metrics"]["grad_norm"])


@pytest.mark.parametrize("line", [
    '{"gpu_utilization_pct": 3, "gpu_memory_mb": 100}',  # GPU figures a job logs: the idle rule's input
    "epoch: 0|step: 12|ppo_ep: 1|act_loss: 0.1|cri_loss: 0.2|unsuper_loss: 0.0",  # DeepSpeed-Chat: *_loss
])
def test_step_lines_without_a_plain_loss_are_metric_points(line: str) -> None:
    (out,) = feed([line])
    assert out.kind == "metric" and out.topic == "logs.metrics"
    encoded(out)


def test_hf_dict_nan_feeds_the_bad_loss_rule() -> None:
    (out,) = feed(["{'loss': nan, 'grad_norm': inf, 'learning_rate': 1e-05, 'epoch': 0.5}"])
    obs = from_record(encoded(out) | {"timestamp": READ})
    assert math.isnan(obs.loss)


def test_gpu_figures_in_a_multiline_event_are_typed_fields() -> None:
    b = block(['{"gpu_utilization_pct": 4, "gpu_memory_mb": 100, "msg": "stalled?"}', "  waiting on loader"])
    ev = EventBuilder().build(b, "logs.raw", 0).value
    assert ev["gpu_utilization_pct"] == 4.0 and ev["gpu_memory_mb"] == 100.0
    assert from_record(ev).gpu_util_pct == 4.0


def test_attributes_are_bounded_in_count_and_length() -> None:
    record = {f"k{i:03d}": i for i in range(100)} | {"long": "x" * 5000, "msg": "wide"}
    (out,) = feed([json.dumps(record)], limits=FieldLimits(max_attributes=10, max_attribute_chars=64))
    attrs = out.value["attributes"]
    assert len(attrs) <= 10 and int(attrs["sluice.attributes_dropped"]) > 90
    assert "attributes_dropped" in attrs["sluice.flags"] and all(len(v) <= 64 for v in attrs.values())
    encoded(out)


def test_a_records_keys_named_as_sluices_own_attributes_are_kept_beside_them() -> None:
    # A record's own "format" (a checkpoint's), "sluice.flags" or "sluice.attributes_dropped" must neither be
    # overwritten by what Sluice writes under that name nor pass for what Sluice says about the event.
    record = {"msg": "saving", "format": "safetensors", "sluice.flags": "attributes_dropped",
              "sluice": {"attributes_dropped": "5"}}
    (out,) = feed([json.dumps(record)])
    attrs = encoded(out)["attributes"]
    assert attrs["format"] == "json" and attrs["record.format"] == "safetensors"
    assert "sluice.flags" not in attrs and attrs["record.sluice.flags"] == "attributes_dropped"
    assert "sluice.attributes_dropped" not in attrs and attrs["record.sluice.attributes_dropped"] == "5"


def test_keys_cut_to_the_same_length_keep_every_value() -> None:
    record = {"msg": "wide", "a" * 300: "1", "a" * 299 + "b": "2", "a" * 200: "3", "a" * 128: "4"}
    (out,) = feed([json.dumps(record)])
    attrs = encoded(out)["attributes"]
    assert sorted(v for k, v in attrs.items() if k.startswith("a")) == ["1", "2", "3", "4"]
    assert all(len(k) <= 128 for k in attrs) and "attribute_truncated" in attrs["sluice.flags"]


# -- source metadata ---------------------------------------------------------------------------------

def block(texts: list[str], labels: dict | None = None, source: dict | None = None) -> Block:
    return Block("src", texts, 0, len(texts) - 1, 0, None, None, READ, READ, source or empty_source(),
                 labels or {})


FLUENT_BIT = {"log": "INFO step done\n", "stream": "stdout", "kubernetes": {
    "namespace_name": "ml", "pod_name": "llama-master-0", "container_name": "pytorch", "host": "gpu-node-3",
    "labels": {"training.kubeflow.org/job-name": "llama-ft", "training.kubeflow.org/replica-type": "master",
               "training.kubeflow.org/replica-index": "0", "app.kubernetes.io/part-of": "llm"},
    "annotations": {"sluice.io/task-type": "sft", "kubectl.kubernetes.io/last-applied-configuration": "{" * 300}}}
VECTOR = {"message": "INFO step done", "source_type": "kubernetes_logs", "kubernetes": {
    "pod_namespace": "ml", "pod_name": "rc-head-x", "container_name": "ray-head", "pod_node_name": "gpu-node-4",
    "pod_labels": {"ray.io/cluster": "rc", "ray.io/node-type": "head", "sluice.io/project": "ray-jobs"},
    "pod_annotations": {"sluice.io/model-name": "qwen-7b"}}}
FILEBEAT = {"message": "INFO step done", "log": {"offset": 10, "file": {"path": "/var/log/containers/x.log"}},
            "kubernetes": {"namespace": "ml", "pod": {"name": "vc-worker-3"}, "node": {"name": "gpu-node-5"},
                           "labels": {"volcano_sh/job-name": "vc", "volcano_sh/task-spec": "worker",
                                      "volcano_sh/task-index": "3", "app_kubernetes_io/part-of": "volcano-jobs"},
                           "annotations": {"sluice_io/task-type": "pretrain"}}}


@pytest.mark.parametrize(("envelope", "want"), [
    (FLUENT_BIT, {"project": "llm", "task_id": "llama-ft", "task_type": "sft", "node_role": "master", "rank": 0,
                  "host": "gpu-node-3", "pod": "llama-master-0"}),
    (VECTOR, {"project": "ray-jobs", "task_id": "rc", "model_name": "qwen-7b", "node_role": "head", "rank": None,
              "host": "gpu-node-4", "pod": "rc-head-x", "namespace": "ml"}),
    (FILEBEAT, {"project": "volcano-jobs", "task_id": "vc", "task_type": "pretrain", "node_role": "worker",
                "rank": 3, "host": "gpu-node-5", "pod": "vc-worker-3"}),
], ids=["fluent_bit", "vector", "filebeat_dedotted"])
def test_kubernetes_metadata_of_each_agent_fills_the_fields(envelope: dict, want: dict) -> None:
    (line,) = decode_record(json.dumps(envelope).encode())
    assert "kubectl.kubernetes.io/last-applied-configuration" not in line.labels, "bulky annotations stay out"
    b = Block("k", [line.text], 0, 0, 0, None, None, READ, READ, line.source, line.labels)
    ev = EventBuilder(ProjectRouter(known=None)).build(b, "logs.raw", 0).value
    assert ev["project"] == want["project"]
    for f in ("task_id", "task_type", "model_name"):
        assert ev[f] == want.get(f), f
    src = ev["source"]
    assert (src["node_role"], src["rank"], src["host"], src["pod"], src["namespace"]) == (
        want["node_role"], want["rank"], want["host"], want["pod"], "ml")
    assert encoded(type("O", (), {"kind": "event", "value": ev})())["source"]["rank"] == want["rank"]


def test_metadata_keys_are_configuration() -> None:
    meta = SourceMetadata({"task_id": ["team.example.com/run"], "rank": []})
    b = block(["x"], labels={"team.example.com/run": "r-9", "training.kubeflow.org/job-name": "ignored",
                             "rank": "4"})
    ev = EventBuilder(metadata=meta).build(b, "logs.raw", 0).value
    assert ev["task_id"] == "r-9" and ev["source"]["rank"] is None
    with pytest.raises(ValueError, match="unknown field"):
        SourceMetadata({"tenant": ["x"]})


def test_source_values_of_the_wrong_type_do_not_break_the_contract() -> None:
    src = empty_source() | {"host": 12345, "namespace": {"odd": 1}, "rank": 2**40}
    ev = EventBuilder().build(block(["x"], source=src), "logs.raw", 0).value
    got = encoded(type("O", (), {"kind": "event", "value": ev})())
    assert got["source"]["host"] == "12345" and got["source"]["rank"] is None
    assert "rank_out_of_range" in ev["attributes"]["sluice.flags"]


def test_a_rank_label_too_large_for_an_int_is_flagged() -> None:
    ev = EventBuilder().build(block(["x"], labels={"rank": "99999999999"}), "logs.raw", 0).value
    assert ev["source"]["rank"] is None and ev["attributes"]["rank"] == "99999999999"


def test_the_task_a_source_named_survives_a_restart() -> None:
    from streams.assemble.state import restore_source, source_state

    first = Assembler(idle_timeout_ms=60_000)
    lines = ['{"task_id": "t-9", "task_type": "dpo", "msg": "start"}', "Traceback (most recent call last):",
             '  File "x.py", line 1, in <module>']
    for i, line in enumerate(lines):
        first.feed(RawRecord("logs.raw", 0, i, (line + "\n").encode(), b"k", READ + i))
    state = source_state(first, "k")
    second = Assembler(idle_timeout_ms=60_000)
    restore_source(second, state)
    out = second.feed(RawRecord("logs.raw", 0, 3, b"ValueError: x\n", b"k", READ + 3)) + second.flush_all()
    (tb,) = [o.value for o in out if o.value.get("multiline_kind")]
    assert (tb["task_id"], tb["task_type"]) == ("t-9", "dpo")
