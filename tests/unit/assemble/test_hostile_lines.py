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


def _redact_cpu(unit: str, size: int) -> float:
    best = float("inf")
    for _ in range(5):
        line = unit * (size // len(unit))  # a new string each time: the redactor remembers its last answer
        t = time.process_time()
        _REDACTOR(line)
        best = min(best, time.process_time() - t)
    return best


@pytest.mark.timeout(120)
@pytest.mark.parametrize("header", ["Authorization: ", "Proxy-Authorization: "])
def test_a_line_of_repeated_headers_costs_what_a_line_of_repeated_keys_does(header: str) -> None:
    # Each header read its value up to 4 KiB ahead, to the end of the line, and the next header, a few
    # characters on, read the same 4 KiB again: two and a half times the cost of any other key per byte. (The bound
    # sits between that and a loaded machine's noise, which has reached 1.7 times on one best-of-three.)
    size = 128 * 1024
    base = _redact_cpu("password: ", size)
    took = _redact_cpu(header, size)
    assert took < 2.1 * max(base, 0.005), f"{header!r}: {took:.3f} s against {base:.3f} s for 'password: '"


@pytest.mark.timeout(120)
def test_a_long_line_met_again_costs_what_it_did_the_first_time() -> None:
    # Each option flag asked a one-entry cache keyed by the whole text; an equal text met again (the same line
    # logged twice) was compared whole on every flag: three times the cost at 1 MiB, growing with the line.
    unit, n = "--password x ", 512 * 1024 // 13
    again, alone = float("inf"), float("inf")
    for _ in range(4):
        _REDACTOR("--password y " * 8)  # nothing equal to the line is remembered
        t = time.process_time()
        _REDACTOR(unit * n)
        alone = min(alone, time.process_time() - t)
        t = time.process_time()
        _REDACTOR(unit * n)  # an equal line, a new string
        again = min(again, time.process_time() - t)
    assert again < 2.1 * max(alone, 0.005), f"{again:.3f} s met again against {alone:.3f} s the first time"
