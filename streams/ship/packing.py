"""A batch of lines into the Kafka records that carry it: one record, or several when it does not fit.

Most batches encode as one record under the message limit. One that does not (over the limit, or
refused by the contract despite ``bounds``) is split in halves until every part fits; a line that
fits in no record on its own is quarantined: escaped, cut if it must be, flagged in the labels, and
sent in its place. Nothing is put back to fail again, and what cannot be sent even so is counted.
"""

from __future__ import annotations

import logging
from typing import Any

from streams.ship.batching import split_to_fit
from streams.ship.bounds import FLAGS_LABEL, add_flag
from streams.ship.encoding import EncodeError, quarantined_line, safe_envelope
from streams.ship.sender import Sender
from streams.ship.stats import Stats

log = logging.getLogger(__name__)

# A broker that refuses a record as too large halves the message limit, down to this floor.
MIN_MESSAGE_BYTES = 64 * 1024


class Packer:
    def __init__(self, sender: Sender, message_limit: int, stats: Stats) -> None:
        self.sender = sender
        self.message_limit = message_limit
        self.stats = stats

    def pack(self, path: str, value: dict[str, Any], start: int, end: int) -> list[bytes]:
        """The records for a RawBatch value of the file ``path`` (bytes ``start`` to ``end``).
        Raises SendError when the registry cannot be reached (the batch is retried later)."""
        why: str
        try:
            payload = self.sender.encode(value)
        except EncodeError as exc:
            why = str(exc)
        else:
            if len(payload) <= self.message_limit:
                return [payload]
            why = f"{len(payload)} bytes encoded, over the {self.message_limit}-byte message limit"
        return self._split(path, value, start, end, why)

    def refused_as_too_large(self, size: int) -> None:
        self.message_limit = max(MIN_MESSAGE_BYTES, min(self.message_limit, size // 2))
        log.warning("the broker refused a %d-byte record as too large: records are kept under %d bytes from now "
                    "on; set ship.max_message_bytes to the topic's max.message.bytes", size, self.message_limit)

    def _fits(self, envelope: dict[str, Any], records: list[dict[str, Any]]) -> bool:
        try:
            return len(self.sender.encode({**envelope, "lines": records})) <= self.message_limit
        except EncodeError:
            return False

    def _split(self, path: str, value: dict[str, Any], start: int, end: int, why: str) -> list[bytes]:
        self.stats.batches_split += 1
        envelope = {**value, "lines": []}
        problem = None
        try:
            self.sender.encode(envelope)
        except EncodeError as exc:  # the source or labels: bounds.bound_source should have made them fit
            problem = str(exc)
        if problem is not None:
            log.error("%s: the source or labels of its batches do not fit the contract (%s): sent with host and "
                      "file only, flagged envelope_quarantined", path, problem)
            envelope = safe_envelope(value, "envelope_quarantined")
        payloads: list[bytes] = []
        quarantined = 0
        for part, fits in split_to_fit(value["lines"], lambda records: self._fits(envelope, records)):
            payload = self.sender.encode({**envelope, "lines": part}) if fits else \
                self._quarantine(path, envelope, part[0])
            if payload is not None:
                payloads.append(payload)
                quarantined += not fits
        log.warning("%s: a batch of %d lines (bytes %d to %d) did not fit one record (%s): sent as %d records, "
                    "%d line(s) quarantined", path, len(value["lines"]), start, end, why, len(payloads), quarantined)
        return payloads

    def _quarantine(self, path: str, envelope: dict[str, Any], record: dict[str, Any]) -> bytes | None:
        labels = dict(envelope["labels"])
        add_flag(labels, "line_quarantined")
        room = self.message_limit // 4  # characters: even 3-byte characters leave room for the envelope
        line = quarantined_line(record, room)
        original = record.get("line")
        if len(line["line"]) < len(original if isinstance(original, str) else repr(original)):
            add_flag(labels, "line_cut")
        problem = None
        try:
            payload = self.sender.encode({**envelope, "labels": labels, "lines": [line]})
        except EncodeError as exc:
            problem = str(exc)
        else:
            if len(payload) > self.message_limit:
                problem = f"{len(payload)} bytes even cut"
        if problem is not None:
            self.stats.dropped_lines["unencodable"] += 1
            log.error("%s: the line at file_offset %s cannot be sent even quarantined (%s): dropped", path,
                      record.get("file_offset"), problem)
            return None
        self.stats.lines_quarantined += 1
        log.warning("%s: the line at file_offset %s fits in no record as it was: sent escaped, flagged %s", path,
                    record.get("file_offset"), labels[FLAGS_LABEL])
        return payload
