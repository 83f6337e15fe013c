"""Registry of this worker's corpus/wild excerpts: where each comes from and its hand-checked events.

Each entry: name, repo, commit, path, start, end (1-based inclusive lines of the source file),
license, notes, events (first/last or lines, kind). See wild_sys.py.
"""


def ev(first, last, kind):
    return {"first": first, "last": last, "kind": kind}


def lines_ev(nums, kind):
    return {"lines": sorted(nums), "kind": kind}


APACHE = "Apache-2.0"
SYZ = dict(repo="google/syzkaller", commit="1e72964b0111319984575e60f266d1fa0a98abb5", license=APACHE)
CF = dict(repo="google/clusterfuzz", commit="77584976329599df63bf3a0404fde0d1572e3712", license=APACHE)
CF_DIR = "src/clusterfuzz/_internal/tests/core/crash_analysis/stack_parsing/stack_analyzer_data/"
GV = "pkg/report/testdata/gvisor/report/"

ENTRIES = [
    dict(SYZ, name="gvisor_runsc_nil_deref_panic_two_goroutines_fp_sp_pc", path=GV + "0", start=7, end=78,
         notes="gVisor runsc (Go, 2018, GOTRACEBACK=system style frames with fp=/sp=/pc=) console output captured by "
               "syzkaller: 'panic: runtime error: invalid memory address' + [signal SIGSEGV] line, the running goroutine "
               "with 'created by', then 'goroutine 1 [semacquire, 23 minutes]:' through its last frame. One panic dump "
               "(the test file's TITLE/TYPE header, syz program lines and REPORT: section are outside the excerpt).",
         events=[ev(1, 72, "go_panic")]),
    dict(SYZ, name="gvisor_runsc_debug_lines_then_ptrace_panic", path=GV + "2", start=5, end=37,
         notes="gVisor runsc console: 2 glog-style 'D1212 ...' debug lines, then 'panic: ptrace set regs (&{...' with the "
               "running goroutine (+ 'created by') and goroutine 1's stack. Excerpt stops before syzkaller's REPORT: section.",
         events=[ev(3, 33, "go_panic")]),
    dict(SYZ, name="gvisor_runsc_go_race_detector_data_race_report", path=GV + "6", start=6, end=107,
         notes="Go race detector report from gVisor runsc (race build): '==================' / 'WARNING: DATA RACE' / "
               "Read at ... by goroutine / Previous write / 'Goroutine N (running) created at:' sections with "
               "2-space function and 6-space file lines, closed by '=================='. One event.",
         events=[ev(1, 102, "go_race")]),
    dict(SYZ, name="gvisor_runsc_sigsegv_runtime_crash_no_panic_line", path=GV + "12", start=3, end=18,
         notes="Go runtime crash from an unhandled signal in gVisor's KVM platform: 'SIGSEGV: segmentation violation', "
               "'PC=... m=79 sigcode=128', blank, 'goroutine 81531 [syscall, locked to thread]:' frames with fp/sp/pc, "
               "runtime.goexit and 'created by'. One event.",
         events=[ev(1, 16, "go_panic")]),
    dict(SYZ, name="gvisor_runsc_warning_record_with_goroutine_stack", path=GV + "15", start=3, end=26,
         notes="gVisor log.Traceback: one W-level glog-style record ('W0627 10:46:34.954366   26638 x:0] Invalid request "
               "partialResult ...') whose message is followed by the current goroutine's stack (goroutine header, "
               "function + tab-indented file lines, 'created by'). One event.",
         events=[ev(1, 24, "go_stack")]),
    dict(SYZ, name="gvisor_runsc_fatal_error_newosproc_then_glog_lines", path=GV + "21", start=4, end=11,
         notes="Go runtime 'runtime: failed to create new OS thread' + 'runtime: may need to increase max user processes' + "
               "'fatal error: newosproc' (the stack that would follow is missing from the capture); then a syzkaller "
               "'executing program' line and runsc W/I glog-style lines; the FATAL ERROR message is logged and then "
               "printed again plainly to stderr (separate writes, separate events).",
         events=[ev(1, 3, "go_panic")]),

    # --- Linux kernel console reports captured by syzkaller (syzbot), kernel 4.15-4.16 on GCE VMs
    dict(SYZ, name="linux_kernel_hung_task_blocked_120s_call_trace", path="pkg/report/testdata/linux/report/179",
         start=7, end=116,
         notes="Linux 4.15.0-rc7-next kernel console (dmesg timestamps on every line): 'INFO: task syz-executor4:8442 "
               "blocked for more than 120 seconds.', taint line, hung_task_timeout_secs hint, task state line, 'Call "
               "Trace:' with '?'-marked frames, RIP/RSP/register lines. One hung-task report (each line is its own "
               "printk record; the report is one event).",
         events=[ev(1, 110, "kernel_report")]),
    dict(SYZ, name="linux_kernel_warning_panic_on_warn_interleaved_binder_lines", path="pkg/report/testdata/linux/report/141",
         start=5, end=101,
         notes="Linux 4.15.0-rc4-mm1 console: 'WARNING: CPU: 1 PID: 21961 at arch/x86/kvm/x86.c:7377 ...', 'Kernel panic - "
               "not syncing: panic_on_warn set ...', CPU/Hardware lines, 'Call Trace:' -- then 14 binder/SELinux printk "
               "lines from other tasks land inside the trace before the frames continue (dump_stack, panic, __warn, ...), "
               "registers, the user-space RIP, 'Dumping ftrace buffer:', 'Kernel Offset: disabled', 'Rebooting in 86400 "
               "seconds..'. The report is one event with the interleaved lines excluded (lines list); each interleaved "
               "line is its own event.",
         events=[lines_ev(list(range(1, 7)) + list(range(21, 98)), "kernel_report")]),
    dict(SYZ, name="linux_kernel_kasan_use_after_free_rdma_listen", path="pkg/report/testdata/linux/report/226",
         start=5, end=123,
         notes="Linux 4.16.0-rc7 KASAN report between '=====...' rules: 'BUG: KASAN: use-after-free in __list_add_valid' "
               "(reached from rdma_listen/ucma_write, the RDMA CM path), Call Trace, 'Allocated by task' / 'Freed by task' "
               "stacks, object/page description and the shadow-memory dump with its '^' marker line. Timestamped empty "
               "printk lines separate the sections. One event.",
         events=[ev(1, 119, "kernel_report")]),
    # --- ClusterFuzz crash-log fixtures (real fuzzer/browser output stored for the stack analyzer's tests)
    dict(CF, name="chromium_lsan_two_leak_reports_suppressions_and_log_lines", path=CF_DIR + "lsan_direct_leak.txt",
         start=1, end=64,
         notes="Chromium (ASan build) stderr from ClusterFuzz: [pid:tid:date:ERROR:file(line)] chrome log lines, two "
               "LeakSanitizer reports from two processes ('=====' rule, '==3236==ERROR: LeakSanitizer: detected memory "
               "leaks', leak stacks, the 'Suppressions used:' table, 'SUMMARY:'), a 2-line LOG(ERROR) record ('NaCl helper "
               "process running without a sandbox!' + 'Most likely you need to configure your SUID sandbox correctly') "
               "and a third process's standalone 'Suppressions used:' table. Frame numbers restart (#20 twice) as printed.",
         events=[ev(7, 20, "cpp_frames"), ev(22, 57, "cpp_frames"), ev(58, 59, "multiline"), ev(60, 64, "table")]),
    dict(CF, name="chromium_tsan_data_race_after_symbolizer_errors", path=CF_DIR + "tsan_data_race.txt",
         start=1, end=224,
         notes="Chromium TSan build: a chrome ERROR line, llvm-symbolizer's GLIBCXX errors alternating with "
               "'==18457==WARNING: Cant read from symbolizer' lines, then one ThreadSanitizer data race report from "
               "'==================' to '==================' (Write/Previous write stacks, Location, Mutex and Thread "
               "creation sections separated by blank lines, SUMMARY).",
         events=[ev(12, 224, "cpp_frames")]),
    dict(CF, name="jazzer_java_exception_caused_by_chain_after_libfuzzer_lines", path=CF_DIR + "java_severity_medium_exception.txt",
         start=1, end=81,
         notes="Jazzer (Java libFuzzer) run on OSS-Fuzz/ClusterFuzz: INFO lines, '#N<TAB>NEW/REDUCE cov: ...' status lines, "
               "then '== Java Exception: com.code_intelligence.jazzer.api.FuzzerSecurityIssueMedium: ...' with tab-indented "
               "'at' frames, two 'Caused by:' sections and '... 4 more' (one java_stack event), then DEDUP_TOKEN and the "
               "'== libFuzzer crashing input ==' lines. The file has no final newline.",
         events=[ev(56, 73, "java_stack")]),
    dict(CF, name="gdb_sigtrap_backtrace_embedded_firmware", path=CF_DIR + "gdb_sigtrap.txt", start=1, end=11,
         notes="gdb session output: stop location line, 'Program received signal SIGTRAP, Trace/breakpoint trap.', the "
               "frame line, then a 'bt' backtrace #0-#6 with argument lists and 'at file:line' (one gdb_bt event).",
         events=[ev(5, 11, "gdb_bt")]),
    dict(CF, name="absl_log_fatal_check_failure_stack_then_asan_abrt", path=CF_DIR + "absl_log_internal.txt",
         start=5, end=39,
         notes="Honggfuzz-driven C++ fuzzer with Abseil logging: 4 startup lines, an 'F1110 15:37:25.280898 2384071 "
               "...cc:220] INTERNAL: Found a difference' LOG(FATAL) record with '=== Source Location Trace: ===', "
               "'*** Check failure stack trace: ***' and '    @     0x...' frames (one event), then the ASan ABRT report "
               "('AddressSanitizer:DEADLYSIGNAL', '=====' rule, '==2384071==ERROR: ...', frames, SUMMARY, '==2384071==ABORTING'). "
               "The file's first 4 lines (ClusterFuzz's environment/UI header) are left out.",
         events=[ev(5, 16, "cpp_frames"), ev(17, 35, "cpp_frames")]),
    dict(CF, name="rust_libfuzzer_panic_message_then_asan_abrt_report", path=CF_DIR + "rust_assert.txt", start=1, end=29,
         notes="Rust fuzz target (libra, rustc 2020, old 'panicked at '<msg>', file:line:col' format): 'Running:' line, "
               "\"thread '<unnamed>' panicked at ...\" + 'note: run with `RUST_BACKTRACE=1`...' (one rust_panic), then "
               "libfuzzer-sys aborts and ASan prints its ABRT report with Rust-mangled frames (one cpp_frames event).",
         events=[ev(2, 3, "rust_panic"), ev(4, 29, "cpp_frames")]),
    dict(CF, name="chromium_ubsan_index_out_of_bounds_report", path=CF_DIR + "ubsan_index_oob.txt", start=1, end=38,
         notes="Chromium PDF plugin (pdfium) UBSan build: a spliced chrome log line, 2 Xlib lines, then "
               "'...cpp:298:3: runtime error: index 256 out of bounds for type uint8_t [256]' with its #0-#32 stack and "
               "'SUMMARY: UndefinedBehaviorSanitizer: ...' (one event).",
         events=[ev(4, 38, "cpp_frames")]),

    # --- GitHub issue excerpts (cut with issue_cut_sys.py from the search tool's stored issue text)
    dict(url="https://github.com/NVIDIA/NVSentinel/issues/155", name="nvidia_driver_dmesg_gpu_fallen_off_bus_multiline_nvrm",
         license="GitHub issue text, quoted for testing",
         notes="dmesg from an on-prem GPU node (NVIDIA open kernel module 570.158.01): one NVRM printk whose message holds 2 "
               "newlines, which dmesg shows as 2 continuation lines indented to the message column ('The NVIDIA GPU "
               "0000:b3:00.0' / '(PCI ID: 10de:26b5) installed in this system has' / 'fallen off the bus and is not "
               "responding to commands.'), then 2 single NVRM lines. Excerpt = the issue's code block.",
         events=[ev(1, 3, "kernel_record")]),
    dict(url="https://github.com/leptonai/gpud/pull/1209", name="journald_gpu_node_boot_systemd_and_kernel_lines",
         license="GitHub issue text, quoted for testing",
         notes="'journalctl -k' style lines from a GPU node boot (systemd units, mlx5_core link state, workqueue hog warning, "
               "EXT4 remount), all single-line journal entries. The command line above them and the cut-off last line of "
               "the stored excerpt are left out.",
         events=[]),
    dict(url="https://github.com/facebookincubator/submitit/issues/1708", name="slurm_submitit_preempted_requeue_slurmstepd_srun_errors",
         license="GitHub issue text, quoted for testing",
         notes="Slurm job stderr on a 4-GPU node: submitit WARNING lines (SIGUSR2 preemption, bypassed signals), slurmstepd "
               "'*** JOB/STEP ... CANCELLED AT ... DUE TO JOB REQUEUE ***' and MESSAGE_TASK_EXIT errors, srun exit-code line. "
               "All single-line events. SERVER_NAME is the reporter's own redaction.",
         events=[]),
    dict(url="https://github.com/desihub/desitarget/issues/628", name="slurm_srun_step_cancelled_time_limit_tasks_terminated",
         license="GitHub issue text, quoted for testing",
         notes="srun/slurmstepd output on NERSC (Cray, 2 nodes x 8 tasks) when the step hits its time limit: Force "
               "Terminated, step aborted, '*** STEP ... CANCELLED AT ... DUE TO TIME LIMIT ***', per-node 'tasks ...: "
               "Terminated' lines. All single-line events (pasted as plain text in the issue, not in a code block).",
         events=[]),

    dict(url="https://github.com/ControlSystemStudio/phoebus/issues/1174", name="kafka_logmanager_cleanup_trace_tail_with_suppressed_nosuchfile",
         license="GitHub issue text, quoted for testing",
         notes="Tail of a Kafka broker (Scala, Java 11) exception from LogManager.cleanupLogs: tab-indented 'at' frames, "
               "then a tab-indented 'Suppressed: java.nio.file.NoSuchFileException: ...' with double-tab frames. The stored "
               "excerpt starts inside the trace (its header is not in the excerpt) and its cut-off last line is left out; "
               "the 16 lines are one java_stack event.",
         events=[ev(1, 16, "java_stack")]),
    dict(url="https://github.com/getsentry/self-hosted/issues/3133", name="kafka_docker_startup_log4j_record_with_embedded_newline",
         license="GitHub issue text, quoted for testing",
         notes="Confluent Kafka container start (Sentry self-hosted, 2024): the image's '===> Launching kafka ... ' line, "
               "then log4j '[yyyy-MM-dd HH:mm:ss,SSS] LEVEL msg (logger)' records; the KafkaZkClient 'Stat of the created "
               "znode ... is: <stat>' record carries a newline from Stat.toString(), so its ' (kafka.zk.KafkaZkClient)' "
               "tail sits on the next line (one 2-line event).",
         events=[ev(7, 8, "multiline")]),
    dict(url="https://github.com/ldaniels528/trifecta/issues/24", name="kafka_client_log4j_noappender_warnings_then_scala_exception",
         license="GitHub issue text, quoted for testing",
         notes="Trifecta 0.20 (Scala Kafka client tool): banner line, 3 'log4j:WARN' lines, then an uncaught "
               "KafkaMicroConsumer$VxKafkaException whose frames are indented with 8 spaces (tabs expanded in the paste). "
               "The excerpt's cut-off frame is left out; exception line + 5 frames = one java_stack event.",
         events=[ev(5, 10, "java_stack")]),
    dict(url='https://github.com/goharbor/harbor/issues/3864', name='dockerd_syslog_fatal_error_concurrent_map_writes_no_tabs', license='GitHub issue text, quoted for testing',
         notes="dockerd (Docker 17.x built with Go 1.8) crash in syslog: every line prefixed 'Dec 25 17:17:45 registry dockerd: '; 'fatal error: concurrent map writes', 'goroutine 12334 [running]:', function lines and file lines (fp=/sp=) whose leading tab the syslog daemon dropped. The excerpt's cut-off last line is left out; 10 lines = one go_panic event.",
         events=[{'first': 1, 'last': 10, 'kind': 'go_panic'}]),
    dict(url='https://github.com/moby/moby/issues/36814', name='dockerd_rsyslog_goroutine_dump_tail_hash011_escaped_tabs', license='GitHub issue text, quoted for testing',
         notes="Middle of a dockerd 17.12 'concurrent map read and map write' goroutine dump as written by rsyslog, which escapes the frames' leading tab as '#011'; goroutine headers with wait reasons ('[select, 1507 minutes]'), 'created by' lines. The excerpt starts and ends inside the dump (cut-off last line left out); all 11 lines belong to the one go_panic dump.",
         events=[{'first': 1, 'last': 11, 'kind': 'go_panic'}]),
    dict(url='https://github.com/docker/for-linux/issues/1294', name='dockerd_journald_goroutine_dump_middle_created_by', license='GitHub issue text, quoted for testing',
         notes="Middle of a dockerd 'concurrent map writes' goroutine dump from journalctl (journald prefix on every line, the tab before file lines shown as spaces): goroutines 48 and 25 with 'created by' lines. Starts and ends inside the dump; one go_panic event.",
         events=[{'first': 1, 'last': 10, 'kind': 'go_panic'}]),
    dict(url='https://github.com/moby/moby/issues/32893', name='docker_daemon_rsyslog_concurrent_map_read_write_fatal_error', license='GitHub issue text, quoted for testing',
         notes="docker daemon (Go 1.7) 'fatal error: concurrent map read and map write' via rsyslog: 'goroutine 6679787 [running]:', runtime.throw/mapaccess2_faststr frames, file lines escaped '#011' with fp=/sp=. The excerpt's cut-off last line is left out; one go_panic event.",
         events=[{'first': 1, 'last': 10, 'kind': 'go_panic'}]),
    dict(url='https://github.com/containerd/containerd/issues/8742', name='containerd_journald_concurrent_map_writes_frames_fp_sp_pc', license='GitHub issue text, quoted for testing',
         notes="containerd 1.6-era 'fatal error: concurrent map writes' dump in journald: gRPC middleware / CRI PullImage handler frames with Go 1.18+ '{0x...?, 0x...?}' argument lists and fp=/sp=/pc= file lines. Middle of the dump only; one go_panic event.",
         events=[{'first': 1, 'last': 6, 'kind': 'go_panic'}]),
    dict(url='https://github.com/moby/moby/issues/42422', name='dockerd_goroutine_dump_middle_io_wait_raw_tabs', license='GitHub issue text, quoted for testing',
         notes="Middle of a dockerd goroutine dump pasted raw (real tabs before file lines): the last file line of one goroutine, a blank line, then 'goroutine 80 [IO wait, 3550 minutes]:' with its frames ('(...)' elided args). Starts and ends inside the dump; one go_panic event (the blank line is inside it).",
         events=[{'first': 1, 'last': 23, 'kind': 'go_panic'}]),
    dict(url='https://github.com/moby/moby/issues/34540', name='dockerd_syslog_logrus_key_value_lines', license='GitHub issue text, quoted for testing',
         notes='dockerd 17.x logrus text lines in syslog: \'time="..." level=info|warning|error msg="..."\'. All single-line events.',
         events=[]),
    dict(url='https://github.com/machineonamission/uwd2/issues/12', name='rust_windows_panic_option_unwrap_none_three_lines', license='GitHub issue text, quoted for testing',
         notes='Rust 1.73+ panic on Windows (path with a backslash): "thread \'main\' panicked at src\\\\explorer_modinfo.rs:45:14:", the message on its own line, and the RUST_BACKTRACE note: one rust_panic event.',
         events=[{'first': 1, 'last': 3, 'kind': 'rust_panic'}]),
    dict(url='https://github.com/rust-lang/rust/issues/58554', name='rust_panic_short_backtrace_begin_panic_frames', license='GitHub issue text, quoted for testing',
         notes='Rust nightly (2020) panic with RUST_BACKTRACE=1: old-style "thread \'main\' panicked at \'explicit panic\', src/main.rs:2:5", \'stack backtrace:\', numbered frames each followed by an indented \'at file:line:col\' line. One rust_panic event.',
         events=[{'first': 1, 'last': 8, 'kind': 'rust_panic'}]),
    dict(url='https://github.com/trueagi-io/hyperon-experimental/pull/1001', name='rust_full_backtrace_middle_addresses_and_at_lines', license='GitHub issue text, quoted for testing',
         notes="Middle of a RUST_BACKTRACE=full backtrace (Rust ~1.80): '  50:     0x56242eb9ca54 - metta_repl::main::h...' frame lines with addresses and hashes, each followed by a deeply indented 'at path:line:col'. Starts and ends inside the backtrace (the stored excerpt's cut-off last line left out); one rust_panic event.",
         events=[{'first': 1, 'last': 11, 'kind': 'rust_panic'}]),
    dict(url='https://github.com/servo/servo/pull/9721', name='servo_mach_boxdrawn_old_rust_backtraces_tail_and_new', license='GitHub issue text, quoted for testing',
         notes="Servo build-bot output (Rust 2016 nightly, macOS) as shown through a tree prefix '  │ ' on every line: the last 3 frames of one backtrace, then a new 'stack backtrace:' with frames 1-15 in the pre-1.0-style '   N:        0xADDR - symbol' format. Two rust_panic events (the panic-message lines are not in the excerpt); the cut-off '16:' line is left out.",
         events=[{'first': 1, 'last': 3, 'kind': 'rust_panic'}, {'first': 4, 'last': 19, 'kind': 'rust_panic'}]),
    dict(url='https://github.com/NatLabRockies/Spawn/issues/44', name='glibc_double_free_backtrace_and_memory_map_energyplus', license='GitHub issue text, quoted for testing',
         notes='glibc (2.17, CentOS 7) malloc check abort in Spawn/EnergyPlus: "*** Error in \'./spawn\': double free or corruption (!prev): 0x... ***", \'======= Backtrace: =========\' with backtrace_symbols frames, \'======= Memory map: ========\' with /proc/self/maps lines. The stored excerpt\'s cut-off last map line is left out; the 14 lines are one cpp_frames event.',
         events=[{'first': 1, 'last': 14, 'kind': 'cpp_frames'}]),
    dict(url='https://github.com/Atoptool/atop/issues/312', name='gdb_core_atop_sigabrt_session_and_bt', license='GitHub issue text, quoted for testing',
         notes="gdb on an atop 2.7.1 core (glibc 2.34+ __pthread_kill_implementation): startup lines, 'Core was generated by', 'Program terminated with signal SIGABRT, Aborted.', the current frame line + its tab-separated source line (one 2-line gdb_stop event), '(gdb) bt' and frames #0-#3 (one gdb_bt; the excerpt's cut-off #4 is left out).",
         events=[{'first': 10, 'last': 11, 'kind': 'gdb_stop'}, {'first': 13, 'last': 16, 'kind': 'gdb_bt'}]),
    dict(url='https://github.com/benoitc/http-parser/issues/39', name='glibc_detected_double_free_python_backtrace_markdown_escaped', license='GitHub issue text, quoted for testing',
         notes="Old glibc (i386) '*** glibc detected *** /usr/bin/python: double free or corruption (out)' + '======= Backtrace: =========' frames from Python 2.7 and a C extension. The issue pasted it as Markdown text, so the first line's '***' markers read '**' + backslash + '*' (the reporter's escaping, kept as stored). The cut-off last frame is left out; one cpp_frames event.",
         events=[{'first': 1, 'last': 30, 'kind': 'cpp_frames'}]),
    dict(url='https://github.com/neomutt/neomutt/issues/3854', name='systemd_coredumpctl_info_stack_trace_neomutt', license='GitHub issue text, quoted for testing',
         notes="systemd-coredump report printed by 'coredumpctl gdb' (Arch, 2023): the shell command line, then aligned 'Field: value' lines (PID ... Message), a blank line, 'Stack trace of thread 2150:' and indented '#N  0xADDR symbol (lib + off)' frames. The report is one event; the excerpt's cut-off frame #7 is left out.",
         events=[{'first': 2, 'last': 28, 'kind': 'coredump_info'}]),
    dict(url='https://github.com/kubernetes/kubernetes/issues/84850', name='kube_apiserver_klog_startup_controllers_tls_handshake_errors', license='GitHub issue text, quoted for testing',
         notes="kube-apiserver (1.16-era) klog lines 'I1106 15:09:33.284332      12 file.go:N] msg': controller start-up and 'http: TLS handshake error ... EOF' lines. All single-line events; the excerpt's cut-off last line is left out.",
         events=[]),
    dict(url='https://github.com/kubernetes/kubernetes/issues/103425', name='etcd_capnslog_health_ok_and_wal_segment_lines', license='GitHub issue text, quoted for testing',
         notes="etcd 3.4 capnslog lines '2021-07-01 21:23:08.118743 I | etcdserver/api/etcdhttp: /health OK (status code 200)' and a wal segment line. All single-line events.",
         events=[]),
    dict(url='https://github.com/kubernetes/kubernetes/issues/68172', name='k8s_extension_apiserver_etcd3_compactor_index_out_of_range_panic', license='GitHub issue text, quoted for testing',
         notes="Kubernetes extension apiserver (k8s.io/apiserver, 2018) crash: 'panic: runtime error: index out of range', blank, 'goroutine 42 [running]:', function lines with tab-indented file lines, 'created by' + its file line. One go_panic event.",
         events=[{'first': 1, 'last': 9, 'kind': 'go_panic'}]),
    dict(url='https://github.com/kubernetes/kubernetes/issues/88779', name='kubelet_journald_observed_a_panic_bounds_error_grep_lines', license='GitHub issue text, quoted for testing',
         notes="kubelet (1.18-era, kind node) journald lines found by grep: 'E0303 ... runtime.go:78] Observed a panic: runtime.boundsError{...} (runtime error: index out of range [1] with length 1)' from two kubelet PIDs. Each line is its own event (grep kept only the first line of each HandleCrash record); the excerpt's cut-off line is left out.",
         events=[]),
    dict(url='https://github.com/d2iq-archive/kubernetes-mesos/issues/77', name='kubelet_mesos_executor_go13_panic_spaces_indented_frames', license='GitHub issue text, quoted for testing',
         notes="kubernetes-mesos executor (Go 1.3, 2014): a glog 'I1115 ... log.go:151] GET /podInfo...' line, then 'panic: runtime error: index out of range', blank, 'goroutine 513 [running]:', runtime.panic and frames whose file lines are indented with 8 spaces (tab expanded in the paste), func·001 names. The excerpt's cut-off last file line is left out.",
         events=[{'first': 2, 'last': 15, 'kind': 'go_panic'}]),
    dict(url='https://github.com/coroot/coroot/issues/59', name='coroot_klog_lines_then_index_out_of_range_panic', license='GitHub issue text, quoted for testing',
         notes="coroot 0.17 pod stdout: 6 klog-format info lines, then 'panic: runtime error: index out of range [1] with length 1', blank, 'goroutine 40 [running]:' with Go 1.18+ '0xfad3bc?' argument notation and tab-indented file lines (cut by the excerpt after the first frame).",
         events=[{'first': 7, 'last': 11, 'kind': 'go_panic'}]),
    dict(url='https://github.com/kubernetes/kubernetes/issues/6982', name='kube_apiserver_2015_klog_recover_from_panic_caller_list', license='GitHub issue text, quoted for testing',
         notes="kube-apiserver (April 2015): one glog record 'E0417 15:22:34.410713       1 master.go:357] recover from panic situation: - runtime error: invalid memory address or nil pointer dereference' whose message continues with the caller list, one 4-space-indented 'file:line' per line (early util.HandleCrash format). One event; the cut-off last caller is left out.",
         events=[{'first': 1, 'last': 11, 'kind': 'go_stack'}]),
    dict(url='https://github.com/elastic/elasticsearch/pull/6581', name='elasticsearch_1x_debug_bootstrap_exception_node_lock', license='GitHub issue text, quoted for testing',
         notes="Elasticsearch 1.x log4j 1 record '[2014-06-20 14:48:00,502][DEBUG][bootstrap                ] Exception' followed by ElasticsearchIllegalStateException (Failed to obtain node lock) and 4-space-indented 'at' frames. One java_stack event.",
         events=[{'first': 1, 'last': 8, 'kind': 'java_stack'}]),
    dict(url='https://github.com/pelias/docker/issues/73', name='elasticsearch_compose_prefixed_jvm_warnings_startup_exception', license='GitHub issue text, quoted for testing',
         notes="docker-compose output of an Elasticsearch 5.6.12 container: every line prefixed 'elasticsearch_1  | '; 3 OpenJDK ParallelGCThreads warnings, an INFO line, then the WARN 'uncaught exception in thread [main]' record with StartupException and frames (tab shown as spaces, '~[jar:version]' suffixes). The cut-off last frame is left out; record + exception + 2 frames = one java_stack event.",
         events=[{'first': 5, 'last': 8, 'kind': 'java_stack'}]),
    dict(url='https://github.com/xie-chong/interview-learn/issues/16', name='elasticsearch_7_run_as_root_startup_exception_caused_by', license='GitHub issue text, quoted for testing',
         notes="Elasticsearch 7.6.2 started as root: OpenJDK deprecation warning, then '[...][ERROR][o.e.b.ElasticsearchUncaughtExceptionHandler] [node-1] uncaught exception in thread [main]' with StartupException, tab-indented frames with jar versions and 'Caused by: java.lang.RuntimeException: can not run elasticsearch as root' + its first frame (the rest is cut off in the stored excerpt). The shell prompt line above it (quoted with '>' in the issue) is left out.",
         events=[{'first': 2, 'last': 12, 'kind': 'java_stack'}]),
    dict(url='https://github.com/marco-lancini/docker_offensive_elk/issues/1', name='elasticsearch_compose_prefixed_trace_middle_nio_createdirectory', license='GitHub issue text, quoted for testing',
         notes="Middle of an Elasticsearch 6.3.0 startup exception in docker-compose output ('elk_elasticsearch |     at ...' frames with '~[?:?]' and jar suffixes): java.nio Files.createDirectories up to Bootstrap.setup. Starts and ends inside the trace; one java_stack event.",
         events=[{'first': 1, 'last': 12, 'kind': 'java_stack'}]),
    dict(url='https://github.com/citiususc/SparkBWA/issues/14', name='spark_yarn_client_report_tail_then_sparkcontext_init_error', license='GitHub issue text, quoted for testing',
         notes="Spark 1.6 on YARN client mode: the tail of a yarn.Client application-report record (diagnostics lines 'Container killed on request. Exit code is 143' ... and tab-indented 'ApplicationMaster host' / 'queue' / 'final status' / 'user' fields; the record's header line is above the stored excerpt), then the log4j 'yy/MM/dd HH:mm:ss ERROR spark.SparkContext: Error initializing SparkContext.' record with SparkException and tab frames (the cut-off last frame is left out).",
         events=[{'first': 1, 'last': 10, 'kind': 'multiline'}, {'first': 11, 'last': 22, 'kind': 'java_stack'}]),
    dict(url='https://github.com/yahoo/TensorFlowOnSpark/issues/478', name='spark_yarn_client_application_report_embeds_container_stderr_lines', license='GitHub issue text, quoted for testing',
         notes="Spark 2.4 / Hadoop 3 yarn.Client: two 'Application report ... (state: ...)' lines, then one report record ('INFO yarn.Client: ' + newline + 9-space-indented 'client token' / 'diagnostics' fields). The diagnostics value spans lines and quotes the AM container's prelaunch.err/stderr, so timestamped log4j lines from the container appear INSIDE this record (they are part of its message). The stored excerpt ends inside the record (cut-off line left out), so lines 3-18 are one event.",
         events=[{'first': 3, 'last': 18, 'kind': 'multiline'}]),
    dict(url='https://github.com/JanusGraph/janusgraph/issues/1357', name='spark_yarn_scheduler_container_failed_diagnostics_with_stack', license='GitHub issue text, quoted for testing',
         notes="JanusGraph/Spark on YARN (log4j 'HH:mm:ss WARN  logger  - msg' layout): one WARN record 'Container marked as failed ... Diagnostics: Exception from container-launch.' whose message continues with 'Container id:', 'Exit code:', 'Stack trace: ExitCodeException exitCode=1:' and 8-space-indented frames, a blank line and 'Container exited with a non-zero exit code 1'. One event.",
         events=[{'first': 1, 'last': 16, 'kind': 'java_stack'}]),
    dict(url='https://github.com/cloudera/clusterdock/issues/30', name='spark_shell_banner_then_sparkcontext_yarn_app_ended', license='GitHub issue text, quoted for testing',
         notes="spark-shell 1.6 (Scala 2.10, Java 7) on YARN: REPL banner lines, a WARN MetricsSystem line, then 'ERROR spark.SparkContext: Error initializing SparkContext.' with SparkException and 8-space-indented frames including REPL '$line3.$read$$iwC' frames. The cut-off last frame is left out.",
         events=[{'first': 5, 'last': 18, 'kind': 'java_stack'}]),
    dict(url='https://github.com/broadinstitute/gatk/issues/4112', name='spark_yarn_client_submit_info_lines_and_report_head', license='GitHub issue text, quoted for testing',
         notes="GATK Spark tool submitting to YARN: log4j INFO lines (yarn.Client uploads, SecurityManager acls with trailing spaces, application submitted/ACCEPTED), then the head of a multi-line report record ('INFO yarn.Client: ' + '\\t client token: N/A'); the stored excerpt ends there, so the last 2 lines are one (truncated) event.",
         events=[{'first': 11, 'last': 12, 'kind': 'multiline'}]),
    dict(url='https://github.com/mattshma/bigdata/issues/39', name='yarn_nodemanager_container_launch_exit_code_exception', license='GitHub issue text, quoted for testing',
         notes="Hadoop 2.6 (CDH) YARN NodeManager log: ContainersMonitorImpl INFO, DefaultContainerExecutor WARN lines, and the WARN 'Exception from container-launch ...' record followed by 'ExitCodeException exitCode=10:' with 8-space frames (cut-off last frame left out).",
         events=[{'first': 3, 'last': 7, 'kind': 'java_stack'}]),
    dict(url='https://github.com/jupyter-server/enterprise_gateway/issues/440', name='spark_yarn_am_trace_pasted_without_indentation', license='GitHub issue text, quoted for testing',
         notes="Middle of a Spark 2.3 YARN ApplicationMaster exception pasted with the frames' indentation stripped ('at org...' at column 0): 14 frames of one trace (header not in the excerpt). The following 'Caused by: ...SparkUserAppException' line, which may be cut in the stored excerpt, is left out. One java_stack event.",
         events=[{'first': 1, 'last': 14, 'kind': 'java_stack'}]),
    dict(url='https://github.com/ORNL/HeCBench/issues/131', name='compute_sanitizer_memcheck_invalid_global_write_dxtc2', license='GitHub issue text, quoted for testing',
         notes="compute-sanitizer memcheck (CUDA 12.9, RTX A6000) on HeCBench dxtc2: the '========= COMPUTE-SANITIZER' banner line, then an 'Invalid __global__ write of size 8 bytes' report (at/by thread/Access/allocation/'Saved host backtrace' lines); the stored excerpt is cut inside the Host Frame list, so the report's last line here is the 'Saved host backtrace' line.",
         events=[{'first': 2, 'last': 7, 'kind': 'sanitizer_report'}]),
    dict(url='https://github.com/NVIDIA/cuCollections/issues/539', name='compute_sanitizer_thrust_assign_value_oob_write_device_frames', license='GitHub issue text, quoted for testing',
         notes="compute-sanitizer memcheck on a cuCollections test (CUDA 12.x): banner, the test's own stdout line 'Randomness seeded to: ...' between the banner and the report, then an 'Invalid __global__ write of size 1 bytes' report with source locations and a 'Device Frame:' line (the next, cut-off Device Frame is left out).",
         events=[{'first': 3, 'last': 8, 'kind': 'sanitizer_report'}]),
    dict(url='https://github.com/NVIDIA/cccl/issues/1229', name='compute_sanitizer_cub_block_reduce_misaligned_shared_read', license='GitHub issue text, quoted for testing',
         notes="compute-sanitizer on a MatX/CUB example: the command line as typed, banner, then an 'Invalid __shared__ read of size 16 bytes' report ('Address 0x8 is misaligned'); the cut-off Device Frame line is left out.",
         events=[{'first': 3, 'last': 6, 'kind': 'sanitizer_report'}]),
    dict(url='https://github.com/tum-vision/LDSO/issues/8', name='glog_exit_then_terminate_system_error_and_wrapped_bash_abort', license='GitHub issue text, quoted for testing',
         notes='C++ SLAM program (glog, 2018): an \'I1204 ... run_dso_tum_mono.cc:674] EXIT NOW!\' line, libstdc++ "terminate called after throwing an instance of \'std::system_error\'" + \'  what():  Invalid argument\' (one event), then bash\'s \'line 8: 30182 Aborted (core dumped) <command>\' message, hard-wrapped by the reporter\'s terminal into 2 lines (one event).',
         events=[{'first': 2, 'last': 3, 'kind': 'cpp_frames'}, {'first': 4, 'last': 5, 'kind': 'hardwrap'}]),
    dict(url='https://github.com/RPCS3/rpcs3/issues/2493', name='gdb_terminate_runtime_error_then_sigabrt_bt_full_locals', license='GitHub issue text, quoted for testing',
         notes='RPCS3 (2017) under gdb, pasted as plain issue text: "terminate called after throwing an instance of \'std::runtime_error\'" whose what() message spans 2 lines (the reporter\'s Markdown \'**\' bold markers are in the stored text), gdb thread lines, \'Thread 27 "rpcs3" received signal SIGABRT\', the stop frame + its tab-separated source line (Portuguese locale), \'(gdb) bt full\' and frames with their local variables, long values wrapped by gdb onto indented continuation lines. The bt ends inside frame #1\'s locals where the stored excerpt is cut (cut-off line left out).',
         events=[{'first': 1, 'last': 3, 'kind': 'cpp_frames'}, {'first': 8, 'last': 9, 'kind': 'gdb_stop'}, {'first': 11, 'last': 23, 'kind': 'gdb_bt'}]),
    dict(url='https://github.com/microsoft/MLOS/issues/227', name='make_test_terminate_without_active_exception_aborted', license='GitHub issue text, quoted for testing',
         notes="GNU make running a C++ test in CI: make lines, the reporter's '...', the program's 'Hello World!', libstdc++ 'terminate called without an active exception' (no what() line), make's '*** [test] Aborted (core dumped)', recipe-failed and leaving-directory lines. All single-line events.",
         events=[]),
    dict(url='https://github.com/microsoft/MLOS/issues/227', name='lldb_thread_select_stop_and_bt_sigabrt_raise', license='GitHub issue text, quoted for testing',
         notes="lldb on the same core (same issue, second code block): '(lldb) thread select 1' and its 2-line stop display ('* thread #1, name = ..., stop reason = signal SIGABRT' + 'frame #0: ...'), '(lldb) bt' and the backtrace header + '  * frame #0:' (the excerpt is cut after it; the cut-off 'frame' stub is left out).",
         events=[{'first': 2, 'last': 3, 'kind': 'lldb_stop'}, {'first': 5, 'last': 6, 'kind': 'lldb_bt'}]),
    dict(url='https://github.com/apache/brpc/issues/2538', name='gdb_core_brpc_pure_virtual_sigabrt_pager_prompt_bt', license='GitHub issue text, quoted for testing',
         notes="gdb on a brpc server core (glibc 2.35, Ubuntu 22.04): libthread_db lines, gdb's '--Type <RET> for more, q to quit, c to continue without paging--' pager prompt, 'Core was generated by', 'Program terminated with signal SIGABRT', the stop frame + source line (shown with spaces), '[Current thread is 1 ...]', '(gdb) bt' and frames #0-#8 ending in __cxa_pure_virtual (the cut-off #9 is left out).",
         events=[{'first': 6, 'last': 7, 'kind': 'gdb_stop'}, {'first': 10, 'last': 18, 'kind': 'gdb_bt'}]),
    dict(url='https://github.com/ray-project/ray/issues/37099', name='ray_core_worker_abseil_sigsegv_dump_mutex_lock', license='GitHub issue text, quoted for testing',
         notes="Ray core worker (C++, abseil lts_20220623 failure signal handler): '*** SIGSEGV received at time=... on cpu 60 ***', 'PC: @ ...' and '    @ <addr> <frame size> <symbol>' lines. One cpp_frames event.",
         events=[{'first': 1, 'last': 13, 'kind': 'cpp_frames'}]),
    dict(url='https://github.com/ray-project/ray/issues/31192', name='ray_plasma_store_abseil_sigsegv_raw_then_relogged_by_logging_cc', license='GitHub issue text, quoted for testing',
         notes="Ray raylet/plasma store crash (Ray 2.2): the raw abseil SIGSEGV dump ending '    @ ... and at least 3 more frames' (one event), then the same dump re-emitted through Ray's logging.cc, one glog-style 'E' record per line (the start of the second copy; the stored excerpt is cut after 2 of its lines, grouped as one truncated event).",
         events=[{'first': 1, 'last': 13, 'kind': 'cpp_frames'}, {'first': 14, 'last': 15, 'kind': 'cpp_frames'}]),
    dict(url='https://github.com/ray-project/ray/issues/18857', name='ucx_caught_signal_11_backtrace_in_ray_worker', license='GitHub issue text, quoted for testing',
         notes="UCX signal handler output in a Ray worker using UCX (RDMA transport): 'Caught signal 11 (Segmentation fault: address not mapped to object at address ...)', '==== backtrace (tid:  74387) ====' and right-aligned numbered frames ' 0  lib(symbol+off) [addr]'. The cut-off frame 11 is left out; one cpp_frames event.",
         events=[{'first': 1, 'last': 13, 'kind': 'cpp_frames'}]),
    dict(url='https://github.com/ray-project/ray/pull/27612', name='jvm_hs_err_fatal_error_header_in_buildkite_pipe_prefixed_log', license='GitHub issue text, quoted for testing',
         notes="Buildkite CI log copied from the web UI (lines after the first carry the UI's '  | ' gutter, a '--' separator line): Ray C++ core-worker INFO lines, the shell's '+ find ... -exec cat' trace, then the head of a JVM hs_err_pid file ('#'-framed 'A fatal error has been detected by the Java Runtime Environment', SIGSEGV, JRE/VM versions, Problematic frame, core-dump note), one event up to the line before the cut-off URL.",
         events=[{'first': 5, 'last': 17, 'kind': 'jvm_fatal_error'}]),
    dict(url='https://github.com/ray-project/ray/issues/23410', name='ray_raylet_prefixed_sigsegv_relogged_then_raw_trailing_spaces', license='GitHub issue text, quoted for testing',
         notes="Ray 1.x raylet crashes as shown by the driver: every line prefixed '(raylet, ip=192.168.1.153) ' and padded with trailing spaces from the terminal copy. One crash's dump re-logged through logging.cc (3 'E' records, one event), then the next crash's raw abseil dump (3 lines, one event).",
         events=[{'first': 1, 'last': 3, 'kind': 'cpp_frames'}, {'first': 4, 'last': 6, 'kind': 'cpp_frames'}]),
    dict(url='https://github.com/spring-projects/spring-boot/issues/3503', name='spring_boot_startup_failed_logback_config_error_multiline_message', license='GitHub issue text, quoted for testing',
         notes="Spring Boot 1.3.0.M2 default console layout record ('yyyy-MM-dd HH:mm:ss.SSS ERROR pid --- [thread] logger : msg'; the reporter's copy lost the leading '2' of the year and added Markdown '**' around the message), a blank line, then IllegalStateException whose message spans 2 lines ('Logback configuration error detected: ' + a logback 'ERROR in ...' status line) and tab frames. One java_stack event; the cut-off last frame is left out.",
         events=[{'first': 1, 'last': 9, 'kind': 'java_stack'}]),
    dict(url='https://github.com/spring-projects/spring-boot/issues/10711', name='logback_status_printer_no_applicable_action_errors', license='GitHub issue text, quoted for testing',
         notes="logback's internal status printer: 'ERROR in ch.qos.logback.core.joran.spi.Interpreter@L:C - no applicable action for [X], current ElementPath  is [...]' lines (a log4j2 config fed to logback). Each line one event here; the stored excerpt is cut right after them (where a tab-indented frame begins, left out).",
         events=[]),
    dict(url='https://github.com/NVIDIA/k8s-device-plugin/issues/303', name='nvidia_device_plugin_kubectl_logs_nvml_load_failure', license='GitHub issue text, quoted for testing',
         notes="'kubectl logs' of the NVIDIA k8s-device-plugin (Go log package 'yyyy/MM/dd HH:mm:ss msg' lines): NVML load failure and its hint lines; the last line ends with a stray backtick from the reporter's paste. The kubectl command line is kept. All single-line events.",
         events=[]),
    dict(url='https://github.com/NVIDIA/k8s-device-plugin/issues/302', name='kubectl_get_pods_crashloop_then_device_plugin_logs', license='GitHub issue text, quoted for testing',
         notes="'kubectl get pods' rows (header not pasted; one pod in CrashLoopBackOff), the '# kubectl logs ...' command, then the device plugin's Go log lines (watchers, NVML init failure, hints). All single-line events; the cut-off last log line is left out.",
         events=[]),
    dict(url='https://github.com/NVIDIA/nvidia-container-toolkit/issues/171', name='nvidia_container_cli_debug_info_klog_style_lines', license='GitHub issue text, quoted for testing',
         notes="'nvidia-container-cli -k -d /dev/tty info' debug output (libnvidia-container 1.14.3): glog-style 'I1128 17:35:08.651794 1737 nvc.c:350] ...' and 'W...' lines from several PIDs. All single-line events. The first stored line (prefixed with a Markdown backtick) and the cut-off last line are left out.",
         events=[]),
    dict(url='https://github.com/cri-o/cri-o/issues/3181', name='crio_container_log_file_cri_format_stderr_f_lines', license='GitHub issue text, quoted for testing',
         notes="First 5 lines of a CRI-O container log file on an OpenShift 4.2 worker (CRI log format '<RFC3339Nano> stderr F <line>', the payload being oauth-proxy's Go log lines). Every line is a full ('F') record: all single-line events.",
         events=[]),
    dict(url='https://github.com/apache/flink/pull/19514', name='flink_azure_pipelines_ci_double_timestamp_prefixed_caused_by_trace', license='GitHub issue text, quoted for testing',
         notes="Flink 1.16-SNAPSHOT e2e test output from Azure Pipelines: every line carries the CI timestamp ('2022-04-21T14:01:10.5124678Z ') and the test runner's 'Apr 21 14:01:09 ' prefix before the trace text; tail of one exception's frames, then 'Caused by: org.apache.flink.runtime.JobException: Recovery is suppressed by NoRestartBackoffTimeStrategy' and its frames. Starts and ends inside the trace (cut-off line left out); one java_stack.",
         events=[{'first': 1, 'last': 7, 'kind': 'java_stack'}]),
    dict(url='https://github.com/apache/fluss/pull/303', name='flink_minicluster_trace_more_then_caused_by_recovery_suppressed', license='GitHub issue text, quoted for testing',
         notes="Flink MiniCluster job failure in a test (Fluss connector): tab frames ending '\\t... 5 more', then 'Caused by: org.apache.flink.runtime.JobException: Recovery is suppressed by NoRestartBackoffTimeStrategy' and its frames. Middle of one trace (header not in the excerpt; cut-off last line left out); one java_stack event.",
         events=[{'first': 1, 'last': 14, 'kind': 'java_stack'}]),
    dict(url='https://github.com/DataLinkDC/dinky/issues/1757', name='flink_on_k8s_job_exception_single_space_indented_frames', license='GitHub issue text, quoted for testing',
         notes="Flink on Kubernetes (via Dinky, Flink 1.1x): 'org.apache.flink.runtime.JobException: Recovery is suppressed by FixedDelayRestartBackoffTimeStrategy(...)' with frames indented by a single space (as pasted). One java_stack event; the cut-off last frame is left out.",
         events=[{'first': 1, 'last': 13, 'kind': 'java_stack'}]),
]
