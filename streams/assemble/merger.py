"""Multiline merger: joins the lines of one source into whole events, following ``rules.py``.

Lines from different per-process prefixes (``[rank3]:``, ``(VllmWorkerProcess pid=1)``, vLLM's
``ERROR 09-05 17:22:27 file.py:63]``) interleaved in one source are merged per prefix. An
unprefixed line that continues the block most recently touched under another prefix (torch's
``[rank3]:[E...]`` puts the prefix on the first line of a C++ error only) joins that block.

Limits: ``max_lines`` and ``max_bytes`` per block (the block is emitted with ``truncated=True``).
Blank lines held after a block count towards both: a run of blank lines that would take the block
past a limit ends it (blank lines after a block are never part of it), so no source can grow the
merger's memory without bound. ``idle_timeout_ms``: ``flush_idle(now_ms)`` emits blocks whose
last line arrived that long ago — this is what emits the last traceback of a job that died.

Crash safety: ``oldest_open_offset()`` is the Kafka offset of the first line of the oldest block
still open; a caller that commits only below it and re-reads from it after a restart loses no
line and splits no block. The merger uses no clock of its own, so a replay gives the same blocks.
"""

from __future__ import annotations

from streams.assemble import rules as R
from streams.assemble.lines import Block, RawLine

_GREEDY = frozenset(("python", "cpp", "panic"))
_RECORD_START = R.RECORD_START_RE.match
_PREFIX = R.PREFIX_RE.match


class _Open:
    __slots__ = ("after_chain", "atomic_proc", "block", "body0", "close", "depth", "mode", "pending", "pending_bytes")

    def __init__(self, block: Block, mode: str, body0: str) -> None:
        self.block = block
        self.mode = mode
        self.pending: list[tuple[str, int, int | None]] = []  # held blank lines
        self.pending_bytes = 0
        self.after_chain = False
        self.depth = 0
        self.close = ""
        self.body0 = body0
        # set when the prefix is a logging record header (vLLM "ERROR ... file.py:63]"): such a
        # record is written in one go, so the next line of the same process ends it
        self.atomic_proc: str | None = None


def split_prefix(text: str) -> tuple[str, str, int | None]:
    """Return (prefix key, body, rank) for a line; the key drops timestamps so it stays stable."""
    if not text or text[0] not in R.PREFIX_FIRST:
        return "", text, None
    key = ""
    rank = None
    body = text
    for _ in range(3):
        m = _PREFIX(body)
        if m is None:
            break
        g = m.lastgroup
        if g == "rank":
            part = m.group("rank")
            rank = int("".join(ch for ch in part if ch.isdigit()))
        elif g == "proc":
            part = m.group("proc")
        elif m.group("vlvl"):
            part = m.group("vlvl") + " " + m.group("vloc")
        else:
            part = "wrap:" + m.group("wlvl") + ":" + m.group("wname")
        key = key + "|" + part if key else part
        body = body[m.end():]
    return key, body, rank


def _proc_of(key: str) -> str:
    """The process part of a prefix key (rank / pid prefixes), without logging-record headers."""
    return "|".join(p for p in key.split("|") if p.startswith(("(", "[r", "[d")))


def _start_mode(body: str) -> tuple[str, str | None, str]:
    """Mode, multiline kind and table-close char for a block whose first body is ``body``."""
    c = body[0] if body else ""
    if c in R.START_FIRST:
        for rx, mode, kind in R.START_RULES:
            if rx.match(body):
                return mode, kind, ""
    if c in R.TABLE_FIRST:
        m = R.TABLE_OPEN_RE.match(body)
        if m:
            return "table", "table", m.group(1)
    last = body[-1:]
    if last.isspace():
        last = body.rstrip()[-1:]
    if last in "{[" and last:
        return "json", "json_dump", ""
    if last in "]: " and R.EMPTY_HEADER_RE.match(body):
        return "await", None, ""
    return "plain", None, ""


def _json_depth(body: str) -> int:
    return body.count("{") + body.count("[") - body.count("}") - body.count("]")


