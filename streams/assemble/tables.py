"""Column tables: a header line of names, then rows of values under it, read as records.

The printers that lay their figures out this way:

- ``nvidia-smi --query-gpu=... --format=csv``: ``name, utilization.gpu [%], memory.used [MiB]`` (units in
  brackets), then one row per GPU per interval, ``GeForce GTX 1080 Ti, 36 %, 2856 MiB``;
- ultralytics' trainer: ``Epoch  GPU_mem  box_loss ...  Instances  Size``, then rows that are a tqdm
  description, ``70/1000  6.73G  1.081 ...  640: 100%|...``;
- files Python's ``csv.DictWriter`` writes, printed or shipped as logs: Keras' ``CSVLogger``
  (``epoch,accuracy,loss,val_accuracy,val_loss``), Lightning's ``CSVLogger`` ``metrics.csv``
  (``epoch,step,train_loss,val_loss``, a cell left empty where a key was not logged that step);
- ``dcgmi dmon``: ``#Entity   GPUTL  FBUSD`` (the fields' short names, the header commented out), an ``ID``
  line, then rows named by their entity, ``GPU 0     87     18432``;
- ``nvidia-smi dmon``: ``# gpu   pwr  gtemp  mtemp    sm   mem ...`` (short names, right-aligned, one blank
  where a column is full), a ``# Idx      W      C      C      %      % ...`` line of units, then one row per
  GPU per interval; its ``sm`` is the SM utilisation (%), its ``fb`` the framebuffer in use (MB) and its
  ``mem`` how busy the memory is (%), not an amount (:data:`MONITOR_COLUMNS`; the units line is not needed);
  ``-o DT`` puts the local date and time in front (``#Date  Time  gpu ...``), the row's time; ``nvidia-smi pmon``
  the same per process (``# gpu  pid  type  sm  mem ... command``), its process id, type and command kept as text;
- ``tabulate``'s "psql" tables, as Ray Tune's CLIReporter prints its trials: ``| Trial name | status | loc | lr |
  iter | total time (s) | loss |`` (names with blanks, text cells in the rows);
- fastai's ``Recorder`` through fastprogress: ``epoch     train_loss  valid_loss  accuracy  time``, then a row
  per epoch, each value padded to its name's width (the merger leaves each row an event of its own);
- ``rocm-smi``'s concise table: ``GPU  Temp   AvgPwr  SCLK  MCLK  Fan  Perf  PwrCap  VRAM%  GPU%`` (units glued to
  two names: ``GPU%`` the utilisation, ``VRAM%`` the share of memory in use, no amount), then a row per GPU with
  one word of state (``auto``); ``amd-smi monitor``: ``GPU  POWER  GPU_TEMP ... GFX_UTIL ... VRAM_USED`` over rows
  whose values carry their unit a blank apart (``171 W``, ``99 %``, ``30123 MB``).
- Vowpal Wabbit's progress table, its header over two rows (``average  since  example ...`` over ``loss  last
  counter ...``): each column named by its words in both rows, ``average loss`` the progressive loss.

A header is a line of three or more names separated by ``, `` (or ``,`` in a line without blanks) or by
two or more blanks (aligned columns; prose has single blanks), maybe behind a ``#`` (a monitor's header,
whose names may be one blank apart where a column is full, when the line has aligned gaps too), at least
one of which a key family or a counter claims (a monitor's units line, ``# Idx  W  C  %``, is none: the
header above it stays). A row is read only against the last header of its own source and only when it
has that header's width, every cell a value (a number with or without unit, ``n/m``, a clock, or a value not
measured: ``-``, ``N/A``, fastai's ``#na#``; the first may name a DCGM entity, ``GPU 0``) where the columns are
aligned; a csv row may hold text cells (a GPU's name), which stay attributes. The cells go through the key
families like a record's keys.

Why a per-source memory is sound here: a row is never read against another table's header (the widths
must agree and, in aligned columns, every cell must be a value), and a header is replaced by the next
one. A restart loses nothing: the header is part of the source's saved state (:mod:`streams.assemble.state`,
written in the same transaction as the outputs), like its times and task. What it cannot know is a table
whose header was printed before the source was first read (a replay that starts mid-table, ``sluice
parse`` of a file's tail): those rows stay plain lines until the printer repeats its header. The upper row of a
two-row header is held for the source's next line only, and saved with the state too.
"""

from __future__ import annotations

import re
from dataclasses import dataclass, field

