"""Grammars of service and runtime printers: TSL's stack trace, glog's log file header and its record
head with the year, Spark's YARN application report and Hadoop's container diagnostics.

Each test names the rule it guards and uses the layout its printer's code writes (quoted in
``rules.py``); removing or loosening the rule makes it fail.
"""

from __future__ import annotations

from test_grammars import kinds, spans

from streams.assemble.merger import split_head
from streams.assemble.parse import parse_line

# -- TSL/XLA CurrentStackTrace: "*** Begin stack trace ***", "\t<symbol>" frames, "*** End stack trace ***"

_TSL_FRAMES = ["\tnanobind::detail::nb_func_vectorcall_complex(_object*, _object* const*, unsigned long, _object*)",
               "\t_PyObject_FastCallDictTstate",
               "\tjax::(anonymous namespace)::PjitFunction::Call(nanobind::handle, _object* const*, unsigned long)",
               "\tstd::vector<int, std::allocator<int> >::push_back(int const&)",
               "\tPy_BytesMain",
               "*** End stack trace ***"]


def test_tsl_frames_whose_begin_line_was_cut_end_at_the_end_line() -> None:
    # rules: tsl_frame starts "tsl_frames"; bt_end is its last line
    texts = [*_TSL_FRAMES, "", "  0%|          | 0/500 [00:07<?, ?it/s]", "next record"]
    assert spans(texts) == [(0, 5), (7, 7), (8, 8)]
    assert kinds(texts)[0] == "cpp_frames"


def test_tsl_frames_under_the_line_that_introduced_them_end_at_the_end_line() -> None:
    # rule: _ATTACH "tsl_frame" -> "tsl_frames" after a line ending with ':' (the End line closes them
    # instead of starting a line of its own); a line that does not announce them is one of its own
    texts = ["RET_CHECK failure (external/xla/xla/service/cpu/ir_emitter.cc:123) ok:", *_TSL_FRAMES, "after"]
    assert spans(texts) == [(0, 6), (7, 7)]
    texts = ["2024-05-01 10:00:00,000 INFO step 12 done", *_TSL_FRAMES, "after"]
    assert spans(texts) == [(0, 0), (1, 6), (7, 7)]


_TSL_HANDLER = ["*** Received signal 11 ***",
                "*** BEGIN MANGLED STACK TRACE ***",
                "/usr/lib/python3/site-packages/tensorflow/libtensorflow_framework.so.2(+0x1538c31)[0x7f3a1c938c31]",
                "/lib/x86_64-linux-gnu/libc.so.6(+0x42520)[0x7f3a5a442520]",
                "*** END MANGLED STACK TRACE ***",
                "",
                "*** Begin stack trace ***",
                "\ttsl::CurrentStackTrace[abi:cxx11]()",
                "\t",
                "\t__kmp_hyper_barrier_release",
                "\tclone",
                "*** End stack trace ***",
                "2024-05-01 10:00:01,000 INFO next"]


def test_tsl_signal_handler_report_is_one_event() -> None:
    # rules: tsl_signal starts "tsl_signal"; tsl_mangled's frames to tsl_mangled_end ("tsl_mangled"), the
    # blank line, then "tsl_demangled" takes the Begin section ("begin_bt"), whose unresolved frame is a
    # tab alone (begin_bt's after_blank)
    assert spans(_TSL_HANDLER) == [(0, 11), (12, 12)]
    assert kinds(_TSL_HANDLER)[0] == "cpp_frames"
    # the demangled section alone, with its unresolved frame
    assert spans(_TSL_HANDLER[6:]) == [(0, 5), (6, 6)]


def test_tsl_frames_of_gcc_abi_tags_and_clones() -> None:
    # rule: tsl_frame's "[abi:cxx11]" and " [clone .cold]"
    texts = ["\ttsl::CurrentStackTrace[abi:cxx11]()", "\txla::Compile(int) [clone .cold]", "*** End stack trace ***"]
    assert spans(texts) == [(0, 2)]


def test_tab_indented_lines_of_text_are_not_tsl_frames() -> None:
    # the frame shape is a symbol: a tab-indented line with words is not one, and a run of frames
    # without the End line is not glued to the text after it
    assert spans(["\tqueue default", "\tuser root"]) == [(0, 0), (1, 1)]
    assert spans(["\tPy_BytesMain", "\tstart", "done"]) == [(0, 1), (2, 2)]


