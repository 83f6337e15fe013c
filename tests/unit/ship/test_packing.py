"""Records that always encode: fields bounded at the edge, batches split to fit, bad lines quarantined.

Encoding is the real RawBatch contract (fastavro); only the registry is left out.
"""

from __future__ import annotations

import pytest

from devtools.testing.ship import RecordingSender
from streams.ship.batching import OFFSET_LIMIT, Batcher, split_to_fit
from streams.ship.bounds import FLAGS_LABEL, avro_text, bound_source
from streams.ship.encoding import EncodeError, RawBatchContract
from streams.ship.identity import MAX_GENERATION, generation_base
from streams.ship.labels import Origin, SourceBuilder
from streams.ship.packing import Packer
from streams.ship.sender import SendError
from streams.ship.stats import Stats

CONTRACT = RawBatchContract()


def batch_value(source: dict, labels: dict, lines: list[dict]) -> dict:
    return {"source": source, "labels": labels, "lines": lines, "sent_ts": 1_700_000_000_000}


def lines(n: int, size: int = 100, start: int = 0) -> list[dict]:
    return [{"line": f"{i:06d} " + "x" * (size - 7), "file_offset": start + i * (size + 1), "ts": 1} for i in range(n)]


SOURCE = {"host": "gpu-1", "namespace": None, "pod": None, "container": None, "file": "/l/rank0.log",
          "stream": None, "node_role": None, "rank": 0}


# -- bounds at the edge ------------------------------------------------------------------------------

def test_a_rank_beyond_the_contracts_int_is_kept_as_text_and_flagged() -> None:
    node = Origin("gpu-1", None, None, None, {"project": "p"})
    builder = SourceBuilder(node, r"rank(?P<rank>\d+)\.log$")
    source, labels = builder.for_path("/l/rank99999999999.log")
    assert source["rank"] is None and labels["rank"] == "99999999999"
    assert labels[FLAGS_LABEL] == "rank_out_of_range"
    assert CONTRACT.problem(batch_value(source, labels, lines(2))) is None
    ok_source, ok_labels = builder.for_path("/l/rank2147483647.log")
    assert ok_source["rank"] == 2**31 - 1 and FLAGS_LABEL not in ok_labels


def test_digits_of_other_scripts_are_not_ranks() -> None:
    node = Origin("gpu-1", None, None, None, {"rank": "²"})  # str.isdigit() says yes, int() raises
    source, labels = SourceBuilder(node, None).for_path("/l/x.log")
    assert source["rank"] is None and labels["rank"] == "²"


def test_names_that_are_not_utf8_stay_distinct_and_encode() -> None:
    a, b = "/l/rank\udcff.log", "/l/rank\udcfe.log"  # os.listdir's surrogate escapes of bytes 0xff, 0xfe
    assert avro_text(a) == "/l/rank\\xff.log" and avro_text(a) != avro_text(b)
    assert avro_text("lone \ud800 surrogate") == "lone \\ud800 surrogate"  # e.g. from a JSON \\ud800 escape
    source, labels = bound_source({**SOURCE, "file": a}, {"team\udcff": "v\ud800"})
    assert CONTRACT.problem(batch_value(source, labels, lines(1))) is None
    assert source["file"] == "/l/rank\\xff.log" and labels == {"team\\xff": "v\\ud800"}


def test_generations_and_offsets_beyond_a_long_are_sent_without_offsets() -> None:
    assert generation_base(MAX_GENERATION) is not None and generation_base(MAX_GENERATION + 1) is None
    b = Batcher(max_lines=100, max_bytes=100_000)
    b.add(1, None, [(0, 4, "abc")], ts_ms=1)
    b.add(2, 0, [(OFFSET_LIMIT - 4, OFFSET_LIMIT, "abc"), (OFFSET_LIMIT, OFFSET_LIMIT + 4, "def")], ts_ms=1)
    got = {x.stream: [r["file_offset"] for r in x.records] for x in b.take_all()}
    assert got == {1: [None], 2: [OFFSET_LIMIT - 4, None]}


# -- splitting ------------------------------------------------------------------------------------------

