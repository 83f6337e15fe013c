"""First-character dispatch for a table of alternatives: one small alternation per first character.

Python's ``re`` tries every branch of an alternation at each position; with dozens of grammar
tokens that is most of the per-line cost. The characters each pattern can start with are read from
the start of its source text, and a line is matched only against the branches that can start with
its first character (in the table's order, so the first match still wins). Constructs this reader
does not know count as "any character": it may try too many branches, never too few. This is how
the Python core runs the tables, not part of them (a native engine builds its own automaton).
"""

from __future__ import annotations

import re
from collections.abc import Callable, Iterator, Sequence

_ASCII = [chr(i) for i in range(128)]
_OTHER = "\x80"  # stands for every non-ASCII first character
_DIGITS = set("0123456789")
_ESCAPES = {"d": _DIGITS, "s": set(" \t\n\r\f\v"),
            "w": {c for c in _ASCII if c.isalnum() or c == "_"} | {_OTHER},
            "t": {"\t"}, "n": {"\n"}, "r": {"\r"}, "f": {"\f"}, "v": {"\v"}}
_ZERO_WIDTH = set("bBAZ")  # \b, \B, \A, \Z match no character
ANY = None  # "any character can start a match"


def _char(c: str) -> str:
    return c if c < "\x80" else _OTHER


def _class(pattern: str, i: int) -> tuple[set[str] | None, int]:
    """The members of the class starting at ``pattern[i] == '['``, and the index after it."""
    i += 1
    negate = pattern[i:i + 1] == "^"
    out: set[str] = set()
    first = True
    while i < len(pattern) and (pattern[i] != "]" or first):
        first = False
        c = pattern[i]
        if c == "\\":
            e = pattern[i + 1]
            if e in _ESCAPES:
                out |= _ESCAPES[e]
            elif e == "u":
                out.add(_char(chr(int(pattern[i + 2:i + 6], 16))))
                i += 4
            elif e.isalpha():
                negate = True  # \S, \W, \D...: treat the class as anything
            else:
                out.add(_char(e))
            i += 2
            continue
        if pattern[i + 1:i + 2] == "-" and pattern[i + 2:i + 3] not in ("]", ""):
            lo, hi = ord(c), ord(pattern[i + 2])
            out |= {_char(chr(k)) for k in range(lo, min(hi, 0x80) + 1)}
            i += 3
            continue
        out.add(_char(c))
        i += 1
    return (ANY if negate else out), i + 1


def _outside_classes(pattern: str, i: int = 0) -> Iterator[tuple[int, str]]:
    """(index, character) of each character of ``pattern`` from ``i`` that is neither escaped nor inside
    a character class: what the group and branch scans below look at."""
    in_class = False
    while i < len(pattern):
        c = pattern[i]
        if c == "\\":
            i += 2
            continue
        if in_class:
            in_class = c != "]"
        elif c == "[":
            in_class = True
            if pattern[i + 1:i + 2] == "]":
                i += 1
        else:
            yield i, c
        i += 1


def _group_end(pattern: str, i: int) -> int:
    """Index of the ')' closing the group opened at ``pattern[i] == '('``."""
    depth = 0
    for j, c in _outside_classes(pattern, i):
        if c == "(":
            depth += 1
        elif c == ")":
            depth -= 1
            if depth == 0:
                return j
    raise ValueError(f"unbalanced group in {pattern!r}")


def _branches(body: str) -> list[str]:
    """Top-level '|' branches of a pattern."""
    out, depth, start = [], 0, 0
    for i, c in _outside_classes(body):
        if c == "(":
            depth += 1
        elif c == ")":
            depth -= 1
        elif c == "|" and depth == 0:
            out.append(body[start:i])
            start = i + 1
    out.append(body[start:])
    return out


