"""Step lines of the printers dev8 of the field probe holds (tests/fixtures/fields_probe/dev8.yaml), one test per
rule, each line as its printer writes it; and the part's own figures."""

from __future__ import annotations

import calendar
import math
from pathlib import Path

from streams.assemble.parse import parse_line
from tests.fields_probe import load, score
from tests.unit.assemble.corpus_helpers import parsed_lines

READ = calendar.timegm((2024, 6, 1, 12, 0, 0)) * 1000
PROBE_DEV8 = Path(__file__).resolve().parents[2] / "fixtures" / "fields_probe" / "dev8.yaml"
DEV8_KNOWN_MISSES: set[tuple[str, str]] = set()


def lifted(line: str):
    return parse_line(line, READ)


def test_marian_abbreviated_keys_and_cost_are_a_step_line() -> None:
    # Marian's Scheduler::update: "Ep. {} : Up. {} : Sen. {} : Cost {:.8f} * {} after {} : Time {} : ... : L.r. {:.4e}"
    p = lifted("[2019-03-21 10:12:42] Ep. 1 : Up. 500 : Sen. 64523 : Cost 9.17963505 * 1,621,472 after 1,621,472 "
               ": Time 127.41s : 14120.77 words/s : L.r. 3.0000e-04")
    assert (p.epoch, p.step) == (1.0, 500)
    assert p.metrics["loss"] == 9.17963505 and p.metrics["learning_rate"] == 3e-4


def test_a_cost_with_a_word_before_it_is_no_loss() -> None:
    # MXNet's fit: "Epoch[1] Time cost=4.611" is the epoch's time
    assert "loss" not in lifted("INFO:root:Epoch[1] Time cost=4.611").metrics


def test_marian_validation_line_is_an_evaluation() -> None:
    # LOG_VALID(info, "Ep. {} : Up. {} : {} : {} : new best"): a bracketed split tags the line, the hyphenated
    # metric name a family claims is read with blanks around its colon
    p = lifted("[2019-03-21 12:02:10] [valid] Ep. 2 : Up. 25000 : cross-entropy : 52.4183 : new best")
    assert (p.epoch, p.step) == (2.0, 25000)
    assert p.metrics == {"eval_loss": 52.4183}


def test_running_mean_of_the_loss_is_the_loss_only_when_alone() -> None:
    # fastText's printInfo "avg.loss:", kohya sd-scripts' bar "avr_loss="
    p = lifted("Progress:  45.8% words/sec/thread:  608680 lr:  0.054165 avg.loss:  1.059183 ETA:   0h 0m 3s")
    assert p.metrics["loss"] == 1.059183 and p.metrics["learning_rate"] == 0.054165
    assert lifted("steps:   5%|▊      | 100/2000 [00:57<18:14,  1.74it/s, avr_loss=0.0725]").metrics["loss"] == 0.0725
    # beside the step's own loss, the mean stays a metric of its own, whichever comes first
    p = lifted("Epoch 0: 100%|████| 994/994 [03:44<00:00,  4.42batch/s, avg_loss=0.34, loss=0.06, lr=1.00e-04]")
    assert p.metrics["loss"] == 0.06 and p.metrics["running_loss"] == 0.34


def test_counter_with_a_number_sign() -> None:
    # Tianshou's bar: tqdm(desc=f"Epoch #{epoch}")
    p = lifted("Epoch #2: 5000it [01:22, 60.12it/s, env_step=10000, len=288, loss=0.198, n/ep=17, n/st=5000, "
               "rew=1456.78]")
    assert p.epoch == 2.0 and p.metrics["loss"] == 0.198


def test_full_stop_after_a_number_separates_pairs() -> None:
    # minGPT's bar: f"epoch {epoch+1} iter {it}: train loss {loss.item():.5f}. lr {lr:e}"
    p = lifted("epoch 1 iter 99: train loss 0.53412. lr 5.999881e-04: 100%|██████████| 100/100 "
               "[00:21<00:00,  4.66it/s]")
    assert p.metrics["loss"] == 0.53412 and p.metrics["learning_rate"] == 5.999881e-04


