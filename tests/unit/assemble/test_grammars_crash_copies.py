"""Grammars of crash reports as consoles, CI relays and copies into an issue leave them: a sanitizer's
rule under a program's banner, pytest's progress line before faulthandler's header, the Go runtime's
stack words, a console's hard wraps inside a Java stack, backward-cpp's frames, torchrun's box cut
among its fields, a report indented as a whole, Jenkins' time stamps. One test per rule; removing or
loosening the rule makes it fail.
"""

from __future__ import annotations

from devtools.testing.merger import spans


def test_sanitizer_rule_under_a_banner_is_the_reports_not_the_banners_end():
    # rule: MODES table_eq "same_rule" -- a framed table closes at the rule it opened with; compiler-rt's
    # 65-character separator before "==PID==ERROR:" is the report's first line
    texts = ["=" * 43,
             "  Benchmark: ./wfqueue",
             "  Number of processors: 4",
             "=" * 65,
             "==18954==ERROR: AddressSanitizer: heap-use-after-free on address 0x62503173e040 at pc 0x4030f9",
             "READ of size 8 at 0x62503173e040 thread T2",
             "    #0 0x4030f8 in cleanup /src/wfqueue.c:75",
             "    #1 0x40434a in benchmark /src/pairwise.c:52"]
    assert spans(texts) == [(0, 0), (1, 1), (2, 2), (3, 7)]


def test_framed_table_still_closes_at_its_own_rule():
    # rule: MODES table_eq "same_rule" -- the same rule again closes the table (rows held until it comes)
    texts = ["=" * 40, "  Benchmark: ./wfqueue", "  Number of processors: 4", "=" * 40, "done"]
    assert spans(texts) == [(0, 3), (4, 4)]


def test_faulthandler_header_after_pytests_file_and_progress_letter():
    # rule: TOKENS py_fatal -- pytest writes "path " then a letter per test without a newline; the
    # fatal error's header continues that line
    texts = ["test1.py FFatal Python error: Segmentation fault",
             "",
             "Current thread 0x00007f769f034740 (most recent call first):",
             '  File "/usr/lib/python3.7/site-packages/_pytest/faulthandler.py", line 116 in pytest_exception_interact',
             '  File "/usr/lib/python3.7/site-packages/pluggy/callers.py", line 187 in _multicall',
             "collected 3 items"]
    assert spans(texts)[0] == (0, 4)


def test_go_traceback_that_cannot_unwind_keeps_its_stack_words():
    # rule: TOKENS go_bad_pc, go_hexdump_head, go_hexwords, MODES go_stack -- traceback.go's
    # "runtime: unexpected return pc", tracebackHexdump's "stack: frame={...}" and hexdumpWords' lines
    texts = ["fatal error: unexpected signal during runtime execution",
             "[signal SIGSEGV: segmentation violation code=0x1 addr=0xb01dfacedebac1e pc=0x7fff20525c9e]",
             "",
             "runtime stack:",
             "runtime: unexpected return pc for runtime.sigpanic called from 0x7fff20525c9e",
             "stack: frame={sp:0x7ffeefbff348, fp:0x7ffeefbff398} stack=[0x7ffeefb803e8,0x7ffeefbff450)",
             "0x00007ffeefbff248:  0x01007ffeefbff268  0x0000000000000004 ",
             "0x00007ffeefbff278:  0x0000000004038eb1 <runtime.throw+0x0000000000000071>  0x00007ffeefbff318 ",
             "0x00007ffeefbff340: <0x0000000000000001 >0x00007ffeefbff3a8 ",
             "ok  \tgithub.com/x/y\t0.012s"]
    assert spans(texts) == [(0, 8), (9, 9)]


def test_java_frame_hard_wrapped_by_an_80_column_console():
    # rule: TOKENS j_wrap_tail, MODES java_frames "wrap_end" -- a frame printStackTrace wrote ends with ')':
    # the rest of a wrapped one comes at column 0 on the next line
    texts = ["Caused by: java.net.ConnectException: Connection refused: connect",
             "        at java.net.DualStackPlainSocketImpl.connect0(Native Method)",
             "        at java.net.DualStackPlainSocketImpl.socketConnect(DualStackPlainSocketI",
             "mpl.java:79)",
             "        at sun.security.ssl.BaseSSLSocketImpl.connect(BaseSSLSocketImpl.java:173",
             ")",
             "        at java.net.Socket.connect(Socket.java:589)",
             "done."]
    assert spans(texts) == [(0, 6), (7, 7)]


def test_text_after_a_whole_java_frame_is_not_its_wrap():
    # rule: MODES java_frames "wrap_end" -- after a frame that ends with ')' the tail shape is a line of its own
    texts = ["java.lang.IllegalStateException: closed",
             "\tat a.B.c(B.java:10)",
             "retry)"]
    assert spans(texts) == [(0, 1), (2, 2)]


