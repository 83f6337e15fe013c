"""Memory of one assemble worker's core holding many open multiline blocks (not a pytest test).

    .venv/bin/python tests/perf/assemble_memory.py [--sources 10000] [--out bench-results/assemble_memory.md]

One pure ``Assembler`` (one raw partition, the worker's default limits, no Kafka) is fed real Python
tracebacks from the corpus (``corpus/training``), one plain-text line per raw record, to
``--sources`` distinct record keys (sources). Each source is left with one open block: only the
first K lines of its traceback are sent, never the line that would close it, and neither
``flush_idle`` nor ``flush_all`` is called before measuring. Three shapes cut from the same 30+ line
tracebacks: K=1 (the fixed cost of an open block), K=5 (a typical partial traceback) and long (the
whole traceback but its last line). Each runs at ``--sources`` / 10 and ``--sources`` (linearity).

Two passes over the same runs, in this one process:

- untraced: VmRSS (``/proc/self/status``) above the process's baseline, runs in ascending size, and
  the JSON state the worker would write per source (``streams.assemble.state.source_state``);
- traced (``tracemalloc``): Python heap held after feeding minus before, the peak while feeding,
  the top allocation sites and, once, what stays held after ``flush_all`` closes every block.

Fails (AssertionError) when the assembler does not hold exactly one open block per source or emits
anything while the blocks should stay open. Writes bench-results/assemble_memory.md.
"""

from __future__ import annotations

import argparse
import contextlib
import ctypes
import gc
import linecache
import platform
import time
import tracemalloc
from collections.abc import Iterator
from dataclasses import dataclass, field
from datetime import UTC, datetime
from pathlib import Path

from devtools import CORPUS_DIR
from streams.assemble.decode import decode_record
from streams.assemble.merger import MultilineMerger
from streams.assemble.pipeline import Assembler, RawRecord
from streams.assemble.state import source_state, state_key
from streams.config import REPO_ROOT
from streams.errors import DecodeError

CORPUS = CORPUS_DIR
MARKER = "Traceback (most recent call last)"
TS_MS = 1_700_000_000_000
LONG_MIN_LINES = 31  # a long traceback: 30+ lines fed (all but its last)
TOP_SITES = 8
MIB = 1024 * 1024
GIB = 1024 * MIB


@dataclass(frozen=True)
class Scenario:
    name: str
    blocks: list[list[str]]  # the lines fed to a source; source i gets blocks[i % len(blocks)]


@dataclass
class Site:
    where: str  # file:line
    code: str
    size: int
    count: int


@dataclass
class Run:
    scenario: str
    sources: int
    lines: int = 0
    text_bytes: int = 0
    open_blocks: int = 0
    rss_bytes: int = 0  # VmRSS above the process baseline
    state_bytes: int = 0
    state_key_bytes: int = 0
    heap_bytes: int = 0
    peak_bytes: int = 0
    residue_bytes: int | None = None  # heap still held after flush_all (measured once)
    sites: list[Site] = field(default_factory=list)


# -- corpus -----------------------------------------------------------------------------------
def traceback_blocks(corpus: Path) -> list[list[str]]:
    """Every distinct block the merger makes from the training logs that holds a Python traceback."""
    found: dict[tuple[str, ...], None] = {}
    for path in sorted((corpus / "training").glob("*.log")):
        data = path.read_bytes()
        if MARKER.encode() not in data:
            continue
        merger = MultilineMerger(idle_timeout_ms=1 << 60)
        blocks = []
        for offset, raw in enumerate(data.split(b"\n")):
            try:
                lines = decode_record(raw + b"\n")
            except DecodeError:
                continue
            for line in lines:
                blocks += merger.push(path.name, line, offset, TS_MS)
        blocks += merger.flush_all()
        for b in blocks:
            if any(MARKER in t for t in b.texts):
                found.setdefault(tuple(b.texts), None)
    return [list(texts) for texts in found]


def stays_open(lines: list[str]) -> bool:
    """Fed alone to a fresh source, do ``lines`` make exactly one open block holding all of them?"""
    asm = Assembler()
    for rec in feed_order([lines], 1):
        if asm.feed(rec):
            return False
    opened = asm.merger._src.get(source_key(0).decode()) or {}
    return len(opened) == 1 and next(iter(opened.values())).block.texts == lines


