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


# -- a terminal's cut of a line behind a relay's prefix ------------------------------------------------

_DSO = ("[0]<stderr>:2022-03-17 06:27:57.{us}: I tensorflow/stream_executor/platform/default/dso_loader.cc:49] "
        "Successfully opened dynamic library")


def test_rest_of_a_relayed_line_cut_at_the_terminal_width_joins_it():
    # rule: rules.WRAP_AT_BLANK_RE with merger._wraps(relayed=True) (horovodrun prefixes the line its rank
    # wrote; the terminal cut it at 139 columns, on the blank before the library's name, and put the rest
    # below without the prefix)
    texts = ["[0]<stderr>:coreClock: 1.4805GHz coreCount: 56 deviceMemorySize: 15.90GiB "
             "deviceMemoryBandwidth: 681.88GiB/s"]
    for us, lib in (("594197", "libcudart.so.11.0"), ("594223", "libcublas.so.11"), ("594238", "libcublasLt.so.11")):
        texts += [_DSO.format(us=us), " " + lib]
    assert spans(texts) == [(0, 0), (1, 2), (3, 4), (5, 6)]


def test_an_unprefixed_line_after_a_relayed_line_narrower_than_the_widest_stays_apart():
    # the same rule: only a line as wide as the widest line of the source can have been cut
    texts = ["[1,0]<stderr>:" + "x" * 150,
             "[1,0]<stderr>:2022-03-17 06:27:57.594197: I dso_loader.cc:49] opened library", " libcudart.so.11.0"]
    assert spans(texts) == [(0, 0), (1, 1), (2, 2)]
