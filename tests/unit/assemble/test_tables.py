"""Column tables (streams/assemble/tables.py): a header of names, then rows read against it, per source."""

from __future__ import annotations

from pathlib import Path

import pytest

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


# -- monitors' and progress tables whose rows the merger leaves one event each ---------------------------

DMON = Path(__file__).resolve().parents[2] / "fixtures" / "gpu" / "nvidia-smi-dmon.h100.txt"


def _dmon_rows(text: str) -> list[dict[str, str]]:
    """Each row of a recorded ``nvidia-smi dmon`` as {column: cell}, read with the header above it."""
    rows, names = [], None
    for line in text.splitlines():
        if line.startswith("# gpu"):
            names = line[1:].split()
        elif names and line.strip() and not line.startswith("#"):
            rows.append(dict(zip(names, line.split(), strict=True)))
    return rows


def test_nvidia_smi_dmon_rows_of_a_recording_are_read_against_its_header_and_units(tmp_path: Path) -> None:
    # nvidia-smi dmon -c 5 of an H100 (tests/fixtures/gpu): "# gpu  pwr  gtemp  mtemp  sm  mem ..." then the
    # "# Idx  W  C  C  %  % ..." units line, then a row per GPU per second
    text = DMON.read_text(encoding="utf-8")
    want = _dmon_rows(text)
    got = [o for o in outputs(tmp_path, *text.splitlines()) if o.get("metrics")]
    assert len(got) == len(want) == 10  # one metric point per row: no row is glued to the header or another row
    for row, out in zip(want, got, strict=True):
        assert out["metrics"]["gpu_utilization_pct"] == float(row["sm"])  # the SM utilisation, %
        assert out["metrics"]["memory_busy_pct"] == float(row["mem"])  # how busy the memory is, not an amount
        assert "gpu_memory_mb" not in out["metrics"]  # this layout has no fb column
    assert {o["metrics"]["gpu_utilization_pct"] for o in got} == {0.0, 100.0}  # idle and under load


def test_nvidia_smi_dmon_framebuffer_column_is_the_gpus_memory(tmp_path: Path) -> None:
    # the older default layout (-s pucvmet) with fb, MB, and a row where a full column leaves one blank
    header = ("# gpu   pwr  temp    sm   mem   enc   dec  mclk  pclk pviol tviol    fb  bar1 sbecc dbecc   pci rxpci "
              "txpci")
    units = ("# Idx     W     C     %     %     %     %   MHz   MHz     %  bool    MB    MB  errs  errs  errs  MB/s  "
             "MB/s")
    out = outputs(tmp_path, header, units,
                  "    0   111    83    25     7     0     0  4513  1683     0     0 11651     2     -     -     0"
                  "    41     8",
                  "    3    86    70    18     6     0     0  4513  1784     0     0 11660     2     -     -     0"
                  "    62     5")
    assert [(o["metrics"]["gpu_utilization_pct"], o["metrics"]["gpu_memory_mb"]) for o in out[2:]] == [
        (25.0, 11651.0), (18.0, 11660.0)]
    assert "metrics" not in out[0] and "metrics" not in out[1]  # the header and its units line are lines


def test_a_monitor_header_without_its_units_line_still_reads_mem_as_busy() -> None:
    tables, p = ColumnTables(), Parsed()
    tables.read("s", "# gpu    pwr  gtemp  mtemp     sm    mem", Parsed())
    tables.read("s", "    0     70     34      -     43      7", p)
    assert p.metrics["gpu_utilization_pct"] == 43.0 and "gpu_memory_mb" not in p.metrics


def test_a_comment_of_prose_is_no_monitor_header() -> None:
    assert header_of("# the loss and the step of this run") is None  # single blanks: prose
    assert header_of("# gpu    pid  type    sm    mem    enc    dec    command") is not None  # pmon: a header...
    tables, p = ColumnTables(), Parsed()
    tables.read("s", "# gpu    pid  type    sm    mem    enc    dec    command", Parsed())
    tables.read("s", "    0  41822     C    45     12      -      -    python", p)
    # ... whose rows hold text cells where its process is named: kept as text
    assert p.metrics == {"gpu": 0.0, "gpu_utilization_pct": 45.0, "memory_busy_pct": 12.0}
    assert (p.attributes["pid"], p.attributes["type"], p.attributes["command"]) == ("41822", "C", "python")


@pytest.mark.parametrize(("rows", "want"), [
    # fastai v2 (Recorder + ProgressCallback via fastprogress' ConsoleMasterBar.write(table=True))
    (["epoch     train_loss  valid_loss  accuracy  time    ",
      "0         0.318497    0.223164    0.927000  00:13     ",
      "1         0.201754    0.190121    0.941000  00:12     "],
     [(0.0, 0.318497, 0.223164), (1.0, 0.201754, 0.190121)]),
    # fastai v1 (Recorder.format_stats: '#na#' where no validation ran; format_time with hours)
    (["epoch     train_loss  valid_loss  error_rate  time    ",
      "0         1.254913    #na#        #na#        1:02:03     ",
      "1         0.854913    0.712345    0.250000    59:59     "],
     [(0.0, 1.254913, None), (1.0, 0.854913, 0.712345)]),
])
def test_fastai_progress_table_rows_are_events_of_their_own(tmp_path: Path, rows: list[str], want: list) -> None:
    out = outputs(tmp_path, *rows)
    assert len(out) == len(rows)  # the header, then one output per epoch
    got = [(o["epoch"], o["metrics"]["loss"], o["metrics"].get("eval_loss")) for o in out[1:]]
    assert got == want
