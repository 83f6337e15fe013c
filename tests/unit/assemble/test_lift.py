"""Field lifting from structured records: where a record is found, how its keys map, what NaN stays."""

from __future__ import annotations

import calendar
import math

import pytest

from streams.assemble.parse import parse_line
from streams.assemble.records import MAX_BRACKETS, find_record, logfmt, python_dict

READ = calendar.timegm((2025, 4, 5, 12, 0, 0)) * 1000
CANON_MS = calendar.timegm((2025, 4, 5, 10, 23, 45)) * 1000 + 123
# The source document's canonical ms-swift record, spaced as it prints it, and compact.
CANONICAL = ('{ "timestamp": "2025-04-05T10:23:45.123Z", "level": "INFO", "task_id": "train-qwen7b-lora-001", '
             '"model_name": "qwen-7b", "task_type": "lora_finetune", "phase": "training", "epoch": 3, "step": 1500, '
             '"loss": 2.17, "gpu_memory_mb": 18432, "gpu_utilization_pct": 87 }')
COMPACT = CANONICAL.replace("{ ", "{").replace(" }", "}").replace(": ", ":").replace(", ", ",")


def lifted(line: str):
    return parse_line(line, READ)


@pytest.mark.parametrize("line", [CANONICAL, COMPACT, CANONICAL.replace(", ", ",\t") + "  \t",
                                  "[rank0]: " + CANONICAL, "2025-04-05T10:23:45.123Z INFO " + COMPACT],
                         ids=["spaced", "compact", "tabs_and_trailing_blanks", "process_prefix", "grok_shape"])
def test_canonical_ms_swift_record_every_field(line: str) -> None:
    p = lifted(line)
    assert p.ts_ms == CANON_MS and p.level == "INFO"
    assert p.task == {"task_id": "train-qwen7b-lora-001", "model_name": "qwen-7b", "task_type": "lora_finetune",
                      "phase": "training"}
    assert p.epoch == 3.0 and p.step == 1500
    assert p.metrics == {"loss": 2.17, "gpu_memory_mb": 18432.0, "gpu_utilization_pct": 87.0}
    assert p.attributes == {}, "every key of the record is lifted"


def test_grok_shape_head_gives_time_and_level_when_the_record_has_none() -> None:
    p = lifted('2025-04-05T10:23:45.123+02:00 WARNING {"step": 7, "loss": 1.5}')
    assert p.ts_ms == CANON_MS - 2 * 3600_000 and p.level == "WARN" and p.step == 7 and p.fmt == "iso+json"


