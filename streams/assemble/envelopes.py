"""What node agents put around a log line in a JSON record, as data, and how to take the line out.

Recorded from the real programs (``tests/fixtures/agents``), not from their manuals alone. An
envelope is recognised by its shape, the set of keys it has and their types:

- docker json-file (the file itself, or an agent's docker parser): ``log`` keeps the newline and a
  ``log`` without one is the first part of a line docker split at 16 KiB (partial);
- Fluent Bit's CRI parsers: ``message`` plus ``logtag`` (the classic one), where ``P`` marks a
  partial line; ``log`` plus ``_p`` (the multiline one), which has joined the pieces already and
  keeps the first piece's ``_p``: a whole line;
- Fluent Bit ``tail`` with no parser: ``log`` is the whole line, newline already stripped;
- ``message`` (Filebeat, Vector, rsyslog's JSON templates, Logstash): the whole line. Python's JSON
  loggers write ``message`` too (python-json-logger, Ray's JSON logs, ECS loggers): an object with a key
  that a logging library writes in every record and no agent does (its level, ``asctime``, ``lineno``),
  or training state (``step``, ``loss``), and none that only an agent writes (``agent``, ``source_type``, ...)
  is the application's record, the log line itself, whose other keys (``step``, ``loss``) are fields;
- rsyslog's ``jsonmesg``: ``rawmsg`` (the line as read) beside ``msg``, ``inputname`` ...;
- GELF 1.1 (Fluent Bit's and Vector's kafka outputs with their ``gelf`` format, Docker's gelf driver):
  ``version`` and ``short_message``, every field of the sender's own ``_``-prefixed;
- Vector's ``native_json`` codec: the event under ``log``, an object;
- systemd-journald's fields (``journalctl -o json``, Fluent Bit's ``systemd`` input, Docker's journald
  driver, syslog-ng's ``format-json``): ``MESSAGE`` beside ``_HOSTNAME``, ``SYSLOG_IDENTIFIER`` ...;
- OTLP JSON (``resourceLogs``): see ``otlp.py``.

A JSON object that is none of these is itself the log line (ms-swift ``logging.jsonl``). An agent
that tails a container log without its parser ships the docker or CRI line inside its own envelope;
that inner line is decoded like a line of the file, once, so the events match the file's.
"""

from __future__ import annotations

import json
from collections.abc import Callable
from typing import Any

from streams.assemble.jsonlimits import violation
from streams.assemble.keys import canonical, claimed, norm
from streams.assemble.lines import RawLine, empty_source
from streams.assemble.timefmt import digits, epoch_ms, rfc3339_ms

DOCKER_KEYS = frozenset(("log", "stream", "time", "attrs"))
# Keys only an agent writes around a line (Filebeat, Vector, Fluent Bit, Logstash): with one of them the
# object is an envelope whatever else it holds (an agent's JSON parsing may have merged the line's keys in).
AGENT_ONLY_KEYS = frozenset(("agent", "@metadata", "ecs", "input", "source_type", "logtag", "beat", "prospector",
                             "@version", "kubernetes", "docker", "_p", "fileset", "cloud", "orchestrator"))
# Keys a logging library writes in each record it formats as JSON and an agent never writes: the level
# (Python logging's ``levelname``, ECS ``log.level``, structlog/zap/pino ``level``), Python's ``asctime``,
# ``lineno`` and ``funcName``. (A line that only carries ``message`` and keys of its own, as Fluent Bit's
# multiline test files do, stays an envelope: its lines are joined like a file's.)
LOGGER_RECORD_KEYS = frozenset(("level", "levelname", "levelno", "severity", "log.level", "lvl", "loglevel",
                                "log_level", "asctime", "lineno", "funcName"))
# Keys only a logging library's encoder writes, which make the object the application's record even beside
# an agent's key: logstash-logback-encoder writes ``level_value`` (the level's number) with Logstash's own
# ``@version`` in every record a JVM trainer or launcher prints.
ENCODER_ONLY_KEYS = frozenset(("level_value",))

# Where the source fields are, first match wins; a tuple is a path into nested objects.
TIME_KEYS = ("time", "@timestamp", "timestamp", "timereported", "date")
FILE_KEYS: tuple[str | tuple[str, ...], ...] = (
    ("log", "file", "path"),          # Filebeat
    "path", "file", "filename",       # Fluent Bit path_key, Vector, rsyslog JSON templates
    "log.file.path",                  # flattened ECS
    ("$!", "metadata", "filename"),   # rsyslog jsonmesg with imfile addMetadata
)
HOST_KEYS: tuple[str | tuple[str, ...], ...] = (("host", "name"), "host", "hostname", "host.name")
OFFSET_KEYS: tuple[tuple[str, ...], ...] = (("log", "offset"), ("$!", "metadata", "fileoffset"))

