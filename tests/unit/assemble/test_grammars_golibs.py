"""Grammars of the logging and error libraries Go and Rust services use (corpus/printers/golibs, rustlibs):
pkg/errors' "%+v" frames under the line that carries them, klog/v2's multi-line values.

Each test names the rule it guards and uses the layout its library's code writes (quoted in
``rules.py``); removing or loosening the rule makes it fail.
"""

from __future__ import annotations

from test_grammars import kinds, spans

# pkg/errors "%+v" of errors.Wrap(errors.New(..), "load shard 7") through log.Printf: the cause's message
# and frames, the wrapper's message, its frames (each frame "func\n\tfile:line")
_PKG_ERRORS = ["2026/12/02 01:17:02 shard load failed: open /data/shard-00007.parquet: no such file or directory",
               "main.openShard",
               "\t/src/golibs/main.go:26",
               "main.main",
               "\t/src/golibs/main.go:156",
               "runtime.goexit",
               "\t/usr/local/go/src/runtime/asm_amd64.s:1771",
               "load shard 7",
               "main.loadShard",
               "\t/src/golibs/main.go:30",
               "runtime.goexit",
               "\t/usr/local/go/src/runtime/asm_amd64.s:1771"]


def test_pkg_errors_frames_belong_to_the_line_above_them() -> None:
    # rule: _ATTACH "go_func_bare" -> "go_pair" (a bare function, confirmed by its "\tfile:line"), under a
    # record that does not announce a stack (Go's log writes no level)
    texts = [*_PKG_ERRORS[:7], "2026/12/02 01:17:03 step 1201 done"]
    assert spans(texts) == [(0, 6), (7, 7)]
    assert kinds(texts)[0] == "go_frames"


def test_pkg_errors_wrapper_message_between_frames_is_held_until_frames_confirm_it() -> None:
    # rule: MODES "go_frames" "text" held (withMessage's message between the cause's frames and its own)
    texts = [*_PKG_ERRORS, "2026/12/02 01:17:03 step 1201 done"]
    assert spans(texts) == [(0, 11), (12, 12)]
    # a line of text after the frames that no frame follows is a line of its own
    texts = [*_PKG_ERRORS[:7], "Epoch 3/10", "2026/12/02 01:17:03 step 1201 done"]
    assert spans(texts) == [(0, 6), (7, 7), (8, 8)]


def test_bare_function_line_without_its_file_line_stays_alone() -> None:
    # rule: MODES "go_pair" takes only a file line
    texts = ["2026/12/02 01:17:02 saved", "model.safetensors", "2026/12/02 01:17:03 next"]
    assert spans(texts) == [(0, 0), (1, 1), (2, 2)]


_KLOG = ['I1202 01:17:02.334178    9177 main.go:137] "loaded config" path="/etc/train.json" config=<',
         "\t{",
         '\t  "batch": 8,',
         '\t  "lr": 0.0003',
         "\t}",
         " >",
         'E1202 01:17:02.334188    9177 main.go:138] "allreduce failed" err=<',
         "\tnccl timeout",
         "\trank 3 did not answer",
         " > step=1200",
         'I1202 01:17:02.334190    9177 main.go:139] "step done" step=1201']


def test_klog_multi_line_value_runs_to_its_closing_line() -> None:
    # rules: BODY_SUFFIX_STARTS "=<" -> MODES "klog_value" (its tab-led lines), token "klog_close" its last
    assert spans(_KLOG) == [(0, 5), (6, 9), (10, 10)]
    assert kinds(_KLOG)[:2] == ["klog_record", "klog_record"]


def test_klog_closing_line_under_a_prefix_that_took_its_blank() -> None:
    # rule: token "klog_close" " ?>": torchrun's "[rank3]:" prefix takes one blank after its colon
    texts = ["[rank3]:" + t for t in _KLOG]
    assert spans(texts) == [(0, 5), (6, 9), (10, 10)]


def test_klog_closing_line_may_open_the_next_value() -> None:
    # rule: token "klog_reopen" continues the value mode
    texts = [*_KLOG[6:9], " > step=1200 config=<", "\tlr: 0.1", " >", _KLOG[10]]
    assert spans(texts) == [(0, 5), (6, 6)]


