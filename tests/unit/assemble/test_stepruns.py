"""Step-line layouts and key families beyond tight pairs (streams/assemble/stepruns.py, keys.py), each line
as its printer writes it; and the field probe's dev part (tests/fixtures/fields_probe/dev.yaml)."""

from __future__ import annotations

import calendar
import math
from pathlib import Path

import pytest

from streams.assemble.parse import parse_line
from streams.assemble.pipeline import parse_files
from tests.fields_probe import load, score

READ = calendar.timegm((2023, 4, 18, 12, 0, 0)) * 1000
PROBE_DEV = Path(__file__).resolve().parents[2] / "fixtures" / "fields_probe" / "dev.yaml"
PROBE_DEV2 = PROBE_DEV.with_name("dev2.yaml")
# What dev2 still misses (nothing since XLM's learning rate beside its speeds, and nvidia-smi dmon's and fastai's
# table rows as events of their own, are read).
DEV2_KNOWN_MISSES: set[tuple[str, str]] = set()
PROBE_DEV3 = PROBE_DEV.with_name("dev3.yaml")
DEV3_KNOWN_MISSES: set[tuple[str, str]] = set()
PROBE_DEV4 = PROBE_DEV.with_name("dev4.yaml")
PROBE_DEV5 = PROBE_DEV.with_name("dev5.yaml")
PROBE_DEV6 = PROBE_DEV.with_name("dev6.yaml")
PROBE_DEV7 = PROBE_DEV.with_name("dev7.yaml")


def lifted(line: str):
    return parse_line(line, READ)


def test_fairseq_epoch_summary_is_a_run_of_spaced_pairs() -> None:
    # fairseq SimpleProgressBar.print: "| epoch 008 | loss 6.326 | ... | num_updates 21896 | lr ... | gnorm 1.201 |"
    p = lifted("| epoch 008 | loss 6.326 | nll_loss 5.193 | ppl 36.58 | wps 12876 | ups 4.9 | wpb 2578 | bsz 108 | "
               "num_updates 21896 | lr 0.000213706 | gnorm 1.201 | clip 0% | oom 0 | wall 4634 | train_wall 4309")
    assert (p.epoch, p.step) == (8.0, 21896)
    assert p.metrics["loss"] == 6.326 and p.metrics["learning_rate"] == 0.000213706 and p.metrics["grad_norm"] == 1.201


def test_llm_c_step_total_and_spaced_pairs_with_units_and_averages() -> None:
    # llm.c: "step %4d/%d | train loss %7.6f | norm %6.4f | lr %.2e | ..." (a "(+nanz)" note after a value)
    p = lifted("step   20/18865 | loss 7.012345 (+nanz)| norm 1.2345 (+nanz)| lr 1.80e-05 | 123.45 ms | 412345 tok/s")
    assert (p.step, p.max_steps) == (20, 18865)
    assert p.metrics["loss"] == 7.012345 and p.metrics["grad_norm"] == 1.2345 and p.metrics["learning_rate"] == 1.8e-05


def test_pytorch_imagenet_meters_value_then_average() -> None:
    p = lifted("Epoch: [0][  10/5005]\tTime  0.512 ( 1.234)\tData  0.012 ( 0.512)\tLoss 6.9078e+00 (6.9081e+00)\t"
               "Acc@1   0.00 (  0.11)")
    assert p.epoch == 0.0 and p.metrics["loss"] == 6.9078


def test_one_number_in_a_sentence_is_not_a_run() -> None:
    p = lifted("Saving the model took 12.5 s, loss of precision none")
    assert p.metrics == {}


@pytest.mark.parametrize(("line", "field", "value"), [
    ("  train_loss               =     1.9876", "loss", 1.9876),  # HF Trainer.log_metrics
    ("|    learning_rate        | 0.0003      |", "learning_rate", 0.0003),  # stable-baselines3 HumanOutputFormat
    ("wandb:                    train/loss 1.2345", "loss", 1.2345),  # wandb's run summary
    ("│ loss                                   0.41234 │", "loss", 0.41234),  # Ray Train's result table
])
def test_table_rows(line: str, field: str, value: float) -> None:
    assert lifted(line).metrics[field] == value


def test_table_row_epoch() -> None:
    assert lifted("  epoch                    =        3.0").epoch == 3.0


