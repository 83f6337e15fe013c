"""Both Avro writers (``streams.avro_writer.body_writer`` and fastavro's) on the corpus's LogEvents, best of 3."""

from __future__ import annotations

import sys
import time
from collections.abc import Callable
from functools import partial
from pathlib import Path
from typing import Any

from devtools import CORPUS_DIR
from streams.assemble.pipeline import parse_files
from streams.avro_writer import body_writer, fastavro_body, parsed_schema


def main(argv: list[str]) -> None:
    """python -m devtools.avro_bench [files...]: both writers on the corpus's events, best of 3."""
    corpus = CORPUS_DIR
    files = [Path(a) for a in argv] or sorted((corpus / "training").glob("*.log")) + sorted(
        corpus.glob("loghub/*/*_2k.log"))
    values = [v for v in parse_files(files) if "message" in v]
    parsed = parsed_schema("log_event")
    for name, fn in (("fastavro.schemaless_writer", partial(fastavro_body, parsed)),
                     ("body_writer", body_writer("log_event"))):
        best = min(_timed(fn, values) for _ in range(3))
        print(f"{name}: {best / len(values) * 1e6:.2f} µs per LogEvent ({len(values):,} corpus events)")


def _timed(fn: Callable[[dict[str, Any]], bytes], values: list[dict[str, Any]]) -> float:
    t0 = time.perf_counter()
    for v in values:
        fn(v)
    return time.perf_counter() - t0


if __name__ == "__main__":
    main(sys.argv[1:])
