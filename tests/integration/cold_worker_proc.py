"""A cold worker in its own process, for the kill -9 test (run: python cold_worker_proc.py ...).

``--kill-at-commit N``: SIGKILL itself on the N-th offset commit, i.e. after the sink has stored the
objects that commit would cover and before Kafka learns of it. Otherwise it runs until every one
of ``--expect`` records is committed, then stops cleanly. Settings come from the environment
(SLUICE_OBJECT_STORE__DEFAULT_BUCKET, SLUICE_COLD__*), as for the real worker.
"""

from __future__ import annotations

import argparse
import asyncio
import logging
import os
import signal
import sys

from streams.config import load_settings
from streams.sinks.base import Backoff
from streams.workers.cold import build_cold_runner


async def main() -> int:
    parser = argparse.ArgumentParser()
    parser.add_argument("--topic", required=True)
    parser.add_argument("--group", required=True)
    parser.add_argument("--expect", type=int, required=True)
    parser.add_argument("--kill-at-commit", type=int, default=0)
    parser.add_argument("--timeout", type=float, default=45.0)
    args = parser.parse_args()

    settings = load_settings()
    # A short session: the restarted worker gets the dead one's partitions in seconds, not 45 s.
    runner = build_cold_runner(settings, args.group, topics=[args.topic],
                               **{"session.timeout.ms": 6000, "heartbeat.interval.ms": 1000})
    runner.sink.backoff = Backoff(0.2, 2.0)
    committed: dict[tuple[str, int], int] = {}
    commits = 0
    inner_commit = runner.source.commit

    def commit(points: dict[tuple[str, int], int]) -> None:
        nonlocal commits
        commits += 1
        if commits == args.kill_at_commit:
            print(f"killing myself before commit {commits}: {points}", flush=True)
            os.kill(os.getpid(), signal.SIGKILL)
        inner_commit(points)
        committed.update(points)

    runner.source.commit = commit  # type: ignore[method-assign]
    stop = asyncio.Event()
    task = asyncio.create_task(runner.run(stop))
    deadline = asyncio.get_running_loop().time() + args.timeout
    while sum(committed.values()) < args.expect and asyncio.get_running_loop().time() < deadline:
        if task.done():
            task.result()
        await asyncio.sleep(0.1)
    stop.set()
    await task
    runner.source.close()
    print(f"committed {committed} stats {runner.stats} sink {runner.sink.stats}", flush=True)
    return 0 if sum(committed.values()) >= args.expect else 2


if __name__ == "__main__":
    logging.basicConfig(level=logging.INFO, format="%(asctime)s %(name)s %(message)s")
    sys.exit(asyncio.run(main()))
