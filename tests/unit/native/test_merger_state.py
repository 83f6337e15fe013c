"""The native engine reads the merger's saved state and writes it again in the Python core's bytes.

The states are the ones the Python merger writes after every line of the corpus (its training, printers
and dev parts), states of the older formats the Python core still reads (mode names before the per-printer
modes, blank lines held as texts), and generated hostile documents (a field of any JSON type, cut or
changed bytes): the native answer is the Python core's bytes, or None (the Python core reads that state);
it must answer every state the Python core writes itself.
"""

from __future__ import annotations

import json
import zlib
from functools import cache
from pathlib import Path
from typing import Any

from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from devtools import CORPUS_DIR
from devtools.testing import fuzzing
from streams.assemble import merger as M
from streams.assemble.engine import merger_state
from streams.assemble.lines import SOURCE_FIELDS, RawLine
from streams.assemble.rules import MODES
from tests.unit.native.engines import native_or_skip

REPO = Path(__file__).resolve().parents[3]


def state_files(printers_share: int = 8) -> list[Path]:
    """The training corpus and the dev parts of the wild one whole, and a fixed share of the printers'
    files (by a stable hash of their path; an eighth for the states: the Python reference costs most
    of this test's time)."""
    files = sorted((CORPUS_DIR / "training").rglob("*.log"))
    for part in sorted((CORPUS_DIR / "wild").glob("dev*")):  # (never corpus/wild/test or a holdout)
        files += sorted(part.rglob("*.log"))
    return files + [p for p in sorted((CORPUS_DIR / "printers").rglob("*.log"))
                    if zlib.crc32(str(p.relative_to(REPO)).encode()) % printers_share == 0]


def python_reread(doc: bytes) -> str | None:
    """The reference: the state restored into a fresh Python merger and written again (None: it refuses)."""
    merger = M.MultilineMerger()
    try:
        merger.restore_source("s", json.loads(doc))
        return json.dumps(merger.source_state("s"), separators=(",", ":"))
    except Exception:  # noqa: BLE001 - any refusal: the native side must not answer either
        return None


@cache
def corpus_states() -> list[bytes]:
    """The merger's part of the state of its source after every line of the corpus files, as a worker
    writes it (json.dumps of the whole document), each distinct state once."""
    seen: dict[bytes, None] = {}
    for path in state_files():
        merger = M.MultilineMerger(max_lines=200, max_bytes=64 * 1024)
        text = path.read_bytes().decode("utf-8", "replace").split("\n")
        for i, t in enumerate(text):
            merger.push("s", RawLine(t.removesuffix("\r"), i * 10, 1_700_000_000_000 + i, index=i % 3), i, i)
            doc = {"v": 1, "sid": "s", **merger.source_state("s"), "last_ts": None}
            seen[json.dumps(doc, separators=(",", ":")).encode()] = None
    return list(seen)


def test_every_corpus_state_is_read_and_written_as_python_does() -> None:
    native = merger_state(native_or_skip())
    states = corpus_states()
    assert len(states) > 30_000, len(states)
    modes: set[str] = set()
    for i, doc in enumerate(states):
        got = native.reread(doc)
        assert got is not None, doc[:300]
        # the worker's own bytes, member for member (what the Python core writes after a restore too)
        assert doc == b'{"v":1,"sid":"s",' + got[1:-1].encode() + b',"last_ts":null}', doc[:300]
        if i % 10 == 0:
            assert got == python_reread(doc)
        modes.update(ob["mode"] for ob in json.loads(doc)["open"].values())
    assert len(modes) > 40, sorted(modes)


def test_an_envelope_s_level_and_figures_are_read_and_written_as_python_does() -> None:
    # journald's PRIORITY and GELF's additional fields ride on a line (RawLine.level, .fields) and are state
    # only where an agent gave them; figures that are floats are left to the Python core (None)
    native = merger_state(native_or_skip())
    answered = 0
    for level, fields in (("WARN", None), (None, {"step": 10}), ("ERROR", {"step": 3, "rank": 1}),
                          ("INFO", {"loss": 0.25})):
        merger = M.MultilineMerger()
        texts = ["Traceback (most recent call last):", '  File "/app/train.py", line 9, in <module>', "    main()"]
        for i, t in enumerate(texts):
            merger.push("s", RawLine(t, None, 1_700_000_000_000 + i, level=level, fields=fields), i, i)
            doc = json.dumps({"v": 1, "sid": "s", **merger.source_state("s"), "last_ts": None},
                             separators=(",", ":")).encode()
            assert (b'"level":' in doc) == (level is not None)
            got = native.reread(doc)
            if fields is not None and any(isinstance(v, float) for v in fields.values()):
                assert got is None
                continue
            assert got is not None and got == python_reread(doc), doc[:300]
            answered += 1
    assert answered == 9


