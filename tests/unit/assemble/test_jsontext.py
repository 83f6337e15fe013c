"""JSON from untrusted input: every string it yields can be written as UTF-8."""

import pytest

from streams.assemble import jsontext
from streams.assemble.timefmt import MAX_MS, agent_ms, epoch_ms, rfc3339_ms, unix_nano_ms

pytestmark = pytest.mark.unit


def encodable(value: object) -> None:
    if isinstance(value, str):
        value.encode("utf-8")
    elif isinstance(value, dict):
        for k, v in value.items():
            encodable(k)
            encodable(v)
    elif isinstance(value, list | tuple):
        for v in value:
            encodable(v)


@pytest.mark.parametrize("raw", [
    '{"log": "a \\ud800 b"}',                       # a high surrogate alone
    '{"log": "\\udfff"}',                           # a low one alone
    '{"\\uDB79": ["x", {"k": "\\ud83d"}]}',          # in a key, nested, upper-case hex
    b'{"log": "bytes of a surrogate \xed\xa0\x80"}',  # encoded, not escaped (json reads bytes with surrogatepass)
    b'{"log": "latin-1 \xe9 byte"}',                  # not UTF-8 at all
])
def test_lone_surrogates_become_replacement_characters(raw: str | bytes) -> None:
    value = jsontext.loads(raw)
    encodable(value)
    assert "\ufffd" in repr(value) or "\\ufffd" in ascii(value)


def test_a_surrogate_pair_stays_the_character_it_escapes() -> None:
    assert jsontext.loads('{"e": "\\ud83d\\ude00"}') == {"e": "\U0001F600"}
    assert jsontext.loads(b'{"e": "ok"}') == {"e": "ok"}


def test_python_literals_are_scrubbed_too() -> None:
    assert jsontext.may_hold_lone_surrogates("{'a': '\\ud800'}")
    assert not jsontext.may_hold_lone_surrogates("{'a': '\\u00e9'}")
    assert jsontext.scrub({"a": ("\ud800", ["\udc00"])}) == {"a": ("\ufffd", ["\ufffd"])}


@pytest.mark.parametrize(("parse", "value"), [
    (epoch_ms, float("inf")), (epoch_ms, float("nan")), (epoch_ms, 1e400), (epoch_ms, -5.0),
    (epoch_ms, 9.3e18),                                    # milliseconds past any date
    (unix_nano_ms, "9" * 30), (unix_nano_ms, 2**70), (unix_nano_ms, -1),
    (rfc3339_ms, "9999-12-31T23:59:59-23:59"),               # past year 9999 once in UTC
    (agent_ms, MAX_MS + 1), (agent_ms, 0), (agent_ms, -1),
])
def test_an_agents_time_no_date_holds_is_not_believed(parse, value) -> None:
    assert parse(value) is None


def test_an_agents_good_times_are_kept() -> None:
    assert epoch_ms(1_700_000_000.5) == 1_700_000_000_500
    assert unix_nano_ms("1700000000000000000") == 1_700_000_000_000
    assert agent_ms(MAX_MS) == MAX_MS