def scenarios(tracebacks: list[list[str]]) -> list[Scenario]:
    """K=1, K=5 and long, all cut from the same long tracebacks (so the shapes differ only in K)."""
    cuts = {"K=1 (first line)": lambda tb: tb[:1], "K=5": lambda tb: tb[:5],
            "long (all but the last line)": lambda tb: tb[:-1]}
    base = [tb for tb in tracebacks
            if len(tb) >= LONG_MIN_LINES and all(stays_open(cut(tb)) for cut in cuts.values())]
    assert base, f"no corpus traceback of {LONG_MIN_LINES}+ lines stays open when cut"
    return [Scenario(name, [cut(tb) for tb in base]) for name, cut in cuts.items()]


# -- feeding ----------------------------------------------------------------------------------
def source_key(i: int) -> bytes:
    """A key shaped like ``rawbatch.source_key`` (host/namespace/pod/container/file/stream)."""
    return f"mem-node-{i // 100:03d}/ml-jobs/job-{i:05d}-worker-0/trainer/train.log/stderr".encode()


def feed_order(blocks: list[list[str]], sources: int) -> Iterator[RawRecord]:
    """Records built on the fly, round robin over the sources (all blocks open at once, as in a burst)."""
    offset = 0
    depth = max(len(b) for b in blocks)
    for j in range(depth):
        for i in range(sources):
            lines = blocks[i % len(blocks)]
            if j < len(lines):
                yield RawRecord("logs.raw", 0, offset, lines[j].encode() + b"\n", source_key(i), TS_MS)
                offset += 1


def feed(asm: Assembler, scenario: Scenario, sources: int, run: Run) -> None:
    for rec in feed_order(scenario.blocks, sources):
        out = asm.feed(rec)
        assert not out, f"{scenario.name}: a block closed at offset {rec.offset}: {out[0].kind}"
        run.lines += 1
    blocks = scenario.blocks
    run.text_bytes = sum(len(line.encode()) for i in range(sources) for line in blocks[i % len(blocks)])
    run.open_blocks = asm.merger.open_count()
    assert run.open_blocks == sources, f"{scenario.name}: {run.open_blocks} open blocks for {sources} sources"
    asm.take_dirty()  # the worker's commit turn takes (and so drops) the dirty set


# -- measuring --------------------------------------------------------------------------------
def rss() -> int:
    for line in Path("/proc/self/status").read_text().splitlines():
        if line.startswith("VmRSS:"):
            return int(line.split()[1]) * 1024
    raise RuntimeError("no VmRSS in /proc/self/status")


def trim() -> None:
    """Collect garbage and hand free C heap back to the OS between runs."""
    gc.collect()
    with contextlib.suppress(OSError, AttributeError):  # not glibc: freed memory may stay in RSS
        ctypes.CDLL("libc.so.6").malloc_trim(0)


def untraced_run(scenario: Scenario, run: Run, baseline_rss: int) -> None:
    """RSS above the baseline with the blocks open, and the state snapshot of every source."""
    trim()
    asm = Assembler()
    feed(asm, scenario, run.sources, run)
    gc.collect()
    run.rss_bytes = rss() - baseline_rss
    for i in range(run.sources):
        sid = source_key(i).decode()
        value = source_state(asm, sid)
        assert value is not None, sid
        run.state_bytes += len(value)
        run.state_key_bytes += len(state_key(0, sid))


def traced_run(scenario: Scenario, run: Run, sites: bool, residue: bool) -> None:
    """Python heap held and peak while feeding; optionally top sites and the residue after flush_all."""
    trim()
    start = tracemalloc.take_snapshot() if sites else None
    before = tracemalloc.get_traced_memory()[0]
    tracemalloc.reset_peak()
    asm = Assembler()
    fed = Run(run.scenario, run.sources)
    feed(asm, scenario, run.sources, fed)
    assert (fed.lines, fed.open_blocks) == (run.lines, run.open_blocks)
    gc.collect()
    held, peak = tracemalloc.get_traced_memory()
    run.heap_bytes, run.peak_bytes = held - before, peak - before
    if start is not None:
        run.sites = top_sites(tracemalloc.take_snapshot(), start)
    if residue:
        outputs = asm.flush_all()
        assert len(outputs) == run.sources and asm.merger.open_count() == 0, scenario.name
        del outputs
        asm.take_dirty()
        gc.collect()
        run.residue_bytes = tracemalloc.get_traced_memory()[0] - before