def _older(doc: dict[str, Any], how: int) -> dict[str, Any]:
    """``doc`` as older versions wrote it: the modes' old names, blank lines as texts, fields they lacked."""
    old = {v: k for k, v in M.OLD_MODES.items() if v != "plain"}
    for ob in doc["open"].values():
        if how == 0 and ob["mode"] in old:
            ob["mode"] = old[ob["mode"]]
        elif how == 1 and ob["mode"].startswith("table_"):
            ob["mode"], ob["close"] = "table", {v: k for k, v in M.OLD_TABLE_MODES.items()}.get(ob["mode"], "?")
        elif how == 2 and ob["mode"] in (*M.OLD_PANIC_MODES, "plain"):
            ob["mode"] = "panic"
        elif how == 3:
            ob["pending"] = [[rl["text"], o, rl["file_offset"]] for rl, o, _ms, _v in ob.pop("held")]
        elif how == 4:
            for name in ("indent0", "head0", "rhead", "last_body", "depth", "side_run", "every", "spaced", "cindent",
                         "tent"):
                ob.pop(name, None)
            for name in ("kind", "truncated", "nbytes", "prefix"):
                ob["block"].pop(name, None)
        elif how == 5:
            ob["mode"] = "done"
    return doc


def test_older_states_are_read_as_python_reads_them() -> None:
    native = merger_state(native_or_skip())
    changed = 0
    for doc in corpus_states()[::40]:
        for how in range(6):
            older = json.dumps(_older(json.loads(doc), how)).encode()
            expected = python_reread(older)
            assert expected is not None
            assert native.reread(older) == expected, older[:300]
            changed += older != doc
    assert changed > 500


def test_an_old_mode_name_changed_in_one_engine_is_found() -> None:
    """The comparison above can fail: a native reader given one old table mode's name changed answers otherwise."""
    native = native_or_skip()
    table = {**M.OLD_TABLE_MODES, "=": "table_dash"}
    mutant = native.MergerState(list(MODES), M.OLD_MODES, table, M.OLD_PANIC_MODES, list(SOURCE_FIELDS))
    olds = [json.dumps(_older(json.loads(doc), 1)).encode() for doc in corpus_states() if b'"table_eq"' in doc]
    assert olds
    assert any(mutant.reread(d) != python_reread(d) for d in olds)


def _paths(v: Any, at: tuple[Any, ...] = ()) -> list[tuple[Any, ...]]:
    """Every place in a JSON value (dict keys and list indices from the top)."""
    out = [at]
    if isinstance(v, dict):
        for k, x in v.items():
            out += _paths(x, (*at, k))
    elif isinstance(v, list):
        for i, x in enumerate(v):
            out += _paths(x, (*at, i))
    return out


def _put(doc: Any, at: tuple[Any, ...], value: Any) -> Any:
    if not at:
        return value
    inner = doc
    for k in at[:-1]:
        inner = inner[k]
    inner[at[-1]] = value
    return doc


@cache
def _rich_states() -> list[bytes]:
    """States with a held line or a tentative one, in older formats too."""
    return [d for d in corpus_states() if b'"held":[[' in d or b'"tent":[[' in d][::50]


@settings(max_examples=600, deadline=None, suppress_health_check=list(HealthCheck))
@given(st.data())
def test_hostile_states_are_read_as_python_reads_them_or_handed_over(data: st.DataObject) -> None:
    native = merger_state(native_or_skip())
    doc = data.draw(st.sampled_from(_rich_states()))
    how = data.draw(st.integers(0, 3))
    if how == 0:  # a value of any JSON type anywhere
        value = json.loads(doc)
        at = data.draw(st.sampled_from(_paths(value)))
        new = fuzzing.any_json(fuzzing.DrawChoices(data), 2)
        doc = json.dumps(_put(value, at, new), separators=(",", ":")).encode()
    elif how == 1:  # a key removed or added
        value = json.loads(doc)
        at = data.draw(st.sampled_from([p for p in _paths(value) if p]))
        inner = value
        for k in at[:-1]:
            inner = inner[k]
        if isinstance(inner, dict):
            if data.draw(st.booleans()):
                del inner[at[-1]]
            else:
                inner[data.draw(st.sampled_from(["x", "close", "pending", "held", "mode", "kind"]))] = 1
        doc = json.dumps(value).encode()
    elif how == 2:  # bytes cut or changed
        i = data.draw(st.integers(0, len(doc) - 1))
        doc = doc[:i] + data.draw(st.binary(max_size=3)) + doc[i + data.draw(st.integers(0, 3)):]
    else:  # text of any characters in a line
        value = json.loads(doc)
        text = data.draw(st.text(max_size=12) | st.sampled_from(fuzzing.ODD_TEXT))
        for ob in value["open"].values():
            ob["block"]["texts"][-1] = text
            for entry in ob["held"] + ob["tent"]:
                entry[0]["text"] = text
        doc = json.dumps(value, ensure_ascii=data.draw(st.booleans())).encode("utf-8", "surrogatepass")
    expected = python_reread(doc)
    got = native.reread(doc)
    assert got is None or got == expected, doc[:300]
    if how == 3 and expected is not None and not any("\ud800" <= c <= "\udfff" for c in text):
        assert got == expected  # any text is the native reader's to read (a lone surrogate aside)
