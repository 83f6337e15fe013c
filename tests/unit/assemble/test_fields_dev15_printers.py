"""Training and telemetry printers of dev15 of the field probe (tests/fixtures/fields_probe/dev15.yaml), one test per
rule, each line as its printer writes it; and the part's own figures. (test_dev15_printers.py is corpus/wild/dev15's.)
"""

from __future__ import annotations

import calendar
from pathlib import Path

from streams.assemble.parse import parse_line
from streams.assemble.tables import ColumnTables
from tests.fields_probe import load, score
from tests.fields_probe import parse_alone as read

READ = calendar.timegm((2024, 6, 1, 12, 0, 0)) * 1000
PROBE_DEV15 = Path(__file__).resolve().parents[2] / "fixtures" / "fields_probe" / "dev15.yaml"
# What dev15 still misses, left alone: ParlAI's "epochs:0.4" and "total_steps:125" (elsewhere a budget: HF's banner,
# trlx's config) and its "total_train_updates" beside "updates" (the first counter wins); a table row the merger joins
# to the rule above it (skorch's "+" row); Nerfstudio's "7710 (25.70%)" step cell; npu-smi's two-row table; Ludwig's
# transposed table (a row per metric, a column per split); Scenic's figure with no training word ("train_accuracy =
# 0.4512"); OLMo-core's, ParlAI's and the TF Object Detection API's blocks are events (a block of lines is never a
# metric point).


def lifted(line: str):
    return parse_line(line, READ)


def test_fairseq2_s_validation_metrics() -> None:
    # LogMetricRecorder: f"{title} Metrics (step {step_nr})" with title "Validation" for valid, after the logger's " - "
    p = lifted("[Rank 0] 2025-03-10 15:01:02 INFO fairseq2 - Validation Metrics (step 1000) - Loss: 2.1034 | "
               "Wall Time: 2,457s")
    assert p.metrics.get("eval_loss") == 2.1034 and "loss" not in p.metrics and p.step == 1000
    p = lifted("[Rank 0] 2025-03-10 14:22:05 INFO fairseq2 - Train Metrics (step 100) - Loss: 2.34512 | "
               "Gradient Norm: 0.812345")
    assert p.metrics["loss"] == 2.34512


def test_parlai_s_validation_report() -> None:
    # train_model logs the validation report as f"{datatype}:{report}", a dict repr right after the colon
    p = lifted("valid:{'exs': 1000, 'accuracy': 0.452, 'lr': 1, 'num_updates': 282, 'loss': 28.08, 'ppl': 2.244}")
    assert p.metrics.get("eval_loss") == 28.08 and "loss" not in p.metrics and p.step == 282


def test_catalyst_s_loader_head() -> None:
    # ConsoleLogger: f"{loader_key} ({epoch_step}/{num_epochs}) " and the sorted "key: value | ..." pairs
    p = lifted("valid (1/3) accuracy: 0.2018 | loss: 2.1943360423326492 | loss/mean: 2.1943360423326492 | lr: 0.001")
    assert p.metrics.get("eval_loss") == 2.1943360423326492 and "loss" not in p.metrics and p.epoch == 1
    p = lifted("train (2/3) accuracy: 0.8583 | loss: 1.2825655004053673 | lr: 0.02 | momentum: 0.9")
    assert p.metrics["loss"] == 1.2825655004053673 and p.epoch == 2
    p = lifted("* Epoch (1/3) lr: 0.001 | momentum: 0.9")
    assert p.epoch == 1 and p.metrics["learning_rate"] == 0.001


def test_catalyst_s_bar() -> None:
    # TqdmCallback: desc f"{epoch_step}/{num_epochs} * Epoch ({loader_key})"
    p = lifted("2/3 * Epoch (valid): 100%|██████████| 313/313 [00:02<00:00, 140.21it/s, accuracy01=0.974, "
               "loss=0.088, lr=0.001]")
    assert p.metrics.get("eval_loss") == 0.088 and "loss" not in p.metrics and p.epoch == 2
    p = lifted("2/3 * Epoch (train): 100%|██████████| 1875/1875 [00:19<00:00, 98.19it/s, loss=0.105, lr=0.001]")
    assert p.metrics["loss"] == 0.105 and p.epoch == 2


