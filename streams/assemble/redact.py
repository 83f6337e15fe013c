"""Secret redaction: every string an output of the assemble stage carries, before it leaves the stage.

``Redactor()(text)`` replaces each secret in a text with ``[REDACTED:<kind>]`` (the kinds and their
shapes are in :mod:`streams.assemble.secret_rules`); ``Redactor.output(out)`` does it to a whole event,
metric point or dead letter: the message, every string field, every key and value of ``attributes``,
``labels`` and ``source`` (a value is a secret by its key's name too: ``{"password": "x"}``), and a
dead letter's error and readable text.

Text is matched after NFKC normalisation with format characters removed, so that fullwidth
(``ｐａｓｓｗｏｒｄ``) and zero-width-split (``pass\\u200bword``) names and values are seen; the
replacement lands on the original characters, and everything else is left as it was.

The gate (:mod:`streams.assemble.secret_gate`) makes a text with no candidate cost one scan.
"""

from __future__ import annotations

import json
import re
import unicodedata
from collections.abc import Callable, Iterable, Sequence
from functools import lru_cache
from typing import Any

from streams.assemble.secret_finders import (
    FINDERS,
    JWK_PRIVATE_MEMBERS,
    NUMBERED_ITEM,
    PEM_BEGIN,
    PEM_END,
    TABLE_ROWS,
    Heading,
    assignment,
    column_cells,
    column_heading,
    column_table,
    command_secrets,
    diagnosed,
    k8s_secret,
    keyed_value,
    name_value,
    name_value_pair,
    numbered_reply,
    raw_headers,
    record_value,
    table_row,
)
from streams.assemble.secret_gate import FOLD, FORMAT_CHARS, make_gate
from streams.assemble.secret_keys import (
    CHECKS,
    RECORD_VALUE_FIELDS,
    is_secret_value,
    key_strength,
    placeholder_token,
    record_secret,
    unquoted,
)
from streams.assemble.secret_rules import (
    DEFAULT_RULES,
    SECRET_PRINTING_COMMAND,
    SECRET_PRINTING_NEEDLES,
    SecretRule,
)
from streams.deadletter import protect_letter

_SECRET_DATA = ("data.", "stringData.")
_MANIFEST_KIND = re.compile(r"^kind:[ \t]*Secret[ \t]*$", re.MULTILINE)
_MANIFEST_HEAD = re.compile(r"apiVersion:[ \t]*[\w./\-]+[ \t]*")
_BASE64_VALUE = re.compile(r"[\"']?(?P<b>[A-Za-z0-9+/]{6,}={0,2})[\"']?")
MANIFEST_EVENTS = 16  # top-level keys of one manifest: a Secret's data follows its kind within these
_REDACTED_MARK = re.compile(r"\[REDACTED:\w+\]")
# A terminal or fold(1) wraps a long word at its width without indenting the rest: a JWT that ends a line (kubectl
# describe secret's token at 80 columns, a curl -v Authorization header through fold -w) goes on at the start of the
# next lines, each as wide as the first but the last. The head is the last word of a line; it is cut when it has no
# signature yet or one shorter than HS256's 43 characters.
_JWT_LINE_HEAD = re.compile(r"(?<![A-Za-z0-9_\-.])eyJ[A-Za-z0-9_\-.]{8,}(?=[ \t]*\r?$)")
_JWT_LINE_TAIL = re.compile(r"[A-Za-z0-9_\-.]+")  # the whole line, its blanks stripped
_JWT_PART = re.compile(r"[A-Za-z0-9_\-]+")
JWT_SIGNATURE_MIN = 43
JWT_WRAP_MIN = 40  # narrower lines are no terminal's width
JWT_TEXTS = 256
# A line that says a password, secret or token was just set, whose value the tool prints next.
_ANNOUNCED = re.compile(r"(?i)\b(?:password|passphrase|secret|token)\b[^\r\n]{0,80}\b(?:successfully )?"
                        r"(?:reset|generated|created|changed|rotated)\b[.!]?[ \t]*$")
_ANNOUNCING_WORDS = ("reset", "generated", "created", "changed", "rotated")
# Lines after which a printer writes a secret alone on its next line(s), as data: (what announces it, how many lines
# follow (a number, or the group "n" of the announcing line), what the secret line looks like (its group "v")).
# When a source's merger leaves each line an event of its own, the next events of that source are looked at.
_LEADS_SECRET_LINES: tuple[tuple[re.Pattern[str], int | str, re.Pattern[str]], ...] = (
    # SMTP AUTH LOGIN (RFC 4954): the server's base64 challenge "Password:", then the client's base64 answer,
    # as smtplib's set_debuglevel prints it (reply: b'334 ...', then "reply: retcode (334); Msg: b'...'", then
    # send: '...\r\n') or JavaMail's debug and swaks print it (alone).
    (re.compile(r"\b334\b[^\r\n]{0,20}\bUGFzc3dvcmQ6\b"), 1,
     re.compile(r"[ \t]*(?:send: b?'|[A-Z]: |[<>~*\-]+ )?(?P<v>[A-Za-z0-9+/]{4,}={0,2})(?:\\r\\n'?)?[ \t]*\r?")),
    # PuTTY-User-Key-File-2/3 (PuTTY docs, appendix C): "Private-Lines: N", then N lines of the private blob.
    (re.compile(r"^Private-Lines: (?P<n>[0-9]{1,3})[ \t]*\r?$"), "n", re.compile(r"(?P<v>[A-Za-z0-9+/]+={0,2})\r?")),
    # A traced command whose output is a secret alone on its line (secret_rules.SECRET_PRINTING_COMMAND); the other
    # traced commands of its pipeline ("+ base64 -d") may come between.
    (re.compile(SECRET_PRINTING_COMMAND + "$"), 1, re.compile(r"(?P<v>\S{6,})[ \t]*\r?")),
    # A NATS .creds file (nsc generate creds): the seed on the line after its BEGIN line.
    (re.compile(r"-----BEGIN [A-Z ]*NKEY SEED-----[ \t]*\r?$"), 1, re.compile(r"[ \t]*(?P<v>S[A-Z2-7]{20,})[ \t]*\r?")),
    # Jenkins' first start: the generated admin password after a blank line.
    (re.compile(r"password to proceed to installation:[ \t]*\r?$"), 1,
     re.compile(r"[ \t]*(?P<v>[0-9a-f]{32})[ \t]*\r?")),
)
# Tables a printer writes under a heading line, every row's value a secret: (the heading, a row (its group "v"; a
# heading or rule line of the table matches without it)). Up to TABLE_ROWS rows; any other line ends the table, a
# blank or a traced command too.
_LEADS_SECRET_TABLES: tuple[tuple[re.Pattern[str], re.Pattern[str]], ...] = (
    # vault kv get: the secret's entries under "====== Data ======" as a Key/Value table, whatever the keys are named.
    (re.compile(r"^=+ Data =+[ \t]*\r?$"),
     re.compile(r"(?:Key[ \t]+Value|-{3}[ \t]+-{5}|[^\s=][^\s]*[ \t]{2,}(?P<v>\S[^\r\n]*?))[ \t]*\r?")),
    # A TOML table that names secrets ([secrets], [tool.x.credentials]: https://toml.io/en/v1.0.0#table), as
    # secret_finders.secret_map reads it in one event: under a key of one word that names no user, host or path,
    # a value of letters and digits; any other key = value line is a row without one.
    (re.compile(r"^[ \t]*\[(?:[A-Za-z0-9_\-]+\.)*(?:secrets|credentials|creds|passwords|tokens|api_?keys)\][ \t]*\r?$"),
     re.compile(r"[ \t]*(?:(?!(?:user|username|login|email|host|url|endpoint|region|project|type|path|name|id|port)"
                r"[ \t=])(?:[a-z]+|[A-Z]+)[ \t]*=[ \t]*(?P<q>[\"']?)(?P<v>(?=[^\s\"']*[0-9])(?=[^\s\"']*[A-Za-z])"
                r"[^\s\"']{8,512})(?P=q)|[A-Za-z_][\w.\-]*[ \t]*=[^\r\n]*)[ \t]*\r?")),
)
_LEAD_LINE_PATTERNS = {p.pattern: p for p in (*(line for _a, _n, line in _LEADS_SECRET_LINES),
                                                *(row for _h, row in _LEADS_SECRET_TABLES))}
