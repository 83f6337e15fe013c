"""Settings dumps stay settings, and the tool tables that do carry GPU figures are read: each line built with the
format its printer uses (DeepSpeedConfig.print, TrainingArguments.__str__, OmegaConf's YAML, nccl-tests' header,
nvidia-smi's table, torch elastic's log format). The field probe's dev6 part covers the same on pasted lines."""

from __future__ import annotations

import argparse
import calendar
import dataclasses
import json

import pytest
import yaml

from streams.assemble.parse import parse_line

READ = calendar.timegm((2023, 4, 18, 12, 0, 0)) * 1000


def lifted(line: str):
    return parse_line(line, READ)


def deepspeed_print(arg: str, value: object) -> str:
    # deepspeed/runtime/config.py DeepSpeedConfig.print: dots = "." * (29 - len(arg)); "  {} {} {}".format(...)
    head = "[2024-01-01 17:25:57,598] [INFO] [config.py:988:print] "
    return head + "  {} {} {}".format(arg, "." * (29 - len(arg)), value)


def megatron_print(arg: str, value: object) -> str:
    # megatron/training/arguments.py _print_args: '  {} {} {}'.format(arg, '.' * (48 - len(arg)), value)
    return "  {} {} {}".format(arg, "." * (48 - len(arg)), value)


@pytest.mark.parametrize("line", [
    deepspeed_print("optimizer_params", {"lr": 1e-06, "betas": [0.9, 0.999], "eps": 0.0001}),
    deepspeed_print("scheduler_params", {"warmup_min_lr": 0, "warmup_max_lr": 2e-05, "warmup_num_steps": 100}),
    deepspeed_print("dynamic_loss_scale_args", {"init_scale": 0.25, "scale_window": 100, "min_scale": 1e-24}),
    megatron_print("lr", 0.00015),
])
def test_a_setting_after_a_dotted_leader_is_not_lifted(line: str) -> None:
    p = lifted(line)
    assert p.metrics == {} and p.step is None and p.max_steps is None


def test_a_dict_setting_keeps_its_text_and_the_lines_head() -> None:
    p = lifted(deepspeed_print("optimizer_params", {"lr": 1e-06, "eps": 0.0001}))
    assert p.attributes["optimizer_params"] == "{'lr': 1e-06, 'eps': 0.0001}"
    assert p.level == "INFO" and p.ts_ms == calendar.timegm((2024, 1, 1, 17, 25, 57)) * 1000 + 598


def test_a_record_after_a_head_is_still_a_record() -> None:
    # HF's ProgressCallback dict behind a head that ends in a period (no leader): training state
    p = lifted("[rank0]: step done. {'loss': 1.25, 'learning_rate': 2e-05, 'epoch': 0.5}")
    assert p.metrics["loss"] == 1.25 and p.metrics["learning_rate"] == 2e-05


@dataclasses.dataclass
class TrainingArguments:
    learning_rate: float = 2e-05
    max_steps: int = 1000
    num_train_epochs: float = 3.0
    logging_steps: int = 10

    def __str__(self) -> str:
        # transformers training_args.py TrainingArguments.__str__
        attrs_as_str = [f"{k}={v},\n" for k, v in sorted(dataclasses.asdict(self).items())]
        return f"{self.__class__.__name__}(\n{''.join(attrs_as_str)})"


def test_training_arguments_str_lines_are_settings() -> None:
    lines = str(TrainingArguments()).splitlines()
    for line in lines:
        p = lifted(line)
        assert "learning_rate" not in p.metrics and p.max_steps is None and p.step is None, line
    p = lifted("learning_rate=2e-05,")
    assert p.attributes["learning_rate"] == "2e-05"


def test_omegaconf_yaml_lines_are_settings() -> None:
    # OmegaConf.to_yaml dumps with yaml (block style, keys in order), two blanks per level
    text = yaml.safe_dump({"trainer": {"devices": 8, "max_steps": 300000},
                           "model": {"optim": {"name": "fused_adam", "learning_rate": 0.0003}}},
                          sort_keys=False, default_flow_style=False)
    for line in text.splitlines():
        p = lifted(line)
        assert "learning_rate" not in p.metrics and p.max_steps is None, line


@pytest.mark.parametrize(("line", "name", "value"), [
    ("  loss: 0.52", "loss", 0.52),  # a setting is never named loss: a lone loss stays a figure
    ("    optim/learning_rate_group0=0.0003", "learning_rate", 0.0003),  # OLMo's tracker row names its namespace
    ("|    learning_rate        | 0.0003      |", "learning_rate", 0.0003),  # stable-baselines3's table
])
def test_lone_figures_that_are_state_stay_lifted(line: str, name: str, value: float) -> None:
    assert lifted(line).metrics[name] == value