def _quantifier(pattern: str, i: int) -> tuple[bool, int]:
    """(whether the item before ``i`` may occur zero times, index after its quantifier)."""
    q = pattern[i:i + 1]
    if q in ("?", "*"):
        return True, i + 1 + (pattern[i + 1:i + 2] == "?")
    if q == "+":
        return False, i + 1 + (pattern[i + 1:i + 2] == "?")
    if q == "{":
        end = pattern.index("}", i)
        return pattern[i + 1:end].split(",", 1)[0] in ("", "0"), end + 1
    return False, i


def _first(pattern: str) -> tuple[set[str] | None, bool]:  # noqa: PLR0912, PLR0915 - one case per construct
    """(characters a match can start with, or ANY; whether it can match the empty string)."""
    branches = _branches(pattern)
    if len(branches) > 1:
        out: set[str] = set()
        nullable = False
        for b in branches:
            f, n = _first(b)
            if f is ANY:
                return ANY, False
            out |= f
            nullable = nullable or n
        return out, nullable
    out = set()
    i = 0
    while i < len(pattern):
        c = pattern[i]
        if c in "^$":
            i += 1
            continue
        if c == "(":
            end = _group_end(pattern, i)
            inner = pattern[i + 1:end]
            if inner.startswith("?P<"):
                inner = inner[inner.index(">") + 1:]
            elif inner.startswith("?:"):
                inner = inner[2:]
            elif inner.startswith("?"):
                return ANY, False  # look-around and the like: not used by the tables
            f, n = _first(inner)
            optional, i = _quantifier(pattern, end + 1)
        elif c == "[":
            f, i = _class(pattern, i)
            n = False
            optional, i = _quantifier(pattern, i)
        elif c == "\\":
            e = pattern[i + 1]
            if e in _ZERO_WIDTH:
                i += 2
                continue
            if e in _ESCAPES:
                f = _ESCAPES[e]
            elif e == "u":
                f = {_char(chr(int(pattern[i + 2:i + 6], 16)))}
                i += 4
            elif e.isalpha():
                f = ANY
            else:
                f = {_char(e)}
            n = False
            optional, i = _quantifier(pattern, i + 2)
        elif c == ".":
            f, n = ANY, False
            optional, i = _quantifier(pattern, i + 1)
        else:
            f, n = {_char(c)}, False
            optional, i = _quantifier(pattern, i + 1)
        if f is ANY:
            return ANY, False
        out |= f
        if not (n or optional):
            return out, False
    return out, True


def first_chars(pattern: str) -> set[str] | None:
    """The characters a match of ``pattern`` can start with (None: any, or the empty match)."""
    f, nullable = _first(pattern)
    return ANY if nullable else f


class Dispatch:
    """Matchers for the alternation of ``(name, pattern)`` items (groups named ``prefix + name``),
    one per first character: ``dispatch.table.get(s[0], dispatch.other)(s)`` tries only the items
    that can start with ``s[0]``. ``first`` holds every character some item can start with (all of
    ASCII when one can start with anything)."""

    def __init__(self, items: Sequence[tuple[str, str]], prefix: str = "") -> None:
        firsts = [first_chars(pattern) for _name, pattern in items]
        cache: dict[tuple[int, ...], Callable[[str], re.Match[str] | None]] = {}

        def compiled(idx: tuple[int, ...]) -> Callable[[str], re.Match[str] | None]:
            fn = cache.get(idx)
            if fn is None:
                if idx:
                    fn = re.compile("|".join(f"(?P<{prefix}{items[i][0]}>{items[i][1]})" for i in idx)).match
                else:
                    fn = _no_match
                cache[idx] = fn
            return fn

        self.table = {c: compiled(tuple(i for i, f in enumerate(firsts) if f is None or c in f)) for c in _ASCII}
        self.other = compiled(tuple(i for i, f in enumerate(firsts) if f is None or _OTHER in f))
        self.first = frozenset(c for c, fn in self.table.items() if fn is not _no_match)
        self.any_other = self.other is not _no_match

    def match(self, s: str) -> re.Match[str] | None:
        if not s:
            return None
        return self.table.get(s[0], self.other)(s)


def _no_match(_s: str) -> None:
    return None
