"""Hostile files through the offline assemble path (``sluice parse``), and what must hold.

A file is a few lines drawn from a seeded random stream: real corpus lines with invalid UTF-8, NULs,
control characters, ANSI escapes and bidi overrides spliced in; JSON with lone surrogates, duplicate
keys, 100,000 levels of nesting, numbers past every float and integer (``1e999``, 5,000 digits), an
agent's labels of every JSON type, keys named as Sluice's own attributes, an OTLP boolean file offset;
docker and CRI envelopes cut anywhere; times from year 0, year 99999 and before the epoch; UTF-16
lines; megabyte tokens (``big=True``); random bytes. :func:`check` parses it as `sluice parse` does
(the worker's Avro body writer as the encoder) and reports a finding for each of: an exception out
of ``parse_files``; a dead letter saying ``internal`` (Sluice's own code failed); an output its
contract refuses; a line that no output holds (blank lines and partial fragments excepted).
``slowest`` is the most CPU time one output took (the lines it holds included).
"""

from __future__ import annotations

import json
import random
import tempfile
import time
import traceback
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import fastavro.validation

from devtools.testing.fuzzing import CORPUS_LINES
from streams.assemble.decode import decode_record
from streams.assemble.lines import RawLine
from streams.assemble.merger import split_prefix, terminal_text
from streams.assemble.outputs import CONTRACT_OF_KIND, encode_body
from streams.assemble.pipeline import TEXT_IN_FILES, _file_lines, parse_files
from streams.contracts import parsed_schema
from streams.errors import DecodeError

ODD = ("\x00", "\x1b[31m", "\x1b[0m", "\x1b]0;title\x07", "\u202e", "\u2066", "\u200b", "\ufeff", "\r", "\x7f",
       "\x08", "\x0c", "\u2028", "\U0001f525", "\ud7ff", "\x85")
BAD_BYTES = (b"\xff", b"\xc3", b"\xed\xa0\x80", b"\xf4\x90\x80\x80", b"\xc0\xaf", b"\x80\x80", b"\xfe\xff")
TIMES = ("0000-01-01T00:00:00Z", "0001-01-01T00:00:00.000000000Z", "99999-12-31T23:59:59Z", "1969-12-31T23:59:59Z",
         "2024-02-30T25:61:61Z", "2024-05-01T10:00:00.123456789+99:99", "-001-01-01T00:00:00Z")
EPOCHS = (-1, -62135596800, -(2**63), 2**63, 253402300800000, 1e308, -1e999, 0)
NUMBERS = ("1e999", "-1e999", "1" + "0" * 5000, "-" + "9" * 5000, "1e-999", "0." + "0" * 4000 + "1", "NaN",
           "Infinity", "9223372036854775808")


def _corpus(rng: random.Random) -> str:
    return rng.choice(CORPUS_LINES) if CORPUS_LINES else "2024-05-01 10:00:00 INFO step 1 loss=0.5"


def _spliced(rng: random.Random, text: str) -> bytes:
    data = text.encode("utf-8", "surrogatepass")
    for _ in range(rng.randint(1, 4)):
        at = rng.randint(0, len(data))
        bit = rng.choice(BAD_BYTES) if rng.random() < 0.5 else rng.choice(ODD).encode("utf-8", "surrogatepass")
        data = data[:at] + bit + data[at:]
    return data


def _json_line(rng: random.Random) -> str:  # noqa: PLR0911 - one case per kind
    kind = rng.randrange(9)
    if kind == 0:
        return '{"log": "\\ud800 lone \\udfff surrogates\\n", "stream": "stderr", "time": "2024-05-01T10:00:00Z"}'
    if kind == 1:
        depth = rng.choice((200, 5000, 100_000))
        return '{"log": ' + "[" * depth + "]" * depth + "}"
    if kind == 2:
        n = rng.choice(NUMBERS)
        return f'{{"loss": {n}, "global_step": {n}, "epoch": {n}, "learning_rate": {n}}}'
    if kind == 3:
        return '{"log": "a\\n", "log": "b\\n", "stream": "stdout", "stream": 7, "time": 1, "time": "x"}'
    if kind == 4:
        return json.dumps({"log": _corpus(rng) + "\n", "stream": "stdout", "time": rng.choice(TIMES)})
    if kind == 5:
        return json.dumps({"message": _corpus(rng), "@timestamp": rng.choice(EPOCHS), "host": {"name": [1, {}]}})
    if kind == 6:  # an agent's labels of every JSON type (a null or a list must name no project)
        value = rng.choice((None, ["Team-A"], {"a": 1}, True, 7, "x" * 5000, "../../etc", "UPPER*.."))
        return json.dumps({"message": _corpus(rng), "source_type": "file", "labels": {"project": value}})
    if kind == 7:  # a record's keys named as Sluice's own attributes, and long keys alike in their first 128
        return json.dumps({"msg": _corpus(rng), "format": "safetensors", "sluice.flags": "forged",
                           "k" * 300: 1, "k" * 200: 2})
    attr = {"key": "log.file.record_offset", "value": {rng.choice(("boolValue", "doubleValue")): True}}
    return json.dumps({"resourceLogs": [{"scopeLogs": [{"logRecords": [
        {"body": {"stringValue": _corpus(rng)}, "attributes": [attr]}]}]}]})