def test_levanter_s_eval_bar() -> None:
    # eval_loss_loop: tqdm(desc="eval" or f"eval {name}"), set_postfix(loss=...)
    p = lifted("eval paloma:  40%|████      | 20/50 [00:05<00:07,  4.00it/s, loss=3.12]")
    assert p.metrics.get("eval_loss") == 3.12 and "loss" not in p.metrics
    assert lifted("train:  12%|█▏        | 1200/10000 [10:02<1:13:21,  2.00it/s, loss=3.21]").metrics["loss"] == 3.21


def test_scenic_s_step_head() -> None:
    # log_train_summary: f"\u001b[35m[{step}]\u001b[0m {name} = {value:.4f}", one figure a line, behind absl's head
    p = lifted("I0614 10:11:12.123456 140234 train_utils.py:1023] \x1b[35m[1000]\x1b[0m learning_rate = 0.0010")
    assert p.step == 1000 and p.metrics["learning_rate"] == 0.001


def test_slurm_s_gres_tres() -> None:
    # sstat/sacct TRESUsageInAve: the NVML plugin's gres/gpumem (its unit on the value) and gres/gpuutil
    p = lifted("4242.batch   cpu=00:52:45,energy=0,fs/disk=40397700700,gres/gpumem=21794M,gres/gpuutil=99,"
               "mem=1254212K,pages=0,vmem=5512340K")
    assert p.metrics["gpu_memory_mb"] == 21794 and p.metrics["gpu_utilization_pct"] == 99
    assert lifted("cpu=00:52:45,gres/gpumem=80G,gres/gpuutil=100,mem=4G").metrics["gpu_memory_mb"] == 81920
    # an allocation is no usage
    assert not lifted("4242  train  COMPLETED  02:13:05  billing=64,cpu=64,gres/gpu=8,mem=512G,node=1").metrics


def test_hl_smi_s_aip_utilization() -> None:
    # hl-smi -Q ... -f csv: nvidia-smi's query CSV with the AIP in place of the GPU
    out = read("HL-225, 00P1-HL2080A0-15-P51Y05-02-01-02, 388, 47, 97, 91224, 98304",
               ["name, uuid, power.draw [W], temperature.aip [C], utilization.aip [%], memory.used [MiB], "
                "memory.total [MiB]"])
    assert out["metrics"]["gpu_utilization_pct"] == 97 and out["metrics"]["gpu_memory_mb"] == 91224


def test_nvidia_smi_compute_apps_memory() -> None:
    # --query-compute-apps=pid,process_name,used_memory: the header names it "used_gpu_memory [MiB]"
    out = read("3858903, VLLM::EngineCore, 6265 MiB", ["pid, process_name, used_gpu_memory [MiB]"])
    assert out["gpu_memory_mb"] == 6265


def test_xpu_smi_s_worded_header() -> None:
    # xpu-smi dump: names in words, units in parentheses
    header = ("Timestamp, DeviceId, GPU Utilization (%), GPU Power (W), GPU Frequency (MHz), GPU Memory Utilization "
              "(%), GPU Memory Used (MiB)")
    out = read("15:44:36.481,    0, 88.20, 42.10, 2400, 51.00, 8160.00", [header])
    assert out["metrics"]["gpu_utilization_pct"] == 88.2 and out["metrics"]["gpu_memory_mb"] == 8160.0
    # words with one unit among them are no header (a sentence may have commas)
    out = read("1, 2, 3", ["We tried lr, batch size and steps (all)"])
    assert "metrics" not in out and out.get("step") is None


def test_namespaced_losses() -> None:
    # trlx: "losses/total_loss" (PPO), "losses/loss" (ILQL) in its bar's description
    p = lifted("[losses/total_loss: 0.51 | losses/policy_loss: 0.02 | losses/value_loss: 0.97]:  12%|█▏        | "
               "1200/10000 [10:23<1:16:12,  1.92it/s]")
    assert p.metrics["loss"] == 0.51
    # TF Object Detection API's model_lib_v2: "Loss/total_loss"
    p = lifted("INFO:tensorflow:{'Loss/classification_loss': 0.28712, 'Loss/total_loss': 0.57955, "
               "'learning_rate': 0.0319994}")
    assert p.metrics["loss"] == 0.57955


