"""``sluice worker <stage>`` for a fault run (``python -m devtools.faults.worker <stage> [--loglevel L]``).

The same CLI command and worker code, with one override for the fault harness:
``FAULTS_SESSION_TIMEOUT_MS``, the hot and cold consumers' ``session.timeout.ms``. With librdkafka's
default of 45 s, a sink worker killed with -9 holds its partitions for 45 s before its replacement
gets them (no loss, but a 45 s stall per kill). (The cold group is ``SLUICE_COLD__GROUP_ID``.)

The assemble worker (Faust) takes ``BROKER_SESSION_TIMEOUT`` from the environment by itself.
"""

from __future__ import annotations

import os
import sys
from typing import Any


def _patch_sink_consumers(session_timeout_ms: int) -> None:
    from streams.sinks import kafka_io

    original = kafka_io.KafkaRecordSource.__init__

    def init(self: Any, settings: Any, topics: list[str], group_id: str, **overrides: Any) -> None:
        overrides = {"session.timeout.ms": session_timeout_ms,
                     "heartbeat.interval.ms": max(500, session_timeout_ms // 6), **overrides}
        original(self, settings, topics, group_id, **overrides)

    kafka_io.KafkaRecordSource.__init__ = init  # type: ignore[method-assign,assignment]


def main(argv: list[str]) -> None:
    if os.environ.get("FAULTS_SESSION_TIMEOUT_MS"):
        _patch_sink_consumers(int(os.environ["FAULTS_SESSION_TIMEOUT_MS"]))
    from streams.cli.main import cli

    cli(["worker", *argv], prog_name="sluice")


if __name__ == "__main__":
    main(sys.argv[1:])