_LEAD_NEEDLES = ("UGFzc3dvcmQ6", "Private-Lines:", "NKEY SEED", "to proceed to installation", " Data =",
                 "secrets]", "credentials]", "creds]", "passwords]", "tokens]", "keys]",
                 *SECRET_PRINTING_NEEDLES)
_XTRACE_LINE = re.compile(r"\++[ \t]")
# Column headings that name a secret, as a table's heading line holds them (after two spaces or a tab).
_SECRET_TITLES = ("  Secret", "  SECRET", "\tSecret", "\tSECRET", "  Token", "  TOKEN", "  Password", "  PASSWORD")
_SECRET_FIRST_TITLES = tuple(dict.fromkeys(t.lstrip() for t in _SECRET_TITLES))  # a first column (kubeadm token list)
_LABELLED_VALUE = re.compile(r"[ \t]*[A-Za-z][A-Za-z ]{0,40}:[ \t]+(?P<v>\S+)[ \t]*\r?")
# A line of a key's base64: a full line, or a shorter tail that shows base64's digits, '+', '/' or padding
# (a short word such as "done" ends the block instead).
_PEM_BODY_LINE = re.compile(r"[A-Za-z0-9+/]{40,}={0,2}|(?=[A-Za-z+/]*[0-9+/=])[A-Za-z0-9+/]{4,}={0,2}")
_PREFIXED_BODY_LINE = re.compile(r"[ \t]([A-Za-z0-9+/]{40,}={0,2}|(?=[A-Za-z+/]*[0-9+/=])[A-Za-z0-9+/]{4,}={0,2})$")
_PEM_HEADER = re.compile(r"(?:Proc-Type|DEK-Info|Version|Comment|Hash|Charset): .*")
_FOLDS = str.maketrans({**dict.fromkeys(FORMAT_CHARS), 0x131: "i", 0x130: "I"})
_RECORD_TRIGGERS = RECORD_VALUE_FIELDS | {"key", "encoded"}  # the field names a record that names its secret holds
MEMO_MAX_CHARS = 256  # strings up to this long (labels, source fields, keys) are memoised
MEMO_ENTRIES = 50_000

# The fields of each output that can carry text from the input: strings, then maps and records. The rest
# (event_id, project, level, error_class, signal, multiline_kind, raw, metrics) the stage writes itself
# from its own vocabularies; a metric point's ``gpu`` record is always null here (only the GPU sampler of
# `sluice ship` fills it, from the driver, never from a log line). A unit test holds these lists to the
# Avro contracts: a new text field fails it.
# A JSON logger's message may name what a field of its record holds: python-json-logger's
# logger.info("using deploy token", extra={"value": tok}) prints {"message": "using deploy token", "value": "..."}
# (https://github.com/nhairs/python-json-logger/blob/main/src/pythonjsonlogger/core.py: extra's keys beside message).
# A short one-line message is then the name of the record's value field, as a key above it would be.
NAMING_MESSAGE_MAX_CHARS = 80


def _naming_message(msg: Any) -> str | None:
    if msg.__class__ is not str or len(msg) > NAMING_MESSAGE_MAX_CHARS or "\n" in msg:
        return None
    return msg


TEXT_FIELDS: dict[str, tuple[tuple[str, ...], tuple[str, ...]]] = {
    "event": (("message", "logger", "task_id", "model_name", "task_type", "phase", "error_type", "root_cause"),
              ("source", "labels", "attributes")),
    "metric": (("task_id", "task_type", "model_name", "phase"), ("source", "labels")),
}
OWN_FIELDS: dict[str, frozenset[str]] = {
    "event": frozenset({"event_id", "project", "level", "error_class", "signal", "multiline_kind", "raw"}),
    "metric": frozenset({"event_id", "project", "metrics", "raw", "gpu"}),
}


def _nfkc(text: str) -> str:
    return text if unicodedata.is_normalized("NFKC", text) else unicodedata.normalize("NFKC", text)


# JSON's escapes of a character (\u00e9, a surrogate pair, \/): a key name or a URL written with them is
# matched as the characters they stand for.
# A URL's percent-escapes of the separators (``access_token%3D...``, ``https%3A%2F%2Fuser%3Apw%40host``, a
# redirect URL inside another's query) likewise: ``= : @ / & ? " ' ; , #`` (RFC 3986's reserved characters that
# rules read as separators; letters, spaces and '+' are left as they are), and their escapes escaped again
# (``%253D``: a URL in the query of a URL in a query).
# ECMA-48 colour codes (SGR: "\x1b[36m", "\x1b[0m"; also JSON-escaped, "\u001b[36m") that structlog, rich, colorlog
# and loguru put around keys and values are read as nothing, so that "\x1b[36mapi_key\x1b[0m=\x1b[35mv" is an
# assignment and a token right after a code keeps its word boundary.
_JSON_ESCAPE = re.compile(r"(?:\x1b|\\u001[bB])\[[0-9;]*m"
                          r"|\\u(?:[dD][89abAB][0-9a-fA-F]{2}\\u[dD][c-fC-F][0-9a-fA-F]{2}|[0-9a-fA-F]{4})|\\/"
                          r"|%(?:25)?(?:2[2367cCfF]|3[aAbBdDfF]|40)"  # (%25: encoded twice, see PERCENT_ESCAPES)
                          r"|\\[nrt](?=[A-Za-z0-9]{1,11}[_\-][A-Za-z0-9_\-]{16})"  # see secret_gate.ESCAPED_BREAK
                          r"|\\x2[27]")  # see secret_gate.HEX_QUOTE


