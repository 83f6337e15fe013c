"""`sluice parse` reads a file a line at a time: a huge line or file costs bounded memory, and a line
comes out as the worker makes it of the same bytes (one record, cut to ``max_bytes`` and flagged)."""

from __future__ import annotations

import tracemalloc
from pathlib import Path

from streams.assemble.pipeline import Assembler, RawRecord, parse_files

MAX = 4096  # the merger's byte limit in these tests: lines of a few times it stay quick to build


def _parsed(path: Path) -> list[dict]:
    return [o for o in parse_files([path], default_ts_ms=0, max_bytes=MAX) if o.get("kind") != "dead_letter"]


def _worker(data: bytes) -> list[dict]:
    asm = Assembler(max_bytes=MAX)
    out = []
    for i, raw in enumerate(data.split(b"\n")):
        if raw:
            out += asm.feed(RawRecord("logs.raw", 0, i, raw, b"file", 0))
    return [o.value for o in out + asm.flush_all() if o.kind == "event"]


def _same(path: Path, data: bytes) -> None:
    path.write_bytes(data)
    got, want = _parsed(path), _worker(data)
    assert [(e["message"], e["truncated"]) for e in got] == [(e["message"], e["truncated"]) for e in want]


def test_a_line_over_the_limit_comes_out_as_the_worker_cuts_it(tmp_path: Path) -> None:
    data = b"2024-01-01 10:00:00 INFO a\n" + b"x" * (10 * MAX) + b"\n2024-01-01 10:00:01 INFO b\n"
    _same(tmp_path / "long.log", data)
    events = _parsed(tmp_path / "long.log")
    assert [len(e["message"]) for e in events] == [26, MAX, 26] and events[1]["truncated"]


def test_a_long_progress_bar_line_keeps_its_final_redraw(tmp_path: Path) -> None:
    bar = b"".join(b"\rtrain %5d/20000 [loss %.3f]" % (i, 1 / (i + 1)) for i in range(20000))
    for tail in (b"", b"\r", b"\r\r", b"\rdone"):
        _same(tmp_path / "bar.log", b"epoch 1" + bar + tail + b"\n")


def test_a_long_line_of_wide_characters_is_cut_on_a_character(tmp_path: Path) -> None:
    _same(tmp_path / "cjk.log", "日志".encode() * (5 * MAX) + b"\nnext\n")


def test_a_huge_line_costs_memory_bounded_by_the_limit_not_the_line(tmp_path: Path) -> None:
    path = tmp_path / "huge.log"
    with path.open("wb") as f:
        for _ in range(32):
            f.write(b"abcdefgh" * (64 * 1024))  # 16 MiB on one line
        f.write(b"\nafter\n")
    tracemalloc.start()
    try:
        events = _parsed(path)
        peak = tracemalloc.get_traced_memory()[1]
    finally:
        tracemalloc.stop()
    assert [e["message"] for e in events][1:] == ["after"] and events[0]["truncated"]
    assert peak < 4 * 1024 * 1024, f"{peak:,} bytes at peak for a 16 MiB line"


def test_a_file_without_a_last_newline_and_blank_lines_are_read_as_before(tmp_path: Path) -> None:
    _same(tmp_path / "plain.log", b"a\n\n  \nb\r\nc")