@pytest.mark.parametrize(("key", "value", "expected"), [
    ("timestamp", '"2025-04-05T10:23:45.123Z"', CANON_MS),
    ("@timestamp", '"2025-04-05T12:23:45.123+02:00"', CANON_MS),
    ("time", '"2025-04-05 10:23:45,123"', CANON_MS),
    ("asctime", '"2025-04-05 10:23:45,123"', CANON_MS),
    ("ts", str(CANON_MS / 1000), CANON_MS),  # zap: epoch seconds, a float
    ("time", str(CANON_MS), CANON_MS),  # pino: epoch ms
    ("created", str(CANON_MS // 1000), CANON_MS - 123),  # Python logging: epoch seconds
    ("ts", str(CANON_MS * 1_000_000), CANON_MS),  # epoch ns
    ("timestamp", f'"{CANON_MS * 1000}"', CANON_MS),  # epoch µs as text
])
def test_time_keys_iso_and_epoch(key: str, value: str, expected: int) -> None:
    assert lifted(f'{{"{key}": {value}, "msg": "x"}}').ts_ms == expected


def test_a_small_number_under_a_time_key_is_a_duration_not_a_time() -> None:
    p = lifted('{"time": 0.35, "step": 3}')
    assert p.ts_ms is None and p.attributes["time"] == "0.35"


@pytest.mark.parametrize(("record", "level"), [
    ('{"level": "warning"}', "WARN"), ('{"levelname": "ERROR"}', "ERROR"), ('{"severity": "CRITICAL"}', "FATAL"),
    ('{"lvl": "debug"}', "DEBUG"), ('{"level": 50}', "ERROR"), ('{"levelno": 30}', "WARN"),
    ('{"log.level": "info"}', "INFO"), ('{"log": {"level": "error"}}', "ERROR"),
])
def test_level_keys(record: str, level: str) -> None:
    assert lifted(record).level == level


@pytest.mark.parametrize("key", ["message", "msg", "event"])
def test_message_keys_and_the_exception_beside_them(key: str) -> None:
    p = lifted(f'{{"{key}": "save failed", "exc_info": "Traceback (most recent call last):\\nOSError: disk"}}')
    assert p.message == "save failed\nTraceback (most recent call last):\nOSError: disk"


@pytest.mark.parametrize("key", ["logger", "name", "logger_name"])
def test_logger_keys(key: str) -> None:
    assert lifted(f'{{"{key}": "swift.trainer", "msg": "x"}}').logger == "swift.trainer"


@pytest.mark.parametrize(("record", "step", "max_steps"), [
    ("{'global_step/max_steps': '1/94', 'loss': 1.0}", 1, 94),  # ms-swift console
    ('{"global_step": 240, "loss": 1.0}', 240, None),  # ms-swift logging.jsonl, HF log_history
    ("{'iteration': '10/100', 'loss': 1.0}", 10, 100),  # Megatron-SWIFT
    ('{"step": 1500.0}', 1500, None), ('{"step": "12"}', 12, None),
])
def test_step_families(record: str, step: int, max_steps: int | None) -> None:
    p = lifted(record)
    assert (p.step, p.max_steps) == (step, max_steps)


@pytest.mark.parametrize(("record", "mb"), [
    ("{'loss': 1.0, 'memory(GiB)': 4.87}", 4.87 * 1024),  # ms-swift: max_memory_reserved in GiB
    ('{"gpu_memory_gb": 2}', 2048.0), ('{"gpu_mem_mb": 512}', 512.0), ('{"gpu_memory": "18.5GB"}', 18.5 * 1024),
    ('{"gpu_memory": 18432}', 18432.0),  # no unit anywhere: MB, as the field
    ('{"peak_memory_reserved": 20.5}', 20.5 * 1024),  # torchtune, GiB
    ('{"gpu_memory_mb": "1.5GiB"}', 1536.0),  # a unit on the value wins
])
def test_gpu_memory_variants_in_mb(record: str, mb: float | None) -> None:
    assert lifted(record).metrics.get("gpu_memory_mb") == mb


@pytest.mark.parametrize("key", ["gpu_utilization_pct", "gpu_util", "utilization.gpu", "gpu_utilization"])
def test_gpu_utilization_keys(key: str) -> None:
    assert lifted(f'{{"{key}": "87%"}}').metrics["gpu_utilization_pct"] == 87.0


@pytest.mark.parametrize(("record", "field", "value"), [
    ('{"train_type": "lora"}', "task_type", "lora"),  # ms-swift's argument name
    ('{"model": "Qwen/Qwen2.5-7B"}', "model_name", "Qwen/Qwen2.5-7B"),
    ('{"model": {"name": "qwen"}}', "model_name", "qwen"),  # nested: the dotted path names it
])
def test_task_field_aliases(record: str, field: str, value: str) -> None:
    assert lifted(record).task[field] == value


def test_nested_metrics_by_leaf_and_unknown_keys_kept_as_text() -> None:
    p = lifted('{"metrics": {"loss": 0.5, "reward": {"mean": 1.25}}, "run": {"tags": ["a", "b"], "ok": true}}')
    assert p.metrics["loss"] == 0.5 and p.metrics["metrics_reward_mean"] == 1.25
    assert p.attributes == {"metrics.reward.mean": "1.25", "run.tags": '["a","b"]', "run.ok": "true"}


NAN_SPELLINGS = [
    '{"loss": NaN}', '{"loss": "nan"}', '{"loss": "NaN"}', '{"loss": "NAN"}', "{'loss': nan}",
    "{'loss': np.float64(nan)}", "{'loss': tensor(nan, device='cuda:0')}", '{"loss": nan}',
    " iteration       10/     100 | lm loss: NAN | loss scale: 1.0 |",  # Megatron's {:.6E}
    " iteration       10/     100 | lm loss: nan |",
]


@pytest.mark.parametrize("line", NAN_SPELLINGS)
def test_nan_in_every_spelling_is_kept(line: str) -> None:
    assert math.isnan(lifted(line).metrics["loss"])


@pytest.mark.parametrize(("line", "value"), [
    ('{"loss": Infinity}', math.inf), ('{"loss": -Infinity}', -math.inf), ("{'loss': inf}", math.inf),
    ("{'loss': -inf}", -math.inf), ('{"loss": "-inf"}', -math.inf), ('{"loss": "Infinity"}', math.inf),
    ("epoch: 0|step: 12|act_loss: inf|cri_loss: 0.2", None),
])
def test_infinity_in_every_spelling_is_kept(line: str, value: float | None) -> None:
    m = lifted(line).metrics
    assert m.get("loss", m.get("act_loss")) == (value if value is not None else math.inf)


def test_python_repr_numbers_that_literal_eval_cannot_read() -> None:
    d = python_dict("{'eval_accuracy': np.float64(0.85), 'grad_norm': tensor(1.5, device='cuda:0'), "
                    "'note': 'nan stays text', 'x': -inf}")
    assert d == {"eval_accuracy": 0.85, "grad_norm": 1.5, "note": "nan stays text", "x": -math.inf}
    assert python_dict("{'loss': __import__('os').system('id')}") is None  # never evaluated


def test_logfmt_whole_line_only() -> None:
    assert logfmt('time=2024-01-02T03:04:05Z level=INFO msg="step done" loss=0.25') == {
        "time": "2024-01-02T03:04:05Z", "level": "INFO", "msg": "step done", "loss": "0.25"}
    assert logfmt("level=INFO this is prose") is None
    p = lifted('ts=2024-01-02T03:04:05.5Z level=warn msg="slow" step=5')
    assert p.fmt == "logfmt" and p.level == "WARN" and p.message == "slow" and p.step == 5


def test_record_limits_are_checked_before_parsing() -> None:
    deep = '{"a":' * 5000 + "1" + "}" * 5000
    assert find_record(deep) is None  # more brackets than MAX_BRACKETS: text, and no RecursionError
    assert deep.count("{") > MAX_BRACKETS
    p = lifted(deep)
    assert p.metrics == {} and p.attributes == {}
    big = '{"loss": 1.0, "blob": "' + "x" * 70_000 + '"}'
    assert find_record(big) is None


def test_a_brace_in_the_message_does_not_hide_the_record() -> None:
    obj, at, fmt = find_record("saving {epoch} of {\"run\": broken} {'loss': 1.5, 'epoch': 2.0}")
    assert obj == {"loss": 1.5, "epoch": 2.0} and fmt == "pydict" and at == 34


def test_a_gpu_product_under_a_model_key_is_not_the_model() -> None:
    # DCGM's and Kubernetes' modelName is the GPU (NVML's product name); the model being trained stays one
    dcgm = parse_line('{"gpu": "1", "modelName": "Tesla V100-SXM2-32GB", "DCGM_FI_DEV_GPU_UTIL": 64, '
                      '"DCGM_FI_DEV_FB_USED": 30112}', READ)
    assert dcgm.task is None and dcgm.attributes["modelName"] == "Tesla V100-SXM2-32GB"
    assert dcgm.metrics == {"gpu_utilization_pct": 64.0, "gpu_memory_mb": 30112.0}
    for gpu in ("NVIDIA H100 80GB HBM3", "A100-SXM4-40GB", "GeForce GTX 1080 Ti", "AMD Instinct MI300X"):
        assert parse_line(f'{{"model_name": "{gpu}", "loss": 1.0}}', READ).task is None
    for model in ("qwen-7b", "nvidia/Llama-3.1-Nemotron-70B-Instruct", "NVIDIA-Nemotron-4-340B", "t5-large"):
        assert parse_line(f'{{"model_name": "{model}", "loss": 1.0}}', READ).task == {"model_name": model}


def test_prometheus_exposition_sample() -> None:
    # dcgm-exporter's /metrics: name{labels} value; labels are attributes, never the model
    p = parse_line('DCGM_FI_DEV_GPU_UTIL{gpu="0",UUID="GPU-a6",device="nvidia0",modelName="Tesla V100-SXM2-32GB",'
                   'Hostname="r6i3n0"} 87', READ)
    assert p.fmt == "prometheus" and p.metrics == {"gpu_utilization_pct": 87.0} and p.task is None
    assert p.attributes["modelName"] == "Tesla V100-SXM2-32GB" and p.attributes["Hostname"] == "r6i3n0"
    free = parse_line('DCGM_FI_DEV_FB_FREE{gpu="1",modelName="NVIDIA A30"} 11275 1717243200123', READ)
    assert "gpu_memory_mb" not in free.metrics and free.ts_ms == 1717243200123
    assert parse_line('Loading {gpu="0"} done', READ).fmt != "prometheus"


def test_time_and_level_dicts_under_their_keys() -> None:
    # loguru serialize=True: the time and level are dicts of their renderings
    line = ('{"text": "...", "record": {"level": {"icon": "\\u2139\\ufe0f", "name": "WARNING", "no": 30}, '
            '"time": {"repr": "2024-06-01 14:00:00.123000+02:00", "timestamp": 1717243200.123}, "line": 42}}')
    p = parse_line(line, READ)
    assert p.ts_ms == 1717243200123 and p.level == "WARN"
    assert parse_line('{"time": {"elapsed": 5.2}, "level": {"depth": 3}}', READ).ts_ms is None
