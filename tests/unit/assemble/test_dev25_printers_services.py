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


def test_go_windows_exception_report_keeps_its_headerless_frames_after_the_blank():
    # rules: TOKENS "go_win_exc", "go_sig_pc" without m=, MODES "go_head" after_blank "go_func" (winthrow)
    texts = ["API server listening at: 127.0.0.1:56626",
             "Exception 0xc0000008 0x0 0x0 0x7ffafab27bfa",
             "PC=0x7ffafab27bfa",
             "",
             "runtime.cgocall(0x81b1c0, 0xc0004c02c0)",
             "        D:/go/sdk/go1.20.4/src/runtime/cgocall.go:157 +0x4a fp=0xc0002b1848 sp=0xc0002b1810 pc=0x7a54ca",
             "syscall.CloseHandle(0x27d150e7ec0)",
             "        D:/go/sdk/go1.20.4/src/syscall/zsyscall_windows.go:482 +0x65 fp=0xc0002b19a8 sp=0xc0002b1918",
             "",
             "goroutine 2 [force gc (idle)]:",
             "runtime.gopark(0x0?, 0x0?, 0x0?, 0x0?, 0x0?)",
             "        D:/go/sdk/go1.20.4/src/runtime/proc.go:381 +0xd6 fp=0xc000055fb0 sp=0xc000055f90 pc=0x7d4fb6"]
    assert spans(texts) == [(0, 0), (1, 11)]


def test_compose_prefix_alone_without_its_trailing_blank_is_the_writers_empty_line():
    # rule: STREAM_PREFIXES "compose" (the prefix alone, its trailing blank trimmed by a copy)
    texts = ["loki-1  | created by github.com/grafana/loki/v3/pkg/querier/worker.(*schedulerProcessor).querierLoop",
             "loki-1  |       /src/loki/pkg/querier/worker/scheduler_processor.go:144 +0x16f",
             "loki-1  |",
             "loki-1  | goroutine 1 [select]:",
             "loki-1  | main.main()",
             "loki-1  |       /src/loki/cmd/loki/main.go:129 +0x1305",
             "loki-1  |",
             "minio-1  | API: SYSTEM()"]
    assert spans(texts) == [(0, 6), (7, 7)]


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


# -- log4j records -----------------------------------------------------------------------------------------

def test_flink_info_state_transition_to_failed_keeps_the_throwable_it_was_logged_with():
    # rule: QUIET_ANNOUNCE_RE "FAIL(?:ED|ING|URE)" (Execution.transitionState logs at INFO with the error)
    texts = ["2019-12-07 05:04:43,264 INFO  org.apache.flink.runtime.executiongraph.ExecutionGraph        - "
             "KeyedProcess -> Sink: Unnamed (1/1) (52bd0b7c29cdcf040448660e7c52a03d) switched from RUNNING to FAILED "
             "on container_e07_1575407974804_0477_01_000002 @ host-a (dataPort=35719).",
             "org.apache.flink.util.FlinkException: The assigned slot container_e07_0477_01_000002_0 was removed.",
             "\tat org.apache.flink.runtime.resourcemanager.slotmanager.SlotManager.removeSlot(SlotManager.java:893)",
             "\tat org.apache.flink.runtime.resourcemanager.slotmanager.SlotManager.removeSlots(SlotManager.java:863)",
             "2019-12-07 05:04:43,270 INFO  org.apache.flink.runtime.executiongraph.ExecutionGraph        - "
             "KeyedProcess -> Sink: Unnamed (1/1) (52bd0b7c29cdcf040448660e7c52a03d) switched from RUNNING to "
             "FINISHED.",
             "java.lang.IllegalStateException: printed by another writer",
             "\tat com.example.Other.run(Other.java:10)"]
    assert spans(texts) == [(0, 3), (4, 4), (5, 6)]


# -- a paste's glued backticks -------------------------------------------------------------------------------

def test_backtick_glued_before_a_go_panic_or_a_log4j_head_is_not_the_lines():
    # rules: GLUED_TICKS_RE, merger._untick (an unpaired backtick before a record head or a column-0 start)
    panic = ["additionally we're getting errors:",
             "`panic: runtime error: invalid memory address or nil pointer dereference",
             "[signal SIGSEGV: segmentation violation code=0x1 addr=0x60 pc=0x1d6ae00]",
             "",
             "goroutine 1 [running]:",
             "main.main()",
             "       /src/loki/cmd/loki/main.go:129 +0x1305"]
    assert spans(panic) == [(0, 0), (1, 6)]
    log4j = ["`[2018-12-19 01:11:50,998] ERROR WorkerSinkTask{id=hdfs-sink-0} Task threw an uncaught and "
             "unrecoverable exception (org.apache.kafka.connect.runtime.WorkerTask:177)",
             "java.lang.NullPointerException",
             "        at io.confluent.connect.hdfs.HdfsSinkTask.open(HdfsSinkTask.java:133)"]
    assert spans(log4j) == [(0, 2)]