@lru_cache(maxsize=4096)  # a line of the same escape repeated must not cost a JSON parse per escape
def _unescape(escape: str) -> str:
    if escape == "\\/":
        return "/"
    if escape[-1] == "m" and escape[0] in "\x1b\\":
        return ""
    if escape[0] == "%":
        return chr(int(escape[-2:], 16))
    if escape[1] == "x":
        return chr(int(escape[2:], 16))
    try:
        return str(json.loads(f'"{escape}"'))
    except ValueError:
        return escape


@lru_cache(maxsize=4096)
def _folded(ch: str) -> str:
    """A character past ASCII (or an escape's text) as the rules read it: NFKC, format characters out."""
    return unicodedata.normalize("NFKC", ch).translate(_FOLDS)


_PAST_ASCII = re.compile(r"[^\x00-\x7f]")


def _char_map(text: str) -> tuple[str, list[int]]:
    """Normalised text character by character (JSON escapes decoded), with the original index of each
    of its characters. A run of ASCII between escapes is taken whole: a progress bar's line is thousands of
    characters, and one Python step per character would cost seconds on a megabyte of them."""
    out: list[str] = []
    index: list[int] = []
    escapes = ([(m.start(), m.end()) for m in _JSON_ESCAPE.finditer(text)]
               if "\\" in text or "%" in text or "\x1b" in text else [])
    pos = 0
    for start, end in (*escapes, (len(text), len(text))):
        if pos < start:
            _plain_map(text, pos, start, out, index)
        if end > start:
            ch = _unescape(text[start:end])
            n = ch if ch < "\x80" else _folded(ch)
            out.append(n)
            index.extend([start] * len(n))
        pos = end
    index.append(len(text))
    return "".join(out), index


def _plain_map(text: str, a: int, b: int, out: list[str], index: list[int]) -> None:
    """``text[a:b]`` (no escape in it) into ``out`` and ``index``, ASCII runs at once."""
    piece = text[a:b]
    if piece.isascii():
        out.append(piece)
        index.extend(range(a, b))
        return
    at = 0
    for m in _PAST_ASCII.finditer(piece):
        i = m.start()
        if at < i:
            out.append(piece[at:i])
            index.extend(range(a + at, a + i))
        n = _folded(piece[i])
        out.append(n)
        index.extend([a + i] * len(n))
        at = i + 1
    if at < len(piece):
        out.append(piece[at:])
        index.extend(range(a + at, b))


def _source_key(value: dict[str, Any]) -> tuple[Any, ...]:
    """The source an event came from, as the per-source memories (leads, replies, tables) are keyed."""
    return tuple((value.get("source") or {}).values())


def _member(key: str, name: str) -> bool:
    """Is ``key`` the member ``name`` itself or ``name`` under a dotted prefix (a flattened JSON object)?"""
    return key.endswith(name) and (len(key) == len(name) or key[-len(name) - 1] == ".")


def _lifted_secrets(d: dict[str, Any]) -> dict[str, Any]:
    """``d`` with the secrets of a whole object lifted from JSON redacted, else ``d``: a Kubernetes Secret's data
    whatever the keys are named, a terraform random_password's instances, Secret Manager's payload.data, and a
    JSON Web Key's private members (flattened under a dotted prefix), as the text rules find them where the key
    is printed (``secret_finders.jwk_private``)."""
    if d.get("kind") == "Secret":
        d = {k: "[REDACTED:k8s_secret]" if k.__class__ is str and k.startswith(_SECRET_DATA) and v else v
             for k, v in d.items()}
    if d.get("type") == "random_password":  # terraform state: hashicorp/random's result (and its hash) is the password
        d = {k: "[REDACTED:terraform_random_password]" if k.__class__ is str and v and (
            k == "instances" or k.rpartition(".")[2] in ("result", "bcrypt_hash")) else v for k, v in d.items()}
    # one pass over the keys: Google Secret Manager's AccessSecretVersionResponse (payload.data is the secret's
    # value, base64) and a JSON Web Key (its kty member), each under any dotted prefix
    payload: list[str] = []
    kty: list[str] = []
    for k in d:
        if k.__class__ is str:
            if _member(k, "kty"):
                kty.append(k[:-3])
            elif _member(k, "payload.data"):
                payload.append(k)
    if payload:
        d = {k: "[REDACTED:gcp_secret_payload]" if v and k in payload else v for k, v in d.items()}
    if not kty:
        return d
    private = {p + m for p in kty for m in JWK_PRIVATE_MEMBERS}
    return {k: "[REDACTED:jwk_private]" if k in private and v else v for k, v in d.items()}