@pytest.mark.parametrize("line", [
    "  Num Epochs = 3",  # HF Trainer's banner: the key has blanks
    "  Total optimization steps = 1,170",
    " \\\\   /|    Num examples = 1,000 | Num Epochs = 3 | Total steps = 375",  # Unsloth's banner
    "  train_iters ..................................... 500000",  # Megatron's arguments dump
])
def test_banners_are_not_rows(line: str) -> None:
    p = lifted(line)
    assert (p.step, p.max_steps, p.epoch) == (None, None, None)


@pytest.mark.parametrize("line", [
    "Namespace(batch_size=32, epochs=10, lr=0.001, seed=42, max_steps=1000)",
    "[INFO:swift] args: TrainArguments(model='Qwen/Qwen2-7B', learning_rate=0.0001, num_train_epochs=3.0)",
])
def test_configuration_reprs_are_settings(line: str) -> None:
    p = lifted(line)
    assert (p.max_steps, p.epoch) == (None, None) and "learning_rate" not in p.metrics


def test_pairs_after_a_configuration_repr_still_count() -> None:
    p = lifted("LlamaConfig(hidden_size=4096, lr=0.001) loaded; step: 5 loss: 1.2")
    assert p.step == 5 and p.metrics == {"loss": 1.2}


def test_pairs_between_and_after_several_configuration_reprs_still_count() -> None:
    # (the reprs are taken out in one pass; the text between them keeps its pairs)
    p = lifted("Namespace(lr=0.1) ModelConfig(dim=8, lr=0.2)  step 7  loss 1.5  DataArgs(seed=1)  lr 3e-4")
    assert p.step == 7 and p.metrics == {"loss": 1.5, "learning_rate": 0.0003}


def test_a_long_run_of_blanks_separates_pairs_as_two_do() -> None:
    spaced = lifted("step 9" + " " * 40 + "loss 2.5" + " " * 300 + "grad norm 0.7")
    assert spaced.step == 9 and spaced.metrics == {"loss": 2.5, "grad_norm": 0.7}


@pytest.mark.parametrize(("line", "want"), [
    ("04/21 21:03:53 - mmengine - INFO - Epoch(train) [1][10/90]  lr: 1.000e-02  eta: 0:00:25  memory: 2103  "
     "loss: 11.4723", {"epoch": 1.0}),
    ("Iter(train) [  50/80000]  lr: 1.0000e-02  eta: 1 day, 0:00:00  time: 0.5000  memory: 3500  loss: 2.5000",
     {"step": 50, "max_steps": 80000}),
    ("Train: 3 [ 100/1251 (  8%)]  Loss: 3.245 (3.31)  LR: 1.000e-03  Data: 0.012 (0.015)", {"epoch": 3.0}),
    ("I0512 10:00:00.123456 140000 logging_writer.py:48] [100] learning_rate=0.001, train_loss=2.345", {"step": 100}),
    ("[batch=10/4800]:", {"step": 10, "max_steps": 4800}),
])
def test_progress_heads(line: str, want: dict) -> None:
    p = lifted(line)
    assert {k: getattr(p, k) for k in want} == want


def test_namespaced_keys_are_looked_through() -> None:
    # verl's console logger: "step:N - actor/grad_norm:... - actor/lr:... - training/epoch:..."
    p = lifted("step:34 - actor/loss:0.0424 - actor/grad_norm:0.1296 - actor/perf/max_memory_reserved_gb:27.5 - "
               "actor/lr:2e-06 - training/global_step:34 - training/epoch:0 - critic/score/mean:-0.018")
    assert (p.step, p.epoch) == (34, 0.0)
    assert p.metrics["loss"] == 0.0424 and p.metrics["grad_norm"] == 0.1296 and p.metrics["learning_rate"] == 2e-06
    assert p.metrics["gpu_memory_mb"] == 27.5 * 1024


def test_evaluation_namespace_makes_an_eval_loss() -> None:
    p = lifted("epoch:  1, train_loss: 0.2345, train_accuracy: 93.12, test_loss: 0.0567")
    assert p.metrics["loss"] == 0.2345 and p.metrics["eval_loss"] == 0.0567


