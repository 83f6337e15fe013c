"""The native reading of a line's record heads and grammar token answers as the merger's own
(``merger._split_head``, ``merger._token``), line by line: over the bodies of every corpus line (its
training, printers and dev parts, after the stream prefixes), the raw lines, and generated text of the
characters whose classes differ between the engines. Built from ``rules.py``'s tables at start.
"""

from __future__ import annotations

from functools import cache

from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from streams.assemble import merger as M
from streams.assemble import rules as R
from streams.assemble.engine import line_reader, tried_on
from streams.assemble.rust_regex import translate
from tests.unit.native.engines import native_or_skip
from tests.unit.native.test_merger_state import state_files


@cache
def reader() -> object:
    got = line_reader(native_or_skip())
    assert got is not None
    return got


@cache
def bodies() -> list[str]:
    """Each distinct line and line body (what follows its stream prefixes, then its heads) of the corpus."""
    out: set[str] = set()
    for path in state_files(printers_share=1):
        for line in path.read_bytes().decode("utf-8", "replace").split("\n"):
            text = M.terminal_text(line.removesuffix("\r"))
            body = M.split_prefix(text)[1]
            out.update((text, body, body.lstrip(), M.split_head(body)[3]))
    return sorted(out)


def python_read(body: str) -> tuple[object, ...]:
    head, rhead, every, name, rest = M._split_head(body, None)
    return (head, rhead, every, name, rest, M._token(body) if body.strip() else None)


def native_read(native: object, body: str) -> tuple[object, ...]:
    head, rhead, every, name, rest = native.split_head(body)  # type: ignore[attr-defined]
    return (head, rhead, every, name, rest, native.token(body) if body.strip() else None)  # type: ignore[attr-defined]


def test_every_corpus_body_reads_alike() -> None:
    native = reader()
    texts = bodies()
    assert len(texts) > 50_000, len(texts)
    heads: set[object] = set()
    tokens: set[object] = set()
    for body in texts:
        expected = python_read(body)
        assert native_read(native, body) == expected, body
        heads.add(expected[3])
        tokens.add(expected[5])
    assert len(heads) > 25 and len(tokens) > 100, (len(heads), len(tokens))


_ALPHABET = st.sampled_from([*"0123456789 \t\n:[]()|.,-=_*#@/'\"<>{}abzAZEIW", "٣", "５", "²", "é", "\u0301", "\x1c",
                             "\x85", "\xa0", "\u2028", "\u2502", "\u256d", "\u2500", "日", "\U0001f600", "ǅ", "ſ"])


@st.composite
def texts(draw: st.DrawFn) -> str:
    """Corpus bodies with a few characters changed, and text of the characters whose classes differ."""
    if draw(st.booleans()):
        return draw(st.text(alphabet=_ALPHABET, max_size=60))
    base = draw(st.sampled_from(bodies()))
    i = draw(st.integers(0, len(base)))
    j = draw(st.integers(i, min(len(base), i + 4)))
    return base[:i] + draw(st.text(alphabet=_ALPHABET, max_size=4)) + base[j:]


@settings(max_examples=400, deadline=None, suppress_health_check=list(HealthCheck))
@given(texts())
def test_generated_bodies_read_alike(body: str) -> None:
    assert native_read(reader(), body) == python_read(body)


def test_a_non_ascii_first_character_is_tried_as_python_tries_it() -> None:
    """A head or token pattern is tried on a non-ASCII first character only where the Python core tries
    it (a ``\\d`` before "٣" is not): the dispatch is part of the answer."""
    native = reader()
    for body in ("٣ INFO x", "２０２４-01-01 00:00:00 INFO x", "é: x", "日本 Traceback (most recent call last):"):
        assert native_read(native, body) == python_read(body)


def test_one_rule_changed_in_one_engine_is_found() -> None:
    """The comparison can fail: a native reader with one token and one head rule changed answers otherwise."""
    native = native_or_skip()
    heads = [(f"h_{n}", translate(p.replace(r"\.\d{6}", r"\.\d{5}") if n == "glog" else p), tried_on(p, True))
             for n, p, _r in R.HEADS]
    common = [t for t in R.TOKENS if t[0] in R.COMMON_TOKENS]
    tokens = [(t[0], translate(t[1].replace("Traceback", "Traceback!") if t[0] == "py_tb" else t[1],
                               ends_matter=False), tried_on(t[1], False)) for t in common if len(t) == 2]
    gated = [(t[2], R.TOKEN_ORDER[t[0]], t[0], translate(t[1], ends_matter=False)) for t in common if len(t) > 2]
    mutant = native.LineReader(heads, [bool(r) for _n, _p, r in R.HEADS], set(R.EVERY_LINE), tokens,
                               [R.TOKEN_ORDER[n] for n, _p, _f in tokens], gated)
    differ = [b for b in bodies() if native_read(mutant, b) != python_read(b)]
    assert any("Traceback" in b for b in differ)
    assert any(python_read(b)[3] == "h_glog" for b in differ)
