"""Secrets that one regex finds badly: PEM private-key blocks and ``key = value`` assignments.

Each finder takes a text and returns ``(start, end)`` spans of secret characters.
"""

from __future__ import annotations

import base64
import bisect
import itertools
import re
from collections.abc import Callable
from functools import lru_cache

from streams.assemble.merger import split_prefix
from streams.assemble.secret_commands import command_secrets, takes_no_next_word
from streams.assemble.secret_keys import (
    FOREIGN_PASSWORD_KEYWORDS,
    generated_like,
    header_secret_span,
    is_placeholder,
    is_secret_value,
    key_strength,
    key_words,
    record_secret,
    unquoted,
)

Spans = list[tuple[int, int]]

# -- PEM blocks -----------------------------------------------------------------------------------------
PEM_BEGIN = re.compile(r"-----BEGIN[ A-Z0-9]*PRIVATE KEY(?: BLOCK)?-----")
PEM_END = re.compile(r"-----END[ A-Z0-9]*PRIVATE KEY(?: BLOCK)?-----")
_B64 = frozenset("ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789+/=")


def pem(text: str) -> Spans:
    """The body of every private-key block; to the end of the text when its END line is missing (a block
    cut by a size limit), and the base64 lines before an END line whose BEGIN is in another event."""
    spans: Spans = []
    covered = 0
    for begin in PEM_BEGIN.finditer(text):
        if begin.start() < covered:
            continue
        end = PEM_END.search(text, begin.end())
        spans.append((begin.end(), end.start() if end else len(text)))
        covered = end.end() if end else len(text)
    starts = [a for a, _ in spans]  # in order and apart: the block holding a position is found by bisection
    for end in PEM_END.finditer(text):
        i = bisect.bisect_right(starts, end.start()) - 1
        if i >= 0 and end.start() <= spans[i][1]:
            continue  # this END closes a block above (a scan of every block for each END was quadratic)
        start = _body_before(text, end.start())
        if start < end.start():
            spans.append((start, end.start()))
    return spans


def _body_before(text: str, i: int) -> int:
    """Start of the run of base64 lines that ends at ``i`` (real newlines or JSON's ``\\n``)."""
    first = True
    while True:
        j = i
        if text.endswith("\\n", 0, j):
            j -= 2
        elif j and text[j - 1] == "\n":
            j -= 2 if j > 1 and text[j - 2] == "\r" else 1
        elif not first:
            return i
        k = j
        while k and text[k - 1] in _B64:
            k -= 1
        # The line next to END may be short (the base64 tail); the others are full lines.
        if j - k < (1 if first else 16):
            return i
        i, first = k, False
        if k == 0:
            return 0


# -- key = value ----------------------------------------------------------------------------------------
_KEYWORD = re.compile(r"(?i)pass|pwd|secret|token|auth|credential|creds|psk|cookie|session_?id|sessid|key"
                      r"|(?<![a-z])pat(?![a-z])|bindpw|rootpw|device_?code|code_?verifier|samlresponse"
                      # JSON loggers' quoted keys, too common as words elsewhere (secret_rules._QUOTED_KEY_NEEDLES)
                      r"|(?<=[\"'])(?:sig|refresh|access|[th]?otp|mfa_?code)(?=\\?[\"'])"
                      # the password's word in other languages (secret_keys.FOREIGN_KEY_WORDS)
                      + "|" + FOREIGN_PASSWORD_KEYWORDS)
_KEY_CHARS = frozenset("ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789_.-")


def _key_char(c: str) -> bool:
    """A character of a key name: ASCII letters, digits and ``_.-``, or a letter of another script (``contraseña``,
    ``пароль``, ``密码``)."""
    return c in _KEY_CHARS or (c > "\x7f" and c.isalnum())
_ASSIGN = re.compile(r"""
    (?P<kq>\\{0,7}["'`]\]?|\]|\[[0-9]{1,4}\])?         # the quote closing a quoted key (environ['KEY'], `key`),
                                                      # escaped once or more (JSON in JSON in JSON, a repr of it);
                                                      # PHP print_r's [key] => value; a list's item by its index
                                                      # (helm --set auth.apiKeys[0]=v, Spring's passwords[1]=v)
    (?P<sep>[ \t]*(?::=|=>|::(?=[ \t])|[:=])[ \t]*|[ \t]*,[ \t]*|[ \t]+)  # = : := =>; LDIF's ":: " (RFC 2849:
                                                      # a base64 value); a space or an argv-list comma only after
                                                      # a --flag
    (?:
        \\{1,7}(?P<eq>["'])(?P<ev>.*?)\\{1,7}(?P=eq)    # a value in escaped quotes (JSON in a JSON string,
                                                      # escaped again when that record is a string of another)
      | (?P<bs>[|>][+\-]?)(?=\r?\n)                   # a YAML block scalar's indicator: the value is below
      | (?P<tq>\'\'\'|\"\"\")(?P<tv>[^\r\n]{0,512}?)(?P=tq)      # a TOML multi-line string kept on one line
      | \{(?P<cv>[^{}\r\n]{1,512})\}(?=[;\s"']|$)        # ODBC/ADO's braced value (Pwd={...};)
      | (?P<rf>\$\{[^{}\r\n]{1,200}\})                  # a reference to be filled in (${VAR}, ${oc.env:VAR})
      | Some\([ \t]*\r?\n?[ \t]*(?P<sq>["'])(?P<sv>(?:\\.|[^\\\r\n])*?)(?P=sq)  # Rust's Debug of an Option
                                                      # (Some("v"); {:#?} puts the string on the next line)
      | Optional\[(?P<ov>[^\]\r\n]{1,512})\]         # Java's Optional.toString()
      | Secret(?:Str|Bytes)\(b?(?P<wq>["'])(?P<wv>[^"'\r\n]*)(?P=wq)\)  # pydantic's SecretStr('**********'):
                                                      # judged inside, where the mask is a placeholder
      | \r?\n[ \t]*string\([0-9]+\)[ \t]"(?P<pv>(?:\\.|[^"\\\r\n])*)"  # PHP var_dump: ["key"]=> then
                                                      # string(N) "value" on the next line
      | 0x[0-9a-fA-F]{1,16}[ \t]+"(?P<gv>(?:\\.|[^"\\\r\n])*)"  # gdb's and lldb's char *: its address, then
                                                      # the string it points to
      | \[[ \t]*b?(?P<lq>["'])(?P<lv>(?:\\.|[^"'\\\r\n])*)(?P=lq)[ \t]*[,\]]  # a list's first string (parse_qs
                                                      # gives each query parameter a list)
      | (?<=:)(?!\[(?i:secure|hidden|masked|filtered|redacted)\])  # Go's fmt of a []string, right after the
        \[(?P<gs>[^\[\]"'\r\n]{1,4096})\](?=[\s\]]|$)     # colon: http.Header and url.Values print
                                                      # map[X-Api-Key:[v] ...] (a printer's [hidden] is a mask)
      | \((?P<pp>[ \t]*(?P<pq>["'])(?:\\.|[^"'\\\r\n])*(?P=pq)(?:[ \t]*\r?\n[ \t]*(?P=pq)(?:\\.|[^"'\\\r\n])*(?P=pq))+)
        [ \t]*\)                                      # pprint's long str: adjacent literals, one per line
      | b?(?P<q>["'])(?P<qv>(?:\\.|[^\\\r\n])*?)(?P=q)  # a quoted value (or bytes): spaces and ; allowed
      | (?P<bv>[^\s,;&'"<>(){}\[\]\\]+)               # a bare value
      | \\?(?P<uq>["'])(?P<uv>[^\r\n\\"']+)           # an opening quote never closed (a cut line)
    )""", re.VERBOSE)