@pytest.mark.parametrize(("line", "mb"), [
    ("[08/14 10:26:13 d2.utils.events]:  eta: 0:43:51  iter: 6319  total_loss: 0.4072  lr: 0.0003  max_mem: 1962M",
     1962.0),  # detectron2: one-letter unit
    ("eta: 0:17:37  iter: 87940  loss: 0.6097 (0.9191)  lr: 0.000025  max mem: 4358", 4358.0),  # maskrcnn-benchmark
    ("step: 10  loss:  7.9123  memory: 21.43GiB(22.54%)  tps: 1,234  mfu: 12.34%", 21.43 * 1024),  # torchtitan
])
def test_bare_memory_on_a_step_line_is_the_gpus(line: str, mb: float) -> None:
    assert lifted(line).metrics["gpu_memory_mb"] == pytest.approx(mb)


@pytest.mark.parametrize("line", [
    'I0507 12:04:17.596484 1 highnodeutilization.go:107] "Criteria for a node" CPU=50 Mem=50 Pods=100',
    "[2025-02-07 01:19:47 TP5] Load weight end. type=DeepseekV3ForCausalLM, avail mem=38.11 GB",
])
def test_bare_memory_elsewhere_is_not_the_gpus(line: str) -> None:
    assert "gpu_memory_mb" not in lifted(line).metrics


def test_hyphenated_timer_name_is_not_a_step() -> None:
    p = lifted("time (ms) | forward-compute: 58.16 | optimizer-inner-step: 46.00 | batch-generator: 5.24")
    assert p.step is None


def test_float_spelled_counter_is_a_step() -> None:
    # NeMo's Lightning bar prints global_step as a float
    p = lifted("Epoch 0:   1%|   | 795/77225 [9:07:58<878:01:48, 41.36s/it, loss=3.1, v_num=, global_step=794.0]")
    assert (p.epoch, p.step) == (0.0, 794)


def test_record_prefix_gives_its_counters() -> None:
    # accelerate's nlp_example: accelerator.print(f"epoch {epoch}:", eval_metric)
    p = lifted("epoch 2: {'accuracy': 0.81, 'f1': 0.86}")
    assert p.epoch == 2.0 and p.attributes["accuracy"] == "0.81"


def test_ansi_colours_around_values() -> None:
    # torchtitan colours each field (utils.Color)
    p = lifted("\x1b[31mstep: 10  \x1b[32mloss:  7.9123  \x1b[33mmemory: 21.43GiB(22.54%)  \x1b[35mmfu: 12.34%\x1b[39m")
    assert p.step == 10 and p.metrics["loss"] == 7.9123


def test_nan_in_a_spaced_run() -> None:
    p = lifted("| epoch 003 | loss nan | gnorm inf | num_updates 300")
    assert math.isnan(p.metrics["loss"]) and math.isinf(p.metrics["grad_norm"])


def test_probe_dev_part_is_lifted_right() -> None:
    s = score(load([str(PROBE_DEV)]))
    assert s["misses"] == []
    assert s["right"] == s["expected"] > 100


def test_probe_second_dev_part_misses_only_the_known_gaps() -> None:
    s = score(load([str(PROBE_DEV2)]))
    assert {(fw, name) for fw, name, _want, _got, _line in s["misses"]} == DEV2_KNOWN_MISSES
    assert s["absent"]["violated"] == 0 and s["metric"]["right"] == s["metric"]["checked"]


def test_probe_third_dev_part_misses_only_the_known_gaps() -> None:
    s = score(load([str(PROBE_DEV3)]))
    assert {(fw, name) for fw, name, _want, _got, _line in s["misses"]} == DEV3_KNOWN_MISSES
    assert s["absent"]["violated"] == 0 and s["metric"]["right"] == s["metric"]["checked"]


def test_probe_fourth_dev_part_is_lifted_right() -> None:
    # training-loop progress lines as their printers write them (the source of each in dev4.yaml)
    s = score(load([str(PROBE_DEV4)]))
    assert s["misses"] == []
    assert s["right"] == s["expected"] > 100
    assert s["absent"]["checked"] > 20 and s["metric"]["checked"] > 20


def test_probe_fifth_dev_part_is_lifted_right() -> None:
    # tables and reports a merger may join, and printers' variants (the source of each in dev5.yaml)
    s = score(load([str(PROBE_DEV5)]))
    assert s["misses"] == []
    assert s["right"] == s["expected"] > 30
    assert s["absent"]["violated"] == 0 and s["absent"]["checked"] > 10