from streams.assemble.keys import (
    EPOCH_KEYS,
    STEP_KEYS,
    TIME_KEYS,
    canonical,
    claimed,
    norm,
    settle_loss,
    settle_memory,
    settle_norm,
)
from streams.assemble.lift import Parsed, lift_record, lift_value

MAX_TABLE_LINE = 512
MAX_TABLE_BLOCK = 16  # a block with a table in it is a report's few lines, not a dump
MAX_TRACKED_SOURCES = 100_000
# nvidia-smi's query CSV names each column's unit in brackets ("utilization.gpu [%], memory.used [MiB]"): a header
# of two such columns is no sentence, where two bare names could be.
_UNITED_CSV_NAMES = 2
# Lightning's CSVLogger writes the keys as logged: LearningRateMonitor's "lr-AdamW", "lr-Adam/pg1", a namespaced
# "train/loss".
_CSV_NAME = re.compile(r"([A-Za-z][\w.]*(?:[-/][\w.]+)*)(?: \[([^\]]{1,8})\])?")
# Intel's xpu-smi dump names its columns in words with the unit in parentheses: "Timestamp, DeviceId, GPU Utilization
# (%), GPU Power (W), GPU Memory Used (MiB)". A name of words is taken only in a header of two or more such units.
_CSV_WORDS = re.compile(r"([A-Za-z][\w.]*(?: [A-Za-z][\w.]*){0,4})(?: \(([^)]{1,16})\))?")
# An aligned header's name may carry its unit glued on ("GPU%", "VRAM%": rocm-smi's concise table) or a
# qualifier in brackets ("Temp (DieEdge)"), a reporter's namespaces (Chainer's PrintReport: ``main/loss``,
# ``validation/main/loss``), or be two or three words one blank apart (scikit-learn's gradient boosting:
# ``Iter       Train Loss   Remaining Time``; the columns are two or more blanks apart).
_NAME = re.compile(r"[A-Za-z][\w./]*(?: [A-Za-z][\w.]*){0,2}(?: \(\w+\))?%?")
# spaCy's console logger heads its training table "E    #       LOSS TOK2VEC  LOSS NER  ENTS_F ... SCORE": the
# epoch, the step, then the components' losses and the scores.
_SPACY_HEAD = ["E", "#"]
_DEVICE_CSV = "device,"  # rocm-smi --csv's first column (see _device_columns)
_WORD_CELL = re.compile(r"[A-Za-z]+")
_WIDE_GAP = re.compile(r"\s{2,}|\t")
_VALUE = re.compile(r"[-+]?(?:\d+\.?\d*|\.\d+)(?:[eE][-+]?\d+)?(?:/\d+)?(?:\s?°?[A-Za-z%]{1,4})?|-|N/A|"
                    r"\d\d?:\d\d(?::\d\d)?|#na#|None")
# Cells that say a value was not measured: nvidia-smi's, fastai v1's Recorder ('#na#': no validation that
# epoch) and v2's ProgressCallback (str(None)).
# skorch's PrintLog writes an event column's True as "+" and its False as nothing (a cell left blank).
_NO_VALUE = frozenset(("-", "N/A", "[N/A]", "", "#na#", "None", "+"))
_COUNT_OF = re.compile(r"(\d+)/\d+")
# The entity kinds dcgmi dmon names its rows by (DCGM's entity groups), each followed by its id.
_ENTITY = re.compile(r"GPU|GPU-I|GPU-CI|CPU|CPU_CORE|NvSwitch|NVSWITCH|LINK|VGPU")


# Columns a monitor names by its own short names, read as fields when its header is commented and has a
# ``gpu`` column: ``nvidia-smi dmon``, and ``nvidia-smi pmon`` (per process: its ``sm`` the share of the GPU the
# process used, its ``fb`` the memory it holds).
MONITOR_COLUMNS = {"sm": "gpu_utilization_pct", "fb": "gpu_memory_mb", "mem": "memory_busy_pct"}
# A device SMI's query CSV (nvidia-smi --query-gpu, hl-smi -Q: names of its properties with their units in brackets,
# "memory.used [MiB]") reports one device a row: its memory.used is that device's memory even where no utilisation
# stands beside it (a "[N/A]" under MIG, a query of memory alone).
_DEVICE_QUERY_MEMORY = frozenset(("memory.used",))
# Columns whose cells are names, kept as text: pmon's process id, its type (``C``, ``G``, ``C+G``) and command.
_TEXT_COLUMNS = frozenset(("pid", "type", "command"))
# ``nvidia-smi dmon -o DT`` puts the local date and time in front: ``#Date  Time  gpu ...`` over
# ``20240307   10:41:57      0 ...`` (``#YYYYMMDD HH:MM:SS`` in its units line).
_DATE_CELL = re.compile(r"(\d{4})(\d\d)(\d\d)")
_CLOCK_CELL = re.compile(r"\d\d:\d\d:\d\d")
# A table drawn with bars (``tabulate``'s "psql" format, as Ray Tune's CLIReporter prints its trial table:
# ``| Trial name | status | loc | lr | iter | total time (s) | loss |``): names may have blanks and a unit in
# brackets, and a row's cells may be text (a trial's name, its status, its host:port). (Ray Tune's newer
# AIR_TABULATE_TABLEFMT draws the table in a "│" box, which the merger keeps as one event of all its trials.)
_BARS = "|"
_BAR_NAME = re.compile(r"[A-Za-z][\w.]*(?: [\w.()/%]+){0,4}")