def top_sites(end: tracemalloc.Snapshot, start: tracemalloc.Snapshot) -> list[Site]:
    drop = [tracemalloc.Filter(False, tracemalloc.__file__), tracemalloc.Filter(False, linecache.__file__)]
    stats = end.filter_traces(drop).compare_to(start.filter_traces(drop), "lineno")
    out = []
    for st in stats[:TOP_SITES]:
        frame = st.traceback[0]
        path = Path(frame.filename)
        where = f"{path.relative_to(REPO_ROOT) if path.is_relative_to(REPO_ROOT) else path}:{frame.lineno}"
        out.append(Site(where, linecache.getline(frame.filename, frame.lineno).strip(), st.size_diff, st.count_diff))
    return out


@dataclass
class Probe:
    blanks: int
    closed_after: int | None  # blank lines fed when the block was emitted (None: still open)
    emitted_lines: int  # lines of the emitted block (the traceback's, without blank lines)
    open_blocks: int
    heap_bytes: int


def blank_line_probe(block: list[str], blanks: int) -> Probe:
    """One open traceback, then ``blanks`` empty lines (the corpus's blank line) on the same source."""
    trim()
    asm = Assembler()
    key = source_key(0)
    for rec in feed_order([block], 1):
        assert not asm.feed(rec)
    before = tracemalloc.get_traced_memory()[0]
    closed_after, emitted_lines = None, 0
    for n, offset in enumerate(range(len(block), len(block) + blanks), 1):
        for out in asm.feed(RawRecord("logs.raw", 0, offset, b"\n", key, TS_MS)):
            if out.kind == "event" and closed_after is None:
                closed_after, emitted_lines = n, out.value["message"].count("\n") + 1
    gc.collect()
    grown = tracemalloc.get_traced_memory()[0] - before
    return Probe(blanks, closed_after, emitted_lines, asm.merger.open_count(), grown)


# -- report -----------------------------------------------------------------------------------
def mib(n: float) -> str:
    return f"{n / MIB:,.1f} MiB"


def table_rows(runs: list[Run]) -> str:
    return "\n".join(
        f"| {r.scenario} | {r.sources:,} | {r.lines:,} | {r.open_blocks:,} | {mib(r.text_bytes)} | "
        f"**{mib(r.heap_bytes)}** | **{r.heap_bytes / r.sources:,.0f} B** | {r.heap_bytes / r.text_bytes:.1f}x | "
        f"{mib(r.peak_bytes)} | {mib(r.rss_bytes)} | {r.rss_bytes / r.sources:,.0f} B | "
        f"{mib(r.state_bytes)} | {r.state_bytes / r.sources:,.0f} B |"
        for r in runs)


TABLE_HEAD = ("| shape | sources | lines fed | open blocks | raw text held | Python heap | heap per block "
              "| heap / text | peak while feeding | RSS above baseline | RSS per block | state snapshot "
              "| state per source |\n"
              "|---|---|---|---|---|---|---|---|---|---|---|---|---|")


def site_rows(run: Run) -> str:
    head = "| site | code | bytes held | per block | objects |\n|---|---|---|---|---|\n"
    return head + "\n".join(f"| `{s.where}` | `{s.code[:72]}` | {mib(s.size)} | {s.size / run.sources:,.0f} B "
                            f"| {s.count:,} |" for s in run.sites)


def site_share(run: Run, needle: str) -> int:
    """Bytes held by the top sites whose code contains ``needle`` (0 when none is in the top list)."""
    return sum(s.size for s in run.sites if needle in s.code)