def test_split_keeps_order_and_isolates_what_fits_nowhere() -> None:
    records = [{"n": i, "bad": i in (3, 11)} for i in range(16)]
    parts = split_to_fit(records, lambda part: len(part) <= 4 and not any(r["bad"] for r in part))
    assert [r["n"] for part, _ in parts for r in part] == list(range(16))
    assert [part[0]["n"] for part, fits in parts if not fits] == [3, 11]
    assert all(len(part) <= 4 for part, fits in parts if fits)


def test_a_batch_over_the_message_limit_goes_as_parts_that_fit() -> None:
    stats = Stats()
    packer = Packer(RecordingSender(), 64 * 1024, stats)
    value = batch_value(SOURCE, {"project": "p"}, lines(2000))  # ~200 kB encoded
    payloads = packer.pack("/l/rank0.log", value, 0, 2000 * 101)
    assert len(payloads) > 1 and all(len(p) <= 64 * 1024 for p in payloads)
    decoded = [(ln["line"], ln["file_offset"]) for p in payloads for ln in CONTRACT.decode(p)["lines"]]
    assert decoded == [(ln["line"], ln["file_offset"]) for ln in value["lines"]]
    assert stats.batches_split == 1 and stats.lines_quarantined == 0


def test_a_line_the_contract_refuses_is_quarantined_and_the_rest_go() -> None:
    # Lines from the Batcher always encode; a bug that let one through must cost that line a flag,
    # never the batch or the file.
    stats = Stats()
    packer = Packer(RecordingSender(), 1_000_000, stats)
    bad = {"line": "half \udcff", "file_offset": 2**63, "ts": 1}
    value = batch_value(SOURCE, {"project": "p"}, [*lines(5), bad, *lines(5, start=10_000)])
    payloads = packer.pack("/l/rank0.log", value, 0, 20_000)
    values = [CONTRACT.decode(p) for p in payloads]
    got = [ln for v in values for ln in v["lines"]]
    assert [ln["line"] for ln in got] == [*(ln["line"] for ln in lines(5)), "half \\xff",
                                          *(ln["line"] for ln in lines(5, start=10_000))]
    flagged = [v for v in values if v["labels"].get(FLAGS_LABEL)]
    assert len(flagged) == 1 and flagged[0]["labels"][FLAGS_LABEL] == "line_quarantined"
    assert flagged[0]["lines"][0]["file_offset"] is None and stats.lines_quarantined == 1


def test_an_envelope_the_contract_refuses_is_reduced_and_flagged() -> None:
    stats = Stats()
    packer = Packer(RecordingSender(), 1_000_000, stats)
    value = batch_value({**SOURCE, "rank": 99999999999}, {"project": "p"}, lines(3))  # bounds bypassed
    values = [CONTRACT.decode(p) for p in packer.pack("/l/rank0.log", value, 0, 303)]
    assert [ln["line"] for v in values for ln in v["lines"]] == [ln["line"] for ln in lines(3)]
    assert {v["labels"][FLAGS_LABEL] for v in values} == {"envelope_quarantined"}
    assert values[0]["source"]["host"] == "gpu-1" and values[0]["source"]["rank"] is None


def test_an_unreachable_registry_is_retried_not_split() -> None:
    sender = RecordingSender()
    sender.registry_down = True
    stats = Stats()
    with pytest.raises(SendError):
        Packer(sender, 1_000_000, stats).pack("/l/a.log", batch_value(SOURCE, {}, lines(2)), 0, 202)
    assert stats.batches_split == 0


def test_a_broker_limit_below_ours_halves_the_limit() -> None:
    packer = Packer(RecordingSender(), 1_000_000, Stats())
    packer.refused_as_too_large(600_000)
    assert packer.message_limit == 300_000
    packer.refused_as_too_large(10_000)
    assert packer.message_limit == 64 * 1024  # the floor


def test_the_contract_check_tells_values_apart_without_io() -> None:
    with pytest.raises(EncodeError, match="rank"):
        CONTRACT.encode(batch_value({**SOURCE, "rank": 2**40}, {}, []))
    assert CONTRACT.problem(batch_value(SOURCE, {}, lines(1))) is None
