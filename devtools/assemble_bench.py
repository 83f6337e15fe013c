"""Lines per second of the pure Assembler over the corpus mix (``python -m devtools.assemble_bench``).

All training and loghub files, one raw record per line (the worst case: per-line producers such
as Filebeat), each file its own source key, several passes, one core.

    python -m devtools.assemble_bench [PASSES] [--engine python|native] [--encode] [--batch-lines N]

``--engine`` picks the per-line engine (default: the process's, ``SLUICE_ASSEMBLE__ENGINE``); ``--encode`` also
writes every output's Avro body, as the worker does; ``--batch-lines N`` sends RawBatch Avro records of
N lines (``sluice ship``) instead of one plain line per record.
"""

from __future__ import annotations

import argparse
import io
import json
import struct
import sys
import time
from typing import Any

import fastavro

from devtools import CORPUS_DIR
from streams.assemble.engine import engine_module
from streams.assemble.outputs import _plain
from streams.assemble.pipeline import Assembler, RawRecord
from streams.avro_writer import body_writer
from streams.contracts import schema_text
from streams.native import engine_name

CORPUS = CORPUS_DIR
CONTRACTS = {"event": "log_event", "metric": "metric_point", "dead_letter": "dead_letter"}
RAW_SCHEMA_ID = 1


def corpus_files() -> list:
    return sorted((CORPUS / "training").glob("*.log")) + sorted((CORPUS / "loghub").glob("*/*_2k.log"))


def corpus_records(passes: int) -> list[RawRecord]:
    recs = []
    off = 0
    for p in range(passes):
        for f in corpus_files():
            key = f"{f.name}#{p}".encode()
            for line in f.read_bytes().split(b"\n"):
                recs.append(RawRecord("logs.raw", 0, off, line + b"\n" if line else b"\n", key, 1_700_000_000_000))
                off += 1
    return recs


def raw_batch_schema() -> Any:
    """The RawBatch contract as the worker's registry lookup gives it (times as longs)."""
    return fastavro.parse_schema(_plain(json.loads(schema_text("raw_batch"))))


def batch_records(passes: int, per_record: int) -> tuple[list[RawRecord], int]:
    """(RawBatch records of ``per_record`` lines, the number of lines)."""
    schema = raw_batch_schema()
    recs, lines, off = [], 0, 0
    for p in range(passes):
        for f in corpus_files():
            text = f.read_bytes().decode("utf-8", "replace").split("\n")
            lines += len(text)
            for start in range(0, len(text), per_record):
                buf = io.BytesIO()
                buf.write(struct.pack(">bI", 0, RAW_SCHEMA_ID))
                fastavro.schemaless_writer(buf, schema, {
                    "source": {"host": "node-0", "file": f.name, "stream": "stdout"}, "labels": {"project": "bench"},
                    "lines": [{"line": t, "file_offset": start + i, "ts": 1_700_000_000_000}
                              for i, t in enumerate(text[start:start + per_record])], "sent_ts": None})
                recs.append(RawRecord("logs.raw", 0, off, buf.getvalue(), f"{f.name}#{p}".encode(), 1_700_000_000_000))
                off += 1
    return recs, lines


def main(argv: list[str]) -> None:
    ap = argparse.ArgumentParser(prog="python -m devtools.assemble_bench")
    ap.add_argument("passes", nargs="?", type=int, default=5)
    ap.add_argument("--engine", choices=("python", "native"), default=None)
    ap.add_argument("--encode", action="store_true", help="also write each output's Avro body")
    ap.add_argument("--batch-lines", type=int, default=0, help="RawBatch records of N lines (0: one plain line each)")
    ap.add_argument("--json", action="store_true", help="print one JSON object instead of the sentence")
    args = ap.parse_args(argv[1:])
    if args.batch_lines:
        schema = raw_batch_schema()
        recs, n_lines = batch_records(args.passes, args.batch_lines)
        asm = Assembler(lambda _sid: schema, engine=args.engine)
    else:
        recs = corpus_records(args.passes)
        n_lines = len(recs)
        asm = Assembler(engine=args.engine)
    writers = {k: body_writer(c, args.engine) for k, c in CONTRACTS.items()}
    n_out = 0
    t0, c0 = time.perf_counter(), time.process_time()
    for r in recs:
        outs = asm.feed(r)
        n_out += len(outs)
        if args.encode:
            for o in outs:
                writers[o.kind](o.value)
    outs = asm.flush_all()
    n_out += len(outs)
    if args.encode:
        for o in outs:
            writers[o.kind](o.value)
    dt, cpu = time.perf_counter() - t0, time.process_time() - c0
    engine = args.engine or engine_name(engine_module(None))
    if args.json:
        print(json.dumps({"engine": engine, "lines": n_lines, "outputs": n_out, "cpu_s": cpu, "wall_s": dt,
                          "encode": args.encode, "batch_lines": args.batch_lines}))
        return
    print(f"{engine}: {n_lines} lines, {n_out} outputs in {dt:.2f}s: {n_lines / dt:,.0f} lines/s, "
          f"{n_lines / cpu:,.0f} lines per CPU-second")


if __name__ == "__main__":
    main(sys.argv)
