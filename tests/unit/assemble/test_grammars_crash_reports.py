"""Grammars of crash and diagnostic reports that native runtimes print: ThreadSanitizer's frames,
UndefinedBehaviorSanitizer's notes, UCX's per-thread backtraces and fatal records, containerd's goroutine
dump, LLVM's crash handler, a Rust panic written after an unterminated line, cargo's status lines.

Each test names the rule it guards and builds its lines from the format string of the code that prints
them (quoted in ``rules.py``); removing or loosening the rule makes it fail.
"""

from __future__ import annotations

from test_grammars import kinds, spans

# -- ThreadSanitizer (tsan_report.cpp PrintReport; frames "    #%n %f %S %M", no pc) --------------


def _tsan_frame(n: int, func: str, src: str, module: str, offset: int, build_id: str = "") -> str:
    tail = f" (BuildId: {build_id})" if build_id else ""
    return f"    #{n} {func} {src} ({module}+0x{offset:x}){tail}"


def _tsan_report(pid: int) -> list[str]:
    return ["==================",
            f"WARNING: ThreadSanitizer: data race (pid={pid})",
            "  Write of size 8 at 0x7b0400000800 by thread T1:",
            _tsan_frame(0, "worker", "/src/a.c:49", "a.out", 0x9acb),
            _tsan_frame(1, "<null>", "<null>", "libtsan.so.0", 0x29b3d),
            "",
            "  Previous read of size 8 at 0x7b0400000800 by main thread:",
            _tsan_frame(0, "main", "/src/a.c:822", "a.out", 0x54f4, "c37a21adbd15c7d0b664b44dd7a19b1d98583db9"),
            "",
            "  Location is heap block of size 40 at 0x7b0400000800 allocated by thread T4:",
            _tsan_frame(0, "operator new(unsigned long)", "<null>", "libclang_rt.tsan_osx_dynamic.dylib:x86_64",
                        0x689d3),
            "",
            "  Thread T1 (tid=5022, running) created by main thread at:",
            _tsan_frame(0, "pthread_create", "<null>", "libtsan.so.0", 0x2be1b),
            "",
            "SUMMARY: ThreadSanitizer: data race /src/a.c:49 in worker",
            "=================="]


def test_tsan_report_cut_above_its_frames_is_one_event_to_its_closing_rule() -> None:
    # rules: TOKENS tsan_frame (a frame without a pc) starts "san_report"; "san_report" takes TSan's frames,
    # and its blank-separated sections, to the SUMMARY and the rule that closes the report
    report = _tsan_report(5020)
    texts = [*report[3:], *_tsan_report(5021), "after the reports"]
    assert spans(texts) == [(0, 13), (14, 30), (31, 31)]
    assert kinds(texts)[0] == "llvm_sanitizer"


def test_tsan_frames_keep_a_report_whose_sections_start_with_them() -> None:
    # rules: SOFT_STARTS tsan_frame is an indented line to "san_report", which takes it (after a blank line too)
    texts = ["WARNING: ThreadSanitizer: data race (pid=7)", "  Read of size 4 at 0x1 by main thread:", "",
             _tsan_frame(0, "main", "a.cpp", "a.out", 0xea978, "c37a"),
             "SUMMARY: ThreadSanitizer: data race a.cpp in main"]
    assert spans(texts) == [(0, 4)]


def test_a_tsan_shaped_line_elsewhere_is_read_as_an_indented_line() -> None:
    # rule: SOFT_STARTS tsan_frame: inside a block that does not name it, it is an indented line
    texts = ["Loaded modules:", _tsan_frame(0, "init", "<null>", "libfoo.so", 0x10)]
    assert spans(texts) == [(0, 1)]


# -- UndefinedBehaviorSanitizer (ubsan_diag.cpp) -------------------------------------------------

_UBSAN = ["/src/aten/Functions.h:2779:12: runtime error: call to function f() through pointer to incorrect "
          "function type 'void (*)()'",
          "(/opt/lib/libtorch.so+0xa6b7860): note: f() defined here",
          "    #0 0x7f25f2696882 in torch::randn() (/opt/lib/libtorch_python.so+0x11aa882)",
          "    #1 0x558025dc7743 in _PyCFunction_FastCallDict /work/Objects/methodobject.c:231",
          "SUMMARY: UndefinedBehaviorSanitizer: undefined-behavior /src/aten/Functions.h:2779:12 in "]


