"""Training and telemetry printers of dev16 of the field probe (tests/fixtures/fields_probe/dev16.yaml), one test per
rule, each line as its printer writes it; and the part's own figures.
"""

from __future__ import annotations

import calendar
from pathlib import Path

from streams.assemble.parse import parse_line
from streams.assemble.tables import ColumnTables
from tests.fields_probe import load, score
from tests.fields_probe import parse_alone as read

READ = calendar.timegm((2024, 6, 1, 12, 0, 0)) * 1000
PROBE_DEV16 = Path(__file__).resolve().parents[2] / "fixtures" / "fields_probe" / "dev16.yaml"


def lifted(line: str):
    return parse_line(line, READ)


def test_joeynmt_s_evaluation_heads() -> None:
    # _validate: "Validation result (%s) at epoch %3d, step %8d: ..." (v1), "Evaluation result (%s) %s, ..." (v2)
    p = lifted("2020-03-10 14:02:11,870 Validation result (greedy) at epoch   1, step     1000: bleu:  12.34, "
               "loss: 45678.1234, ppl:  12.3456, duration: 12.3456s")
    assert p.metrics.get("eval_loss") == 45678.1234 and "loss" not in p.metrics and p.step == 1000
    p = lifted("2022-05-10 10:05:12,456 - INFO - joeynmt.training - Evaluation result (beam search) loss:   3.21, "
               "ppl:  24.80, acc:   0.43, bleu:  12.34, generation: 3.2000[sec], evaluation: 1.1000[sec]")
    assert p.metrics.get("eval_loss") == 3.21 and "loss" not in p.metrics


def test_dlrm_s_train_and_test_heads() -> None:
    # dlrm_s_pytorch.py: "Finished training it {}/{} of epoch {}, ..." and "Testing at - {}/{} of epoch {}, ..."
    p = lifted("Finished training it 1024/4096 of epoch 0, 42.10 ms/it, loss 0.512345, accuracy 76.123 %")
    assert (p.step, p.max_steps, p.epoch, p.metrics["loss"]) == (1024, 4096, 0, 0.512345)
    assert "gpu_utilization_pct" not in p.metrics
    p = lifted("Testing at - 1024/4096 of epoch 0, loss 0.503210, accuracy 77.001 %, best 77.001 %")
    assert p.metrics.get("eval_loss") == 0.50321 and "loss" not in p.metrics and p.step == 1024


def test_ggml_opt_s_validation_bar() -> None:
    # ggml_opt_epoch_callback_progress_bar: "val:   [" then "] data=... loss=%.5lf±%.5lf acc=%.2lf±%.2lf%% ..."
    p = lifted("val:   [==============================] data=0002048/0002048 loss=2.51234±0.02345 acc=43.21±0.21% "
               "t=00:00:03 ETA=00:00:00 ")
    assert p.metrics.get("eval_loss") == 2.51234 and "loss" not in p.metrics
    p = lifted("train: [====================>          ] data=0004096/0006144 loss=2.34567±0.01234 acc=45.67±0.12% "
               "t=00:00:12 ETA=00:00:06 ")
    assert p.metrics.get("loss") == 2.34567


def test_a_step_tag_on_a_line_with_no_training_word() -> None:
    # big_vision's BigVisionMetricWriter.measure: f"\u001b[35m[{self.step}]\u001b[0m {name} = {value}" behind absl
    p = lifted("I0512 10:23:45.124101 139823456 train.py:414] \x1b[35m[1000]\x1b[0m l2_grads = 1.2345678806304932")
    assert p.step == 1000 and p.metrics.get("grad_norm") == 1.2345678806304932
    p = lifted("I0512 10:23:45.123999 139823456 train.py:405] \x1b[35m[1000]\x1b[0m global_schedule = 0.99112")
    assert p.step == 1000 and "learning_rate" not in p.metrics


def test_a_gpustat_row_is_no_step_tag() -> None:
    # gpustat's "[0] NVIDIA ..." row starts like a step tag; it stays the GPU's row
    p = lifted("[0] NVIDIA A100-SXM4-80GB | 45°C, 100 % | 30123 / 81920 MB | user(30000M)")
    assert p.step is None and p.metrics.get("gpu_utilization_pct") == 100.0


def test_dreamer_s_slashed_pairs() -> None:
    # TerminalOutput: print(f"[{step}]", " / ".join(f"{k} {v}" for k, v in formatted.items()))
    out = read("[55000] kl_loss 1.02 / image_loss 8.1e3 / reward_loss 0.98 / model_loss 8.1e3 / "
               "model_grad_norm 183.5 / actor_loss -1.53 / critic_loss 0.43 / fps 12.34")
    assert out["step"] == 55000 and out["metrics"]["kl_loss"] == 1.02 and out["metrics"]["image_loss"] == 8100.0


def test_radeontop_s_dump() -> None:
    # dump.c: "%llu.%llu: " (seconds, then microseconds), "bus %02x, ", "gpu %.2f%%, ", ..., ", vram %.2f%% %.2fmb"
    p = lifted("1578054183.123456: bus 03, gpu 12.50%, ee 0.00%, vgt 0.83%, ta 4.17%, sx 5.00%, sh 0.00%, spi 5.83%, "
               "sc 5.00%, pa 0.00%, db 4.17%, cb 4.17%, vram 9.87% 803.45mb, gtt 1.25% 50.12mb, mclk 100.00% 1.750ghz, "
               "sclk 30.00% 0.495ghz")
    assert p.ts_ms == 1578054183123
    assert p.metrics["gpu_utilization_pct"] == 12.5 and p.metrics["gpu_memory_mb"] == 803.45
    p = lifted("1578054183.5012: bus 0a, gpu 97.50%, ee 0.00%, vgt 60.83%, ta 74.17%, sx 65.00%, sh 0.00%, spi 85.83%, "
               "sc 65.00%, pa 10.00%, db 54.17%, cb 44.17%, vram 62.31% 5098.12mb 8176.00mb")
    assert p.ts_ms == 1578054183005 and p.metrics["gpu_memory_mb"] == 5098.12


