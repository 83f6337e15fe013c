"""The rule tables' Python patterns as Rust ``regex`` patterns that match exactly the same texts.

The tables (``rules.py``) are written in the part of Python's ``re`` syntax that Rust's ``regex`` crate
also reads (no look-around, no back-references), but a few constructs mean different things there:

- ``\\d``, ``\\w``, ``\\s`` (and ``\\D``, ``\\W``, ``\\S``) follow Python's own definitions (``str.isdecimal``,
  ``str.isalnum`` or ``_``, ``str.isspace``) of the Unicode version this Python has; they are written out
  as explicit classes, so that the native engine does not use its own (newer) tables;
- ``$`` also matches before a newline that ends the text: it becomes ``\\n?\\z`` where the caller says the
  match's end is not used (tokens, records), and is refused where it is (a prefix or head: its end is
  where the body starts);
- ``\\b`` is refused (its "word" would be Rust's), as are flags, look-around, back-references and
  possessive or atomic groups. A refused pattern keeps its table in Python.

Pure: text in, text out; :func:`translate` raises :class:`Untranslatable` with the reason.
"""

from __future__ import annotations

import sys
from collections.abc import Callable
from functools import cache

_META = set("\\.+*?()|[]{}^$#&-~ ")  # characters escaped when written literally (Rust accepts \ before punctuation)
_MAX = sys.maxunicode


class Untranslatable(ValueError):
    """The pattern uses a construct whose meaning the translation cannot keep."""


def _ranges(pred: Callable[[str], bool]) -> list[tuple[int, int]]:
    out: list[tuple[int, int]] = []
    start = None
    for cp in range(_MAX + 2):
        inside = cp <= _MAX and not 0xD800 <= cp <= 0xDFFF and pred(chr(cp))
        if inside and start is None:
            start = cp
        elif not inside and start is not None:
            out.append((start, cp - 1))
            start = None
    return out


def _items(ranges: list[tuple[int, int]]) -> str:
    """Class items (no brackets) for ``ranges``."""
    return "".join(f"\\x{{{a:X}}}" if a == b else f"\\x{{{a:X}}}-\\x{{{b:X}}}" for a, b in ranges)


@cache
def class_items(letter: str) -> str:
    """Python's ``\\d``, ``\\w`` or ``\\s`` as Rust class items."""
    pred = {"d": str.isdecimal, "w": lambda c: c.isalnum() or c == "_", "s": str.isspace}[letter]
    return _items(_ranges(pred))


_SIMPLE = {"t": "\\t", "n": "\\n", "r": "\\r", "f": "\\x0C", "v": "\\x0B", "a": "\\x07"}


def _escape_char(c: str) -> str:
    return "\\" + c if c in _META else c


