"""The secret gate's Hyperscan database is kept on disk and loaded by the next process, never trusted blindly:
a cut or changed file, another rule set or an unwritable directory all end in a compiled database that answers
as a fresh compile does."""

from __future__ import annotations

import os
from pathlib import Path

import pytest

from streams.assemble.hyperscan_cache import KEEP, cached_database, digest

hyperscan = pytest.importorskip("hyperscan")

EXPRESSIONS = [rb"passw(or)?d\s*=", rb"AKIA[0-9A-Z]{16}", rb"hf_[a-z]{8}"]
TEXT = b"password = x AKIAABCDEFGHIJKLMNOP and hf_abcdefgh"


def compile_now(expressions: list[bytes], calls: list[int]) -> object:
    calls.append(1)
    db = hyperscan.Database(mode=hyperscan.HS_MODE_BLOCK)
    db.compile(expressions=expressions, ids=list(range(len(expressions))), elements=len(expressions),
               flags=[hyperscan.HS_FLAG_CASELESS | hyperscan.HS_FLAG_SINGLEMATCH] * len(expressions))
    return db


def hits(db: object, text: bytes = TEXT) -> set[int]:
    found: set[int] = set()
    db.scan(text, match_event_handler=lambda rule, *_: found.add(rule),  # type: ignore[attr-defined]
            scratch=hyperscan.Scratch(db))
    return found


def database(directory: Path | None, expressions: list[bytes] = EXPRESSIONS) -> tuple[object, int]:
    calls: list[int] = []
    db = cached_database(hyperscan, expressions, lambda: compile_now(expressions, calls), directory)
    return db, len(calls)


def test_the_next_process_loads_what_the_first_compiled(tmp_path: Path) -> None:
    first, compiled = database(tmp_path)
    assert compiled == 1 and hits(first) == {0, 1, 2}
    assert len(list(tmp_path.glob("*.hsdb"))) == 1 and not list(tmp_path.glob(".tmp-*"))
    again, compiled = database(tmp_path)
    assert compiled == 0 and hits(again) == {0, 1, 2}
    assert hits(again, b"nothing here") == set()


def test_another_rule_set_is_another_file(tmp_path: Path) -> None:
    database(tmp_path)
    other, compiled = database(tmp_path, EXPRESSIONS[:2])
    assert compiled == 1 and hits(other) == {0, 1}
    assert len(list(tmp_path.glob("*.hsdb"))) == 2
    assert digest(hyperscan, [b"ab", b"c"]) != digest(hyperscan, [b"a", b"bc"])


@pytest.mark.parametrize("damage", ["cut", "changed", "empty"])
def test_a_damaged_file_is_compiled_again_and_replaced(tmp_path: Path, damage: str) -> None:
    database(tmp_path)
    (path,) = tmp_path.glob("*.hsdb")
    data = path.read_bytes()
    path.write_bytes({"cut": data[: len(data) // 2], "changed": data[:200] + b"\xff" * 64 + data[264:],
                      "empty": b""}[damage])
    db, compiled = database(tmp_path)
    assert compiled == 1 and hits(db) == {0, 1, 2}
    assert path.read_bytes() == data  # replaced whole: the next process loads it again
    assert database(tmp_path)[1] == 0


def test_no_writable_directory_only_costs_the_compile(tmp_path: Path) -> None:
    blocked = tmp_path / "file"
    blocked.write_text("not a directory")
    for directory in (blocked / "hyperscan", None):
        db, compiled = database(directory)
        assert compiled == 1 and hits(db) == {0, 1, 2}


def test_only_the_databases_used_last_are_kept(tmp_path: Path) -> None:
    database(tmp_path)
    (first,) = tmp_path.glob("*.hsdb")
    for i in range(KEEP + 2):
        database(tmp_path, [*EXPRESSIONS[:2], f"rule{i}".encode()])
        os.utime(first, (0, 2_000_000_000 + i))  # the first is used again after each of them
    kept = list(tmp_path.glob("*.hsdb"))
    assert len(kept) == KEEP and first in kept
