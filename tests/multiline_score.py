"""Score the assemble stage's event boundaries against hand-checked labels (``corpus/*/labels``).

A log file ``<dir>/<name>.log`` is labelled by ``<dir>/labels/<name>.json``::

    {"source": "https://github.com/...", "notes": "...",
     "events": [{"first": 12, "last": 40, "kind": "python_traceback"},
                {"lines": [3, 5, 7, 8], "kind": "python_traceback"}]}

Line numbers are 1-based lines of the file as split on ``\\n``. ``first``/``last`` label a contiguous
event (blank lines inside it belong to it); ``lines`` labels an event whose lines are interleaved
with other writers' lines. Kind ``ignore`` marks lines whose grouping is not clear-cut (spliced
writes, free-form tables): they are not scored. Every other non-blank line outside the labelled
events must be an event of its own. An expected event is met when one output starts at its first
line, ends at its last and holds exactly its number of lines.

``python tests/multiline_score.py DIR... [--misses]`` prints the score per kind and the misses;
``--check`` only validates the labels (no parsing, no score).
"""

from __future__ import annotations

import argparse
import json
import sys
from collections import Counter
from collections.abc import Iterable
from dataclasses import dataclass, field
from pathlib import Path

from streams.assemble.pipeline import parse_files

TS = 1_700_000_000_000  # producer time for lines with none: boundaries do not depend on it


@dataclass
class Expected:
    first: int
    last: int
    count: int
    kind: str


@dataclass
class FileScore:
    path: Path
    met: Counter = field(default_factory=Counter)
    total: Counter = field(default_factory=Counter)
    misses: list[str] = field(default_factory=list)


def labelled_files(dirs: Iterable[Path]) -> list[tuple[Path, dict]]:
    out = []
    for d in dirs:
        for lab in sorted((d / "labels").glob("*.json")):
            log = d / (lab.stem + ".log")
            if not log.exists():
                raise FileNotFoundError(f"{lab} labels {log}, which does not exist")
            out.append((log, json.loads(lab.read_text())))
    return out


def expected_events(path: Path, labels: dict) -> list[Expected]:
    lines = path.read_bytes().split(b"\n")
    if lines and lines[-1] == b"":
        lines.pop()
    covered: set[int] = set()
    out = []
    for ev in labels.get("events", []):
        nums = sorted(ev["lines"]) if "lines" in ev else list(range(ev["first"], ev["last"] + 1))
        if not nums or nums[-1] > len(lines):
            raise ValueError(f"{path}: label {ev} is outside the file's {len(lines)} lines")
        if covered & set(nums):
            raise ValueError(f"{path}: label {ev} overlaps another event")
        covered.update(nums)
        if ev.get("kind") == "ignore":
            continue
        out.append(Expected(nums[0], nums[-1], len(nums), ev.get("kind", "multiline")))
    for no, raw in enumerate(lines, 1):
        if no not in covered and raw.strip():
            out.append(Expected(no, no, 1, "single"))
    return out


def score_file(path: Path, labels: dict) -> FileScore:
    got = {(o["raw"]["first_offset"], o["raw"]["last_offset"], o.get("line_count", 1))
           for o in parse_files([path], default_ts_ms=TS) if o.get("kind") != "dead_letter"}
    starts = {}
    for first, last, n in got:
        starts.setdefault(first, []).append((last, n))
    score = FileScore(path)
    for e in expected_events(path, labels):
        score.total[e.kind] += 1
        if (e.first, e.last, e.count) in got:
            score.met[e.kind] += 1
        else:
            seen = ", ".join(f"{e.first}-{last} ({n} lines)" for last, n in starts.get(e.first, []))
            seen = seen or "no event starts there"
            score.misses.append(f"{path.name}: {e.kind} {e.first}-{e.last} ({e.count} lines): got {seen}")
    return score


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("dirs", nargs="+", type=Path)
    ap.add_argument("--misses", action="store_true", help="print every expected event that was not met")
    ap.add_argument("--check", action="store_true", help="validate the labels only")
    args = ap.parse_args(argv)
    if args.check:
        files = labelled_files(args.dirs)
        for path, lab in files:
            if not lab.get("source"):
                raise ValueError(f"{path}: its labels name no source")
            expected_events(path, lab)
        print(f"{len(files)} labelled files: labels valid")
        return 0
    met: Counter = Counter()
    total: Counter = Counter()
    files_whole = 0
    scores = [score_file(p, lab) for p, lab in labelled_files(args.dirs)]
    for s in scores:
        met.update(s.met)
        total.update(s.total)
        files_whole += not s.misses
        if args.misses:
            for m in s.misses:
                print(m)
    for kind in sorted(total, key=lambda k: (k == "single", k)):
        print(f"{kind:24} {met[kind]:6} / {total[kind]:<6} {met[kind] / total[kind]:7.1%}")
    multi = sum(v for k, v in total.items() if k != "single")
    multi_met = sum(v for k, v in met.items() if k != "single")
    print(f"{'multiline events':24} {multi_met:6} / {multi:<6} {multi_met / max(multi, 1):7.1%}")
    print(f"{'files with no miss':24} {files_whole:6} / {len(scores):<6}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