def test_tab_indented_symbols_in_an_exception_message_are_its_lines() -> None:
    # rule: SOFT_STARTS "tsl_frame" -- inside a block whose mode does not name it, it is an indented line
    texts = ["Traceback (most recent call last):", '  File "/app/x.py", line 3, in <module>', "    run()",
             "RuntimeError: no kernel for devices:", "\tcpu", "\tcuda",
             "2024-05-01 10:00:01,000 INFO next"]
    assert spans(texts) == [(0, 5), (6, 6)]


def test_a_record_body_keeps_tab_indented_symbols_as_its_own_lines() -> None:
    # rule: "body" reads tsl_frame as one of its lines (a field list under "...:" is not a stack)
    texts = ["2024-05-01 10:00:00,123 INFO devices:", "\tcpu", "\tcuda", "\tnot a symbol here",
             "2024-05-01 10:00:01,000 INFO next"]
    assert spans(texts) == [(0, 3), (4, 4)]


# -- glog / klog log file header ----------------------------------------------------------------

def test_glog_log_file_header_is_one_event() -> None:
    # rules: glog_file starts "glog_file"; glog_file_line continues it; glog_file_end is its last line
    glog = ["Log file created at: 2024/05/01 10:00:00",
            "Running on machine: gpu-node-3",
            "Running duration (h:mm:ss): 0:00:00",
            "Log line format: [IWEF]yyyymmdd hh:mm:ss.uuuuuu threadid file:line] msg",
            "E20240501 10:00:00.123456 12345 main.cc:10] failed"]
    assert spans(glog) == [(0, 3), (4, 4)]
    assert kinds(glog)[0] == "glog_header"
    klog = ["Log file created at: 2017/05/23 11:23:02",
            "Running on machine: ip-192-168-4-174",
            "Binary: Built with gc go1.7.5 for linux/amd64",
            "Log line format: [IWEF]mmdd hh:mm:ss.uuuuuu threadid file:line] msg",
            "E0523 11:23:02.534206   22765 util.go:45] Metric already registered"]
    assert spans(klog) == [(0, 3), (4, 4)]
    # a line that is not one of the header's own ends it, and "Log line format" is its last line
    assert spans(["Log file created at: 2017/05/23 11:23:02", "starting"]) == [(0, 0), (1, 1)]
    assert spans([*klog[:4], "Running on machine: other", "x"]) == [(0, 3), (4, 4), (5, 5)]


# -- Spark's YARN application report (yarn/Client.scala formatReportDetails) ---------------------

_REPORT = ["2019-12-04 02:05:10,485 INFO yarn.Client: ",
           "\t client token: N/A",
           "\t diagnostics: Application application_1_0004 failed 2 times due to AM exited with  exitCode: 13",
           "Failing this attempt.Diagnostics: [2019-12-04 10:05:09.921]Exception from container-launch.",
           "Container id: container_e19_1_0004_02_000001",
           "Exit code: 13",
           "",
           "[2019-12-04 10:05:09.922]Container exited with a non-zero exit code 13. Error file: prelaunch.err.",
           "Last 4096 bytes of stderr :",
           "2019-12-04 10:05:08,030 INFO util.SignalUtils: Registered signal handler for TERM",
           "2019-12-04 10:05:08,175 ERROR yarn.ApplicationMaster: User class threw exception",
           "\t ApplicationMaster host: N/A",
           "\t ApplicationMaster RPC port: -1",
           "\t queue: default",
           "\t start time: 1575425108443",
           "\t final status: FAILED",
           "\t tracking URL: http://rm:8088/cluster/app/application_1_0004",
           "\t user: root",
           "2019-12-04 02:05:10,500 INFO yarn.Client: Deleted staging directory"]


def test_yarn_application_report_is_one_record_to_its_user_field() -> None:
    # rules: yarn_field/yarn_diag start the report under an empty record; the diagnostics' value takes
    # every line (also the container's records it quotes) to the next field; yarn_user is the last line
    assert spans(_REPORT) == [(0, 17), (18, 18)]
    assert kinds(_REPORT)[0] == "yarn_report"
    # "user" is the report's last field: a field-shaped line after it is not the report's
    assert spans([*_REPORT[:18], "\t queue: other", "x"]) == [(0, 17), (18, 18), (19, 19)]