# Kubernetes metadata: Fluent Bit's kubernetes filter, Filebeat's add_kubernetes_metadata, Vector's
# kubernetes_logs source. Source fields first, then extra metadata kept as labels under k8s.* names.
K8S_SOURCE: dict[str, tuple[str | tuple[str, ...], ...]] = {
    "namespace": ("namespace_name", "namespace", "pod_namespace"),
    "pod": ("pod_name", ("pod", "name")),
    "container": ("container_name", ("container", "name")),
    "host": ("host", ("node", "name"), "pod_node_name"),
}
K8S_EXTRA: dict[str, tuple[str | tuple[str, ...], ...]] = {
    "k8s.pod.uid": ("pod_id", ("pod", "uid"), "pod_uid"),
    "k8s.container.image": ("container_image", ("container", "image", "name"), ("container", "image")),
    "k8s.node.name": (("node", "name"), "pod_node_name", "host"),
}
# Labels first, then annotations, all into ``labels`` (a label wins over an annotation of the same
# key); which of them name the project, task, role or rank is the assemble stage's configuration
# (routing.metadata, docs/fields.md).
K8S_MAPS = ("labels", "pod_labels", "annotations", "pod_annotations")
MAX_META_VALUE = 256  # an annotation longer than this (kubectl's last-applied-configuration) is not metadata

# GELF 1.1 (the format Graylog defines; Fluent Bit's flb_msgpack_to_gelf, Vector's gelf codec, Docker's gelf
# driver): ``short_message`` is the line and ``full_message``, when a sender has one, the whole text (a
# traceback); ``host``; ``timestamp`` in epoch seconds; every other field ``_``-prefixed, Fluent Bit's nested
# maps flattened with ``_`` (``kubernetes.pod_name`` is ``_kubernetes_pod_name``), Docker's container fields
# as ``_container_name`` ...
GELF_SOURCE: dict[str, tuple[str, ...]] = {
    "namespace": ("_kubernetes_namespace_name",),
    "pod": ("_kubernetes_pod_name",),
    "container": ("_kubernetes_container_name", "_container_name"),
    "host": ("host", "_kubernetes_host"),
    "stream": ("_stream",),
    "file": ("_path", "_file", "_filename"),
}
# Flattened Kubernetes labels, then annotations: the rest of the key is the label's name.
GELF_LABEL_PREFIXES = ("_kubernetes_labels_", "_kubernetes_annotations_")

# systemd-journald's fields (systemd.journal-fields(7)) as ``journalctl -o json`` and Fluent Bit's systemd
# input write them (``Strip_Underscores On`` drops the leading ``_``), Docker's journald driver adds, and
# syslog-ng's ``format-json --scope rfc5424`` names them: with ``MESSAGE``, one of these says which it is.
JOURNAL_KEYS = frozenset(("_HOSTNAME", "HOSTNAME", "__REALTIME_TIMESTAMP", "REALTIME_TIMESTAMP", "_SYSTEMD_UNIT",
                          "SYSTEMD_UNIT", "SYSLOG_IDENTIFIER", "_TRANSPORT", "TRANSPORT", "PRIORITY", "_PID",
                          "CONTAINER_NAME", "PROGRAM", "HOST", "ISODATE"))
# What names the writer, a source of its own: the unit, else the syslog tag or program (a host's journal
# interleaves kubelet, the kernel's NVRM lines and every service; read as one source, none would merge).
JOURNAL_WRITER = ("_SYSTEMD_UNIT", "SYSTEMD_UNIT", "SYSLOG_IDENTIFIER", "PROGRAM", "_COMM", "COMM")
# journald's PRIORITY, syslog's severities (systemd.journal-fields(7): 0 "emerg" ... 7 "debug"), as text in the export;
# the kernel's own (its NVRM Xid lines at 4, "warning") and a unit's (SyslogLevel=, "info" unless the program
# prefixes its lines with "<N>")
SYSLOG_SEVERITIES = {"0": "FATAL", "1": "FATAL", "2": "FATAL", "3": "ERROR", "4": "WARN", "5": "INFO", "6": "INFO",
                     "7": "DEBUG"}
