"""Relays met in corpus/wild/dev19 (prefixes a relay, a viewer or a collector puts before every line of a
process's output). Inputs follow the relays' documented formats; each test names the rule it guards, and
removing that rule makes it fail. The counter-cases keep records of one second apart.
"""

from __future__ import annotations

from devtools.testing.merger import groups

_TB = ["Traceback (most recent call last):",
       '  File "/app/worker.py", line 42, in run',
       "    load_shard(path)",
       "FileNotFoundError: [Errno 2] No such file or directory: '/data/shard-7'"]


# -- Heroku's logplex ---------------------------------------------------------------------------------


def test_heroku_logplex_prefix_keeps_a_dynos_traceback_whole():
    # rule: STREAM_PREFIXES "heroku" ("{time} app[web.1]: " before every line of a dyno's output)
    stamp = "2021-10-21T08:09:37.21156{}+00:00 "
    texts = ([stamp.format(i) + "app[web.1]: " + t for i, t in enumerate(_TB)]
             + [stamp.format(5) + 'heroku[router]: at=error code=H10 desc="App crashed" method=GET path="/"',
                stamp.format(6) + "app[web.1]: [2021-10-21 08:09:38 +0000] [4] [INFO] Booting worker with pid: 4"])
    assert groups(texts) == [[0, 1, 2, 3], [4], [5]]


# -- Cloud Foundry's cf logs ------------------------------------------------------------------------------


def test_cf_logs_prefix_keeps_a_record_and_its_traceback_whole():
    # rule: STREAM_PREFIXES "cf_logs" (three blanks, time, "[APP/PROC/WEB/0]", the stream)
    pre = "   2021-12-21T16:06:48.5{}-0500 [APP/PROC/WEB/0] ERR "
    texts = ([pre.format(0) + "[2021-12-21 21:06:47 +0000] [236] [INFO] Booting worker with pid: 236",
              pre.format(1) + "[2021-12-21 21:06:48 +0000] [236] [ERROR] Exception in worker process"]
             + [pre.format(2) + t for t in _TB]
             + ["   2021-12-21T16:06:49.01-0500 [RTR/0] OUT app.example.org - [2021-12-21T21:06:49Z] \"GET /\" 502"])
    assert groups(texts) == [[0], [1, 2, 3, 4, 5], [6]]


# -- a logger that stands in for stdout and stderr (FastChat's StreamToLogger) -----------------------


def _stream(level: str, name: str, text: str) -> str:
    return f"2023-08-18 23:26:56 | {level} | {name} | {text}"


def test_a_traceback_printed_through_a_stderr_logger_is_one_event():
    # rule: STREAM_PREFIXES "stream_logger" (every line written to stderr is a record of the logger "stderr")
    texts = ([_stream("ERROR", "stderr", "Process model_worker(73212):")]
             + [_stream("ERROR", "stderr", t) for t in _TB]
             + [_stream("INFO", "stdout", "Uvicorn running on http://0.0.0.0:21002")])
    assert groups(texts) == [[0, 1, 2, 3, 4], [5]]


def test_prints_through_a_stdout_logger_in_one_second_stay_apart():
    # the same rule: the stream is the writer, its lines are read by their own grammar
    texts = [_stream("INFO", "stdout", "Loading checkpoint shards: done"),
             _stream("INFO", "stdout", "Model loaded in 12.1s"),
             _stream("INFO", "stdout", "Serving on port 21002")]
    assert groups(texts) == [[0], [1], [2]]


def test_python_logging_records_of_one_second_stay_apart_and_a_traceback_under_them_is_its_own():
    # counter-case: a logger of the same layout that is no stream (datefmt '%Y-%m-%d %H:%M:%S', no fraction):
    # its records of one second are records of their own, and an INFO record announces no traceback
    texts = [_stream("INFO", "train", "epoch 3 step 1200 loss 1.82"),
             _stream("INFO", "train", "epoch 3 step 1210 loss 1.79"),
             _stream("INFO", "train", "saving checkpoint to /ckpt/step-1210"),
             *_TB,
             _stream("INFO", "train", "retrying in 5s")]
    assert groups(texts) == [[0], [1], [2], [3, 4, 5, 6], [7]]
    plain = ["2024-01-01 10:00:00 INFO step 1 loss 2.0", "2024-01-01 10:00:00 INFO step 2 loss 1.9",
             "2024-01-01 10:00:00 WARNING grad norm 12.5 clipped", "2024-01-01 10:00:00 INFO step 3 loss 1.8"]
    assert groups(plain) == [[0], [1], [2], [3]]


def test_a_record_of_the_same_layout_keeps_the_traceback_logging_writes_under_it():
    # counter-case to "stream_logger": only the loggers named for the streams relay a stream; logger.exception of
    # another logger is a record head whose traceback (exc_info, unprefixed) is the record's
    texts = [_stream("INFO", "train", "epoch 3 step 1210 loss 1.79"),
             _stream("ERROR", "train", "Exception in training loop:"), *_TB]
    assert groups(texts) == [[0], [1, 2, 3, 4, 5]]