# A header's value runs to the next quote, backslash or line end, 4 KiB at most.
_HEADER_STOP = re.compile(r"[\r\n\"'\\]")
HEADER_MAX = 4096
# Schemes whose credentials are a list of quoted parameters (RFC 7616 Digest, OAuth 1.0's ``oauth_signature="..."``,
# HOBA, Mutual, Rails' token authentication ``Token token="...", email="..."``): their header runs to the end of its
# line, quotes and all.
_QUOTED_PARAM_SCHEME = re.compile(r"(?i)(?:digest|oauth|hoba|mutual|token)[ \t]+[\w\-]+=\"")
_HEADER_LINE = re.compile(r"[^\r\n]{0,4096}")
# A value this long that is no secret is not read again for keys inside it: "token:token:..." would make
# every keyword measure and judge the rest of the line (quadratic in the line's length).
LONG_VALUE = 256
_LITERAL = re.compile(r"""["']((?:\\.|[^"'\\\r\n])*)["']""")
# kubectl describe secret prints each data key with its size ("password:  24 bytes"), never the value.
_SIZE_IN_BYTES = re.compile(r"[ \t]+bytes[ \t]*\r?(?:\n|$)")
# SOPS writes each encrypted value as ENC[AES256_GCM,data:...,iv:...,tag:...,type:str]: ciphertext, not the secret.
_SOPS_TAIL = "[AES256_GCM,"
# Bitnami's SealedSecret holds its values under spec.encryptedData, sealed to the controller's key (ciphertext that
# is meant to be committed); a key nested under that parent holds no secret.
CIPHERTEXT_PARENTS = frozenset({"encryptedData"})
_AMP_TAIL = re.compile(r"&(?![&\s])(?![A-Za-z_][\w.\-]*=)[^\s,;'\"<>(){}\[\]\\]+")


@lru_cache(maxsize=4096)
def _strength(key: str) -> str | None:
    return key_strength(key)


def assignment(text: str, strength_of: Callable[[str], str | None] = _strength,
               keyword: re.Pattern[str] = _KEYWORD) -> Spans:
    """Values assigned to secret-named keys: ``KEY=v``, ``key: v``, ``"key": "v"``, ``--key v``,
    ``--key=v``, ``Authorization: Bearer v`` (see :mod:`streams.assemble.secret_keys`)."""
    spans: Spans = []
    done = 0
    stop = _NextStop(text)
    for kw in keyword.finditer(text):
        if kw.start() < done:
            continue
        key, ke, strength = _key_around(text, kw.start(), kw.end(), strength_of)
        done = ke
        if strength is None:
            continue
        m = _ASSIGN.match(text, ke)
        if m is None:
            items = _secret_items(text, ke, key, strength)
            spans.extend(items)
            done = max([done, *(b for _a, b in items)])
            continue
        sep = m.group("sep").strip()
        bare_sep = sep in ("", ",")
        if bare_sep and " " in key:
            continue
        if bare_sep and (not key.startswith("-") or (sep == "") == bool(m.group("kq"))) and not (
                sep == "" and _spaced_line(text, ke - len(key), m, key)):
            continue  # "password reset" is prose; "--password x" and "'--password', 'x'" are flags
        start, end = _value_span(text, m, strength, ke - len(key), stop)
        if text[start:end] in _BLOCK_INDICATORS and (block := _block_scalar(text, ke - len(key), end)) is not None:
            start, end = block
        value = text[start:end] if m.group("pp") is None else "".join(_LITERAL.findall(text, start, end))
        if bare_sep and (value.startswith("-") or takes_no_next_word(text, ke - len(key))):
            continue  # the next flag, not a value; or a word the program does not take as the option's
        if (not is_secret_value(strength, value, key) or (value.isdigit() and _SIZE_IN_BYTES.match(text, end))
                or (value == "ENC" and text.startswith(_SOPS_TAIL, end)) or _sealed(text, ke - len(key))):
            if end - start > LONG_VALUE or (is_placeholder(value) and not any(c.isspace() for c in value)):
                # a long run that is no secret (a blob, a dump), or a reference of one word (an ARN holds
                # ":secret:"): its words are not keys (a template's text between its braces still is read)
                done = max(done, end)
            continue
        if strength == "header":
            a, b = header_secret_span(key, value)
            start, end = start + a, start + b
        if start < end and not (strength == "header" and is_placeholder(text[start:end])):
            spans.append((start, end))
            done = max(done, end, _list_rest(text, m, strength, key, spans))
    return spans


# The strings after a list's first one, up to its closing bracket: a key naming secrets in the plural
# ("passwords: ['a', 'b']", parse_qs's repeated parameter) holds one in each.
_LIST_ITEM = re.compile(r"""[ \t]*b?(["'])((?:\\.|[^"'\\\r\n])*)\1[ \t]*([,\]])""")


def _list_rest(text: str, m: re.Match[str], strength: str, key: str, spans: Spans) -> int:
    """Adds the secret strings of the list the match's first string opened; returns where the list ended."""
    pos = m.end()
    if m.group("lv") is None or text[pos - 1] != ",":
        return 0
    while (item := _LIST_ITEM.match(text, pos)) is not None:
        if is_secret_value(strength, item.group(2), key):
            spans.append(item.span(2))
        pos = item.end()
        if item.group(3) == "]":
            break
    return pos


# A YAML mapping's bare "key" names the key of what it is nested under, as OmegaConf.to_yaml and yaml.dump print
# a config ("wandb:\n  key: <api key>"): it is judged as "<parent>.key", as a nested record's path is (wandb.key is
# an API key, cache.key is none). A line printed alone (each line its own record, behind a stream prefix or not)
# keeps only its indentation: nested under some parent, it is judged as "<word> key" (a generated value).
_BARE_KEYS = frozenset({"key", "Key", "KEY"})
_YAML_PARENT = re.compile(r"[ \t]*([A-Za-z_][\w.\-]*)[ \t]*:[ \t]*\r?")
PARENT_LINES = 64  # lines looked back for the parent (a config's section is short; a longer look is a dump)
# Characters of a line read for its stream prefixes and indent. A key further into its line starts no line,
# and a parent's line is read no further: a hostile line of ten thousand "key: v," would otherwise have
# its whole head split again for each key (quadratic time on one line).
LINE_HEAD = 1024


def _nested_key(text: str, ks: int, strength_of: Callable[[str], str | None]) -> str | None:
    lo = max(0, ks - LINE_HEAD)
    line_start = text.rfind("\n", lo, ks) + 1
    if not line_start and lo:
        return None
    _k, body, _r, _relay = split_prefix(text[line_start:ks + 3])
    indent = len(body) - len(body.lstrip(" \t"))
    if not indent or not body.endswith("key", indent, indent + 3) or len(body) - indent != 3:
        return None  # the key does not start an indented line (after its stream prefix)
    pos = line_start
    for _ in range(PARENT_LINES):
        if pos == 0:
            return "generated"  # the line alone: some section's key
        above = text.rfind("\n", 0, pos - 1) + 1
        _k, line, _r, _relay = split_prefix(text[above:min(pos - 1, above + LINE_HEAD)])
        depth = len(line) - len(line.lstrip(" \t"))
        if line.strip() and depth < indent:
            m = _YAML_PARENT.fullmatch(line)
            return strength_of(m.group(1) + ".key") if m is not None else None
        pos = above
    return None


# The same key inside a JSON object or a dict repr printed on a line ("{'wandb': {'key': '...'}}", a config printed
# whole): judged as "<the key the object is held under>.key", as the record's lifted attributes are.
_HELD_UNDER = re.compile(r"""(["'])([A-Za-z_][\w.\-]{0,100})\1[ \t]*:[ \t]*\Z""")
INLINE_LOOK = 4096  # characters looked back for the object's opening brace


