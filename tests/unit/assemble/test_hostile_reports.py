"""Input that real log pipelines met in production, through `sluice parse` and the worker's Assembler: each
case names the public report whose input it writes. Nothing may vanish: a line is one output, its values kept
(as typed fields, or as flagged text), whatever its encoding or its numbers."""

from __future__ import annotations

import random
import time
import unicodedata
from pathlib import Path

import pytest

from streams.assemble.outputs import encode_body
from streams.assemble.pipeline import Assembler, RawRecord, parse_files
from streams.assemble.redact import _FOLDS, _JSON_ESCAPE, _char_map, _unescape
from streams.assemble.route import ProjectRouter
from streams.native import NATIVE
from streams.widetext import WideNewlines

ENGINES = ["python"] + (["native"] if NATIVE is not None else [])

# Windows' services and PowerShell's ">" write UTF-16LE with a mark (grafana/alloy#217: SSRS logs;
# elastic/beats#2500: SQL Server's ERRORLOG; elastic/filebeat#205: `"hello1" >> test.log`). U+4E0A (上) and
# U+010A (Ċ) hold a 0x0A byte: a reader that cuts at each 0x0A ends a line inside them.
WIDE_LINES = ["2024-03-12 10:00:00 INFO 上海 café first", "2024-03-12 10:00:01 ERROR ünïcode Ċ 上传失败",
              "2024-03-12 10:00:02 INFO third"]


def _parse(tmp_path: Path, data: bytes, engine: str, **opts) -> list[dict]:
    path = tmp_path / "wide.log"
    path.write_bytes(data)
    return list(parse_files([path], default_ts_ms=1_700_000_000_000, engine=engine,
                            encode=lambda out: encode_body(out, engine), **opts))


@pytest.mark.parametrize("engine", ENGINES)
@pytest.mark.parametrize(("codec", "mark"), [("utf-16-le", "\ufeff"), ("utf-16-be", "\ufeff"), ("utf-16-le", ""),
                                             ("utf-16-be", ""), ("utf-32-le", "\ufeff"), ("utf-32-be", "")])
def test_a_wide_file_is_read_line_by_line_in_its_own_encoding(tmp_path: Path, engine: str, codec: str,
                                                              mark: str) -> None:
    data = (mark + "\r\n".join(WIDE_LINES) + "\r\n").encode(codec)
    outs = _parse(tmp_path, data, engine)
    assert [o["message"] for o in outs] == WIDE_LINES
    # (a line's number counts the file's 0x0A bytes, as `wc -l` does: those inside 上 and Ċ too)
    assert [o["raw"]["first_offset"] for o in outs] == [1, 3, 6]


# Text with no ASCII between a character that holds a 0x0A byte and the next: Chinese after 上 (U+4E0A, its 0x0A
# first in UTF-16LE and UTF-32LE), Gujarati (U+0A80..U+0AFF, each a 0x0A first in UTF-16BE).
NO_ASCII_LINES = ["2024-03-12 10:00:00 ERROR 文件上传失败，请检查网络连接",
                  "2024-03-12 10:00:01 INFO 以上内容已上传到服务器",
                  "2024-03-12 10:00:02 INFO ગુજરાતી લખાણ",
                  "2024-03-12 10:00:03 INFO third"]


@pytest.mark.parametrize("engine", ENGINES)
@pytest.mark.parametrize("codec", ["utf-16-le", "utf-16-be", "utf-32-le", "utf-32-be"])
def test_a_wide_line_with_no_ascii_after_a_0x0a_in_a_character_is_one_line(tmp_path: Path, engine: str,
                                                                             codec: str) -> None:
    """The rest of such a line reads neither as a wide line of its own nor as UTF-8: it goes on (it broke into
    pieces of misread bytes, one event each)."""
    outs = _parse(tmp_path, ("\ufeff" + "\r\n".join(NO_ASCII_LINES) + "\r\n").encode(codec), engine)
    assert [o["message"] for o in outs] == NO_ASCII_LINES


@pytest.mark.parametrize("engine", ENGINES)
def test_an_over_long_wide_line_is_cut_as_read_and_the_next_line_is_whole(tmp_path: Path, engine: str) -> None:
    data = ("\ufeff" + "step 上 " * 20_000 + "\nafter the long line\n").encode("utf-16-le")
    outs = _parse(tmp_path, data, engine, max_bytes=4096)
    assert len(outs) == 2 and outs[0]["truncated"] and outs[0]["message"].startswith("step 上 step 上 ")
    assert len(outs[0]["message"].encode()) <= 2 * 4096
    assert outs[-1]["message"] == "after the long line"


@pytest.mark.parametrize("engine", ENGINES)
def test_utf8_lines_appended_to_a_wide_file_are_read_as_utf8(tmp_path: Path, engine: str) -> None:
    data = ("\ufeff" + WIDE_LINES[0] + "\n").encode("utf-16-le") + b"\x00" + "caf\u00e9 上 plain\nlast\n".encode()
    outs = _parse(tmp_path, data, engine)
    assert [o["message"] for o in outs] == [WIDE_LINES[0], "café 上 plain", "last"]