def test_evaluation_heads_of_more_printers() -> None:
    # Ignite's examples: "Validation Results - Epoch: {}  Avg accuracy: {:.2f} Avg loss: {:.2f}"
    p = lifted("Validation Results - Epoch: 1  Avg accuracy: 0.96 Avg loss: 0.13")
    assert p.metrics["eval_loss"] == 0.13 and "loss" not in p.metrics
    # Flax's NNX examples: "[test] step: {step}, loss: ..."
    assert "eval_loss" in lifted("[test] step: 1199, loss: 0.0791240781545639, accuracy: 97.48597717285156").metrics
    # OpenNMT-tf's evaluator behind absl's head
    p = lifted("2020-06-02 12:00:00.000000: I evaluation.py:260] Evaluation result for step 5000: loss = 3.125462 ; "
               "perplexity = 22.771530")
    assert p.step == 5000 and p.metrics.get("eval_loss") == 3.125462 and "loss" not in p.metrics
    # PaddleClas: the tag after its logger's "ppcls INFO: "
    p = lifted("[2022/05/01 12:45:30] ppcls INFO: [Eval][Epoch 1][Avg]CELoss: 5.51234, loss: 5.51234, top1: 0.07120")
    assert p.metrics.get("eval_loss") == 5.51234 and "loss" not in p.metrics
    # a training line of the same printer stays training
    p = lifted("[2022/05/01 12:41:09] ppcls INFO: [Train][Epoch 1/120][Avg]CELoss: 5.98124, loss: 5.98124, "
               "top1: 0.01231")
    assert p.metrics.get("loss") == 5.98124 and "eval_loss" not in p.metrics


def test_words_of_a_family_key_with_blanks_around_the_separator() -> None:
    # OpenNMT-tf: "Step = %d ; steps/s = ..., source words/s = ... ; Learning rate = %f ; Loss = %f"
    p = lifted("2020-06-02 10:00:00.000000: I runner.py:310] Step = 100 ; steps/s = 0.89, source words/s = 21587, "
               "target words/s = 18901 ; Learning rate = 0.000013 ; Loss = 9.456784")
    assert p.step == 100 and p.metrics["learning_rate"] == 1.3e-05 and p.metrics["loss"] == 9.456784
    # a banner's counters and budgets are no such key
    p = lifted("   \\\\   /|    Num examples = 51,760 | Num Epochs = 1 | Total steps = 60")
    assert (p.epoch, p.step, p.max_steps) == (None, None, None)


def test_a_qualifier_in_brackets_after_a_key() -> None:
    # PaddleClas: "lr({scheduler class}): {:.8f}"
    p = lifted("[2022/05/01 10:00:00] ppcls INFO: [Train][Epoch 1/120][Iter: 0/5005]lr(PiecewiseDecay): 0.10000000, "
               "top1: 0.00000, CELoss: 6.91473, loss: 6.91473, batch_cost: 1.23456s")
    assert p.metrics["learning_rate"] == 0.1 and p.epoch == 1.0


def test_rocm_smi_metric_lines() -> None:
    # rocm_smi.py printLog: "GPU[%s]\t\t: %s: %s"
    assert lifted("GPU[0]\t\t: GPU use (%): 98").metrics == {"gpu_utilization_pct": 98.0}
    p = lifted("GPU[0]\t\t: VRAM Total Used Memory (B): 1234567890")
    assert math.isclose(p.metrics["gpu_memory_mb"], 1234567890 / 1048576)
    assert "gpu_memory_mb" not in lifted("GPU[3]\t\t: GPU memory use (%): 45").metrics
    assert "gpu_memory_mb" not in lifted("GPU[0]\t\t: VRAM Total Memory (B): 68702699520").metrics


def _events(tmp_path: Path, *lines: str) -> list[dict]:
    return parsed_lines(tmp_path, lines, READ)


def _value(out: dict, name: str):
    """A field of an event, or a metric of a metric point."""
    return (out.get("metrics") or {}).get(name) if "metrics" in out else out.get(name)