class Redactor:
    """Finds and replaces secrets. ``extra_rules`` add kinds (``SecretRule``), ``allow`` are regexes of
    values never redacted (a public test token, a known-safe id), ``secret_keys`` add key-name endings
    that always hold a secret. Not thread-safe (one per worker thread)."""

    def __init__(self, rules: Sequence[SecretRule] = DEFAULT_RULES, *, extra_rules: Iterable[SecretRule] = (),
                 allow: Iterable[str] = (), secret_keys: Iterable[str] = (), prefer_hyperscan: bool = True) -> None:
        self.rules = [*rules, *extra_rules]
        self.allow = [re.compile(a) for a in allow]
        extra = frozenset(k.lower().replace("_", "").replace("-", "").replace(".", "") for k in secret_keys)
        self._extra_keyword = re.compile("|".join(map(re.escape, sorted(extra))), re.IGNORECASE) if extra else None
        if extra:  # configured key names are looked for in text as the built-in ones are
            self.rules.append(SecretRule("assignment", tuple(sorted(extra)), finder="assignment_extra"))
        self.strength: Callable[[str], str | None] = lru_cache(maxsize=8192)(
            lambda key: key_strength(key, extra))
        self.gate = make_gate(self.rules, prefer_hyperscan)
        self._finders: list[Callable[[str], list[tuple[int, int, str]]]] = [
            self._finder(r) for r in self.rules]
        self._verbatim = frozenset(i for i, r in enumerate(self.rules) if r.verbatim)
        self._memo: dict[str, str] = {}
        self._pairs: dict[tuple[str, str], tuple[str, str]] = {}
        self._record_keys: dict[tuple[Any, ...], bool] = {}  # key sets of maps: may they hold a named value?
        self._last: str | None = None  # the last text returned redacted: not looked at twice
        self._pem_open: dict[tuple[Any, ...], bool] = {}  # sources inside a private key split across events
        self._jwt_open: dict[tuple[Any, ...], tuple[str, int]] = {}  # sources whose last line ends in a cut JWT
        # redacted texts that held a JWT's or a PEM block's start: what they were before
        self._jwt_texts: dict[str, str] = {}
        self._manifest_open: dict[tuple[Any, ...], int] = {}  # sources inside a Secret manifest: events left
        self._manifest_head: dict[tuple[Any, ...], bool] = {}  # sources whose last event began a manifest
        self._reply_name: dict[tuple[Any, ...], tuple[int, str]] = {}  # sources whose last event named a secret
        self._announced: dict[tuple[Any, ...], bool] = {}  # sources whose last event announced a new password
        # sources: secret lines to come (how many, what they look like, whether blank and traced lines come between)
        self._lead: dict[tuple[Any, ...], tuple[int, re.Pattern[str], bool]] = {}
        self._columns: dict[tuple[Any, ...], tuple[Heading, int]] = {}  # sources under a table's heading
        self._by_sid: dict[str, list[tuple[Any, str, Any]]] | None = None  # the memories above by source (a cache)

    def _memories(self) -> tuple[tuple[str, dict[tuple[Any, ...], Any]], ...]:
        return (("pem", self._pem_open), ("jwt", self._jwt_open), ("manifest", self._manifest_open),
                ("manifest_head", self._manifest_head), ("reply", self._reply_name), ("announced", self._announced),
                ("lead", self._lead), ("columns", self._columns))

    def source_state(self, sid: str) -> list[list[Any]] | None:
        """What the source ``sid`` has open over its events (a private key's lines, a Secret manifest, the rows of
        a table that names a secret ...) as JSON-able ``[rank, memory, value]`` rows, or None: saved with the
        assembler's state of the source, so that a restarted worker redacts the events to come as the running one
        would have (:mod:`streams.assemble.state`). Only memories kept by ``sid`` (``output(out, sid)``)."""
        rows = self._index().get(sid)
        if not rows:
            return None
        return [[rank, name, [v[0], v[1].pattern, v[2]] if name == "lead" else v] for rank, name, v in rows]

    def _index(self) -> dict[str, list[tuple[Any, str, Any]]]:
        """The memories kept by source id, ``(rank, memory, value)`` each: built in one pass over them for all the
        sources a turn saves or a take-over restores, and dropped when an output may change them."""
        if self._by_sid is None:
            by_sid: dict[str, list[tuple[Any, str, Any]]] = {}
            for name, memory in self._memories():
                for key, v in memory.items():
                    if len(key) == 2 and key[0].__class__ is str:
                        by_sid.setdefault(key[0], []).append((key[1], name, v))
            self._by_sid = by_sid
        return self._by_sid

    def restore_source(self, sid: str, rows: list[list[Any]] | None) -> None:
        """Put back what :meth:`source_state` saved for ``sid`` (a line pattern no rule has any longer is dropped)."""
        self.forget_source(sid)
        memories = dict(self._memories())
        restored = []
        for rank, name, saved in rows or ():
            value = saved
            if name == "lead":
                pattern = _LEAD_LINE_PATTERNS.get(saved[1])
                if pattern is None:
                    continue
                value = (saved[0], pattern, saved[2])
            elif name == "columns":
                value = ((saved[0][0], [tuple(c) for c in saved[0][1]]), saved[1])
            elif saved.__class__ is list:
                value = tuple(saved)
            if name in memories:
                memories[name][(sid, rank)] = value
                restored.append((rank, name, value))
        if restored:
            self._index()[sid] = restored

    def forget_source(self, sid: str) -> None:
        """Drop what ``sid`` has open (its state was deleted, or is being put back): its rows of the index, not a scan
        of every source's memories for each source a take-over restores."""
        memories = dict(self._memories())
        for rank, name, _v in self._index().pop(sid, ()):
            memories[name].pop((sid, rank), None)

    def _finder(self, rule: SecretRule) -> Callable[[str], list[tuple[int, int, str]]]:
        kind = rule.kind
        if rule.finder == "assignment_extra":
            strength, keyword = self.strength, self._extra_keyword
            return lambda text: [(a, b, "secret") for a, b in assignment(text, strength, keyword)]  # type: ignore[arg-type]
        if rule.finder:
            if rule.finder not in FINDERS:
                raise ValueError(f"secret rule {kind!r}: no finder {rule.finder!r} (known: {sorted(FINDERS)})")
            fn = FINDERS[rule.finder]
            if fn is command_secrets:  # judges papermill's NAME by the key names, the configured ones too
                strength = self.strength
                return lambda text: [(a, b, kind) for a, b in command_secrets(text, strength)]
            # judged by key name, with the configured names too
            if fn in (assignment, name_value, name_value_pair, keyed_value, diagnosed, record_value, numbered_reply,
                      table_row, column_table, raw_headers):
                strength = self.strength
                return lambda text: [(a, b, "secret") for a, b in fn(text, strength)]
            return lambda text: [(a, b, kind) for a, b in fn(text)]
        rx = re.compile(rule.pattern)
        group = "s" if "s" in rx.groupindex else 0
        check = CHECKS[rule.check] if rule.check else None

        def find(text: str) -> list[tuple[int, int, str]]:
            out = []
            for m in rx.finditer(text):
                a, b = m.span(group)
                if a < b and (check is None or check(text[a:b])) and not placeholder_token(text[a:b]):
                    out.append((a, b, kind))
            return out

        return find

    # -- text -----------------------------------------------------------------------------------------------
    def normalised(self, text: str) -> str:
        """The text as the rules see it: NFKC, format characters dropped, JSON escapes decoded."""
        return text if text.isascii() and FOLD not in self.gate(text) else _char_map(text)[0]

    def spans(self, text: str, hits: set[int] | None = None) -> list[tuple[int, int, str]]:
        """Secret spans of ``text`` (normalised: see ``normalised``), overlapping ones merged."""
        if hits is None:
            hits = self.gate(text)
            hits.discard(FOLD)
        if not hits:
            return []
        found: list[tuple[int, int, str]] = []
        for i in sorted(hits):
            found.extend(self._finders[i](text))
        if self.allow:
            found = [s for s in found if not any(a.fullmatch(text[s[0]:s[1]]) for a in self.allow)]
        return _merged(found)

    def _text_spans(self, text: str) -> list[tuple[int, int, str]]:
        # Most texts are ASCII: one scan. Others are scanned NFKC-normalised; a text whose normalised form
        # differs, or that holds format characters or JSON escapes of letters (FOLD), is matched character by
        # character through _char_map, so that the replacements land on its own characters.
        norm = text if text.isascii() else _nfkc(text)
        hits = self.gate(norm)
        if FOLD in hits or (hits and norm is not text and norm != text):
            return self._mapped_spans(text)
        return self.spans(text, hits) if hits else []

    def __call__(self, text: str) -> str:
        if not text or text is self._last:
            return text
        view = _rich_view(text) if text[:1] in "[ " and "\n" in text else None
        panel = (_panel_view(text) if view is None and "\n" in text and any(c in text for c in _FRAME_CHARS)
                 else None)
        if panel is not None:
            # a panel's lines: the rules read them unframed, a value cut at the frame's edge joined again, and the
            # spans found there land on the lines as printed
            joined, index = panel
            spans = _merged([(a, b, kind) for va, vb, kind in self._text_spans(joined) for a, b in _runs(index[va:vb])]
                            + self._text_spans(text))
        elif view is None:
            spans = self._text_spans(text)
        else:
            # a RichHandler row: the message as the record wrote it, its spans mapped back onto the lines, and the
            # row's own (a token the rules find as wrapped there), the path column, the printer's, left out
            joined, index, (column, path_end) = view
            spans = [(a, b, kind) for va, vb, kind in self._text_spans(joined) for a, b in _runs(index[va:vb])]
            for a, b, kind in self._text_spans(text):
                end = column if column < b <= path_end else b  # a value read up to or into the path column: cut
                if a < end:
                    spans.append((a, end, kind))
            spans = _merged(spans)
        if not spans:
            self._last = text
            return text
        parts: list[str] = []
        pos = 0
        for a, b, kind in spans:
            start = max(a, pos)
            # Newlines are kept, so that a redacted block keeps its line count.
            parts.append(text[pos:start] + f"[REDACTED:{kind}]" + "\n" * text.count("\n", start, b))
            pos = max(pos, b)
        parts.append(text[pos:])
        out = "".join(parts)
        self._last = out
        # the message's builder redacts it before output() looks for a JWT cut at its end, or a private key's
        # block opened and left for the next events
        if "eyJ" in text or "PRIVATE KEY" in text:
            if len(self._jwt_texts) >= JWT_TEXTS:
                self._jwt_texts.clear()
            self._jwt_texts[out] = text
        return out

    def _mapped_spans(self, text: str) -> list[tuple[int, int, str]]:
        """Spans found in the character-by-character normalisation, mapped back to ``text``."""
        norm, index = _char_map(text)
        hits = self.gate(norm)
        hits.discard(FOLD)
        spans = [(index[a], index[b - 1] + 1, k) for a, b, k in self.spans(norm, hits)] if hits else []
        if "%" in text and self._verbatim:  # a URL's password holding %40 or %2F: decoded, they would end it early
            verbatim = self._verbatim.intersection(self.gate(text))
            if verbatim:
                spans = _merged(spans + self.spans(text, set(verbatim)))
        return spans

    def short(self, text: str) -> str:
        """``self(text)``, memoised for short strings (labels, source fields, keys repeat)."""
        if len(text) > MEMO_MAX_CHARS:
            return self(text)
        out = self._memo.get(text)
        if out is None:
            out = self(text)
            if len(self._memo) >= MEMO_ENTRIES:
                self._memo.clear()
            self._memo[text] = out
        return out

    # -- structured values --------------------------------------------------------------------------------
    def _pair(self, key: str, value: str) -> tuple[str, str]:
        """A key and its string value, redacted; the value replaced whole when the key names a secret."""
        strength = self.strength(key)
        if strength is not None and is_secret_value(strength, unquoted(value), key):
            return self.short(key), "[REDACTED:secret]"
        return self.short(key), self.short(value)

    def mapping(self, d: dict[str, Any], parent: str | None = None) -> dict[str, Any]:
        """Keys and string values redacted; a value whose key names a secret replaced whole, and the value field
        of a record that names a secret (``parent``: the key the map is held under). Returns ``d`` itself when
        nothing changed (dicts are shared between the events of one source)."""
        new: dict[str, Any] | None = None
        pairs = self._pairs
        record = self._record(d, parent)
        if record is not d:
            d = new = record
        lifted = _lifted_secrets(d)
        if lifted is not d:
            d = new = lifted
        for k, v in d.items():
            if v is None:
                continue
            nk: Any
            nv: Any
            if v.__class__ is str and k.__class__ is str:
                done = pairs.get((k, v))
                if done is None:
                    done = self._pair(k, v)
                    if len(k) + len(v) <= MEMO_MAX_CHARS:
                        if len(pairs) >= MEMO_ENTRIES:
                            pairs.clear()
                        pairs[(k, v)] = done
                nk, nv = done
            else:
                nk, nv = self._other(k, v)
            # (the memos give back the text of an earlier event's key or value: equal text is no change, and a
            # key taken for a changed one rebuilt the map, each key of each event: 100 keys cost 2 ms an event)
            key_changed = nk is not k and nk != k
            if key_changed or (nv is not v and (nv.__class__ is not str or nv != v)):
                if new is None:
                    new = dict(d)
                if key_changed:  # the key itself held a secret: rebuilt in order, the new key in its place
                    new = {(nk if k0 is k else k0): v0 for k0, v0 in new.items()}
                new[nk if key_changed else k] = nv
        return d if new is None else new

    def _record(self, d: dict[str, Any], parent: str | None) -> dict[str, Any]:
        """``d`` with the value field of each record that names a secret replaced (a new dict), else ``d``. A
        record is the map itself or, as lifted JSON is flattened, the keys that share a dotted prefix
        (``Parameter.Name``, ``Parameter.Value``)."""
        keys = tuple(d)
        look = self._record_keys.get(keys)
        if look is None:  # key sets repeat from event to event: whether one can hold a record is decided once
            look = any(k.__class__ is str and k.rpartition(".")[2].lower() in _RECORD_TRIGGERS for k in keys)
            if len(self._record_keys) >= MEMO_ENTRIES:
                self._record_keys.clear()
            self._record_keys[keys] = look
        if not look:
            return d
        groups: dict[str, dict[str, str]] = {}
        for k, v in d.items():
            if k.__class__ is str and v.__class__ is str:
                prefix, _, last = k.rpartition(".")
                groups.setdefault(prefix, {})[last.lower()] = k
        secret: set[str] = set()
        for prefix, fields in groups.items():
            values = {f: d[k] for f, k in fields.items()}
            found = record_secret(values, prefix.rpartition(".")[2] if prefix else parent, self.strength)
            if found is not None and is_secret_value(found[1], unquoted(values[found[0]]), found[0]):
                secret.add(fields[found[0]])
        return {k: "[REDACTED:secret]" if k in secret else v for k, v in d.items()} if secret else d

    def _other(self, key: Any, value: Any) -> tuple[Any, Any]:
        """A key with a value that is not a string: a nested map, a list (of a secret-named key: each string
        judged as that key's value), a number."""
        new_key = self.short(key) if key.__class__ is str else key
        if isinstance(value, dict):
            return new_key, self.mapping(value, key if key.__class__ is str else None)
        if isinstance(value, list):
            items = [(self._pair(key, x)[1] if key.__class__ is str else self.short(x)) if x.__class__ is str
                     else self.mapping(x) if isinstance(x, dict) else x for x in value]
            return new_key, value if all(a is b for a, b in zip(items, value, strict=True)) else items
        return new_key, value

    def output(self, out: Any, sid: str | None = None) -> Any:
        """Redact an assemble output (``.kind`` event, metric or dead_letter; ``.value`` its dict) in place.

        ``sid``: the source the output came from, as the assembler names it. The memories a secret over several
        events needs are then kept by it (and its rank: interleaved ranks are apart) and saved with its state
        (:meth:`source_state`); without it they are kept by the output's source fields."""
        value = out.value
        if out.kind == "dead_letter":
            self.letter(value)
            return out
        strings, maps = TEXT_FIELDS[out.kind]
        key = _source_key(value) if sid is None else (sid, (value.get("source") or {}).get("rank"))
        self._by_sid = None
        msg = value.get("message")
        if msg and (self._columns or any(t in msg for t in _SECRET_TITLES) or msg.startswith(_SECRET_FIRST_TITLES)):
            # (before the other rules, whose marks would move the row's cells off their headings)
            value["message"] = self._column_rows(key, msg)
        raw = self._jwt_texts.pop(msg, msg) if msg and self._jwt_texts else msg
        for k in strings:
            v = value.get(k)
            if v:
                value[k] = self(v) if k == "message" else self.short(v)
        msg = value.get("message")
        if msg and raw and (self._jwt_open or "eyJ" in raw):
            value["message"] = msg = self._wrapped_jwt(key, raw, msg)
        if msg and (self._pem_open or "PRIVATE KEY" in msg or (raw and "PRIVATE KEY" in raw)):
            value["message"] = msg = self._pem_lines(key, msg, raw or msg)
        if msg and (self._manifest_open or self._manifest_head or "Secret" in msg or msg.startswith("apiVersion:")):
            value["message"] = self._secret_manifest(key, msg)
        if msg and (self._reply_name or (") \"" in msg and msg.lstrip()[:1].isdigit())):
            value["message"] = self._numbered_reply(key, msg)
        if msg and (self._announced or msg.rstrip(" \t.!")[-9:].lower().endswith(_ANNOUNCING_WORDS)):
            value["message"] = msg = self._announced_value(key, msg)
        if msg and (self._lead or any(n in msg for n in _LEAD_NEEDLES)):
            value["message"] = self._led_lines(key, msg)
        named = _naming_message(raw)
        for k in maps:
            v = value.get(k)
            if v:
                value[k] = self.mapping(v, named if k == "attributes" else None)
        return out

    def _wrapped_jwt(self, key: tuple[Any, ...], raw: str, msg: str) -> str:
        """A JWT a terminal wrapped onto the start of the next lines, within the event or over the source's next
        events (``raw``: the message as it came; redaction keeps its lines): after a line that ends in a cut JWT, the
        lines that are each one word going on with it (the last one narrower than the first)."""
        state = self._jwt_open.pop(key, None)
        raw_lines = raw.split("\n")
        msg_lines = msg.split("\n")
        same = len(raw_lines) == len(msg_lines)
        changed = False
        for i, line in enumerate(raw_lines):
            tail = state is not None
            state, new = _jwt_line(state, line)
            if new is not None and same and (tail or msg_lines[i] == line):
                msg_lines[i] = new
                changed = True
        if state is not None:
            if len(self._jwt_open) >= MEMO_ENTRIES:
                self._jwt_open.clear()
            self._jwt_open[key] = state
        return "\n".join(msg_lines) if changed else msg

    def _pem_lines(self, key: tuple[Any, ...], msg: str, raw: str) -> str:
        """A private key whose lines a source's merger left as events of their own: after an event that opens
        a block and does not close it, the source's base64 lines are redacted whole until its END line
        (also redacted by the ``pem`` finder) or the first line that is not base64 or a PEM header. The block's
        opening is read in the event as it came (``raw``): an env dump's ``SSH_PRIVATE_KEY=-----BEGIN ...`` line
        has had its value redacted, BEGIN line and all, by then."""
        if key in self._pem_open:
            stripped = _REDACTED_MARK.sub("", msg).strip()
            if _PEM_BODY_LINE.fullmatch(stripped) and not PEM_END.search(msg):
                return "[REDACTED:private_key]"
            # each line behind a prefix of its own (syslog's host and tag, kubectl's --prefix): its last word
            prefixed = _PREFIXED_BODY_LINE.search(stripped)
            if prefixed is not None and not PEM_END.search(msg):
                return msg[:msg.rindex(prefixed.group(1))] + "[REDACTED:private_key]"
            if PEM_END.search(msg) or not (_PEM_HEADER.fullmatch(stripped) or not stripped):
                self._pem_open.pop(key)
        begins = list(PEM_BEGIN.finditer(raw))
        if begins and not PEM_END.search(raw, begins[-1].end()):
            if len(self._pem_open) >= MEMO_ENTRIES:
                self._pem_open.clear()
            self._pem_open[key] = True
        return msg

    def _secret_manifest(self, key: tuple[Any, ...], msg: str) -> str:
        """A Kubernetes Secret in YAML whose top-level keys a source's merger left as events of their own: the
        ``data:`` or ``stringData:`` event after ``kind: Secret`` (within the same manifest) is redacted."""
        left = self._manifest_open.pop(key, 0)
        after_head = self._manifest_head.pop(key, False)
        if _MANIFEST_HEAD.fullmatch(msg):
            if len(self._manifest_head) >= MEMO_ENTRIES:
                self._manifest_head.clear()
            self._manifest_head[key] = True
        elif after_head and msg.startswith("data:"):
            # kubectl prints a manifest's keys sorted, so a Secret's data comes before its kind: right after the
            # apiVersion line, a data block whose every value is base64 is taken for a Secret's (a ConfigMap's
            # data is text).
            spans = k8s_secret("kind: Secret\n" + msg)
            shift = len("kind: Secret\n")
            if spans and all((m := _BASE64_VALUE.fullmatch(msg, a - shift, b - shift)) and len(m["b"]) % 4 == 0
                             for a, b in spans):
                msg = _replace_spans(msg, [(a - shift, b - shift) for a, b in spans], "k8s_secret")
        if _MANIFEST_KIND.search(msg):
            if len(self._manifest_open) >= MEMO_ENTRIES:
                self._manifest_open.clear()
            self._manifest_open[key] = MANIFEST_EVENTS
        elif left and not msg.startswith(("---", "apiVersion:")):
            if msg.startswith(("data:", "stringData:")):
                shift = len("kind: Secret\n")
                msg = _replace_spans(msg, [(a - shift, b - shift) for a, b in k8s_secret("kind: Secret\n" + msg)],
                                     "k8s_secret")
            self._manifest_open[key] = left - 1
        return msg

    def _numbered_reply(self, key: tuple[Any, ...], msg: str) -> str:
        """redis-cli's numbered reply whose items a source's merger left as events of their own: the value after a
        secret's name (``1) "requirepass"``, then ``2) "x"``)."""
        named = self._reply_name.pop(key, None)
        item = NUMBERED_ITEM.fullmatch(msg)
        if item is None:
            return msg
        n, v = int(item.group("n")), item.group("v")
        if named is not None and n == named[0] + 1:
            strength = self.strength(named[1])
            if is_secret_value(strength, v, named[1]):
                return msg[:item.start("v")] + "[REDACTED:secret]" + msg[item.end("v"):]
        strength = self.strength(v) if n % 2 and v else None
        if strength is not None and strength != "header":
            if len(self._reply_name) >= MEMO_ENTRIES:
                self._reply_name.clear()
            self._reply_name[key] = (n, v)
        return msg

    def _announced_value(self, key: tuple[Any, ...], msg: str) -> str:
        """A password that a tool announces in one line and prints in the next (Elasticsearch's reset-password tool:
        "Password for the [elastic] user successfully reset." then "New value: <password>"), the two lines left as
        events of their own: the next event of the source, when it is a label and one value."""
        if self._announced.pop(key, False):
            m = _LABELLED_VALUE.fullmatch(msg)
            if m is not None and CHECKS["heading_value"](m.group("v")):
                return msg[:m.start("v")] + "[REDACTED:secret]" + msg[m.end("v"):]
        if _ANNOUNCED.search(msg):
            if len(self._announced) >= MEMO_ENTRIES:
                self._announced.clear()
            self._announced[key] = True
        return msg

    def _led_lines(self, key: tuple[Any, ...], msg: str) -> str:
        """The secret lines a printer writes after a line that announces them (see ``_LEADS_SECRET_LINES`` and
        ``_LEADS_SECRET_TABLES``), the lines left as events of their own: the source's next events, while they look
        like the secret's lines."""
        lead = self._lead.pop(key, None)
        if lead is not None:
            left, line, through = lead
            m = line.fullmatch(msg)
            if m is not None:
                if left > 1:
                    self._lead[key] = (left - 1, line, through)
                if m.group("v") is None:  # a line the printer writes before the values (a table's heading)
                    return msg
                return msg[:m.start("v")] + "[REDACTED:secret]" + msg[m.end("v"):]
            if through and (not msg.strip() or _XTRACE_LINE.match(msg)):  # a blank line; a traced command
                self._lead[key] = lead
        found: tuple[int, re.Pattern[str], bool] | None = None
        for announce, count, line in _LEADS_SECRET_LINES:
            m = announce.search(msg)
            if m is not None:
                n = int(m.group(count)) if isinstance(count, str) else count
                found = (n, line, True) if n > 0 else None
                break
        else:
            found = next(((TABLE_ROWS, row, False) for heading, row in _LEADS_SECRET_TABLES if heading.search(msg)),
                         None)
        if found is not None:
            if len(self._lead) >= MEMO_ENTRIES:
                self._lead.clear()
            self._lead[key] = found
        return msg

    def _column_rows(self, key: tuple[Any, ...], msg: str) -> str:
        """A column table whose heading and rows a source's merger left as events of their own: the machine-made
        cell under a heading that names a secret, in the rows after it (see ``secret_finders.column_table``)."""
        state = self._columns.pop(key, None)
        if state is not None and msg.strip() and "\n" not in msg:
            heading, left = state
            spans = column_cells(msg.rstrip("\r"), heading)
            if left > 1:
                self._columns[key] = (heading, left - 1)
            return _replace_spans(msg, spans, "secret") if spans else msg
        found = column_heading(msg.rstrip("\r"), self.strength) if "\n" not in msg else None
        if found is not None:
            if len(self._columns) >= MEMO_ENTRIES:
                self._columns.clear()
            self._columns[key] = (found, TABLE_ROWS)
        return msg

    def letter(self, value: dict[str, Any]) -> dict[str, Any]:
        """A dead letter's error and readable text redacted (the text made from the original bytes); the
        original bytes are sealed where the letter is written, which has the key (:mod:`streams.deadletter`)."""
        return protect_letter(value, self, None)