def test_yarn_report_with_tab_expanded_to_spaces() -> None:
    texts = [t.replace("\t ", " " * 9) for t in _REPORT]
    assert spans(texts) == [(0, 17), (18, 18)]


def test_yarn_diagnostics_past_their_cap_end_the_report() -> None:
    # rule: "yarn_diag" any_max_bytes -- a report cut inside its diagnostics does not take the log
    # after it without end
    filler = [f"2019-12-04 10:05:08,{i % 1000:03d} INFO x.Y: line {i} " + "x" * 200 for i in range(600)]
    texts = [*_REPORT[:3], *filler]
    got = spans(texts)
    assert got[0][0] == 0 and 300 < got[0][1] < 500
    assert got[-1] == (602, 602)


def test_a_lone_yarn_field_is_a_line_of_its_own_and_config_lines_stay_in_their_body() -> None:
    # yarn_field is a soft start: inside another block it is an indented line as any
    assert spans(["\t queue: default", "next"]) == [(0, 0), (1, 1)]
    texts = ["2024-05-01 10:00:00,123 INFO config:", "    queue: default", "    user: root",
             "2024-05-01 10:00:01,000 INFO next"]
    assert spans(texts) == [(0, 2), (3, 3)]


# -- Hadoop's container diagnostics (ContainerLaunch / ContainerExecutor) -------------------------

def test_container_exit_line_after_the_launch_stack_belongs_to_the_diagnostics() -> None:
    # rules: java_frames "yarn_exited" -> "yarn_exit"; yarn_tail continues it; a record ends it
    texts = ["11:48:40 WARN  org.apache.spark.scheduler.cluster.YarnSchedulerBackend$YarnSchedulerEndpoint  - "
             "Container marked as failed: container_1_0010_02_000005 on host: node4. Exit status: 1. Diagnostics: "
             "Exception from container-launch.",
             "Container id: container_1_0010_02_000005",
             "Exit code: 1",
             "Stack trace: ExitCodeException exitCode=1:",
             "        at org.apache.hadoop.util.Shell.runCommand(Shell.java:601)",
             "        at java.lang.Thread.run(Thread.java:748)",
             "",
             "[2019-12-04 10:05:09.922]Container exited with a non-zero exit code 1. Error file: prelaunch.err.",
             "Last 4096 bytes of stderr :",
             "11:48:41 INFO  org.apache.spark.SparkContext  - next record"]
    assert spans(texts) == [(0, 8), (9, 9)]
    # (also where a relay sent no record for the empty line)
    assert spans(texts[:6] + texts[7:]) == [(0, 7), (8, 8)]
    # Hadoop 2's exit line names no error file: it is the diagnostics' last line
    old = [*texts[:7], "Container exited with a non-zero exit code 1", "some other writer's line"]
    assert spans(old) == [(0, 7), (8, 8)]
    assert spans(old[:6] + old[7:]) == [(0, 6), (7, 7)]
    # after any other stack the line is one of its own
    other = ["java.lang.IllegalStateException: x", "\tat a.B.c(B.java:1)", "", "Container started", "next"]
    assert spans(other) == [(0, 1), (3, 3), (4, 4)]


# -- glog 0.6+: the year in the record head (FLAGS_log_year_in_prefix) ------------------------------

def test_glog_head_with_the_year_announces_the_check_failure_stack() -> None:
    # rule: HEADS "glog" with the optional year -- the F record is a record head, and its level
    # announces the stack that glog's failure function writes under it
    texts = ["I20240501 10:00:00.100000 30909 worker.cc:18] worker started",
             "F20240501 10:00:00.123456 30909 worker.cc:19] Check failed: shard_size(2) == 7 (6 vs. 7) sizes",
             "*** Check failure stack trace: ***",
             "    @     0x7fd132d161ed  google::LogMessage::Fail()",
             "    @     0x55b0b9f66556  main",
             "I20240501 10:00:01.000000 30910 worker.cc:30] next"]
    assert spans(texts) == [(0, 0), (1, 4), (5, 5)]


