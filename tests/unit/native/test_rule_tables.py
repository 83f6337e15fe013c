"""The rule tables of ``rules.py``, compiled natively from their Python source at start, match exactly
as Python's ``re`` matches them: the same first alternative, and where the table's use needs it, the
same end. This is the native merger's footing: its tables are read from Python, never copied.
"""

from __future__ import annotations

import re
from functools import cache
from typing import Any

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from streams.assemble import rules as R
from streams.assemble.rust_regex import Untranslatable, translate
from tests.unit.native.corpus_records import corpus_files
from tests.unit.native.engines import native_or_skip

# table -> (name, pattern) items, and whether the merger uses where a match ends (prefixes, heads)
TABLES: dict[str, tuple[list[tuple[str, str]], bool]] = {
    "stream_prefixes": ([(n, p) for n, p, _k, _g in R.STREAM_PREFIXES], True),
    "heads": ([(n, p) for n, p, _r in R.HEADS], True),
    "tokens": ([(t[0], t[1]) for t in R.TOKENS], False),
    "records": ([(n, p) for n, p, _l in R.RECORDS], False),
}


def translatable(items: list[tuple[str, str]], ends_matter: bool) -> list[tuple[str, str, str]]:
    out = []
    for name, pattern in items:
        try:
            out.append((name, pattern, translate(pattern, ends_matter=ends_matter)))
        except Untranslatable:
            continue
    return out


@cache
def compiled(table: str) -> tuple[Any, Any, list[str], bool]:
    native = native_or_skip()
    items, ends = TABLES[table]
    kept = translatable(items, ends)
    python = re.compile("|".join(f"(?P<g{i}>{p})" for i, (_n, p, _t) in enumerate(kept)))
    return python, native.PatternTable([t for _n, _p, t in kept]), [n for n, _p, _t in kept], ends


def python_match(rx: Any, text: str, ends: bool) -> tuple[int, int] | None:
    m = rx.match(text)
    if m is None:
        return None
    return int((m.lastgroup or "g-1")[1:]), (m.end() if ends else -1)


def native_match(table: Any, text: str, ends: bool) -> tuple[int, int] | None:
    got = table.match(text)
    return None if got is None else (got[0], got[1] if ends else -1)


def test_almost_every_rule_is_read_natively() -> None:
    """A rule the translation refuses keeps its table in Python: today only a ``\\b`` (whose word
    characters Rust and Python define apart) in one record pattern."""
    refused = [(t, n) for t, (items, ends) in TABLES.items() for n, p in items
               if n not in {k for k, _p, _t in translatable([(n, p)], ends)}]
    assert refused == [("records", "level_bracket")]


@cache
def all_corpus_texts() -> list[str]:
    texts: set[str] = set()
    for path in corpus_files():
        for line in path.read_bytes().decode("utf-8", "replace").split("\n"):
            texts.update((line, line.lstrip(), line.partition(": ")[2], line.partition("] ")[2]))
    return sorted(texts)


def corpus_texts() -> list[str]:
    """A fixed fifth of the distinct texts (every fifth in sorted order): Python's ``re`` on the whole
    corpus costs a minute of CI per table, and the generated texts below cover the character classes."""
    return all_corpus_texts()[::5]


@pytest.mark.parametrize("table", sorted(TABLES))
def test_every_corpus_line_matches_alike(table: str) -> None:
    python, native, _names, ends = compiled(table)
    hits = 0
    for text in corpus_texts():
        expected = python_match(python, text, ends)
        assert native_match(native, text, ends) == expected, text
        hits += expected is not None
    assert hits > 100, hits


_ALPHABET = st.sampled_from([*"0123456789 \t\n:[]()|.,-=_*#@/'\"<>abzAZ",
    "٣", "５", "²", "é", "\u0301", "\x1c", "\x85", "\xa0", "\u2028", "\u2502", "\u256d", "\u2500", "日", "\U0001f600",
    "\U00011f50", "ǅ", "ſ", "\u200d"])


@st.composite
def texts(draw: st.DrawFn) -> str:
    """Corpus lines with pieces changed, and text from an alphabet of the characters whose class differs."""
    if draw(st.booleans()):
        return draw(st.text(alphabet=_ALPHABET, max_size=60))
    base = draw(st.sampled_from(corpus_texts()))
    i = draw(st.integers(0, len(base)))
    j = draw(st.integers(i, min(len(base), i + 4)))
    return base[:i] + draw(st.text(alphabet=_ALPHABET, max_size=4)) + base[j:]


@settings(max_examples=1000, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(texts())
def test_generated_texts_match_alike(text: str) -> None:
    for table in TABLES:
        python, native, _names, ends = compiled(table)
        assert native_match(native, text, ends) == python_match(python, text, ends), table


@pytest.mark.parametrize(("table", "rule", "old", "new"), [
    ("tokens", "py_tb", "Traceback", "Traceback!"),
    ("heads", "glog", r"\.\d{6}", r"\.\d{5}"),
    ("stream_prefixes", "rank", "[A-Za-z][A-Za-z_-]*", "rank"),
    ("records", "nccl", "INFO|WARN", "INFO"),
])
def test_one_rule_changed_in_one_engine_is_found(table: str, rule: str, old: str, new: str) -> None:
    """The comparison above can fail: the native table built with one rule changed differs on the corpus."""
    python, _native, _names, ends = compiled(table)
    native = native_or_skip()
    items, _ = TABLES[table]
    kept = translatable(items, ends)
    changed = [translate(p.replace(old, new) if n == rule else p, ends_matter=ends) for n, p, _t in kept]
    assert any(p.replace(old, new) != p for n, p, _t in kept if n == rule)
    mutant = native.PatternTable(changed)
    assert any(native_match(mutant, t, ends) != python_match(python, t, ends) for t in all_corpus_texts())
