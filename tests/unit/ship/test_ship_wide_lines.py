"""`sluice ship` reading a UTF-16 or UTF-32 file (grafana/alloy#217: SSRS writes UTF-16LE with a mark;
elastic/beats#2500: SQL Server's ERRORLOG): its lines reach the raw topic as their text, not as UTF-8
replacement characters and NULs the worker could no longer decode."""

from __future__ import annotations

import pytest

from streams.ship.lines import LineSplitter

LINES = ["2024-03-12 10:00:00 INFO café über", "2024-03-12 10:00:01 ERROR naïve ünïcode", "x"]


@pytest.mark.parametrize("codec", ["utf-16-le", "utf-16-be", "utf-32-le", "utf-32-be"])
@pytest.mark.parametrize("mark", ["\ufeff", ""])
@pytest.mark.parametrize("eol", ["\n", "\r\n"])
def test_a_wide_files_lines_are_shipped_as_their_text(codec: str, mark: str, eol: str) -> None:
    data = (mark + eol.join(LINES) + eol).encode(codec)
    splitter = LineSplitter(0, 1 << 20)
    lines = splitter.feed(data) + splitter.flush()
    assert [text for _start, _end, text in lines if text] == LINES
    assert lines[0][0] == 0 and lines[-1][1] == len(data)  # (byte offsets: the checkpoint stays the file's)


def test_utf8_lines_are_shipped_as_before() -> None:
    splitter = LineSplitter(0, 1 << 20)
    assert [t for _s, _e, t in splitter.feed(b"caf\xc3\xa9\r\nbad \xff byte\n")] == ["café", "bad \ufffd byte"]
