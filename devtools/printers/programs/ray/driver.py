"""A tiny Ray job whose failures Ray itself prints: ``python driver.py SCENARIO`` (one CPU, no dashboard).

Each scenario writes one event to stderr (or only single-line records), as the driver shows it:

- ``task_error``: ``ray.get`` of a task that raised: CPython's traceback of the driver ending with
  ``ray.exceptions.RayTaskError(ValueError): ray::load_shard() (pid=.., ip=..)`` and the remote
  traceback Ray carries in the message (ray/exceptions.py ``RayTaskError``).
- ``task_error_chained``: the same for a task whose error was raised ``from`` another.
- ``actor_died``: an actor's process exits: ``ActorDiedError`` with its ``\\tclass_name:`` ... lines
  and the worker's exit detail (the raylet's ``(raylet) A worker died ...`` line before it).
- ``actor_init``: an actor's ``__init__`` raises: ``ActorDiedError`` naming its creation task, with
  the remote traceback.
- ``nested``: a task whose own ``ray.get`` of a failing task raised: the inner task's RayTaskError
  inside the outer's.
- ``dependency``: a task whose argument was a failed task's result: "At least one of the input
  arguments for this task could not be computed:" and the failed task's RayTaskError under it.
- ``worker_crash``: a task's process exits: ``WorkerCrashedError``.
- ``actor_error``: an actor's method raises: ``RayTaskError(ValueError): ray::Evaluator.evaluate()
  (pid=.., ip=.., actor_id=.., repr=..)``.
- ``get_timeout``: ``ray.get(ref, timeout=..)``: ``GetTimeoutError``.
- ``unhandled``: a failed task's result never fetched: the driver's logging record
  ``ERROR worker.py:N -- Unhandled error (suppress with ...): ray::f() ...`` with the remote traceback.
- ``worker_traceback``: a task's own ``traceback.print_exc()`` and ``logging.exception``, forwarded
  by the driver with ``(load_shard pid=..)`` before each line, then a record of the task's own.
- ``worker_logs``: tasks' and actors' prints and logging records under ``(f pid=..)`` and
  ``(Actor pid=..)``, and the ``[repeated Nx across cluster]`` lines of Ray's log deduplication:
  single lines only.

The driver catches the error, waits for the workers' forwarded lines, then raises it again: the
forwarded lines come before the traceback instead of inside it.
"""

import logging
import os
import sys
import time
import traceback

import ray

FORMAT = "%(asctime)s %(levelname)s %(name)s: %(message)s"


@ray.remote
def load_shard(i):
    raise ValueError(f"shard {i} is corrupt: expected 4096 records, got 0")


def _parse(path):
    return int(open(path).read())


@ray.remote
def load_chained(path):
    try:
        return _parse(path)
    except FileNotFoundError as e:
        raise RuntimeError(f"cannot load checkpoint index {path}") from e


@ray.remote
class Trainer:
    def __init__(self, fail=False):
        if fail:
            raise RuntimeError("CUDA device 0 not available in actor")

    def step(self):
        os._exit(1)

    def ping(self):
        return 1


@ray.remote
def outer(path):
    return ray.get(load_chained.remote(path))  # the inner task's RayTaskError inside this one's


@ray.remote
def tokenize(shard):
    return len(shard)


@ray.remote(max_retries=0)
def crash():
    os._exit(1)


@ray.remote
class Evaluator:
    def evaluate(self, step):
        raise ValueError(f"eval set empty at step {step}")


@ray.remote
def slow():
    time.sleep(30)


@ray.remote
def worker_traceback(which):
    logging.basicConfig(level=logging.INFO, format=FORMAT, stream=sys.stderr)
    log = logging.getLogger("train.loader")
    try:
        _parse("/nonexistent/shard-00017.idx")
    except FileNotFoundError:
        if which == "print_exc":
            traceback.print_exc()
        else:
            log.exception("failed to read the shard index")
    sys.stderr.flush()
    log.info("skipping shard 17, 63 shards left")
    return 0


@ray.remote(num_cpus=0)
class Reader:
    def read(self, i):
        print("opening dataset bucket s3://datasets/c4", file=sys.stderr, flush=True)
        logging.basicConfig(level=logging.INFO, format=FORMAT, stream=sys.stderr)
        logging.getLogger("train.reader").info("reader ready")
        print(f"reader {i} prefetching 8 batches", file=sys.stderr, flush=True)
        return i


@ray.remote
def task_print(i):
    print(f"task {i}: tokenized 1024 samples", file=sys.stderr, flush=True)
    return i


def settle(seconds=2.0):
    time.sleep(seconds)  # the workers' lines reach the driver through the log monitor


def main(scenario):
    ray.init(num_cpus=1, include_dashboard=False)
    if scenario == "worker_logs":
        ray.get([task_print.remote(i) for i in range(2)])
        readers = [Reader.remote() for _ in range(3)]
        ray.get([r.read.remote(i) for i, r in enumerate(readers)])
        settle(7)  # past the deduplication window (RAY_DEDUP_LOGS_AGG_WINDOW_S, 5 s)
        ray.get(task_print.remote(9))  # a later batch flushes the aggregated lines
        settle(2)
        ray.shutdown()
        return
    if scenario.startswith("worker_traceback"):
        ray.get(worker_traceback.remote(scenario.removeprefix("worker_traceback_")))
        settle()
        ray.shutdown()
        return
    if scenario == "unhandled":
        load_shard.remote(3)  # Ray reports the error it never delivered when the reference goes away
        settle(8)
        ray.shutdown()
        return
    try:
        if scenario == "task_error":
            ray.get(load_shard.remote(17))
        elif scenario == "task_error_chained":
            ray.get(load_chained.remote("/nonexistent/ckpt/index.json"))
        elif scenario == "actor_died":
            t = Trainer.remote()
            ray.get(t.ping.remote())
            ray.get(t.step.remote())
        elif scenario == "actor_init":
            t = Trainer.remote(fail=True)
            ray.get(t.ping.remote())
        elif scenario == "nested":
            ray.get(outer.remote("/nonexistent/ckpt/index.json"))
        elif scenario == "dependency":
            ray.get(tokenize.remote(load_shard.remote(5)))
        elif scenario == "worker_crash":
            ray.get(crash.remote())
        elif scenario == "actor_error":
            ray.get(Evaluator.remote().evaluate.remote(1200))
        elif scenario == "get_timeout":
            ray.get(slow.remote(), timeout=0.5)
    except Exception:
        settle()
        raise


if __name__ == "__main__":
    main(sys.argv[1])