def report(sources: int, runs: list[Run], scen: list[Scenario], probe: Probe, seconds: float) -> str:
    by = {(r.scenario, r.sources): r for r in runs}
    k1, k5, lng = (by[(s.name, sources)] for s in scen)
    small = sources // 10
    linear = ", ".join(f"{s.name} {by[(s.name, sources)].heap_bytes / by[(s.name, small)].heap_bytes:.2f}x"
                       for s in scen)
    # heap ~ a * blocks + b * lines + text bytes (ASCII: one byte per character), fitted on K=1 and long
    per_line = ((lng.heap_bytes - lng.text_bytes) - (k1.heap_bytes - k1.text_bytes)) / (lng.lines - k1.lines)
    per_block = (k1.heap_bytes - k1.text_bytes - per_line * k1.lines) / k1.sources
    predicted_k5 = per_block * k5.sources + per_line * k5.lines + k5.text_bytes
    merger = Assembler().merger
    worst_lines = merger.max_lines - 1  # a block closes when it reaches max_lines or max_bytes
    worst_text = merger.max_bytes - worst_lines - 1  # nbytes counts len(text) + 1 per line
    worst = sources * (per_block + per_line * worst_lines + worst_text)
    worst_ucs4 = sources * (per_block + per_line * worst_lines + 4 * worst_text)
    line_str = site_share(lng, "text = text[:-1]")
    src_dict = site_share(k1, "dict.fromkeys(SOURCE_FIELDS)")
    residue = k5.residue_bytes or 0
    top1 = k1.sites[0]
    return f"""# Assemble memory: open multiline blocks

{datetime.now(UTC).isoformat(timespec="seconds")} on {platform.node()} ({platform.machine()}, Python
{platform.python_version()}), one process, one `Assembler` (one raw partition), default limits
(max_lines={merger.max_lines}, max_bytes={merger.max_bytes // 1024} KiB). No Kafka: the pure core the
assemble worker runs. Whole script: {seconds:.0f} s.

Command: `.venv/bin/python tests/perf/assemble_memory.py --sources {sources}`

Input: {len(scen[0].blocks)} distinct real Python tracebacks of {LONG_MIN_LINES}+ lines from
`corpus/training` (the blocks the merger makes from the files holding `{MARKER}`), one
plain-text line per raw record. Each source (record key of {len(source_key(0))} bytes, shaped like
`rawbatch.source_key`) gets one traceback, cycled over the texts, fed round robin over the sources.
Only the first K lines are sent: every block stays open (asserted: `open_count() == sources`, no
output), no `flush_idle` / `flush_all` before measuring.

- Python heap: `tracemalloc`, held after feeding (and the worker's `take_dirty()`) minus before;
  peak: the highest traced heap while feeding, minus before (records are built and dropped one by one).
- RSS above baseline: VmRSS with the blocks open minus VmRSS before the first run, in a separate
  untraced pass (tracemalloc's own tables would inflate it); runs in ascending size, freed memory
  `malloc_trim`med between them.
- state snapshot: the JSON values `state.source_state` makes for all sources (what the worker writes
  to the compacted state topic for dirty sources); keys add {k5.state_key_bytes / k5.sources:,.0f} bytes per source.

{TABLE_HEAD}
{table_rows(runs)}

Linearity, heap at {sources:,} / at {small:,} sources (ideal 10x): {linear}.

Heap still held after `flush_all()` closed all {k5.sources:,} K=5 blocks (outputs dropped):
**{mib(residue)}** ({residue / k5.sources:,.0f} B per source).

Allocation sites of the heap held, long shape, {sources:,} sources (`tracemalloc`, by line of allocation):

{site_rows(lng)}

Same, K=1:

{site_rows(k1)}

(A site in `tests/perf/` is the record key bytes, kept by `Assembler._sid_of_key` for its first 10,000 keys.)

## Reading

- Fit of the heap as `a x blocks + b x lines + raw text bytes` on the K=1 and long runs:
  **a = {per_block:,.0f} B per open block**, **b = {per_line:,.0f} B per line** beyond its text. It predicts
  {mib(predicted_k5)} for K=5, measured {mib(k5.heap_bytes)}.
- Long blocks: the line strings dominate. Each line is its own `str` made by `decode_record`
  ({mib(line_str)}, {100 * line_str / lng.heap_bytes:.0f}% of the heap); the heap is
  {lng.heap_bytes / lng.text_bytes:.1f}x the raw text.
- Short blocks: the fixed cost per open block dominates (K=1: {k1.heap_bytes / k1.sources:,.0f} B for
  {k1.text_bytes / k1.sources:,.0f} B of text; K=5: {k5.heap_bytes / k5.text_bytes:.1f}x the text). It is a `Block`
  and its `texts` list, an `_Open` with its own (empty) `pending` list, the first line's `source` and
  `labels` dicts, and per source the merger's `_src` dict and `_last_key` entry, the source id string
  and the `_sid_of_key` entry (which also keeps the record's key bytes). The largest site at K=1 is
  `{top1.where}` ({top1.size / k1.sources:,.0f} B per block). `decode_record` makes a fresh
  `empty_source()` dict (8 null fields) for every plain-text line and the block keeps the first
  line's: {src_dict / k1.sources:,.0f} B per block at K=1, plus a copy when the line has a rank prefix.
- RSS with {sources:,} long blocks open: {mib(lng.rss_bytes)} ({lng.rss_bytes / lng.heap_bytes:.2f}x the
  traced heap). Peak while feeding vs held (long): {mib(lng.peak_bytes)} vs {mib(lng.heap_bytes)}.
- State snapshot: {lng.state_bytes / lng.text_bytes:.2f}x the raw text for long blocks,
  {k1.state_bytes / k1.sources:,.0f} B per source at K=1 (JSON field names, the 8-field source, `body0`,
  offsets). The worker writes the whole state of every source a turn touched, so a turn that adds a
  line to each of {sources:,} open long blocks writes about {mib(lng.state_bytes)} to the state topic.
- Per-source entries: the merger forgets a source as soon as it has nothing open (its last prefix
  matters only while a block is open); what stays after `flush_all` (above) is the assembler's
  `_sid_of_key` (capped at 10,000 keys) and the builder's `times` (cleared past 100,000 sources).

Worst case under the default limits: a block closes when it reaches max_lines ({merger.max_lines}) or
max_bytes ({merger.max_bytes // 1024} KiB, counted as characters + 1 per line), so an open block holds at
most {worst_lines} lines and {worst_text:,} characters. {sources:,} such blocks: **{worst / GIB:,.2f} GiB** of
heap for ASCII text (a and b above), up to {worst_ucs4 / GIB:,.1f} GiB if every line holds a character
outside the BMP (Python then stores 4 bytes per character). The limits bound lines and characters
of `texts`, but not all of an open block:

- blank lines: a blank or whitespace-only line after an open block waits in `_Open.pending` (it
  joins the block only if the block goes on) and counts towards max_lines and max_bytes; a run that
  would take the block past a limit ends it. Probe: one open 5-line traceback, then
  {probe.blanks:,} empty lines on the same source: the block was emitted after {probe.closed_after} blank
  lines with its {probe.emitted_lines} lines, {probe.open_blocks} block open at the end, heap
  {mib(probe.heap_bytes)} above where it was.
- the line that crosses max_bytes is added whole (it is cut only when the event is built), so an
  open block can hold max_bytes plus one line as long as a raw record.
"""


