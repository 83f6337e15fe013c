"""``sluice worker assemble`` with its per-line work taken out: what everything around it costs.

    python tests/perf/floor_worker.py nothing|fixed

Started by ``rsyslog_peer_bench.py --floor`` in place of ``sluice worker assemble``, with the same
settings from the environment. The worker is the real one (Faust's consumer and stream, the stage's
turns, one Kafka transaction per turn with the raw offsets); only ``Assembler.feed`` is replaced:

- ``nothing``: every record is read and dropped; the turns commit offsets and write nothing;
- ``fixed``: every record is decoded into its lines as the real worker decodes it (plain text, JSON
  envelopes, Avro batches of ``sluice ship``), and every line becomes the same event (built once by
  the real assembler from a corpus line), encoded as Avro and written in the turn's transaction.

No multiline merging, parsing, classification or redaction is done in either. A per-line path in
native code could at best bring the worker down to these figures. Not a test; nothing is asserted.
"""

from __future__ import annotations

import sys

from assemble_bench import corpus_files  # the sibling script's helper

from streams.assemble.decode import decode_record
from streams.assemble.pipeline import Assembler, Output, RawRecord
from streams.config import load_settings
from streams.workers.assemble import run_assemble_worker


def _nothing(self: Assembler, record: RawRecord) -> list[Output]:
    return []


def _fixed_event() -> Output:
    """One event, as the real assembler builds it from a real line: the first event of the corpus mix."""
    asm = Assembler()
    for f in corpus_files():
        for line in f.read_bytes().splitlines(keepends=True):
            outs = asm.feed(RawRecord("raw", 0, 0, line, b"floor", 1_700_000_000_000)) + asm.flush_all()
            for o in outs:
                if o.kind == "event":
                    return o
    raise SystemExit("floor_worker.py: the corpus mix gave no event")


def main(mode: str) -> None:
    if mode == "nothing":
        Assembler.feed = _nothing  # type: ignore[method-assign]
    elif mode == "fixed":
        event = _fixed_event()

        def _fixed(self: Assembler, record: RawRecord) -> list[Output]:
            topic = self.router.topic(event.value["project"])
            lines = decode_record(record.value, record.key, self.schema_lookup)
            return [Output("event", topic, record.key, event.value) for _ in lines]

        Assembler.feed = _fixed  # type: ignore[method-assign]
    else:
        raise SystemExit(f"floor_worker.py: mode {mode!r} is neither 'nothing' nor 'fixed'")
    run_assemble_worker(load_settings(), loglevel="warn")


if __name__ == "__main__":
    main(sys.argv[1] if len(sys.argv) > 1 else "nothing")
