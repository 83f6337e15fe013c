"""Step lines of the printers dev9 of the field probe holds (tests/fixtures/fields_probe/dev9.yaml), one test per
rule, each line as its printer writes it; and the part's own figures."""

from __future__ import annotations

import calendar
import math
from pathlib import Path

from streams.assemble.parse import parse_line
from tests.fields_probe import load, score
from tests.unit.assemble.corpus_helpers import parsed_lines

READ = calendar.timegm((2024, 6, 1, 12, 0, 0)) * 1000
PROBE_DEV9 = Path(__file__).resolve().parents[2] / "fixtures" / "fields_probe" / "dev9.yaml"
# Ray Tune's newer trial table (AIR_TABULATE_TABLEFMT) is drawn in a "│" box, which the merger keeps as one event
# of all the trials in it: its rows are not read one by one.
DEV9_KNOWN_MISSES: set[tuple[str, str]] = {
    ("ray_tune_trial_table", "step"), ("ray_tune_trial_table", "loss"), ("ray_tune_trial_table", "learning_rate"),
    ("ray_tune_trial_table", "metric"),
}


def lifted(line: str):
    return parse_line(line, READ)


def parsed(tmp_path: Path, *lines: str) -> list[dict]:
    return parsed_lines(tmp_path, lines, READ)


def test_xgboost_round_names_each_metric_by_its_data_set() -> None:
    # EvaluationMonitor: f"[{epoch}]" + f"\t{data}-{metric}:{score:.5f}" per data set and metric
    p = lifted("[0]\ttrain-rmse:0.49410\tvalidation-rmse:0.50012")
    assert p.step == 0 and p.metrics == {"train_rmse": 0.4941, "validation_rmse": 0.50012}
    # xgb.cv writes the standard deviation after a "+"; ndcg@10 is a metric's name
    p = lifted("[20]\ttrain-auc:0.98765+0.00123\ttest-ndcg@10:0.95432+0.00456")
    assert p.step == 20 and p.metrics == {"train_auc": 0.98765, "test_ndcg_10": 0.95432}


def test_boosting_losses_are_the_loss_and_the_eval_loss() -> None:
    p = lifted("[10]\ttrain-mlogloss:0.41234\ttrain-merror:0.08000\ttest-mlogloss:0.45678\ttest-merror:0.10000")
    assert p.metrics == {"loss": 0.41234, "train_merror": 0.08, "eval_loss": 0.45678, "test_merror": 0.1}
    # the scikit-learn wrapper's eval_set, numbered in the order given (often the training data first): no set
    # is known to be held out
    p = lifted("[0]\tvalidation_0-logloss:0.61943\tvalidation_1-logloss:0.62311")
    assert p.metrics == {"validation_0_logloss": 0.61943, "validation_1_logloss": 0.62311}


def test_lightgbm_log_evaluation() -> None:
    # _format_eval_result: f"{dataset_name}'s {metric_name}: {metric_value:g}"
    p = lifted("[50]\ttraining's auc: 0.912345\ttraining's binary_logloss: 0.32101\tvalid_1's auc: 0.88765\t"
               "valid_1's binary_logloss: 0.36789")
    assert p.step == 50
    assert p.metrics == {"training_auc": 0.912345, "loss": 0.32101, "valid_1_auc": 0.88765, "eval_loss": 0.36789}
    # cv: the aggregate "cv_agg" with the split in front of the metric, and the standard deviation after " + "
    p = lifted("[20]\tcv_agg's valid binary_logloss: 0.345678 + 0.0123456")
    assert p.step == 20 and p.metrics == {"eval_loss": 0.345678}


def test_lightgbm_native_log() -> None:
    # GBDT::OutputMetric behind Log's "[LightGBM] [Info] " head
    p = lifted("[LightGBM] [Info] Iteration:10, valid_1 l2 : 0.215432")
    assert (p.level, p.step, p.metrics) == ("INFO", 10, {"valid_1_l2": 0.215432})
    p = lifted("[LightGBM] [Warning] No further splits with positive gain, best gain: -inf")
    assert p.level == "WARN" and not p.metrics and p.step is None


