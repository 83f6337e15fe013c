"""Cost of secret redaction alone, per line of the corpus mix (``python -m devtools.redact_bench``).

The same lines as ``devtools.assemble_bench`` (training and loghub files), each given to the
Redactor on its own, best of several passes, CPU time of one core: with the Hyperscan gate, with the
pure-Python one, and with every secret sample appended to a line now and then (the rare path).

Then hostile long lines, as ratios to a plain one of the same length: a line of repeated
``Authorization: `` headers against one of repeated ``password: `` keys (each header once read its
value up to 4 KiB ahead, and the next header read the same bytes again: about 2.5 times), and a long
line of option flags met a second time against the first (an equal text met again was once compared
whole on every flag: about 3 times at 1 MiB). Both should stay near 1.
"""

from __future__ import annotations

import sys
import time

from devtools import CORPUS_DIR
from devtools.testing.secret_samples import SAMPLES
from streams.assemble.redact import Redactor


def corpus_lines() -> list[str]:
    files = sorted((CORPUS_DIR / "training").glob("*.log")) + sorted((CORPUS_DIR / "loghub").glob("*/*_2k.log"))
    return [line for f in files for line in f.read_text(errors="replace").splitlines()]


def per_line_ns(redact: Redactor, lines: list[str], passes: int) -> float:
    best = float("inf")
    for _ in range(passes):
        redact._last = None  # every line looked at, none skipped as already redacted
        start = time.process_time()
        for line in lines:
            redact(line)
        best = min(best, time.process_time() - start)
    return best / len(lines) * 1e9


def long_line_s(redact: Redactor, unit: str, size: int, passes: int, again: bool = False) -> float:
    """CPU seconds to redact ``unit`` repeated to ``size`` characters (best of ``passes``); ``again``: the
    time of a second, equal line right after the first."""
    best = float("inf")
    for _ in range(passes):
        redact("--password y " * 8)  # nothing equal to the line is remembered
        if again:
            redact(unit * (size // len(unit)))
        line = unit * (size // len(unit))  # a new string each time: the redactor remembers its last answer
        start = time.process_time()
        redact(line)
        best = min(best, time.process_time() - start)
    return best


def hostile_ratios(passes: int) -> None:
    redact = Redactor()
    keys = long_line_s(redact, "password: ", 128 * 1024, passes)
    for header in ("Authorization: ", "Proxy-Authorization: "):
        took = long_line_s(redact, header, 128 * 1024, passes)
        print(f"128 KiB of {header!r:24} {took * 1e3:7.1f} ms, {took / keys:4.2f}x 'password: ' ({keys * 1e3:.1f} ms)")
    first = long_line_s(redact, "--password x ", 512 * 1024, passes)
    second = long_line_s(redact, "--password x ", 512 * 1024, passes, again=True)
    print(f"512 KiB of flags met again  {second * 1e3:7.1f} ms, "
          f"{second / first:4.2f}x the first time ({first * 1e3:.1f} ms)")


def main(argv: list[str]) -> None:
    if len(argv) > 1 and not argv[1].isdigit():
        print(f"{__doc__}\nusage: python -m devtools.redact_bench [PASSES]  (best of PASSES runs, default 5)")
        return
    passes = int(argv[1]) if len(argv) > 1 else 5
    lines = corpus_lines()
    samples = [s for _secret, ls in SAMPLES.values() for s in ls]
    with_secrets = [f"{line} {samples[i % len(samples)]}" if i % 100 == 0 else line for i, line in enumerate(lines)]
    fast, plain = Redactor(), Redactor(prefer_hyperscan=False)
    passing = sum(1 for line in lines if fast.gate(line))
    print(f"{len(lines)} corpus lines, {passing} ({passing / len(lines):.1%}) pass the Hyperscan gate")
    print(f"hyperscan gate:       {per_line_ns(fast, lines, passes):8,.0f} ns per line")
    print(f"  1% lines + a secret: {per_line_ns(fast, with_secrets, passes):8,.0f} ns per line")
    print(f"pure-Python gate:     {per_line_ns(plain, lines, max(1, passes // 2)):8,.0f} ns per line")
    hostile_ratios(passes)


if __name__ == "__main__":
    main(sys.argv)