def _inline_key(text: str, ks: int, strength_of: Callable[[str], str | None]) -> str | None:
    parent = _held_under(text, ks)
    return strength_of(parent + ".key") if parent is not None else None


def _held_under(text: str, ks: int) -> str | None:
    """The key the JSON object or dict around ``ks`` is held under (``"wandb": {... here``), if any."""
    depth = 0
    i = ks - 1
    stop = max(0, ks - INLINE_LOOK)
    while i > stop:
        i -= 1
        c = text[i]
        if c == "}":
            depth += 1
        elif c == "{":
            if not depth:
                m = _HELD_UNDER.search(text, max(0, i - 128), i)
                return m.group(2) if m is not None else None
            depth -= 1
    return None


# A key and its value as a column-aligned table or a space-separated config file prints them, alone on their line:
# ``password    S3cret`` (vault kv get, vault read), ``    HTTP_Passwd   S3cret`` (Fluent Bit's classic config),
# ``requirepass S3cret`` (redis.conf). One space is enough only after a key that is no plain word ("Password
# changed" is prose).
_LINE_REST = re.compile(r"[ \t]*\r?(?:\n|$)")
_PLAIN_WORDS = frozenset({"password", "passwd", "pass", "pwd", "secret", "secrets", "token", "key", "auth",
                          "credential", "credentials", "cookie", "authorization", "passphrase", "session"})


# A YAML block sequence under a secret's key, as yaml.dump and OmegaConf.to_yaml print a list ("api_keys:" then "- v"
# on the lines below, at the key's indent or deeper): each scalar item is judged as the key's value; an item that is
# a mapping ("- name: x") is not.
_SEQUENCE_HEAD = re.compile(r"""["']?[ \t]*:[ \t]*\r?\n""")
_SEQUENCE_ITEM = re.compile(r"""([ \t]*)-[ \t]+(?:(["'])([^"'\r\n]{1,512})\2|([^\s"'#][^\r\n]{0,511}))"""
                            r"""[ \t]*\r?(?:\n|\Z)""")
SEQUENCE_ITEMS = 64  # a list of secrets is short; a longer one is read no further


def _block_sequence(text: str, ks: int, pos: int) -> list[tuple[int, int]]:
    """The spans of the scalar items of the block sequence starting at ``pos``, below a key starting at ``ks``."""
    line_start = text.rfind("\n", 0, ks) + 1
    if text[line_start:ks].strip(" \t\"'"):
        return []  # the key does not start its line: no YAML mapping's key
    key_indent = ks - line_start - (1 if text[ks - 1:ks] in ("'", '"') else 0)
    spans: list[tuple[int, int]] = []
    for _ in range(SEQUENCE_ITEMS):
        item = _SEQUENCE_ITEM.match(text, pos)
        if item is None or len(item.group(1)) < key_indent:
            break
        group = 3 if item.group(3) is not None else 4
        value = item.group(group).rstrip()
        if group == 3 or not (": " in value or value.endswith(":")):
            spans.append((item.start(group), item.start(group) + len(value)))
        pos = item.end()
    return spans


def _secret_items(text: str, ke: int, key: str, strength: str) -> list[tuple[int, int]]:
    """The secret items of a block sequence under the key ending at ``ke``, if one follows it."""
    head = _SEQUENCE_HEAD.match(text, ke)
    if head is None:
        return []
    return [(a, b) for a, b in _block_sequence(text, ke - len(key), head.end())
            if is_secret_value(strength, text[a:b], key)]


def _spaced_line(text: str, ks: int, m: re.Match[str], key: str) -> bool:
    if m.group("bv") is None or m.group("kq"):
        return False
    line_start = text.rfind("\n", 0, ks) + 1
    if text[line_start:ks].strip(" \t") or _LINE_REST.match(text, m.end()) is None:
        return False
    return len(m.group("sep")) > 1 or key.lower() not in _PLAIN_WORDS


# YAML's block scalars (``password: |`` then the value on the lines below, indented more than the key).
_BLOCK_INDICATORS = frozenset({"|", ">", "|-", ">-", "|+", ">+"})
_INDENT = re.compile(r"[ \t]*")
BLOCK_LINES = 64  # a secret's block is a few lines; a longer one (a script, a dump) is read no further


def _block_scalar(text: str, ks: int, value_end: int) -> tuple[int, int] | None:
    """The span of a block scalar's lines after ``key: |``, or None when the indicator does not end its line
    or no line below is indented more than the key's."""
    if not text.startswith("\n", value_end) and not text.startswith("\r\n", value_end):
        return None
    line_start = text.rfind("\n", 0, ks) + 1
    key_indent = _INDENT.match(text, line_start).end() - line_start  # type: ignore[union-attr]
    pos = text.index("\n", value_end) + 1
    start = end = -1
    for _ in range(BLOCK_LINES):
        indent = _INDENT.match(text, pos).end()  # type: ignore[union-attr]
        line_end = text.find("\n", pos)
        line_end = len(text) if line_end < 0 else line_end
        if indent - pos <= key_indent or indent >= line_end:
            break
        start = indent if start < 0 else start
        end = len(text[:line_end].rstrip())
        if line_end >= len(text):
            break
        pos = line_end + 1
    return (start, end) if start >= 0 else None


def _key_around(text: str, ks: int, ke: int, strength_of: Callable[[str], str | None]) -> tuple[str, int, str | None]:
    """The key a keyword is part of (``DB_PASSWORD`` around ``PASS``, or a label of words), where it ends, and
    its strength."""
    while ks and _key_char(text[ks - 1]):
        ks -= 1
    while ke < len(text) and _key_char(text[ke]):
        ke += 1
    key = text[ks:ke].rstrip(".-")
    ke = ks + len(key)
    strength = strength_of(key)
    label = _label(text, ks, ke)
    if label is not None and (label_strength := strength_of(text[label[0]:label[1]])) is not None:
        return text[label[0]:label[1]], label[1], label_strength
    if strength is None and key in _BARE_KEYS and (text.startswith(":", ke) or (
            text[ke:ke + 1] in ("'", '"') and text[ks - 1:ks] == text[ke] and text.startswith(":", ke + 1))):
        strength = _inline_key(text, ks, strength_of) if text[ke] != ":" else _nested_key(text, ks, strength_of)
    return key, ke, strength


_ENV_PREFIX = re.compile(r"[ \t+]*(?:export |declare -x |set |setenv )?")
_NEXT_ASSIGNMENT = re.compile(r"\s[A-Za-z_][\w.\-]*=")
_NON_SPACE = re.compile(r"\S*")
_ENV_NAME = re.compile(r"[A-Z][A-Z0-9_]*=")
# to the line's last non-blank before a shell's operator ("PASSWORD=x && ./run.sh" is a command line, not env's)
_LINE_VALUE = re.compile(r"[^\r\n&|;<>]*[^\s&|;<>]")


def _env_line(text: str, ks: int, value_end: int) -> bool:
    """The key starts its line (after ``export``, ``declare -x``, a ``set -x`` plus) and no other
    ``name=`` follows on it: the line is one environment variable."""
    line_start = text.rfind("\n", 0, ks) + 1
    line_end = text.find("\n", value_end)
    rest = text[value_end:line_end if line_end >= 0 else len(text)]
    return _ENV_PREFIX.fullmatch(text, line_start, ks) is not None and not _NEXT_ASSIGNMENT.search(rest)


# (a label may end in a number: vault operator init's "Unseal Key 1:", "Recovery Key 3:")
_LABEL_TAIL = re.compile(r"(?: [A-Za-z][A-Za-z0-9]*){1,2}(?: [0-9]{1,3})?(?=[ \t]*[:=])| [0-9]{1,3}(?=[ \t]*[:=])")
_LABEL_HEAD = re.compile(r"(?<![A-Za-z0-9_.\-])(?:[A-Za-z][A-Za-z0-9]* ){1,2}$")
_SEP_AHEAD = re.compile(r"[ \t]*[:=]")


