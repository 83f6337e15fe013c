"""Glue check for the multiline merger (``python -m devtools.glue_harness [--seed N] [--show K]``).

Every labelled multiline event of the given corpora (default ``corpus/training`` and
``corpus/wild/dev``; labels as in ``tests/multiline_score.py``) is put in small synthetic files:
the event's lines followed by 1-3 single lines of an independent source, and the same lines
placed before it. The foreign lines are records of other writers: loghub lines (each one record of
a system log of another format) or lines labelled single in another labelled file. Each file goes
through ``parse_files``, the scorer's path, and the harness counts events that stay exactly whole,
foreign lines glued into the event (not those only joined to each other), and events split. An
event that is not whole even alone (a miss of the scorer) is counted apart.

The draws are seeded: the same seed and corpus give the same cases.
"""

from __future__ import annotations

import argparse
import json
import random
import sys
import tempfile
from collections import Counter
from collections.abc import Iterable, Iterator
from dataclasses import dataclass, field
from pathlib import Path

from devtools import CORPUS_DIR
from streams.assemble.pipeline import parse_files

TS = 1_700_000_000_000
DEFAULT_DIRS = (CORPUS_DIR / "training", CORPUS_DIR / "wild" / "dev")
POSITIONS = ("after", "before")
SOURCES = ("loghub", "single")


@dataclass
class Event:
    file: str
    kind: str
    lines: list[bytes]


@dataclass
class Case:
    event: Event
    position: str  # where the foreign lines go: "after" or "before" the event
    source: str  # where they come from: "loghub" or "single"
    foreign: list[bytes]

    def lines(self) -> tuple[list[bytes], range, list[int]]:
        """The file's lines, the event's 1-based line numbers, and the foreign lines' numbers."""
        n_ev, n_fo = len(self.event.lines), len(self.foreign)
        if self.position == "after":
            return self.event.lines + self.foreign, range(1, n_ev + 1), list(range(n_ev + 1, n_ev + n_fo + 1))
        return self.foreign + self.event.lines, range(n_fo + 1, n_fo + n_ev + 1), list(range(1, n_fo + 1))


@dataclass
class Tally:
    cases: Counter = field(default_factory=Counter)
    whole: Counter = field(default_factory=Counter)
    glued_cases: Counter = field(default_factory=Counter)
    glued_lines: Counter = field(default_factory=Counter)
    foreign_lines: Counter = field(default_factory=Counter)
    split: Counter = field(default_factory=Counter)
    examples: list[str] = field(default_factory=list)


def _file_lines(path: Path) -> list[bytes]:
    lines = path.read_bytes().split(b"\n")
    if lines and lines[-1] == b"":
        lines.pop()
    return lines


def labelled(dirs: Iterable[Path]) -> tuple[list[Event], dict[str, list[bytes]]]:
    """The multiline events of the labelled files, and per file its lines labelled single."""
    events: list[Event] = []
    singles: dict[str, list[bytes]] = {}
    for d in dirs:
        for lab in sorted((d / "labels").glob("*.json")):
            log = d / (lab.stem + ".log")
            lines = _file_lines(log)
            covered: set[int] = set()
            for ev in json.loads(lab.read_text()).get("events", []):
                nums = sorted(ev["lines"]) if "lines" in ev else list(range(ev["first"], ev["last"] + 1))
                covered.update(nums)
                if ev.get("kind") != "ignore":
                    events.append(Event(log.name, ev.get("kind", "multiline"), [lines[n - 1] for n in nums]))
            singles[log.name] = [raw for no, raw in enumerate(lines, 1) if no not in covered and raw.strip()]
    return events, singles


def loghub_lines(root: Path = CORPUS_DIR / "loghub") -> list[bytes]:
    out: list[bytes] = []
    for f in sorted(root.glob("*/*.log")):
        out.extend(raw for raw in _file_lines(f) if raw.strip())
    return out


def make_cases(events: list[Event], singles: dict[str, list[bytes]], loghub: list[bytes], seed: int,
               per_event: int = 1) -> list[Case]:
    """Per event, ``per_event`` cases for each position and source; single lines come from other files."""
    rng = random.Random(seed)
    names = sorted(singles)
    cases = []
    for ev in events:
        others = [n for n in names if n != ev.file and singles[n]]
        for _ in range(per_event):
            for position in POSITIONS:
                for source in SOURCES:
                    k = rng.randint(1, 3)
                    if source == "loghub":
                        foreign = [rng.choice(loghub) for _ in range(k)]
                    else:
                        foreign = [rng.choice(singles[rng.choice(others)]) for _ in range(k)]
                    cases.append(Case(ev, position, source, foreign))
    return cases


def _outputs(path: Path) -> set[tuple[int, int, int]]:
    return {(o["raw"]["first_offset"], o["raw"]["last_offset"], o.get("line_count", 1))
            for o in parse_files([path], default_ts_ms=TS) if o.get("kind") != "dead_letter"}