def test_glog_head_with_the_year_gives_the_records_time() -> None:
    # rule: parse._GLOG's optional year
    p = parse_line("E20240501 10:00:00.123456 30909 worker.cc:19] shard 7 missing", 1_700_000_000_000)
    assert (p.fmt, p.level, p.logger, p.ts_ms) == ("glog", "ERROR", "worker.cc:19", 1714557600123)
    p = parse_line("E0523 11:23:02.534206   22765 util.go:45] x", 1_700_000_000_000)
    assert p.fmt == "glog" and p.ts_ms is not None


# -- a Java exception message that goes on with a logger's lines (tent_heads) ---------------------

_SPRING = ["2015-07-15 11:23:37.294 ERROR 31902 --- [  restartedMain] o.s.boot.SpringApplication               : "
           "Application startup failed",
           "",
           "java.lang.IllegalStateException: Logback configuration error detected: ",
           "ERROR in ch.qos.logback.core.joran.spi.Interpreter@24:16 - RuntimeException in Action for tag [appender]",
           "\tat org.springframework.boot.logging.logback.LogbackLoggingSystem.load(LogbackLoggingSystem.java:141)",
           "\tat org.springframework.boot.SpringApplication.run(SpringApplication.java:305)",
           "2015-07-15 11:23:37.300 INFO 31902 --- [  restartedMain] o.s.boot.SpringApplication               : next"]


def test_exception_message_ending_with_colon_holds_the_status_lines_under_it() -> None:
    # rules: "record_tent"/"java_head" tent_heads -- Spring Boot's "Logback configuration error detected: "
    # goes on with logback's "ERROR in <origin> - <message>" status lines; the frames confirm them
    assert spans(_SPRING) == [(0, 5), (6, 6)]
    bare = _SPRING[2:]
    assert spans(bare) == [(0, 3), (4, 4)]


def test_a_headed_line_after_a_message_without_colon_or_frames_is_a_record() -> None:
    # without the ':' the headed line is a record of its own, and held lines without frames are read again
    texts = [_SPRING[0], "", "java.lang.IllegalStateException: no appender", *_SPRING[3:]]
    assert spans(texts)[:2] == [(0, 0), (2, 2)]
    assert spans([*_SPRING[:4], _SPRING[6]]) == [(0, 0), (2, 2), (3, 3), (4, 4)]


# -- relays and kernels: Rancher's log viewer, SerenityOS's kernel backtrace ----------------------

def test_rancher_log_viewer_time_prefix_is_stripped_for_the_go_panic_under_it() -> None:
    # rule: STREAM_PREFIXES "rancher" -- the time the viewer writes before each line is volatile
    pre = "Mon, Aug 16 2021 1:18:36 pm | "
    texts = [pre + "panic: runtime error: invalid memory address or nil pointer dereference",
             pre + "[signal SIGSEGV: segmentation violation code=0x1 addr=0x0 pc=0x14a0f2c]",
             pre + "",
             pre + "goroutine 412 [running]:",
             pre + "k8s.io/apimachinery/pkg/util/wait.JitterUntil(0xc0002f2f50, 0x3b9aca00, 0x0, 0x1, 0xc00056a000)",
             pre.replace("36 pm", "37 pm") + "\t/go/pkg/mod/k8s.io/apimachinery/pkg/util/wait/wait.go:133 +0x98",
             pre + "created by main.main",
             pre + "\t/app/main.go:40 +0x1d",
             "Mon, Aug 16 2021 1:18:40 pm | 2021-08-16T13:18:40.000Z\tINFO\tcontroller\tStarting workers"]
    assert spans(texts) == [(0, 7), (8, 8)]
    assert kinds(texts)[0] == "go_panic"
    # the viewer's lines are one writer: a line without its prefix before frames whose head was cut is
    # not where they belong
    assert spans(["srun: debug:  task 0 done", *texts[5:8]]) == [(0, 0), (1, 3)]


def test_serenity_kernel_backtrace_with_only_its_first_line_prefixed() -> None:
    # rules: serenity_frame starts "serenity_bt", serenity_addr continues it, "cross" takes the unprefixed
    # frames after the prefixed first one; STREAM_PREFIXES "serenity"
    texts = ["[#0 test(47:47)]: Terminating test(47) due to signal 6",
             "[#0 FinalizerTask(4:4)]: 0xdeadc0de  Kernel::Processor::switch_context(Kernel::Thread*&) +1537",
             "0xdeadc0de  Kernel::Scheduler::context_switch(Kernel::Thread*) +763",
             "0xdeadc0de  syscall_asm_entry +49",
             "0x16fbdd10",
             "0x07c8f558",
             "",
             "[#0 FinalizerTask(4:4)]: Generating coredump for pid: 47"]
    assert spans(texts) == [(0, 0), (1, 5), (7, 7)]
    # a hex address alone opens nothing
    assert spans(["0x16fbdd10", "0x07c8f558"]) == [(0, 0), (1, 1)]