def _label(text: str, ks: int, ke: int) -> tuple[int, int] | None:
    """A key written as words, as a person labels it (``API Key: x``, ``Client Secret = x``, ``Unseal Key 1: x``): up
    to two words before and after the keyword's word (and a number), followed by ``:`` or ``=``."""
    tail = _LABEL_TAIL.match(text, ke) if text.startswith(" ", ke) else None
    if tail is None and not _SEP_AHEAD.match(text, ke):
        return None
    head = _LABEL_HEAD.search(text, max(0, ks - 40), ks) if ks and text[ks - 1] == " " else None
    if tail is None and head is None:
        return None
    return (head.start() if head else ks), (tail.end() if tail else ke)


class _NextStop:
    """Where the header value starting at a position ends, its stop found once for every header before it: a
    line of ten thousand "Authorization: " would otherwise read up to 4 KiB again for each of them."""

    def __init__(self, text: str) -> None:
        self.text = text
        self.at = -1  # the first stop at or after the last position asked about

    def __call__(self, start: int) -> int:
        if start > self.at:
            m = _HEADER_STOP.search(self.text, start)
            self.at = m.start() if m else len(self.text)
        return min(self.at, start + HEADER_MAX)


def _value_span(text: str, m: re.Match[str], strength: str, ks: int, stop: _NextStop) -> tuple[int, int]:
    """Where the assigned value is: inside its quotes, or the bare word (a header's: to the line's end; an
    environment line's: to the next space, as ``printenv`` prints whatever characters a value holds)."""
    group = m.lastgroup or ""  # the value's group: each alternative of _ASSIGN closes with it
    start, end = m.span(group)
    if strength == "header" and group == "bv":
        if _QUOTED_PARAM_SCHEME.match(text, start):
            end = start + len(_HEADER_LINE.match(text, start).group().rstrip())  # type: ignore[union-attr]
        else:
            end = start + len(text[start:stop(start)].rstrip())
    elif group == "bv" and m.group("sep") == "=" and ks and text[ks - 1] in "'\"" and (
            (close := text.find(text[ks - 1], end)) > 0 and "\n" not in text[end:close]):
        end = close  # 'NAME=value with spaces': a shell word quoted whole (bash xtrace, docker run -e)
    elif strength == "strong" and group == "bv" and m.group("sep").strip() == "=" and _env_line(text, ks, end):
        word_end = _NON_SPACE.match(text, end).end()  # type: ignore[union-attr]
        # env(1) and printenv print a variable's value as it is, to the end of its line: a passphrase's words
        # after its first (the upper-case name is the environment's convention, not a setting's in prose)
        line = _LINE_VALUE.match(text, end) if _ENV_NAME.match(text, ks) else None
        end = max(word_end, line.end()) if line is not None else word_end
    elif strength == "strong" and group == "bv":
        # A password may hold '&' (DB_PASSWORD=Tr0ub4dor&3): it ends the value only before the next
        # "name=" of a query string or a command's "&&".
        while (more := _AMP_TAIL.match(text, end)) is not None:
            end = more.end()
    return start, end


def _sealed(text: str, ks: int) -> bool:
    """The key starts an indented YAML line under a parent of :data:`CIPHERTEXT_PARENTS`, or is a quoted key of
    the JSON object or dict held under one (kubectl get sealedsecret -o json, the last-applied annotation)."""
    if ks and text[ks - 1] in "\"'" and "{" in text[max(0, ks - INLINE_LOOK):ks]:
        return _held_under(text, ks) in CIPHERTEXT_PARENTS
    line_start = text.rfind("\n", max(0, ks - LINE_HEAD), ks) + 1
    indent = ks - line_start
    if not indent or text[line_start:ks].strip(" \t"):
        return False
    pos = line_start
    for _ in range(PARENT_LINES):
        if pos == 0:
            return False
        above = text.rfind("\n", 0, pos - 1) + 1
        line = text[above:min(pos - 1, above + LINE_HEAD)]
        depth = len(line) - len(line.lstrip(" \t"))
        if line.strip() and depth < indent:
            m = _YAML_PARENT.fullmatch(line)
            return m is not None and m.group(1) in CIPHERTEXT_PARENTS
        pos = above
    return False


# -- {"name": "DB_PASSWORD", "value": "..."} ---------------------------------------------------------------
# Environment lists of Kubernetes pod specs and ECS task definitions, SSM parameters and similar name/value
# records: the key name is one field, the secret another.
_NAME_VALUE = re.compile(r"""(?i)
    ["']?(?:name|key)["']?[ \t]*[:=][ \t]*["']?(?P<k>[A-Za-z0-9_.\-]+)["']?  # "name": "DB_PASSWORD"
    (?:[ \t]*,?[ \t]*\r?\n[ \t]*"[A-Za-z]{1,40}"[ \t]*:[ \t]*               # (JSON with sorted keys puts a
       (?:null|true|false|[0-9]{1,20}|\{\}|\[\]|"[^"\\\r\n]{0,200}")){0,3}   # few scalar fields between: az
                                                                           # keyvault secret show's "tags": {})
    (?:[ \t]*(?:,[ \t]*\r?\n|,|\r?\n)[ \t]*|[ \t]+)                        # then, on the same or the next line
                                                                           # (XML attributes: a space between),
    (?:[+~\-][ \t]+)?                                                       # (terraform plan's action marker)
    ["']?(?:parameter)?value["']?[ \t]*[:=][ \t]*                            # "value": (CloudFormation's
                                                                           # ParameterKey/ParameterValue)
    (?:"(?P<dq>(?:\\.|[^"\\\r\n])*)"|'(?P<sq>[^'\r\n]*)'|(?!\{\{)(?P<bv>[^\s,}'"]+))""", re.VERBOSE)
# (a bare value that opens a Go template, Helm's {{ .Values.x.password }}, is the reference, not a secret)


# A (name, value) pair of a list of pairs: raw headers as ASGI, h11 and httpx keep them
# (``[(b'authorization', b'Bearer x')]``), query parameters before urlencode (``[('api_key', 'x')]``).
# (also as JSON writes such a list of pairs: ["b'x-api-key'", "b'...'"], the bytes' reprs inside its strings)
_PAIR = re.compile(r"""[(\[][ \t]*"?b?(?P<kq>['"])(?P<k>[A-Za-z0-9_.\-]{1,100})(?P=kq)"?[ \t]*,[ \t]*"""
                   r"""(?P<vo>"?)b?(?P<vq>['"])(?P<v>[^'"\r\n]{1,4096})(?P=vq)(?P=vo)[ \t]*[)\]]""")


def name_value(text: str, strength_of: Callable[[str], str | None] = _strength) -> Spans:
    """The value of a name/value record whose name is a secret's (see :func:`assignment` for the names)."""
    spans: Spans = []
    for m in _NAME_VALUE.finditer(text):
        strength = strength_of(m.group("k"))
        group = next(g for g in ("dq", "sq", "bv") if m.group(g) is not None)
        if strength is not None and strength != "header" and is_secret_value(strength, m.group(group), m.group("k")):
            spans.append(m.span(group))
    return spans


# Erlang's terms as io:format("~p") prints them, and RabbitMQ's classic config: {password,<<"x">>},
# {default_pass, "x"}
_ERLANG_PAIR = re.compile(r"""\{[ \t]*(?P<k>[a-z][A-Za-z0-9_@]{0,100}),[ \t]*(?:<<)?"""
                          r""""(?P<v>(?:\\.|[^"\\\r\n]){1,4096})"(?:>>)?[ \t]*\}""")