class _Reader:
    def __init__(self, pattern: str, ends_matter: bool) -> None:
        self.p = pattern
        self.i = 0
        self.ends_matter = ends_matter

    def fail(self, why: str) -> Untranslatable:
        return Untranslatable(f"{why} at {self.i} of {self.p!r}")

    def escape(self, in_class: bool) -> str:
        """The escape at ``self.p[self.i] == '\\\\'``; advances past it."""
        e = self.p[self.i + 1:self.i + 2]
        if not e:
            raise self.fail("a trailing backslash")
        self.i += 2
        low = e.lower()
        if low in "dws" and e.isalpha():
            items = class_items(low)
            if e.islower():
                return items if in_class else f"[{items}]"
            return f"[^{items}]"
        if e in _SIMPLE:
            return _SIMPLE[e]
        if e in "uUx":
            width = {"u": 4, "U": 8, "x": 2}[e]
            digits = self.p[self.i:self.i + width]
            if len(digits) != width or any(c not in "0123456789abcdefABCDEF" for c in digits):
                raise self.fail(f"a \\{e} escape without {width} hex digits")
            self.i += width
            return f"\\x{{{digits}}}"
        if e in "AZ" and not in_class:
            return "^" if e == "A" else "\\z"
        if e.isalnum():
            raise self.fail(f"the escape \\{e}")
        return _escape_char(e)

    def klass(self) -> str:
        """The class at ``self.p[self.i] == '['``."""
        self.i += 1
        out = "["
        if self.p[self.i:self.i + 1] == "^":
            out += "^"
            self.i += 1
        first = True
        while True:
            if self.i >= len(self.p):
                raise self.fail("an unclosed class")
            c = self.p[self.i]
            if c == "]" and not first:
                self.i += 1
                return out + "]"
            first = False
            if c == "\\":
                out += self.escape(in_class=True)
            elif c == "[":
                out += "\\["
                self.i += 1
            elif c in "&~-" and self.p[self.i + 1:self.i + 2] == c:
                raise self.fail("a class set operation Rust reads differently")
            else:
                out += "\\]" if c == "]" else c
                self.i += 1

    def quantifier(self) -> str:
        c = self.p[self.i:self.i + 1]
        if c in ("?", "*", "+"):
            self.i += 1
            q = c
        elif c == "{":
            end = self.p.find("}", self.i)
            body = self.p[self.i + 1:end] if end > 0 else ""
            lo, comma, hi = body.partition(",")
            if end < 0 or not (lo.isdigit() or (comma and not lo)) or (hi and not hi.isdigit()):
                raise self.fail("a '{' that is not a repetition (write it \\{)")
            q = "{" + (lo or "0") + comma + hi + "}"
            self.i = end + 1
        else:
            return ""
        nxt = self.p[self.i:self.i + 1]
        if nxt == "?":
            self.i += 1
            q += "?"
        elif nxt == "+":
            raise self.fail("a possessive quantifier")
        return q

    def group(self, depth: int) -> str:
        """The group at ``self.p[self.i] == '('``."""
        self.i += 1
        if self.p.startswith("?:", self.i):
            self.i += 2
            head = "(?:"
        elif self.p.startswith("?P<", self.i):
            end = self.p.index(">", self.i)
            head = "(?P<" + self.p[self.i + 3:end] + ">"
            self.i = end + 1
        elif self.p.startswith("?", self.i):
            raise self.fail("a group construct Rust has not (look-around, flags, atomic, reference)")
        else:
            head = "("
        inner = self.sequence(depth + 1)
        if self.p[self.i:self.i + 1] != ")":
            raise self.fail("an unclosed group")
        self.i += 1
        return head + inner + ")"

    def atom(self, depth: int) -> tuple[str, bool]:
        """(the next item, whether a quantifier may follow it)."""
        c = self.p[self.i]
        if c == "(":
            return self.group(depth), True
        if c == "[":
            return self.klass(), True
        if c == "\\":
            if self.p[self.i + 1:self.i + 2] in ("b", "B"):
                raise self.fail("\\b (its word characters would be Rust's)")
            return self.escape(in_class=False), True
        if c in "*+?{":
            raise self.fail("a quantifier with nothing to repeat")
        self.i += 1
        if c in {"|", "^"}:
            return c, False
        if c == "$":
            if self.ends_matter:
                raise self.fail("'$' where the match's end is used (Python's also matches before a final newline)")
            return "(?:\\n?\\z)", False
        return ("." if c == "." else _escape_char(c)), True

    def sequence(self, depth: int) -> str:
        out = ""
        while self.i < len(self.p):
            if self.p[self.i] == ")":
                if depth == 0:
                    raise self.fail("an unbalanced ')'")
                return out
            item, repeatable = self.atom(depth)
            out += item + (self.quantifier() if repeatable else "")
        if depth:
            raise self.fail("an unclosed group")
        return out


def translate(pattern: str, *, ends_matter: bool = True) -> str:
    """``pattern`` (Python ``re``, no flags) as a Rust ``regex`` pattern with the same matches."""
    return _Reader(pattern, ends_matter).sequence(0)