def main() -> None:
    ap = argparse.ArgumentParser(description="Memory of one assembler holding many open multiline blocks.")
    ap.add_argument("--sources", type=int, default=10_000, help="open blocks (distinct record keys)")
    ap.add_argument("--out", type=Path, default=REPO_ROOT / "bench-results" / "assemble_memory.md")
    args = ap.parse_args()
    assert args.sources >= 10, "--sources must be at least 10"
    t0 = time.perf_counter()
    scen = scenarios(traceback_blocks(CORPUS))
    runs = [Run(s.name, n) for n in (args.sources // 10, args.sources) for s in scen]  # ascending size
    by_name = {s.name: s for s in scen}
    trim()
    baseline = rss()
    for r in runs:
        untraced_run(by_name[r.scenario], r, baseline)
    tracemalloc.start()
    for r in runs:
        big = r.sources == args.sources
        traced_run(by_name[r.scenario], r, sites=big, residue=big and r.scenario == scen[1].name)
    probe = blank_line_probe(scen[1].blocks[0], 5 * Assembler().merger.max_lines)
    tracemalloc.stop()
    text = report(args.sources, runs, scen, probe, time.perf_counter() - t0)
    args.out.parent.mkdir(parents=True, exist_ok=True)
    args.out.write_text(text)
    print(text)


if __name__ == "__main__":
    main()