def test_probe_sixth_dev_part_is_lifted_right() -> None:
    # configuration dumps that must stay unlifted, tool tables and new sources' step lines (the source of each in
    # dev6.yaml)
    s = score(load([str(PROBE_DEV6)]))
    assert s["misses"] == []
    assert s["right"] == s["expected"] > 40
    assert s["absent"]["violated"] == 0 and s["absent"]["checked"] > 40
    assert s["metric"]["right"] == s["metric"]["checked"] > 40


def test_probe_seventh_dev_part_is_lifted_right() -> None:
    # training loops and tools of other frameworks (MetricLogger, open_clip, SpeechBrain, fairseq's simple bar,
    # GPT-NeoX, MXNet, keras-rl, gpustat, ...) and their settings dumps (the source of each in dev7.yaml)
    s = score(load([str(PROBE_DEV7)]))
    assert s["misses"] == []
    assert s["right"] == s["expected"] > 140
    assert s["absent"]["violated"] == 0 and s["absent"]["checked"] > 20
    assert s["metric"]["right"] == s["metric"]["checked"] > 40


@pytest.mark.parametrize(("line", "name", "value"), [
    ("Step: 10 | Loss: 1.5 | Tokens/s: 524.29K | Tokens:  10.49M", "tokens_s", 524290.0),  # picotron: counts
    ("Step: 10 | Loss: 1.5 | Tokens/s: 524.29K | Tokens:  10.49M", "tokens", 10490000.0),
    ("step: 10, loss: 1.5, peak_mem: 12.5G", "peak_mem_mb", 12.5 * 1024),  # a memory key keeps its unit
])
def test_one_letter_suffix_is_a_count_unless_the_key_names_memory(line: str, name: str, value: float) -> None:
    assert lifted(line).metrics[name] == pytest.approx(value)


@pytest.mark.parametrize("line", [
    "Loading weights from /models/run_epoch=2-step=1000-loss=0.45.ckpt",  # a run's file name
    "wandb: Syncing run lr=0.001-step=500",
    "request id 0x7f3a9c step 0xdeadbeef retried",  # an id after the word
])
def test_names_and_ids_are_not_counters(line: str) -> None:
    assert lifted(line).step is None


def test_megatron_pairs_without_a_colon_and_a_run_without_a_total() -> None:
    old = lifted(" iteration      100/  500000 | elapsed time per iteration (ms): 345.6 | learning rate 1.500E-04 | "
                 "lm loss NAN | loss scale 32768.0 |")
    assert (old.step, old.max_steps, old.metrics["learning_rate"]) == (100, 500000, 1.5e-04)
    assert math.isnan(old.metrics["loss"]) and old.metrics["loss_scale"] == 32768.0
    rl = lifted(" iteration        5/infinity | consumed samples:          160 | learning rate: 1.000E-06 | "
                "grad norm: 0.123 |")
    assert (rl.step, rl.max_steps, rl.metrics["learning_rate"], rl.metrics["grad_norm"]) == (5, None, 1e-06, 0.123)


def test_nemo_progress_line_keeps_its_epoch_after_the_megatron_rule() -> None:
    # NeMo 2's progress printer: "Training epoch E, iteration i/n | key: value | ..." (Megatron's bar pairs)
    p = lifted("Training epoch 0, iteration 120/149 | lr: 3e-05 | consumed_samples: 121 | global_step: 120 | "
               "reduced_train_loss: 1.233 | train_step_timing in s: 0.03146 | val_loss: 4.106")
    assert (p.epoch, p.step) == (0.0, 120)
    assert p.metrics["loss"] == 1.233 and p.metrics["eval_loss"] == 4.106


def test_detectron2_total_loss_is_the_loss() -> None:
    p = lifted("eta: 0:03:35  iter: 19  total_loss: 1.36  loss_cls: 0.6522  loss_box_reg: 0.5817  lr: 3.8077e-06")
    assert p.metrics["loss"] == 1.36 and p.metrics["loss_cls"] == 0.6522


