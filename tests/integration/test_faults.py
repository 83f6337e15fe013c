"""The fault suite's CI part: a corpus burst through the real assemble, hot and cold workers while they
are killed, rebalanced, their broker and stores go away, the registry cannot be reached, Elasticsearch
hangs and the cold sink's network to the store drops everything; a node shipper ships a file named
``rank99999999999.log`` beside the burst.

The whole pipeline runs on private servers (``private_server``): a Kafka broker, Elasticsearch and
an object store of its own, which the run stops and restarts; the shared stack is never touched.
What the stores and the DLQ hold is checked against the output of the same assembler code run
offline over the very records produced (``devtools.faults``). The longer soak is
``tests/faults/soak.py --minutes N``.
"""

from __future__ import annotations

from pathlib import Path

import pytest

from devtools.faults.run import Plan, run_scenario
from streams.config import Settings


@pytest.mark.slow
@pytest.mark.timeout(900)
def test_nothing_lost_duplicated_or_split_under_faults(stack: Settings, private_server, tmp_path: Path) -> None:
    # 3 kill -9 of each worker, a rebalance, Elasticsearch and the object store down 10 s each, a broker
    # restart; the registry unreachable for every worker, Elasticsearch frozen (SIGSTOP) and the cold sink's
    # link to the store a blackhole (Toxiproxy), 10 s each; `sluice ship` tails a poison-named file.
    plan = Plan(kills_per_stage=3, rebalances=1, es_outage_s=10, store_outage_s=10, broker_restarts=1,
                registry_outage_s=10, es_hang_s=10, store_blackhole_s=10, ship_poison=True, gap_s=(1.5, 4.5))
    fig = run_scenario(stack, private_server, plan, tmp_path / "logs")
    print(fig.table())
    assert sum(fig.faults.values()) == 3 * 3 + 7
    assert {"registry_outage", "es_hang", "net:cold-store:blackhole"} <= set(fig.faults)
    assert fig.events_checked > 20_000 and fig.multiline_checked > 300
    assert fig.lost_es == 0 and fig.lost_cold == 0 and fig.lost_metrics == 0, fig.table()
    assert fig.duplicated_by_cold_sink == 0 and fig.duplicated_cold == 0 and fig.reemitted_events == 0, fig.table()
    assert fig.split == 0 and fig.fragments == 0, fig.table()
    assert fig.dlq_missing == 0 and fig.dlq_unexpected == 0, fig.table()
    assert not fig.unplanned_exits, fig.table()
