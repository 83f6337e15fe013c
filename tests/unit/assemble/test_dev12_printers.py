"""Step lines of the printers dev12 of the field probe holds (tests/fixtures/fields_probe/dev12.yaml), one test per
rule, each line as its printer writes it; and the part's own figures."""

from __future__ import annotations

import calendar
from pathlib import Path

from streams.assemble.parse import parse_line
from tests.fields_probe import load, score

READ = calendar.timegm((2024, 6, 1, 12, 0, 0)) * 1000
PROBE_DEV12 = Path(__file__).resolve().parents[2] / "fixtures" / "fields_probe" / "dev12.yaml"
# What dev12 still misses, left alone: MMSR's two-digit-year time "20-05-22 17:42:09.481" (BasicSR's ancestor: a
# year of two digits first cannot be told from a day by the line alone) and flashlight's "dev-clean-loss" (a held-out
# set named by the user).


def lifted(line: str):
    return parse_line(line, READ)


def test_an_epoch_with_its_total_in_brackets() -> None:
    # DCGAN-tensorflow "Epoch: [%2d/%2d] [%4d/%4d] ..."; MindFormers' MFLossMonitor "{ Epoch:[%3d/%3d], step:[...]"
    p = lifted("Epoch: [ 3/25] [ 100/1093] time: 60.1234, d_loss: 1.23456789, g_loss: 0.98765432")
    assert p.epoch == 3.0 and p.step is None
    p = lifted("{ Epoch:[  1/  2], step:[   10/  100], loss: 5.123, per_step_time: 1234ms, lr: 0.0001, "
               "overflow cond: False, loss_scale: 1.0, global_norm: [1.234], train_throughput_per_npu: 12.345T")
    assert p.epoch == 1.0 and p.metrics["loss"] == 5.123 and p.metrics["grad_norm"] == 1.234


def test_swin_train_head_and_its_rate_behind_the_eta() -> None:
    p = lifted("[2022-03-14 09:05:16 swin_tiny] (main.py 226): INFO Train: [14/300][250/1251]\teta 0:10:52 "
               "lr 0.000710\ttime 0.6408 (0.6516)\tloss 6.5584 (6.3074)\tgrad_norm 6.5613 (10.6225)\tmem 14764MB")
    assert p.epoch == 14.0 and p.step is None
    assert p.metrics["learning_rate"] == 0.00071 and p.metrics["loss"] == 6.5584


def test_char_rnn_gpt2_and_llama2c_step_heads() -> None:
    p = lifted("100/21150 (epoch 0.236), train_loss = 2.31484356, grad/param norm = 5.1234e-01, time/batch = 0.0912s")
    assert (p.step, p.max_steps, p.epoch) == (100, 21150, 0.236)
    assert lifted("[100 | 123.45] loss=3.21 avg=3.45").step == 100
    p = lifted("100 | loss 3.2345 | lr 5.000000e-04 | 123.45ms | mfu 12.34%")
    assert p.step == 100 and p.metrics["loss"] == 3.2345


def test_printers_keys() -> None:
    # flashlight's "nupdates", RLlib's "grad_gnorm", Trax's "gradients_l2", GluonNLP's "current loss"
    assert lifted("epoch:        1 | nupdates:         1000 | lr: 0.050000 | loss:   23.45678").step == 1000
    assert lifted("{'training_iteration': 5, 'total_loss': 12.3, 'grad_gnorm': 3.2}").metrics["grad_norm"] == 3.2
    p = lifted("[Epoch 0 Batch 200/2983] current loss 6.89, ppl 982.31, throughput 2000.45 samples/s, lr 20.00")
    assert p.metrics["loss"] == 6.89


def test_trax_summaries() -> None:
    p = lifted("Step    100: train WeightedCategoryCrossEntropy |  2.30258512")
    assert p.step == 100 and p.metrics["loss"] == 2.30258512
    p = lifted("Step    100: eval  WeightedCategoryCrossEntropy |  2.29001234")
    assert p.metrics == {"eval_loss": 2.29001234}
    assert lifted("Step    100: train                 gradients_l2 |  0.52341234").metrics["grad_norm"] == 0.52341234


def test_nnunet_time_colon_head_and_its_learning_rate() -> None:
    p = lifted("2024-04-26 09:41:39.493872: train_loss 0.7088")
    assert p.metrics == {"loss": 0.7088} and p.ts_ms == calendar.timegm((2024, 4, 26, 9, 41, 39)) * 1000 + 493
    assert lifted("2024-04-23 15:23:41.832845: val_loss -0.771").metrics == {"eval_loss": -0.771}
    assert lifted("2024-04-26 09:41:40.311464: Current learning rate: 0.00999").metrics["learning_rate"] == 0.00999
    assert not lifted("lr: 0.01").metrics  # a lone rate is still a setting