# Pairs config printers write unquoted, one a line: spark-submit --verbose's "Spark properties used" list
# (SparkSubmitArguments: "(spark.hadoop.fs.s3a.secret.key,VALUE)"), and Flink's GlobalConfiguration ("Loading
# configuration property: s3.secret-key, VALUE").
# Also a variable set with a space between its name and its value: csh's and Environment Modules' ``setenv NAME
# value`` (``module show`` prints a modulefile's), and a Dockerfile's ``ENV NAME value`` as docker build echoes its
# steps (https://docs.docker.com/reference/dockerfile/#env: the form without '=').
_PRINTED_PAIR = re.compile(r"(?m)^[ \t]*\((?P<k>[A-Za-z0-9_.\-]{1,200}),(?P<v>[^\s()]{1,4096})\)[ \t]*\r?$"
                           r"|Loading configuration property: (?P<fk>[A-Za-z0-9_.\-]{1,200}), (?P<fv>\S{1,4096})"
                           r"|(?:^|[\s:\]])(?:setenv|ENV)[ \t]+(?P<ek>[A-Za-z_][A-Za-z0-9_]{0,200})[ \t]+"
                           r"[\"']?(?P<ev>[^\s\"']{1,4096})")


def name_value_pair(text: str, strength_of: Callable[[str], str | None] = _strength) -> Spans:
    """The value of a (name, value) pair whose name is a secret's; a header's credential after its scheme."""
    spans: Spans = []
    for p in _PRINTED_PAIR.finditer(text):
        kg, vg = next((k, v) for k, v in (("k", "v"), ("fk", "fv"), ("ek", "ev")) if p.group(k) is not None)
        strength = strength_of(p.group(kg))
        if strength not in (None, "header") and is_secret_value(strength, p.group(vg), p.group(kg)):
            spans.append(p.span(vg))
    for m in itertools.chain(_PAIR.finditer(text), _ERLANG_PAIR.finditer(text)):
        key, value = m.group("k"), m.group("v")
        strength = strength_of(key)
        if strength is not None and is_secret_value(strength, value, key):
            a, b = header_secret_span(key, value) if strength == "header" else (0, len(value))
            if a < b and not is_placeholder(value[a:b]):
                spans.append((m.start("v") + a, m.start("v") + b))
    return spans


# -- {"Name": "/prod/db_password", "Type": "SecureString", "Value": "..."} ------------------------------------
# A JSON object without nested objects (its fields may span lines), and the key it is held under.
_FLAT_OBJECT = re.compile(r"""(?:"(?P<parent>[^"\\\r\n]{1,200})"[ \t]*:[ \t]*)?\{(?P<body>[^{}]{1,4096})\}""")
_STRING_FIELD = re.compile(r'"(?P<k>[^"\\\r\n]{1,200})"[ \t]*:[ \t]*"(?P<v>(?:\\.|[^"\\\r\n]){0,4096})"')


def record_value(text: str, strength_of: Callable[[str], str | None] = _strength) -> Spans:
    """The value of a JSON record whose name field, or whose key, names a secret (see
    :func:`streams.assemble.secret_keys.record_secret`)."""
    spans: Spans = []
    for obj in _FLAT_OBJECT.finditer(text):
        fields: dict[str, str] = {}
        where: dict[str, tuple[int, int]] = {}
        for f in _STRING_FIELD.finditer(obj.group("body")):
            k = f.group("k").lower()
            fields[k] = f.group("v")
            where[k] = (obj.start("body") + f.start("v"), obj.start("body") + f.end("v"))
        found = record_secret(fields, obj.group("parent"), strength_of) if fields else None
        if found is not None and is_secret_value(found[1], fields[found[0]], found[0]):
            spans.append(where[found[0]])
    return spans


# -- {"kty": "EC", "x": ..., "y": ..., "d": "..."} ------------------------------------------------------------
# A JSON Web Key's private members (RFC 7518 6.2.2 and 6.3.2: EC and RSA "d", RSA's primes and CRT values; 6.4.1:
# an oct key's "k"); its public members (x, y, n, e) and the key id stay.
JWK_PRIVATE_MEMBERS = ("d", "p", "q", "dp", "dq", "qi", "k")


def jwk_private(text: str) -> Spans:
    """The private members of a JSON Web Key printed as JSON (``jose``, ``step crypto jwk``, a JWKS dump)."""
    spans: Spans = []
    for obj in _FLAT_OBJECT.finditer(text):
        body, at = obj.group("body"), obj.start("body")
        fields = {f.group("k"): f.span("v") for f in _STRING_FIELD.finditer(body)}
        if "kty" in fields:
            spans.extend((at + a, at + b) for k in JWK_PRIVATE_MEMBERS if k in fields
                         for a, b in (fields[k],) if a < b)
    return spans


# -- Kubernetes Secret manifests -------------------------------------------------------------------------
_K8S_SECRET = re.compile(r"""kind["']?[ \t]*:[ \t]*["']?Secret\b""")
_YAML_DATA = re.compile(r"^([ \t]*)(?:data|stringData):[ \t]*\r?$", re.MULTILINE)
_YAML_ENTRY = re.compile(r"[ \t]+[\w.\-]+:[ \t]*(?P<v>\S[^\r\n]*)")
_JSON_DATA = re.compile(r"""["'](?:data|stringData)["'][ \t]*:[ \t]*\{(?P<body>[^{}]*)\}""")
_JSON_ENTRY = re.compile(r"""["'][^"']*["'][ \t]*:[ \t]*["'](?P<v>[^"'\r\n]+)["']""")


def k8s_secret(text: str) -> Spans:
    """Every value of a Secret's ``data`` and ``stringData``, whatever its key is called (YAML and JSON)."""
    if not _K8S_SECRET.search(text):
        return []
    spans: Spans = []
    for block in _YAML_DATA.finditer(text):
        pos = block.end() + 1
        indent = len(block.group(1))
        while pos < len(text):
            line_end = text.find("\n", pos)
            line_end = len(text) if line_end < 0 else line_end
            line = text[pos:line_end]
            m = _YAML_ENTRY.match(line)
            if m is None or len(line) - len(line.lstrip()) <= indent:
                break
            spans.append((pos + m.start("v"), pos + m.end("v")))
            pos = line_end + 1
    for data in _JSON_DATA.finditer(text):
        spans.extend((data.start("body") + m.start("v"), data.start("body") + m.end("v"))
                     for m in _JSON_ENTRY.finditer(data.group("body")))
    return spans


# -- <password>...</password> and `config set KEY VALUE` ------------------------------------------------
_XML_ELEMENT = re.compile(r"<(?P<tag>[A-Za-z_][\w:.\-]*)(?:\s[^<>]*)?>(?P<v>[^<\r\n]{1,512})</(?P=tag)>")
# An element whose key or name attribute names what its text is: Java's Properties.storeToXML (<entry
# key="db.password">...</entry>), Spring's <entry key=...> and <prop key=...>, Ant's and Log4j's <param name=...>.
_XML_KEYED_ELEMENT = re.compile(r"<(?P<tag>[A-Za-z_][\w:.\-]*)\s[^<>]{0,200}?(?<![\w\-])(?:key|name)=[\"']"
                                r"(?P<k>[^\"'<>\s]{1,200})[\"'][^<>]{0,200}>(?P<v>[^<\r\n]{1,512})</(?P=tag)>")
# Hadoop's configuration files (core-site.xml): <property><name>fs.s3a.secret.key</name><value>...</value>.
_XML_NAME_VALUE = re.compile(r"<name>(?P<k>[^<\s]{1,200})</name>\s{0,200}<value>(?P<v>[^<\r\n]{1,512})</value>")
_CONFIG_SET = re.compile(r"\bconfig(?:ure)?(?::set)?\s+set\s+(?:--?[\w\-]+\s+)*(?P<k>[\w.:/@\-]+)\s+"
                         r"['\"]?(?P<v>[^\s'\"]+)")


