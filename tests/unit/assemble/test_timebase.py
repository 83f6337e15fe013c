"""The time of a block with no time of its own, on one stdout that several ranks write.

Ranks' lines interleave on one Kafka key; a rank's traceback stays open while the other ranks go on
logging, so it is built after their later lines: it must not take their time.
"""

from __future__ import annotations

import calendar

from streams.assemble.pipeline import Assembler, RawRecord
from streams.assemble.state import forget_source, restore_source, source_state
from streams.assemble.timebase import MAX_RECENT, SourceTimes

KEY = b"node-7|stdout"
T10 = calendar.timegm((2025, 4, 5, 10, 0, 0)) * 1000
MIN = 60_000
READ = T10 + 3600_000  # a backlog: every line read an hour later, at once

TRACEBACK = ["Traceback (most recent call last):", '  File "train.py", line 3, in <module>',
             "    loss.backward()", "RuntimeError: CUDA error: an illegal memory access was encountered"]


def step(rank: int, minute: int) -> str:
    return f"[rank{rank}]: 2025-04-05 10:{minute:02d}:00 INFO step {minute * 100}"


def interleaved(tb_rank: int, own_line: bool) -> list[str]:
    """Rank 0 logs a step a minute; ``tb_rank`` prints a traceback between rank 0's lines of minutes
    5 to 8, after a timed line of its own at 10:00 when ``own_line``."""
    lines = [f"[rank{tb_rank}]: 2025-04-05 10:00:00 INFO rank {tb_rank} ready"] if own_line else []
    lines += [step(0, 4)]
    for minute, tb_line in zip(range(5, 9), TRACEBACK, strict=True):
        lines += [f"[rank{tb_rank}]: {tb_line}", step(0, minute)]
    return lines


def feed(asm: Assembler, lines: list[str], reads: list[int] | None = None, first: int = 0) -> list[dict]:
    out = []
    for i, line in enumerate(lines):
        read = reads[i] if reads else READ
        out += asm.feed(RawRecord("logs.raw", 0, first + i, (line + "\n").encode(), KEY, read))
    return [o.value for o in out if o.kind == "event"]


def run(lines: list[str], reads: list[int] | None = None, asm: Assembler | None = None, first: int = 0) -> list[dict]:
    asm = asm or Assembler(idle_timeout_ms=3600_000)
    events = feed(asm, lines, reads, first)
    return events + [o.value for o in asm.flush_all() if o.kind == "event"]


def traceback_of(events: list[dict]) -> dict:
    (tb,) = [e for e in events if e["line_count"] > 1]
    assert tb["error_class"] == "cuda_error" and tb["line_count"] == 4
    return tb


def test_a_ranks_traceback_takes_its_own_last_time_not_the_other_ranks_later_ones() -> None:
    events = run(interleaved(3, own_line=True))
    assert [e["timestamp"] for e in events if e["line_count"] == 1][-1] == T10 + 8 * MIN, "rank 0 went on"
    assert traceback_of(events)["timestamp"] == T10


def test_a_rank_whose_first_words_are_its_traceback_takes_the_line_before_it() -> None:
    assert traceback_of(run(interleaved(3, own_line=False)))["timestamp"] == T10 + 4 * MIN


def test_an_unprefixed_dump_takes_the_source_line_before_it_not_the_unprefixed_lines_time() -> None:
    """``terminate called`` goes to stderr without the rank's prefix: the unprefixed lines are no writer."""
    lines = ["2025-04-05 10:00:00 INFO launcher started", step(2, 5),
             "terminate called after throwing an instance of 'c10::DistBackendError'",
             "  what():  [PG ID 0 PG GUID 0(default_pg) Rank 2] Process group watchdog thread terminated",
             step(0, 9)]
    (dump,) = [e for e in run(lines) if e["message"].startswith("terminate")]
    assert dump["timestamp"] == T10 + 5 * MIN