# -- Spark's job abort: "... most recent failure: <reason>\nDriver stacktrace:" (TaskSetManager) ----

_SPARK_ABORT = ["org.apache.spark.SparkException: Job aborted due to stage failure: Task 0 in stage 1.0 failed 4 times "
                "most recent failure: Lost task 0.3 in stage 1.0 (TID 7) (10.0.0.3 executor 1): "
                "java.lang.ArithmeticException: / by zero",
                "\tat org.example.Job.divide(Job.scala:12)",
                "\tat java.lang.Thread.run(Thread.java:750)",
                "",
                "Driver stacktrace:",
                "\tat org.apache.spark.scheduler.DAGScheduler.failJobAndIndependentStages(DAGScheduler.scala:2672)",
                "\tat org.apache.spark.SparkContext.runJob(SparkContext.scala:2238)",
                "Caused by: java.lang.ArithmeticException: / by zero",
                "\tat org.example.Job.divide(Job.scala:12)",
                "24/05/01 10:00:01 INFO SparkContext: Invoking stop() from shutdown hook"]


def test_spark_job_abort_is_one_stack_across_driver_stacktrace() -> None:
    # rule: java_frames "spark_driver" (after the blank line the reason ends with, and without it)
    assert spans(_SPARK_ABORT) == [(0, 8), (9, 9)]
    assert spans(_SPARK_ABORT[:3] + _SPARK_ABORT[4:]) == [(0, 7), (8, 8)]


def test_py4j_error_quoting_a_spark_abort_is_one_traceback() -> None:
    # rule: py_msg_more after_blank "spark_driver" (py4j's Py4JJavaError message quotes the Java stack)
    texts = ["Traceback (most recent call last):",
             '  File "/app/job.py", line 9, in <module>',
             "    rdd.count()",
             "py4j.protocol.Py4JJavaError: An error occurred while calling o46.count.",
             ": " + _SPARK_ABORT[0], *_SPARK_ABORT[1:]]
    assert spans(texts) == [(0, 12), (13, 13)]


def test_absl_log_head_with_unix_seconds_is_a_glog_head() -> None:
    # rules: HEADS "glog" and parse._GLOG -- absl's "%c0000 00:00:%02d.%06d %7d " before its time zone is
    # loaded (TensorFlow's and XLA's first lines): a record head that announces the check failure's stack
    texts = ["E0000 00:00:1718032093.437234   12345 cuda_dnn.cc:8310] Unable to register cuDNN factory",
             "F0000 00:00:1718032094.000001   12345 pjrt.cc:10] Check failed: ok",
             "*** Check failure stack trace: ***",
             "    @     0x7f5ca186f1ed  absl::log_internal::LogMessage::SendToLog()",
             "I0000 00:00:1718032095.000000   12346 main.cc:3] next"]
    assert spans(texts) == [(0, 0), (1, 3), (4, 4)]
    p = parse_line(texts[0], 1_700_000_000_000)
    assert (p.fmt, p.level, p.logger, p.ts_ms) == ("glog", "ERROR", "cuda_dnn.cc:8310", 1718032093437)


def test_spark_standalone_command_header_is_one_event() -> None:
    # rules: spark_cmd starts "spark_cmd"; its '=' rule is the last line
    texts = ['Spark Executor Command: "/usr/lib/jvm/java-8-openjdk-amd64/bin/java" "-cp" "/opt/spark/conf/" "-Xmx4G"',
             "=" * 40,
             "",
             "Using Spark's default log4j profile: org/apache/spark/log4j-defaults.properties",
             "20/12/22 10:01:02 INFO CoarseGrainedExecutorBackend: Started daemon with process name: 7429@698a87e05856"]
    assert spans(texts) == [(0, 1), (3, 3), (4, 4)]
    assert kinds(texts)[0] == "spark_command"
    # the command line alone is a line of its own, and the header has one rule
    assert spans([texts[0], texts[3]]) == [(0, 0), (1, 1)]
    assert spans([*texts[:2], "=" * 40]) == [(0, 1), (2, 2)]


