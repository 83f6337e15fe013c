"""Event size limits count bytes (what Kafka and the stores count), not characters."""

from __future__ import annotations

from streams.assemble.lines import RawLine, utf8_len, utf8_prefix
from streams.assemble.merger import MultilineMerger
from streams.assemble.pipeline import Assembler, RawRecord
from streams.assemble.route import ProjectRouter


def test_a_huge_line_of_wide_characters_is_cut_in_bytes() -> None:
    limit = 64 * 1024
    line = "训练损失不收敛，梯度爆炸🔥" * 10_000  # 120,000 characters, 380,000 bytes
    asm = Assembler(None, ProjectRouter("default"), max_bytes=limit)
    outs = asm.feed(RawRecord("logs.raw", 0, 0, line.encode(), b"node-1", 1_764_400_000_000)) + asm.flush_all()
    (event,) = [o.value for o in outs if o.kind == "event"]
    assert event["truncated"] is True
    size = len(event["message"].encode())
    assert limit - 4 <= size <= limit, size  # cut at a character boundary, just under the limit
    assert line.startswith(event["message"])


def test_a_block_of_wide_lines_closes_at_the_byte_limit() -> None:
    merger = MultilineMerger(max_lines=10_000, max_bytes=4096)
    wide = "  ответ: значение вне диапазона"  # 31 characters, 53 bytes
    lines = ["Traceback (most recent call last):"] + [f'  File "x.py", line {i}, in f\n{wide}' for i in range(200)]
    out = []
    for i, text in enumerate(t for ln in lines for t in ln.split("\n")):
        out += merger.push("src", RawLine(text), i, 1_000 + i)
    out += merger.flush_all()
    assert len(out) > 1
    assert all(b.nbytes <= 4096 + 200 for b in out)  # closed once over 4 KiB: the line that crossed it at most
    assert all(len("\n".join(b.texts).encode()) < 4096 + 200 for b in out)


def test_utf8_helpers() -> None:
    assert utf8_len("abc") == 3 and utf8_len("é") == 2 and utf8_len("🔥") == 4
    assert utf8_prefix("aé🔥", 3) == "aé" and utf8_prefix("aé🔥", 6) == "aé" and utf8_prefix("aé🔥", 7) == "aé🔥"