@dataclass(slots=True, frozen=True)
class Header:
    names: list[str]
    units: list[str]  # nvidia-smi's "[MiB]", "[%]"; empty where the column has none
    csv: bool
    # Where each name of an aligned header starts and ends on its line, to place the cells of a row that left one
    # blank (empty in states saved before they were kept)
    starts: list[int] = field(default_factory=list)
    ends: list[int] = field(default_factory=list)


def _key(name: str) -> str:
    """A column's name as the families know it: a unit glued on is part of it ("GPU%" is ``gpu_pct``, not the
    ``gpu`` index column beside it)."""
    return canonical(norm(f"{name[:-1]} pct" if name[-1:] == "%" else name))


def _claimed(name: str) -> bool:
    return claimed(_key(name))


def header_of(text: str) -> Header | None:
    """The header a line is, or None."""
    s = text.strip()
    if len(s) > 2 and s[0] in _BARS and s[-1] == s[0]:
        return _bar_header(s)
    monitor = s[:1] == "#"  # a monitor's commented header: dcgmi dmon's "#Entity   GPUTL  FBUSD"
    if monitor:
        s = s[1:].lstrip()
    if ", " in s or ("," in s and (" " not in s or s.startswith(_DEVICE_CSV))):  # csv.writer's rows: no blank after ,
        parsed = _csv_names(s)
        if parsed is None:
            return None
        names, units = parsed
        csv = True
    elif "  " in s or "\t" in s:
        names = s.split() if monitor else _WIDE_GAP.split(s)
        if names[:2] == _SPACY_HEAD:
            names[:2] = ["epoch", "step"]
        if not all(_NAME.fullmatch(n) for n in names):
            return None
        units, csv = [""] * len(names), False
    else:
        return None
    if monitor and "gpu" in names:
        names = [MONITOR_COLUMNS.get(n, n) for n in names]
    united = all(units) or _counted_pair(names) or _device_columns(names, units)
    if len(names) < (_UNITED_CSV_NAMES if csv and united else 3) or not any(
            _claimed(n) for n in names):
        return None
    spans = None if csv or monitor else _spans(text, names)
    return Header(names, units, csv, *spans) if spans else Header(names, units, csv)


def _device_columns(names: list[str], units: list[str]) -> bool:
    """rocm-smi's --csv (python_smi_tools/rocm_smi.py): a "device" column, then each shown field named in words with
    its unit in parentheses, "device,GPU use (%)", one row per card ("card0,98")."""
    return names[0] == "device" and all(units[1:])


def _counted_pair(names: list[str]) -> bool:
    """A csv header of a step and one figure: DeepSpeed's csvMonitor.write_events (deepspeed/monitor/csv_monitor.py)
    heads each event's file with ["step", the event name's last part], "step,train_loss", "step,lr"."""
    return len(names) == _UNITED_CSV_NAMES and _key(names[0]) in STEP_KEYS and _claimed(names[1])


def _csv_names(s: str) -> tuple[list[str], list[str]] | None:
    """The names of a csv header and their units."""
    names, units = [], []
    worded = False
    for cell in s.split(","):
        m = _CSV_NAME.fullmatch(cell.strip())
        if m is None:
            m = _CSV_WORDS.fullmatch(cell.strip())
            if m is None:
                return None
            worded = True
        names.append(m.group(1))
        units.append(m.group(2) or "")
    if worded and sum(1 for u in units if u) < _UNITED_CSV_NAMES and not _device_columns(names, units):
        return None
    return names, units


