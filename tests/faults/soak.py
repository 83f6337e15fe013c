"""The fault soak, not run in CI: random faults for N minutes, then the figures.

    .venv/bin/python tests/faults/soak.py --minutes 5 [--seed S] [--outage-s 20] [--fault-s 10]
        [--kill-between] [--drain-s 600] [--keep]

Runs the whole pipeline (assemble, hot and cold workers as processes) on a private Kafka broker,
Elasticsearch and object store of its own, started under a temporary directory and stopped at the
end; the shared stack (``python -m devtools stack up``) provides the schema registry and the installed
servers. Every worker reaches the registry, Elasticsearch and the store through Toxiproxy
(devtools/faults/network.py). Input keeps coming in waves of the corpus while faults are injected:
first every kind once, in random order, then kinds at random until the time is up: kill -9 of each
worker, a second assemble worker joining and leaving (SIGTERM or kill -9), Elasticsearch or the object
store stopped for ``--outage-s``, killed with SIGKILL or frozen with SIGSTOP, the broker restarted,
killed or frozen, the registry unreachable, Elasticsearch answering 429, 503 or 401, and network
faults (latency, blackhole, reset, slow close, bandwidth, link down) between a worker and a server.
``--kill-between`` adds a kill -9 of a random stage after every other fault.

Prints one table (load held, faults by kind, lost, duplicated, split, dead letters expected and
unexpected, unplanned exits). Exit status 1 when anything was lost, duplicated or split, or the DLQ
holds anything but the bad inputs.
"""

from __future__ import annotations

import argparse
import shutil
import sys
import tempfile
from pathlib import Path

REPO = Path(__file__).resolve().parents[2]
sys.path[:0] = [str(REPO), str(REPO / "tests")]

from conftest import _private_maker  # noqa: E402 - the private_server fixture's own factory

from devtools.faults.run import Plan, run_scenario  # noqa: E402
from devtools.stack import manager  # noqa: E402
from streams.config import load_settings  # noqa: E402


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--minutes", type=float, default=5.0)
    parser.add_argument("--seed", type=int, default=None)
    parser.add_argument("--outage-s", type=float, default=20.0, help="how long a store stays down")
    parser.add_argument("--fault-s", type=float, default=10.0,
                        help="how long a network fault, a freeze or an Elasticsearch status lasts")
    parser.add_argument("--kill-between", action="store_true",
                        help="a kill -9 of a random stage after every other fault")
    parser.add_argument("--drain-s", type=float, default=600.0, help="how long to wait for the stages to drain")
    parser.add_argument("--keep", action="store_true", help="keep the work directory (worker logs)")
    args = parser.parse_args()

    base = load_settings()
    manager.up(base, log=lambda msg: print(f"[stack] {msg}"))
    root = Path(tempfile.mkdtemp(prefix="sluice-soak-"))
    started: list = []
    plan = Plan(minutes=args.minutes, es_outage_s=args.outage_s, store_outage_s=args.outage_s,
                fault_s=args.fault_s, kill_between=args.kill_between, gap_s=(3.0, 10.0), rebalance_hold_s=15.0,
                **({"seed": args.seed} if args.seed is not None else {}))
    try:
        fig = run_scenario(base, _private_maker(base, root, started), plan, root / "logs",
                           drain_timeout_s=args.drain_s)
    finally:
        for service in started:
            service.down()
        if not args.keep:
            shutil.rmtree(root, ignore_errors=True)
    print(fig.table())
    return 0 if fig.ok else 1


if __name__ == "__main__":
    sys.exit(main())
