"""Multiline merger: joins the lines of one source into whole events, following ``rules.py``.

Each line is split into stream prefix (its *key*: ``[rank3]:``, ``(Worker pid=1)``, a syslog
writer), record head (``ERROR 09-05 17:22:27 [file.py:63]``, ``2024-01-01 12:00:00,123 - INFO -``)
and body. Lines of one key are merged together, interleaved keys apart; the prefix and head stay
in the message. An unprefixed line may continue the block last written under another key when
that block's printer prefixes only its first line (torch's ``[rank3]:[E...]`` C++ errors).

Each open block is in a mode of ``rules.MODES``; the mode's table says what the next line does
to it (continue, end it, be held until the grammar confirms it...). Held lines that are not
confirmed are read again on their own, so a guess never swallows a line.

Limits: ``max_lines`` and ``max_bytes`` per block (the block is emitted with ``truncated=True``).
Blank and held lines count towards both: reaching a limit with them ends the block without them
(they are read again), so no source can grow the merger's memory without bound.
``max_open_per_source`` open blocks (prefixes) per source: past it the block written to longest ago is
emitted (``evicted`` counts them; see docs/reliability.md).
``idle_timeout_ms``: ``flush_idle(now_ms)`` emits blocks whose last line arrived that long ago --
this is what emits the last traceback of a job that died.

Crash safety: ``oldest_open_offset()`` is the Kafka offset of the first line of the oldest block
still open (held lines come after it); a caller that commits only below it and re-reads from it
after a restart loses no line and splits no block. The merger uses no clock of its own, so a
replay gives the same blocks.
"""

from __future__ import annotations

import re
from typing import Any

from streams.assemble import rules as R
from streams.assemble.firstchar import Dispatch
from streams.assemble.lines import Block, RawLine, saved, utf8_len

# the tables' alternations, dispatched on a line's first character (see firstchar.py)
_PFX = Dispatch([(n, p) for n, p, _k, gate in R.STREAM_PREFIXES if gate is None], "p_")
_PFX_TABLE, _PFX_OTHER = _PFX.table, _PFX.other
_PFX_FIRST = _PFX.first
_PFX_GATED = tuple((gate, re.compile(f"(?P<p_{n}>{p})").match) for n, p, _k, gate in R.STREAM_PREFIXES if gate)
_HEADS = Dispatch([(n, p) for n, p, _r in R.HEADS], "h_")
_HEAD_TABLE, _HEAD_OTHER, _HEAD_FIRST = _HEADS.table, _HEADS.other, _HEADS.first
_TOKENS = Dispatch([(t[0], t[1]) for t in R.TOKENS if t[0] in R.COMMON_TOKENS and len(t) == 2])
_TOKEN_TABLE, _TOKEN_OTHER = _TOKENS.table, _TOKENS.other
_TOKEN_GATED = tuple((t[2], R.TOKEN_ORDER[t[0]], t[0], re.compile(t[1]).match)
                     for t in R.TOKENS if t[0] in R.COMMON_TOKENS and len(t) > 2)
_MAX_PREFIXES = 4  # stream prefixes read before a line's body
# Open blocks one source may hold at once, one per stream prefix. A line under another prefix looks at every
# block of its source, so a source writing under 100,000 prefixes ("[rank N]:", "(pid=N)") cost 12 ms a line
# (quadratic), and its state grew past any Kafka record. At the cap, the block written to longest ago is
# emitted as it stands (counted in ``evicted``); a node's log holds a few dozen ranks or workers.
MAX_OPEN_PER_SOURCE = 1024
# A copy indented as a whole (a paste under a Markdown list, cargo's "--- stderr" of a build script) is read
# with the indent taken off: at most this many blanks, first seen before a record head (see _unshift)
MAX_SHIFT = 4
_SHAPES = {mode: Dispatch([(t[0], t[1]) for t in R.TOKENS if t[0] in names]) for mode, names in R.MODE_SHAPES.items()}
_ORDER = R.TOKEN_ORDER
_RECORDS = Dispatch([(n, p) for n, p, lit in R.RECORDS if lit is None], "r_")
_MODES = R.MODES
_STARTS = R.STARTS
_HEAD_STARTS = R.HEAD_STARTS
_DEPTH_MODES = frozenset(m for m, spec in R.MODES.items() if spec.get("depth"))
_NOTHING: dict = {}
_END = ("end", None)
_WEAK = frozenset(("cont", "tent", "deeper", "announce", "expect", "wrap", "after_colon", "list_colon", "own",
                   "src_above", "exc_next", "loud", "under_exc"))
_KEEPS = frozenset(("cont", "cont!", "last"))
_STRONG = frozenset(("cont!", "last"))
_SPACED = R.SPACED_AFTER - 1
_TEXT = frozenset(("text", "indent"))
_BARE = R.BARE_TOKENS
_WRAP_MIN = R.WRAP_MIN_WIDTH
_SOFT = R.SOFT_STARTS
# single-line modes a line of another key ends: their continuation comes at once or not at all
_SWITCH_CLOSES = frozenset(("plain", "record", "record_native", "record_exc", "record_tent"))
# and the modes of output one call writes whole (a framed table, a box): a line of another writer
# before its end says the lines held so far were not one write
_WRITER_CLOSES = _SWITCH_CLOSES | frozenset(m for m, spec in _MODES.items() if spec.get("one_write"))
# tokens a single-line mode keeps even when the line has a head of its own
_STRONG_SINGLE = frozenset(tok for m in _SWITCH_CLOSES for tok, (act, _n) in _MODES[m]["on"].items()
                           if act in ("cont!", "last"))
# what a header with an empty message becomes once its first line arrives, if nothing more specific: a
# message line of its own is the record's message (lines below it are held until a stack confirms them,
# as after any record), unless it ends with ':' or is indented (a field list: the lines below are its body)
_AWAIT_PLAIN = {"plain": "record", "record": "body"}

# old mode names of saved states (before the per-printer modes), mapped on restore; the older "table" mode
# is split by the state's "close" character, "panic" by the block's kind (rust_panic, or any other)
OLD_MODES = {"python": "py_msg_more", "cpp": "c10_msg", "sanitizer": "cs_report", "done": "plain"}
OLD_TABLE_MODES = {"=": "table_eq", "-": "table_dash", "*": "table_star"}
OLD_PANIC_MODES = ("rust_panic", "go_stack")


def _loop_record(ob: _Open, body: str) -> bool:
    """Whether a line under the same repeated head is the open one-line record again with other numbers
    (a loop logging one record per item in the same tick, rules.LOOP_RECORD_NUMBER_RE), not its next line."""
    if len(ob.block.texts) != 1 or body[:1] in " \t" or not R.LOOP_RECORD_NUMBER_RE.search(body):
        return False
    sub = R.LOOP_RECORD_NUMBER_RE.sub
    return sub("0", body.rstrip()) == sub("0", ob.last_body.rstrip())


