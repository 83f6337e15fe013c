"""A multiline event must not take the record of another writer that comes after (or before) it.

Each case is a block whose printer's grammar says where it ends, followed by a line that is a
record of its own; ``devtools.glue_harness`` measures the same on every labelled event of the
corpus, with foreign lines of loghub and of the labelled singles.
"""

from __future__ import annotations

from collections import Counter

import pytest
from corpus_helpers import CORPUS

from devtools import glue_harness
from devtools.testing.merger import spans

CUT_FRAMES = ["Traceback (most recent call last):",
              '  File "/workspace/train.py", line 212, in <module>',
              "    main()"]
TRACEBACK = [*CUT_FRAMES, "RuntimeError: CUDA error: an illegal memory access was encountered"]


def test_frames_are_followed_by_an_exception_line_or_the_traceback_ends():
    # rule: MODES "py_frames" has no "text" entry -- traceback.py writes "Type" or "Type: message"
    # after the frames; a sentence there is the next record (here the log was cut mid-traceback)
    texts = [*CUT_FRAMES, "Saving checkpoint to /ckpt/step_100"]
    assert spans(texts) == [(0, 2), (3, 3)]


@pytest.mark.parametrize("line", [
    "I0506 12:00:00.123456  4242 loader.cc:10] Loader: ready",  # glog
    "03-17 16:15:25.262  2227  2227 I PhoneStatusBar: resumeSuspendedAutohide",  # logcat
])
def test_a_line_with_a_head_is_not_the_bare_exception_line(line: str) -> None:
    # rule: BARE_TOKENS -- traceback.py writes the exception line without a record head
    assert spans([*CUT_FRAMES, line]) == [(0, 2), (3, 3)]


@pytest.mark.parametrize("line", [
    "[10.30 20:43:49] chrome.exe - proxy.example.com:5070 close, 0 bytes sent",
    "20171223-22:19:58:381|HiH_DataStatManager|30002312|new date =20171223",
    "nova-api.log.1.2017-05-16_13:53:08 2017-05-16 00:12:41.227 25783 INFO nova.metadata.wsgi.server ok",
    "11:25:44 connector hdfs3-sink is running",
])
def test_a_line_led_by_a_time_stamp_ends_the_exception_message(line: str) -> None:
    # rule: RECORDS "stamp" -- the free text of an exception's message ends at a record of its own
    assert spans([*TRACEBACK, line]) == [(0, 3), (4, 4)]


def test_a_childfailed_box_does_not_take_a_record():
    # rule: MODES "py_box" continues with "cont", not "cont!" (a box cut short by the end of the log)
    texts = ["torch.distributed.elastic.multiprocessing.errors.ChildFailedError: ",
             "============================================================",
             "train.py FAILED",
             "------------------------------------------------------------",
             "Failures:",
             "  <NO_OTHER_FAILURES>",
             "INFO:checkpoints:Saving model and optimizer state at iteration 1"]
    assert spans(texts) == [(0, 5), (6, 6)]


def test_the_message_line_after_an_empty_head_is_the_record():
    # rule: merger._AWAIT_PLAIN -- DeepSpeed's "[ts] [LEVEL] [file:N:func]" then the message on its own
    # line: a line below it is another record, unless a stack follows (held as after any record)
    texts = ["[2023-04-18 03:36:00,502] [INFO] [fused_optimizer.py:362:_update_scale]",
             "Grad overflow on iteration 0",
             "Using cuda_amp half precision backend"]
    assert spans(texts) == [(0, 1), (2, 2)]


def test_the_message_line_after_an_empty_head_still_takes_its_stack():
    texts = ["2024-01-01 12:00:00,000 ERROR [main] com.example.Job - ",
             "Job failed",
             "java.lang.IllegalStateException: boom",
             "\tat com.example.Job.run(Job.java:10)"]
    assert spans(texts) == [(0, 3)]


def test_glue_rate_on_a_slice_of_the_training_corpus():
    # the harness on every labelled event of the training corpus, seeded: foreign lines glued into an
    # event in at most this share of the cases (the rules before these fixes glued 6.2%, these 1.3%)
    events, singles = glue_harness.labelled([CORPUS / "training"])
    cases = glue_harness.make_cases(events, singles, glue_harness.loghub_lines(CORPUS / "loghub"), seed=7)
    by_kind, by_source, _alone = glue_harness.run(cases)
    assert sum(by_source.cases.values()) > 500
    rate = glue_harness.glue_rate(by_source)
    assert rate <= 0.03, (rate, Counter({k: v for k, v in by_kind.glued_cases.items() if v}))


def test_glue_rate_on_the_training_and_dev_corpora():
    # every labelled event of both parts between lines labelled single elsewhere and loghub lines,
    # seeded: the rules that end blocks only on evidence glue a foreign line in 2.0% of the cases
    # (the greedy continuations before them: 3.4%); the wild/dev excerpts added since hold more events
    # cut at the excerpt's end (a traceback without its exception line), which a line put after them
    # continues by the grammar, and headless fragments (frames whose header was cut) that a line before
    # them takes, so the level measured with them is 2.4%; an excerpt that starts at a frame's source line
    # is whole alone now (so counted), and a record put before it takes that indented line, as it takes
    # any deeper line: 2.5%
    events, singles = glue_harness.labelled([CORPUS / "training", CORPUS / "wild" / "dev"])
    if not events:
        pytest.skip("no labelled corpus in this checkout")
    cases = glue_harness.make_cases(events, singles, glue_harness.loghub_lines(CORPUS / "loghub"), seed=1)
    by_kind, by_source, _alone = glue_harness.run(cases)
    rate = glue_harness.glue_rate(by_source)
    assert rate <= 0.026, (rate, Counter({k: v for k, v in by_kind.glued_cases.items() if v}))