# pydantic's ValidationError: the field's location on a line of its own, then the error with the input it was
# given (``input_value='...'``).
# Protocol Buffers' text format (print(msg), str(msg)) of a wrapper message (google.protobuf.StringValue, W&B's
# settings in debug-internal.log): the field's name, then "{", then value: "..." on the same or the next line.
_PROTO_WRAPPER = re.compile(r"(?<![\w.])(?P<k>[A-Za-z_][A-Za-z0-9_]{0,100})[ \t]*\{(?:[ \t]*\r?\n)?[ \t]*value:[ \t]*"
                            r"\"(?P<v>(?:\\.|[^\"\\\r\n]){1,4096})\"")
# W&B's run config.yaml (wandb/run-*/files/config.yaml): each entry a mapping of its desc and its value, so the
# value sits two lines under the name that says what it is.
_DESC_VALUE = re.compile(r"^[ \t]*(?P<k>[A-Za-z_][\w.\-]{0,200}):[ \t]*\r?\n[ \t]+desc:[^\r\n]{0,400}\r?\n"
                         r"[ \t]+value:[ \t]*(?P<v>\S[^\r\n]{0,4095})$", re.MULTILINE)
_INPUT_VALUE = re.compile(r"^(?P<k>[A-Za-z_][\w.\-]{0,200})\r?\n[ \t]+[^\r\n]{0,400}?\binput_value="
                          r"(?P<q>['\"])(?P<v>[^'\"\r\n]{1,512})(?P=q)", re.MULTILINE)


def keyed_value(text: str, strength_of: Callable[[str], str | None] = _strength) -> Spans:
    """Values named by a secret's key outside ``key = value``: an XML element (Maven's settings.xml,
    SOAP, .NET configs) or name/value pair (Hadoop's core-site.xml), a CLI's ``config set KEY VALUE`` (aws, npm,
    yarn, pip, git), the input a validation error echoes under the field's name (pydantic), and the value under
    an entry's desc (W&B's config.yaml)."""
    spans: Spans = []
    for rx in (_XML_ELEMENT, _XML_KEYED_ELEMENT, _XML_NAME_VALUE, _CONFIG_SET, _INPUT_VALUE, _PROTO_WRAPPER,
               _DESC_VALUE):
        for m in rx.finditer(text):
            key = m.group("k" if rx is _XML_KEYED_ELEMENT else 1).rsplit(":", 1)[-1].rsplit("/", 1)[-1]
            strength = strength_of(key)
            if strength is not None and strength != "header" and is_secret_value(strength, m.group("v"), key):
                spans.append(m.span("v"))
    return spans


# -- loguru's and better-exceptions' `diagnose`: a value printed under the name it belongs to -------------
# ``connect(host, db_password)`` then ``│     └ 'S3cret'``: the ``└`` stands under the first character of the
# name on the source line above the block of such lines.
_ANNOTATION = re.compile(r"^[ \t│]*└ (?P<v>[^\r\n]+)$", re.MULTILINE)
_ANNOTATION_LINE = re.compile(r"[ \t│]*(?:└ [^\r\n]*)?\r?")
_NAME = re.compile(r"(?<![A-Za-z0-9_])[A-Za-z_][A-Za-z0-9_]*")  # a whole name, not the tail of one
ANNOTATION_LINES = 32  # names annotated under one source line; a longer block is not read back further


def diagnosed(text: str, strength_of: Callable[[str], str | None] = _strength) -> Spans:
    """The values ``diagnose`` prints under secret-named variables (see :func:`assignment` for the names)."""
    spans: Spans = []
    block_end = -1  # where the last annotation line ended, and the source line its block hangs from
    source: tuple[int, int] | None = None
    for m in _ANNOTATION.finditer(text):
        line_start = text.rfind("\n", 0, m.start("v")) + 1
        if line_start != block_end + 1:  # a new block: up past its other annotation lines to the source line
            source = _source_line(text, line_start)
        block_end = m.end()
        if source is None:
            continue
        name = _NAME.match(text, source[0] + m.start("v") - 2 - line_start, source[1])
        if name is not None:
            value = unquoted(m.group("v").strip())
            strength = strength_of(name.group())
            if strength is not None and strength != "header" and is_secret_value(strength, value, name.group()):
                spans.append(m.span("v"))
    return spans


def _source_line(text: str, line_start: int) -> tuple[int, int] | None:
    """The line above the annotation lines that end just before ``line_start``."""
    src_end = line_start - 1
    for _ in range(ANNOTATION_LINES):
        if src_end < 0:
            return None
        src_start = text.rfind("\n", 0, src_end) + 1
        if not _ANNOTATION_LINE.fullmatch(text, src_start, src_end):
            return src_start, src_end
        src_end = src_start - 1
    return None


# -- redis-cli's numbered replies: 1) "requirepass" then 2) "value" ---------------------------------------
NUMBERED_ITEM = re.compile(r"[ \t]*(?P<n>\d+)\)[ \t]+\"(?P<v>(?:\\.|[^\"\\\r\n]){0,4096})\"[ \t]*\r?")
_NUMBERED_PAIR = re.compile(r"^[ \t]*(?P<n>\d+)\)[ \t]+\"(?P<k>[^\"\r\n]{1,200})\"[ \t]*\r?\n"
                            r"[ \t]*(?P<m>\d+)\)[ \t]+\"(?P<v>(?:\\.|[^\"\\\r\n]){1,4096})\"", re.MULTILINE)


def numbered_reply(text: str, strength_of: Callable[[str], str | None] = _strength) -> Spans:
    """The value after a secret's name in a numbered reply (a name at an odd number, its value at the next)."""
    spans: Spans = []
    for m in _NUMBERED_PAIR.finditer(text):
        n, k = int(m.group("n")), m.group("k")
        if n % 2 and int(m.group("m")) == n + 1:
            strength = strength_of(k)
            if strength is not None and strength != "header" and is_secret_value(strength, m.group("v"), k):
                spans.append(m.span("v"))
    return spans


# -- | API Secret | value | ---------------------------------------------------------------------------------
# A row of a two-column table as cliff (the openstack CLI's "show" output), prettytable, tabulate's "grid" and
# Confluent's CLI draw it: the first cell names the second; the AWS CLI's --output table draws a nested section's
# rows between double borders (|| Key | Value ||).
# (columns after the value are the setting's origin or scope: ngc config current's | key | value | source |)
_TABLE_ROW = re.compile(r"^[ \t]*\|\|?[ \t]*(?P<k>[^|\r\n]{1,100}?)[ \t]*\|[ \t]*(?P<v>[^|\s]{1,4096})"
                        r"[ \t]*(?:\|[^|\r\n]{1,200}){0,4}\|\|?[ \t]*\r?$", re.MULTILINE)


def table_row(text: str, strength_of: Callable[[str], str | None] = _strength) -> Spans:
    """The value cell of a two-column table row whose name cell names a secret."""
    spans: Spans = []
    for m in _TABLE_ROW.finditer(text):
        key = m.group("k")
        strength = strength_of(key) if _KEYWORD.search(key) else None
        if strength is not None and strength != "header" and is_secret_value(strength, m.group("v"), key):
            spans.append(m.span("v"))
    return spans