def test_printers_own_loss_names() -> None:
    # tensorpack's ImageNet examples: "xentropy-loss"; ParlAI's ranking agents: "mean_loss"
    assert lifted("[0717 08:11:59 @monitor.py:476] xentropy-loss: 4.3052").metrics["loss"] == 4.3052
    p = lifted("[ time:20.0s total_exs:510 epochs:0.01 ] {'exs': 510, 'mean_loss': 10.18, 'gnorm': 369.0, "
               "'lr': 1.7e-05}")
    assert p.metrics["loss"] == 10.18


def test_pax_s_step_i() -> None:
    p = lifted("I0614 10:20:00.000000 140234 programs.py:512] step_i: 1000, training loss: 2.7781076")
    assert p.step == 1000 and p.metrics["loss"] == 2.7781076


def test_olmo_core_s_rows() -> None:
    # ConsoleLoggerCallback: "    {name}={format_float(value)}" rows; "optim/LR (group {i})", "gpu_memory/GPU active
    # mem (GiB)"
    assert lifted("    optim/LR (group 0)=6.00E-05").metrics["learning_rate"] == 6e-05
    assert lifted("    gpu_memory/GPU active mem (GiB)=45.21").metrics["gpu_memory_mb"] == 45.21 * 1024


def test_olmo_core_s_step_report() -> None:
    # the progress marker and its rows are one message: the rows are read as a report's
    out = read("    optim/LR (group 0)=0.0003",
               ["2025-01-15 10:00:00.123\tnode-1:0\tolmo_core.train.trainer:1187\tINFO\t[step=100/50000,epoch=1,"
                "eta=1d5h12m30s]", "    train/CE loss=3.213", "    optim/total grad norm=0.2813"])
    assert out["step"] == 100 and out["loss"] == 3.213 and out["grad_norm"] == 0.2813
    assert out["learning_rate"] == 0.0003


PARLAI_HEAD = ("    clen  clip  ctpb  ctps  exps  exs  gnorm  gpu_mem  llen  loss    lr  ltpb  ltps   ppl  token_acc  "
               "token_em  total_train_updates   tpb   tps  ups")


def test_a_table_ending_a_block() -> None:
    # ParlAI's train_model: the time line and the table's header one message, the row less deep an event of its own
    out = read("   18.22     1 583.3  3171 174.1 4000  22.14    .1003 11.91 3.017 1e-06 381.1  2073 20.42      .3805   "
               "      0                  125 964.4 5244 5.443",
               ["16:29:19 | time:12s total_exs:4000 total_steps:125 epochs:0.06 time_left:2130s",
                "    clen  clip  ctpb  ctps  exps  exs  gnorm  gpu_mem  llen  loss    lr  ltpb  ltps   ppl  token_acc  "
                "token_em  total_train_updates   tpb  tps   ups"])
    assert out["metrics"]["loss"] == 3.017 and out["metrics"]["grad_norm"] == 22.14


def test_a_table_inside_a_block() -> None:
    # ... or the row as deep as the header, the three lines one event
    out = read("    17.9 .9688 571.2  9821 550.3 4128  7.012    .2117 12.03 2.504 7e-06 385.5  6628 12.23      .4651   "
               "      0                 4250 956.7 16449 17.2",
               ["17:41:05 | time:1310s total_exs:136000 total_steps:4250 epochs:2.13 time_left:1020s", PARLAI_HEAD])
    assert out["loss"] == 2.504 and out["grad_norm"] == 7.012 and out["learning_rate"] == 7e-06


def test_a_share_of_memory_is_no_amount() -> None:
    # ParlAI's float_formatter drops a fraction's leading zero: its "gpu_mem" is the share of the GPU's memory
    out = read("   3.017  1e-06    .1003                  125", ["   loss     lr  gpu_mem  total_train_updates"])
    assert out["metrics"]["loss"] == 3.017 and out["metrics"].get("gpu_memory_mb") is None
    # a figure with its leading zero is an amount
    out = read("   3.017  1e-06   0.1003                  125", ["   loss     lr  gpu_mem  total_train_updates"])
    assert out["metrics"]["gpu_memory_mb"] == 0.1003


