"""A secret whose lines come as events of their own is redacted the same across a restart of the worker.

The redactor remembers, per source, what an event opened (a private key's BEGIN line, PuTTY's ``Private-Lines:``,
``vault kv get``'s Data heading, a table heading that names a token column); the next events of the source are read
by it. That memory is part of the source's saved state: a worker restored from the state topic between the opening
event and the secret's lines must redact them as the worker that stopped would have.
"""

from __future__ import annotations

import base64
import random

import pytest

from streams.assemble.pipeline import Assembler, RawRecord
from streams.assemble.redact import Redactor
from streams.assemble.state import forget_source, restore_source, sid_of_key, source_state, state_key

_RNG = random.Random(7)


def _b64(n: int) -> str:
    return base64.b64encode(_RNG.randbytes(n)).decode()


def _token(n: int) -> str:
    return "".join(_RNG.choice("abcdefghijklmnopqrstuvwxyz0123456789") for _ in range(n))


_KEY = [_b64(48) for _ in range(4)]
_PUTTY = [_b64(48), _b64(30)]
_VAULT = [_token(24), _token(32)]
_TABLE = [_token(40), _token(40)]
SCENARIOS = {
    # each line of the key behind a record head of its own, so each is an event
    "pem": (["2024-05-01 10:00:00 INFO node-3 setup: -----BEGIN OPENSSH PRIVATE KEY-----"]
            + [f"2024-05-01 10:00:0{i + 1} INFO {b}" for i, b in enumerate(_KEY)]
            + ["2024-05-01 10:00:09 INFO -----END OPENSSH PRIVATE KEY-----", "2024-05-01 10:00:10 INFO done"], _KEY),
    "putty": (["PuTTY-User-Key-File-3: ssh-rsa", "Encryption: none", "Public-Lines: 1", "AAAAB3NzaC1yc2EAAAADAQABAAAB",
               "Private-Lines: 2", *_PUTTY, "Private-MAC: 1234abcd"], _PUTTY),
    "vault": (["==== Data ====", "Key         Value", "---         -----", f"primary     {_VAULT[0]}",
               f"replica     {_VAULT[1]}", "done"], _VAULT),
    "table": (["NAME         TOKEN                                       AGE", f"ci-runner    {_TABLE[0]}    3d",
               f"trainer      {_TABLE[1]}    1d"], _TABLE),
}


def _records(lines: list[str]) -> list[RawRecord]:
    return [RawRecord("logs.raw", 0, i, line.encode(), b"host-1", 1_714_557_600_000 + 1000 * i)
            for i, line in enumerate(lines)]


def _messages(outputs: list) -> list[str]:
    return [o.value["message"] for o in outputs if o.kind == "event"]


def _continuous(lines: list[str]) -> list[str]:
    asm = Assembler()
    out = [o for r in _records(lines) for o in asm.feed(r)]
    return _messages(out + asm.flush_all())


def _restarted(lines: list[str], cut: int) -> list[str]:
    """Feed the lines before ``cut``, save every touched source's state, then go on in a fresh Assembler (with a
    redactor of its own: nothing of the first one's memory survives but what the state topic holds)."""
    records = _records(lines)
    first = Assembler()
    out = [o for r in records[:cut] for o in first.feed(r)]
    topic = {state_key(0, sid): source_state(first, sid) for sid in first.take_dirty()}
    second = Assembler(redactor=Redactor())
    for key, value in topic.items():
        if value is None:
            forget_source(second, sid_of_key(key))
        else:
            restore_source(second, value)
    out += [o for r in records[cut:] for o in second.feed(r)]
    return _messages(out + second.flush_all())


@pytest.mark.parametrize("name", sorted(SCENARIOS))
def test_a_secret_over_events_is_redacted_after_a_restart_at_every_record(name: str) -> None:
    lines, secrets = SCENARIOS[name]
    whole = _continuous(lines)
    assert not [s for s in secrets if any(s[:8] in m for m in whole)], whole  # the rule itself works
    for cut in range(1, len(lines)):
        got = _restarted(lines, cut)
        assert got == whole, (cut, got)


def test_the_memory_is_kept_by_rank_and_dropped_with_the_source() -> None:
    redact = Redactor()
    asm = Assembler(redactor=redact)
    asm.feed(_records(["2024-05-01 10:00:00 INFO node-3 setup: -----BEGIN RSA PRIVATE KEY-----"])[0])
    asm.flush_all()
    (sid,) = asm.take_dirty()
    saved = redact.source_state(sid)
    assert saved == [[None, "pem", True]]
    forget_source(asm, sid)
    assert redact.source_state(sid) is None
    redact.restore_source(sid, [[3, "pem", True], [None, "lead", [1, "no such pattern", True]]])
    assert redact.source_state(sid) == [[3, "pem", True]]
