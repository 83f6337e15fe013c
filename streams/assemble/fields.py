"""One merged block -> the stage's output: an event (``sluice.v1.LogEvent``) or a metric point.

Parse the head line (:mod:`streams.assemble.parse`), take the source's fields from its labels
(:mod:`streams.assemble.metadata`), bound every value to the contract, classify, redact and route.
Pure: the clock is the record's own time, the state is three bounded per-source memories (times, task
fields, and the last column-table header: :mod:`streams.assemble.tables`).

Precedence of the task fields (task_id, task_type, model_name, phase): the source's labels (what the
operator or the job's controller declared), then the record's own keys, then what the same source's
last record said (a traceback after a run of JSON records belongs to the same task, and so to the same
per-task-type index). A record value that loses to a label stays in ``attributes``.

Bounds (a value that does not fit is kept as text in ``attributes`` and named in ``sluice.flags``,
never handed to the encoder): the event's own time must lie in ``[read - max_past, read + max_future]``
around the time the line was read (the Kafka record's time) and within years 1970-9999, else the event
is untimed; step and max_steps fit an Avro
``long``; rank fits an ``int``; attributes are capped in count and length.

An untimed event takes the time of the nearest timed line before it of the same writer, else of the
source, plus the read time elapsed since that line (:mod:`streams.assemble.timebase`), else its read time.
"""

from __future__ import annotations

from dataclasses import dataclass
from datetime import UTC, datetime

from streams.assemble.classify import classify
from streams.assemble.event_id import event_id
from streams.assemble.failfields import failure_fields
from streams.assemble.lift import envelope_figures
from streams.assemble.lines import Block, Output, empty_source
from streams.assemble.metadata import SourceMetadata
from streams.assemble.metrics import is_step_metric, metric_point
from streams.assemble.parse import Parsed, head_over_lines, parse_line, record_over_lines
from streams.assemble.redact import Redactor
from streams.assemble.route import ProjectRouter
from streams.assemble.stepruns import metrics_report
from streams.assemble.tables import MAX_TABLE_BLOCK, ColumnTables
from streams.assemble.timebase import SourceTimes
from streams.assemble.times import MAX_MS

METRICS_TOPIC = "logs.metrics"
MAX_TRACKED_SOURCES = 100_000  # bound on each per-source memory
FLAGS_KEY = "sluice.flags"
DROPPED_KEY = "sluice.attributes_dropped"
MAX_KEY_CHARS = 128
# A record's own key of a name Sluice writes in ``attributes`` is moved under this prefix: it must neither
# overwrite Sluice's value nor pass for it (a forged ``sluice.flags``).
RECORD_KEY_PREFIX = "record."
DAY_MS = 86_400_000
INT_MIN, INT_MAX = -(2**31), 2**31 - 1
TASK_FIELDS = ("task_id", "task_type", "model_name", "phase")
SOURCE_TEXT_FIELDS = ("host", "namespace", "pod", "container", "file", "stream", "node_role")
_QUIET = frozenset(("INFO", "DEBUG", "TRACE"))
_LOUD = frozenset(("ERROR", "FATAL"))
EMPTY_SOURCE = empty_source()
_NO_TASK: dict = {}


@dataclass(frozen=True, slots=True)
class FieldLimits:
    """Bounds on what one event may carry. ``None`` turns a time bound off (the offline default)."""

    # Older than this before its read time, a line's own time is not believed: two years covers a
    # backlog shipped late; an epoch-0 or two-digit-year misreading is further off.
    max_past_ms: int | None = 730 * DAY_MS
    # Ahead of its read time: a day covers clock skew and zone-less local times read as UTC.
    max_future_ms: int | None = DAY_MS
    max_attributes: int = 64
    max_attribute_chars: int = 1024

    @classmethod
    def offline(cls) -> FieldLimits:
        """``sluice parse`` over old files: the line's own time, however old, within years 1970-9999."""
        return cls(max_past_ms=None, max_future_ms=None)


_DAY_TEXT: dict[int, str] = {}