def test_a_utf8_file_is_not_wide() -> None:
    for head in (b"", b"plain text\n", b"\x00" * 64 + b"text after a hole\n", '{"log": "\u00e9\u4e0a"}\n'.encode()):
        assert not WideNewlines(head).width


def _worker(lines: list[bytes]) -> list:
    asm = Assembler(lambda _id: None, ProjectRouter(), topic="logs.raw", partition=0, max_lines=20, max_bytes=4096,
                    idle_timeout_ms=1000, encode=encode_body)
    out = []
    for i, value in enumerate(lines):
        out += asm.feed(RawRecord("logs.raw", 0, i, value, b"node-1/train.log", 1_700_000_000_000 + i))
    return out + asm.flush_all()


@pytest.mark.parametrize("line", [
    # A counter past every integer type (vectordotdev/vrl#544: "9223372036854775808" parsed as a negative number;
    # keenerd/jshon#58: 18446744073709548794 from a wrong downtime calculation)
    b'{"global_step": 18446744073709551616, "loss": 0.5, "learning_rate": 1e-4}',
    b'{"step": 9223372036854775808, "loss": 1e400}',
    b" iteration 99999999999999999999999/ 5 | lm loss: 1.0 |",
])
def test_a_step_line_whose_counter_fits_no_field_keeps_it_as_flagged_text(line: bytes) -> None:
    (out,) = _worker([line])
    assert out.kind == "event", "a metric point has no attributes: the counter would vanish"
    attrs = out.value["attributes"]
    assert "step_out_of_range" in attrs["sluice.flags"]
    assert any(v.split("/")[0].isdigit() and len(v.split("/")[0]) >= 19 for v in attrs.values())
    assert out.value["loss"] is not None


def test_a_step_line_with_an_old_time_stays_a_metric_point() -> None:
    asm = Assembler(lambda _id: None, ProjectRouter(), topic="logs.raw", partition=0, encode=encode_body)
    outs = asm.feed(RawRecord("logs.raw", 0, 0, b'{"time": "2001-01-01T00:00:00Z", "step": 3, "loss": 0.5}',
                              b"node-1/train.log", 1_700_000_000_000)) + asm.flush_all()
    assert [o.kind for o in outs] == ["metric"]


@pytest.mark.parametrize("value", [
    # a json-file log with a zero-filled region after an unclean stop (moby/moby#53631), and the NULs a tail read
    # before a line (fluent/fluent-bit#9771)
    b"\x00" * 8192 + b'{"log":"after\\n","stream":"stdout","time":"2024-01-01T00:00:01Z"}',
    b"\x00" * 100,
])
def test_a_record_of_a_files_nul_hole_is_a_dead_letter_that_says_so(value: bytes) -> None:
    before, hole, after = b"2024-12-27 | Count: 1 | x", value, b"2024-12-27 | Count: 2 | x"
    outs = _worker([before, hole, after])
    letters = [o for o in outs if o.kind == "dead_letter"]
    assert len(letters) == 1 and letters[0].value["original"] == hole
    assert "NUL bytes" in letters[0].value["error"] and "hole" in letters[0].value["error"]
    assert [o.value["message"] for o in outs if o.kind == "event"] == [before.decode(), after.decode()]


def _char_map_by_character(text: str) -> tuple[str, list[int]]:
    """The definition of ``redact._char_map``: one step per character or escape."""
    out, index = [], []
    escapes = {m.start(): m.end() for m in _JSON_ESCAPE.finditer(text)}
    i = 0
    while i < len(text):
        end = escapes.get(i)
        ch, nxt = (_unescape(text[i:end]), end) if end else (text[i], i + 1)
        n = ch if ch < "\x80" else unicodedata.normalize("NFKC", ch).translate(_FOLDS)
        out.append(n)
        index.extend([i] * len(n))
        i = nxt
    index.append(len(text))
    return "".join(out), index


def test_the_redactors_character_map_takes_ascii_runs_at_once() -> None:
    # A progress bar redrawn a megabyte long (tqdm's "█" and spaces, a record of thousands of them) costs the
    # redactor a map of its characters; one Python step each took seconds a record.
    rng = random.Random(5)
    pieces = ["a", " ", "\\u0041", "\\u00e9", "\\ud83d\\ude00", "\\/", "%3D", "\x1b[31m", "\\u001b[0m", "é", "ﬁ",
              "\u200b", "ı", "█", "e\u0301", "\\", "%", "\\nabc_defghijklmnopqrstu", "\\x27", "＝", "\r", "😀"]
    for _ in range(3000):
        text = "".join(rng.choice(pieces) for _ in range(rng.randint(0, 30)))
        assert _char_map(text) == _char_map_by_character(text), text
    line = "\r 45%|█" + " " * (2 << 20) + "| 450/1000 [00:10<00:12, 45.0it/s]"
    floor = took = float("inf")
    for _ in range(3):  # (the best of three of each: a scheduler's hiccup is no cost of the map)
        t = time.process_time()
        _ = list(range(len(line)))  # the least any map of the line's indexes costs
        floor = min(floor, time.process_time() - t)
        t = time.process_time()
        _char_map(line)
        took = min(took, time.process_time() - t)
    assert took < 4 * floor + 0.05  # (one step a character: about 9 times the floor)