def test_backward_cpp_frames_and_the_psiginfo_line_of_its_handler():
    # rules: TOKENS bwd_head, bwd_frame, bwd_inline, bwd_snippet, bwd_siginfo, MODES backward --
    # backward-cpp's print_trace, then psiginfo() from its signal handler; the shell's line is its own
    texts = ["Stack trace (most recent call last):",
             '#2    Object "/usr/lib/x86_64-linux-gnu/libstdc++.so.6.0.28", at 0x7faf2b0773e6, in std::terminate()',
             '#1    Source "/build/glibc-B3wQXB/glibc-2.31/stdlib/abort.c", line 79, in abort [0x7faf2ade0858]',
             "         76:   abort ();",
             '    | Source "../sysdeps/unix/sysv/linux/raise.c", line 51, in raise',
             '#0    Source "../sysdeps/unix/sysv/linux/raise.c", line 51, in raise [0x7faf2ae0100b]',
             "Aborted (Signal sent by tkill() 1733323 1000)",
             "Aborted (core dumped)"]
    assert spans(texts) == [(0, 6), (7, 7)]


def test_backward_cpp_frames_without_their_header():
    # rule: STARTS bwd_frame -- an excerpt that starts at a frame; psiginfo's SIGSEGV detail ends it
    texts = ['#1    Object "/opt/app/bin/mapper", at 0x55d0c2a1b2c3, in main',
             '#0    Object "/opt/app/lib/libslam.so", at 0x7f0c1a2b3c4d, in Map::insert(int)',
             "Segmentation fault (Address not mapped to object [0x8])",
             "Segmentation fault (core dumped)"]
    assert spans(texts) == [(0, 2), (3, 3)]


def test_torchrun_box_cut_among_the_root_causes_fields():
    # rules: TOKENS box_field, STARTS box_field -- _FAILURE_FORMAT_TEMPLATE's fields, held until the box's
    # closing '=' rule confirms them
    texts = ["  time      : 2025-12-23_05:17:58",
             "  host      : node-232",
             "  rank      : 0 (local_rank: 0)",
             "  exitcode  : -11 (pid: 3304209)",
             "  error_file: <N/A>",
             "  traceback : Signal 11 (SIGSEGV) received by PID 3304209",
             "=" * 60,
             "srun: error: node-232: task 0: Exited with exit code 1"]
    assert spans(texts) == [(0, 6), (7, 7)]


def test_box_fields_without_the_closing_rule_are_lines_of_their_own():
    # rule: MODES py_box_cut "any" tent -- without the rule the held fields are read again on their own
    texts = ["  time      : 2025-12-23_05:17:58", "  host      : node-232", "Epoch 3 done"]
    assert spans(texts) == [(0, 0), (1, 1), (2, 2)]


def test_go_panic_pasted_as_an_indented_block():
    # rule: COLUMN0_STARTS_RE -- the runtime writes "panic: " at column 0: four blanks before it are the
    # copy's, before every line
    texts = ["    panic: runtime error: invalid memory address or nil pointer dereference",
             "    [signal SIGSEGV: segmentation violation code=0x1 addr=0x0 pc=0x4d5131]",
             "",
             "    goroutine 1021 [running]:",
             "    panic(0x73eaa0, 0xc4200100f0)",
             "              /usr/local/go/src/runtime/panic.go:500 +0x1a1",
             "    xd/lib/swarm.(*PeerConn).runReader(0xc4200fb6b0)",
             "              /home/m/go/src/xd/lib/swarm/peer.go:215 +0x9d1",
             "    created by xd/lib/swarm.(*PeerConn).start",
             "              /home/m/go/src/xd/lib/swarm/peer.go:68 +0x61",
             "exit status 2"]
    assert spans(texts) == [(0, 9), (10, 10)]


def test_jenkins_timestamper_time_before_every_line_of_a_java_stack():
    # rule: STREAM_PREFIXES timestamper -- "HH:mm:ss  " before every line is the relay's, the stack is read
    # behind it
    texts = ["21:58:55  java.lang.NullPointerException",
             "21:58:55  \tat com.x.log.ThreadLogAppender.append(ThreadLogAppender.java:80)",
             "21:58:55  \tat org.apache.log4j.AppenderSkeleton.doAppend(AppenderSkeleton.java:251)",
             "21:58:56  [INFO] BUILD FAILURE"]
    assert spans(texts) == [(0, 2), (3, 3)]


def test_a_kernel_drivers_line_after_an_exception_ends_its_message():
    # rule: RECORDS kernel_driver -- NVRM's "NVRM: Xid ..." and dev_printk's "<driver> <PCI address>: " are the
    # kernel's records (dmesg -t, a journal), not more lines of the exception's message above them
    texts = ["Traceback (most recent call last):",
             '  File "train.py", line 10, in <module>',
             "    main()",
             "jaxlib.xla_extension.XlaRuntimeError: INTERNAL: custom call 'xla.gpu.all_reduce' failed.",
             "NVRM: Xid (PCI:0000:3b:00): 79, pid=1234, name=python, GPU has fallen off the bus.",
             "mlx5_core 0000:3b:00.0: mlx5_cmd_out_err:838:(pid 1234): QUERY_VPORT_COUNTER failed",
             "nvidia-nvswitch0: SXid (PCI:0000:05:00.0): 20034, Fatal, Link 30 LTSSM Fault Up"]
    assert spans(texts) == [(0, 3), (4, 4), (5, 5), (6, 6)]