SKORCH = ["      epoch    train_loss    valid_acc    valid_loss    cp     dur",
          "    -------  ------------  -----------  ------------  ----  ------"]


def test_a_row_with_a_blank_cell() -> None:
    # skorch's PrintLog writes an event column's False as nothing: the cells are placed under their names
    out = read("         10        0.1992       0.9453        0.2101        0.0182", SKORCH)
    assert out["epoch"] == 10 and out["metrics"]["loss"] == 0.1992 and out["metrics"]["eval_loss"] == 0.2101
    assert out["metrics"]["dur"] == 0.0182 and "cp" not in out["metrics"]


def test_a_coloured_row() -> None:
    # ... and colours the best value of each score
    out = read("      2        \x1b[36m0.6385\x1b[0m       \x1b[32m0.7100\x1b[0m        \x1b[35m0.5840\x1b[0m  3.1247",
               ["  epoch    train_loss    valid_acc    valid_loss     dur",
                "-------  ------------  -----------  ------------  ------"])
    assert out["epoch"] == 2 and out["metrics"]["loss"] == 0.6385 and out["metrics"]["eval_loss"] == 0.584


def test_dev15_figures() -> None:
    s = score(load([str(PROBE_DEV15)]))
    assert s["right"] >= 202
    assert s["absent"]["violated"] == 0
    assert s["metric"]["right"] >= 112


def test_an_event_column_s_plus() -> None:
    # ... and its True as "+": no figure, and no word that makes the row text
    tables = ColumnTables()
    tables.read("s", SKORCH[0], lifted(SKORCH[0]))
    p = lifted("          3        0.2875       0.8806        0.3201     +  0.0214")
    tables.read("s", "          3        0.2875       0.8806        0.3201     +  0.0214", p)
    assert p.epoch == 3 and p.metrics["loss"] == 0.2875 and "cp" not in p.metrics and "cp" not in p.attributes


def test_slurm_s_gpumem_without_its_unit() -> None:
    # sacct --noconvert prints the TRES' memory in bytes
    assert lifted("4242.0|gres/gpumem=22852935680,gres/gpuutil=99").metrics["gpu_memory_mb"] == 22852935680 / 1048576


def test_a_dict_printed_over_lines() -> None:
    # model_lib_v2: tf.logging.info(pprint.pformat(logged_dict_np, width=40)), one key a line behind absl's head
    out = read(" 'learning_rate': 0.0319994}",
               ["I0607 10:11:12.346012 140234567890 model_lib_v2.py:708] {'Loss/classification_loss': 0.28712,",
                " 'Loss/localization_loss': 0.14231,", " 'Loss/regularization_loss': 0.15012,",
                " 'Loss/total_loss': 0.57955,"])
    assert out["loss"] == 0.57955 and out["learning_rate"] == 0.0319994


def test_tensorpack_s_global_step_in_words() -> None:
    # train/base.py: "Epoch {} (global_step {}) finished, time:{}."
    p = lifted("[0717 08:10:12 @base.py:282] Epoch 3 (global_step 15000) finished, time:1 minute 2 seconds.")
    assert p.step == 15000 and p.epoch == 3
    assert lifted("max_global_step 1000 reached").step is None  # a budget's name


def test_tensorpack_s_head() -> None:
    # utils/logger.py: "[%m%d %H:%M:%S @file:line]", then WRN / ERR / DBG (coloured) or nothing for INFO
    p = lifted("[0717 08:09:30 @monitor.py:359] \x1b[5m\x1b[31mWRN\x1b[0m Found existing JSON inside train_log/mnist, "
               "will append to it.")
    assert p.level == "WARN" and p.ts_ms == calendar.timegm((2024, 7, 17, 8, 9, 30)) * 1000
    assert lifted("[0717 08:09:01 @base.py:241] Graph Finalized.").level == "INFO"