def test_bare_memory_in_a_record_keeps_its_key_when_not_the_gpus() -> None:
    # a zap JSON record's "memory" in bytes: not a step line, so neither a GPU figure nor lost
    p = lifted('{"level":"info","msg":"classical resources obtained are","memory":65971478528}')
    assert "gpu_memory_mb" not in p.metrics and "memory_mb" not in p.metrics
    assert p.attributes["memory"] == "65971478528"


def test_unit_after_one_blank_in_a_tight_pair() -> None:
    p = lifted("step: 3 loss: 1.5 mem: 24.06 GiB")
    assert p.metrics["gpu_memory_mb"] == pytest.approx(24.06 * 1024)


def test_settings_in_a_configuration_repr_stay_as_text() -> None:
    p = lifted("Namespace(batch_size=32, learning_rate=0.001, seed=42)")
    assert p.attributes["learning_rate"] == "0.001" and "learning_rate" not in p.metrics


# Pairs printed with blanks around the separator (steplines._LOOSE): TensorFlow's LoggingTensorHook, Caffe's
# solver, DLLogger's StdOutBackend; a banner's or a configuration dump's lone "key = value" is not one.
def test_loose_pairs_from_their_printers() -> None:
    tf = lifted("INFO:tensorflow:loss = 4.264659, step = 100 (124.394 sec)")
    assert (tf.step, tf.metrics["loss"]) == (100, 4.264659)
    caffe = lifted("I0512 10:00:00.123556  1234 sgd_solver.cpp:105] Iteration 100, lr = 0.001")
    assert (caffe.step, caffe.metrics["learning_rate"]) == (100, 0.001)
    net = lifted("I0512 10:00:00.123500  1234 solver.cpp:237]     Train net output #0: loss = 2.30259 "
                 "(* 1 = 2.30259 loss)")
    assert net.metrics["loss"] == 2.30259
    nan = lifted("I0512 10:05:00.000001  1234 solver.cpp:218] Iteration 200 (2.5 iter/s, 40s/100 iters), loss = -nan")
    assert nan.step == 200 and math.isnan(nan.metrics["loss"])
    dll = lifted("DLL 2022-04-05 02:22:54.614486 - Training Epoch: 1 Training Iteration: 2872  step_loss : 0.6953  "
                 "learning_rate : 1.58e-05 ")
    assert (dll.epoch, dll.step, dll.metrics["loss"], dll.metrics["learning_rate"]) == (1.0, 2872, 0.6953, 1.58e-05)


@pytest.mark.parametrize("line", [
    "  Num Epochs = 3",
    "  Total optimization steps = 8",
    "2017-10-14 16:48:25,423 - INFO - allennlp.common.params - trainer.optimizer.lr = 0.05",
    "lr = 0.01",
    "lr: 0.0003",
    "max_epochs = 12",
    "Resuming from epoch checkpoint: lr = 0.0003",
])
def test_lone_loose_setting_is_not_lifted(line: str) -> None:
    p = lifted(line)
    assert p.step is None and p.epoch is None and "learning_rate" not in p.metrics


def test_split_words_take_the_metric_written_before_them() -> None:
    # litgpt: f"... | loss train: {loss:.3f}, val: {val_loss} | iter time: ..."
    p = lifted("Epoch 4 | iter 961 step 961 | loss train: 1.062, val: 1.057 | iter time: 529.46 ms (step)")
    assert (p.epoch, p.step, p.metrics["loss"], p.metrics["eval_loss"]) == (4.0, 961, 1.062, 1.057)
    assert "loss" not in lifted("mode train: 5").metrics


def test_a_run_leaves_counters_to_the_counter_words() -> None:
    # litgpt: "iter" counts micro-batches, "step" optimizer steps: the step is the step
    assert lifted("iter 1760 | step 220: loss 1.5947, iter time: 263.85 ms (optimizer.step)").step == 220
    p = lifted("iter 77 step 39: loss 10.8259, iter time: 214.40ms (optimizer.step)")
    assert (p.step, p.metrics["loss"]) == (39, 10.8259)


