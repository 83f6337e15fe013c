"""UTF-16 and UTF-32 logs: decoded, whether a file is parsed or an agent sends its lines cut at each
0x0A byte; `sluice parse` and the worker (either engine) make the same events of them."""

from __future__ import annotations

import io
import json
import struct
from pathlib import Path

import fastavro
import pytest

from streams.assemble.decode import decode_record
from streams.assemble.pipeline import Assembler, RawRecord, parse_files
from streams.native import NATIVE
from streams.widetext import wide_text

TEXT = ("2024-01-01 10:00:00 INFO start step 1\r\n"
        "Traceback (most recent call last):\r\n"
        '  File "train.py", line 12, in <module>\r\n'
        "ValueError: loss is nan at café\r\n"
        "2024-01-01 10:00:01 INFO end\r\n")
WANT = ["2024-01-01 10:00:00 INFO start step 1",
        'Traceback (most recent call last):\n  File "train.py", line 12, in <module>\nValueError: loss is nan at café',
        "2024-01-01 10:00:01 INFO end"]
ENCODINGS = {
    "utf-16-le with its mark": b"\xff\xfe" + TEXT.encode("utf-16-le"),
    "utf-16-le": TEXT.encode("utf-16-le"),
    "utf-16-be with its mark": b"\xfe\xff" + TEXT.encode("utf-16-be"),
    "utf-16-be": TEXT.encode("utf-16-be"),
    "utf-32-le with its mark": b"\xff\xfe\x00\x00" + TEXT.encode("utf-32-le"),
    "utf-32-le": TEXT.encode("utf-32-le"),
    "utf-32-be with its mark": b"\x00\x00\xfe\xff" + TEXT.encode("utf-32-be"),
    "utf-32-be": TEXT.encode("utf-32-be"),
}
ENGINES = ["python"] + (["native"] if NATIVE is not None else [])


def _worker(data: bytes, engine: str) -> list[tuple[str, str]]:
    """Each piece between 0x0A bytes as one record, as an agent that does not know the encoding sends it."""
    asm = Assembler(engine=engine)
    out = []
    for i, raw in enumerate(data.split(b"\n")):
        if raw:
            out += asm.feed(RawRecord("logs.raw", 0, i, raw, b"node-1|app.log", 0))
    return [(o.kind, o.value.get("message") or o.value.get("error_type")) for o in out + asm.flush_all()]


@pytest.mark.parametrize("name", sorted(ENCODINGS))
@pytest.mark.parametrize("engine", ENGINES)
def test_a_wide_log_reads_as_its_text_in_the_worker_and_in_parse(tmp_path: Path, name: str, engine: str) -> None:
    data = ENCODINGS[name]
    path = tmp_path / "app.log"
    path.write_bytes(data)
    parsed = [(o.get("kind", "event"), o.get("message") or o.get("error_type"))
              for o in parse_files([path], default_ts_ms=0, engine=engine)]
    assert parsed == [("event", m) for m in WANT]
    assert _worker(data, engine) == parsed


def test_avro_records_whose_schema_id_looks_like_a_mark_or_nuls_stay_avro() -> None:
    schema = fastavro.parse_schema(json.loads((Path(__file__).resolve().parents[3] / "schemas" /
                                               "raw_batch.avsc").read_text()))
    for schema_id in (1, 0xFEFF, 0x4800, 0x48004800):
        buf = io.BytesIO()
        batch = {"source": {}, "labels": {}, "lines": [{"line": "hi"}], "sent_ts": None}
        fastavro.schemaless_writer(buf, schema, batch)
        value = b"\x00" + struct.pack(">I", schema_id) + buf.getvalue()
        assert wide_text(value) is None, schema_id
        assert [ln.text for ln in decode_record(value, None, lambda _sid: schema)] == ["hi"]


def test_narrow_text_is_left_to_utf8() -> None:
    for value in (b"plain", "日志".encode(), b"a\x00b", b"\x7bnot json", b"\xff", b"12\x00", "é".encode("latin-1")):
        assert wide_text(value) is None, value
    assert [ln.text for ln in decode_record(b"a\x00b")] == ["ab"]


def test_the_rest_of_a_wide_newline_is_a_blank_line_not_a_dead_letter() -> None:
    assert [ln.text for ln in decode_record(b"\x00")] == [""]
    assert [ln.text for ln in decode_record(b"\x00\x00\x00")] == [""]