def _spans(text: str, names: list[str]) -> tuple[list[int], list[int]] | None:
    """Where each of an aligned header's names starts and ends on its line."""
    starts, ends, at = [], [], 0
    for name in names:
        at = text.find(name, at)
        if at < 0:
            return None
        starts.append(at)
        at += len(name)
        ends.append(at)
    return starts, ends


def _bar_cells(s: str) -> list[str]:
    return [c.strip() for c in s[1:-1].split(s[0])]


def _bar_header(s: str) -> Header | None:
    names = _bar_cells(s)
    if len(names) < 3 or not all(_BAR_NAME.fullmatch(n) for n in names) or not any(_claimed(n) for n in names):
        return None
    return Header(names, [""] * len(names), False)


# A header printed over two rows, each column's name a word of each: Vowpal Wabbit's print_update_header writes
# "average  since         example        example  current  current  current" over "loss     last          counter
# weight    label  predict features" (the second row's last names one blank apart). Neither row alone names a column
# ("average loss" is the progressive loss); the upper row is held for the line after it only.
def _upper_row(text: str) -> list[str] | None:
    s = text.strip()
    if s[:1] == "#" or "  " not in s:
        return None
    words = _WIDE_GAP.split(s)
    return words if len(words) >= 3 and all(_WORD_CELL.fullmatch(w) for w in words) else None


def _stacked(upper: list[str], text: str) -> Header | None:
    lower = text.split()
    if len(lower) != len(upper) or not all(_WORD_CELL.fullmatch(w) for w in lower):
        return None
    names = [f"{u} {w}" for u, w in zip(upper, lower, strict=True)]
    return Header(names, [""] * len(names), False) if any(_claimed(n) for n in names) else None


class ColumnTables:
    """The last header of each source, and the rows read against it."""

    def __init__(self) -> None:
        self.headers: dict[str, Header] = {}
        self.upper: dict[str, list[str]] = {}  # a two-row header's first row, for the source's next line

    def read(self, sid: str, text: str, p: Parsed) -> None:
        """A row of the source's table into ``p``, or a new header remembered. A line another rule read
        (it has metrics or a step) is left alone."""
        upper = self.upper.pop(sid, None) if self.upper else None
        if len(text) > MAX_TABLE_LINE or p.metrics or p.step is not None or p.epoch is not None:
            return
        if "\x1b" in text:  # skorch's PrintLog colours the best value of each score
            text = _ANSI.sub("", text)
        header = self.headers.get(sid) if self.headers else None
        if header is not None and _row(header, text, p):
            return
        if p.fmt is None and p.level is None and ("  " in text or "," in text or "\t" in text
                                                   or text.lstrip()[:1] in _BARS):
            # (a header has no head)
            new = _stacked(upper, text) if upper is not None else None
            if new is None:
                new = header_of(text)
            if new is not None:
                if len(self.headers) >= MAX_TRACKED_SOURCES:
                    self.headers.clear()
                self.headers[sid] = new
            elif (words := _upper_row(text)) is not None:
                if len(self.upper) >= MAX_TRACKED_SOURCES:
                    self.upper.clear()
                self.upper[sid] = words

    def read_block(self, sid: str, texts: list[str], p: Parsed) -> None:
        """A table inside a block of lines: ParlAI's train_model logs "time:12s total_exs:4000 ..." and its report's
        table (a header, a row of values) in one message. The rows under the block's last header are read into
        ``p``; a header that ends the block is remembered for the rows after it (the merger starts a new event where
        the row is less deep than the header)."""
        for i in range(len(texts) - 1, 0, -1):
            text = texts[i]
            if len(text) > MAX_TABLE_LINE or "  " not in text or text.lstrip()[:1] in _BARS \
                    or (header := header_of(text)) is None or header.csv:
                continue
            if i == len(texts) - 1:
                if len(self.headers) >= MAX_TRACKED_SOURCES:
                    self.headers.clear()
                self.headers[sid] = header
            else:  # (a figure the block's first line named already keeps its value)
                for row in texts[i + 1:]:
                    _row(header, row, p)
            return


