"""Boosting rounds: the report a gradient-boosting library prints after each iteration, as rules.

- XGBoost's ``EvaluationMonitor`` (python-package/xgboost/callback.py): ``f"[{epoch}]"`` then, per data set and
  metric, ``_fmt_metric``'s ``f"\\t{data}-{metric}:{score:.5f}"`` (``f"+{std:.5f}"`` after it under ``xgb.cv``);
  the R package's ``cb.print.evaluation`` prints the same, counting from 1.
- LightGBM's ``log_evaluation`` (python-package/lightgbm/callback.py): ``f"[{iteration + 1}]\\t"`` then the
  ``_format_eval_result`` of each, ``f"{dataset_name}'s {metric_name}: {value:g}"`` (``f" + {stdv:g}"`` under
  ``cv``, whose results are named ``cv_agg`` with the split in front of the metric: ``cv_agg's valid l2``); its C++
  ``GBDT::OutputMetric`` logs ``"Iteration:%d, %s %s : %f"`` (data set, metric) behind ``[LightGBM] [Info] ``.
- CatBoost's console backend (catboost/libs/loggers/logger.h ``TConsoleLoggingBackend``): ``f"{iteration}:"`` then
  ``"\\t{source}: {value}"`` of the main metric per data set (``learn``, ``test``, ``test1``, ...), ``"\\tbest:
  {value} ({iteration})"`` after an evaluation set, and the ``total:`` and ``remaining:`` times.

Each value is a metric named by its data set and its metric (``train-rmse`` is ``train_rmse``, ``valid_0's l2`` is
``valid_0_l2``; CatBoost names no metric, so a set past the first evaluation set is named alone, ``test1``). A loss
(a metric named ``*loss``; CatBoost's main metric, the loss function unless ``eval_metric`` names another) of the
training set (``train``, ``training``, ``learn``) is the ``loss``, of the first other set the ``eval_loss``, but
where the sets are numbered names of one kind (XGBoost's scikit-learn wrapper names its ``eval_set``
``validation_0``, ``validation_1``, ... in the order given, often the training data first): which one is held out
is not known, and each loss stays a metric of its own. A round's report is a step line whatever it measures.
"""

from __future__ import annotations

import re

from streams.assemble.keys import norm
from streams.assemble.lift import Parsed, lift_value
from streams.assemble.stepruns import NUMBER

_TRAINING_SETS = frozenset(("train", "training", "learn"))
# "[12]\t" then the pairs: XGBoost's "name-metric:0.12345" or LightGBM's "name's metric: 0.12345".
_ROUND = re.compile(r"\s*\[(\d+)\]\t")
# The figure after the first ':' is checked once, first: else a cell whose figure is wrong was tried again
# for each '-' before it, each try reading to the ':' (a cell of dashes: quadratic).
_XGB_PAIR = re.compile(rf"(?=[^\t:]*:{NUMBER}(?:\+{NUMBER})?\Z)([^\t:'-][^\t:']*?)-([^\t:]+):({NUMBER})(?:\+{NUMBER})?")
_LGB_PAIR = re.compile(rf"([^\t']+)'s ([^\t:]+): ({NUMBER})(?: \+ {NUMBER})?")
# LightGBM's C++ OutputMetric: "Iteration:%d, %s %s : %f", one line per data set and metric.
_LGB_CPP = re.compile(rf"Iteration:(\d+), (\S+) (\S+) : ({NUMBER})\s*")
# CatBoost: "0:\tlearn: 0.6931472\ttest: 0.6932018\tbest: 0.6932018 (0)\ttotal: 57ms\tremaining: 56.9s", the first
# source the training set or an evaluation set (a numbered list of "name: figure" cells is no round).
_CATBOOST = re.compile(r"\s*(\d+):\t(?:learn|test\d*|validation(?:_?\d+)?|eval\w*): ")
_CATBOOST_CELL = re.compile(rf"([A-Za-z]\w*): ({NUMBER}|[^\t]*)")
_CATBOOST_TIMES = frozenset(("total", "remaining"))
_NUMBERED = re.compile(r"([A-Za-z]+)_?\d+")


def lift_round(body: str, p: Parsed) -> bool:
    """Lift a boosting round's report; True when the line is one."""
    c = body.lstrip()[:1]
    if c == "[":
        m = _ROUND.match(body)
        if m is None:
            return False
        rest = body[m.end():].rstrip().split("\t")
        pairs = [_LGB_PAIR.fullmatch(cell) for cell in rest] if "'s " in rest[0] else []
        printer = "lightgbm"
        if not pairs or None in pairs:
            pairs, printer = [_XGB_PAIR.fullmatch(cell) for cell in rest], "xgboost"
        if None in pairs:
            return False
        found = [(mm.group(1), mm.group(2), mm.group(3)) for mm in pairs if mm is not None]
        if printer == "lightgbm":
            found = [_cv_split(data, metric, value) for data, metric, value in found]
        return _report(p, printer, m.group(1), found)
    if c.isdigit():
        m = _CATBOOST.match(body)
        return m is not None and _catboost(body, m, p)
    if "Iteration:" in body:
        m = _LGB_CPP.search(body)
        if m is not None and m.end() == len(body):
            return _report(p, "lightgbm", m.group(1), [(m.group(2), m.group(3), m.group(4))])
    return False


def _cv_split(data: str, metric: str, value: str) -> tuple[str, str, str]:
    """LightGBM's ``cv`` names its aggregate ``cv_agg`` and writes the split in front of the metric."""
    if data == "cv_agg" and " " in metric:
        split, _, metric = metric.partition(" ")
        return split, metric, value
    return data, metric, value


def _report(p: Parsed, printer: str, step: str, values: list[tuple[str, str, str]]) -> bool:
    """(data set, metric, value) of one round into ``p``."""
    sets = {data for data, _, _ in values if data.lower() not in _TRAINING_SETS}
    kinds = [m.group(1) for data in sets if (m := _NUMBERED.fullmatch(data)) is not None]
    numbered = len(sets) > 1 and len(kinds) == len(sets) and len(set(kinds)) == 1
    held_out = None if numbered else next((data for data, _, _ in values if data in sets), None)
    lift_value(p, "step", "step", step)
    for data, metric, value in values:
        name = norm(f"{data}_{metric}")
        if metric.lower().endswith("loss"):
            if data.lower() in _TRAINING_SETS and "loss" not in p.metrics:
                name = "loss"
            elif data == held_out and "eval_loss" not in p.metrics:
                name = "eval_loss"
        lift_value(p, name, name, value)
    p.fmt = p.fmt or printer
    p.report = p.wide = True
    return True


def _catboost(body: str, m: re.Match, p: Parsed) -> bool:
    cells = [_CATBOOST_CELL.fullmatch(cell) for cell in body[m.end(1) + 2:].rstrip().split("\t")]
    if None in cells:
        return False
    lift_value(p, "step", "step", m.group(1))
    held_out = None
    for cell in cells:
        if cell is None:
            continue
        source, value = cell.groups()
        if source in _CATBOOST_TIMES:
            p.attributes.setdefault(source, value)
            continue
        num = re.match(NUMBER, value)
        if num is None:
            return False
        if source == "best":  # "best: 0.6932018 (0)": the best value so far of the set before it, and its round
            name = f"best_{held_out or 'test'}"
        elif source.lower() in _TRAINING_SETS:
            name = "loss"
        elif held_out is None:
            held_out, name = source, "eval_loss"
        else:
            name = norm(source)
        lift_value(p, name, name, num.group(0))
    p.fmt = p.fmt or "catboost"
    p.report = p.wide = True
    return True
