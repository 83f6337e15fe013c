"""Cost of secret redaction alone, per line of the corpus mix (``python -m devtools.redact_bench``).

The same lines as ``devtools.assemble_bench`` (training and loghub files), each given to the
Redactor on its own, best of several passes, CPU time of one core: with the Hyperscan gate, with the
pure-Python one, and with every secret sample appended to a line now and then (the rare path).
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


if __name__ == "__main__":
    main(sys.argv)