def test_a_colon_may_end_a_spaced_pair() -> None:
    # TF-Agents' tutorials: print('step = {0}: loss = {1}'.format(step, train_loss))
    p = lifted("step = 200: loss = 12.534852981567383")
    assert p.step == 200 and p.metrics["loss"] == 12.534852981567383
    assert lifted("time = 10:20:30, loss = 0.5").metrics.get("time") is None  # a clock is no figure


def test_a_counter_heads_the_pair_after_its_colon() -> None:
    # TF-Agents' tutorials: print('step = {0}: Average Return = {1}'.format(step, avg_return))
    assert lifted("step = 1000: Average Return = 15.600000381469727").step == 1000
    # a banner's counters of two words head nothing
    p = lifted("Total steps = 60: Num Epochs = 3")
    assert p.step is None and p.epoch is None and p.max_steps is None


def test_basicsr_rate_tuple() -> None:
    p = lifted("2022-06-01 10:20:30,123 INFO: [train..][epoch:  0, iter:     100, lr:(2.000e-04,)] "
               "[eta: 1 day, 2:03:04, time (data): 0.512 (0.003)] l_pix: 3.1234e-02 ")
    assert (p.step, p.epoch) == (100, 0.0) and p.metrics["learning_rate"] == 0.0002


def test_basicsr_loss_terms_and_image_quality() -> None:
    # MessageLogger: f"{k}: {v:.4e} " per logged loss, named "l_" and the term; MMSR's validation "psnr: {:.4e}"
    p = lifted("19-08-09 08:25:25.996 - INFO: <epoch: 86, iter: 107,200, lr:2.500e-05> l_g_pix: 1.4819e-03 "
               "l_g_fea: 1.0389e+00 l_g_gan: 7.2056e-02 l_d_real: 1.4378e-05 l_d_fake: 4.0903e-06 D_real: -2.5625e+01")
    assert p.metrics["l_g_pix"] == 0.0014819 and p.metrics["l_d_fake"] == 4.0903e-06 and "d_real" not in p.metrics
    assert lifted("19-08-09 08:23:24.709 - INFO: <epoch: 86, iter: 107,000> psnr: 1.3831e+01").metrics == {
        "psnr": 13.831}


def test_deepspeech_validation_bar_is_an_evaluation() -> None:
    p = lifted("Epoch   0 | Validation | Elapsed Time: 0:00:10 | Steps: 20 | Loss: 98.765432 | Dataset: data/dev.csv")
    assert p.metrics.get("eval_loss") == 98.765432 and "loss" not in p.metrics
    p = lifted("Epoch   0 |   Training | Elapsed Time: 0:01:23 | Steps: 120 | Loss: 123.456789")
    assert p.metrics["loss"] == 123.456789


def test_tegrastats_gpu_load() -> None:
    p = lifted("RAM 2344/3964MB (lfb 4x4MB) SWAP 0/1982MB (cached 0MB) CPU [12%@1479,8%@1479] EMC_FREQ 0% "
               "GR3D_FREQ 99%@921 APE 25 PLL@32C GPU@33.5C")
    assert p.metrics["gpu_utilization_pct"] == 99.0
    p = lifted("RAM 5304/30536MB (lfb 5187x4MB) CPU [3%@729,1%@729] EMC_FREQ 0%@3199 GR3D_FREQ 87%@[1300,1300] GPU@44C")
    assert p.metrics["gpu_utilization_pct"] == 87.0


def test_tensorflow_nmt_pairs_one_blank_apart() -> None:
    # print_step_info: "%sstep %d lr %g step-time %.2fs wps %.2fK ppl %.2f gN %.2f %s, %s" (gN the gradients' norm)
    p = lifted("  global step 200 lr 1 step-time 0.45s wps 12.34K ppl 1234.56 gN 5.67 bleu 0.00, Mon Jan  1 10:00:00 "
               "2018")
    assert p.step == 200 and p.metrics["learning_rate"] == 1.0 and p.metrics["grad_norm"] == 5.67


def test_a_counter_in_percent_g() -> None:
    # improved-diffusion's HumanOutputFormat (OpenAI baselines' logger): every value "%-8.3g", the step too
    assert lifted("| step          | 1e+03    |").step == 1000
    assert lifted("| step          | 1.07e+05 |").step == 107000
    assert lifted("| step          | 1e-03    |").step is None  # no count


def test_a_count_grouped_by_thousands() -> None:
    # MMSR's logger: '<epoch:{:3d}, iter:{:8,d}, lr:{:.3e}>'
    p = lifted("19-08-09 08:25:25.996 - INFO: <epoch: 86, iter: 107,200, lr:2.500e-05> l_g_pix: 1.4819e-03")
    assert (p.step, p.epoch) == (107200, 86.0)
    assert (lifted("Step 1,000/10,000 | loss 0.5").step, lifted("Step 1,000/10,000 | loss 0.5").max_steps) == (
        1000, 10000)
    assert lifted("step 1,2,3 loss 0.5").step == 1  # a list, not one count


def test_dev12_figures() -> None:
    s = score(load([str(PROBE_DEV12)]))
    assert s["right"] >= 151
    assert s["absent"]["violated"] == 0
