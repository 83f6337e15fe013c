"""Faust topics whose keys and values are handed over as the bytes Kafka holds, without codec calls.

The stage workers read ``event.message`` (or ``event.value``) as bytes and decode Avro themselves. With
``key_serializer="raw"`` Faust still passes every key and value through its serializer registry
(``Schema.loads_key``/``loads_value``, ``Registry.loads_*``, codec lookup, ``raw._loads``), which
returns the same bytes, at a cost paid per record. :class:`BytesSchema` returns them directly. Writing
through such a topic is unchanged.
"""

from __future__ import annotations

from typing import Any

import faust


class BytesSchema(faust.Schema):
    """A ``raw``/``raw`` schema that decodes a message by handing over its key and value as they are."""

    def __init__(self) -> None:
        super().__init__(key_serializer="raw", value_serializer="raw")

    def loads_key(self, app: Any, message: Any, *, loads: Any = None, serializer: Any = None) -> Any:
        return message.key

    def loads_value(self, app: Any, message: Any, *, loads: Any = None, serializer: Any = None) -> Any:
        return message.value


def bytes_topic(app: faust.App, *topics: str, **options: Any) -> Any:
    """``app.topic(*topics, **options)`` whose events carry the records' bytes (see the module's text)."""
    return app.topic(*topics, schema=BytesSchema(), **options)