JOURNAL_MICROS = ("_SOURCE_REALTIME_TIMESTAMP", "SOURCE_REALTIME_TIMESTAMP", "__REALTIME_TIMESTAMP",
                  "REALTIME_TIMESTAMP")

Inner = Callable[[str], "RawLine | None"]


def dig(obj: Any, path: str | tuple[str, ...]) -> Any:
    if path.__class__ is str:
        return obj.get(path) if obj.__class__ is dict else None
    for p in path:
        if obj.__class__ is not dict:
            return None
        obj = obj.get(p)
        if obj is None:
            return None
    return obj


def first_str(obj: dict, paths) -> str | None:
    for p in paths:
        v = obj.get(p) if p.__class__ is str else (dig(obj, p) if p[0] in obj else None)
        if v and v.__class__ is str:
            return v
    return None


def _time_ms(obj: dict) -> int | None:
    for k in TIME_KEYS:
        v = obj.get(k)
        if isinstance(v, str):
            ms = rfc3339_ms(v)
            if ms is not None:
                return ms
        elif isinstance(v, int | float) and not isinstance(v, bool):
            return epoch_ms(v)
    return None


def _offset(obj: dict) -> int | None:
    for p in OFFSET_KEYS:
        if p[0] not in obj:
            continue
        v = dig(obj, p)
        if isinstance(v, int) and not isinstance(v, bool):
            return v
        if isinstance(v, str) and digits(v):
            return int(v)
    return None


def kubernetes(src: dict, labels: dict, k8s: Any) -> None:
    """Fill source fields and labels from a ``kubernetes`` object of any of the agents."""
    if not isinstance(k8s, dict):
        return
    for field, paths in K8S_SOURCE.items():
        src[field] = src[field] or first_str(k8s, paths)
    for name, paths in K8S_EXTRA.items():
        v = first_str(k8s, paths)
        if v:
            labels[name] = v
    for key in K8S_MAPS:
        found = k8s.get(key)
        if isinstance(found, dict):
            for k, v in found.items():
                put_meta(labels, str(k), v)


def meta_text(value: Any) -> str | None:
    """A label's or annotation's value as text: a string or a number up to MAX_META_VALUE characters, else
    None (a null, a list or an object is no label: its repr would name a project nobody named)."""
    if isinstance(value, str | int | float) and not isinstance(value, bool):
        text = str(value)
        if len(text) <= MAX_META_VALUE:
            return text
    return None


def put_meta(labels: dict, key: str, value: Any) -> None:
    """A label or annotation into ``labels`` (:func:`meta_text`), first one wins."""
    text = meta_text(value)
    if text is not None:
        labels.setdefault(key, text)


def _strip_newline(text: str) -> tuple[str, bool]:
    """Drop one trailing ``\\n`` (and the ``\\r`` of a CRLF line); say whether there was one."""
    had = text.endswith("\n")
    if had:
        text = text[:-1]
    if text.endswith("\r"):
        text = text[:-1]
    return text, had


# Keys of an envelope that are read above or are the agents' own bookkeeping. Any other key with a text or number
# value is one the operator had the agent add (Fluent Bit's record_modifier or modify filters, Vector's remap, a
# Logstash mutate: ``cluster``, ``env``, ``project``) and is kept as a label, as Filebeat's ``fields`` are. Keys of
# the application's own record that an agent merged in beside the line (Fluent Bit's ``Merge_Log``: its level, step,
# loss, or any key the line's own JSON has) are not: the line still holds them, and its parse lifts them.
ENVELOPE_OWN_KEYS = frozenset((
    *DOCKER_KEYS, *AGENT_ONLY_KEYS, *TIME_KEYS, *(k for k in FILE_KEYS if k.__class__ is str),
    *(k for k in HOST_KEYS if k.__class__ is str), "message", "labels", "fields", "offset", "tags",
    "timestamp_end", "container", "event", "source", "container_id", "container_name", "partial_message",
    "partial_id", "partial_ordinal", "partial_last", "log.offset", "fields_under_root"))
FIELDS_KEY = "fields"  # Filebeat's custom fields (``fields:`` in an input) when not ``fields_under_root``


def _merged_keys(obj: dict) -> frozenset:
    """The keys of the line itself when it is a JSON object an agent also merged into its record."""
    line = obj.get("log")
    if line.__class__ is not str:
        line = obj.get("message")
    if line.__class__ is not str or not line.startswith("{") or violation(line) is not None:
        return frozenset()
    try:
        parsed = json.loads(line)
    except ValueError:
        return frozenset()
    return frozenset(parsed) if parsed.__class__ is dict else frozenset()


