"""`sluice ship` reading a UTF-16 or UTF-32 file (grafana/alloy#217: SSRS writes UTF-16LE with a mark;
elastic/beats#2500: SQL Server's ERRORLOG): its lines reach the raw topic as their text, not as UTF-8
replacement characters and NULs the worker could no longer decode."""

from __future__ import annotations

import itertools
from pathlib import Path

import pytest

from devtools.testing.ship import make_shipper
from streams.ship.lines import LineSplitter
from streams.widetext import marked_codec

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


# 上 is U+4E0A (its UTF-16LE bytes 0A 4E, its UTF-16BE and UTF-32 bytes hold 0A too), 上午 the morning in Chinese
# Windows logs; Ċ is U+010A; ઊ (U+0A8A) and the rest of Gujarati sit at U+0Axx.
WIDE = ["2024-03-12 上午 10:00:00 文件上传失败，请检查网络连接", "上上上上", "Ċ ઊઊ ok", "plain ascii"]


@pytest.mark.parametrize("codec", ["utf-16-le", "utf-16-be", "utf-32-le", "utf-32-be"])
@pytest.mark.parametrize("chunk", [1, 3, 7, 1 << 20])
def test_a_marked_wide_file_is_cut_at_its_newline_unit_only(codec: str, chunk: int) -> None:
    data = ("\ufeff" + "\r\n".join(WIDE) + "\r\n").encode(codec)
    assert marked_codec(data[:8]) == codec
    splitter = LineSplitter(0, 1 << 20, marked_codec(data[:8]))
    lines = [line for i in range(0, len(data), chunk) for line in splitter.feed(data[i:i + chunk])]
    lines += splitter.flush()
    assert [text for _s, _e, text in lines] == WIDE
    assert lines[0][0] == 0 and lines[-1][1] == len(data)
    assert all(a[1] == b[0] for a, b in itertools.pairwise(lines))  # offsets tile the file
    resumed = LineSplitter(lines[2][0], 1 << 20, codec)  # a restart at an acknowledged line's offset
    assert [t for _s, _e, t in resumed.feed(data[lines[2][0]:])] == WIDE[2:]


@pytest.mark.parametrize("codec", ["utf-16-le", "utf-32-be"])
def test_a_long_marked_wide_line_is_cut_on_whole_code_units(codec: str) -> None:
    line = "上" * 100
    data = ("\ufeff" + line + "\n").encode(codec)
    splitter = LineSplitter(0, 31, codec)  # not a multiple of the unit: rounded down
    pieces = splitter.feed(data)
    assert "".join(t for _s, _e, t in pieces) == line and "\ufffd" not in "".join(t for _s, _e, t in pieces)
    assert pieces[-1][1] == len(data)


def test_a_file_without_a_mark_keeps_the_byte_splitter() -> None:
    assert marked_codec("x\n".encode("utf-16-le")) is None and marked_codec(b"\xef\xbb\xbfutf-8") is None
    assert LineSplitter(0, 1 << 20, None).feed(b"a\nb\n") == [(0, 2, "a"), (2, 4, "b")]


def test_the_shipper_reads_a_marked_file_by_its_mark_and_after_a_restart(tmp_path: Path) -> None:
    # the tailer takes the codec from the file's first bytes (which it reads for its fingerprint), so a restart at a
    # checkpoint in the middle of the file still cuts at newline units only
    log = tmp_path / "a.log"
    log.write_bytes(("\ufeff" + "\n".join(WIDE[:2]) + "\n").encode("utf-16-le"))
    shipper, sender, clock = make_shipper(tmp_path)
    shipper.start()
    clock.t += 1.0
    shipper.tick()
    sender.deliver()
    shipper.tick()
    assert [ln["line"] for ln in sender.lines()] == WIDE[:2]
    with log.open("ab") as fh:
        fh.write(("\n".join(WIDE[2:]) + "\n").encode("utf-16-le"))
    again, sender2, clock2 = make_shipper(tmp_path)  # a new process: no memory but the checkpoint
    again.start()
    clock2.t += 1.0
    again.tick()
    sender2.deliver()
    assert [ln["line"] for ln in sender2.lines()] == WIDE[2:]