def _cells(header: Header, text: str) -> list[str] | None:
    n = len(header.names)
    if header.csv:
        cells = [c.strip() for c in text.split(",")]
        return cells if len(cells) == n else None
    s = text.strip()
    if len(s) > 2 and s[0] in _BARS and s[-1] == s[0]:
        cells = _bar_cells(s)
        return cells if len(cells) == n else None
    cells = text.split()
    if len(cells) > n + 1 and "  " in text and len(wide := _WIDE_GAP.split(text.strip())) == n:
        cells = wide  # values written with their unit a blank apart: amd-smi monitor's "171 W     42 °C     99 %"
    if len(cells) > n and cells[n - 1].endswith(":"):  # a tqdm bar after the row (ultralytics)
        cells = cells[:n]
        cells[-1] = cells[-1][:-1]
    first = 0
    if len(cells) == n + 1 and _ENTITY.fullmatch(cells[0]) and cells[1].isdigit():
        cells = [f"{cells[0]} {cells[1]}", *cells[2:]]  # dcgmi dmon's "GPU 0": the entity a row is about
        first = 1
    if len(cells) < n and header.ends:
        cells = _placed(header, text) or cells
    if len(cells) != n:
        return None
    # every cell a value, but for one word of state in a row of five or more after its first cell (rocm-smi's Perf
    # column: "auto")
    words = [c for name, c in zip(header.names[first:], cells[first:], strict=True)
             if name not in _TEXT_COLUMNS and c not in _NO_VALUE and not _VALUE.fullmatch(c)]
    if words and (len(words) > 1 or n < 5 or not _WORD_CELL.fullmatch(words[0]) or words[0] == cells[0]):
        return None
    return cells


_ANSI = re.compile(r"\x1b\[[0-9;]*m")
_TOKEN = re.compile(r"\S+")


def _placed(header: Header, text: str) -> list[str] | None:
    """The cells of a row of an aligned table that left some blank (skorch's PrintLog writes an event column's False
    as nothing), each under the name it is aligned with (its last character under the name's, as tabulate and pandas
    right-align figures, or its first, as fastprogress left-aligns them); None when a cell is under no name."""
    cells = [""] * len(header.names)
    col = 0
    for m in _TOKEN.finditer(text):
        while col < len(header.names) and m.end() != header.ends[col] and m.start() != header.starts[col]:
            col += 1
        if col == len(header.names):
            return None
        cells[col] = m.group()
        col += 1
    return cells


def _dated(times: dict[str, str], date: str | None) -> dict[str, str]:
    """A clock cell with the date of its row's date column in front (``dmon -o DT``)."""
    if date is None:
        return times
    return {k: f"{date}T{v}" if _CLOCK_CELL.fullmatch(v) else v for k, v in times.items()}


def _row(header: Header, text: str, p: Parsed) -> bool:
    cells = _cells(header, text)
    if cells is None:
        return False
    times: dict[str, str] = {}
    date = None
    found = False
    for name, unit, cell in zip(header.names, header.units, cells, strict=True):
        if cell in _NO_VALUE:
            continue
        nk = _key(name)
        if nk in TIME_KEYS:
            times[name] = cell
            continue
        if nk == "date" and (d := _DATE_CELL.fullmatch(cell)) is not None:
            date = "-".join(d.groups())
            continue
        m = _COUNT_OF.fullmatch(cell) if nk in EPOCH_KEYS else None
        value = m.group(1) if m else cell  # "70/1000": the epoch of the run's epochs
        if name not in _TEXT_COLUMNS and (value[:1].isdigit() or value[:1] in "+-."):
            value = value + unit if unit and value[-1:].isdigit() else value  # the header's unit
            if not lift_value(p, name, nk, value):
                p.attributes.setdefault(name, value)
            found = True
        else:
            p.attributes.setdefault(name, cell)  # a text cell: a GPU's name is no model's, a process id no figure
    if not found:
        return False
    if times:
        lift_record(_dated(times, date), p)
    p.fmt, p.wide = p.fmt or "table", True
    _settle(p, _device_query(header))
    return True


def _device_query(header: Header) -> bool:
    """Whether the header is a device SMI's query CSV naming the device's memory in use (its unit in brackets)."""
    return header.csv and any(n in _DEVICE_QUERY_MEMORY and u for n, u in zip(header.names, header.units, strict=True))


def _settle(p: Parsed, device: bool = False) -> None:
    """A row's figures whose meaning the others settle (keys.settle_norm, settle_memory, settle_loss); ``device``: the
    row is one device's, so a bare memory is the device's."""
    if "bare_norm" in p.metrics:
        settle_norm(p.metrics, p.step is not None or p.epoch is not None)
    if "memory_mb" in p.metrics:
        settle_memory(p.metrics, device or p.step is not None or p.epoch is not None)
    if "running_loss" in p.metrics:
        settle_loss(p.metrics)  # Vowpal Wabbit's "average loss" column is the only loss it prints