def _custom_labels(obj: dict, labels: dict) -> None:
    """The keys an operator had the agent add: Filebeat's ``fields`` map, then other top-level keys."""
    custom = obj.get(FIELDS_KEY)
    if custom.__class__ is dict:
        for k, v in custom.items():
            put_meta(labels, str(k), v)
    extra = [k for k in obj if k.__class__ is str and k not in ENVELOPE_OWN_KEYS and k not in LOGGER_RECORD_KEYS
             and not claimed(canonical(norm(k)))]
    if not extra:
        return
    merged = _merged_keys(obj)
    for k in extra:
        if k not in merged:
            put_meta(labels, k, obj[k])


def _agent_fields(obj: dict) -> tuple[dict, dict]:
    src = empty_source()
    labels: dict = {}
    stream = obj.get("stream")
    src["stream"] = stream if stream.__class__ is str else None
    if "kubernetes" in obj:
        kubernetes(src, labels, obj["kubernetes"])
    src["file"] = first_str(obj, FILE_KEYS)
    src["host"] = src["host"] or first_str(obj, HOST_KEYS)
    extra = obj.get("labels")
    if extra.__class__ is dict:  # Filebeat/ECS custom labels, Vector's labels: read as Kubernetes labels are
        for k, v in extra.items():
            text = meta_text(v)
            if text is not None:
                labels[str(k)] = text
    _custom_labels(obj, labels)
    return src, labels


def with_inner(line: RawLine, inner: Inner | None) -> RawLine:
    """An agent's whole line that is itself a docker or CRI line: decode it as the file's line."""
    if inner is None or not line.text or line.text[0] not in "{0123456789":
        return line
    got = inner(line.text)
    if got is None:
        return line
    src = dict(line.source)
    for k, v in got.source.items():
        if v is not None and src.get(k) is None:
            src[k] = v
    labels = {**got.labels, **line.labels} if got.labels else line.labels
    return RawLine(got.text, line.file_offset, got.ts_ms if got.ts_ms is not None else line.ts_ms, src, labels,
                   got.partial, line.index, got.level or line.level, got.fields or line.fields)


def _log_line(obj: dict, log: str, inner: Inner | None) -> RawLine:
    keys = obj.keys()
    if "_p" in obj:
        # Fluent Bit's multiline cri parser (time, stream, _p, log) has joined the runtime's pieces
        # already, and keeps the first piece's _p: P on a joined line is no partial mark (recorded)
        text, _ = _strip_newline(log)
        partial = False
    elif keys <= DOCKER_KEYS or (isinstance(obj.get("stream"), str) and isinstance(obj.get("time"), str)):
        # docker json-file, as written or as an agent's docker parser read it: no newline = partial
        text, had = _strip_newline(log)
        partial = not had
    else:  # Fluent Bit tail: the line without its newline
        src, labels = _agent_fields(obj)
        text, _ = _strip_newline(log)
        return with_inner(RawLine(text, _offset(obj), _time_ms(obj), src, labels), inner)
    src, labels = _agent_fields(obj)
    return RawLine(text, _offset(obj), _time_ms(obj), src, labels, partial)


def _rsyslog_jsonmesg(obj: dict, inner: Inner | None) -> RawLine:
    text = obj["rawmsg"] if isinstance(obj.get("rawmsg"), str) else obj["msg"]
    src = empty_source()
    src["file"] = first_str(obj, FILE_KEYS)
    src["host"] = first_str(obj, ("hostname",))
    text, _ = _strip_newline(text)
    return with_inner(RawLine(text, _offset(obj), _time_ms(obj), src, {}), inner)


def _application_record(obj: dict) -> bool:
    """An object with ``message`` that an application wrote (see the module note), not an agent. python-json-logger's
    JsonFormatter with no format (logging's default "%(message)s") writes only ``message`` and the record's extra=
    keys: one a training family claims (``step``, ``loss``, ``gpu_mem_gb``) is no agent's either."""
    keys = obj.keys()
    if not keys.isdisjoint(ENCODER_ONLY_KEYS):
        return True
    if not keys.isdisjoint(AGENT_ONLY_KEYS):
        return False
    return not keys.isdisjoint(LOGGER_RECORD_KEYS) or any(
        k.__class__ is str and claimed(canonical(norm(k))) for k in keys)