def _iso(ms: int) -> str:
    """``ms`` as ISO 8601 UTC (what a time out of bounds is kept as), the day's text cached."""
    day, rest = divmod(ms, DAY_MS)
    text = _DAY_TEXT.get(day)
    if text is None:
        try:
            text = datetime.fromtimestamp(day * 86_400, tz=UTC).strftime("%Y-%m-%d")
        except (ValueError, OverflowError, OSError):
            return str(ms)
        if len(_DAY_TEXT) < 4096:
            _DAY_TEXT[day] = text
    h, rest = divmod(rest, 3_600_000)
    m, rest = divmod(rest, 60_000)
    s, milli = divmod(rest, 1000)
    return f"{text}T{h:02d}:{m:02d}:{s:02d}.{milli:03d}Z"


class EventBuilder:
    """Blocks -> outputs for one stream of sources (one raw partition, or one file offline)."""

    def __init__(self, router: ProjectRouter | None = None, redact: Redactor | None = None, *,
                 limits: FieldLimits | None = None, metadata: SourceMetadata | None = None) -> None:
        self.router = router or ProjectRouter()
        self.redact = redact or Redactor()
        self.limits = limits or FieldLimits()
        self.metadata = metadata or SourceMetadata()
        self.times: dict[str, SourceTimes] = {}  # source -> its timed lines (what an untimed block takes)
        self.last_task: dict[str, dict] = {}  # source -> task fields its last records named
        self.tables = ColumnTables()  # source -> the header its rows are read against
        lim = self.limits
        self._past = lim.max_past_ms
        self._future = lim.max_future_ms

    def in_window(self, ts: int, read_ms: int) -> bool:
        if not 0 <= ts <= MAX_MS:
            return False
        if read_ms <= 0:  # no read time to measure against: only the contract's bounds
            return True
        past, future = self._past, self._future
        return (past is None or ts >= read_ms - past) and (future is None or ts <= read_ms + future)

    def build(self, b: Block, topic: str, partition: int) -> Output:  # noqa: PLR0912, PLR0915 - one straight recipe
        p = head_over_lines(b.texts, b.first_ts_ms) or parse_line(b.texts[0], b.first_ts_ms)
        if b.fields:  # an envelope's figures beside the line (GELF's additional fields); the line's own win
            envelope_figures(b.fields, p)
        sid = b.source_id
        if len(b.texts) == 1:
            self.tables.read(sid, b.texts[0], p)  # (it leaves a line another rule read alone)
        elif metrics_report(b.texts, p):  # (HF's log_metrics: a banner and its rows, one event)
            p.wide = True
        elif len(b.texts) <= MAX_TABLE_BLOCK:
            self.tables.read_block(sid, b.texts, p)
            if not p.metrics:
                record_over_lines(b.texts, b.first_ts_ms, p)
        ts = p.ts_ms
        read = b.first_ts_ms
        if ts is not None and not (
                0 <= ts <= MAX_MS and (read <= 0 or ((self._past is None or ts >= read - self._past)
                                                     and (self._future is None or ts <= read + self._future)))):
            p.keep_as_text("timestamp_out_of_window", "timestamp", p.time_text or _iso(ts))
            ts = None
        times = self.times.get(sid)
        if ts is not None:
            if times is None:
                if len(self.times) > MAX_TRACKED_SOURCES:
                    self.times.clear()
                times = self.times[sid] = SourceTimes()
            times.note(b.prefix, (b.first_offset, b.first_index), ts, read)
        else:  # no time of its own (see streams.assemble.timebase)
            ts = times.before(b.prefix, (b.first_offset, b.first_index), read) if times is not None else None
            if ts is None:
                ts = read
        eid = event_id(sid, b.first_file_offset, topic, partition, b.first_offset, first_index=b.first_index)
        labels = b.labels
        source = b.source
        project = self.router.project(labels, source)
        meta = self.metadata.resolve(labels) if labels else None
        task = self._task(sid, p, meta) if meta or p.task or self.last_task else _NO_TASK
        kept_text = _keeps_text(p.flags)  # (the line's own values: a source's rank is the agent's, not the line's)
        if meta or source != EMPTY_SOURCE:
            source = self._source(source, meta, p)
        raw = {"topic": topic, "partition": partition, "first_offset": b.first_offset, "last_offset": b.last_offset,
               "first_file_offset": b.first_file_offset, "last_file_offset": b.last_file_offset}
        n = len(b.texts)
        metrics = p.metrics
        # A line logged as an error (TensorFlow's "Model diverged with loss = NaN.") stays an event, its loss a
        # typed field: the error is what an alert and a search look for. So does a line with a value of its own kept
        # as flagged text (a step past a long, a loss no double holds): a point has no attributes to keep it in, and
        # the value would vanish. (A time out of the window is no such value: a point takes the reading time, as any
        # line without a time of its own does.)
        if metrics and p.level not in _LOUD and not kept_text and (
                is_step_metric(metrics, n, p.step is not None or p.epoch is not None) or (p.report and n == 1)):
            point = metric_point(eid, ts, project, p, task=task, source=source, labels=labels, raw=raw)
            return Output("metric", METRICS_TOPIC, eid.encode(), point)
        # One line: a record's own message (its exception text appended), else the line; a block: all of it.
        msg = self.redact(b.message if n > 1 else b.texts[0] if p.message is None else p.message)
        level = p.level or b.level  # the line's own level, else its envelope's
        if n == 1 and level in _QUIET:
            cls = None
        else:
            cls = classify(msg, b.kind)
            if level is None and cls.error_class and cls.error_class != "nccl_warn":
                level = "ERROR"  # an unlabelled traceback / panic / frame dump is an error
        attrs = p.attributes
        if FLAGS_KEY in attrs or DROPPED_KEY in attrs or (p.fmt and "format" in attrs):
            _set_aside(attrs, ("format", FLAGS_KEY, DROPPED_KEY) if p.fmt else (FLAGS_KEY, DROPPED_KEY))
        if p.fmt:
            attrs["format"] = p.fmt
        # The figures of a failure message (an OOM's sizes, a watchdog's op and times, an Xid): the line's own keys win.
        for k, v in failure_fields(msg).items():
            attrs.setdefault(k, v)
        # most lines carry no metrics: skip the lookups then (same values: all None)
        loss = learning_rate = grad_norm = gpu_mb = gpu_util = None
        if metrics:
            for k, v in metrics.items():
                attrs.setdefault(k, repr(v))
            loss, learning_rate, grad_norm = metrics.get("loss"), metrics.get("learning_rate"), metrics.get("grad_norm")
            gpu_mb, gpu_util = metrics.get("gpu_memory_mb"), metrics.get("gpu_utilization_pct")
        if p.flags:
            attrs[FLAGS_KEY] = ",".join(p.flags)
        if p.wide or metrics:  # attributes a record or step line brought: bounded (a head's are short)
            lim = self.limits
            if (len(attrs) > lim.max_attributes or max(map(len, attrs.values())) > lim.max_attribute_chars
                    or max(map(len, attrs)) > MAX_KEY_CHARS):
                self._bound(attrs)
        if task:
            task_id, model_name, task_type, phase = (task.get("task_id"), task.get("model_name"),
                                                     task.get("task_type"), task.get("phase"))
        else:
            task_id = model_name = task_type = phase = None
        event = {
            "event_id": eid, "timestamp": ts, "ingest_ts": b.first_ts_ms if b.first_ts_ms else ts,
            "project": project, "level": level, "message": msg, "logger": p.logger,
            "task_id": task_id, "model_name": model_name, "task_type": task_type, "phase": phase,
            "epoch": p.epoch, "step": p.step, "max_steps": p.max_steps,
            "loss": loss, "learning_rate": learning_rate, "grad_norm": grad_norm, "gpu_memory_mb": gpu_mb,
            "gpu_utilization_pct": gpu_util,
            "error_class": cls.error_class if cls else None, "error_type": cls.error_type if cls else None,
            "root_cause": cls.root_cause if cls else None, "signal": cls.signal if cls else None,
            "multiline_kind": b.kind if n > 1 else None, "line_count": n, "truncated": b.truncated,
            "source": source, "labels": labels, "attributes": attrs, "raw": raw,
        }
        return Output("event", self.router.topic(project), eid.encode(), event)

    def _task(self, sid: str, p: Parsed, meta: dict | None) -> dict:
        """labels > the record > the source's last records (see the module note)."""
        rec = p.task
        sticky = self.last_task.get(sid) if self.last_task else None
        if rec:
            if len(self.last_task) > MAX_TRACKED_SOURCES:
                self.last_task.clear()
            self.last_task[sid] = {**sticky, **rec} if sticky else dict(rec)
        if not (meta or rec or sticky):
            return _NO_TASK
        out = {}
        for f in TASK_FIELDS:
            declared = meta.get(f) if meta else None
            own = rec.get(f) if rec else None
            if declared is not None:
                out[f] = declared
                if own is not None and own != declared:
                    p.attributes.setdefault(f, own)  # the record said otherwise: kept, not lost
            elif own is not None:
                out[f] = own
            elif sticky is not None and f in sticky:
                out[f] = sticky[f]
        return out

    @staticmethod
    def _source(source: dict, meta: dict | None, p: Parsed) -> dict:
        """The Source record as the contract wants it: node role and rank filled from the labels where the
        agent did not send them; strings as strings, rank an int (an agent's envelope may say otherwise)."""
        fix = None
        if meta:
            if meta.get("node_role") and source.get("node_role") is None:
                fix = {"node_role": meta["node_role"]}
            if "rank" in meta and source.get("rank") is None:
                text = meta["rank"]
                n = int(text) if text.isascii() and text.isdigit() else None
                if n is not None and n <= INT_MAX:
                    fix = {**(fix or {}), "rank": n}
                else:
                    p.keep_as_text("rank_out_of_range", "rank", text)
        for k in SOURCE_TEXT_FIELDS:
            v = source.get(k)
            if v is not None and v.__class__ is not str:
                fix = {**(fix or {}), k: str(v)}
        r = source.get("rank")
        if r is not None and (r.__class__ is not int or not INT_MIN <= r <= INT_MAX):
            p.keep_as_text("rank_out_of_range", "rank", str(r))
            fix = {**(fix or {}), "rank": None}
        return {**source, **fix} if fix else source

    def _bound(self, attrs: dict) -> None:
        """At most ``max_attributes`` keys (the first ones kept), each value at most ``max_attribute_chars``."""
        lim = self.limits
        flags = []
        # Redacted before anything is cut: a cut token, or a key cut off from its name, matches no rule.
        redacted = self.redact.mapping(attrs)
        if redacted is not attrs:
            attrs.clear()
            attrs.update(redacted)
        if len(attrs) > lim.max_attributes:
            reserved = ("format", FLAGS_KEY, DROPPED_KEY)  # what Sluice itself writes survives
            ordinary = [k for k in attrs if k not in reserved]
            room = max(lim.max_attributes - len(reserved), 0)
            for k in ordinary[room:]:
                del attrs[k]
            attrs[DROPPED_KEY] = str(len(ordinary) - room)
            flags.append("attributes_dropped")
        for k, v in list(attrs.items()):
            if len(v) > lim.max_attribute_chars:
                attrs[k] = v[:lim.max_attribute_chars]
                if "attribute_truncated" not in flags:
                    flags.append("attribute_truncated")
            if len(k) > MAX_KEY_CHARS:
                attrs[_free_key(attrs, k[:MAX_KEY_CHARS])] = attrs.pop(k)
                if "attribute_truncated" not in flags:
                    flags.append("attribute_truncated")
        if flags:
            have = attrs.get(FLAGS_KEY)
            attrs[FLAGS_KEY] = ",".join([have, *flags] if have else flags)


def _keeps_text(flags: list | None) -> bool:
    """Whether a value of the line is kept as text (``Parsed.keep_as_text``), its time out of the window aside."""
    return bool(flags) and any(f != "timestamp_out_of_window" for f in flags)  # type: ignore[union-attr]


def _set_aside(attrs: dict, names: tuple[str, ...]) -> None:
    """A record's keys of ``names`` (Sluice's own) moved to ``record.<key>`` (a free one)."""
    for name in names:
        if name in attrs:
            key = RECORD_KEY_PREFIX + name
            while key in attrs:
                key = RECORD_KEY_PREFIX + key
            attrs[key] = attrs.pop(name)


def _free_key(attrs: dict, key: str) -> str:
    """``key`` (at most MAX_KEY_CHARS), or, when another attribute holds it, the same cut shorter with a
    ``~N`` suffix: long keys that share their first characters keep their own values."""
    n = 1
    free = key
    while free in attrs:
        n += 1
        suffix = f"~{n}"
        free = key[:MAX_KEY_CHARS - len(suffix)] + suffix
    return free
