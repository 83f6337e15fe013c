"""Step lines of the printers dev13 of the field probe holds (tests/fixtures/fields_probe/dev13.yaml), one test per
rule, each line as its printer writes it; and the part's own figures."""

from __future__ import annotations

import calendar
from pathlib import Path

from streams.assemble.keys import canonical
from streams.assemble.parse import parse_line
from tests.fields_probe import load, score

READ = calendar.timegm((2024, 6, 1, 12, 0, 0)) * 1000
PROBE_DEV13 = Path(__file__).resolve().parents[2] / "fixtures" / "fields_probe" / "dev13.yaml"
# What dev13 still misses, left alone: YOLOv5 v5.0's row when the thread cut its bar short ("640: 100%|█| 211/211
# [00:48<00:", which the merger joins to the header above it), litgpt's draft layout "Ep 1 | iter 8 | step 2: loss
# train (curr): 1.761" (an abbreviated epoch and a loss qualified in brackets), and Keras' bar with TerminateOnNaN's
# message glued to its last figure ("loss: 44.4110Batch 3: Invalid loss").


def lifted(line: str):
    return parse_line(line, READ)


def test_a_rate_named_in_two_words_beside_a_counter() -> None:
    # PaddleNLP's ERNIE pretraining: "global step %d, loss: %f, ..., learning rate: %.5e, loss_scaling: %.2f"
    p = lifted("[2023-03-06 14:50:16,099] [    INFO] - global step 2, loss: 6.191119, lm_loss: 5.423231, "
               "speed: 3.45 steps/s, ips: 27.60 seqs/s, learning rate: 4.00000e-07, loss_scaling: 1024.00")
    assert p.step == 2 and p.metrics["learning_rate"] == 4e-07 and "rate" not in p.metrics
    # no counter: Darknet's banner is its configuration
    assert "learning_rate" not in lifted("Learning Rate: 0.001, Momentum: 0.9, Decay: 0.0005").metrics


def test_the_time_series_library_epoch_line() -> None:
    # "Epoch: {0}, Steps: {1} | Train Loss: {2:.7f} Vali Loss: {3:.7f} Test Loss: {4:.7f}": Steps counts the epoch's
    # batches, Vali is the validation split
    p = lifted("Epoch: 9, Steps: 569 | Train Loss: 0.1383337 Vali Loss: 0.1234406 Test Loss: 0.1445752")
    assert p.epoch == 9.0 and p.step is None and p.attributes["Steps"] == "569"
    assert p.metrics["loss"] == 0.1383337 and p.metrics["eval_loss"] == 0.1234406
    # SpeechBrain's lowercase "steps" after its epoch is the run's step
    assert lifted("epoch: 3, lr: 1.08e-04, steps: 5391, optimizer: Adam - train loss: 1.66e+02").step == 5391


def test_a_scheduler_sentence_that_updates_the_rate() -> None:
    # the Time-Series-Library's adjust_learning_rate: print("Updating learning rate to {}".format(lr))
    assert lifted("Updating learning rate to 0.0030421907349402868").metrics == {"learning_rate": 0.0030421907349402868}


def test_a_loss_whose_split_follows_it() -> None:
    # mmcv's EvalHook merged into mmsegmentation's training log: "..., loss: 0.1675, ..., loss_val: 0.1805"
    assert canonical("loss_val") == "eval_loss" and canonical("loss_test") == "eval_loss"
    assert canonical("acc_seg_val") == "acc_seg_val"
    p = lifted("2022-11-12 21:28:32,346 - mmseg - INFO - Iter [2600/120000]\tlr: 9.807e-03, eta: 4:17:15, "
               "time: 0.103, data_time: 0.003, memory: 6566, decode.loss_ce: 0.1195, loss: 0.1675, "
               "decode.loss_ce_val: 0.1237, loss_val: 0.1805")
    assert p.metrics["loss"] == 0.1675 and p.metrics["eval_loss"] == 0.1805


def test_a_compact_time_at_the_line_start() -> None:
    # GDR-Net's logger (datefmt "%Y%m%d_%H%M%S") in front of its detectron2-style writer
    p = lifted("20231023_095643|core.utils.my_writer@171: eta: 15:06:27 iter: 50699/102400[49.5%] time: 1.0520   "
               "lr: 1.0000e-04  max_mem: 3611M total_grad_norm: N/A total_loss: 1.3978e+01 (1.5329e+01)")
    assert p.ts_ms == calendar.timegm((2023, 10, 23, 9, 56, 43)) * 1000
    assert (p.step, p.max_steps) == (50699, 102400) and p.metrics["loss"] == 13.978
    assert lifted("20231023 095643 loss: 0.5").ts_ms is None  # no separator the datefmt writes


def test_a_ctime_stamp() -> None:
    # nvidia-smi -q's "Timestamp : %a %b %d %H:%M:%S %Y" (and its table's first line, time.ctime(), date(1))
    p = lifted("Timestamp                           : Sun Apr 14 18:55:20 2019")
    assert p.ts_ms == calendar.timegm((2019, 4, 14, 18, 55, 20)) * 1000
    assert lifted("Tue Aug  1 09:05:03 2017").ts_ms == calendar.timegm((2017, 8, 1, 9, 5, 3)) * 1000
    assert lifted("Sun Apr 14 is the day").ts_ms is None


def test_a_level_alone_in_brackets() -> None:
    # Search-R1's rollout warning behind Ray's worker prefix; no time on the line
    assert lifted("(main_task pid=34676) [WARNING] OBSERVATION TOO LONG, CONSIDER CHANGING YOUR CONFIG, 636 & 500"
                  ).level == "WARN"
    assert lifted("[INFO] starting run").level == "INFO"
    assert lifted("[Warning] not a logger's capitals").level is None


def test_the_actor_rate_of_openrlhf_bar() -> None:
    # OpenRLHF's PPO trainer: tqdm postfix "pg=..., rm=..., ret=..., glen=..., tlen=..., kl=..., act_lr=..."
    p = lifted("Train epoch [1/1]:  21%|██        | 841/4096 [1:03:43<4:06:33,  4.54s/it, pg=-0.156, rm=0.25, "
               "ret=0.25, glen=770, tlen=862, kl=0, act_lr=2.03e-8]")
    assert p.epoch == 1.0 and p.metrics["learning_rate"] == 2.03e-08


def test_dev13_figures() -> None:
    s = score(load([str(PROBE_DEV13)]))
    assert s["right"] >= 252
    assert s["absent"]["violated"] == 0
