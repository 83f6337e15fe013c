"""Printers met in corpus/wild/dev18 (non-Python printers around GPU clusters, pasted into issues). Inputs follow
the printers' own code; each test names the rule it guards, and removing that rule makes it fail.
"""

from __future__ import annotations

from devtools.testing.merger import groups


def spans(texts: list[str]) -> list[tuple[int, int]]:
    return [(g[0], g[-1]) for g in groups(texts)]


# -- glog's failure stack on Windows ----------------------------------------------------------------

def test_glog_frames_with_msvc_pointers_stay_with_their_stack():
    # rule: TOKENS "absl_frame" (the MSVC runtime's "%p": capital hex digits, zero-padded, no "0x")
    texts = ["F0123 05:10:27.501575  2840 stacktrace_unittest.cc:109] Check failed: ret_addr <= range.end",
             "*** Check failure stack trace: ***",
             "    @   00007FF7E2D9712B  google::LogMessage::Fail",
             "    @   00007FF7E2D96E5A  google::LogMessage::SendToLog",
             "    @   00007FF7E2D9A0F1  main",
             "I0123 05:10:28.000000  2841 other.cc:1] next record"]
    assert spans(texts) == [(0, 4), (5, 5)]


# -- glog's fatal record whose message spans lines ---------------------------------------------------

def test_glog_fatal_message_over_many_lines_goes_on_to_its_failure_stack():
    # rule: MODES "record_tent" takes "absl_sig" when the record announces it, and holds up to 24 lines
    board = ["#" + " " * 13 + "#"] * 16
    texts = ["F1016 00:50:39.662709 27762 core_field.cc:261] Check failed: c != EMPTY (0 vs. 0) # # # #",
             *board,
             "*** Check failure stack trace: ***",
             "    @     0x7fa8510d61bd  google::LogMessage::Fail()",
             "    @           0x43836d  (unknown)"]
    assert spans(texts) == [(0, len(texts) - 1)]


def test_lines_under_a_quiet_glog_record_are_not_taken_by_a_later_stack():
    # (the same rule: a record that does not announce keeps its lines apart)
    texts = ["I1016 00:50:39.662709 27762 main.cc:261] board:", "#   #",
             "*** Check failure stack trace: ***", "    @     0x7fa8510d61bd  google::LogMessage::Fail()"]
    assert spans(texts)[-1] == (2, 3)


# -- dmlc-core's fatal record --------------------------------------------------------------------------

def test_dmlc_check_failed_record_takes_its_stack_trace():
    # rules: HEADS "dmlc", TOKENS "dmlc_bt_head"/"dmlc_bt", _ATTACH "dmlc_bt_head" -> MODES "dmlc_bt"
    texts = ["[14:28:34] test.cc:4: Check failed: 1 == 0 (1 vs. 0): MyCustomError: xyz",
             "Stack trace:",
             "  [bt] (0) ./test.exe() [0x401f37]",
             "  [bt] (1) /lib/x86_64-linux-gnu/libc.so.6(__libc_start_main+0xf5) [0x7fd367f21f45]",
             "[14:28:35] test.cc:9: next record"]
    assert spans(texts) == [(0, 3), (4, 4)]


def test_xgboost_error_message_keeps_the_dmlc_stack_it_quotes():
    # rule: SOFT_STARTS "dmlc_bt_head"/"dmlc_bt" (inside a Python exception's message they are its text)
    texts = ["Traceback (most recent call last):",
             '  File "train.py", line 3, in <module>',
             "    bst = xgb.train(params, dtrain)",
             "xgboost.core.XGBoostError: [14:28:34] ../src/learner.cc:4: Check failed: 1 == 0",
             "Stack trace:",
             "  [bt] (0) /usr/lib/libxgboost.so(+0x1e2f4) [0x7f00]",
             "  [bt] (1) /usr/lib/libxgboost.so(XGBoosterUpdateOneIter+0x5a) [0x7f01]",
             "",
             "$ echo done"]
    assert spans(texts) == [(0, 6), (8, 8)]


# -- compute-sanitizer cut inside a report -------------------------------------------------------------

def test_compute_sanitizer_host_frames_cut_above_are_one_event():
    # rule: STARTS "cs_cont" -> MODES "cs_report"
    texts = ["=========         Host Frame: ggml_backend_is_cuda [0x7ff9b5ef678a] in ggml-cuda.dll",
             "=========         Host Frame:  [0x1979f8] in ggml-cuda.dll",
             "=========         Host Frame: llama_decode [0x7ff9fd37104a] in llama.dll",
             "=========",
             "main: done"]
    assert spans(texts) == [(0, 3), (4, 4)]


# -- Rust's panic hook before 1.73 ---------------------------------------------------------------------

def test_old_rust_panic_message_tail_goes_on_to_its_backtrace():
    # rules: TOKENS "rust_msg_tail" (STARTS -> MODES "rust_panic"), "rust_bt_head" indented with the copy
    texts = ["  # stderr",
             "  ', candle-kernels/build.rs:207:13",
             "  stack backtrace:",
             "     0:     0x557f8498d0b1 - std::backtrace_rs::backtrace::libunwind::trace::hb01a67340c9cfb71",
             "                                 at /rustc/39f4/library/std/src/backtrace/libunwind.rs:93:5",
             "     1:     0x557f849b282c - core::fmt::write::h68b52f8aa598961e"]
    assert spans(texts) == [(0, 0), (1, 5)]


# -- Node.js's builtin modules -------------------------------------------------------------------------

def test_node_uncaught_error_thrown_in_a_builtin_module_is_one_event():
    # rule: TOKENS "node_src" ("node:internal/..." names, Node 16+)
    texts = ["node:internal/modules/cjs/loader:1147",
             "  throw err;",
             "  ^",
             "",
             "Error: Cannot find module './xhr-sync-worker.js'",
             "Require stack:",
             "- /srv/app/index.js",
             "    at Module._resolveFilename (node:internal/modules/cjs/loader:1144:15)",
             "    at Function.resolve (node:internal/modules/helpers:187:19) {",
             "  code: 'MODULE_NOT_FOUND',",
             "  requireStack: [ '/srv/app/index.js' ]",
             "}",
             "",
             "Node.js v20.11.1",
             "$ echo done"]
    assert spans(texts) == [(0, 13), (14, 14)]


# -- cmd.exe -----------------------------------------------------------------------------------------

def test_cmd_exe_command_not_found_message_is_one_event():
    # rules: TOKENS "cmd_not_found"/"cmd_not_found_end", STARTS -> MODES "cmd_not_found"
    texts = ["> react-scripts start",
             "'react-scripts' is not recognized as an internal or external command,",
             "operable program or batch file.",
             "npm ERR! code ELIFECYCLE"]
    assert spans(texts) == [(0, 0), (1, 2), (3, 3)]