class _Open:
    """An open block and the merger's state about it."""

    __slots__ = ("block", "cindent", "depth", "every", "head0", "held", "held_bytes", "indent0", "last_body", "mode",
                 "rhead", "side_run", "spaced", "tent", "tent_bytes", "wrap_tent")

    def __init__(self, block: Block, mode: str, indent0: int = 0, head0: str = "", rhead: str | None = None,
                 last_body: str = "") -> None:
        self.block = block
        self.mode = mode
        self.indent0 = indent0
        self.head0 = head0  # the first line's record head ("" when none): announces a stack by its level
        self.rhead = rhead  # the last line's head when its formatter repeats it on every line of a record
        self.last_body = last_body
        # blank lines since the last line: (line, offset, arrival ms, visible: a prefix with nothing after it)
        self.held: list[tuple[RawLine, int, int, bool]] = []
        self.held_bytes = 0
        self.tent: list[tuple[RawLine, int, int]] = []  # lines held until the grammar confirms them
        self.tent_bytes = 0
        self.side_run = 0
        self.depth = 0
        self.every = False  # the last line's head is one its formatter writes on every line of a record
        # lines in a row (of this writer, also across the blocks before) that came with one blank line
        # between them: a copy or a relay that doubles every newline
        self.spaced = 0
        self.cindent = ""  # the indent its first line's formatter writes before each further line (CONT_INDENT)
        self.wrap_tent = False  # the lines held are the rest of a line a terminal cut (see MultilineMerger._wraps)

    def to_dict(self) -> dict[str, Any]:
        """JSON-able state (the assemble worker saves it with its offsets)."""
        return {"block": saved(self.block), "mode": self.mode, "indent0": self.indent0,
                "head0": self.head0, "rhead": self.rhead, "last_body": self.last_body, "depth": self.depth,
                "side_run": self.side_run, "every": self.every, "spaced": self.spaced, "cindent": self.cindent,
                "wrap_tent": self.wrap_tent,
                "held": [[saved(rl), o, ms, v] for rl, o, ms, v in self.held],
                "tent": [[saved(rl), o, ms] for rl, o, ms in self.tent]}

    @classmethod
    def from_dict(cls, d: dict[str, Any]) -> _Open:
        block = Block(**d["block"])
        mode = d["mode"]
        if mode not in _MODES:  # a state saved by an older version
            mode = OLD_MODES.get(mode, "plain")
            if d.get("mode") == "table":
                mode = OLD_TABLE_MODES.get(d.get("close", ""), "plain")
            elif d.get("mode") == "panic":
                mode = OLD_PANIC_MODES[0] if block.kind == "rust_panic" else OLD_PANIC_MODES[1]
        ob = cls(block, mode, d.get("indent0", 0), d.get("head0", ""), d.get("rhead"), d.get("last_body", ""))
        ob.depth = d.get("depth", 0)
        ob.side_run = d.get("side_run", 0)
        ob.every = d.get("every", False)
        ob.spaced = d.get("spaced", 0)
        ob.cindent = d.get("cindent", "")
        ob.wrap_tent = d.get("wrap_tent", False)
        for rl, o, ms, v in d.get("held", ()):
            ob.held.append((RawLine(**rl), o, ms, v))
        for t, o, fo in d.get("pending", ()):  # older states held blank texts only
            ob.held.append((RawLine(t, fo), o, block.last_ts_ms, bool(t.strip())))
        for rl, o, ms in d.get("tent", ()):
            ob.tent.append((RawLine(**rl), o, ms))
        ob.held_bytes = sum(utf8_len(rl.text) + 1 for rl, *_r in ob.held)
        ob.tent_bytes = sum(utf8_len(rl.text) + 1 for rl, *_r in ob.tent)
        return ob


def _table_row(opened: dict[str, _Open], text: str,
               split: tuple[str, str, int | None, str | None]) -> tuple[str, str, int | None, str | None]:
    """``split`` (the line's prefixes and body), or the line read without docker compose's "name  | " prefix
    when an open block of the stream it would then belong to is a table whose own shapes read the rest
    whole (``rules.MODES`` "rows"): a relay writes its prefix on every line of a process, so a row right
    under that table's unprefixed lines is the table's, its padded first column and " | " no prefix."""
    if not any(_MODES[ob.mode].get("rows") for ob in opened.values()):
        return split
    for n in range(_MAX_PREFIXES - 1, -1, -1):  # the prefixes before the one the row's first column reads as
        alt = split_prefix(text, None, n)
        if alt == split:
            continue
        ob = opened.get(alt[0])
        if ob is not None and _MODES[ob.mode].get("rows") and alt[1]:
            shapes = _SHAPES[ob.mode]
            m = shapes.table.get(alt[1][0], shapes.other)(alt[1])
            if m is not None and m.lastgroup in _MODES[ob.mode]["on"]:
                return alt
    return split


def terminal_text(text: str) -> str:
    """``text`` as a terminal shows it: colours and cursor moves are no part of the grammar (the event
    keeps them), and a line of nothing else is a blank line."""
    if "\x1b" in text:
        text = R.ANSI_RE.sub("", text)
    # (also after real escapes: a relay's copied colours before a printer's own)
    return R.BARE_SGR_RE.sub("", text) if "[0m" in text else text


def _untick(text: str) -> str:
    """``text`` without the backticks a paste glued before a record head or a report's first line
    (``rules.GLUED_TICKS_RE``)."""
    m = R.GLUED_TICKS_RE.match(text)
    if m is None or text.count("`") % 2 == 0:
        return text
    rest = text[m.end():]
    headed = rest[:1] in _HEAD_FIRST and _HEAD_TABLE[rest[0]](rest) is not None
    return rest if headed or R.COLUMN0_STARTS_RE.match(rest) else text


def unlead(text: str) -> str:
    """``text`` without the blank a copy put before a writer's bracketed prefix (``rules.BLANK_LED_PREFIX_FIRST``)."""
    if text[1:2] in R.BLANK_LED_PREFIX_FIRST and text[2:3] != " ":
        led = _PFX_TABLE.get(text[1], _PFX_OTHER)(text[1:])
        if led is not None and R.PREFIX_KEY.get(led.lastgroup or "") in ("all", "k"):
            return text[1:]
    return text


def split_prefix(text: str, m: re.Match[str] | None = None,  # noqa: PLR0912 - one pass over a line's prefixes
                 most: int = 4) -> tuple[str, str, int | None, str | None]:
    """(key, body, rank, relay): the stream prefixes' stable part, the rest of the line (a relay's
    escapes undone), the rank they name, and the prefix of a relay that makes each line a record
    (the kernel's lines through syslog, printk) if any.
    ``m``: the first prefix's match when the caller has it already; ``most``: how many prefixes to take."""
    key = ""
    rank = None
    relay = None
    escaped = False
    if m is None and text[:1] == " ":
        text = unlead(text)
    body = text
    for _ in range(most):
        if not body:
            break
        if m is None:
            c = body[0]
            m = _PFX_TABLE.get(c, _PFX_OTHER)(body) if c in _PFX_FIRST or c > "\x7f" else None
        if m is None:
            for gate, match in _PFX_GATED:
                if gate in body:
                    m = match(body)
                    if m is not None:
                        break
            if m is None:
                break
        g = m.lastgroup or ""
        if (g in R.LINE_START_PREFIXES and body is not text) or (
                g in R.PREFIX_NOT_BEFORE and R.PREFIX_NOT_BEFORE[g].match(body, m.end())):
            break
        how = R.PREFIX_KEY.get(g)
        rest = body[m.end():]
        if how == "splice":
            if not rest or (rest[0] not in R.SPLICE_NEXT and not R.SPLICE_REST_RE.match(rest)):
                break  # a progress bar alone, or followed by more bars, is a line of its own
        elif how == "all":
            part = m.group(g).strip()
            key = key + "|" + part if key else part
            if rank is None and ("rank" in part or "default" in part):
                rm = R.RANK_RE.search(part)
                # (digits past a long name no rank, and int() refuses past 4,300 of them: "[rank999...9]:")
                rank = int(rm.group(1)) if rm and len(rm.group(1)) <= 19 else None
        elif how == "k":
            part = m.group("k_" + g[2:]).strip()
            if part in R.NOT_SYSLOG_WRITERS:  # a relay's time before "Caused by: ..."
                body = body[m.start("k_" + g[2:]):]
                m = None
                continue
            key = key + "|" + part if key else part
        if g in R.RELAY_RECORDS:
            escaped = True
            if how != "k" or R.RELAY_RECORD_WRITERS_RE.match(part):
                relay = body[:m.end()]
        body = rest
        m = None
    if escaped and "#" in body:
        for esc, char in R.RELAY_ESCAPES:
            body = body.replace(esc, char)
    return key, body, rank, relay


