"""Hostile files through `sluice parse` (devtools/testing/hostile_files.py): nothing raises, no dead
letter says ``internal``, every output passes its contract, every line is held by an output, and no
output takes long. Seeded and small here; ``python -m devtools.hostile_files`` runs the long mode."""

from __future__ import annotations

import random

import pytest

from devtools.testing.hostile_files import check, hostile_file
from streams.native import NATIVE

SLOW_S = 2.0  # CPU seconds one output may take (its lines' decoding, merging, parsing and redaction)
ENGINES = ["python"] + (["native"] if NATIVE is not None else [])


@pytest.mark.timeout(120)
@pytest.mark.parametrize("engine", ENGINES)
def test_hostile_files_are_parsed_whole_and_quickly(engine: str) -> None:
    rng = random.Random(20261202)
    slowest = 0.0
    for _ in range(120):
        lines = hostile_file(rng)
        report = check(lines, engine)
        assert not report.findings, (lines, report.findings)
        slowest = max(slowest, report.slowest)
    assert slowest < SLOW_S, f"one output took {slowest:.2f} CPU-seconds"