def test_read_live_the_block_is_later_by_the_read_time_elapsed_since_that_line() -> None:
    """A rank hangs ten minutes after its last timed line, then prints its traceback; the launcher's
    teardown follows it. The reads say how long after: the times stay in the log's own base (the
    log's clock here is an hour behind the agent's)."""
    lines = ["[rank3]: 2025-04-05 10:00:00 INFO rank 3 ready", *(f"[rank3]: {t}" for t in TRACEBACK),
             "WARNING:torch.distributed.elastic.multiprocessing.api:Sending process 2 closing signal SIGTERM"]
    reads = [READ, READ + 10 * MIN, READ + 10 * MIN, READ + 10 * MIN, READ + 10 * MIN, READ + 10 * MIN + 350]
    events = run(lines, reads)
    tb = traceback_of(events)
    assert tb["timestamp"] == T10 + 10 * MIN and tb["ingest_ts"] == READ + 10 * MIN
    assert events[-1]["message"].startswith("WARNING") and events[-1]["timestamp"] == T10 + 10 * MIN + 350
    backwards = [READ, *(READ - MIN for _ in lines[1:])]  # a read time that goes back: never earlier
    assert traceback_of(run(lines, backwards))["timestamp"] == T10


def test_the_times_survive_a_restart_in_the_middle_of_the_traceback() -> None:
    lines = interleaved(3, own_line=False)
    whole = run(lines)
    cut = 4  # rank 3's traceback is open, rank 0 has logged minutes 4 and 5
    first = Assembler(idle_timeout_ms=3600_000)
    before = feed(first, lines[:cut])
    state = source_state(first, KEY.decode())
    assert state is not None
    second = Assembler(idle_timeout_ms=3600_000)
    restore_source(second, state)
    after = run(lines[cut:], asm=second, first=cut)
    assert traceback_of(before + after)["timestamp"] == traceback_of(whole)["timestamp"] == T10 + 4 * MIN


def test_a_state_written_with_only_the_last_time_still_times_the_next_block() -> None:
    asm = Assembler()
    restore_source(asm, b'{"v": 1, "sid": "node-7|stdout", "open": {}, "last_key": null, "last_ts": %d}' % T10)
    events = run(TRACEBACK, asm=asm, first=100)
    assert traceback_of(events)["timestamp"] == T10


def test_a_source_that_named_its_task_keeps_it_across_a_restart_without_a_time() -> None:
    asm = Assembler()
    asm.feed(RawRecord("logs.raw", 0, 0, b'{"task_id": "t-1", "msg": "no time here"}\n', KEY, READ))
    asm.flush_all()
    second = Assembler()
    state = source_state(asm, KEY.decode())
    assert state is not None, "the task is state too"
    restore_source(second, state)
    assert traceback_of(run(TRACEBACK, asm=second, first=1))["task_id"] == "t-1"


def test_the_nearest_line_before_is_found_among_those_that_closed_out_of_order() -> None:
    times = SourceTimes()
    for n in range(MAX_RECENT + 3):  # more timed lines than are kept, noted out of position order
        times.note("", (100 - n, 0), 1000 - n, 0)
    assert times.before("", (97, 5), 0) == 997
    assert times.before("", (90, 0), 0) is None, "older than what is kept: the caller takes the read time"
    assert SourceTimes.from_dict(times.to_dict()).before("", (97, 5), 0) == 997


def test_a_writers_time_from_after_the_block_is_not_taken() -> None:
    """The block is placed after lines before it: a later timed line of its writer (noted first, as an
    offline parse may) leaves it to the source's line before it."""
    times = SourceTimes()
    times.note("", (3, 0), 1000, 0)
    times.note("[rank1]:", (9, 0), 5000, 0)
    assert times.before("[rank1]:", (5, 0), 0) == 1000
    assert times.before("[rank1]:", (10, 0), 0) == 5000


def test_a_deleted_state_forgets_the_times() -> None:
    """A tombstone on the state topic: the source holds nothing, so the next untimed block takes its read time."""
    first = Assembler()
    run(["2025-04-05 10:00:00 INFO ready"], asm=first)
    state = source_state(first, KEY.decode())
    assert state is not None
    second = Assembler()
    restore_source(second, state)
    forget_source(second, KEY.decode())
    assert source_state(second, KEY.decode()) is None
    assert traceback_of(run(TRACEBACK, asm=second, first=1))["timestamp"] == READ
