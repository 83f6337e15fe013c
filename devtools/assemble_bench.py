"""Lines per second of the pure Assembler over the corpus mix (``python -m devtools.assemble_bench``).

All training and loghub files, one raw record per line (the worst case: per-line producers such
as Filebeat), each file its own source key, several passes, one core.
"""

from __future__ import annotations

import sys
import time

from devtools import CORPUS_DIR
from streams.assemble.pipeline import Assembler, RawRecord

CORPUS = CORPUS_DIR


def corpus_records(passes: int) -> list[RawRecord]:
    files = sorted((CORPUS / "training").glob("*.log")) + sorted((CORPUS / "loghub").glob("*/*_2k.log"))
    recs = []
    off = 0
    for p in range(passes):
        for f in files:
            key = f"{f.name}#{p}".encode()
            for line in f.read_bytes().split(b"\n"):
                recs.append(RawRecord("logs.raw", 0, off, line + b"\n" if line else b"\n", key, 1_700_000_000_000))
                off += 1
    return recs


def main(argv: list[str]) -> None:
    passes = int(argv[1]) if len(argv) > 1 else 5
    recs = corpus_records(passes)
    asm = Assembler()
    n_out = 0
    t0, c0 = time.perf_counter(), time.process_time()
    for r in recs:
        n_out += len(asm.feed(r))
    n_out += len(asm.flush_all())
    dt, cpu = time.perf_counter() - t0, time.process_time() - c0
    print(f"{len(recs)} lines, {n_out} outputs in {dt:.2f}s: {len(recs) / dt:,.0f} lines/s, "
          f"{len(recs) / cpu:,.0f} lines per CPU-second")


if __name__ == "__main__":
    main(sys.argv)