# rich.logging.RichHandler's row (rich/_log_render.py LogRender; rules.CONT_INDENT): the time column ("[MM/DD/YY
# HH:MM:SS]", blank when the time repeats) and the level column, 29 columns in all, the message column the console
# wraps the message into, and the path column ("client.py:88") on the first line only. A long word that does not fit
# what is left of a line goes to the next; one longer than the column is cut at its width.
_RICH_HEAD = re.compile(r"(?:\[\d\d/\d\d/\d\d \d\d:\d\d:\d\d\]| {19}) (?:DEBUG|INFO|WARNING|ERROR|CRITICAL|NOTSET) +")
_RICH_PATH = re.compile(r"(?<=\S)( +)[\w.\-]{1,100}\.py:\d{1,6}[ \t]*\r?$")
RICH_INDENT = 29


def _rich_view(text: str) -> tuple[str, list[int], tuple[int, int]] | None:
    """A RichHandler row's message as the record wrote it, for the rules to read (a key on one line, its value
    moved to the next): the path column left out, the wrapped lines joined again (with the blank the wrap took,
    or with none after a line as wide as the column, where a word was cut), and the index in ``text`` of each of
    its characters (-1: a blank put back), and where the path column (its padding first) is; None when ``text`` is
    no wrapped row."""
    first_end = text.find("\n")
    head = _RICH_HEAD.match(text, 0, first_end)
    if head is None or head.end() != RICH_INDENT:
        return None
    path = _RICH_PATH.search(text, RICH_INDENT, first_end)
    if path is None:
        return None
    width = path.end(1) - 1 - RICH_INDENT
    indent = " " * RICH_INDENT
    out = [text[:path.start(1)]]
    index = list(range(path.start(1)))
    last = path.start(1) - RICH_INDENT
    pos = first_end + 1
    while text.startswith(indent, pos) and not text[pos + RICH_INDENT:pos + RICH_INDENT + 1].isspace():
        end = text.find("\n", pos)
        end = len(text) if end < 0 else end
        part_end = pos + len(text[pos:end].rstrip())
        if last < width:
            out.append(" ")
            index.append(-1)
        out.append(text[pos + RICH_INDENT:part_end])
        index.extend(range(pos + RICH_INDENT, part_end))
        last = part_end - pos - RICH_INDENT
        pos = end + 1
    if len(out) == 1:
        return None
    if pos < len(text):
        out.append(text[pos - 1:])
        index.extend(range(pos - 1, len(text)))
    index.append(len(text))
    return "".join(out), index, (path.start(1), path.end())