def test_klog_value_cut_before_its_closing_line_ends_at_a_line_without_its_tab() -> None:
    # rule: MODES "klog_value" "any_lead": only tab-led lines are the value's
    texts = [_KLOG[0], "\t{", _KLOG[10], "plain line"]
    assert spans(texts) == [(0, 1), (2, 2), (3, 3)]


# anyhow's Debug (ErrorImpl::debug) as std prints it for `main` returning Err: "Error: {err:?}"
_ANYHOW = ["Error: build dataset for epoch 3",
           "",
           "Caused by:",
           "    0: load shard 7",
           "    1: open /data/shard-00007.parquet: no such file or directory",
           "",
           "Stack backtrace:",
           "   0: anyhow::error::<impl anyhow::Error>::construct",
           "             at /root/.cargo/registry/src/anyhow-1.0.105/src/error.rs:1016:20",
           "   1: rustlibs::main",
           "             at ./src/main.rs:12:5"]
_ENV_LOGGER = "[2026-12-02T01:20:00Z INFO  rustlibs] epoch 3 starting"


def test_anyhow_report_sections_after_blank_lines_are_one_event() -> None:
    # rules: _RUST_SECTIONS in the plain mode's after_blank ("Caused by:" -> rust_causes, "Stack backtrace:"
    # -> rust_bt)
    texts = [_ENV_LOGGER, *_ANYHOW, _ENV_LOGGER]
    assert spans(texts) == [(0, 0), (1, 11), (12, 12)]
    assert kinds(texts)[1] == "rust_error"


def test_anyhow_report_in_a_log_record_and_without_its_blank_lines() -> None:
    # rules: _RUST_SECTIONS in the record modes (env_logger's "{:?}" of an anyhow::Error), and in _ATTACH
    # (an agent that drops empty lines)
    texts = [_ENV_LOGGER, "[2026-12-02T01:20:00Z ERROR rustlibs] dataset unavailable: build dataset for epoch 3",
             *_ANYHOW[1:5], _ENV_LOGGER]
    assert spans(texts) == [(0, 0), (1, 5), (6, 6)]
    texts = [t for t in texts if t]
    assert spans(texts) == [(0, 0), (1, 4), (5, 5)]


def test_eyre_location_section() -> None:
    # rule: _RUST_SECTIONS "rust_location" -> rust_loc (eyre's DefaultHandler with track-caller)
    texts = ["Error: build dataset for epoch 3", "", "Caused by:", "    load shard 7", "", "Location:",
             "    src/main.rs:40:18", _ENV_LOGGER]
    assert spans(texts) == [(0, 6), (7, 7)]


def test_a_location_line_with_its_value_on_it_is_not_an_eyre_section() -> None:
    # rule: token "rust_location" is the title alone (eyre writes the place on the next line)
    texts = ["Error: build dataset for epoch 3", "", "Location: us-east-1", _ENV_LOGGER]
    assert spans(texts) == [(0, 0), (2, 2), (3, 3)]


# tracing-subscriber's Pretty formatter (fmt/format/pretty.rs)
_PRETTY = ["  2026-12-02T01:20:00.123456Z ERROR rustlibs: config invalid:",
           "  lr: must be > 0",
           "    at src/main.rs:125",
           "    in rustlibs::tracing_load with rank: 3, epoch: 3",
           "",
           "  2026-12-02T01:20:00.123470Z  INFO rustlibs: step done, step: 1200",
           "    at src/main.rs:120",
           "",
           _ENV_LOGGER]


def test_tracing_pretty_event_with_its_location_and_span_lines() -> None:
    # rules: HEADS "tracing_pretty" -> HEAD_STARTS mode "tracing_pretty" (message lines held until the
    # "at" line), token "tracing_in"
    assert spans(_PRETTY) == [(0, 3), (5, 6), (8, 8)]


def test_klog_value_whose_tabs_a_copy_expanded_to_blanks() -> None:
    # rule: MODES "klog_value" "any_lead" takes a blank as well as a tab (k8s HandleCrash's "stacktrace=<"
    # value pasted into an issue, its tab expanded)
    texts = ['E1118 04:30:59.813753       1 panic.go:262] "Observed a panic" panic="runtime error" stacktrace=<',
             "        goroutine 507 [running]:",
             "        k8s.io/apimachinery/pkg/util/runtime.logPanic({0x55e62dfe1398, 0x55e62f9c6460})",
             "                /root/go/pkg/mod/k8s.io/apimachinery@v0.32.2/pkg/util/runtime/runtime.go:107 +0xbc",
             " >",
             'I1118 04:31:00.000000       1 scheduler.go:10] "next"']
    assert spans(texts) == [(0, 4), (5, 5)]


