"""Lines per CPU-second of the multiline merger alone (``python -m devtools.merger_bench [passes]``).

The training and loghub files of the corpus, decoded once beforehand, pushed line by line through
one ``MultilineMerger`` (each file its own source), so that the figure is the merger's own cost:
prefixes, heads and tokens read from the tables of ``rules.py`` and the modes that follow them.
"""

from __future__ import annotations

import sys
import time

from devtools import CORPUS_DIR
from streams.assemble.lines import RawLine
from streams.assemble.merger import MultilineMerger


def main(argv: list[str]) -> None:
    passes = int(argv[1]) if len(argv) > 1 else 2
    files = sorted((CORPUS_DIR / "training").glob("*.log")) + sorted((CORPUS_DIR / "loghub").glob("*/*_2k.log"))
    data = [(f.name, [RawLine(t.rstrip("\r")) for t in f.read_bytes().decode("utf-8", "replace").split("\n")])
            for f in files]
    n = sum(len(lines) for _name, lines in data) * passes
    merger = MultilineMerger()
    blocks = 0
    c0 = time.process_time()
    for p in range(passes):
        for name, lines in data:
            sid = f"{name}#{p}"
            for i, line in enumerate(lines):
                blocks += len(merger.push(sid, line, i, 0))
    blocks += len(merger.flush_all())
    cpu = time.process_time() - c0
    print(f"{n} lines, {blocks} blocks: {n / cpu:,.0f} lines per CPU-second ({cpu / n * 1e6:.2f} us per line)")


if __name__ == "__main__":
    main(sys.argv)
