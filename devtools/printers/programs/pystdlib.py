"""Failures that CPython's standard library prints beyond ``traceback`` itself: ``python pystdlib.py SCENARIO``.

Each scenario writes exactly one event to stderr, printed by the library's own code
(``concurrent.futures``, ``multiprocessing.pool``, ``logging``'s ``stack_info``,
``traceback.print_stack``, ``asyncio``'s exception handler, ``unittest``), never by hand.
"""

import asyncio
import concurrent.futures
import logging
import multiprocessing
import sys
import traceback
import unittest


def load_batch(i):
    data = {"input_ids": [1, 2, 3]}
    return data["labels"][i]


def s_futures_process():
    # concurrent/futures/process.py: the worker's traceback comes back as a _RemoteTraceback in
    # triple quotes, the cause of the exception result() re-raises
    with concurrent.futures.ProcessPoolExecutor(1) as ex:
        ex.submit(load_batch, 3).result()


def s_futures_thread():
    with concurrent.futures.ThreadPoolExecutor(1) as ex:
        ex.submit(load_batch, 3).result()


def s_mp_pool():
    # multiprocessing/pool.py: RemoteTraceback, the same layout as concurrent.futures'
    with multiprocessing.Pool(1) as pool:
        pool.apply(load_batch, (3,))


def _deep_stack_info():
    logging.basicConfig(format="%(asctime)s - %(name)s - %(levelname)s - %(message)s")
    logging.getLogger("trainer").warning("gradient overflow at step %d, skipping", 1200, stack_info=True)


def s_logging_stack_info():
    # Logger._log(stack_info=True): the record, then "Stack (most recent call last):" and the frames
    _deep_stack_info()


def s_logging_stack_exc():
    # exc_info and stack_info together: the traceback first, then the stack
    logging.basicConfig(format="[%(asctime)s] [%(levelname)s] [%(name)s] %(message)s")
    try:
        load_batch(0)
    except KeyError:
        logging.getLogger("trainer").error("batch failed", exc_info=True, stack_info=True)


def _where():
    traceback.print_stack()


def s_print_stack():
    # traceback.print_stack(): frames only, no header and no exception line
    _where()


def s_notes_chain():
    # __notes__ printed after the message, a note over two lines, on a chained exception
    try:
        load_batch(0)
    except KeyError as e:
        err = RuntimeError("data loader worker 2 exited")
        # (not "word word: x" on a line of its own: after a relay's bare time, as moreutils' ts writes
        # it, that is syslog's "host prog: " and undecidable from it)
        err.add_note("shard: /data/shard-00017.arrow\nrow group 12 of 40")
        err.add_note("retry with num_workers=0 to see the worker's own error")
        raise err from e


def _cb(n):
    return load_batch(n)


def s_asyncio_callback():
    # BaseEventLoop.default_exception_handler: "Exception in callback ...", "handle: <Handle ...>",
    # then the traceback, logged by the "asyncio" logger (logging's last resort handler: message only)
    async def main():
        asyncio.get_running_loop().call_soon(_cb, 3)
        await asyncio.sleep(0.01)
    asyncio.run(main())


def s_asyncio_callback_debug():
    # in debug mode the handle's creation point: "source_traceback: Object created at ..." + frames
    async def main():
        asyncio.get_running_loop().call_soon(_cb, 3)
        await asyncio.sleep(0.01)
    asyncio.run(main(), debug=True)


def s_asyncio_logged():
    # the same under a configured logging format: the record head, then the handle and traceback
    logging.basicConfig(format="%(asctime)s %(levelname)-8s %(name)s: %(message)s")

    async def main():
        asyncio.get_running_loop().call_soon(_cb, 3)
        await asyncio.sleep(0.01)
    asyncio.run(main())


class StepTest(unittest.TestCase):
    def test_step(self):
        load_batch(0)

    def test_loss(self):
        self.assertLess(2.31, 1.0, "loss did not go down")


def s_unittest():
    # unittest's TextTestResult.printErrors: each failure between a '=' rule and a '-' rule, then
    # its traceback; the closing '-' rule, "Ran N tests" and the verdict are lines of their own
    unittest.main(argv=["train", "-q"], exit=False)


if __name__ == "__main__":
    globals()["s_" + sys.argv[1]]()
