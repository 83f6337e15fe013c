"""Score Fluent Bit's multiline parsers against the same labels as ``multiline_score.py`` scores Sluice.

Fluent Bit is run by hand (its build is not part of the project): ``tail`` over the labelled files
with ``Path_Key path`` and ``multiline.parser python, java, go`` into the ``file`` output with
``Format plain`` (one JSON record per line). This script maps each record back to the lines of its
file (a record's ``log`` is its lines joined by ``\\n``, in file order) and scores the events the
same way: an expected event is met when one record starts at its first line, ends at its last and
holds exactly its number of lines. Fluent Bit emits a multiline group it held after the lines that
follow it, so records are placed by content, not by arrival.

    python tests/multiline_score_fluent_bit.py RECORDS.jsonl DIR... [--misses]
"""

from __future__ import annotations

import argparse
import json
import sys
from collections import Counter, defaultdict
from pathlib import Path

from multiline_score import expected_events, labelled_files


def record_events(lines: list[str], logs: list[str]) -> tuple[set[tuple[int, int, int]], int]:
    """(first, last, count) of each record, 1-based; and how many records matched no lines.

    A record is placed at the first run of lines not yet taken that it equals: Fluent Bit emits a
    held multiline group after lines that follow it in the file, so records are not in file order.
    """
    norm = [ln.rstrip("\r") for ln in lines]
    taken = [False] * len(lines)
    got: set[tuple[int, int, int]] = set()
    unmatched = 0
    for log in logs:
        parts = [p.rstrip("\r") for p in (log[:-1] if log.endswith("\n") else log).split("\n")]
        n = len(parts)
        for j in range(len(lines) - n + 1):
            if not any(taken[j:j + n]) and norm[j:j + n] == parts:
                taken[j:j + n] = [True] * n
                got.add((j + 1, j + n, n))
                break
        else:
            unmatched += 1
    return got, unmatched


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("records", type=Path)
    ap.add_argument("dirs", nargs="+", type=Path)
    ap.add_argument("--misses", action="store_true")
    args = ap.parse_args(argv)
    by_file: dict[str, list[str]] = defaultdict(list)
    for raw in args.records.read_text(encoding="utf-8").splitlines():
        if raw.strip():
            rec = json.loads(raw)
            by_file[Path(rec["path"]).name].append(rec["log"])
    met: Counter = Counter()
    total: Counter = Counter()
    whole = unmatched = 0
    files = labelled_files(args.dirs)
    for path, labels in files:
        lines = path.read_bytes().decode("utf-8", "replace").split("\n")
        if lines and lines[-1] == "":
            lines.pop()
        got, lost = record_events(lines, by_file.get(path.name, []))
        unmatched += lost
        misses = 0
        for e in expected_events(path, labels):
            total[e.kind] += 1
            if (e.first, e.last, e.count) in got:
                met[e.kind] += 1
            else:
                misses += 1
                if args.misses:
                    print(f"{path.name}: {e.kind} {e.first}-{e.last} ({e.count} lines)")
        whole += not misses
    for kind in sorted(total, key=lambda k: (k == "single", k)):
        print(f"{kind:24} {met[kind]:6} / {total[kind]:<6} {met[kind] / total[kind]:7.1%}")
    multi = sum(v for k, v in total.items() if k != "single")
    multi_met = sum(v for k, v in met.items() if k != "single")
    print(f"{'multiline events':24} {multi_met:6} / {multi:<6} {multi_met / max(multi, 1):7.1%}")
    print(f"{'files with no miss':24} {whole:6} / {len(files):<6}")
    print(f"{'records matching no lines':24} {unmatched:6}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
