"""A long hostile line costs time in proportion to its length, never more.

One line can be as long as a Kafka record (a megabyte); a step whose work grows with the square of
the line (a pattern that backtracks, a scan of the whole line again for each match in it) stalls the
partition on such a line. Each case feeds one line through the Assembler as the worker does, at two
lengths eight times apart, and compares the CPU time: linear work grows about eightfold, quadratic
work sixty-fourfold. The lengths are small enough to keep the test quick and large enough that the
quadratic term, where there is one, dominates.
"""

from __future__ import annotations

import time

import pytest

from streams.assemble.outputs import encode_body
from streams.assemble.pipeline import Assembler, RawRecord
from streams.assemble.redact import Redactor
from streams.assemble.route import ProjectRouter

T0 = 1_700_000_000_000
SMALL = 32 * 1024
FACTOR = 8
MOST_GROWTH = 24  # eight times the line: linear work is ~8x, quadratic ~64x; noise stays well under 24x

_REDACTOR = Redactor()


def _cpu(line: str) -> float:
    """CPU seconds to assemble ``line`` alone (the best of two runs, to keep a scheduler's hiccup out)."""
    best = float("inf")
    for _ in range(2):
        asm = Assembler(router=ProjectRouter(), redactor=_REDACTOR, encode=encode_body)
        rec = RawRecord("logs.raw", 0, 1, (line + "\n").encode("utf-8"), b"node-1", T0)
        t = time.process_time()
        out = asm.feed(rec) + asm.flush_all()
        best = min(best, time.process_time() - t)
        assert [o.kind for o in out] == ["event"]
    return best


CASES = {  # name: (head, the unit repeated to the length, tail, the smaller length)
    # a dict repr of many "key" entries: each bare "key" was judged by splitting its whole line up to it again
    "dict_repr_of_keys": ("", "key: 'v', ", "", SMALL),
    "dict_repr_of_keys_in_a_record": ("2024-01-01 10:00:00 ERROR ", "key: 'v', ", "}", SMALL),
    # each option flag looked back over every command before it on its line, parsing each one's 64 words
    # again (2 KiB took seconds, 16 KiB minutes)
    "many_commands": ("", "mysql --password x ", "", 2048),
    # each END line of a private key looked through every block before it for the one it closes
    "many_private_key_blocks": ("", "-----BEGIN PRIVATE KEY-----x-----END PRIVATE KEY-----", "", SMALL),
    # a protobuf text wrapper's opening brace, then blanks: two runs of blanks around an optional line break were
    # tried at every split of the run
    "blanks_after_a_protobuf_brace": ("api_key {", " ", "x api_key { value: \"v\" }", SMALL),
}


@pytest.mark.timeout(300)
@pytest.mark.parametrize("name", sorted(CASES))
def test_a_long_hostile_line_costs_linear_time(name: str) -> None:
    head, unit, tail, size = CASES[name]
    small = _cpu(head + unit * (size // len(unit)) + tail)
    big = _cpu(head + unit * (size * FACTOR // len(unit)) + tail)
    assert big < MOST_GROWTH * max(small, 0.005), f"{name}: {small:.3f} s -> {big:.3f} s for {FACTOR}x the line"