# rich's panels and tables (rich/box.py: the verticals of its SQUARE, ROUNDED, HEAVY and DOUBLE boxes), as
# rich.traceback's show_locals nests a frame's locals table (rich/scope.py render_scope) in the frame's panel: every
# line framed, and a repr too long for its column cut at the inner frame's edge and carried on to the next line.
_FRAME_CHARS = "│┃║"
_FRAME_LEFT = re.compile(r"[ \t]*(?:[│┃║][ \t]?)+")


def _framed_body(line: str) -> tuple[int, int] | None:
    """Where a framed line's body lies (its frames and their padding left out; found by stripping, so that a long
    line of frames costs one pass), or None when the line is not framed on both sides."""
    left = _FRAME_LEFT.match(line)
    tail = line.rstrip(" \t\r")
    if left is None or not tail or tail[-1] not in _FRAME_CHARS:
        return None
    return left.end(), max(left.end(), len(tail.rstrip(" \t" + _FRAME_CHARS)))


def _panel_view(text: str) -> tuple[str, list[int]] | None:
    """A panel's text as the rules read it: each framed line's body without its frames, a line whose body leaves a
    quote open (a string cut at the edge) joined to the next body with nothing between, and the index in ``text`` of
    each character (-1: a line break put back); None when fewer than two lines are framed."""
    out: list[str] = []
    index: list[int] = []
    framed = 0
    open_quote = False
    pos = 0
    for line in text.split("\n"):
        m = _framed_body(line)
        a, b = (pos + m[0], pos + m[1]) if m else (pos, pos + len(line))
        if open_quote and m:
            while a < b and text[a] in " \t":  # the continuation's own padding
                a += 1
        elif out:
            out.append("\n")
            index.append(-1)
        out.append(text[a:b])
        index.extend(range(a, b))
        framed += m is not None
        body = text[a:b]
        open_quote = m is not None and (open_quote + body.count("'") + body.count('"')) % 2 == 1
        pos += len(line) + 1
    if framed < 2:
        return None
    index.append(len(text))
    return "".join(out), index


