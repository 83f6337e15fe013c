"""A record the contract lets through cannot stop the watch rules: any long as its time (before year 1,
past year 9999), NaN and infinite figures, steps and ranks at the ends of their types."""

from __future__ import annotations

import random

from helpers import T0, corpus_events, point

from devtools.testing.watch import MemoryWatchStore
from streams.watch.engine import WatchEngine
from streams.watch.observation import LAST_MS, Observation, from_record
from streams.watch.settings import WatchSettings
from tests.unit.assemble.corpus_helpers import TRAINING

TIMES = (-(2**63), 2**63 - 1, -1, 0, 253_402_300_799_999, -62_135_596_800_001, T0)
FIGURES = (float("nan"), float("inf"), -float("inf"), 1e308, -0.0, 5e-324)


def _observe(engine: WatchEngine, store: MemoryWatchStore, record: dict) -> None:
    engine.observe_all(Observation.from_json(from_record(record).to_json()), store)


def test_records_at_the_ends_of_their_types_never_stop_the_rules() -> None:
    conf = WatchSettings()
    engine, store, rng = WatchEngine(conf), MemoryWatchStore(conf), random.Random(5)
    failing = [*corpus_events(TRAINING / "bigscience_tr1-13B_init_then_cuda_oom_at_barrier.log", "t1"),
               *corpus_events(TRAINING / "accelerate_deepspeed_6gpu_sigkill_childfailederror_x2.log", "t1")]
    assert any(e.get("error_class") for e in failing)
    for i in range(400):
        if i % 2:
            record = dict(rng.choice(failing), timestamp=rng.choice(TIMES))
        else:
            record = point("t1", rng.choice(TIMES), step=rng.choice((None, -1, 2**63 - 1, -(2**63))),
                           rank=rng.choice((0, -(2**31), 2**31 - 1)), loss=rng.choice(FIGURES),
                           gpu_utilization_pct=rng.choice(FIGURES))
            record["labels"]["sluice.io/clock-offset-ms"] = rng.choice(("-86399999", "nan", "9" * 400))
        _observe(engine, store, record)


def test_a_time_no_date_holds_is_held_to_the_last_one_that_does() -> None:
    assert from_record(point("t1", 2**63 - 1, step=1, loss=1.0)).ts_ms == LAST_MS
