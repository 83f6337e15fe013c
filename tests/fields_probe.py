"""Score field lifting on probe lines taken from frameworks' printing code (``tests/fixtures/fields_probe``).

A probe file is YAML: a list of frameworks, each with the ``source`` it was taken from (a URL or the
code that prints it) and its ``lines``; each line says which typed fields Sluice should lift
(``expect``: field -> value as the line means it; ``timestamp`` as ISO 8601; a number an event keeps in its
attributes by its key, a text attribute as ``attributes.<key>``), which it must not
(``absent``: configuration and banners are not training state), and whether it must or must not be
a step metric point (``metric``). Each line is parsed alone, as a file of its own, by ``sluice
parse``'s code path, so no line borrows another's time or task; a line may list ``before`` it the
earlier lines of its source that a reader needs (a column table's header), which go first in that
file, and the line is then scored on the last event that comes out.

``python tests/fields_probe.py FILE... [--misses]`` prints, per field, how many expected values
were lifted at all and how many with the right value and type; ``--json`` prints the same figures
as JSON.
"""

from __future__ import annotations

import argparse
import json
import math
import sys
import tempfile
from collections import Counter
from datetime import datetime
from pathlib import Path

import yaml

from streams.assemble.pipeline import parse_files

READ_TS = 946_684_800_000  # 2000-01-01: a line's own time never equals it by chance
INT_FIELDS = frozenset(("step", "max_steps"))
TEXT_FIELDS = frozenset(("task_id", "task_type", "model_name", "phase", "level", "logger", "message", "error_class",
                         "error_type"))
TEXT_ATTRIBUTE = "attributes."  # ``attributes.<key>``: an attribute compared as text (a name, not a figure)
TOP_METRICS = frozenset(("loss", "learning_rate", "grad_norm", "gpu_memory_mb", "gpu_utilization_pct"))


def load(paths: list[str]) -> list[dict]:
    """Every probe line, with its framework and source."""
    out = []
    for path in paths:
        for fw in yaml.safe_load(Path(path).read_text(encoding="utf-8")):
            for entry in fw["lines"]:
                out.append({**entry, "framework": fw["framework"], "source": fw["source"]})
    return out


def parse_one(line: str, tmp: Path, before: list[str] | None = None) -> dict | None:
    path = tmp / "probe.log"
    path.write_text("".join(f"{b}\n" for b in before or ()) + line + "\n", encoding="utf-8")
    outs = [o for o in parse_files([path], default_ts_ms=READ_TS) if o.get("kind") != "dead_letter"]
    if not outs:
        return None
    return outs[-1] if before else outs[0]


def parse_alone(line: str, before: list[str] | None = None) -> dict:
    """:func:`parse_one` in a directory of its own, which must give an output (the probe tests' reader)."""
    with tempfile.TemporaryDirectory() as d:
        out = parse_one(line, Path(d), before)
    assert out is not None, line
    return out


def field_value(out: dict, name: str):
    """What the output says for ``name``: a top-level field, else a metric point's metric, else the
    number an event kept in its attributes (``attributes.<key>``: its text)."""
    if name.startswith(TEXT_ATTRIBUTE):
        return (out.get("attributes") or {}).get(name[len(TEXT_ATTRIBUTE):])
    if name in out and name not in ("metrics", "attributes"):
        return out[name]
    if "metrics" in out:
        return out["metrics"].get(name)
    if name in TOP_METRICS:
        return None
    text = (out.get("attributes") or {}).get(name)
    try:
        return float(text) if text is not None else None
    except ValueError:
        return None


def _iso_ms(text: str) -> int:
    return int(datetime.fromisoformat(text.replace("Z", "+00:00")).timestamp() * 1000)


def right(name: str, want, got) -> bool:  # noqa: PLR0911 - one return per kind of field
    if got is None:
        return False
    if name == "timestamp":
        return got == _iso_ms(want)
    if name in TEXT_FIELDS or name.startswith(TEXT_ATTRIBUTE):
        return got == str(want)
    if name in INT_FIELDS:
        return type(got) is int and got == want
    if not isinstance(got, float):
        return False
    want = float(want)
    if math.isnan(want):
        return math.isnan(got)
    return math.isclose(got, want, rel_tol=1e-6, abs_tol=1e-12)


def score(entries: list[dict]) -> dict:
    expected, lifted, correct, wrong_absent, absent_checked = Counter(), Counter(), Counter(), Counter(), Counter()
    metric_ok = metric_total = 0
    misses = []
    with tempfile.TemporaryDirectory() as d:
        tmp = Path(d)
        for e in entries:
            out = parse_one(e["line"], tmp, e.get("before")) or {}
            for name, want in (e.get("expect") or {}).items():
                got = field_value(out, name)
                expected[name] += 1
                lifted[name] += got is not None
                if right(name, want, got):
                    correct[name] += 1
                else:
                    misses.append((e["framework"], name, want, got, e["line"]))
            for name in e.get("absent") or ():
                absent_checked[name] += 1
                got = field_value(out, name)
                if got is not None:
                    wrong_absent[name] += 1
                    misses.append((e["framework"], f"absent:{name}", None, got, e["line"]))
            if "metric" in e:
                metric_total += 1
                is_metric = "metrics" in out
                if is_metric == bool(e["metric"]):
                    metric_ok += 1
                else:
                    misses.append((e["framework"], "metric", e["metric"], is_metric, e["line"]))
    fields = {n: {"expected": expected[n], "lifted": lifted[n], "right": correct[n]} for n in sorted(expected)}
    total = sum(expected.values())
    return {"lines": len(entries), "frameworks": len({e["framework"] for e in entries}), "fields": fields,
            "expected": total, "right": sum(correct.values()),
            "absent": {"checked": sum(absent_checked.values()), "violated": sum(wrong_absent.values())},
            "metric": {"checked": metric_total, "right": metric_ok}, "misses": misses}


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("files", nargs="+")
    ap.add_argument("--misses", action="store_true", help="print every value not lifted right")
    ap.add_argument("--json", action="store_true")
    args = ap.parse_args(argv)
    s = score(load(args.files))
    if args.json:
        print(json.dumps({k: v for k, v in s.items() if k != "misses"}, indent=1))
        return 0
    print(f"{s['lines']} lines from {s['frameworks']} frameworks")
    print(f"{'field':24} {'expected':>8} {'lifted':>7} {'right':>6}")
    for name, f in s["fields"].items():
        print(f"{name:24} {f['expected']:8d} {f['lifted']:7d} {f['right']:6d}")
    print(f"{'all':24} {s['expected']:8d} {'':7} {s['right']:6d}")
    print(f"banner/config fields lifted that must not be: {s['absent']['violated']}/{s['absent']['checked']}")
    print(f"step-metric decision right: {s['metric']['right']}/{s['metric']['checked']}")
    if args.misses:
        for fw, name, want, got, line in s["misses"]:
            print(f"MISS {fw} {name}: want {want!r} got {got!r}\n     {line[:200]!r}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
