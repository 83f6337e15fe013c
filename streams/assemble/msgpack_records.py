"""A record value in MessagePack: what Fluent Bit's ``kafka`` output sends with ``format msgpack``.

Fluent Bit packs the record's map with its timestamp key first (``@timestamp`` by default, a double or
an ISO 8601 string: plugins/out_kafka/kafka.c, ``produce_message``); Fluentd's kafka plugins with the
``msgpack`` formatter send the record's map alone. Either is read as the JSON object the ``json``
format would have carried, so the same envelope rules apply (:mod:`streams.assemble.envelopes`).

A value is taken for MessagePack only when its first byte opens a map (``0x80``-``0x8f``, ``0xde``,
``0xdf``: bytes no UTF-8 text starts with, or whose next byte no UTF-8 text has) and the whole value
reads as one map with text keys; anything else stays plain text, as it always was.
"""

from __future__ import annotations

import struct
from typing import Any

import msgpack

from streams.assemble.jsonlimits import MAX_DEPTH
from streams.errors import DecodeError

# Fluent Bit's EventTime extension (type 0): seconds and nanoseconds, each a big-endian 32-bit integer.
_EVENT_TIME = 0


def opens_map(first: int) -> bool:
    return 0x80 <= first <= 0x8F or first in (0xDE, 0xDF)


def record_map(value: bytes) -> dict[str, Any] | None:
    """The map ``value`` packs, with bytes as text and EventTimes as epoch seconds; None when ``value``
    is not exactly one MessagePack map with text keys. A map nested past the JSON depth limit is a
    :class:`DecodeError`: it is MessagePack, but no record of an agent's."""
    try:
        # timestamp=1: MessagePack's own timestamp extension (-1) as epoch seconds, as an EventTime is read
        obj = msgpack.unpackb(value, raw=False, unicode_errors="replace", strict_map_key=True, timestamp=1)
    except msgpack.StackError:
        raise _too_deep() from None
    except Exception:  # noqa: BLE001 - not MessagePack (or not one value of it): the value is plain text
        return None
    if not isinstance(obj, dict) or not all(k.__class__ is str for k in obj):
        return None
    return _plain(obj, 0)


def _plain(obj: Any, depth: int) -> Any:
    """``obj`` with only JSON's types in it."""
    if depth > MAX_DEPTH:
        raise _too_deep()
    if isinstance(obj, dict):  # (a nested key may be bin: bytes, read as text as a bin value is)
        return {_plain(k, depth) if k.__class__ is bytes else str(k): _plain(v, depth + 1) for k, v in obj.items()}
    if isinstance(obj, list):
        return [_plain(v, depth + 1) for v in obj]
    if isinstance(obj, bytes):
        return obj.decode("utf-8", "replace")
    if isinstance(obj, msgpack.ExtType) and obj.code == _EVENT_TIME and len(obj.data) == 8:
        sec, nsec = struct.unpack(">II", obj.data)
        return sec + nsec / 1e9
    if obj is None or isinstance(obj, str | int | float):  # (bool is an int)
        return obj
    return None  # a type JSON has no value of (no line may depend on it, and none may fail on it)


def _too_deep() -> DecodeError:
    return DecodeError(f"MessagePack map nested past the limit of {MAX_DEPTH} levels: not read", "msgpack_limits")