def test_ubsan_note_at_a_module_location_is_part_of_the_report() -> None:
    # rule: TOKENS san_note reads RenderLocation's "(module+0xoffset)" location
    assert spans([*_UBSAN, "next line"]) == [(0, 4), (5, 5)]
    texts = ["a.cc:3:4: runtime error: load of misaligned address", "<unknown>: note: pointer points here",
             "next line"]
    assert spans(texts) == [(0, 1), (2, 2)]


def test_ubsan_report_after_an_unterminated_progress_line_starts_on_that_line() -> None:
    # rule: TOKENS san_runtime takes text without a ':' before the error (unittest's "test (m.C) ... ")
    texts = ["test_simple_model (__main__.TestBoard) ... " + _UBSAN[0], *_UBSAN[1:], "ok"]
    assert spans(texts) == [(0, 4), (5, 5)]
    # (text with a ':' before it is a message that quotes the error: a line of its own)
    texts = ["ValueError: bad input: " + _UBSAN[0], "    #0 0x7f25f2696882 in f() (/opt/lib/a.so+0x1)", "x"]
    assert spans(texts)[0] != (0, 1)


# -- UCX (ucs/debug/debug.c ucs_debug_print_backtrace, ucs/debug/log.c) ------------------------------

def _ucx_backtrace(tid: int, frames: int) -> list[str]:
    return [f"==== backtrace (tid:{tid:7d}) ====",
            *[f"{i:2d} 0x{0x557b9 + i:016x} fn{i}()  ???:0" for i in range(frames)]]


def test_ucx_backtraces_of_two_threads_are_two_events() -> None:
    # rules: "ucx" moves to "ucx_frames" at its header or first frame; there a further "==== backtrace" header
    # (another thread's handler) starts a new event
    texts = [*_ucx_backtrace(31212, 3), *_ucx_backtrace(31118, 2), "=================================", "next"]
    assert spans(texts) == [(0, 3), (4, 7), (8, 8)]


def test_ucx_fatal_record_and_the_backtrace_its_handler_prints_are_one_event() -> None:
    # rules: TOKENS ucx_fatal (ucs_log's "[host:pid:thread:tid] file:line LEVEL: msg", pid padded to five
    # columns) starts "ucx", whose backtrace header and frames follow
    texts = ["[ast1815:6807 :0:6807] ib_mlx5_log.c:115  FATAL: Error on mlx5_3:1 QP 0xe6d7 wqe[7821]: "
             "Transport retry count exceeded (synd 0x15 vend 0x81) opcode SEND",
             "==== backtrace ====",
             "0 0x000000000002cf1c uct_ib_mlx5_completion_with_err()  /src/uct/ib/mlx5/ib_mlx5_log.c:112",
             "1 0x000000000003ea00 uct_ib_mlx5_poll_cq()  /src/uct/ib/mlx5/ib_mlx5.inl:38",
             "=================================",
             "next"]
    assert spans(texts) == [(0, 4), (5, 5)]
    assert kinds(texts)[0] == "cpp_frames"


def test_ucx_caught_signal_lines_with_padded_pids_stay_lines_of_their_own() -> None:
    # rule: TOKENS ucx_sig reads the padded pid: each signal line opens its own report
    texts = ["[gpu023:3333 :0:3423] Caught signal 11 (Segmentation fault: address not mapped to object at "
             "address 0x2b513f7d3760)",
             "[gpu023:3310 :0:3403] Caught signal 11 (Segmentation fault: address not mapped to object at "
             "address 0x2b31a46e0760)",
             *_ucx_backtrace(3310, 2)]
    assert spans(texts) == [(0, 0), (1, 4)]


# -- containerd's dumpStacks ("=== BEGIN goroutine stack dump ===\n%s\n=== END goroutine stack dump ===")

_DUMP = ["goroutine 14 [running]:",
         "github.com/containerd/containerd/runtime/v2/shim.dumpStacks(0xc000332540)",
         "\t/build/runtime/v2/shim/shim.go:533 +0x4f",
         "created by github.com/containerd/containerd/runtime/v2/shim.serve in goroutine 1",
         "\t/build/runtime/v2/shim/shim.go:515 +0x398",
         "",
         "goroutine 1 [select, 5733 minutes]:",
         "main.main()",
         "\t/build/cmd/containerd-shim-runc-v2/main.go:31 +0x51",
         ""]