def split_head(body: str) -> tuple[str | None, str | None, bool, str]:
    """(head, repeated head, every line, body): the record heads before the message (a relay's head,
    then the program's own), the innermost one again when its formatter repeats it per line, whether
    that formatter writes it on every line of a record, and the rest."""
    head, rhead, every, _name, body = _split_head(body, None)
    return head, rhead, every, body


def _split_head(body: str, m: re.Match[str] | None) -> tuple[str | None, str | None, bool, str, str]:
    """``split_head``, and the innermost head's name; ``m``: the first head's match when the caller has it."""
    head = None
    rhead = None
    every = False
    name = ""
    for _ in range(2):
        if m is None:
            if not body or body[0] not in _HEAD_FIRST:
                break
            m = _HEAD_TABLE[body[0]](body)
            if m is None:
                break
        end = m.end()
        h = body[:end]
        head = head + h if head else h
        name = m.lastgroup or ""
        rhead = h.rstrip() if R.HEAD_REPEATS.get(name) else None
        every = name in R.EVERY_LINE
        body = body[end:]
        m = None
    return head, rhead, every, name, body


def _token(body: str) -> str:
    m = _TOKEN_TABLE.get(body[0], _TOKEN_OTHER)(body)
    tok = m.lastgroup if m is not None else None
    for gate, order, name, match in _TOKEN_GATED:
        if gate in body and (tok is None or order < _ORDER[tok]) and match(body):
            tok = name
            break
    if tok is not None:
        return tok
    return "indent" if body[0] in " \t" else "text"


def _is_record(s: str) -> bool:
    """Whether a line without a head is a record of its own (``rules.RECORDS``)."""
    if s and _RECORDS.table.get(s[0], _RECORDS.other)(s) is not None:
        return True
    return any(lit in s and rx.match(s) for lit, rx in R.RECORD_GATED)


def _width(text: str) -> int:
    """The columns a line took on a terminal: its characters, less colour codes and trailing blanks."""
    if "\x1b" in text:
        text = terminal_text(text)
    return len(text.rstrip())


def _spliced(text: str) -> bool:
    """Whether a record's head starts a few characters into ``text``: a stray write spliced before a record."""
    for i in range(1, min(len(text), 16)):
        c = text[i]
        if c in _HEAD_FIRST and _HEAD_TABLE[c](text[i:]) is not None:
            return True
    return False


def _aligned(a: str, b: str) -> bool:
    """Whether two lines have a gap of two blanks or more at the same column (a table's, a console's columns)."""
    for i in range(1, min(len(a), len(b)) - 1):
        if a[i] == " " and a[i + 1] == " " and b[i] == " " and b[i + 1] == " " and a[i - 1] != " ":
            return True
    return False


def _indent(body: str) -> int:
    return len(body) - len(body.lstrip(" \t"))


def _start_mode(tok: str, body: str, head: str | None, hname: str = "") -> tuple[str, str | None]:  # noqa: PLR0911 - the starts in the order they are decided
    """The mode (and multiline kind) of a block whose first line is this one (``hname``: the name of
    its innermost record head)."""
    start = _STARTS.get(tok)
    if start is not None:
        return start
    if hname:
        start = _HEAD_STARTS.get(hname)
        if start is not None:
            return start
    last = body[-1:]
    if body[:1] == "{" and body.rstrip()[-1:] != "}" and _json_depth(body) > 0:
        return "json", "json_dump"  # a JSON record written over several lines (Elasticsearch's stacktrace array)
    if last in _ENDINGS:  # a line ending otherwise needs no more look (the common case)
        s = body.rstrip()
        last = s[-1:]
        if last in _SUFFIX_LASTS:
            for suffix, mode, kind in R.BODY_SUFFIX_STARTS:
                if s.endswith(suffix):
                    return mode, kind
        if last and last in R.JSON_OPEN:
            return "json", "json_dump"
    if head is not None:
        return ("body" if last == ":" else R.RECORD_MODES.get(hname, "record")), None
    return "plain", None


_ENDINGS = frozenset(" \t:" + R.JSON_OPEN) | {s[-1] for s, _m, _k in R.BODY_SUFFIX_STARTS}
_SUFFIX_LASTS = frozenset(s[-1] for s, _m, _k in R.BODY_SUFFIX_STARTS)


def _closes_brackets(first: str, rest: list[str]) -> bool:
    """Whether the pieces ``rest`` close the brackets ``first`` left open, the last ending on a closing one:
    a record whose fields are a JSON object (zap's console encoder, logrus' and klog's structured values) cut
    by a terminal is whole again once its braces balance, whatever line comes after it."""
    if not rest or rest[-1].rstrip()[-1:] not in ("}", "]"):
        return False
    opened = first.count("{") + first.count("[") - first.count("}") - first.count("]")
    text = "".join(rest)
    return opened > 0 and opened - text.count("}") - text.count("]") + text.count("{") + text.count("[") == 0


def _same_rule(first: str, body: str) -> bool:
    """Whether ``body`` is the rule a table opened with (``same_rule``): the same run of the same
    character; a titled rule ("=== test session starts ===") is closed by any bare rule."""
    rule = body.strip()
    top = first.rstrip()
    if not rule or top.strip().strip(rule[0]):
        return True
    return top.endswith(rule) and (len(top) == len(rule) or top[-len(rule) - 1] != rule[0])


def _json_depth(body: str) -> int:
    return body.count("{") + body.count("[") - body.count("}") - body.count("]")


def _cover(b: Block, offset: int) -> None:
    """Widen the block's raw offsets to a line it takes: whatever order lines come back in, an event's
    offsets cover every record it holds (what commits, re-drives and the fuzzer's check rely on)."""
    if offset > b.last_offset:
        b.last_offset = offset
    elif offset < b.first_offset:
        b.first_offset = offset


