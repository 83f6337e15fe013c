"""Printers met in corpus/wild/dev16 (multi-rank training output pasted into issues). Inputs follow the
printers' own code; each test names the rule it guards, and removing that rule makes it fail.
"""

from __future__ import annotations

from devtools.testing.merger import groups


def spans(texts: list[str]) -> list[tuple[int, int]]:
    return [(g[0], g[-1]) for g in groups(texts)]


# -- torch.distributed.elastic's per-worker records under one glog-shaped head -------------------------

_HEAD = "W0219 09:17:03.837000 140066961602368 torch/distributed/elastic/multiprocessing/api.py:858] "


def test_elastic_sigterm_records_in_one_millisecond_are_one_event_each():
    # rule: rules.LOOP_RECORD_NUMBER_RE (api.py's _close logs one record per worker; torch._logging's
    # fraction is the record's milliseconds, so records of one tick share the head)
    texts = ["[rank0]:[W219 09:17:03.293812312 ProcessGroupNCCL.cpp:1168] Warning: WARNING: process group has NOT "
             "been destroyed before we destruct ProcessGroupNCCL. (function operator())",
             *(f"{_HEAD}Sending process {pid} closing signal SIGTERM" for pid in (2448006, 2448007, 2448009))]
    assert spans(texts) == [(0, 0), (1, 1), (2, 2), (3, 3)]


def test_a_repeated_head_still_continues_a_multiline_message():
    # rule: HEADS "glog" repeats (torch._logging writes its head on every line of a multi-line record):
    # the lines after the first are not the first line again with other numbers
    texts = [f"{_HEAD}Rendezvous complete for workers. Result:",
             f"{_HEAD}  restart_count=0",
             f"{_HEAD}  master_port=29500",
             f"{_HEAD}  group_rank=0"]
    assert spans(texts) == [(0, 3)]
    texts = [f"{_HEAD}worker group 0 of 2 failed:", f"{_HEAD}rank 3 exited with 1", f"{_HEAD}rank 5 exited with 1"]
    assert spans(texts) == [(0, 2)]