def test_rocm_smi_concise_table_rows(tmp_path: Path) -> None:
    # rocm_smi.py showAllConcise: units glued to the values, one word of state (Perf); "GPU%" is the utilisation,
    # "VRAM%" a share of memory, no amount; each row an event of its own
    out = _events(tmp_path, "GPU  Temp   AvgPwr  SCLK     MCLK     Fan   Perf  PwrCap  VRAM%  GPU%",
                  "0    68.0c  95.0W   2900Mhz  1000Mhz  65%   auto  120.0W  45%    92%",
                  "1    41.0c  N/A     800Mhz   1600Mhz  0%    auto  0.0W    0%     0%")
    assert len(out) == 3
    assert _value(out[1], "gpu_utilization_pct") == 92.0 and _value(out[1], "gpu_memory_mb") is None
    assert _value(out[2], "gpu_utilization_pct") == 0.0


def test_amd_smi_monitor_rows(tmp_path: Path) -> None:
    # amd-smi monitor: each value followed by its unit a blank apart
    out = _events(tmp_path, "GPU  POWER  GPU_TEMP  MEM_TEMP  GFX_UTIL  GFX_CLOCK  MEM_UTIL  MEM_CLOCK  VRAM_USED  "
                  "VRAM_TOTAL",
                  "  0  171 W     42 °C     34 °C      99 %   2100 MHz       18 %   1300 MHz     30123 MB   196592 MB")
    assert len(out) == 2
    assert _value(out[1], "gpu_utilization_pct") == 99.0 and _value(out[1], "gpu_memory_mb") == 30123.0


def test_a_source_listing_line_is_no_value_row(tmp_path: Path) -> None:
    # gdb's `list` after a frame: the line number, then code (words from the second cell on)
    out = _events(tmp_path, "#0  main () at demo.c:12", "12\t    return x;", "13\t  }")
    assert len(out) == 1 and out[0]["line_count"] == 3


def test_loss_is_sentence_and_mindspore_tensor() -> None:
    # MindSpore's LossMonitor: "epoch: %s step: %s, loss is %s"
    p = lifted("epoch: 10 step: 390, loss is 0.021480352")
    assert p.epoch == 10.0 and p.metrics["loss"] == 0.021480352
    p = lifted("epoch: 3 step: 125, loss is Tensor(shape=[], dtype=Float32, value= 2.30198)")
    assert p.metrics["loss"] == 2.30198
    assert math.isnan(lifted("epoch: 2 step: 50, loss is nan").metrics["loss"])


def test_gpu_memory_usage_sentence() -> None:
    # axolotl's log_gpu_memory_usage
    p = lifted("[2024-05-01 10:00:00,123] [INFO] [axolotl.load_model:1234] [PID:123] [RANK:0] GPU memory usage after "
               "model load: 13.524GB (+0.136GB cache, +1.234GB misc)")
    assert math.isclose(p.metrics["gpu_memory_mb"], 13.524 * 1024)


def test_ppo_namespace() -> None:
    # TRL's PPOTrainer stats
    p = lifted("{'objective/kl': 0.0123, 'ppo/loss/policy': -0.0213, 'ppo/loss/value': 0.5123, "
               "'ppo/loss/total': 0.0299, 'ppo/learning_rate': 1.41e-05}")
    assert p.metrics["loss"] == 0.0299 and p.metrics["learning_rate"] == 1.41e-05


def test_step_budget_alone_in_a_sentence_is_a_setting() -> None:
    # Lightning's fit loop
    p = lifted("`Trainer.fit` stopped: `max_steps=5000` reached.")
    assert p.max_steps is None and p.attributes["max_steps"] == "5000"
    # beside the step it counts towards, a budget stays
    assert lifted("step 100/5000 | loss 2.31 | lr 3e-4").max_steps == 5000


def test_glog_head_with_a_path() -> None:
    # torch._logging writes the file's path in glog's head
    p = lifted("W0110 10:00:00.123000 140245 torch/distributed/run.py:779] Setting OMP_NUM_THREADS environment "
               "variable for each process to be 1 in default")
    assert p.level == "WARN" and p.logger == "torch/distributed/run.py:779"


def test_probe_dev8_misses_only_the_known() -> None:
    s = score(load([str(PROBE_DEV8)]))
    assert {(fw, name) for fw, name, *_ in s["misses"]} <= DEV8_KNOWN_MISSES
    assert s["absent"]["violated"] == 0
    assert s["metric"]["right"] == s["metric"]["checked"]
