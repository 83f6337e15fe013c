"""Grammars of native crash output as pasted into issues: glog's fatal check with a null frame or without its
record head, Paddle's error string without its dashed rules, an AddressSanitizer report cut above its shadow
bytes. Each test names the rule it guards; removing or loosening that rule makes it fail.
"""

from __future__ import annotations

from devtools.testing.merger import spans

GLOG_FRAMES = ["*** Check failure stack trace: ***",
               "    @     0x7f01584a5daa  google::LogMessage::Fail()",
               "    @     0x7f0158b6c8f3  caffe::Net<>::Init()",
               "    @           0x4065ab  (unknown)"]


def test_a_glog_stack_frame_with_a_null_pc_stays_in_the_check_failure():
    # rule: TOKENS absl_frame "(nil)" (glog's DumpStackTrace writes the pc with "%p", glibc a null one as
    # "(nil)": the last frame of many unwinds)
    texts = ["F1011 13:25:12.899116  7866 cudnn.hpp:122] Check failed: status == CUDNN_STATUS_SUCCESS (3 vs. 0) ",
             *GLOG_FRAMES,
             "    @              (nil)  (unknown)",
             "Aborted (core dumped)"]
    assert spans(texts) == [(0, 5), (6, 6)]


def test_a_check_failed_line_without_its_glog_head_keeps_the_failure_stack():
    # rule: ANNOUNCE_BODY_RE "^Check failed: " (CHECK's message; LogMessage::Fail writes the stack right after
    # the fatal record, whose "F0303 ... file:line] " head a copy dropped)
    texts = ["Check failed: status == CUDNN_STATUS_SUCCESS (3 vs. 0)  CUDNN_STATUS_BAD_PARAM",
             *GLOG_FRAMES,
             "train.sh: line 3: 25020 Aborted (core dumped) ./build/tools/caffe train"]
    assert spans(texts) == [(0, 4), (5, 5)]
    # (a plain line that only mentions a check is not one)
    assert spans(["the check failed: retrying", *GLOG_FRAMES]) == [(0, 0), (1, 4)]


def test_paddle_error_string_without_its_dashed_rules_is_one_event():
    # rule: STARTS paddle_head, TOKENS num_frame1 and paddle_info (SignalHandle's string: "C++ Traceback (most
    # recent call last):", frames "%-4d" + symbol, a blank line, "Error Message Summary:", the error line and its
    # "  [TimeInfo: ...]" / "  [SignalInfo: ...]" details; Markdown dropped the "-----" rules around the heads and
    # collapsed the blanks of unfenced text)
    texts = ["C++ Traceback (most recent call last):",
             "0 paddle_infer::Predictor::Predictor(paddle::AnalysisConfig const&)",
             "1 paddle::AnalysisPredictor::OptimizeInferenceProgram()",
             "",
             "Error Message Summary:",
             "FatalError: Erroneous arithmetic operation is detected by the operating system.",
             '[TimeInfo: *** Aborted at 1712889656 (unix time) try "date -d @1712889656" if you are using GNU date '
             "***]",
             "[SignalInfo: *** SIGFPE (@0x7f268c23bda5) received by PID 337444 (TID 0x7f26fd303740) from PID 1 ***]",
             "",
             "Floating point exception (core dumped)"]
    assert spans(texts) == [(0, 7), (9, 9)]


def test_an_asan_report_cut_above_its_shadow_rows_is_one_event():
    # rule: TOKENS san_shadow_row and STARTS san_shadow_row (PrintShadowBytes: "  0x..:" and 16 bytes " %02x",
    # the guilty one "[%02x]"), then the legend; Die()'s "==PID==ABORTING" is a line of its own
    texts = ["  0x0c047fff8000: fa fa 00 00 00 fa fa fa fa fa fa fa fa fa fa fa",
             "=>0x0c047fff8010: fa fa 00 00[04]fa fa fa fa fa fa fa fa fa fa fa",
             "  0x0c047fff8020: fa fa fa fa fa fa fa fa fa fa fa fa fa fa fa fa",
             "Shadow byte legend (one shadow byte represents 8 application bytes):",
             "  Addressable:           00",
             "  Heap left redzone:       fa",
             "==3182321==ABORTING"]
    assert spans(texts) == [(0, 5), (6, 6)]
    # (a hex dump's row of other width is not a shadow row)
    legend = "Shadow byte legend (one shadow byte represents 8 application bytes):"
    assert spans(["  0x7ffe0010: de ad be ef", legend]) == [(0, 0), (1, 1)]
