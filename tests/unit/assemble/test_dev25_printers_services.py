"""Printers met in corpus/wild/dev25 (Go, Java, Rust and C++ services around GPU clusters, pasted into issues).
Inputs follow the printers' own code; each test names the rule it guards, and removing that rule makes it fail.
"""

from __future__ import annotations

from devtools.testing.merger import groups


def spans(texts: list[str]) -> list[tuple[int, int]]:
    return [(g[0], g[-1]) for g in groups(texts)]


# -- Go runtime ----------------------------------------------------------------------------------------

def test_go_nested_panic_whose_tab_a_viewer_dropped_stays_in_the_chain():
    # rule: MODES "go_head" "go_panic" (printpanics' chain, the later panic's tab dropped by a relay)
    texts = ["panic: runtime error: index out of range [0] with length 0 [recovered]",
             "panic: runtime error: index out of range [0] with length 0",
             "",
             "goroutine 231 [running]:",
             "k8s.io/apimachinery/pkg/util/runtime.HandleCrash({0x0, 0x0, 0xc000255640?})",
             "/go/pkg/mod/k8s.io/apimachinery@v0.18.6/pkg/util/runtime/runtime.go:55 +0xd8",
             "next line"]
    assert spans(texts) == [(0, 5), (6, 6)]


# -- glog ------------------------------------------------------------------------------------------------

def test_glog_check_failure_header_whose_frames_come_from_the_failure_signal_handler_is_one_event():
    # rule: MODES "sig_head" (LogMessage::Fail's bare abort() under the check trace's header, then
    # signalhandler.cc's report)
    texts = ["WARNING: Logging before InitGoogleLogging() is written to STDERR",
             "F20230223 22:31:24.688732  4806 stack_trace.cpp:8] Check failed: x == 1 (2 vs. 1) ",
             "*** Check failure stack trace: ***",
             '*** Aborted at 1677191484 (unix time) try "date -d @1677191484" if you are using GNU date ***',
             "PC: @                0x0 (unknown)",
             "*** SIGABRT (@0x12c6) received by PID 4806 (TID 0x7f5719ac6740) from PID 4806; stack trace: ***",
             "    @     0x7f57196bd980 (unknown)",
             "    @     0x7f57189b9e87 gsignal",
             "next line"]
    assert spans(texts) == [(0, 0), (1, 7), (8, 8)]


def test_a_second_signal_header_after_frames_is_a_report_of_its_own():
    # rule: MODES "sigdump" (only "sig_head", before any frame, takes another header)
    texts = ["*** SIGSEGV received at time=1700000000 on cpu 3 ***",
             "PC: @     0x7f0e2365c1d4  (unknown)",
             "    @     0x7f0e2365c0d4  (unknown)",
             "*** SIGABRT received at time=1700000001 on cpu 3 ***",
             "PC: @     0x7f0e2365c579  (unknown)"]
    assert spans(texts) == [(0, 2), (3, 4)]