class MultilineMerger:
    """Per-source, per-prefix multiline merging; see the module docstring."""

    def __init__(self, max_lines: int = 1000, max_bytes: int = 512 * 1024, idle_timeout_ms: int = 5000) -> None:
        self.max_lines = max_lines
        self.max_bytes = max_bytes
        self.idle_timeout_ms = idle_timeout_ms
        self._src: dict[str, dict[str, _Open]] = {}
        self._last_key: dict[str, str] = {}

    # -- public API -------------------------------------------------------------------------
    def push(self, sid: str, line: RawLine, offset: int, arrival_ms: int) -> list[Block]:
        """Add one line of source ``sid`` read at Kafka ``offset``; return blocks that closed."""
        text = line.text
        key, body, rank = split_prefix(text)
        opened = self._src.get(sid)
        if opened is None:
            opened = {}  # stored when a block opens: a source with nothing open is not kept
        out: list[Block] = []
        if not body or body.isspace():
            self._hold_blank(sid, opened, key, line, offset, arrival_ms, out)
            return out
        last = self._last_key.get(sid)
        ob = opened.get(key)
        if ob is None and key == "" and last:
            other = opened.get(last)  # torch prefixes only the first line of a C++ error
            if other is not None and other.mode != "plain" and self._continues(other, body):
                self._append(other, text, body, offset, line, arrival_ms, opened, last, out)
                self._prune(sid, opened)
                return out
        if ob is not None:
            if self._continues(ob, body):
                self._append(ob, text, body, offset, line, arrival_ms, opened, key, out)
                self._last_key[sid] = key
                self._prune(sid, opened)
                return out
            out.append(self._close(opened, key))
        if last is not None and last != key:
            # a line from another prefix ends single lines still open elsewhere in this source,
            # and whole logging records of the same process
            proc = _proc_of(key)
            for k in [k for k, o in opened.items()
                      if k != key and (o.mode == "plain" or o.atomic_proc == proc)]:
                out.append(self._close(opened, k))
        self._last_key[sid] = key
        mode, kind, close = _start_mode(body)
        block = Block(sid, [text], offset, offset, line.index, line.file_offset, line.file_offset,
                      line.ts_ms if line.ts_ms is not None else arrival_ms, arrival_ms,
                      line.source, line.labels, kind, False, len(text), key)
        if rank is not None and block.source.get("rank") is None:
            block.source = {**block.source, "rank": rank}
        ob = _Open(block, mode, body)
        ob.close = close
        if key.endswith("]") or key.startswith("wrap:") or "|wrap:" in key:
            ob.atomic_proc = _proc_of(key)
        if mode == "json":
            ob.depth = _json_depth(body)
        opened[key] = ob
        self._src[sid] = opened
        return out

    def flush_idle(self, now_ms: int) -> list[Block]:
        """Emit every block whose last line arrived ``idle_timeout_ms`` or more before ``now_ms``."""
        due = []
        for sid, opened in self._src.items():
            for key, ob in opened.items():
                if ob.block.last_ts_ms + self.idle_timeout_ms <= now_ms:
                    due.append((ob.block.first_offset, ob.block.first_index, sid, key))
        due.sort()
        out = [self._close(self._src[sid], key) for _o, _i, sid, key in due]
        for sid in {sid for _o, _i, sid, _k in due}:
            self._prune(sid, self._src[sid])
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

    def open_count(self) -> int:
        return sum(len(o) for o in self._src.values())

    def source_count(self) -> int:
        """Sources with something open (a source with nothing open costs no memory)."""
        return len(self._src)

    def drop_source(self, sid: str) -> list[Block]:
        """Forget everything of ``sid`` and return its open blocks (held blank lines included), oldest
        first: what the caller dead-letters when handling a line of the source failed halfway."""
        opened = self._src.pop(sid, {})
        self._last_key.pop(sid, None)
        out = []
        for ob in opened.values():
            b = ob.block
            for text, _offset, _file_offset in ob.pending:
                b.texts.append(text)
            out.append(b)
        return sorted(out, key=lambda b: (b.first_offset, b.first_index))

    # -- internals --------------------------------------------------------------------------
    def _continues(self, ob: _Open, body: str) -> bool:  # noqa: PLR0911, PLR0912 - one flat dispatch: the hot path pays no call per rule
        mode = ob.mode
        c = body[0]
        if mode == "await":
            return True
        if mode == "done":
            return False
        if ob.pending:
            if mode in _GREEDY:
                if ob.after_chain and mode == "python" and R.TRACEBACK_RE.match(body):
                    return True
                return R.AFTER_BLANK[mode].match(body) is not None
            if mode in {"table", "json"}:
                return not _RECORD_START(body)
            if mode == "sanitizer":
                return body.startswith(R.SANITIZER_CONT)
            return False  # a blank line ends a plain record
        if c in {" ", "\t"}:
            # indented, unless the indented text is itself a new record (" > msg", "\tts=...")
            return mode != "plain" or _RECORD_START(body.lstrip()) is None
        if mode in _GREEDY:
            if R.TRACEBACK_RE.match(body):
                return ob.after_chain
            return _RECORD_START(body) is None
        if mode == "plain":
            if c in R.PLAIN_CONT_FIRST and R.PLAIN_CONT_RE.match(body):
                return True
            if c == "T" and len(ob.block.texts) <= 2 and R.TRACEBACK_RE.match(body) \
                    and R.PREAMBLE_RE.search(ob.body0 if len(ob.block.texts) == 1 else ob.block.texts[-1]):
                return True
            return bool(c.islower() and R.JAVA_HEAD_RE.match(body) and R.LEVEL_WARN_ERROR_RE.search(ob.block.texts[0]))
        if mode in {"table", "json"}:
            return _RECORD_START(body) is None
        if mode == "sanitizer":
            return body.startswith(R.SANITIZER_CONT)
        return False

    def _append(  # noqa: PLR0912 - per-line hot path: plain positional call, flat branches
            self, ob: _Open, text: str, body: str, offset: int, line: RawLine, arrival_ms: int,
            opened: dict[str, _Open], key: str, out: list[Block]) -> None:
        b = ob.block
        if ob.pending:
            for t, _o, _f in ob.pending:
                b.texts.append(t)
                b.nbytes += len(t) + 1
            ob.pending.clear()
            ob.pending_bytes = 0
        b.texts.append(text)
        b.nbytes += len(text) + 1
        b.last_offset = offset
        if line.file_offset is not None:
            b.last_file_offset = line.file_offset
        b.last_ts_ms = arrival_ms
        mode = ob.mode
        if mode == "await":
            mode, kind, close = _start_mode(body)
            ob.mode, ob.close = (mode if mode not in ("await",) else "plain"), close
            if (kind and not b.kind) or kind == "python_traceback":
                b.kind = kind
            if mode == "json":
                ob.depth = _json_depth(body)
        elif mode == "plain":
            if (body[0] == "T" and R.TRACEBACK_RE.match(body)) or body.startswith('  File "'):
                ob.mode, b.kind = "python", "python_traceback"
            elif body[0] in "\tC." and b.kind is None:
                b.kind = "java_stack"
        elif mode == "python":
            if body[0] in "DT":
                if R.CHAIN_RE.match(body):
                    ob.after_chain = True
                elif R.TRACEBACK_RE.match(body):
                    ob.after_chain = False
            if b.kind == "python_traceback" and "ChildFailedError" in body:
                b.kind = "childfailed_box"
        elif mode == "table":
            if len(b.texts) == 2 and "Traceback (most recent call last)" in body:
                b.kind = "python_traceback"  # IPython frames an exception with a rule line
            s = body.rstrip()
            if len(s) >= 10 and s.count(ob.close) == len(s):
                ob.mode = "done"
        elif mode == "json":
            ob.depth += _json_depth(body)
            if ob.depth <= 0:
                ob.mode = "done"
        if len(b.texts) >= self.max_lines or b.nbytes >= self.max_bytes:
            b.truncated = True
            out.append(self._close(opened, key))
        elif ob.mode == "done":  # a closed table / balanced JSON dump: emit now, not at the next line
            out.append(self._close(opened, key))

    def _hold_blank(self, sid: str, opened: dict[str, _Open], key: str, line: RawLine, offset: int,
                    arrival_ms: int, out: list[Block]) -> None:
        """A blank line waits beside the block it may belong to (it joins only if the block goes on);
        held lines count towards the block's limits, and reaching one ends the block without them."""
        held_key = key
        ob = opened.get(key)
        if ob is None and key == "":
            held_key = self._last_key.get(sid) or ""
            ob = opened.get(held_key) if held_key else None
            if ob is not None and ob.mode == "plain":
                ob = None
        if ob is None:
            return
        ob.pending.append((line.text, offset, line.file_offset))
        ob.pending_bytes += len(line.text) + 1
        b = ob.block
        b.last_ts_ms = arrival_ms
        if len(b.texts) + len(ob.pending) >= self.max_lines or b.nbytes + ob.pending_bytes >= self.max_bytes:
            out.append(self._close(opened, held_key))
            self._prune(sid, opened)

    def _prune(self, sid: str, opened: dict[str, _Open]) -> None:
        """Forget a source with nothing open: its last prefix only matters while a block is open
        (a restored worker does not have it either), and sources come and go for ever."""
        if not opened:
            del self._src[sid]
            self._last_key.pop(sid, None)

    @staticmethod
    def _close(opened: dict[str, _Open], key: str) -> Block:
        ob = opened.pop(key)
        b = ob.block
        if len(b.texts) == 1 and b.kind in ("table", "json_dump"):
            b.kind = None  # a lone rule line or "{" is not a multiline block
        return b
