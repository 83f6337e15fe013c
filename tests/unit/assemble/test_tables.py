"""Column tables (streams/assemble/tables.py): a header of names, then rows read against it, per source."""

from __future__ import annotations

from pathlib import Path

from streams.assemble.fields import EventBuilder
from streams.assemble.lift import Parsed
from streams.assemble.lines import Block, empty_source
from streams.assemble.pipeline import Assembler, RawRecord, parse_files
from streams.assemble.state import restore_source, source_state
from streams.assemble.tables import ColumnTables, header_of

READ_TS = 946_684_800_000
CSV_HEADER = "timestamp, index, name, utilization.gpu [%], memory.used [MiB], memory.total [MiB]"
CSV_ROW = "2023/05/17 10:15:42.317, 0, NVIDIA A100-SXM4-80GB, 98 %, 40125 MiB, 81920 MiB"


def outputs(tmp_path: Path, *lines: str) -> list[dict]:
    path = tmp_path / "t.log"
    path.write_text("".join(f"{ln}\n" for ln in lines), encoding="utf-8")
    return list(parse_files([path], default_ts_ms=READ_TS))


def test_nvidia_smi_csv_rows_are_read_against_their_header(tmp_path: Path) -> None:
    out = outputs(tmp_path, CSV_HEADER, CSV_ROW)
    assert out[0].get("metrics") is None  # the header itself is a line, not figures
    row = out[1]
    assert row["metrics"]["gpu_utilization_pct"] == 98.0 and row["metrics"]["gpu_memory_mb"] == 40125.0
    assert row["timestamp"] == 1684318542317
    assert row["model_name"] is None  # the "name" column is the GPU's


def test_ultralytics_rows_behind_a_tqdm_bar(tmp_path: Path) -> None:
    out = outputs(tmp_path, "      Epoch    GPU_mem   box_loss   cls_loss   dfl_loss  Instances       Size",
                  "    70/1000      6.73G      1.081     0.4706      1.084         10        640: 100%|██| 16/16 "
                  "[00:05<00:00,  2.78it/s]")
    assert out[-1]["epoch"] == 70.0 and out[-1]["metrics"]["box_loss"] == 1.081


def test_a_row_needs_its_header_and_its_width(tmp_path: Path) -> None:
    # before any header, and under a header of another width, a row of numbers is a plain line
    assert "metrics" not in outputs(tmp_path, CSV_ROW)[0]
    assert "metrics" not in outputs(tmp_path, "name, utilization.gpu [%], memory.used [MiB]", CSV_ROW)[1]


def test_headers_are_per_source() -> None:
    builder = EventBuilder()

    def block(sid: str, text: str, offset: int) -> Block:
        return Block(sid, [text], offset, offset, 0, None, None, READ_TS, READ_TS, empty_source(), {})

    builder.build(block("a", CSV_HEADER, 1), "raw", 0)
    assert builder.build(block("b", CSV_ROW, 2), "raw", 0).kind == "event"
    assert builder.build(block("a", CSV_ROW, 3), "raw", 0).kind == "metric"


def test_what_is_a_header() -> None:
    assert header_of("epoch     train_loss  valid_loss  accuracy  time").names[1] == "train_loss"
    assert header_of(CSV_HEADER).units[3] == "%"
    assert header_of("the loss is going down now") is None  # prose: single blanks
    assert header_of("Class     Images  Instances      Box(P          R      mAP50  mAP50-95):") is None
    assert header_of("alpha  beta  gamma") is None  # no column a family claims


def test_the_header_survives_a_restart() -> None:
    # the worker saves each source's state (streams.assemble.state); the header is part of it
    key = b"node-7|nvidia-smi"
    first = Assembler()
    first.feed(RawRecord("logs.raw", 0, 0, CSV_HEADER.encode() + b"\n", key, READ_TS))
    first.flush_all()
    state = source_state(first, key.decode())
    assert state is not None
    second, cold = Assembler(), Assembler()
    restore_source(second, state)
    row = RawRecord("logs.raw", 0, 1, CSV_ROW.encode() + b"\n", key, READ_TS)
    assert [o.kind for o in second.feed(row) + second.flush_all()] == ["metric"]
    assert [o.kind for o in cold.feed(row) + cold.flush_all()] == ["event"]


def test_a_text_cell_stays_an_attribute() -> None:
    tables, p = ColumnTables(), Parsed()
    tables.read("s", CSV_HEADER, Parsed())
    tables.read("s", CSV_ROW, p)
    assert p.attributes["name"] == "NVIDIA A100-SXM4-80GB" and p.logger is None and p.task is None
    assert p.metrics["gpu_utilization_pct"] == 98.0