def test_catboost_console() -> None:
    # TConsoleLoggingBackend: iteration ":" then "\t{source}: {value}" of the main metric, best, total, remaining
    p = lifted("250:\tlearn: 0.3120456\ttest: 0.3398121\tbest: 0.3391002 (231)\ttotal: 14.2s\tremaining: 42.5s")
    assert p.step == 250
    assert p.metrics == {"loss": 0.3120456, "eval_loss": 0.3398121, "best_test": 0.3391002}
    assert p.attributes["remaining"] == "42.5s"
    p = lifted("10:\tlearn: 0.5012345\ttest: 0.5123456\ttest1: 0.5234567\tbest: 0.5234567 (10)\ttotal: 620ms\t"
               "remaining: 55.8s")
    assert p.metrics["eval_loss"] == 0.5123456 and p.metrics["test1"] == 0.5234567
    assert math.isnan(lifted("3:\tlearn: nan\ttotal: 1s\tremaining: 2s").metrics["loss"])
    # a numbered list of named figures is no round
    assert not lifted("3:\tlatency: 12\tcount: 5").metrics


def test_a_round_is_a_step_metric_whatever_it_measures(tmp_path: Path) -> None:
    out = parsed(tmp_path, "[3]\ttrain-ndcg@10:0.81234\tvalid-ndcg@10:0.76543")
    assert "metrics" in out[-1] and out[-1]["step"] == 3
    # the early-stopping callbacks' sentences are no round
    assert "metrics" not in parsed(tmp_path, "Training until validation scores don't improve for 10 rounds")[-1]


PMON = ("# gpu         pid   type     fb   ccpm     sm    mem    enc    dec    jpg    ofa    command ",
        "# Idx           #    C/G     MB     MB      %      %      %      %      %      %    name ")


def test_nvidia_smi_pmon_rows(tmp_path: Path) -> None:
    # nvidia-smi pmon -s um: a row per process, its type and command text, "-" where it used none
    out = parsed(tmp_path, *PMON, "    0      41822     C  30120      0     88     35      -      -      -      -    "
                                  "python")
    assert out[-1]["metrics"]["gpu_utilization_pct"] == 88.0 and out[-1]["metrics"]["gpu_memory_mb"] == 30120.0
    assert "pid" not in out[-1]["metrics"]
    out = parsed(tmp_path, *PMON, "    0          -     -      -      -      -      -      -      -      -      -    -")
    assert "metrics" not in out[-1]


def test_nvidia_smi_dmon_date_and_time_columns(tmp_path: Path) -> None:
    # nvidia-smi dmon -o DT: the local date and time in front of the GPU's figures
    out = parsed(tmp_path, "#Date       Time        gpu    pwr  gtemp  mtemp     sm    mem ",
                 "#YYYYMMDD   HH:MM:SS    Idx      W      C      C      %      % ",
                 " 20240307   10:41:57      0    312     61     72     99     41 ")
    assert out[-1]["metrics"]["gpu_utilization_pct"] == 99.0
    assert out[-1]["timestamp"] == calendar.timegm((2024, 3, 7, 10, 41, 57)) * 1000


def test_ray_tune_trial_table_in_psql_bars(tmp_path: Path) -> None:
    # progress_reporter._trial_progress_table: tabulate(..., tablefmt="psql"), "iter" the training_iteration
    head = ("| Trial name           | status     | loc           |   lr |   iter |   total time (s) | loss |",
            "|----------------------+------------+---------------+------+--------+-----------------+------|")
    out = parsed(tmp_path, *head, "| train_fn_abc12_00000 | TERMINATED | 127.0.0.1:123 | 0.01 |     10 |            "
                                  "12.3 | 0.45 |")
    assert out[-1]["step"] == 10
    assert out[-1]["metrics"]["loss"] == 0.45 and out[-1]["metrics"]["learning_rate"] == 0.01
    out = parsed(tmp_path, *head, "| train_fn_abc12_00002 | PENDING    |               | 0.1  |        |            "
                                  "     |      |")
    assert "metrics" not in out[-1]


def test_probe_dev9_misses_only_the_known() -> None:
    s = score(load([str(PROBE_DEV9)]))
    assert {(fw, name) for fw, name, *_ in s["misses"]} <= DEV9_KNOWN_MISSES
    assert s["absent"]["violated"] == 0
    assert s["metric"]["right"] == s["metric"]["checked"] - 1  # the boxed table's row