def test_mllog_s_epoch_in_its_metadata() -> None:
    # mllog: ":::MLLOG " + json.dumps({"namespace", "time_ms", "event_type", "key", "value", "metadata"})
    p = lifted(':::MLLOG {"namespace": "", "time_ms": 1678901234567, "event_type": "POINT_IN_TIME", "key": '
               '"eval_accuracy", "value": 0.7231, "metadata": {"file": "train.py", "lineno": 412, "epoch_num": 12}}')
    assert p.epoch == 12 and p.ts_ms == 1678901234567
    assert "metadata_lineno" not in p.metrics and p.attributes["metadata.lineno"] == "412"  # its caller's line
    assert lifted('{"epoch_num": 500, "lr": 0.001}').epoch is None  # PaddleOCR's configured epochs


def test_easylm_s_numpy_arrays() -> None:
    # pprint.pformat(jax.device_get(log_metrics)): a 0-d array's repr, "array(1.9821, dtype=float32)"
    out = read(" 'step': 300}", ["{'accuracy': array(0.5012, dtype=float32),",
                                 " 'gradient_norm': array(0.7031, dtype=float32),",
                                 " 'learning_rate': array(0.0003, dtype=float32),",
                                 " 'loss': array(1.9821, dtype=float32),"])
    assert out["step"] == 300 and out["loss"] == 1.9821 and out["grad_norm"] == 0.7031


def test_ppo_terms_are_no_loss() -> None:
    # rsl_rl's OnPolicyRunner.log: f"{'Value function loss:':>35} {mean_value_loss:.4f}" (one term of PPO's objective)
    assert "loss" not in lifted("               Value function loss: 0.0123").metrics
    assert "loss" not in lifted("          Mean value_function loss: 0.0123").metrics
    assert "loss" not in lifted("                    Surrogate loss: -0.0045").metrics
    p = lifted("2020-03-10 13:46:22,231 Epoch   1 Step:      100 Batch Loss:     4.512300 Tokens per Sec:    12345, "
               "Lr: 0.000200")
    assert p.metrics["loss"] == 4.5123  # JoeyNMT's batch loss is the loss


VW_HEADER = ["average  since         example        example  current  current  current",
             "loss     last          counter         weight    label  predict features"]


def test_a_header_over_two_rows() -> None:
    # Vowpal Wabbit's print_update_header: each column named by a word of each row ("average loss": the progressive
    # loss, its only one), then a row per doubling of the examples
    tables = ColumnTables()
    for line in VW_HEADER:
        tables.read("s", line, lifted(line))
    row = "0.674230 0.655313            2            2.0  -1.0000   0.0513       15"
    p = lifted(row)
    tables.read("s", row, p)
    assert p.metrics["loss"] == 0.67423 and p.metrics["since_last"] == 0.655313 and p.step is None


def test_a_lone_row_of_words_heads_nothing() -> None:
    # the upper row holds for the source's next line only: a line between, and the rows read no table
    tables = ColumnTables()
    for line in (VW_HEADER[0], "finished run", VW_HEADER[1]):
        tables.read("s", line, lifted(line))
    row = "0.674230 0.655313            2            2.0  -1.0000   0.0513       15"
    p = lifted(row)
    tables.read("s", row, p)
    assert "loss" not in p.metrics


def test_an_episode_s_steps_beside_its_reward() -> None:
    # rl_games' player: print("reward:", cur_rewards / done_count, "steps:", cur_steps / done_count)
    p = lifted("reward: 294.18793 steps: 1000.0")
    assert p.step is None and p.attributes["steps"] == "1000.0"
    assert lifted("av reward: 12.5 av steps: 212.0").step is None
    # ML-Agents' ConsoleWriter: the run's step, before the episodes' mean reward
    assert lifted("[INFO] RollerBall. Step: 40000. Time Elapsed: 319.171 s. Mean Reward: 0.993. Std of Reward: 0.085. "
                  "Training.").step == 40000


def test_dev16_figures() -> None:
    s = score(load([str(PROBE_DEV16)]))
    assert s["right"] >= 82
    assert s["absent"]["violated"] == 0
    assert s["metric"]["right"] >= 29


def test_a_restart_between_the_two_header_rows_keeps_the_upper_one() -> None:
    # the upper row is part of the source's saved state: a worker restored between the rows reads the table
    from streams.assemble.pipeline import Assembler, RawRecord
    from streams.assemble.state import restore_source, source_state

    def record(i: int, line: str) -> RawRecord:
        return RawRecord("logs.raw", 0, i, line.encode(), b"vw", 1_700_000_000_000 + i)

    row = "0.674230 0.655313            2            2.0  -1.0000   0.0513       15"
    first = Assembler()
    first.feed(record(0, VW_HEADER[0]))
    first.flush_all()  # (the line is read, as an event of its own, before the state is taken)
    saved = [source_state(first, sid) for sid in first.take_dirty()]
    second = Assembler()
    for value in saved:
        if value is not None:
            restore_source(second, value)
    out = second.feed(record(1, VW_HEADER[1])) + second.feed(record(2, row)) + second.flush_all()
    losses = [o.value.get("loss", o.value.get("metrics", {}).get("loss")) for o in out]
    assert 0.67423 in losses, [o.value for o in out]