# -- a JWT folded onto continuation lines ------------------------------------------------------------------------
# rich's RichHandler (into a file, console width fixed) folds a long word: its head ends the first line (before the
# path column), the rest continues on lines indented under the message column.
_FOLD_HEAD = re.compile(r"\beyJ[A-Za-z0-9_\-.]{8,}(?=(?:[ \t]+[\w.\-/]+:[0-9]+)?[ \t]*\r?\n)")
_FOLD_TAIL = re.compile(r"(?:[ \t]+[\w.\-/]+:[0-9]+)?[ \t]*\r?\n[ \t]{8,}(?P<t>[A-Za-z0-9_\-.]{4,})"
                        r"(?=[ \t]*\r?(?:\n|$))")
_JWT_WHOLE = re.compile(r"eyJ[A-Za-z0-9_\-]{5,}\.eyJ[A-Za-z0-9_\-]{5,}\.[A-Za-z0-9_\-]*")
FOLDED_LINES = 64


def folded_jwt(text: str) -> Spans:
    """A JWT folded onto indented continuation lines: its head and every continuation, when joined they make one."""
    spans: Spans = []
    covered = 0  # continuation lines already read are no heads of their own
    for head in _FOLD_HEAD.finditer(text):
        if head.start() < covered:
            continue
        parts = [head.span()]
        pos = head.end()
        for _ in range(FOLDED_LINES):
            tail = _FOLD_TAIL.match(text, pos)
            if tail is None:
                break
            parts.append(tail.span("t"))
            pos = tail.end()
        covered = pos
        if len(parts) > 1 and _JWT_WHOLE.fullmatch("".join(text[a:b] for a, b in parts)):
            spans.extend(parts)
    return spans


# -- NAME  SID  Secret: a column table whose heading names a secret -------------------------------------------------
# CLIs print a created credential as a row under column headings (twilio api:core:keys:create: SID, Friendly Name,
# Date Created, Secret): the cell under a heading that names a secret, when it looks machine-made (kubectl get sa's
# SECRETS column counts them).
_CELL = re.compile(r"\S+(?: \S+)*")
_WORD_RUN = re.compile(r"\S+")
_TITLE = re.compile(r"[A-Za-z][A-Za-z ]{0,40}")
TABLE_ROWS = 64  # rows read under one heading


Heading = tuple[int, list[tuple[int, int]]]  # its number of columns; (index, offset) of each secret-naming one


def column_heading(line: str, strength_of: Callable[[str], str | None] = _strength) -> Heading | None:
    """The columns of a heading line whose title names a secret; None when the line is no such heading (two or more
    cells apart by two spaces or a tab, every one a title of words)."""
    cells = [(m.start(), m.group()) for m in _CELL.finditer(line)]
    if len(cells) < 2 or not all(_TITLE.fullmatch(c) for _o, c in cells) or not all(
            line[o - 2:o] in ("  ", "\t") or line[o - 1:o] == "\t" for o, _c in cells[1:]):
        return None
    secret = [(i, o) for i, (o, c) in enumerate(cells) if _KEYWORD.search(c) and strength_of(c) not in (None, "header")]
    return (len(cells), secret) if secret else None


def column_cells(row: str, heading: Heading) -> Spans:
    """The machine-made cells of a row under a heading's secret-naming columns: the row's cell of the same index when
    it has as many cells (another rule's mark may have moved them), else the word at the heading's offset."""
    count, columns = heading
    cells = [m.span() for m in _CELL.finditer(row)]
    spans: Spans = []
    for index, offset in columns:
        if len(cells) == count:
            span: tuple[int, int] | None = cells[index]
        elif offset <= len(row) and (not offset or row[offset - 1] in " \t") and (m := _WORD_RUN.match(row, offset)):
            span = m.span()
        else:
            span = None
        if span is not None and generated_like(row[span[0]:span[1]]):
            spans.append(span)
    return spans


def column_table(text: str, strength_of: Callable[[str], str | None] = _strength) -> Spans:
    """The machine-made cells under a secret-naming heading of a column table printed in one text."""
    spans: Spans = []
    lines = text.split("\n")
    pos = 0
    heading: Heading | None = None
    left = 0
    for line in lines:
        if heading and left and line.strip():
            spans.extend((pos + a, pos + b) for a, b in column_cells(line.rstrip("\r"), heading))
            left -= 1
        else:
            heading = column_heading(line.rstrip("\r"), strength_of) if _KEYWORD.search(line) else None
            left = TABLE_ROWS
        pos += len(line) + 1
    return spans


# -- Node's rawHeaders ------------------------------------------------------------------------------------
# http.IncomingMessage's rawHeaders and rawTrailers (https://nodejs.org/api/http.html#messagerawheaders): the header
# lines as one flat list, each name followed by its value, as util.inspect ([ 'Host', 'x', ... ], an item a line once
# it is long) and JSON print a logged request.
_RAW_HEADERS = re.compile(r"""\braw(?:Headers|Trailers)["']?[ \t]*[:=][ \t]*\[""")
_RAW_ITEM = re.compile(r"""[ \t\r\n]*(["'])((?:\\.|[^"'\\\r\n])*)\1[ \t\r\n]*([,\]])""")
RAW_HEADER_ITEMS = 256  # items read in one list


def raw_headers(text: str, strength_of: Callable[[str], str | None] = _strength) -> Spans:
    """The values of the secret-named headers of a rawHeaders list."""
    spans: Spans = []
    for m in _RAW_HEADERS.finditer(text):
        pos = m.end()
        name: str | None = None
        for _ in range(RAW_HEADER_ITEMS):
            item = _RAW_ITEM.match(text, pos)
            if item is None:
                break
            if name is None:
                name = item.group(2)
            else:
                value = item.group(2)
                strength = strength_of(name)
                if strength is not None and is_secret_value(strength, value, name):
                    a, b = header_secret_span(name, value) if strength == "header" else (0, len(value))
                    if a < b:
                        spans.append((item.start(2) + a, item.start(2) + b))
                name = None
            pos = item.end()
            if item.group(3) == "]":
                break
    return spans


# -- base64 of a text that holds a secret ----------------------------------------------------------------------
# A config or an env file shipped base64 in one variable (KUBE_CONFIG_DATA, the kubeconfig GitHub Actions' kubectl
# actions take; a Job's env file its entrypoint decodes, echoed by a traced script): the blob is as much a credential
# as what it holds. It is found by the base64 of a secret's key word, which reads the same whichever of the three
# byte offsets the word starts at, once its first characters (mixed with the bytes before) and its last (mixed with
# the bytes after) are left off; the blob is then decoded and judged by the assignment rules and the PEM header.
B64_WORDS = ("token", "Token", "TOKEN", "password", "Password", "PASSWORD", "secret", "Secret", "SECRET", "_key",
             "_KEY", "auth", "AUTH")