def test_espnet2_epoch_glued_to_its_word_and_indexed_learning_rates() -> None:
    p = lifted("[gpu01:0/2] 2020-07-19 08:49:04,080 (trainer:464) INFO: 1epoch:train:1-682batch: iter_time=2.878e-04, "
               "loss=123.963, acc=0.013, lr_0=3.460e-06, train_time=1.816")
    assert (p.epoch, p.metrics["loss"], p.metrics["learning_rate"]) == (1.0, 123.963, 3.46e-06)
    q = lifted("2023-04-22 13:52:12,339 (trainer:732) INFO: 8epoch:train:2901-3000batch: loss=-17.036, "
               "grad_norm=37.450, optim0_lr0=3.765e-04")
    assert (q.epoch, q.metrics["learning_rate"]) == (8.0, 3.765e-04)
    assert lifted("[kamo] 2020-03-24 01:41:04,798 (trainer:192) INFO: 2/200epoch started.").epoch == 2.0
    # ultralytics' lr0 is the initial learning rate of its configuration, not a step's
    assert "learning_rate" not in lifted("train: epochs=100, lr0=0.01, lrf=0.01").metrics


def test_memory_units_and_names_from_their_printers() -> None:
    yolox = lifted("2021-10-18 20:51:36 | INFO     | yolox.core.trainer:246 - epoch: 8/40, iter: 1340/1816, "
                   "mem: 34235Mb, total_loss: 98.0, lr: 9.417e-03")
    assert yolox.metrics["gpu_memory_mb"] == 34235.0
    paddle = lifted("[2024/06/22 06:28:30] ppocr INFO: epoch: [5/500], global_step: 180, loss: 1.000000, "
                    "max_mem_reserved: 6177 MB, max_mem_allocated: 5281 MB")
    assert paddle.metrics["gpu_memory_mb"] == 6177.0
    # a memory key with a percent is how busy the memory is, never an amount
    assert "gpu_memory_mb" not in lifted("step: 5, loss: 1.0, mem: 45%").metrics


def test_cross_entropy_names_are_the_loss() -> None:
    p = lifted("[2019-03-21 18:31:43,773 INFO] Step 2250/200000; acc:  31.18; ppl: 57.53; xent: 4.05; lr: 0.00028")
    assert (p.step, p.max_steps, p.metrics["loss"]) == (2250, 200000, 4.05)


def test_mmengine_config_dict_is_configuration() -> None:
    p = lifted("optim_wrapper = dict(type='OptimWrapper', optimizer=dict(type='SGD', lr=0.02, momentum=0.9))")
    assert "learning_rate" not in p.metrics
    assert lifted("train_cfg = dict(type='IterBasedTrainLoop', max_iters=80000, val_interval=8000)").max_steps is None


def _report(tmp_path: Path, *lines: str) -> list[dict]:
    path = tmp_path / "report.log"
    path.write_text("".join(f"{ln}\n" for ln in lines), encoding="utf-8")
    return list(parse_files([path], default_ts_ms=READ))


@pytest.mark.parametrize(("prefix", "split", "rows", "want"), [
    # transformers trainer_pt_utils.log_metrics: print(f"***** {split} metrics *****"), then
    # print(f"  {key: <{k_width}} = {value:>{v_width}}") per metric, sorted
    ("", "train", ["  epoch                    =        3.0", "  total_flos               =  1234567GF",
                   "  train_loss               =     1.9876", "  train_runtime            = 0:12:34.56",
                   "  train_samples_per_second =     12.345"], {"epoch": 3.0, "loss": 1.9876}),
    ("", "eval", ["  epoch                   =        3.0", "  eval_accuracy           =     0.8512",
                  "  eval_loss               =     0.4123", "  eval_runtime            = 0:00:12.34"],
     {"epoch": 3.0, "eval_loss": "0.4123"}),
    # a launcher's prefix on every line (torchrun --tee): taken off each row
    ("[rank0]: ", "predict", ["  predict_loss               =     0.7001", "  predict_runtime            = 0:00:01.00"],
     {"predict_loss": "0.7001"}),
])
def test_hf_log_metrics_report_is_one_event_read_row_by_row(tmp_path: Path, prefix: str, split: str,
                                                            rows: list[str], want: dict) -> None:
    out = _report(tmp_path, f"{prefix}***** {split} metrics *****", *(prefix + r for r in rows))
    assert len(out) == 1 and out[0]["line_count"] == len(rows) + 1  # the report stays one event
    ev = out[0]
    for name, value in want.items():
        assert (ev.get(name) if name in ("epoch", "loss") else ev["attributes"].get(name)) == value