def _write(path: Path, lines: list[bytes]) -> Path:
    path.write_bytes(b"\n".join(lines) + b"\n")
    return path


def run(cases: list[Case], show: int = 0) -> tuple[Tally, Tally, Counter]:
    """(tally by kind, tally by position/source, events not whole even alone by kind)."""
    by_kind, by_source = Tally(), Tally()
    alone_miss: Counter = Counter()
    with tempfile.TemporaryDirectory(prefix="sluice-glue-") as tmp:
        base: dict[int, bool] = {}
        for i, case in enumerate(cases):
            ev = case.event
            if id(ev) not in base:
                got = _outputs(_write(Path(tmp) / "alone.log", ev.lines))
                base[id(ev)] = (1, len(ev.lines), len(ev.lines)) in got
                if not base[id(ev)]:
                    alone_miss[ev.kind] += 1
            if not base[id(ev)]:
                continue
            lines, ev_nums, fo_nums = case.lines()
            got = _outputs(_write(Path(tmp) / f"case{i % 8}.log", lines))
            whole = (ev_nums[0], ev_nums[-1], len(ev_nums)) in got
            glued = _glued(got, ev_nums, fo_nums)
            split = not whole and not glued
            for tally, key in ((by_kind, ev.kind), (by_source, f"{case.position}/{case.source}")):
                tally.cases[key] += 1
                tally.whole[key] += whole
                tally.glued_cases[key] += bool(glued)
                tally.glued_lines[key] += len(glued)
                tally.foreign_lines[key] += len(fo_nums)
                tally.split[key] += split
            if glued and len(by_kind.examples) < show:
                by_kind.examples.append(_example(case, got, glued))
    return by_kind, by_source, alone_miss


def _glued(got: set[tuple[int, int, int]], ev_nums: range, fo_nums: list[int]) -> list[int]:
    """The foreign lines that came out in one event with a line of the labelled event. (Foreign lines
    joined only to each other are not counted: two records of an unrelated writer may well be one.)"""
    out: list[int] = []
    for first, last, _n in got:
        if first <= ev_nums[-1] and last >= ev_nums[0]:
            out.extend(n for n in fo_nums if first <= n <= last)
    return sorted(set(out))


def _example(case: Case, got: set[tuple[int, int, int]], glued: list[int]) -> str:
    lines, _ev, _fo = case.lines()
    head = f"--- {case.event.file} {case.event.kind} {case.position}/{case.source}: glued lines {glued}"
    body = [f"{'*' if no in glued else ' '}{no:3} {raw.decode('utf-8', 'replace')[:160]}"
            for no, raw in enumerate(lines, 1)]
    near = [b for b in sorted(got) if any(b[0] <= g <= b[1] for g in glued)]
    return "\n".join([head, *body, f"    outputs holding them: {near}"])


def report(title: str, tally: Tally) -> Iterator[str]:
    yield f"{title:28} {'cases':>6} {'whole':>7} {'glued':>7} {'split':>6} {'glued lines':>13}"
    keys = sorted(tally.cases, key=lambda k: (-tally.glued_cases[k], k))
    for k in [*keys, "all"]:
        def total(c: Counter, k: str = k) -> int:
            return sum(c.values()) if k == "all" else c[k]
        n = total(tally.cases)
        yield (f"{k:28} {n:6} {total(tally.whole) / n:7.1%} {total(tally.glued_cases) / n:7.1%} "
               f"{total(tally.split) / n:6.1%} {total(tally.glued_lines):6} / {total(tally.foreign_lines):<6}")


def glue_rate(tally: Tally) -> float:
    """Share of cases where at least one foreign line was glued into an event."""
    return sum(tally.glued_cases.values()) / max(sum(tally.cases.values()), 1)


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("dirs", nargs="*", type=Path, default=list(DEFAULT_DIRS))
    ap.add_argument("--seed", type=int, default=1)
    ap.add_argument("--per-event", type=int, default=1, help="cases per event, position and source")
    ap.add_argument("--show", type=int, default=0, help="print this many glued cases")
    ap.add_argument("--kind", help="only events of this labelled kind")
    args = ap.parse_args(argv)
    events, singles = labelled(args.dirs)
    if args.kind:
        events = [e for e in events if e.kind == args.kind]
    cases = make_cases(events, singles, loghub_lines(), args.seed, args.per_event)
    by_kind, by_source, alone_miss = run(cases, args.show)
    for ex in by_kind.examples:
        print(ex)
    print(f"{len(events)} multiline events, {len(cases)} cases; events not whole even alone: "
          f"{sum(alone_miss.values())} ({dict(alone_miss)})")
    for line in report("kind", by_kind):
        print(line)
    print()
    for line in report("position/source", by_source):
        print(line)
    print(f"\nglue rate: {glue_rate(by_source):.2%} of cases")
    return 0


if __name__ == "__main__":
    sys.exit(main())