class MultilineMerger:
    """Per-source, per-key multiline merging; see the module docstring."""

    def __init__(self, max_lines: int = 1000, max_bytes: int = 512 * 1024, idle_timeout_ms: int = 5000,
                 max_open_per_source: int = MAX_OPEN_PER_SOURCE) -> None:
        self.max_lines = max_lines
        self.max_bytes = max_bytes
        self.idle_timeout_ms = idle_timeout_ms
        self.max_open_per_source = max_open_per_source
        self.evicted = 0  # blocks emitted early because their source held max_open_per_source (the worker resets it)
        self._src: dict[str, dict[str, _Open]] = {}
        self._last_key: dict[str, str] = {}
        # sources whose lines all come indented: (blanks, arrival of the last such line)
        self._shift: dict[str, tuple[int, int]] = {}
        # what a terminal's hard wraps say of a source: (its longest line so far, the width it was seen to
        # wrap at, 0 before the first wrap, whether one line alone is that long); see _wraps
        self._wide: dict[str, tuple[int, int, bool]] = {}
        # the mode whose block the lines being read again may not open (see _close); only set while they are
        self._no_open: str | None = None
        # No open block's last line arrived before this (a lower bound, exact after each scan of flush_idle): a
        # turn's end finds nothing quiet without looking at every block (a scan of 200,000 open blocks took 0.2 s)
        self._floor = -(1 << 62)
        # sources whose remembered widths or indent were forgotten by flush_idle: their saved state changes too
        self.forgotten: set[str] = set()

    # -- public API -------------------------------------------------------------------------
    def push(self, sid: str, line: RawLine, offset: int, arrival_ms: int) -> list[Block]:
        """Add one line of source ``sid`` read at Kafka ``offset``; return blocks that closed."""
        out: list[Block] = []
        self._feed(sid, line, offset, arrival_ms, out)
        text = line.text
        if len(text) >= _WRAP_MIN:  # (most lines are narrower than any terminal that cuts)
            # the widths a terminal's cuts are judged by (_wraps); a line read again after a close was counted
            n = _width(text)
            wide = self._wide.get(sid)
            if wide is None or n > wide[0]:
                if n >= _WRAP_MIN:
                    # the longest line so far: no terminal narrower than it wrote the source
                    self._wide[sid] = (n, 0, True)
            elif n == wide[0] and wide[2]:
                self._wide[sid] = (n, wide[1], False)  # (the longest line, no longer alone)
        return out

    def flush_idle(self, now_ms: int) -> list[Block]:
        """Emit every block whose last line arrived ``idle_timeout_ms`` or more before ``now_ms``."""
        out: list[Block] = []
        idle = self.idle_timeout_ms
        if now_ms < self._floor + idle:
            return out
        while True:
            due = []
            floor = 1 << 62
            for sid, opened in self._src.items():
                for key, ob in opened.items():
                    last = ob.block.last_ts_ms
                    if last + idle <= now_ms:
                        due.append((ob.block.first_offset, ob.block.first_index, sid, key))
                    elif last < floor:
                        floor = last
            if not due:
                self._floor = floor
                for sid in [s for s, (_n, ms) in self._shift.items()
                            if s not in self._src and ms + self.idle_timeout_ms <= now_ms]:
                    del self._shift[sid]  # (a source with nothing open costs no memory)
                    self.forgotten.add(sid)
                for sid in [s for s in self._wide if s not in self._src]:
                    del self._wide[sid]
                    self.forgotten.add(sid)
                return out
            due.sort()
            for _o, _i, sid, key in due:
                still = self._src.get(sid)
                if still is not None and key in still:
                    self._close(sid, still, key, out, final=True)

    def flush_source(self, sid: str) -> list[Block]:
        """Emit every open block of ``sid``, oldest first (its state grew too large to be saved)."""
        out: list[Block] = []
        while opened := self._src.get(sid):
            key = min(opened, key=lambda k: (opened[k].block.first_offset, opened[k].block.first_index))
            self._close(sid, opened, key, out, final=True)
        return out

    def flush_all(self) -> list[Block]:
        """Emit every open block (end of input, or before a planned shutdown)."""
        return self.flush_idle(1 << 62)

    def oldest_open_offset(self) -> int | None:
        """Kafka offset of the first line of the oldest open block, None when nothing is open."""
        best = None
        for opened in self._src.values():
            for ob in opened.values():
                o = ob.block.first_offset
                if best is None or o < best:
                    best = o
        return best

    def newest_ts(self) -> int:
        """The newest line time among the open blocks (0 when none): a restored merger's stream time."""
        return max((ob.block.last_ts_ms for opened in self._src.values() for ob in opened.values()), default=0)

    def source_state(self, sid: str) -> dict[str, Any]:
        """The merger's part of the state of ``sid`` (``streams/assemble/state.py`` writes it as JSON):
        its open blocks by prefix, the prefix it last wrote under, the indent a copy put before its lines."""
        return {"open": {k: ob.to_dict() for k, ob in self._src.get(sid, {}).items()},
                "last_key": self._last_key.get(sid), "shift": self._shift.get(sid), "wide": self._wide.get(sid)}

    def remembers(self, sid: str) -> bool:
        """Whether ``sid`` has widths or an indent remembered with nothing open: its lines to come are read by
        them, so they are saved with its state (a restart must read those lines as the running worker would)."""
        return sid in self._wide or sid in self._shift

    def restore_source(self, sid: str, doc: dict[str, Any]) -> None:
        """Put back the part of a state that :meth:`source_state` wrote (``doc``: the whole state)."""
        self._src[sid] = {k: _Open.from_dict(d) for k, d in doc["open"].items()}
        self._floor = -(1 << 62)  # (the restored blocks' times are read at the next flush)
        if doc.get("last_key") is not None:
            self._last_key[sid] = doc["last_key"]
        if doc.get("shift"):
            n, ms = doc["shift"]
            self._shift[sid] = (n, ms)
        if doc.get("wide"):
            longest, width, alone = doc["wide"]
            self._wide[sid] = (longest, width, alone)

    def open_count(self) -> int:
        return sum(len(o) for o in self._src.values())

    def source_count(self) -> int:
        """Sources with something open (a source with nothing open costs no memory)."""
        return len(self._src)

    def drop_source(self, sid: str) -> list[Block]:
        """Forget everything of ``sid`` and return its open blocks (with the lines they held back), oldest
        first: what the caller dead-letters when handling a line of the source failed halfway."""
        opened = self._src.pop(sid, {})
        self._last_key.pop(sid, None)
        self._shift.pop(sid, None)
        self._wide.pop(sid, None)
        out = []
        for ob in opened.values():
            b = ob.block
            b.texts += [t[0].text for t in ob.tent] + [h[0].text for h in ob.held]
            out.append(b)
        return sorted(out, key=lambda b: (b.first_offset, b.first_index))

    # -- one line -----------------------------------------------------------------------------
    def _wraps(self, sid: str, key: str, ob: _Open, text: str, prev: str, relayed: bool = False) -> bool:
        """Whether ``text`` (no head, not a record) is the rest of ``prev``, the line before it, which a terminal
        or a fixed-width console cut at its width. Both come without a stream prefix (a relay's prefix on each
        line says its writer wrote them apart). ``prev`` is as long as the longest line of the source so far (no
        line is wider than the terminal), at least ``rules.WRAP_MIN_WIDTH``, and ``text`` is not longer (it is
        the rest, or the next width of it). Either the source was seen to wrap at that width before, or
        ``prev`` is a record's first line, longer than every line before it, cut inside a word (a terminal
        cuts at a column, not between words). A table's rows and a console's columns (Rich's) are as wide as
        each other on purpose: lines with a gap of blanks at the same column are not a cut line's pieces."""
        wide = self._wide.get(sid)
        if wide is None or (key and not relayed) or ob.held or self._last_key.get(sid) != key:
            return False
        if "\x1b" in prev:
            prev = terminal_text(prev)
        n = len(prev.rstrip())
        if n != wide[0] or _width(text) > n or _aligned(prev, text):
            return False
        # (a blank at the end is a cut between words, which a line that simply ended has too; a capital after
        # it starts a sentence of its own more often than it goes on a word: after one blank that closes a word,
        # a lower-case word is the sentence going on)
        # (behind a relay's prefix, rules.WRAP_AT_BLANK: the cut fell on the blank before a word)
        first = text[1:2] if relayed and R.WRAP_AT_BLANK_RE.match(text) else text[:1]
        cut = prev[-1:].isalnum() or (prev[-1:] == " " and prev[-2:-1].isalnum())
        if wide[1] != n and (not (ob.head0 and len(ob.block.texts) == 1 and wide[2] and cut
                                  and (first.islower() or first.isdigit())) or _spliced(text)):
            return False
        if _is_record(text):
            return False
        self._wide[sid] = (n, n, False)
        return True

    def _feed(self, sid: str, line: RawLine, offset: int, ms: int, out: list[Block]) -> None:  # noqa: PLR0911, PLR0912, PLR0915 - the per-line hot path: one pass over the layers of a line
        self._floor = min(self._floor, ms)
        text = line.text
        if "\x1b" in text or "[0m" in text:
            text = terminal_text(text)
        if text[:1] == "`":
            text = _untick(text)
        if text[:1] == " " or sid in self._shift:
            text = self._unshift(sid, text, ms)
            if text[:1] == " ":
                text = unlead(text)
        c = text[:1]
        pm = _PFX_TABLE.get(c, _PFX_OTHER)(text) if c and (c in _PFX_FIRST or c > "\x7f") else None
        if pm is None:  # most lines have no stream prefix: one try, and a look for the gated ones' literal
            for gate, match in _PFX_GATED:
                if gate in text:
                    pm = match(text)
                    if pm is not None:
                        break
        if pm is not None:
            key, body, rank, head = split_prefix(text, pm)
            if key[-1:] == "\u2502" and (len(key) == 1 or key[-2:-1] == "|"):
                # the open box's own bar (pip's "  │ exit code: 1" under "× ...", also behind a relay's prefix:
                # BuildKit's "#25 55.31   │ ..."), no child's gutter: the line is the box's, under the box's writer
                src = self._src.get(sid)
                own = src.get(key[:-2]) if src else None
                if own is not None and _MODES[own.mode].get("own_gutter"):
                    key, body = key[:-2], "\u2502 " + body
            if key and " | " in text and sid in self._src:  # (compose's separator: most lines have none)
                key, body, rank, head = _table_row(self._src[sid], text, (key, body, rank, head))
        else:
            key, body, rank, head = "", text, None, None
        rhead = None
        every = False
        hname = ""
        if body and body[0] in _HEAD_FIRST:
            hm = _HEAD_TABLE[body[0]](body)
            if hm is not None:
                h, rhead, every, hname, body = _split_head(body, hm)
                if h is not None:
                    head = head + h if head else h
        raw = body
        if body[-1:] in (" ", "\t"):
            # blanks a copy or an editor left at the end say nothing; a printer's "label: " whose value
            # is on the next line ("...: UserWarning: " before a message that starts with a newline) keeps one
            body = body.rstrip()
            if body[-1:] == ":":
                body += " "
        opened = self._src.get(sid)
        if opened is None:  # (not `or`: a source's dict may be empty between closing a block and the next)
            opened = {}  # stored when a block opens: a source with nothing open is not kept
        if head is None and raw[:1] == " " and opened:
            ob = opened.get(key)
            if ob is not None and ob.cindent and raw.startswith(ob.cindent):
                # a further line of a record whose formatter indents every such line (CONT_INDENT)
                self._append(sid, opened, key, ob, "cont!", None, line, offset, ms, body, None, out)
                self._last_key[sid] = key
                return
        if not body or body.isspace():
            if head is None:
                # (a prefix with nothing after it is a writer's empty line, kept with its event; a time stamp
                # alone, a relay's on an empty line, is a blank line: the stamp is not the writer's)
                self._hold_blank(sid, opened, key, line, offset, ms, bool(key) and bool(text.strip()), out)
                return
            ob = opened.get(key)
            if ob is not None and rhead is not None and rhead == ob.rhead:
                self._hold(sid, opened, key, ob, line, offset, ms, True, out)  # the record's own empty line
                return
            tok = "empty_head"  # a header whose message is on the next line
            body = ""
        else:
            tok = _token(body)
        last = self._last_key.get(sid)
        if key == "" and head is None and last:
            other = opened.get(last)
            if other is not None and _MODES[other.mode].get("cross"):
                act, nxt = self._decide(other, tok, body, None, None)
                if act in _KEEPS:
                    self._append(sid, opened, last, other, act, nxt, line, offset, ms, body, None, out)
                    return
            if (other is not None and not other.tent and tok not in _STARTS and text.startswith(body)
                    and self._wraps(sid, last, other, body, other.block.texts[-1], relayed=True)):
                # the rest of a relayed line a terminal cut at its width: the relay's prefix is on the line it
                # wrote, not on the rest the terminal put below it (held until the next line opens a record)
                self._append(sid, opened, last, other, "tent", None, line, offset, ms, body, None, out)
                other.wrap_tent = True
                return
        if last is not None and last != key:
            # (a record whose formatter writes its head on every line, vLLM's, goes on under that head: the
            # head says which lines are its own, so another writer's lines between them do not end it)
            for k in [k for k, o in opened.items() if k != key and o.mode in _WRITER_CLOSES
                      and not (o.mode == "plain" and o.last_body.endswith(R.ANNOUNCE_ENDINGS))
                      and not (o.rhead and o.mode in _SWITCH_CLOSES)]:
                o = opened[k]
                alone = _MODES[o.mode].get("writer_alone")
                if alone is not None and not o.held and len(o.block.texts) == 1:
                    # (its first line alone so far: a write of its own, which some printers' next write goes on)
                    o.mode = alone
                    continue
                self._close(sid, opened, k, out)
            still = self._src.get(sid)
            if still is not None:
                opened = still
        spaced = 0
        while True:
            ob = opened.get(key)
            if ob is None:
                break
            if ob.wrap_tent:
                if head is not None or tok in _STARTS or (body and _is_record(body)):
                    ob.wrap_tent = False  # the line after the rest opens a record: the cut line was whole
                    self._keep_tent(ob)
                elif not ob.held and text.startswith(body) and self._wraps(sid, key, ob, body, ob.tent[-1][0].text):
                    self._append(sid, opened, key, ob, "tent", None, line, offset, ms, body, None, out)
                    self._last_key[sid] = key
                    return  # (its next width)
                elif _closes_brackets(ob.block.texts[-1], [t[0].text for t in ob.tent]):
                    ob.wrap_tent = False  # the pieces close what the cut line opened: they were its rest
                    self._keep_tent(ob)
                    self._close(sid, opened, key, out, False)
                    opened = self._src.get(sid) or opened
                    continue
                else:
                    # a line the record does not take: what was held was not the rest of a cut line
                    ob.wrap_tent = False
                    wide = self._wide.get(sid)
                    if wide is not None:
                        self._wide[sid] = (wide[0], 0, wide[2])
                    self._close(sid, opened, key, out, False)
                    opened = self._src.get(sid) or opened
                    continue
            if head is not None and rhead is None and not ob.held and ob.mode in _SWITCH_CLOSES and (
                    tok not in _STRONG_SINGLE):
                # the common case: a new record after a single-line one (what _decide would answer;
                # what _close does when nothing is held)
                if not ob.tent:
                    del opened[key]
                    out.append(ob.block)
                    break
                if not self._holds_heads(ob):
                    self._close(sid, opened, key, out, False)
                    opened = self._src.get(sid) or opened
                    continue
            act, nxt = self._decide(ob, tok, body, head, rhead)
            if (act in ("end", "tent") and head is None and tok not in _STARTS and not ob.tent and text.startswith(body)
                    and self._wraps(sid, key, ob, body, ob.block.texts[-1])):
                # the rest of a line a terminal cut at its width: held until the next line opens a record
                self._append(sid, opened, key, ob, "tent", None, line, offset, ms, body, None, out)
                ob.wrap_tent = True
                self._last_key[sid] = key
                return
            if act == "confirm":
                self._keep_tent(ob)
                act = "end"
            if act == "end":
                spaced = ob.spaced + 1 if len(ob.held) == 1 else 0
                # NCCL writes a WARN as "\n<header> NCCL WARN": a held prefix-only line goes with it
                lead = ob.held if ob.held and ob.held[-1][3] and R.LEADING_BLANK_RE.match(body) else None
                if lead:
                    ob.held = []
                    ob.held_bytes = 0
                self._close(sid, opened, key, out, False)
                # The lines it held back were read again: a block they closed may have let the source go
                # and a later one opened it afresh, so the source's blocks are looked up again.
                opened = self._src.get(sid) or opened
                if lead:
                    first_line, first_offset, first_ms, _v = lead[0]
                    self._start(sid, opened, key, first_line, first_offset, first_ms, "", "empty_prefix", None, None,
                                None, out)
                    for held_line, held_offset, held_ms, held_v in lead[1:]:
                        self._hold(sid, opened, key, opened[key], held_line, held_offset, held_ms, held_v, out)
                continue
            if act == "side":
                ob.side_run += 1
                out.append(self._single(sid, line, offset, ms, key))
                self._last_key[sid] = key
                return
            self._append(sid, opened, key, ob, act, nxt, line, offset, ms, body, rhead, out)
            if act != "tent":
                ob.every = every
            self._last_key[sid] = key
            return
        if len(opened) >= self.max_open_per_source:
            opened = self._evict(sid, opened, out)
        self._last_key[sid] = key
        self._start(sid, opened, key, line, offset, ms, body, tok, head, rhead, rank, out, hname)
        if every:
            opened[key].every = True
        if spaced:
            opened[key].spaced = spaced

    def _evict(self, sid: str, opened: dict[str, _Open], out: list[Block]) -> dict[str, _Open]:
        """Emit the source's blocks written to longest ago until it holds fewer than ``max_open_per_source``;
        returns the source's blocks as they are then (lines a block held back are read again)."""
        while len(opened) >= self.max_open_per_source:
            key = min(opened, key=lambda k: (opened[k].block.last_offset, opened[k].block.first_index))
            self._close(sid, opened, key, out, False, final=True)
            self.evicted += 1
            opened = self._src.get(sid) or opened
        return opened

    def _unshift(self, sid: str, text: str, ms: int) -> str:
        """``text`` without the indent a copy put before every line of the source. The indent is taken as
        the copy's once a line indented by at most ``MAX_SHIFT`` blanks starts with a record head (a
        program's record is written at column 0, unless its formatter indents it) while every block the
        source has open came indented as far; it is the copy's until a line that is not blank comes with less.
        A report's first line that its printer writes at column 0 (``rules.COLUMN0_STARTS_RE``) says so too."""
        n = self._shift.get(sid, (0, 0))[0]
        if n:
            if text[:n] == " " * n:
                self._shift[sid] = (n, ms)
                return text[n:]
            if text.strip():
                del self._shift[sid]
            return text
        rest = text.lstrip(" ")
        n = len(text) - len(rest)
        headed = rest[:1] in _HEAD_FIRST and _HEAD_TABLE[rest[0]](rest) is not None
        if n > MAX_SHIFT or not rest or not (headed or R.COLUMN0_STARTS_RE.match(rest)):
            return text
        if " " in _HEAD_FIRST and _HEAD_TABLE[" "](text) is not None:
            return text  # a formatter that writes its head indented (tracing's Pretty, Rich without its time)
        opened = self._src.get(sid)
        if opened and not all(ob.block.texts[0][:n] == text[:n] for ob in opened.values()):
            return text
        self._shift[sid] = (n, ms)
        return rest

    def _decide(self, ob: _Open, tok: str, body: str, head: str | None, rhead: str | None) -> tuple[str, str | None]:  # noqa: PLR0911, PLR0912, PLR0915 - one flat dispatch over the actions of rules.MODES
        spec = _MODES[ob.mode]
        shapes = _SHAPES.get(ob.mode)
        if shapes is not None and body:
            m = shapes.table.get(body[0], shapes.other)(body)
            shape = m.lastgroup if m is not None else None
            # (a soft start is text to a mode that does not name it: the mode's own shapes come first)
            if shape is not None and (tok in _TEXT or _ORDER[shape] < _ORDER[tok]
                                      or (tok in _SOFT and tok not in spec["on"])):
                tok = shape
        if ob.mode == "lead":
            return ("cont!", _STARTS.get(tok, ("record", None))[0]) if R.LEADING_BLANK_RE.match(body) else _END
        if ob.mode == "await":  # (a record of its own is not the message: the head's message was empty)
            if (rhead is None or rhead != ob.rhead) if head is not None else _is_record(body.lstrip()):
                return _END
            mode, _kind = _start_mode(tok, body, head)
            if mode == "plain" and (body[:1] in " \t" or body.rstrip().endswith(":")):
                return "cont!", "body"  # the message's first line introduces the lines below it, or is a field of it
            return "cont!", _AWAIT_PLAIN.get(mode, mode)
        if tok == "text" and spec.get("prose_ends") and R.PROSE_RE.search(body):
            return _END  # (a person's words right under a pasted message: no runtime writes "I" or "my" of itself)
        table = spec["on"]
        entry = None
        headed = spec.get("headed")
        if headed is not None and not ob.held and (head is None or headed.search(head) is None):
            return _END  # (the lines a message quotes from a log file come with their heads)
        if ob.held:
            after = spec.get("after_blank")
            if len(ob.held) == 1 and ob.spaced >= _SPACED:  # the blank line of a source that doubles newlines
                if after is not None and after != "on":
                    entry = after.get(tok)
            else:
                table = _NOTHING if after is None else table if after == "on" else after
        if entry is None:
            entry = table.get(tok)
        if entry is None:
            entry = spec.get("any")
            if entry is not None and not body.startswith(spec.get("any_lead", "")):
                entry = None  # (its printer writes every line it takes behind this lead)
            if entry is not None and ob.block.nbytes >= spec.get("any_max_bytes", self.max_bytes):
                return _END  # free text past its printer's own cap: the block was cut
        if entry is None:
            if (tok in _STARTS and tok not in R.SOFT_STARTS) or tok == "empty_head":
                entry = _END
            else:
                entry = table.get("indent" if body[:1] in (" ", "\t") else "text", _END)
        act, nxt = entry
        if rhead is not None and rhead == ob.rhead and body != ob.last_body and not _loop_record(ob, body):
            # the same head repeated: the formatter wrote these lines as one record (the same line
            # twice is two records written in the same second)
            if act not in _KEEPS:
                if act == "end" and tok in _STARTS:
                    nxt = _STARTS[tok][0]
                elif act != "announce":
                    nxt = None
                act = "cont!"
            return act, nxt
        if head is not None:
            if act == "tent" and self._holds_heads(ob):
                pass  # a held message that announced its next line: held too, frames must still confirm it
            elif (act not in _STRONG and act != "side") or (rhead is not None and rhead == ob.rhead) or tok in _BARE:
                return _END  # a new record
        elif (act in _WEAK or tok in _BARE) and (ob.every or _is_record(body.lstrip())):
            return _END  # (an exception line is written bare: "ERROR: ...", "srun: error: ..." are records)
        if act == "deeper":
            return ("cont", nxt) if _indent(body) > ob.indent0 else _END
        if act == "deeper!":  # (what a printer indents under its block, whatever it holds: pip's context)
            return ("cont!", nxt) if _indent(body) > ob.indent0 else _END
        if act == "after_colon":
            return ("cont", nxt) if ob.last_body.rstrip().endswith(":") else _END
        if act == "exc_next":  # (an exception line whose message goes on below it: R.EXC_CAUSE_NEXT_RE)
            return ("cont", nxt) if len(ob.block.texts) == 1 and R.EXC_CAUSE_NEXT_RE.search(ob.last_body) else _END
        if act == "under_exc":  # (a line its printer writes right under an exception line: R.EXC_LINE_RE)
            return ("cont!", nxt) if len(ob.block.texts) == 1 and R.EXC_LINE_RE.match(ob.last_body) else _END
        if act == "list_colon":  # (a "- " line is an item itself, or a record: BGL's alert flag)
            last = ob.last_body.lstrip()
            return ("cont", nxt) if last.rstrip().endswith(":") and not last.startswith("- ") else _END
        if act == "src_above":
            if len(ob.block.texts) == 1 and not ob.head0 and ob.indent0 > _indent(body):
                return "cont!", nxt
            act = "announce"
        if act == "announce":
            return ("cont!", nxt) if self._announces(ob) else _END
        if act == "own":
            return _END if _is_record(ob.last_body.lstrip()) else ("cont!", nxt)
        if act == "loud":  # (what only a record above a quiet level carries)
            return _END if self._quiet(ob) and not self._announces(ob) else ("tent", nxt)
        if act == "expect":
            if self._announces(ob):
                return "cont!", nxt
            if self._quiet(ob):
                return _END
            act, nxt = "tent", "record_exc"
        if act in _STRONG and spec.get("quiet_ends") and self._quiet(ob) and not self._announces(ob):
            return _END  # the held lines are not this quiet record's: they are read again
        if act == "wrap":
            return _END if ob.block.texts[-1].rstrip().endswith(spec["wrap_end"]) else ("cont", nxt)
        if act == "last" and spec.get("same_rule") and not _same_rule(ob.block.texts[0], body):
            return _END  # another printer's rule: the rows held are read again on their own
        if act == "tent" and len(ob.tent) >= spec.get("max_tent", 12):
            return _END
        if act == "side" and ob.side_run >= spec.get("max_side", 0):
            return _END
        return act, nxt

    @staticmethod
    def _holds_heads(ob: _Open) -> bool:
        """Whether the block holds a line with a record head of its own too (``tent_heads``): the held
        line before it ends with ':', a message that announced it goes on."""
        if not _MODES[ob.mode].get("tent_heads"):
            return False
        return (ob.tent[-1][0].text if ob.tent else ob.block.texts[-1]).rstrip().endswith(":")

    @staticmethod
    def _announces(ob: _Open) -> bool:
        """Whether the block's line(s) announce the stack that follows (logger.exception and kin)."""
        if len(ob.block.texts) > 3:
            return False
        if R.NO_EXC_BODY_RE.search(ob.last_body):
            return False
        if not ob.head0 and R.PROSE_RE.search(ob.block.texts[0]):
            return False  # (a person's prose above a paste)
        if ob.head0 and R.ANNOUNCE_HEAD_RE.search(ob.head0):
            return True
        return R.ANNOUNCE_BODY_RE.search(ob.last_body) is not None

    @staticmethod
    def _quiet(ob: _Open) -> bool:
        """Whether the block is a record at a quiet level whose message does not speak of a failure
        (``rules.QUIET_HEAD_RE``, ``rules.QUIET_ANNOUNCE_RE``)."""
        return (bool(ob.head0) and R.QUIET_HEAD_RE.search(ob.head0) is not None
                and R.QUIET_ANNOUNCE_RE.search(ob.last_body) is None)

    # -- changing blocks ------------------------------------------------------------------------
    def _start(self, sid: str, opened: dict[str, _Open], key: str, line: RawLine, offset: int, ms: int, body: str,
               tok: str, head: str | None, rhead: str | None, rank: int | None, out: list[Block],
               hname: str = "") -> None:
        text = line.text
        self._floor = min(self._floor, ms)
        mode, kind = _start_mode(tok, body, head, hname)
        if mode == self._no_open:
            mode, kind = (R.RECORD_MODES.get(hname, "record") if head is not None else "plain"), None
        block = Block(sid, [text], offset, offset, line.index, line.file_offset, line.file_offset,
                      line.ts_ms if line.ts_ms is not None else ms, ms, line.source, line.labels, kind, False,
                      utf8_len(text), key, line.level, line.fields)
        if rank is not None and block.source.get("rank") is None:
            block.source = {**block.source, "rank": rank}
        ob = _Open(block, mode, _indent(body) if body[:1] in (" ", "\t") else 0, head or "", rhead, body)
        if hname in R.CONT_INDENT:
            ob.cindent = R.CONT_INDENT[hname]
        if mode in _DEPTH_MODES:
            ob.depth = _MODES[mode].get("depth0", 0) + _json_depth(body)
        opened[key] = ob
        self._src[sid] = opened

    def _append(self, sid: str, opened: dict[str, _Open], key: str, ob: _Open, act: str, nxt: str | None,  # noqa: PLR0912, PLR0915 - per-line hot path: plain positional call, flat branches
                line: RawLine, offset: int, ms: int, body: str, rhead: str | None, out: list[Block]) -> None:
        b = ob.block
        ob.spaced = ob.spaced + 1 if len(ob.held) == 1 else 0
        if act == "tent":
            if ob.held:
                ob.tent.extend((rl, o, m) for rl, o, m, _v in ob.held)
                ob.tent_bytes += ob.held_bytes
                ob.held.clear()
                ob.held_bytes = 0
            ob.tent.append((line, offset, ms))
            ob.tent_bytes += utf8_len(line.text) + 1
            b.last_ts_ms = ms
            if nxt is not None:
                ob.mode = nxt
            if len(b.texts) + len(ob.tent) >= self.max_lines or b.nbytes + ob.tent_bytes >= self.max_bytes:
                self._close(sid, opened, key, out)
            return
        texts = b.texts
        if ob.tent:
            for rl, _o, _m in ob.tent:
                texts.append(rl.text)
            b.nbytes += ob.tent_bytes
            ob.tent.clear()
            ob.tent_bytes = 0
        if ob.held:
            for rl, _o, _m, _v in ob.held:
                texts.append(rl.text)
            b.nbytes += ob.held_bytes
            ob.held.clear()
            ob.held_bytes = 0
        text = line.text
        texts.append(text)
        b.nbytes += utf8_len(text) + 1
        if offset >= b.last_offset:
            b.last_offset = offset
        elif offset < b.first_offset:  # a line read again after a close (tent) can be older: cover it
            b.first_offset = offset
        if line.file_offset is not None:
            b.last_file_offset = line.file_offset
        b.last_ts_ms = ms
        ob.last_body = body
        ob.side_run = 0
        if rhead is not None:
            ob.rhead = rhead
        mode = ob.mode
        if nxt is not None and nxt != mode:
            if _MODES[mode].get("head_line"):
                ob.head0 += body
            ob.mode = mode = nxt
            spec = _MODES[nxt]
            kind = spec.get("kind")
            if kind is not None and (b.kind is None or b.kind == "table" or spec.get("kind_override")):
                b.kind = kind
            if spec.get("blank_own"):
                ob.spaced = 0  # (the blank line before this line is its printer's: no sign of doubled newlines)
            if mode in _DEPTH_MODES:
                ob.depth = spec.get("depth0", 0)
        if mode in _DEPTH_MODES:
            ob.depth += _json_depth(body)
            if ob.depth <= 0:
                act = "last"
        if len(texts) >= self.max_lines or b.nbytes >= self.max_bytes:
            b.truncated = True
            self._close(sid, opened, key, out)
        elif act == "last":
            self._close(sid, opened, key, out)

    def _hold_blank(self, sid: str, opened: dict[str, _Open], key: str, line: RawLine, offset: int, ms: int,
                    visible: bool, out: list[Block]) -> None:
        """A blank line (or a prefix with nothing after it) waits beside the block it may belong to."""
        held_key = key
        ob = opened.get(key)
        if ob is None and key == "":
            held_key = self._last_key.get(sid) or ""
            ob = opened.get(held_key) if held_key else None
            if ob is not None and ob.mode == "plain":
                ob = None
        elif ob is None and visible:
            # an outer relay's prefix alone where the writer's lines carry a second prefix inside it (Ray's
            # "(RayTrainWorker pid=N)" around torch's "[rank1]: "): the inner one was not written on the empty
            # line, which is the empty line of the one block open under the outer prefix
            inner = [k for k in opened if k.startswith(key + "|")]
            if len(inner) == 1:
                held_key = inner[0]
                ob = opened[held_key]
        if ob is None:
            if visible:  # "(Worker pid=1)" alone: its next line may be the rest of the same write
                self._start(sid, opened, key, line, offset, ms, "", "empty_prefix", None, None, None, out)
                self._last_key[sid] = key
            return
        self._hold(sid, opened, held_key, ob, line, offset, ms, visible, out)

    def _hold(self, sid: str, opened: dict[str, _Open], key: str, ob: _Open, line: RawLine, offset: int, ms: int,
              visible: bool, out: list[Block]) -> None:
        """Held lines count towards the block's limits; reaching one ends the block without them."""
        self._floor = min(self._floor, ms)
        ob.held.append((line, offset, ms, visible))
        ob.held_bytes += utf8_len(line.text) + 1
        b = ob.block
        b.last_ts_ms = ms
        if (len(b.texts) + len(ob.tent) + len(ob.held) >= self.max_lines
                or b.nbytes + ob.tent_bytes + ob.held_bytes >= self.max_bytes):
            held, ob.held, ob.held_bytes = ob.held, [], 0
            self._close(sid, opened, key, out)
            for rl, o, m, v in held:
                if v:  # content (a prefix): never dropped, emitted on its own
                    out.append(self._single(sid, rl, o, m, key))

    def _close(self, sid: str, opened: dict[str, _Open], key: str, out: list[Block], prune: bool = True,
               final: bool = False) -> None:
        """Emit the block; lines still held tentatively are read again on their own. A source left
        with nothing open is forgotten (``prune``; not when the caller opens its next block at once).
        ``final``: the block is flushed, no line to come can confirm what it held."""
        ob = opened.pop(key)
        if ob.wrap_tent:  # (the source ended or went quiet after the rest of a cut line)
            self._keep_tent(ob)
        b = ob.block
        out.append(b)
        tent = ob.tent
        if ob.held:
            if tent:
                tent = tent + [(rl, o, m) for rl, o, m, _v in ob.held]
            elif len(b.texts) == 1 and ob.mode in _SWITCH_CLOSES and not R.PREFIX_ALONE_ENDS_RE.search(key):
                # after a line of its own, a writer's prefix alone is the writer's empty line: a line of its own
                out.extend(self._single(sid, rl, o, m, key) for rl, o, m, visible in ob.held if visible)
            else:
                for rl, o, _m, visible in ob.held:  # a trailing prefix-only line is the record's last line
                    if visible and len(b.texts) < self.max_lines:
                        b.texts.append(rl.text)
                        b.nbytes += utf8_len(rl.text) + 1
                        _cover(b, o)
                        if rl.file_offset is not None:
                            b.last_file_offset = rl.file_offset
        if tent and _MODES[ob.mode].get("ends_at_blank"):
            tent = self._keep_before_blank(b, tent)
        if tent:
            self._read_again(sid, tent, ob, final or len(ob.tent) >= _MODES[ob.mode].get("max_tent", 12), out)
        if prune and not opened and self._src.get(sid) is opened:
            del self._src[sid]
            self._last_key.pop(sid, None)

    def _read_again(self, sid: str, tent: list[tuple[RawLine, int, int]], ob: _Open, unconfirmed: bool,
                    out: list[Block]) -> None:
        """Read the lines a closed block held back again, on their own. Lines nothing will confirm (the block
        held as many as its mode holds, or it was flushed) open no block of that mode when read again: each
        would hold the others again, and a table's rows (each able to open a table whose top rule was cut)
        would be read once per row held."""
        outer = self._no_open
        if unconfirmed:
            self._no_open = ob.mode
        try:
            for rl, o, m in tent:
                self._feed(sid, rl, o, m, out)
        finally:
            self._no_open = outer

    @staticmethod
    def _keep_tent(ob: _Open) -> None:
        """The lines held tentatively are the block's (``confirm``); the blank lines held after them are not."""
        b = ob.block
        for rl, o, _m in ob.tent:
            b.texts.append(rl.text)
            b.nbytes += utf8_len(rl.text) + 1
            _cover(b, o)
            if rl.file_offset is not None:
                b.last_file_offset = rl.file_offset
        ob.tent.clear()
        ob.tent_bytes = 0

    def _keep_before_blank(self, b: Block, tent: list[tuple[RawLine, int, int]]) -> list[tuple[RawLine, int, int]]:
        """Held message lines that a blank line ended are the block's own (``ends_at_blank``); the rest
        is returned, to be read again. Without a blank line nothing ended the message: all is returned."""
        cut = next((i for i, (rl, _o, _m) in enumerate(tent) if not split_prefix(rl.text)[1].strip()), len(tent))
        if cut == len(tent):
            return tent
        cut = min(cut, self.max_lines - len(b.texts))
        for rl, o, _m in tent[:cut]:
            b.texts.append(rl.text)
            b.nbytes += utf8_len(rl.text) + 1
            _cover(b, o)
            if rl.file_offset is not None:
                b.last_file_offset = rl.file_offset
        return tent[cut:]

    @staticmethod
    def _single(sid: str, line: RawLine, offset: int, ms: int, key: str) -> Block:
        return Block(sid, [line.text], offset, offset, line.index, line.file_offset, line.file_offset,
                     line.ts_ms if line.ts_ms is not None else ms, ms, line.source, line.labels, None, False,
                     utf8_len(line.text), key, line.level, line.fields)