@pytest.mark.parametrize("kind", ["factor", "bytes"])
def test_nccl_tests_header_step_is_a_size_increment(kind: str) -> None:
    # nccl-tests src/common.cu: "# nThread %d nGpus %d minBytes %ld maxBytes %ld step: %ld(%s) warmup iters: %d ..."
    fmt = "# nThread {} nGpus {} minBytes {} maxBytes {} step: {}({}) warmup iters: {} iters: {} validation: {}"
    line = fmt.format(1, 8, 8, 134217728, 2 if kind == "factor" else 1048576, kind, 5, 20, 1)
    assert lifted(line).step is None


def test_a_value_with_a_figure_in_brackets_is_still_read() -> None:
    # torchtitan: f"memory: {max_reserved_gib:5.2f}GiB({max_reserved_pct:.2f}%)"
    p = lifted("step:  2  loss:  8.1234  memory:  2.49GiB(3.14%)")
    assert p.step == 2 and p.metrics["gpu_memory_mb"] == pytest.approx(2.49 * 1024)


def smi_row(fan: str, temp: str, perf: str, usage: str, cap: str, used: int, total: int, util: str) -> str:
    # nvidia-smi's default table: "| %4s %5s %4s %11s | %20s | %8s  %10s |" of the three cells
    return (f"| {fan:>4}  {temp:>4}    {perf:>2}   {usage:>4} / {cap:>4} |  {used:>5}MiB / {total:>5}MiB |"
            f"    {util:>4}      Default |")


@pytest.mark.parametrize(("row", "mem", "util"), [
    (smi_row("N/A", "61C", "P0", "175W", "400W", 33717, 81252, "84%"), 33717.0, 84.0),
    (smi_row("30%", "45C", "P2", "120W", "350W", 1234, 24576, "0%"), 1234.0, 0.0),
    (smi_row("N/A", "N/A", "P0", "N/A", "N/A", 46, 4037, "N/A"), 46.0, None),
])
def test_nvidia_smi_table_row_gives_memory_and_utilisation(row: str, mem: float, util: float | None) -> None:
    p = lifted(row)
    assert p.metrics.get("gpu_memory_mb") == mem and p.metrics.get("gpu_utilization_pct") == util


def test_a_header_row_of_the_table_has_no_figures() -> None:
    assert lifted("| Fan  Temp  Perf  Pwr:Usage/Cap|         Memory-Usage | GPU-Util  Compute M. |").metrics == {}


def test_level_in_brackets_before_the_time() -> None:
    # torch/distributed/elastic logs "[%(levelname)s] %(asctime)s %(module)s: %(message)s"
    p = lifted("[WARNING] 2022-09-04 18:43:32,155 api: Starting elastic_operator with launch configs:")
    assert p.level == "WARN" and p.ts_ms == calendar.timegm((2022, 9, 4, 18, 43, 32)) * 1000 + 155


def test_configuration_dicts_are_settings() -> None:
    # a script's print(vars(args)) of its argparse settings, and TrainingArguments.to_json_string (json.dumps of
    # asdict, where max_steps -1 means "not set")
    args = argparse.Namespace(lr=0.0003, batch_size=32, max_steps=1000, warmup_steps=100, seed=42)
    for line in (str(vars(args)), f"INFO:__main__:hparams: {vars(args)}",
                 json.dumps({**dataclasses.asdict(TrainingArguments()), "max_steps": -1})):
        p = lifted(line)
        assert "learning_rate" not in p.metrics and p.max_steps is None, line
    p = lifted(str(vars(args)))
    assert p.attributes["learning_rate"] == "0.0003" and p.attributes["max_steps"] == "1000"


@pytest.mark.parametrize("record", [
    {"loss": 1.25, "learning_rate": 2e-05, "num_input_tokens_seen": 1024},  # HF's logs dict, without its epoch
    {"lr": 1e-04, "step": 10},
    {"current_steps": 10, "total_steps": 300, "lr": 4.99e-05},  # LLaMA-Factory's trainer_log.jsonl
    {"grad_norm": 0.87, "learning_rate": 1e-05},
])
def test_records_of_a_steps_state_keep_their_learning_rate(record: dict) -> None:
    p = lifted(json.dumps(record))
    assert "learning_rate" in p.metrics
