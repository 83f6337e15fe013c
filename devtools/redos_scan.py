"""Time the assemble core's patterns and whole lines on adversarial text of growing size
(``python -m devtools.redos_scan [--lines] [--no-patterns] [--only NAME] [--part I/N]``).

Patterns: every compiled ``re.Pattern`` reachable from the globals of the modules of
``streams.assemble`` (module constants, rule tables, objects and containers that hold them, bound
``.match`` methods kept in dispatch tables) is run with ``match``, ``search`` and ``finditer`` (a pattern
reached only as a bound method: that method alone) on each adversarial text at 1k and 10k characters,
and at 100k where 1k to 10k already grew steeply. A pattern whose time grows more than ``--ratio``
times (default 20) for ten times the text is printed (``SUPERLINEAR``), as is one already slow at 1k
(``SLOW AT 1k``: a search retrying a quadratic match is cubic) and one past its time budget
(``BUDGET``). A finding under ``search`` or ``finditer`` matters only where a caller scans with that
method over unbounded text: look at the call site. ``--lines`` feeds whole records through a real
:class:`Assembler` (the run as one line, and as 100-character lines after a traceback's head) up to
the 512 KiB record limit, so that the per-line code (field lifting, redaction, the merger) is timed
too, with the patterns compiled inside functions that the module walk cannot see. A full pattern run
takes about half an hour on two cores (``--part 0/2`` and ``--part 1/2`` side by side).

Timings are CPU time; a text under ``FLOOR_S`` at its largest size is never flagged (noise).
"""

from __future__ import annotations

import argparse
import functools
import importlib
import pkgutil
import re
import sys
import time
from collections.abc import Callable, Iterator
from itertools import pairwise
from typing import Any

import streams.assemble as pkg

FLOOR_S = 0.002
PATTERN_BUDGET_S = 10.0  # one pattern and method past this (over all inputs) is reported and left
SIZES = (1_000, 10_000, 100_000)

# Units repeated to the size; each is a shape that makes a naive pattern backtrack or rescan.
UNITS: dict[str, str] = {
    "spaces": " ", "tabs": "\t", "digits": "1", "digits_sp": "1 ", "eq": "=", "colon": ":", "slash": "/",
    "dot": ".", "a": "a", "aA": "aA", "pct": "%", "dquote": '"', "squote": "'", "backslash": "\\",
    "brackets": "[", "braces": "{", "parens": "(", "nested": "[{(", "kv": "key=value ", "kv_colon": "key: value ",
    "kv_json": '"k": "v", ', "ansi": "\x1b[31m", "tb": "Traceback (most recent call last):\n",
    "file_q": 'File "', "dash": "-", "us": "_", "word_dot": "a.", "num_dot": "1.", "digit_colon": "1:",
    "time_like": "10:00:", "date_like": "2024-05-", "hex": "0x", "plus": "+", "comma": ",", "pipe": "|",
    "at": "@", "ab_sp": "ab ", "step": "step ", "e_num": "1e", "lt": "<", "star": "*", "hash": "#", "amp": "&",
    "url": "http://", "b64": "QUJD", "path": "/a", "ipv": "1.2.", "pct_s": "%s", "ellipsis": "...",
    "dashdash": "--a ", "bearer": "Bearer ", "token_eq": "token=", "nl": "\n", "cr": "\r", "semicolon": ";",
    "mixed_ws": " \t", "zw": "\u200b", "bidi": "\u202e", "nul": "\x00", "caret": "^", "tilde": "~",
}
# Prefixes that let anchored patterns get past their head before they meet the run.
HEADS = ("", "2024-05-01 10:00:00 INFO ", "Traceback (most recent call last):\n  File \"", '{"msg": "',
         "<13>May  1 10:00:00 host app[1]: ", "[rank0]: ", "step 1 loss=")
TAILS = ("", "!", "\x00")