def test_containerd_goroutine_dump_is_one_event_between_its_markers() -> None:
    # rules: TOKENS go_dump_begin starts "go_stack"; go_dump_end (after the dump's trailing blank line)
    # is its last line
    texts = ["=== BEGIN goroutine stack dump ===", *_DUMP, "=== END goroutine stack dump ===", "next record"]
    assert spans(texts) == [(0, 11), (12, 12)]
    assert kinds(texts)[0] == "go_panic"


def test_containerd_dump_inside_a_logrus_message_starts_at_its_record() -> None:
    # rule: TOKENS go_dump_begin also after logrus' msg=" (the journal splits the record at each newline)
    texts = ['time="2017-11-28T02:02:14Z" level=info msg="=== BEGIN goroutine stack dump ===', *_DUMP[:5],
             '=== END goroutine stack dump ===" namespace=k8s.io', 'time="2017-11-28T02:02:15Z" level=info msg=next']
    assert spans(texts) == [(0, 6), (7, 7)]


# -- LLVM's crash handler (PrettyStackTrace.cpp CrashHandler, Signals PrintStackTrace) ---------------

_LLVM = ["PLEASE submit a bug report to https://github.com/llvm/llvm-project/issues/ and include the crash "
         "backtrace.",
         "Stack dump:",
         "0.\tProgram arguments: ./triton-opt poc.mlir --tritongpu-coalesce",
         "1.\tRunning pass 'Function Pass Manager' on module 'poc.mlir'.",
         " #0 0x00007f920fe345ca llvm::sys::PrintStackTrace(llvm::raw_ostream&, int) (./triton-opt+0x858e5ca)",
         " #1 0x00007f920fe314ce llvm::sys::RunSignalHandlers() (./triton-opt+0x858b4ce)",
         " #2 0x00007f92072c5330 (/lib/x86_64-linux-gnu/libc.so.6+0x45330)",
         " #3 0x00007f920f9454a4 mlir::Attribute::getContext() const (./triton-opt+0x809f4a4)"]


def test_llvm_crash_report_is_one_event() -> None:
    # rules: TOKENS llvm_please / llvm_stack_dump start "llvm_crash": the pretty stack's entries and frames
    assert spans(["Crash:", *_LLVM, "Segmentation fault (core dumped)"]) == [(0, 0), (1, 8), (9, 9)]
    # (without the bug-report line, as older LLVM prints it)
    assert spans([*_LLVM[1:], "next"]) == [(0, 6), (7, 7)]


# -- Rust std::panicking default_hook after an unterminated stdout line -------------------------------

def test_rust_panic_written_after_an_unterminated_line_starts_on_that_line() -> None:
    # rule: TOKENS rust_panic_glued (the header ends with "file:line:col:", the message below)
    texts = ["Assistant: Whythread 'main' panicked at examples/quantized/main.rs:426:73:",
             "called `Option::unwrap()` on a `None` value",
             "note: run with `RUST_BACKTRACE=1` environment variable to display a backtrace",
             "next"]
    assert spans(texts) == [(0, 2), (3, 3)]
    assert kinds(texts)[0] == "rust_panic"
    # (a message that quotes a panic without ending at its location is a line of its own)
    texts = ["worker said: thread 'main' panicked at src/a.rs:1:2: boom",
             "note: run with `RUST_BACKTRACE=1` environment variable to display a backtrace"]
    assert spans(texts) == [(0, 0), (1, 1)]


# -- cargo's status lines (job_queue: "Finished", "{profile} [{opt}] target(s) in {time}") ---------------

def test_cargo_finished_line_with_a_bare_profile_is_a_record_of_its_own() -> None:
    # rule: RECORDS cargo_status reads "Finished release [...]" (before cargo 1.77) as well as
    # "Finished `release` profile [...]"
    texts = ["   Compiling candle-examples v0.3.1 (/home/u/candle/candle-examples)",
             "    Finished release [optimized] target(s) in 4.33s",
             "     Running `target/release/examples/quantized`"]
    assert spans(texts) == [(0, 0), (1, 1), (2, 2)]



def test_cargo_test_running_line_naming_the_test_target_is_a_record_of_its_own() -> None:
    # rule: RECORDS cargo_status reads cargo test's "Running <target> (<executable>)" (cargo_test.rs cmd_builds)
    # and the bare executable of older cargo, which sit deeper than "Finished" and are not its continuation
    for running in ("     Running unittests src/lib.rs (target/debug/deps/tokenizers-5c1e2a9d0b7f3e11)",
                    "     Running tests/integration.rs (target/debug/deps/integration-0d6b3c2f4a1e9b87)",
                    "     Running target/debug/deps/tokenizers-5c1e2a9d0b7f3e11"):
        texts = ["    Finished `test` profile [unoptimized + debuginfo] target(s) in 0.93s", running]
        assert spans(texts) == [(0, 0), (1, 1)], running