def _b64_word(word: str) -> list[str]:
    out = []
    for offset in range(3):
        encoded = base64.b64encode(b"\0" * offset + word.encode()).decode()
        out.append(encoded[(0, 2, 3)[offset]:(offset + len(word)) * 8 // 6])
    return out


B64_WORD_NEEDLES = tuple(sorted({n for w in B64_WORDS for n in _b64_word(w)}))
_B64_RUN = re.compile(r"(?<![A-Za-z0-9+/])[A-Za-z0-9+/]{40,}={0,2}(?![A-Za-z0-9+/=])")
B64_TEXT_MAX = 65536  # a longer blob is a file's content (an image, an archive), not a config


def b64_text(text: str) -> Spans:
    """Base64 runs whose decoded text holds a secret (see ``B64_WORDS``)."""
    spans: Spans = []
    for m in _B64_RUN.finditer(text):
        run = m.group()
        if len(run) > B64_TEXT_MAX or not any(n in run for n in B64_WORD_NEEDLES):
            continue
        try:
            decoded = base64.b64decode(run + "=" * (-len(run) % 4), validate=True).decode("utf-8")
        except ValueError:  # binascii.Error and UnicodeDecodeError both are
            continue
        text_like = all(c.isprintable() or c in "\r\n\t" for c in decoded)
        if text_like and (assignment(decoded) or PEM_BEGIN.search(decoded)):
            spans.append(m.span())
    return spans


# -- a map of secrets ---------------------------------------------------------------------------------------
# A map whose key names secrets (``secrets:``, ``credentials:``, ``passwords:``, ``auth:``) holds one under each of
# its keys, whatever the key says (``hf:``, ``db:``, ``primary:``): a job spec's or a Helm chart's secrets as yaml.dump
# prints them, a config's dict as pprint or json.dumps(indent=...) spreads it over lines, a TOML [secrets] table
# (https://pyyaml.org/wiki/PyYAMLDocumentation, https://github.com/python/cpython/blob/main/Lib/pprint.py,
# https://toml.io/en/v1.0.0#table). The value must still look like a password or a token (a word of letters and
# digits, or machine-made), so that ``auth: {type: oauth2, ttl: 3600}`` stays, and a key that says what else its
# value is (a user, a host, a path, a hash's scheme) is not read.
MAP_PARENT_WORDS = frozenset({"secrets", "credentials", "creds", "passwords", "auth", "tokens", "apikeys"})
MAP_PLAIN_CHILDREN = frozenset({
    "user", "username", "login", "email", "mail", "host", "hostname", "url", "uri", "endpoint", "server", "region",
    "zone", "project", "type", "kind", "provider", "mount", "path", "file", "dir", "name", "id", "port", "account",
    "tenant", "scope", "scopes", "method", "mode", "enabled", "ttl", "expiry", "expires", "timeout", "version",
    "owner", "source", "backend", "store", "namespace", "database", "driver", "schema", "issuer", "audience",
    "scheme", "algorithm", "algo", "hash", "cipher", "format", "encoding", "level", "strategy", "policy", "realm",
    "client", "app", "role", "group", "org", "team", "service", "image", "model", "bucket", "container",
})
MAP_LINES = 64  # a map of secrets is short; a longer one is read no further
_MAP_YAML_PARENT = re.compile(r"^(?P<ind>[ \t]*)(?:-[ \t]+)?[\"']?(?P<k>[A-Za-z_][\w.\-]{0,100})[\"']?"
                              r"[ \t]*:[ \t]*\r?$", re.MULTILINE)
_MAP_YAML_CHILD = re.compile(r"(?P<ind>[ \t]+)[\"']?(?P<k>[A-Za-z_][\w.\-]{0,100})[\"']?[ \t]*:[ \t]+"
                             r"""(?:(?P<q>["'])(?P<qv>[^"'\r\n]{1,512})(?P=q)|(?P<bv>[^\s"'#{\[][^\s#]{0,511}))"""
                             r"[ \t]*\r?$")
_MAP_TOML_PARENT = re.compile(r"^[ \t]*\[(?P<k>[A-Za-z_][\w.\-]{0,100})\][ \t]*\r?$", re.MULTILINE)
_MAP_TOML_CHILD = re.compile(r"""[ \t]*(?P<k>[A-Za-z_][\w.\-]{0,100})[ \t]*=[ \t]*"""
                             r"""(?:(?P<q>["'])(?P<qv>[^"'\r\n]{1,512})(?P=q)|(?P<bv>[^\s"'#{\[][^\s#]{0,511}))"""
                             r"[ \t]*\r?$")
_MAP_BRACE_PARENT = re.compile(r"""(?P<kq>["'])(?P<k>[A-Za-z_][\w.\-]{0,100})(?P=kq)[ \t]*:[ \t]*\{""")
_MAP_BRACE_PAIR = re.compile(r"""(?P<kq>["'])(?P<k>[A-Za-z_][\w.\-]{0,100})(?P=kq)[ \t]*:[ \t]*"""
                             r"""(?:"(?P<dv>(?:\\.|[^"\\\r\n]){1,512})"|'(?P<sv>(?:\\.|[^'\\\r\n]){1,512})')""")
MAP_BRACE_MAX = 4096  # characters of a map's braces read


def _map_parent(key: str) -> bool:
    words = key_words(key.rpartition(".")[2])
    return bool(words) and (words[-1] in MAP_PARENT_WORDS or "".join(words[-2:]) in MAP_PARENT_WORDS)


def _map_secret(key: str, value: str) -> bool:
    """A value held under ``key`` in a map of secrets: a password-like word or a machine-made token. Only under a
    key of one word (what the secret opens: ``hf``, ``db``, ``prod``); a key of more words says what its value is
    (``password_hash_scheme``, and a secret's own name is judged by the key rules)."""
    words = key_words(key)
    if len(words) != 1 or words[-1] in MAP_PLAIN_CHILDREN or is_placeholder(value) or any(c.isspace() for c in value):
        return False
    if value[0] in "/~" or "://" in value:
        return False  # a path or a URL (a URL's password is found by the URL rules)
    return generated_like(value) or (len(value) >= 8 and any(c.isalpha() for c in value)
                                     and any(c.isdigit() for c in value))


def _map_lines(text: str, pos: int, parent_indent: int, child: re.Pattern[str], toml: bool) -> Spans:
    spans: Spans = []
    indent = -1
    for _ in range(MAP_LINES):
        if pos >= len(text):
            break
        end = text.find("\n", pos)
        end = len(text) if end < 0 else end
        line = text[pos:end]
        if not line.strip():
            pos = end + 1
            continue
        depth = len(line) - len(line.lstrip(" \t"))
        if toml and line.lstrip().startswith("["):
            break
        if not toml and depth <= parent_indent:
            break
        m = child.match(text, pos, end)
        if indent < 0:
            indent = depth
        if m is not None and depth == indent:
            group = "qv" if m.group("qv") is not None else "bv"
            if _map_secret(m.group("k"), m.group(group)):
                spans.append(m.span(group))
        pos = end + 1
    return spans


def secret_map(text: str) -> Spans:
    """The values of maps whose key names secrets, over lines or in braces (see :data:`MAP_PARENT_WORDS`)."""
    spans: Spans = []
    for m in _MAP_YAML_PARENT.finditer(text):
        if _map_parent(m.group("k")):
            spans.extend(_map_lines(text, m.end() + 1, len(m.group("ind")), _MAP_YAML_CHILD, False))
    if "[" in text:
        for m in _MAP_TOML_PARENT.finditer(text):
            if _map_parent(m.group("k")):
                spans.extend(_map_lines(text, m.end() + 1, -1, _MAP_TOML_CHILD, True))
    if "{" in text:
        for m in _MAP_BRACE_PARENT.finditer(text):
            if not _map_parent(m.group("k")):
                continue
            close = text.find("}", m.end(), m.end() + MAP_BRACE_MAX)
            if close < 0 or text.find("{", m.end(), close) >= 0:
                continue  # no end in sight, or a map of maps
            for pair in _MAP_BRACE_PAIR.finditer(text, m.end(), close):
                group = "dv" if pair.group("dv") is not None else "sv"
                if _map_secret(pair.group("k"), pair.group(group)):
                    spans.append(pair.span(group))
    return spans


FINDERS: dict[str, Callable[[str], Spans]] = {"secret_map": secret_map,
                                               "folded_jwt": folded_jwt, "column_table": column_table,
                                               "table_row": table_row,
                                               "pem": pem, "assignment": assignment, "name_value": name_value,
                                               "k8s_secret": k8s_secret, "keyed_value": keyed_value,
                                               "diagnosed": diagnosed, "name_value_pair": name_value_pair,
                                               "record_value": record_value,
                                               "command_secrets": command_secrets,
                                               "numbered_reply": numbered_reply, "jwk_private": jwk_private,
                                               "b64_text": b64_text, "raw_headers": raw_headers}