def _gelf(obj: dict, inner: Inner | None) -> RawLine:
    full = obj.get("full_message")
    text, _ = _strip_newline(full if isinstance(full, str) and full else obj["short_message"])
    src = empty_source()
    for field, keys in GELF_SOURCE.items():
        src[field] = first_str(obj, keys)
    labels: dict = {}
    for prefix in GELF_LABEL_PREFIXES:
        for k, v in obj.items():
            if k.startswith(prefix) and len(k) > len(prefix):
                put_meta(labels, k[len(prefix):], v)
    # GELF's level is a syslog severity; Docker's gelf driver (daemon/logger/gelf) sets it from the stream, 6 for stdout
    # and 3 for stderr, where a progress bar or a warning is no error: its records (with _container_id) say no level
    sev = obj.get("level")
    level = SYSLOG_SEVERITIES.get(str(sev)) if sev.__class__ is int and "_container_id" not in obj else None
    # the sender's additional fields a training family claims: Fluent Bit's gelf output writes a parsed record's keys
    # as "_step", "_loss" (Docker's "_container_*", "_image_*", "_command", "_created", "_tag" are none)
    fields = {k[1:]: v for k, v in obj.items() if k[:1] == "_" and k.__class__ is str and v.__class__ in (int, float)
              and claimed(canonical(norm(k[1:])))}
    return with_inner(RawLine(text, None, _time_ms(obj), src, labels, level=level, fields=fields or None), inner)


def _journal_time(obj: dict) -> int | None:
    for k in JOURNAL_MICROS:
        v = obj.get(k)
        if v.__class__ is str and digits(v):  # microseconds since the epoch, as text
            return epoch_ms(int(v) // 1000)
    iso = obj.get("ISODATE")
    return rfc3339_ms(iso) if iso.__class__ is str else _time_ms(obj)


def _journal(obj: dict, inner: Inner | None) -> RawLine:
    msg = obj["MESSAGE"]
    if msg.__class__ is list:  # journalctl writes a message that is not UTF-8 as its bytes, a list of numbers
        msg = bytes(b for b in msg if b.__class__ is int and 0 <= b <= 255).decode("utf-8", "replace")
    text, _ = _strip_newline(msg)
    src = empty_source()
    src["host"] = first_str(obj, ("_HOSTNAME", "HOSTNAME", "HOST", "host"))
    src["container"] = first_str(obj, ("CONTAINER_NAME",))
    writer = first_str(obj, JOURNAL_WRITER)
    src["file"] = first_str(obj, FILE_KEYS) or (f"journal:{writer}" if writer else None)
    # Docker's journald driver marks each piece of a line it split but the last
    partial = obj.get("CONTAINER_PARTIAL_MESSAGE") == "true"
    priority = obj.get("PRIORITY")
    level = SYSLOG_SEVERITIES.get(priority) if priority.__class__ is str else None
    return with_inner(RawLine(text, None, _journal_time(obj), src, {}, partial, level=level), inner)


def json_envelope(obj: dict, inner: Inner | None) -> RawLine | None:  # noqa: PLR0911 - one return per shape
    """The line an agent's JSON record carries, or None when the object is the log line itself."""
    log = obj.get("log")
    if isinstance(log, str):
        return _log_line(obj, log, inner)
    if log.__class__ is dict and len(obj) == 1:  # Vector's native_json: {"log": {<the event's fields>}}
        return json_envelope(log, inner)
    if isinstance(obj.get("short_message"), str) and isinstance(obj.get("version"), str):
        return _gelf(obj, inner)
    msg = obj.get("message")
    if msg is None and "logtag" in obj and isinstance(obj.get("stream"), str):
        msg = ""  # Fluent Bit's regex parsers leave an empty capture out: an empty CRI line
    if isinstance(msg, str) and not _application_record(obj):
        src, labels = _agent_fields(obj)
        text, _ = _strip_newline(msg)
        if "logtag" in obj:  # Fluent Bit's classic cri parser: time, stream, logtag, message
            return RawLine(text, _offset(obj), _time_ms(obj), src, labels, obj["logtag"] == "P")
        return with_inner(RawLine(text, _offset(obj), _time_ms(obj), src, labels), inner)
    if isinstance(obj.get("msg") or obj.get("rawmsg"), str) and "inputname" in obj:
        return _rsyslog_jsonmesg(obj, inner)
    if obj.get("MESSAGE").__class__ in (str, list) and not obj.keys().isdisjoint(JOURNAL_KEYS):
        return _journal(obj, inner)
    return None