# -- AddressSanitizer's report after a Python traceback (asan_report.cpp ScopedInErrorReport) ------------

def test_sanitizer_rule_after_a_traceback_is_not_read_as_torchruns_box() -> None:
    # rules: "py_msg" holds a bare '=' rule ("py_box_open") until the box's title ("{name} FAILED",
    # format_msg) confirms it; ASan opens its report with a rule of its own, read again with its report
    texts = ["Traceback (most recent call last):",
             '  File "test.py", line 87, in at_exit_handler',
             '    raise Exception("foo")',
             "Exception: foo",
             "=" * 65,
             "==229269==ERROR: AddressSanitizer: heap-use-after-free on address 0x62500077e338 at pc 0x55e64a6b258e "
             "bp 0x7ffffdcce0c0 sp 0x7ffffdcce0b8",
             "READ of size 8 at 0x62500077e338 thread T0",
             "    #0 0x55e64a6b258d in tensorflow::Node::name() const tensorflow/core/graph/graph.cc:159:43",
             "SUMMARY: AddressSanitizer: heap-use-after-free tensorflow/core/graph/graph.cc:159:43 in name"]
    assert spans(texts) == [(0, 3), (4, 8)]
    assert kinds(texts) == ["python_traceback", "llvm_sanitizer"]
    # (the same after a message known to span lines, "py_msg_more")
    spanning = [*texts[:3], "RuntimeError: worker failed:", "  exit code 1", *texts[4:]]
    assert spans(spanning) == [(0, 4), (5, 9)]
    # (torchrun's box under the exception line: its title confirms the border)
    box = ["=" * 40, "train.py FAILED", "-" * 40, "Failures:", "  <NO_OTHER_FAILURES>", "=" * 40]
    assert spans([*texts[:4], *box, "next"]) == [(0, 9), (10, 10)]


# -- the Go runtime's signal dump (runtime/signal_unix.go sighandler, then runtime/traceback.go) ---------


def _go_sigquit_dump(head: str, pc_line: str) -> list[str]:
    return [head, pc_line, "",
            "goroutine 0 [idle]:",
            "runtime.futex()",
            "\t/usr/local/go/src/runtime/sys_linux_amd64.s:559 +0x21 fp=0x7ffd274e41b0 sp=0x7ffd274e41a8 pc=0x55b0",
            "",
            "goroutine 1 [chan receive]:",
            "main.main()",
            "\t/src/cmd/dockerd/main.go:12 +0x4f"]


def test_go_signal_dump_keeps_its_pc_line_before_the_goroutines() -> None:
    # rule: TOKENS go_sig_pc ("PC=%#x m=%d sigcode=%d", " addr=%#x" for SIGSEGV/SIGBUS; Go 1.4's "PC=%#x m=%d")
    # continues "go_head": held as text it would not outlive the blank line before the first goroutine
    before = "INFO[2023-01-10T21:49:18.298191503Z] API listen on /var/run/docker.sock"
    for pc_line in ("PC=0x55b049d6ada1 m=0 sigcode=128", "PC=0x46d2e1 m=3 sigcode=1 addr=0x0", "PC=0x8048f30 m=0"):
        texts = [before, *_go_sigquit_dump("SIGQUIT: quit", pc_line), "exit status 2"]
        assert spans(texts) == [(0, 0), (1, 10), (11, 11)], pc_line
        assert kinds(texts)[1] == "go_panic"


def test_go_signal_dump_after_the_terminals_echo_of_the_key() -> None:
    # rule: TOKENS go_sig takes the tty's ECHOCTL echo ("^\\" for Ctrl+\\) glued before the signal's name
    texts = _go_sigquit_dump("^\\SIGQUIT: quit", "PC=0x55b049d6ada1 m=0 sigcode=128")
    assert spans(texts) == [(0, 9)]


# -- glibc's malloc abort (malloc/malloc.c malloc_printerr, debug/backtracesyms.c) shifted by a blank ---------