def test_rays_gcs_start_failure_quotes_its_error_file_in_one_event():
    # rules: BODY_SUFFIX_STARTS "lines of error files:" -> MODES "ray_err_files" (node.py quotes the last
    # C/E lines of gcs_server.err, with their own heads, then a blank line and ".Please check ...")
    texts = ["2023-03-30 18:42:44,984 CRITICAL node.py:610 -- Failed to start GCS. Last 2 lines of error files:",
             "[2023-03-30 18:42:30,996 E 2487574 2487574] (gcs_server) redis_context.cc:368: Failed to connect to "
             "Redis due to: RedisError: Could not establish connection to Redis localhost:1234",
             "[2024-06-04 10:09:50,260 C 15013 15013] (gcs_server) grpc_server.cc:124:  Check failed: server_ "
             "Failed to start the grpc server.",
             "",
             ".Please check /tmp/ray/session_2024-06-04_10-09-49/logs/gcs_server.out for details",
             "2023-03-30 18:42:45,001 INFO scripts.py:1 -- next"]
    assert spans(texts) == [(0, 4), (5, 5)]
    # (without the closing line the blank line ends it; a record after the quoted lines is its own)
    assert spans([*texts[:4], "Local node IP: 10.0.0.1"]) == [(0, 2), (4, 4)]
    # rule: "headed" -- only lines with a head at the levels node.py quotes (" C ", " E ") are its: a
    # line of another writer after a cut message is not, nor is the C++ log's own INFO line
    assert spans([*texts[:3], '{"log":"2020-03-24 Single line"}']) == [(0, 2), (3, 3)]
    info = "[2023-03-30 18:42:46,996 I 2487574 2487574] (gcs_server) gcs_server.cc:12: GCS started."
    assert spans([*texts[:3], info]) == [(0, 2), (3, 3)]


def test_ray_log_lines_after_another_record_stay_alone():
    # rule: the quoted lines are taken only under the message that announces them
    texts = ["2023-03-30 18:42:44,984 INFO node.py:610 -- Starting GCS.",
             "[2023-03-30 18:42:30,996 E 2487574 2487574] (gcs_server) redis_context.cc:368: Failed to connect",
             "[2023-03-30 18:42:31,996 E 2487574 2487574] (gcs_server) redis_context.cc:368: Failed to connect"]
    assert spans(texts) == [(0, 0), (1, 1), (2, 2)]


def test_rays_critical_level_letter_is_part_of_its_head():
    # rule: HEADS ray_cpp reads spdlog's "C" (RAY_LOG(FATAL)) as it reads "E": the head ends after the
    # file:line, so the message is what the C++ code wrote
    head, _r, _e, body = split_head("[2024-06-04 10:09:50,260 C 15013 15013] (gcs_server) grpc_server.cc:124:  "
                                    "Check failed: server_ Failed to start the grpc server.")
    assert head is not None and head.endswith("grpc_server.cc:124: ")
    assert body.startswith(" Check failed: server_")


def test_trtexecs_records_and_a_message_that_goes_on_after_its_colon():
    # rules: HEADS trtexec ("[07/18/2023-14:17:05] [E] [TRT] "); a record whose message ends with ':' takes
    # the line below (onnx-tensorrt's "... In function f:" + "[8] Assertion failed: ...", one message)
    texts = ["[07/18/2023-14:17:05] [E] [TRT] ModelImporter.cpp:732: ERROR: builtin_op_importers.cpp:5428 In "
             "function importFallbackPluginImporter:",
             '[8] Assertion failed: creator && "Plugin not found, are the plugin name, version, and namespace '
             'correct?"',
             "[07/18/2023-14:17:05] [E] Failed to parse onnx file",
             "[07/18/2023-14:17:05] [I] Finished parsing network model. Parse time: 1.98327"]
    assert spans(texts) == [(0, 1), (2, 2), (3, 3)]
    head, _r, _e, body = split_head(texts[3])
    assert head == "[07/18/2023-14:17:05] [I] " and body.startswith("Finished parsing")