def adversarial(size: int) -> Iterator[tuple[str, str]]:
    for uname, unit in UNITS.items():
        run = (unit * (size // len(unit) + 1))[:size]
        for head in HEADS:
            for tail in TAILS:
                yield f"{uname}|{head[:12]!r}|{tail!r}", head + run + tail


bound: dict[int, str] = {}  # id of a pattern reached only as a bound method -> that method's name


def patterns() -> Iterator[tuple[str, re.Pattern[str]]]:
    """Each compiled pattern reachable from the package's module globals, once, with a name for it."""
    seen: set[int] = set()
    visited: set[int] = set()
    bound.clear()

    def walk(obj: Any, name: str, depth: int) -> Iterator[tuple[str, re.Pattern[str]]]:
        if isinstance(obj, re.Pattern):
            if id(obj) not in seen and isinstance(obj.pattern, str):
                seen.add(id(obj))
                yield name, obj
            return
        if isinstance(getattr(obj, "__self__", None), re.Pattern):  # a bound .match/.search kept in a table
            bound[id(obj.__self__)] = obj.__name__  # the table's callers use that method alone
            yield from walk(obj.__self__, name, depth)
            return
        if depth > 6 or id(obj) in visited or isinstance(obj, str | bytes | int | float | type(None)):
            return
        visited.add(id(obj))
        if isinstance(obj, dict):
            for k, v in obj.items():
                yield from walk(v, f"{name}[{k!r:.30}]", depth + 1)
        elif isinstance(obj, list | tuple | set | frozenset):
            for i, v in enumerate(obj):
                yield from walk(v, f"{name}[{i}]", depth + 1)
        elif not isinstance(obj, type) and not callable(obj) and type(obj).__module__.startswith("streams"):
            attrs = getattr(obj, "__dict__", None) or {s: getattr(obj, s, None)
                                                     for s in getattr(type(obj), "__slots__", ())}
            for k, v in attrs.items():
                yield from walk(v, f"{name}.{k}", depth + 1)

    for mod in pkgutil.iter_modules(pkg.__path__):
        m = importlib.import_module(f"{pkg.__name__}.{mod.name}")
        for k, v in vars(m).items():
            if isinstance(v, type) and v.__module__ == m.__name__:  # class attributes (tables on a class)
                for ck, cv in vars(v).items():
                    yield from walk(cv, f"{mod.name}.{k}.{ck}", 1)
            elif getattr(v, "__module__", m.__name__) == m.__name__ or isinstance(v, re.Pattern | list | tuple | dict):
                yield from walk(v, f"{mod.name}.{k}", 0)


def feed_all(feed: Callable[[Any], Any], records: Callable[[str], Any], text: str) -> Any:
    return feed(records(text))


def cpu(fn: Callable[[], Any], runs: int = 2) -> float:
    best = float("inf")
    for _ in range(runs):
        t = time.process_time()
        fn()
        best = min(best, time.process_time() - t)
    return best


METHODS: dict[str, Callable[[re.Pattern[str], str], Any]] = {
    "match": lambda p, t: p.match(t),
    "search": lambda p, t: p.search(t),
    "finditer": lambda p, t: sum(1 for _ in p.finditer(t)),
}


def growth(fn: Callable[[str], Any], make: Callable[[int], str], ratio: float, budget_s: float = 1.0
           ) -> tuple[list[float], bool]:
    """Times at SIZES (stopping early when a size is already slow) and whether the growth is super-linear."""
    times: list[float] = []
    for size in SIZES:
        text = make(size)
        times.append(cpu(functools.partial(fn, text)))
        if times[-1] > budget_s / 10:
            break
    bad = any(b > FLOOR_S and a > 0 and b / max(a, 1e-5) > ratio for a, b in pairwise(times))
    return times, bad


def scan_patterns(ratio: float, only: str | None, part: tuple[int, int] = (0, 1)) -> int:
    """Each pattern's first super-linear input per method (``match`` alone is what most callers use; a
    finding under ``search`` or ``finditer`` matters only where a caller scans with it). An input is
    timed at 100k only when 1k to 10k already grew more than half of ``ratio``."""
    found = 0
    for i, (name, p) in enumerate(patterns()):
        if (only and only not in name) or i % part[1] != part[0]:
            continue
        print(f"[{i}] {name}", file=sys.stderr, flush=True)
        for method, run in METHODS.items():
            if id(p) in bound and bound[id(p)] != method:
                continue
            spent = time.process_time()
            for label, _ in adversarial(1_000):
                if time.process_time() - spent > PATTERN_BUDGET_S:
                    print(f"BUDGET {name} .{method}: more than {PATTERN_BUDGET_S:.0f} s on the inputs before {label}",
                          flush=True)
                    break
                uname, head, tail = label.split("|")
                unit, hd, tl = UNITS[uname], eval(head), eval(tail)  # noqa: S307 - our own repr of a literal

                def make(size: int, unit: str = unit, hd: str = hd, tl: str = tl) -> str:
                    return hd + (unit * (size // len(unit) + 1))[:size] + tl

                def timed(size: int, run: Callable[[re.Pattern[str], str], Any] = run,
                          p: re.Pattern[str] = p, make: Callable[[int], str] = make) -> float:
                    text = make(size)
                    return cpu(lambda: run(p, text), runs=1)

                small = timed(1_000)
                if small > 0.02:  # 20 ms for 1k characters: a search retrying a quadratic match is cubic at 10k
                    found += 1
                    print(f"SLOW AT 1k {name} .{method}: {p.pattern[:160]!r}\n    input {label}: {small * 1000:.0f} ms",
                          flush=True)
                    break
                mid = timed(10_000)
                if mid < 1e-3 or mid / max(small, 1e-5) < ratio / 2:
                    continue  # linear at a glance; only the steeper ones get the full run
                times, bad = growth(functools.partial(run, p), make, ratio)
                if bad:
                    found += 1
                    print(f"SUPERLINEAR {name} .{method}: {p.pattern[:160]!r}\n    input {label}: "
                          + ", ".join(f"{s:,}: {t * 1000:.1f} ms" for s, t in zip(SIZES, times, strict=False)),
                          flush=True)
                    break  # one input per pattern and method is enough to look at it
    return found


def scan_lines(ratio: float, max_bytes: int) -> int:
    """Whole records through an Assembler: the run as one line, and (after a traceback's head) as lines
    of 100 characters, one record each, so that the block-level code (the merger, classify, the
    failure fields) meets a long block. The first feed warms the caches (compiled tables)."""
    from streams.assemble.pipeline import Assembler, RawRecord

    found = 0

    def feed(values: list[bytes]) -> None:
        asm = Assembler(max_bytes=max_bytes)
        values = [b"2024-05-01 10:00:00 INFO start", *values, b"2024-05-01 10:00:01 INFO after"]
        for off, value in enumerate(values):
            asm.feed(RawRecord("logs.raw", 0, off, value, b"node-1/train.log", 1_700_000_000_000 + off))
        asm.flush_all()

    def one(text: str) -> list[bytes]:
        return [text.encode("utf-8", "surrogatepass")]

    def split(text: str) -> list[bytes]:
        return [b"Traceback (most recent call last):"] + [text[i:i + 100].encode("utf-8", "surrogatepass")
                                                         for i in range(0, len(text), 100)]

    feed(one("warm up " * 100))
    sizes = [s for s in SIZES if s < max_bytes] + [max_bytes - 64]
    for label, _ in adversarial(1_000):
        uname, head, tail = label.split("|")
        if tail != "''":  # the tails matter for single patterns; whole lines take the plain run
            continue
        unit, hd = UNITS[uname], eval(head)  # noqa: S307 - our own repr of a literal
        for shape, records in (("line", one), ("block", split)):
            times = []
            for size in sizes:
                text = hd + (unit * (size // len(unit) + 1))[:size]
                times.append(cpu(functools.partial(feed_all, feed, records, text), runs=1))
                if times[-1] > 5.0:
                    break
            pairs = zip(pairwise(times), pairwise(sizes), strict=False)
            ratios = [b / max(a, 1e-4) / (sb / sa) for (a, b), (sa, sb) in pairs]
            if any(r > ratio / 10 and b > 0.05 for r, b in zip(ratios, times[1:], strict=False)) or times[-1] > 2.0:
                found += 1
                print(f"SLOW {shape.upper()} {label}: " + ", ".join(
                    f"{s:,}: {t * 1000:.0f} ms" for s, t in zip(sizes, times, strict=False)), flush=True)
    return found


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(prog="python -m devtools.redos_scan", description=__doc__.splitlines()[0])
    ap.add_argument("--ratio", type=float, default=20.0, help="flag a 10x longer text taking more than this")
    ap.add_argument("--only", help="patterns whose name contains this")
    ap.add_argument("--lines", action="store_true", help="also whole lines through an Assembler")
    ap.add_argument("--no-patterns", action="store_true")
    ap.add_argument("--part", default="0/1", help="i/n: only every n-th pattern from the i-th (to run n at once)")
    ap.add_argument("--max-bytes", type=int, default=512 * 1024)
    args = ap.parse_args(argv)
    n = 0
    if not args.no_patterns:
        print(f"{sum(1 for _ in patterns())} patterns", flush=True)
        i, of = (int(x) for x in args.part.split("/"))
        n += scan_patterns(args.ratio, args.only, (i, of))
    if args.lines:
        n += scan_lines(args.ratio, args.max_bytes)
    print(f"{n} finding(s)")
    return 1 if n else 0


if __name__ == "__main__":
    sys.exit(main())
