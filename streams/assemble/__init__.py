"""Pure core of the assemble stage: decode, merge multiline, parse, classify, split metrics,
redact and route. No Kafka and no clock here; see ``pipeline.py`` for the API."""

from streams.assemble.pipeline import Assembler, Output, RawRecord, parse_files

__all__ = ["Assembler", "Output", "RawRecord", "parse_files"]