def test_klog_value_ends_at_a_line_that_is_a_record_of_its_own() -> None:
    # rule: MODES "klog_value" "any" is "cont" (free text): a Loki view lists lines newest first, so the
    # tab-led lines after "output=<" are entries of their own and no closing line comes
    texts = ['I0507 11:59:40.784002    2776 prober.go:107] "Probe failed" probeType="Readiness" output=<',
             '\tts=2024-05-07T11:59:40.579977004Z level=error caller=http_client.go:56 msg="request failed"',
             '\tts=2024-05-07T11:59:40.165927901Z level=error caller=http_client.go:56 msg="request failed"',
             'time="2024-05-07T11:59:40.783971781Z" level=info msg="cleaning up dead shim"']
    assert spans(texts) == [(0, 0), (1, 1), (2, 2), (3, 3)]


def test_tracing_pretty_message_lines_at_column_0_are_held_until_its_location() -> None:
    # rule: MODES "tracing_pretty" "text" held (Pretty writes the message as it is); without the location
    # line after them they are lines of their own
    texts = ["  2026-12-02T01:20:00.123456Z ERROR rustlibs: two lines", "second line", "    at src/main.rs:125",
             "", _ENV_LOGGER]
    assert spans(texts) == [(0, 2), (4, 4)]
    texts = ["  2026-12-02T01:20:00.123456Z ERROR rustlibs: one line", "Epoch 3/10", _ENV_LOGGER]
    assert spans(texts) == [(0, 0), (1, 1), (2, 2)]


# color-eyre's report and panic hook (handler.rs, config.rs) with RUST_BACKTRACE=1, its blank theme
_EYRE_BT = ["",
            "  ━━━━━━━━━━━━━━━━━━━━━━━━━━━━━━━━━━ BACKTRACE ━━━━━━━━━━━━━━━━━━━━━━━━━━━━━━━━━━━",
            "                                ⋮ 4 frames hidden ⋮                               ",
            "   5: <E as eyre::context::ext::StdError>::ext_report::h8574f6ea57c79910",
            "      at /root/.cargo/registry/src/eyre-0.6.14/src/context.rs:23",
            "   7: rustlibs::eyre_chain::hd4eb10ae08c87bc4",
            "      at /src/rustlibs/src/main.rs:39",
            "                                ⋮ 15 frames hidden ⋮                              ",
            "",
            "Run with COLORBT_SHOW_HIDDEN=1 environment variable to disable frame filtering.",
            "Run with RUST_BACKTRACE=full to include source snippets."]


def test_color_eyre_report_with_its_backtrace_and_env_sections() -> None:
    # rules: _RUST_SECTIONS "eyre_bt_rule" -> eyre_bt (its frames: rust_frame, at_path, the hidden rows),
    # "eyre_env" -> eyre_env
    texts = [_ENV_LOGGER, "Error: ", "   0: build dataset for epoch 3", "   1: load shard 7", "", "Location:",
             "   src/main.rs:39", *_EYRE_BT, _ENV_LOGGER]
    assert spans(texts) == [(0, 0), (1, 17), (18, 18)]


def test_color_eyre_panic_report() -> None:
    # rules: token "eyre_panic" starts "eyre_panic" ("Message:  ", "Location: "), then its sections
    texts = [_ENV_LOGGER, "The application panicked (crashed).", "Message:  rank table holds rank 3",
             "Location: src/main.rs:100", *_EYRE_BT, _ENV_LOGGER]
    assert spans(texts) == [(0, 0), (1, 14), (15, 15)]
    assert kinds(texts)[1] == "rust_panic"
    texts = [_ENV_LOGGER, *texts[1:4], "",
             "Backtrace omitted. Run with RUST_BACKTRACE=1 environment variable to display it.",
             "Run with RUST_BACKTRACE=full to include source snippets.", _ENV_LOGGER]
    assert spans(texts) == [(0, 0), (1, 6), (7, 7)]