def _runs(index: list[int]) -> list[tuple[int, int]]:
    """The spans of ``text`` a run of a view's characters stands on (see ``_rich_view``): one per stretch of
    consecutive characters, put-back blanks left out."""
    runs: list[tuple[int, int]] = []
    for i in index:
        if i < 0:
            continue
        if runs and runs[-1][1] == i:
            runs[-1] = (runs[-1][0], i + 1)
        else:
            runs.append((i, i + 1))
    return runs


def _jwt_line(state: tuple[str, int] | None, line: str) -> tuple[tuple[str, int] | None, str | None]:
    """One line read for a wrapped JWT (``state``: the cut token so far and the first line's width): the state after
    it and the line redacted, where it goes on with the token or begins its claims (None: left as it is)."""
    text = line.rstrip("\r")
    if state is not None:
        head, width = state
        word = text.strip(" \t")
        if _JWT_LINE_TAIL.fullmatch(word) and (len(word) >= JWT_WRAP_MIN // 2 or not word.isalpha()) \
                and _jwt_prefix(head + word):
            start = text.index(word)
            return ((head + word, width) if len(text) >= width else None,
                    line[:start] + "[REDACTED:jwt]" + line[start + len(word):])
    cut = _JWT_LINE_HEAD.search(text)
    if cut is None or len(text) < JWT_WRAP_MIN or not _jwt_prefix(cut.group()):
        return None, None
    parts = cut.group().split(".")
    if len(parts) == 3 and len(parts[2]) >= JWT_SIGNATURE_MIN:
        return None, None
    # its claims begun, it is no JWT rule's whole token: the head is redacted here
    begun = len(parts) > 1 and parts[1].startswith("eyJ")
    # The width the next lines fill: the line's, or the token's where the token was folded on its own and its label
    # put before it (fold -w 76 of the token, then "id_token: " and the first piece on one line).
    width = min(len(text), max(JWT_WRAP_MIN, len(cut.group())))
    return (cut.group(), width), line[:cut.start()] + "[REDACTED:jwt]" + line[cut.end():] if begun else None


def _jwt_prefix(text: str) -> bool:
    """``text`` is the start of a JWT: up to three base64url parts, the head and the claims each JSON (``eyJ``)."""
    parts = text.split(".")
    return (len(parts) <= 3 and all(not p or _JWT_PART.fullmatch(p) for p in parts) and text.startswith("eyJ")
            and (len(parts) == 1 or parts[1].startswith("eyJ"[:len(parts[1])])))


def _merged(found: list[tuple[int, int, str]]) -> list[tuple[int, int, str]]:
    """Spans sorted, overlapping ones merged (the first one's kind kept)."""
    found.sort()
    merged: list[tuple[int, int, str]] = []
    for a, b, kind in found:
        if merged and a <= merged[-1][1]:
            pa, pb, pk = merged[-1]
            merged[-1] = (pa, max(pb, b), pk)
        else:
            merged.append((a, b, kind))
    return merged


def _replace_spans(text: str, spans: list[tuple[int, int]], kind: str) -> str:
    """``text`` with each of its (disjoint) spans replaced by a mark, in one pass."""
    parts: list[str] = []
    pos = 0
    for a, b in sorted(spans):
        parts.append(text[pos:a] + f"[REDACTED:{kind}]")
        pos = b
    parts.append(text[pos:])
    return "".join(parts)


def redactor_from(conf: Any) -> Redactor:
    """The Redactor a ``RedactionSettings`` describes (built-in rules plus its additions and exceptions)."""
    extra = [SecretRule(r.kind, tuple(n.lower() for n in r.needles), r.pattern) for r in conf.extra_rules]
    return Redactor(extra_rules=extra, allow=conf.allow, secret_keys=conf.secret_keys)
