"""Every field the shipper sends, bounded to the ``sluice.v1.RawBatch`` contract at the edge (pure).

What a node hands the shipper is not under its control: file names need not be UTF-8, a rank in a
path may not fit the contract's ``int``, a downward-API label may hold an escaped lone surrogate.
A record that cannot be encoded must never reach the producer, where it would block its file; so
each value is made to fit here. A number that does not fit is left out of its typed field and kept
as text in the labels, with its name in the ``sluice_flags`` label; text is made encodable by
escaping what is not UTF-8 (``\\xff``), so distinct names stay distinct.
"""

from __future__ import annotations

from typing import Any

INT_MIN, INT_MAX = -(2**31), 2**31 - 1
LONG_MAX = 2**63 - 1
FLAGS_LABEL = "sluice_flags"  # comma-separated names of what the shipper changed to make a record fit
SOURCE_TEXT_FIELDS = ("host", "namespace", "pod", "container", "file", "stream", "node_role")


def avro_text(text: str) -> str:
    """``text`` if it encodes as UTF-8; else with undecodable bytes as ``\\xNN`` and lone surrogates as ``\\uNNNN``."""
    try:
        text.encode("utf-8")
    except UnicodeEncodeError:
        pass
    else:
        return text
    try:  # names from the OS: bytes that were not UTF-8 come back as surrogate escapes
        return text.encode("utf-8", "surrogateescape").decode("utf-8", "backslashreplace")
    except UnicodeEncodeError:
        return text.encode("utf-8", "backslashreplace").decode("utf-8")


def add_flag(labels: dict[str, str], flag: str) -> None:
    flags = {f for f in labels.get(FLAGS_LABEL, "").split(",") if f}
    labels[FLAGS_LABEL] = ",".join(sorted(flags | {flag}))


def bound_source(source: dict[str, Any], labels: dict[str, Any]) -> tuple[dict[str, Any], dict[str, str]]:
    """The source and labels with every value fitting the contract (copies; flags added to the labels)."""
    out_labels = {avro_text(str(k)): avro_text(str(v)) for k, v in labels.items()}
    out = dict(source)
    for name in SOURCE_TEXT_FIELDS:
        value = out.get(name)
        out[name] = None if value is None else avro_text(str(value))
    rank = out.get("rank")
    if rank is not None and not (isinstance(rank, int) and INT_MIN <= rank <= INT_MAX):
        out_labels.setdefault("rank", avro_text(str(rank)))
        add_flag(out_labels, "rank_out_of_range")
        out["rank"] = None
    return out, out_labels
