"""The fast gate: which rules could match a text at all, found in one pass.

With Hyperscan (a multi-pattern matcher, one scan over the text whatever the number of rules) a text
that holds no needle costs one call; without it, each needle is looked for with ``in`` in the
lower-cased text and the few rules that have a ``gate`` regex instead of needles always run. Both
answer "these rules may match"; the rules then decide, so both give the same redaction.
"""

from __future__ import annotations

import logging
import re
import unicodedata
from collections.abc import Callable, Sequence
from functools import lru_cache
from typing import Any

from streams.assemble.hyperscan_cache import cache_dir, cached_database
from streams.assemble.secret_keys import FOREIGN_KEY_WORDS
from streams.assemble.secret_rules import SecretRule

log = logging.getLogger(__name__)

Gate = Callable[[str], set[int]]  # normalised text -> indexes of the rules worth running, and maybe FOLD

# Format characters (zero-width space and joiners, soft hyphen, BOM, bidi marks) split a key name or a
# token without showing; (?i) matching reads the dotless i and the dotted I as i, which NFKC leaves alone.
# A gate answers FOLD for a text holding any of them: the caller drops or folds them and asks again.
# (Every Cf character lies in these blocks; looking through all of Unicode at import costs a third of a second.)
_CF_BLOCKS = ((0, 0x3000), (0xFE00, 0x10000), (0x11000, 0x14000), (0x1BC00, 0x1BD00), (0x1D100, 0x1D200),
              (0xE0000, 0xE0100))
FORMAT_CHARS = frozenset(cp for lo, hi in _CF_BLOCKS for cp in range(lo, hi) if unicodedata.category(chr(cp)) == "Cf")
_TO_FOLD = frozenset([*FORMAT_CHARS, 0x130, 0x131])
# JSON escapes (\u0070) of the characters that matter to the rules once decoded: ASCII, fullwidth ASCII,
# the FOLD characters, the long s and the Kelvin sign, any surrogate pair, and the letters of the password's word in
# other languages (json.dumps escapes every letter past ASCII: "\u043f\u0430\u0440\u043e\u043b\u044c" is пароль).
_ESCAPED = sorted({*range(0x80), *range(0xFF01, 0xFF5F), *(cp for cp in _TO_FOLD if cp < 0x10000), 0x17F, 0x212A,
                   *(ord(c) for w in FOREIGN_KEY_WORDS for c in w + w.upper() if c > "\x7f")})
ESCAPES = r"\\u(" + "|".join(f"{cp:04x}" for cp in _ESCAPED) + r"|d[89ab][0-9a-f][0-9a-f])"
# A URL's percent-escapes of '=', ':' and '@', which hide a key's assignment or a URL's password (the redactor
# then decodes the reserved characters: see redact._JSON_ESCAPE).
# A URL inside another's query encoded twice (a presigned URL behind a download proxy's redirect) writes them
# %253D, %253A, %2540.
PERCENT_ESCAPES = r"%(25)?(3d|3a|40)"
# A colour code (ECMA-48 SGR), which splits a key from its value or a token from its word boundary.
SGR = r"\x1b\["
# JSON's escaped solidus, which PHP's json_encode writes for every '/' by default: "https:\/\/hooks.slack.com\/..."
# hides a URL's path from the rules until decoded.
SOLIDUS = r"\\/"
# A repr's or JSON string's \n (\r, \t) escape right before a prefixed token ("token:\nghp_..."): the escape's
# letter would glue onto the token and hide its word boundary. Only before a word with a '_' or '-' in its first 12
# characters and 16 token characters after it, so that common escaped newlines are not decoded one by one.
ESCAPED_BREAK = r"\\[nrt][A-Za-z0-9]{1,11}[_\-][A-Za-z0-9_\-]{16}"
# nginx's access log (escape=default) writes '"' as \x22 (and a repr may write ' as \x27): a JSON body logged with
# $request_body hides its keys' quotes until decoded.
HEX_QUOTE = r"\\x2[27]"
FOLD = -1


def substring_gate(rules: Sequence[SecretRule]) -> Gate:
    """Pure Python: ``in`` on the lower-cased text for each needle (cost grows with the needles)."""
    by_needle: dict[str, list[int]] = {}
    always = {i for i, r in enumerate(rules) if not r.needles}
    for i, r in enumerate(rules):
        for n in r.needles:
            by_needle.setdefault(n, []).append(i)
    needles = list(by_needle.items())

    fold = re.compile("[" + "".join(re.escape(chr(cp)) for cp in sorted(_TO_FOLD)) + "]")
    escapes = re.compile(ESCAPES, re.IGNORECASE)
    percent = re.compile(PERCENT_ESCAPES, re.IGNORECASE)
    escaped_break = re.compile(ESCAPED_BREAK)
    hex_quote = re.compile(HEX_QUOTE)

    def gate(text: str) -> set[int]:
        low = text.lower()
        hits = set(always)
        if ((not text.isascii() and fold.search(text)) or ("\\u" in text and escapes.search(text))
                or ("%" in text and percent.search(text)) or "\x1b[" in text
                or "\\/" in text or ("\\" in text and (escaped_break.search(text) or hex_quote.search(text)))):
            hits.add(FOLD)
        for needle, idx in needles:
            if needle in low:
                hits.update(idx)
        return hits

    return gate


_NAMED_GROUP = re.compile(r"\(\?P<\w+>")
_BACKREF = re.compile(r"\(\?P=(\w+)\)")
_LOOKAROUND = re.compile(r"\(\?<?[!=][^()]*\)")


