"""A tiny "training script" whose failures CPython itself prints: ``python train.py SCENARIO``.

Each scenario writes exactly one event to stderr (a traceback, a warning, a fatal error, a
logging record with its traceback), printed by the interpreter's own code (``traceback``,
``faulthandler``, ``warnings``, ``logging``), never by hand.
"""

import faulthandler
import importlib
import logging
import os
import signal
import sys
import threading
import time
import warnings


class DataLoaderError(Exception):
    pass


def load_batch(i):
    data = {"input_ids": [1, 2, 3]}
    return data["labels"][i]


def step(i):
    return load_batch(i) * 2


def train():
    for i in range(3):
        step(i)


def s_plain():
    train()


def s_chained():
    try:
        train()
    except KeyError as e:
        raise DataLoaderError("batch 0 has no 'labels' column") from e


def s_context():
    try:
        train()
    except KeyError:
        open("/nonexistent/checkpoints/step_1200/model.safetensors")


def s_markers():
    cfg = {"model": {"layers": None}, "lr": 3e-4}
    return cfg["lr"] * 2 + cfg["model"]["layers"]["n"] + 1


def s_divide():
    tokens, steps = 4096, 0
    return round(tokens / steps, 2) + len(str(tokens))


def s_multiline_msg():
    raise ValueError("shape mismatch in layer 12:\n  expected (4, 128, 4096)\n\n  got (4, 64, 4096)")


def s_empty_msg():
    raise RuntimeError


def s_notes():
    e = ValueError("learning rate must be positive, got -0.001")
    e.add_note("while building the optimizer for param group 0")
    e.add_note("check --lr")
    raise e


def _fail(n):
    raise ValueError(f"worker {n} failed to load shard {n * 7}")


def s_group():
    excs = []
    for n in range(2):
        try:
            _fail(n)
        except ValueError as e:
            excs.append(e)
    try:
        raise ExceptionGroup("rank errors", excs)
    except ExceptionGroup as g:
        raise ExceptionGroup("training failed", [g, TypeError("expected torch.bfloat16, got torch.float32")])


def s_fatal():
    faulthandler.enable()
    t = threading.Thread(target=time.sleep, args=(30,), name="prefetch", daemon=True)
    t.start()
    time.sleep(0.05)
    faulthandler._sigsegv()


def s_fatal_abort():
    faulthandler.enable()
    faulthandler._sigabrt()


def s_dump_later():
    faulthandler.dump_traceback_later(0.2, exit=True)
    t = threading.Thread(target=time.sleep, args=(30,), daemon=True)
    t.start()
    step_sleep()


def step_sleep():
    time.sleep(30)


def s_warn():
    warnings.warn("`torch.cuda.amp.autocast(args...)` is deprecated. Please use `torch.amp.autocast('cuda', args...)` instead.",
                  FutureWarning)


def s_warn_multiline():
    warnings.warn("The default value of use_cache will change.\nPass use_cache=False to keep the old behaviour.",
                  UserWarning)


def s_warn_logging():
    logging.captureWarnings(True)
    logging.basicConfig(format="%(asctime)s - %(name)s - %(levelname)s - %(message)s")
    warnings.warn("`resume_download` is deprecated and will be removed in version 1.0.0.", FutureWarning)


def s_fatal_ext():
    import confluent_kafka  # noqa: F401 - C extensions outside the stdlib: faulthandler lists them
    import fastavro  # noqa: F401
    faulthandler.enable()
    faulthandler._sigsegv()


def s_print_exc():
    import traceback
    try:
        train()
    except KeyError:
        traceback.print_exc()


class Prefetcher:
    def __del__(self):
        raise RuntimeError("prefetch queue closed twice")


def s_unraisable():
    p = Prefetcher()
    del p  # sys.unraisablehook: "Exception ignored in: <function ...>" + traceback


def _worker():
    train()


def s_process():
    import multiprocessing
    p = multiprocessing.Process(target=_worker, name="DataLoaderWorker-0")
    p.start()
    p.join()


def s_asyncio_task():
    import asyncio
    import gc

    async def fetch():
        raise ConnectionError("shard server 10.0.0.7:9000 refused the connection")

    async def main():
        t = asyncio.ensure_future(fetch())
        await asyncio.sleep(0.01)
        del t
        gc.collect()

    asyncio.run(main())


def s_recursion():
    def walk(node):
        return walk(node + 1)
    walk(0)


def s_kbint():
    os.kill(os.getpid(), signal.SIGINT)
    time.sleep(5)


def s_thread():
    t = threading.Thread(target=train, name="loader-0")
    t.start()
    t.join()


def s_syntax_import():
    sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
    importlib.import_module("badconfig")  # written next to this file by the generator


def s_assert():
    loss, expected = float("nan"), 2.3
    assert loss == loss, f"loss is {loss} at step 1200 (expected about {expected})"


LOG_FORMATS = {
    "default": logging.BASIC_FORMAT,
    "dashes": "%(asctime)s - %(name)s - %(levelname)s - %(message)s",
    "brackets": "[%(asctime)s] [%(levelname)s] [%(name)s] %(message)s",
    "hf": "%(asctime)s - %(levelname)s - %(name)s - %(message)s",
    "lightning": "%(levelname)s:%(name)s:%(message)s",
    "fileline": "%(asctime)s %(levelname)-8s %(filename)s:%(lineno)d] %(message)s",
}


def s_logging(fmt):
    logging.basicConfig(format=LOG_FORMATS[fmt])
    log = logging.getLogger("trainer" if fmt != "default" else None)
    try:
        s_chained() if fmt in ("hf", "fileline") else train()
    except Exception:
        log.exception("step %d failed, skipping batch", 1200)


if __name__ == "__main__":
    name = sys.argv[1]
    if name.startswith("logging_"):
        s_logging(name[len("logging_"):])
    else:
        globals()["s_" + name]()