def _envelope_cut(rng: random.Random) -> bytes:
    if rng.random() < 0.5:
        whole = json.dumps({"log": _corpus(rng) + "\n", "stream": "stderr", "time": rng.choice(TIMES)}).encode()
    else:
        whole = f"{rng.choice(TIMES)} stdout {rng.choice('PF')} {_corpus(rng)}".encode()
    return whole[:rng.randint(0, len(whole))]


def _timed(rng: random.Random) -> str:
    t = rng.choice(TIMES)
    shapes = (f"{t} stderr F {_corpus(rng)}", f"[{t}] ERROR boom", f"{t[:19].replace('T', ' ')} INFO x",
              f"I{t[5:7]}{t[8:10]} 25:61:61.000000 1 main.go:1] x", f'{{"ts": {rng.choice(EPOCHS)}, "msg": "x"}}')
    return rng.choice(shapes)


def hostile_line(rng: random.Random, big: bool = False) -> bytes:  # noqa: PLR0911 - one case per kind
    """One line (no newline in it) of a kind drawn from ``rng``."""
    kind = rng.randrange(11)
    if kind == 0:
        return bytes(rng.randrange(256) for _ in range(rng.randint(0, 200))).replace(b"\n", b"")
    if kind == 1:
        return _spliced(rng, _corpus(rng)).replace(b"\n", b"")
    if kind == 2:
        return _json_line(rng).encode("utf-8", "surrogatepass")
    if kind == 3:
        return _envelope_cut(rng).replace(b"\n", b"")
    if kind == 4:
        return _timed(rng).encode()
    if kind == 5:
        return "".join(rng.choice(ODD) for _ in range(rng.randint(1, 40))).encode("utf-8", "surrogatepass")
    if kind == 6:
        size = rng.choice((1 << 20, 3 << 19)) if big else rng.choice((4096, 70_000))
        token = "".join(rng.choice("ABCDEFabcdef0123456789+/") for _ in range(64)) * (size // 64)
        return (rng.choice(("Authorization: Bearer ", "token=", "", "password: ", '{"log": "')) + token).encode()
    if kind == 7:
        unit = rng.choice(("Authorization: ", "apikey: ", "key: 'v', ", "--password x ", "\\u00e9", "[", "{\"a\":", "_",
                           "a."))
        return (unit * ((1 << 20 if big else 40_000) // len(unit))).encode()
    if kind == 8:
        return ("\ufeff" + _corpus(rng)).encode(rng.choice(("utf-16-le", "utf-16-be", "utf-32-le")))
    if kind == 9:
        return f"{_corpus(rng)} {rng.choice(NUMBERS)} step={rng.choice(NUMBERS)} loss={rng.choice(NUMBERS)}".encode()
    return _corpus(rng).encode()


# Characters that hold a 0x0A byte in UTF-16 or UTF-32 (上 U+4E0A, Ċ U+010A, ਊ U+0A0A, 伊 U+4F0A): a reader that
# cuts a wide file at each 0x0A byte ends a line inside them.
WIDE_0A = ("上", "Ċ", "ਊ", "伊", "上传失败", "ĊĊ")


def wide_file(rng: random.Random, max_lines: int = 12) -> list[bytes]:
    """A whole file in UTF-16 or UTF-32 (Windows' services, PowerShell's ">"; with or without its mark, CRLF or
    LF), its lines corpus lines with characters that hold a 0x0A byte; sometimes UTF-8 lines appended after it.
    As pieces cut at each 0x0A byte, the way :func:`check` joins them back."""
    codec = rng.choice(("utf-16-le", "utf-16-be", "utf-32-le", "utf-32-be"))
    eol = rng.choice(("\n", "\r\n"))
    texts = [_corpus(rng).rstrip("\r") + " " + rng.choice(WIDE_0A) + rng.choice(("", " x", " " + _corpus(rng)[:40]))
             for _ in range(rng.randint(1, max_lines))]
    data = (rng.choice(("\ufeff", "")) + eol.join(texts) + eol).encode(codec, "surrogatepass")
    if rng.random() < 0.3:
        data += "".join(f"{_corpus(rng)} {rng.choice(WIDE_0A)}\n" for _ in range(rng.randint(1, 3))).encode()
    return data[:-1].split(b"\n") if data.endswith(b"\n") else data.split(b"\n")


def hostile_file(rng: random.Random, big: bool = False, max_lines: int = 12) -> list[bytes]:
    """The file's lines (a wide line whose characters hold a 0x0A byte is more than one); sometimes a
    traceback's head after a line, which makes the merger search the line before it for an announcement;
    sometimes a whole wide file (:func:`wide_file`)."""
    if rng.random() < 0.08:
        return wide_file(rng, max_lines)
    lines = [piece for _ in range(rng.randint(1, max_lines)) for piece in hostile_line(rng, big).split(b"\n")]
    if rng.random() < 0.3:
        lines.insert(rng.randint(1, len(lines)), b"Traceback (most recent call last):")
    return lines


@dataclass
class Report:
    findings: list[str] = field(default_factory=list)
    slowest: float = 0.0  # CPU seconds of the slowest output
    slowest_lines: int = 0  # lines it held
    outputs: int = 0


def _decoded(raw: bytes) -> list[Any] | None:
    """The line as `sluice parse` reads it; None when it is a dead letter."""
    try:
        return decode_record(raw) if raw.strip() else []
    except DecodeError as exc:
        if exc.error_type in TEXT_IN_FILES:  # in a file, only "no envelope": the line is text
            return [RawLine(raw.decode("utf-8", "replace").replace("\x00", ""))]
        return None


def _must_be_held(lines: list[bytes], goes_on: set[int]) -> list[bool]:
    """Per line: whether some output must hold it. Blank lines need not (terminal escapes alone, or a relay's
    prefix alone: a time, a rank); nor a partial fragment and the line that completes it (the next one that
    decodes), held together under the fragment's number; nor the rest of a wide line past a 0x0A inside a
    character (numbers in ``goes_on``), held under the line's first number."""
    out = []
    after_partial = False
    for no, raw in enumerate(lines, 1):
        if no in goes_on:
            out.append(False)
            continue
        decoded = _decoded(raw)
        blank = decoded is not None and all(not terminal_text(split_prefix(ln.text)[1]).strip() for ln in decoded)
        out.append(not blank and not after_partial and not (decoded and decoded[-1].partial))
        if decoded is not None:  # (a line that does not decode is a dead letter: the fragment waits on)
            after_partial = bool(decoded and decoded[-1].partial)
    return out


def _goes_on(path: Path) -> set[int]:
    """The numbers of the pieces (lines as cut at each 0x0A byte) that `sluice parse` reads as the rest of the
    wide line before them (``widetext.WideNewlines``)."""
    out: set[int] = set()
    no = 0
    for _raw, _cut, pieces in _file_lines(path, 1 << 30):
        out.update(range(no + 2, no + pieces + 1))
        no += pieces
    return out


def _held(out: dict[str, Any]) -> range:
    if out.get("kind") == "dead_letter":
        first = int(out["offset"])
        last = int((out.get("headers") or {}).get("last_offset") or first)
        lines = int((out.get("headers") or {}).get("lines") or 1)
        return range(first, max(last, first + lines - 1) + 1)
    raw = out.get("raw") or {}
    return range(int(raw["first_offset"]), int(raw["last_offset"]) + 1)


def _contract_problem(out: dict[str, Any]) -> str | None:
    kind = out.get("kind") or ("metric" if "metrics" in out and "message" not in out else "event")
    value = {k: v for k, v in out.items() if k != "kind"} if kind == "dead_letter" else out
    try:
        fastavro.validation.validate(value, parsed_schema(CONTRACT_OF_KIND[kind]), raise_errors=True)
    except Exception as exc:  # noqa: BLE001 - any refusal is the finding
        return f"{kind} refused by its contract: {str(exc)[:300]}"
    return None


def check(lines: list[bytes], engine: str | None = None) -> Report:
    """Parse ``lines`` as one file and report what broke."""
    report = Report()
    with tempfile.TemporaryDirectory() as tmp:
        path = Path(tmp) / "hostile.log"
        path.write_bytes(b"\n".join(lines) + b"\n")
        goes_on = _goes_on(path)
        held: set[int] = set()
        outputs = parse_files([path], default_ts_ms=1_700_000_000_000, engine=engine,
                              encode=lambda out: encode_body(out, engine))
        while True:
            t = time.process_time()
            try:
                out = next(outputs)
            except StopIteration:
                break
            except Exception as exc:  # noqa: BLE001 - the finding
                report.findings.append(f"raised: {type(exc).__name__}: {exc}\n{traceback.format_exc(limit=-3)}")
                return report
            took = time.process_time() - t
            report.outputs += 1
            span = _held(out)
            if took > report.slowest:
                report.slowest, report.slowest_lines = took, len(span)
            held.update(span)
            if out.get("kind") == "dead_letter" and out.get("error_type") == "internal":
                report.findings.append(f"internal dead letter at line {out['offset']}: {out.get('error')}")
            if (problem := _contract_problem(out)) is not None:
                report.findings.append(problem)
    for no, (raw, must) in enumerate(zip(lines, _must_be_held(lines, goes_on), strict=True), 1):
        if must and no not in held:
            report.findings.append(f"lost: line {no} ({raw[:80]!r}) is in no output")
    return report