def test_glibc_error_in_report_shifted_by_a_blank_keeps_backtrace_and_memory_map() -> None:
    # rule: TOKENS glibc_err takes one leading blank (a terminal copy), so "glibc_report" holds its sections
    texts = [" *** Error in `/usr/lib64/nagios/plugins/check_http': malloc(): memory corruption (fast): "
             "0x00002b971a2bf4e0 ***",
             "======= Backtrace: =========",
             "/lib64/libc.so.6(+0x7ada4)[0x2b971b5ffda4]",
             "/usr/lib64/nagios/plugins/check_http(+0x93b4)[0x2b971a29a3b4]",
             "/lib64/libc.so.6(__libc_start_main+0xf5)[0x2b971b5a6b35]",
             "======= Memory map: ========",
             "2b971a291000-2b971a2a8000 r-xp 00000000 fd:00 500343                     /usr/lib64/check_http",
             "2b971a2a8000-2b971a2aa000 rw-p 00000000 00:00 0",
             "Aborted (core dumped)"]
    assert spans(texts) == [(0, 7), (8, 8)]


# -- faulthandler's header after pytest's progress letters (terminal.py writes them without a newline) ------

def test_fatal_python_error_glued_to_pytest_progress_letters_is_one_dump() -> None:
    # rule: TOKENS py_fatal takes pytest's unterminated progress letters (".", "F", "E", "s", "x", "X") before it
    for progress in ("........................", "..F.s.x."):
        texts = [f"{progress}Fatal Python error: Aborted",
                 "",
                 "Current thread 0x00007ffff78a3740 (most recent call first):",
                 '  File "/build/source/jax/_src/compiler.py", line 251 in backend_compile',
                 '  File "/build/source/jax/_src/profiler.py", line 314 in wrapper']
        assert spans(texts) == [(0, 4)], progress
        assert kinds(texts) == ["python_fatal"]


# -- Go's log package stamp (log.LstdFlags "2006/01/02 15:04:05 ") before every relayed line -------------

def test_go_log_stamp_on_every_relayed_line_is_a_stream_prefix() -> None:
    # rule: STREAM_PREFIXES golog: a Go launcher that relays a child's lines with log.Print stamps each of
    # them, so the child's warning and traceback are read behind the stamp (each line would be a record of
    # its own if the stamp were read as a logger's head)
    stamp = "2023/10/26 12:12:18 "
    child = ["/usr/lib/python3.8/runpy.py:127: RuntimeWarning: 'x.launch' found in sys.modules",
             "  warn(RuntimeWarning(msg))",
             "Traceback (most recent call last):",
             '  File "/usr/lib/python3.8/runpy.py", line 194, in _run_module_as_main',
             "    return _run_code(code, main_globals, None,",
             '  File "/usr/lib/python3.8/runpy.py", line 87, in _run_code',
             "    exec(code, run_globals)",
             "ValueError: bad root"]
    texts = [stamp + "job-1:292:696 [0] NCCL INFO enqueue.cc:1342 -> 4", *(stamp + t for t in child)]
    assert spans(texts) == [(0, 0), (1, 2), (3, 8)]
    assert kinds(texts)[2] == "python_traceback"


def test_go_log_message_of_several_lines_keeps_its_unstamped_lines() -> None:
    # rule: STREAM_PREFIXES golog is volatile (no key): net/http's "http: panic serving %v: %v\n%s" through
    # log.Printf has the stamp on its first line only, and the goroutine stack under it stays with it
    texts = ["2021/03/04 05:06:07 http: panic serving 10.0.0.1:5555: runtime error: invalid memory address",
             "goroutine 18 [running]:",
             "net/http.(*conn).serve.func1(0xc0001a2000)",
             "\t/usr/local/go/src/net/http/server.go:1801 +0x147",
             "panic(0x6a5f20, 0x8c0e50)",
             "\t/usr/local/go/src/runtime/panic.go:975 +0x47a",
             "2021/03/04 05:06:08 serving on :8080"]
    assert spans(texts) == [(0, 5), (6, 6)]


def test_ucx_signal_line_then_an_empty_line_then_frames_is_one_event() -> None:
    # rule: "ucx" after_blank (ucs_debug_print_source_file's "\n" between the signal line and the backtrace)
    texts = ["[610867610e4b:2498 :0:2599] Caught signal 7 (Bus error: nonexistent physical address)", "",
             *_ucx_backtrace(2599, 3)[1:], "", "Fatal Python error: Bus error"]
    assert spans(texts) == [(0, 4), (6, 6)]
    texts = ["[610867610e4b:2498 :0:2599] Caught signal 7 (Bus error: nonexistent physical address)", "",
             *_ucx_backtrace(2599, 2), "next"]
    assert spans(texts) == [(0, 4), (5, 5)]
