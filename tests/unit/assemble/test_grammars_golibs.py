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