def _group_body(pattern: str, name: str) -> str:
    """The named group's own pattern, in a group: what a back-reference to it becomes in the gate (Hyperscan
    takes no back-references; the group's pattern matches whatever the group matched, so the gate matches
    more, never less, and the whole rule set still compiles as one database)."""
    start = pattern.index(f"(?P<{name}>")
    depth, at = 0, start
    while at < len(pattern):
        ch = pattern[at]
        if ch == "\\":
            at += 2
            continue
        if ch == "[":  # a class: its parentheses are literal, and so is a ']' first in it
            at += 2 if pattern.startswith("[^", at) else 1
            at += pattern.startswith("]", at)
            while at < len(pattern) and pattern[at] != "]":
                at += 2 if pattern[at] == "\\" else 1
        elif ch == "(":
            depth += 1
        elif ch == ")":
            depth -= 1
            if depth == 0:
                return pattern[start:at + 1]
        at += 1
    raise ValueError(f"group {name!r} is not closed in {pattern!r}")



def hyperscan_expression(rule: SecretRule) -> bytes:
    """The regex that gates ``rule`` in Hyperscan: its ``gate``, else its pattern in Hyperscan's dialect
    (named groups plain, lookarounds and inline flags dropped: matching more is safe), else its needles."""
    if rule.gate:
        return rule.gate.encode()
    if rule.pattern:
        pattern = _BACKREF.sub(lambda m: _group_body(rule.pattern, m.group(1)), rule.pattern)
        return _LOOKAROUND.sub("", _NAMED_GROUP.sub("(", pattern.replace("(?i)", ""))).encode()
    if rule.needles:
        return "|".join(re.escape(n) for n in rule.needles).encode()
    return rb"\z"  # matches any text, the empty one too (with HS_FLAG_ALLOWEMPTY)


class HyperscanGate:
    """One Hyperscan database with an expression per rule, case-insensitive."""

    def __init__(self, rules: Sequence[SecretRule]) -> None:
        import hyperscan

        expressions = tuple(hyperscan_expression(rule) for rule in rules)
        self._fold_id = len(expressions)
        self._db = _database(expressions, tuple(r.needles for r in rules))
        self._scratch = hyperscan.Scratch(self._db)
        self._hits: set[int] = set()

    def _on_match(self, rule: int, _start: int, _end: int, _flags: int, _ctx: Any) -> None:
        self._hits.add(FOLD if rule == self._fold_id else rule)

    def __call__(self, text: str) -> set[int]:
        hits: set[int] = set()
        self._hits = hits
        self._db.scan(text.encode() if text.isascii() else text.encode("utf-8", "surrogatepass"),
                      match_event_handler=self._on_match, scratch=self._scratch)
        return hits


@lru_cache(maxsize=16)
def _database(expressions: tuple[bytes, ...], needles: tuple[tuple[str, ...], ...]) -> Any:
    """Compiled once per rule set and process, and kept on disk for the next process (a compile takes seconds of
    CPU: :mod:`streams.assemble.hyperscan_cache`); read-only, so shared."""
    import hyperscan

    flags = hyperscan.HS_FLAG_CASELESS | hyperscan.HS_FLAG_SINGLEMATCH | hyperscan.HS_FLAG_ALLOWEMPTY
    # The FOLD characters as UTF-8 byte sequences (Hyperscan scans bytes), last.
    fold = (b"|".join(re.escape(chr(cp).encode("utf-8")) for cp in sorted(_TO_FOLD)) + b"|" + ESCAPES.encode()
            + b"|" + PERCENT_ESCAPES.encode() + b"|" + SGR.encode() + b"|" + SOLIDUS.encode()
            + b"|" + ESCAPED_BREAK.encode() + b"|" + HEX_QUOTE.encode())
    what = [str(flags).encode(), fold, *expressions,
            *("\x00".join(n).encode("utf-8", "surrogatepass") for n in needles)]
    return cached_database(hyperscan, what, lambda: _compiled(hyperscan, expressions, needles, fold, flags),
                           cache_dir())


def _compiled(hyperscan: Any, expressions: tuple[bytes, ...], needles: tuple[tuple[str, ...], ...], fold: bytes,
              flags: int) -> Any:
    try:
        return _compile(hyperscan, [*expressions, fold], flags)
    except hyperscan.error:
        pass
    kept = []
    for expr, rule_needles in zip(expressions, needles, strict=True):
        try:
            _compile(hyperscan, [expr], flags)
            kept.append(expr)
        except hyperscan.error:  # a configured pattern Hyperscan cannot take: its needles, or always
            kept.append("|".join(re.escape(n) for n in rule_needles).encode() if rule_needles else rb"\z")
    return _compile(hyperscan, [*kept, fold], flags)


def _compile(hyperscan: Any, expressions: list[bytes], flags: int) -> Any:
    db = hyperscan.Database(mode=hyperscan.HS_MODE_BLOCK)
    db.compile(expressions=expressions, ids=list(range(len(expressions))), elements=len(expressions),
               flags=[flags] * len(expressions))
    return db


def hyperscan_gate(rules: Sequence[SecretRule]) -> Gate | None:
    """The Hyperscan gate, or None where Hyperscan is not installed."""
    try:
        return HyperscanGate(rules)
    except ImportError:
        return None


def make_gate(rules: Sequence[SecretRule], prefer_hyperscan: bool = True) -> Gate:
    gate = hyperscan_gate(rules) if prefer_hyperscan else None
    if gate is None and prefer_hyperscan:
        log.warning("hyperscan is not installed: secret redaction runs its slower pure-Python gate")
    return gate or substring_gate(rules)
