"""Grammars that hold for whole families of printers, not one program: record heads in the layouts
most loggers share, relay prefixes, frame shapes and message ends.

Each test names the rule it guards and uses the output its printer's code or documentation writes
(format strings quoted in ``rules.py``); removing or loosening the rule makes it fail.
"""

from __future__ import annotations

import pytest
from test_grammars import groups, kinds, spans

from streams.assemble.merger import split_head

# -- record heads: time + fields + logger, in the layouts loggers write --------------------------

_TRACEBACK = ["Traceback (most recent call last):",
              '  File "/app/worker.py", line 41, in run',
              "    result = task()",
              "RuntimeError: CUDA error: out of memory"]


@pytest.mark.parametrize(("error", "info"), [
    # gunicorn's glogging: "[%(asctime)s] [%(process)d] [%(levelname)s] "
    ("[2024-05-01 10:00:00 +0000] [17] [ERROR] Exception in worker process",
     "[2024-05-01 10:00:01 +0000] [17] [INFO] Worker exiting (pid: 17)"),
    # celery's worker log format: "[%(asctime)s: %(levelname)s/%(processName)s] "
    ("[2024-05-01 10:00:00,123: ERROR/ForkPoolWorker-1] Task tasks.train[ab12] raised unexpected: RuntimeError()",
     "[2024-05-01 10:00:01,000: INFO/MainProcess] Task tasks.train[cd34] received"),
    # structlog's ConsoleRenderer after a collector's time: "[error    ] event   key=value"
    ("2024-05-01T10:00:00.123456Z [error    ] step failed                    step=12",
     "2024-05-01T10:00:01.000000Z [info     ] step done                      step=13"),
    # log4j/Python "%d [%t] %-5p %c: %m"
    ("2024-05-01 10:00:00,123 [worker-3] ERROR trainer.loop: step failed",
     "2024-05-01 10:00:01,000 [worker-3] INFO  trainer.loop: step done"),
    # Go's log with a date: "2006/01/02 15:04:05 "
    ("2024/05/01 10:00:00 ERROR worker: step failed",
     "2024/05/01 10:00:01 INFO worker: step done"),
])
def test_generic_heads_announce_the_traceback_under_them(error: str, info: str) -> None:
    # rule: HEADS "generic" (time, fields, logger) -- the level in the head announces the traceback,
    # and the next record's head ends it
    assert spans([error, *_TRACEBACK, info]) == [(0, 4), (5, 5)]


@pytest.mark.parametrize(("line", "head"), [
    # logback's default "%d{HH:mm:ss.SSS} [%thread] %-5level %logger{36} - %msg"
    ("12:00:00.123 [main] ERROR com.example.Trainer - failed", "12:00:00.123 [main] ERROR com.example.Trainer - "),
    # Spring Boot's console pattern "%d %5p PID --- [%15.15t] %-40.40logger{39} : %m"
    ("2024-05-01 10:00:00.123 ERROR 31902 --- [           main] o.s.boot.SpringApplication               : "
     "Application run failed",
     "2024-05-01 10:00:00.123 ERROR 31902 --- [           main] o.s.boot.SpringApplication               : "),
    # Tomcat's OneLineFormatter "dd-MMM-yyyy HH:mm:ss.SSS LEVEL [thread] "
    ("15-Jul-2015 11:23:37.294 SEVERE [main] org.apache.catalina.startup.Catalina.start failed",
     "15-Jul-2015 11:23:37.294 SEVERE [main] "),
    # spdlog's default "[%Y-%m-%d %H:%M:%S.%e] [%n] [%l] "
    ("[2024-05-01 10:00:00.123] [engine] [error] failed", "[2024-05-01 10:00:00.123] [engine] [error] "),
    # a JUL-style "LEVEL:" after the time (tempto's layout)
    ("2023-10-17 03:36:54 SEVERE: Failure cause:", "2023-10-17 03:36:54 SEVERE: "),
    # zap's console encoder: tab-separated time, level, caller
    ("2024-05-01T10:00:00.000Z\tERROR\tserver/handler.go:42\tfailed",
     "2024-05-01T10:00:00.000Z\tERROR\tserver/handler.go:42\t"),
])
def test_generic_head_runs_to_the_message(line: str, head: str) -> None:
    # rules: HEADS "generic" and "time_level" -- the head is what the layout writes before %m
    got, rhead, _every, body = split_head(line)
    assert got == head and rhead is None and body == line[len(head):]


def test_skypilot_letter_level_head_repeats_on_every_line_of_a_record():
    # rule: HEADS "vllm" with a level letter (SkyPilot's "%(levelname).1s %(asctime)s %(filename)s:%(lineno)d] "
    # and its NewLineFormatter, which writes the head on every line of a record)
    h = "E 04-27 13:23:32 httptools_impl.py:414] "
    texts = [h + "Exception in ASGI application",
             h + "  + Exception Group Traceback (most recent call last):",
             h + '  |   File "/opt/conda/lib/python3.10/site-packages/starlette/_utils.py", line 76, in collapse',
             h + "  |     yield",
             h + "  | exceptiongroup.ExceptionGroup: unhandled errors in a TaskGroup (1 sub-exception)",
             "I 04-27 13:23:33 server.py:90] next request"]
    assert spans(texts) == [(0, 4), (5, 5)]


def test_ray_cpp_head_with_its_component_keeps_a_relogged_signal_dump():
    # rule: HEADS "ray_cpp" with "(component) " (logging.cc re-logs the absl dump one record per line)
    h = "[2022-12-19 12:28:18,761 E 5877 5901] (raylet) logging.cc:361: "
    texts = [h + "*** SIGSEGV received at time=1671481698 on cpu 0 ***",
             h + "PC: @     0x559d299b6bcf  (unknown)  boost::asio::detail::epoll_reactor::start_op()",
             h + "    @     0x7fa2ef391420       3184  (unknown)",
             "[2022-12-19 12:28:19,000 I 5877 5877] (raylet) main.cc:120: Raylet started"]
    assert spans(texts) == [(0, 2), (3, 3)]


def test_tsl_record_keeps_its_begin_stack_trace_block():
    # rules: HEADS "tsl" ("%Y-%m-%d %H:%M:%S.%06d: %c %s:%d] "), bt_begin announced by an E record,
    # begin_bt frames to "*** End stack trace ***"
    texts = ["2024-07-17 11:40:54.103908: E external/xla/xla/status_macros.cc:56] INTERNAL: RET_CHECK failure",
             "*** Begin stack trace ***",
             "\ttsl::CurrentStackTrace()",
             "\txla::status_macros::MakeErrorStream::Impl::GetStatus()",
             "*** End stack trace ***",
             "2024-07-17 11:40:54.200000: I external/xla/xla/pjrt/pjrt_client.cc:10] next"]
    assert spans(texts) == [(0, 4), (5, 5)]
    assert kinds(texts)[0] == "cpp_frames"


def test_java_util_logging_two_line_record_keeps_its_exception():
    # rules: HEADS "jul", HEAD_STARTS -> mode "jul" (SimpleFormatter's default
    # "%1$tb %1$td, %1$tY %1$tl:%1$tM:%1$tS %1$Tp %2$s%n%4$s: %5$s%6$s%n")
    texts = ["Oct 17, 2023 3:36:54 AM io.trino.server.Server doStart",
             "SEVERE: Server startup failed",
             "java.lang.IllegalStateException: catalog not found",
             "\tat io.trino.server.Server.doStart(Server.java:140)",
             "Oct 17, 2023 3:36:55 AM io.trino.server.Server main",
             "INFO: shutting down"]
    assert spans(texts) == [(0, 3), (4, 5)]


def test_spring_boot_blank_line_between_the_record_and_its_stack():
    # rule: "record" after_blank j_exc -> tent (Spring Boot's %wEx writes a line separator before the stack)
    texts = ["2024-05-01 10:00:00.123 ERROR 31902 --- [           main] o.s.boot.SpringApplication               : "
             "Application run failed",
             "",
             "java.lang.IllegalStateException: Failed to execute CommandLineRunner",
             "\tat org.springframework.boot.SpringApplication.callRunner(SpringApplication.java:787)",
             "",
             "2024-05-01 10:00:01.000  INFO 31902 --- [           main] o.s.boot.Foo : next"]
    assert spans(texts) == [(0, 3), (5, 5)]
    # without frames the exception-shaped line after the blank line is its own
    assert spans([*texts[:3], texts[5]]) == [(0, 0), (2, 2), (3, 3)]


# -- prefixes of relays and launchers ------------------------------------------------------------

def test_a_padded_compose_column_is_a_writer():
    # rule: STREAM_PREFIXES "compose" -- a service name padded to the column, without '-' or '_'
    t, db = "tests               | ", "db                  | "
    texts = [t + "io.trino.tempto.query.QueryExecutionException: java.sql.SQLException: Query failed",
             db + "2023-10-17 03:36:54 INFO: checkpoint complete",
             t + "\tat io.trino.tempto.query.JdbcQueryExecutor.execute(JdbcQueryExecutor.java:119)",
             t + "\tat dev.failsafe.Functions.lambda$get$0(Functions.java:46)"]
    assert groups(texts) == [[0, 2, 3], [1]]


def test_a_relays_month_time_before_caused_by_is_not_a_syslog_writer():
    # rules: STREAM_PREFIXES "month_time" (a test runner's time before every line) and
    # NOT_SYSLOG_WRITERS ("Caused by: " has the shape of syslog's "host prog: ")
    texts = ["Apr 21 14:01:09 \tat java.lang.Thread.run(Thread.java:750) ~[?:1.8.0_322]",
             "Apr 21 14:01:09 Caused by: org.apache.flink.runtime.JobException: Recovery is suppressed",
             "Apr 21 14:01:09 \tat org.apache.flink.runtime.scheduler.DefaultScheduler.handleTaskFailure"
             "(DefaultScheduler.java:301)",
             "Apr 21 14:01:10 Job 3f2a finished."]
    assert spans(texts) == [(0, 2), (3, 3)]


def test_rsyslog_escaped_tabs_are_read_as_tabs():
    # rule: RELAY_ESCAPES (rsyslog writes a frame's leading tab as "#011")
    p = "Apr  9 00:05:07 node7 java[4192]: "
    texts = [p + "java.lang.IllegalStateException: executor shut down",
             p + "#011at org.example.Pool.submit(Pool.java:120)",
             p + "#011at org.example.Trainer.step(Trainer.java:88)",
             p + "started next step"]
    assert spans(texts) == [(0, 2), (3, 3)]


def test_journald_lines_with_the_host_blanked_out_keep_their_writer():
    # rule: STREAM_PREFIXES "syslog" (a copy that deletes the host from journalctl's "<time> <host>
    # <ident>[<pid>]: " leaves two blanks; the tag with its pid is still the writer)
    p = "Nov 08 07:06:40  ollama[11902]: "
    texts = [p + "        github.com/ollama/ollama/llama/runner/runner.go:424 +0x29e fp=0xc000065ed0 sp=0xc000065cc8",
             p + "main.(*Server).run(0xc000128120, {0x5593132eea40, 0xc00007c0a0})",
             p + "        github.com/ollama/ollama/llama/runner/runner.go:338 +0x1a5 fp=0xc000065fb8 sp=0xc000065ed0",
             p + "created by main.main in goroutine 1",
             p + "        github.com/ollama/ollama/llama/runner/runner.go:907 +0xcab",
             "Nov 08 07:06:41  systemd[1]: ollama.service: Main process exited, code=exited, status=2/INVALIDARGUMENT"]
    assert spans(texts) == [(0, 4), (5, 5)]


def test_ggml_cuda_check_report_takes_its_device_line_and_nothing_more():
    # rule: TOKENS "ggml_cuda_err"/"ggml_cuda_dev", MODES "ggml_cuda" (ggml-cuda.cu's CUDA_CHECK writes the error
    # and then "current device: %d" before it exits)
    texts = ["main: seed  = 1694805687",
             "",
             "CUDA error 2 at /data/llama.cpp/ggml-cuda.cu:5509: out of memory",
             "current device: 0",
             "(textgen) [root@pve0 bin]#"]
    assert spans(texts) == [(0, 0), (2, 3), (4, 4)]
    # cuBLAS's check writes the same two lines; a line of another printer under the error stays apart
    texts = ["cuBLAS error 15 at ggml-cuda.cu:7048: the requested functionality is not supported",
             "current device: 1",
             "CUDA error 700 at ggml-cuda.cu:6951: an illegal memory access was encountered",
             "llama_print_timings:        load time =  1234.56 ms"]
    assert spans(texts) == [(0, 1), (2, 2), (3, 3)]


def test_triton_iso8601_heads_keep_their_tables_and_stay_apart_within_a_second():
    # rule: HEADS "triton_iso" (Triton's --log-format=ISO8601: "YYYY-MM-DDThh:mm:ssZ L pid file:line] ", its
    # tables printed in the record under a head with no text; its time has no fraction)
    rule = "+---------+---------------------------------------------------------+--------+"
    texts = ["2024-03-20T12:09:36Z I 58 server.cc:634] ",
             rule,
             "| Backend | Path                                                    | Config |",
             rule,
             "| pytorch | /opt/tritonserver/backends/pytorch/libtriton_pytorch.so | {}     |",
             rule,
             '2024-03-20T12:09:37Z I 58 model_config_utils.cc:1904] "\\tModelConfig::version_policy::specific"',
             '2024-03-20T12:09:37Z I 58 model_config_utils.cc:1904] "\\tModelConfig::sequence_batching::state"']
    assert spans(texts) == [(0, 5), (6, 6), (7, 7)]


def test_a_chain_message_whose_first_traceback_was_cut_opens_the_next_traceback():
    # rule: STARTS "py_chain" (traceback.py writes the chain's message, an empty line, then the next traceback)
    texts = ["ERROR 08-29 02:12:22 async_llm_engine.py:658] Engine iteration timed out. This should never happen!",
             "...",
             "The above exception was the direct cause of the following exception:",
             "",
             "Traceback (most recent call last):",
             '  File "/usr/lib/python3/dist-packages/uvicorn/protocols/http/httptools_impl.py", line 399, in run_asgi',
             "    result = await app(  # type: ignore[func-returns-value]",
             "vllm.engine.async_llm_engine.AsyncEngineDeadError: Task finished unexpectedly.",
             "INFO:     127.0.0.1:41034 - \"POST /v1/chat/completions HTTP/1.1\" 500 Internal Server Error"]
    assert spans(texts) == [(0, 0), (1, 1), (2, 7), (8, 8)]


def test_pdsh_host_prefixes_keep_each_nodes_traceback_apart():
    # rule: STREAM_PREFIXES "pdsh" (DeepSpeed's multi-node runner: "host: " before every line)
    texts = ["worker-1: Traceback (most recent call last):",
             "worker-0: [2024-05-01 10:00:00,123] [INFO] [engine.py:12:step] step 10",
             'worker-1:   File "/app/train.py", line 3, in <module>',
             "worker-1:     main()",
             "worker-1: RuntimeError: CUDA out of memory",
             "worker-0: [2024-05-01 10:00:00,124] [INFO] [engine.py:12:step] step 11"]
    assert groups(texts) == [[0, 2, 3, 4], [1], [5]]
    # an exception line with digits in its name is not a host
    tb = ["Traceback (most recent call last):",
          '  File "/app/upload.py", line 9, in <module>',
          "    client.upload_file(path, bucket, key)",
          "boto3.exceptions.S3UploadFailedError: Failed to upload ckpt.pt"]
    assert spans(tb) == [(0, 3)]


def test_xla_dist_worker_prefixes_keep_each_workers_traceback_whole_and_apart():
    # rule: STREAM_PREFIXES "xla_dist" (torch_xla's xla_dist: "time ip [ordinal] " before every relayed line)
    w2, w0 = "2020-10-14 14:14:33 10.164.0.60 [2] ", "2020-10-14 14:14:34 10.164.0.61 [0] "
    texts = [w2 + "Traceback (most recent call last):",
             w0 + "Epoch 1 train begin 14:14:34",
             w2 + '  File "/home/dev/train.py", line 111, in <module>',
             w2 + "    prediction_loss_only=True,",
             w2 + "RuntimeError: Failed to meet rendezvous 'torch_xla.core.xla_model.mark_step'",
             w0 + "Epoch 1 train end 14:14:35"]
    assert groups(texts) == [[0, 2, 3, 4], [1], [5]]


# -- frames and reports --------------------------------------------------------------------------

def test_java_frames_whose_indentation_was_stripped():
    # rule: j_at's unindented alternative (a Java frame: "at pkg.Class.method(File.java:N)")
    texts = ["at org.apache.spark.util.ThreadUtils$.awaitResult(ThreadUtils.scala:205)",
             "at java.security.AccessController.doPrivileged(Native Method)",
             "at org.apache.spark.deploy.yarn.ApplicationMaster.main(ApplicationMaster.scala)",
             "at least one executor was lost"]
    assert spans(texts) == [(0, 2), (3, 3)]


def test_absl_dump_ends_with_its_dropped_frames_line():
    # rule: absl_frame "    @ ... and at least N more frames" (absl DumpStackTrace)
    texts = ["*** SIGSEGV received at time=1671481698 on cpu 0 ***",
             "PC: @     0x559d299b6bcf  (unknown)  boost::asio::detail::epoll_reactor::start_op()",
             "    @     0x559d299b85b3         64  boost::asio::detail::reactive_socket_service_base::start_op()",
             "    @ ... and at least 3 more frames",
             "Fatal Python error: Segmentation fault"]
    assert spans(texts) == [(0, 3), (4, 4)]


def test_systemd_coredump_report_is_one_event():
    # rules: sd_pid / sd_dumped start "coredump"; its threads follow blank lines
    info = ["/var/lib/systemd/coredump$ coredumpctl info neomutt",
            "           PID: 2150 (neomutt)",
            "        Signal: 6 (ABRT)",
            "       Message: Process 2150 (neomutt) of user 1000 dumped core.",
            "",
            "                Stack trace of thread 2150:",
            "                #0  0x00007feab049f26c n/a (libc.so.6 + 0x8926c)",
            "                #1  0x00007feab044fa08 raise (libc.so.6 + 0x39a08)",
            "",
            "$ echo done"]
    assert spans(info) == [(0, 0), (1, 7), (9, 9)]
    journal = ["Process 2150 (neomutt) of user 1000 dumped core.",
               "",
               "Stack trace of thread 2150:",
               "#0  0x00007feab049f26c n/a (libc.so.6 + 0x8926c)",
               "",
               "Stack trace of thread 2151:",
               "#0  0x00007feab049f26c n/a (libc.so.6 + 0x8926c)",
               "",
               "ELF object binary architecture: AMD x86-64",
               "next line"]
    assert spans(journal) == [(0, 8), (9, 9)]
    assert kinds(journal)[0] == "coredump"


def test_a_json_record_written_over_several_lines_stays_whole():
    # rule: _start_mode -- a JSON record whose brackets stay open (Elasticsearch's JSON layout writes
    # its "stacktrace" array one frame per line)
    texts = ['{"type": "server", "timestamp": "2021-04-08T17:42:30,606Z", "level": "ERROR", "message": '
             '"uncaught exception in thread [main]", ',
             '"stacktrace": ["org.elasticsearch.bootstrap.StartupException: ElasticsearchException[failed]",',
             '"at org.elasticsearch.bootstrap.Elasticsearch.init(Elasticsearch.java:174) ~[elasticsearch-7.6.2.jar]",',
             '"at org.elasticsearch.cli.Command.main(Command.java:90) ~[elasticsearch-cli-7.6.2.jar:7.6.2]"] }',
             '{"type": "server", "timestamp": "2021-04-08T17:42:31,000Z", "level": "INFO", "message": "stopped"}']
    assert spans(texts) == [(0, 3), (4, 4)]


def test_the_tail_of_a_json_dump_whose_head_was_cut():
    # rule: json_member starts "json_tail" (depth0 1: inside the object whose opening line is gone)
    texts = ['    "train_micro_batch_size_per_gpu": 2, ',
             '    "zero_optimization": {',
             '        "stage": 3',
             "    }",
             "}",
             "[2025-03-07 23:55:15,357] [INFO] [comm.py:677:init_distributed] Distributed backend ready"]
    assert spans(texts) == [(0, 4), (5, 5)]


def test_boxes_drawn_with_box_drawing_characters():
    # rules: box_top / rich_box / box_sep / box_bottom (Rich tables and panels, Ray Tune's status table)
    table = ["╭──────────┬─────────╮",
             "│ Trial    │ status  │",
             "├──────────┼─────────┤",
             "│ t_0001   │ RUNNING │",
             "╰──────────┴─────────╯",
             "Trial t_0001 completed."]
    assert spans(table) == [(0, 4), (5, 5)]
    # the middle of a Rich traceback box whose edges were cut
    middle = ["│ /usr/local/lib/python3.10/dist-packages/accelerate/commands/launch.py:1104 in launch_command     │",
              "│                                                                                                  │",
              "│ ❱ 1104 │   │   simple_launcher(args)                                                             │",
              "next"]
    assert spans(middle) == [(0, 2), (3, 3)]


def test_ascii_tables_are_held_until_their_rule():
    # rules: rule_plus starts "table_plus", pipe_row rows are held until the next rule confirms them
    texts = ["+---------------------------+----------+",
             "| Trial name                | status   |",
             "|---------------------------+----------|",
             "| tune_function_db143_00000 | RUNNING  |",
             "+---------------------------+----------+",
             "",
             "(TrainTrainable pid=45780) 2022-07-13 00:08:11,976\tINFO trainer.py:249 -- Run results"]
    assert spans(texts) == [(0, 4), (6, 6)]
    # rows without the closing rule are lines of their own
    assert spans([*texts[:4], "done"]) == [(0, 0), (1, 1), (2, 2), (3, 3), (4, 4)]


def test_hotspot_fatal_error_header_is_one_event():
    # rules: hash_bare opens "hash_open", hs_err confirms it; '#' lines continue "hs_err"
    texts = ["#",
             "# A fatal error has been detected by the Java Runtime Environment:",
             "#",
             "#  SIGSEGV (0xb) at pc=0x00007f43f43d5ba1, pid=3486, tid=3487",
             "# Problematic frame:",
             "# C  [libc.so.6+0x15bba1]  __memmove_ssse3_back+0x1b11",
             "#",
             "Exception in thread \"main\" done"]
    assert spans(texts)[0] == (0, 6)
    assert kinds(texts)[0] == "jvm_fatal_error"
    # a bare '#' line that opens nothing is a line of its own, and inside another event it is text
    assert spans(["#", "# just a comment", "next"]) == [(0, 0), (1, 1), (2, 2)]
    config = ["[2024-05-01 10:00:00,123] [INFO] [train.py:40:main] config:", "  lr: 0.0001", "#", "  epochs: 3",
              "[2024-05-01 10:00:00,124] [INFO] [train.py:41:main] starting"]
    assert spans(config) == [(0, 3), (4, 4)]


def test_old_glibc_detected_report():
    # rule: glibc_err "*** glibc detected *** prog: ..." (glibc before 2.18), then its backtrace section
    texts = ["*** glibc detected *** /usr/bin/python: double free or corruption (out): 0xb215d310 ***",
             "======= Backtrace: =========",
             "/lib/i386-linux-gnu/libc.so.6(+0x75ee2)[0xb7417ee2]",
             "/usr/bin/python(PyEval_EvalCodeEx+0x16a)[0x819af8a]",
             "Aborted (core dumped)"]
    assert spans(texts) == [(0, 3), (4, 4)]


def test_extension_modules_line_cut_by_the_terminal_continues_to_its_total():
    # rule: py_ext_cut -> "py_ext_more" until "(total: N)" (Python/pylifecycle.c _Py_DumpExtensionModules)
    texts = ["Extension modules: numpy.core._multiarray_umath, numpy.linalg._umath_linalg, ",
             "PIL._imagingft, msgspec._core, regex._regex (total: 50)",
             "Fatal Python error: Segmentation fault"]
    assert spans(texts) == [(0, 1), (2, 2)]


def test_loguru_diagnose_traceback_with_blank_lines_between_frames():
    # rules: py_head / py_frames after_blank py_file and the exception line (loguru's better_exceptions:
    # a blank line before each frame of the user's code, '>' on the catch point, values under the source)
    texts = ["2024-01-01 12:00:00.123 | ERROR    | __main__:<module>:12 - An error has been caught in function "
             "'<module>', process 'MainProcess' (1234), thread 'MainThread' (5678):",
             "Traceback (most recent call last):",
             "",
             '> File "/tmp/x.py", line 12, in <module>',
             "    f(0)",
             "    └ <function f at 0x7f0000000000>",
             "",
             '  File "/tmp/x.py", line 8, in f',
             "    return 1 / x",
             "               └ 0",
             "",
             "ZeroDivisionError: division by zero",
             "2024-01-01 12:00:01.000 | INFO     | __main__:<module>:13 - next"]
    assert spans(texts) == [(0, 11), (12, 12)]


def test_zap_stacktrace_under_an_error_record():
    # rules: _ATTACH go_func_bare -> go_pair, held until its file line, then go_frames (zap's
    # "function\n\tfile:line" stack after the record)
    texts = ["2024-05-01T10:00:00.000Z\tERROR\tserver/handler.go:42\trequest failed\t{\"error\": \"timeout\"}",
             "main.handler",
             "\t/app/server/handler.go:42",
             "net/http.HandlerFunc.ServeHTTP",
             "\t/usr/local/go/src/net/http/server.go:2136",
             "2024-05-01T10:00:01.000Z\tINFO\tserver/main.go:20\tnext"]
    assert spans(texts) == [(0, 4), (5, 5)]


def test_go_http_panic_log_keeps_its_stack():
    # rule: ANNOUNCE_BODY_RE "panic" (net/http logs "http: panic serving ADDR: v" then debug.Stack())
    texts = ["2024/05/01 10:00:00 http: panic serving 10.0.0.1:5000: runtime error: index out of range",
             "goroutine 5 [running]:",
             "net/http.(*conn).serve.func1()",
             "\t/usr/local/go/src/net/http/server.go:1825 +0xbf",
             "2024/05/01 10:00:01 next request"]
    assert spans(texts) == [(0, 3), (4, 4)]


def test_ray_task_error_carries_the_remote_traceback():
    # rules: j_exc with the cause's type in parentheses, java_head py_file -> py_frames
    texts = ["ray.exceptions.RayTaskError(RuntimeError): ray::Actor.forward() (pid=693359, ip=192.168.249.44)",
             '  File "/tmp/ray/session/runtime_resources/working_dir_files/trainer/launcher.py", line 105, in forward',
             "    log_probs = self.model(sequences)",
             "RuntimeError: CUDA error: an illegal memory access was encountered",
             "[2024-07-25 08:41:42,000] [INFO] [engine.py:1:step] next"]
    assert spans(texts) == [(0, 3), (4, 4)]


# -- where free text ends ------------------------------------------------------------------------

def test_a_level_colon_line_is_a_record_of_its_own():
    # rule: RECORDS "level_colon" (glog's "WARNING: Logging before InitGoogleLogging()" ends the record
    # body above it)
    texts = ["I1028 12:13:38.405865 632324 ProcessGroupNCCL.cpp:666] [Rank 0] ProcessGroupNCCL initialized with "
             "following options:",
             "NCCL_ASYNC_ERROR_HANDLING: 1",
             "TIMEOUT(ms): 5000",
             "WARNING: Logging before InitGoogleLogging() is written to STDERR",
             "I1028 12:13:38.412765 632358 ProcessGroupNCCL.cpp:843] [Rank 1] NCCL watchdog thread started!"]
    assert spans(texts) == [(0, 2), (3, 3), (4, 4)]


def test_an_exception_line_without_frames_ends_its_message_at_a_blank_line():
    # rule: java_head "ends_at_blank" (hydra prints the exception alone; its message spans lines)
    texts = ["ray.exceptions.ActorDiedError: The actor died unexpectedly before finishing this task.",
             "        class_name: create_colocated_worker_cls.<locals>.WorkerDict",
             "        pid: 85317",
             "The actor is dead because its worker process has died.",
             "",
             "Set the environment variable HYDRA_FULL_ERROR=1 for a complete stack trace."]
    assert spans(texts) == [(0, 3), (5, 5)]


def test_an_exception_message_goes_on_after_a_blank_line_with_indented_lines():
    # rule: py_msg after_blank "indent" -> cont (XLA's OOM report: "BufferAssignment OOM Debugging."
    # with per-buffer blocks separated by blank lines)
    texts = ['  File "/env/lib/python3.9/site-packages/jax/_src/dispatch.py", line 895, in _execute_compiled',
             "    out_flat = compiled.execute(in_flat)",
             "jaxlib.xla_extension.XlaRuntimeError: RESOURCE_EXHAUSTED: Out of memory allocating 6291456 bytes.",
             "Peak buffers:",
             "        Buffer 1:",
             "                Size: 6.00MiB",
             "",
             "        Buffer 2:",
             "                Size: 384.0KiB",
             "",
             "Epoch 3 done"]
    assert spans(texts) == [(0, 8), (10, 10)]


def test_a_source_that_doubles_every_newline():
    # rule: SPACED_AFTER (after two lines each followed by one blank line, one blank line does not end
    # what the grammar continues)
    texts = ["INFO 07-22 10:38:57 async_llm_engine.py:154] Aborted request cmpl-b6da.",
             "",
             "ERROR:    Exception in ASGI application",
             "",
             "Traceback (most recent call last):",
             "",
             '  File "/usr/local/lib/python3.10/dist-packages/starlette/responses.py", line 265, in __call__',
             "",
             "    await wrap(partial(self.listen_for_disconnect, receive))",
             "",
             "RuntimeError: boom",
             "",
             "INFO:     127.0.0.1:5000 - \"POST /v1/completions HTTP/1.1\" 500"]
    assert spans(texts) == [(0, 0), (2, 10), (12, 12)]
    # in a source that does not double its newlines, the blank line ends the record
    single = [texts[0], texts[2], texts[3], *texts[4:11:2], texts[12]]
    assert spans(single) == [(0, 0), (1, 1), (3, 6), (7, 7)]


def test_asyncio_context_lines_and_the_traceback_are_one_record():
    # rules: asyncio_handle with the context's keys, ANNOUNCE_BODY_RE (asyncio's default_exception_handler
    # logs the message, "key: repr" per context object, then the exception's traceback)
    texts = ["Task exception was never retrieved",
             "future: <Task finished name='Task-1' coro=<main() done, defined at /app/x.py:3> "
             "exception=ValueError('x')>",
             "Traceback (most recent call last):",
             '  File "/app/x.py", line 4, in main',
             "    raise ValueError('x')",
             "ValueError: x",
             "INFO:     Shutting down"]
    assert spans(texts) == [(0, 5), (6, 6)]


def test_log4j_ttcc_head_announces_its_stack():
    # rule: HEADS "log4j_ttcc" (BasicConfigurator's "%r [%t] %-5p %c %x - %m")
    texts = ["0 [main] ERROR com.example.App  - boom",
             "java.lang.IllegalStateException: not started",
             "\tat com.example.App.main(App.java:9)",
             "12 [main] INFO com.example.App  - next"]
    assert spans(texts) == [(0, 2), (3, 3)]


def test_buildkit_step_prefix_is_a_writer():
    # rule: STREAM_PREFIXES "buildkit" ("#N T.TT " before each line of a build step's output)
    texts = ["#8 [3/5] RUN pip install -r requirements.txt",
             "#8 12.34 Traceback (most recent call last):",
             "#9 0.10 Collecting numpy",
             '#8 12.35   File "/usr/lib/python3/dist-packages/pip/_internal/cli/main.py", line 3, in <module>',
             "#8 12.35     main()",
             "#8 12.36 ValueError: bad requirement",
             '#8 ERROR: process "/bin/sh -c pip install -r requirements.txt" did not complete successfully: '
             'exit code: 1']
    assert groups(texts) == [[0], [1, 3, 4, 5], [2], [6]]


def test_journal_lines_without_a_host_are_the_programs_stream():
    # rule: STREAM_PREFIXES "syslog" (a copy of journalctl output that leaves the host out: "prog[pid]: ")
    p = "May 11 10:06:46 vector[2718]: "
    texts = [p + "May 11 10:06:46.440  INFO vector::topology: Removing transform \"a\"",
             p + "thread 'main' panicked at 'no entry found for key', src/libstd/collections/hash/map.rs:1025:9",
             p + "note: run with `RUST_BACKTRACE=1` environment variable to display a backtrace",
             "May 11 10:06:46 systemd[1]: vector.service: Main process exited, code=exited, status=101/n/a"]
    assert spans(texts) == [(0, 0), (1, 2), (3, 3)]


def test_rancher_viewer_prefix_and_go_file_lines_with_their_tab_dropped():
    # rules: STREAM_PREFIXES "rancher" (its log viewer copied as text), _ATTACH go_file_bare
    p = "Wed, Sep 1 2021 9:38:45 am | "
    texts = [p + "k8s.io/apimachinery/pkg/util/runtime.logPanic(0x1834020, 0x26c8970)",
             p + "k8s.io/apimachinery@v0.20.2/pkg/util/runtime/runtime.go:74 +0x95",
             p + "panic(0x1834020, 0x26c8970)",
             p + "runtime/panic.go:965 +0x1b9",
             "Wed, Sep 1 2021 9:38:46 am | I0901 09:38:46.000000       1 main.go:12] restarted"]
    assert spans(texts) == [(0, 3), (4, 4)]


def test_a_line_of_colour_codes_alone_is_a_blank_line():
    # rule: merger.terminal_text (a wrapper that colours every line of stderr colours the empty ones too)
    red = "\x1b[31m{}\x1b[0m".format
    texts = [red("Traceback (most recent call last):"), red('  File "/app/a.py", line 3, in <module>'),
             red("ValueError: inner"), red(""),
             red("The above exception was the direct cause of the following exception:"), red(""),
             red("Traceback (most recent call last):"), red('  File "/app/a.py", line 5, in <module>'),
             red("RuntimeError: outer"), red(""), red("INFO:trainer:next")]
    assert spans(texts) == [(0, 8), (10, 10)]


def test_a_line_cut_inside_a_hyperlink_escape_is_not_blank():
    # rule: rules.ANSI_RE (an OSC string is markup only once its BEL or ST ends it)
    from streams.assemble.merger import terminal_text

    link = "\x1b]8;;https://example.org/run/7\x1b\\run 7\x1b]8;;\x1b\\ started"
    assert terminal_text(link) == "run 7 started"
    cut = "\x1b]8;;https://example.org/run/7 and the rest of the line"
    assert terminal_text(cut).strip()
    texts = ["INFO start", cut, "INFO end"]
    assert spans(texts) == [(0, 0), (1, 1), (2, 2)]


def test_open_mpi_errors_are_fatal_report_is_one_event() -> None:
    # rules: TOKENS ompi_fatal/ompi_fatal_line/ompi_fatal_end, MODES ompi_fatal (help-mpi-errors.txt's
    # "mpi_errors_are_fatal" behind "[host:pid] ", and backend_fatal_no_aggregate's bare lines)
    p = "[node07:04242] "
    texts = [p + "*** An error occurred in MPI_Allreduce", p + "*** reported by process [3187015681,1]",
             p + "*** on communicator MPI_COMM_WORLD", p + "*** MPI_ERR_TRUNCATE: message truncated",
             p + "*** MPI_ERRORS_ARE_FATAL (processes in this communicator will now abort,",
             p + "***    and potentially your MPI job)",
             "*** An error occurred in MPI_Init_thread", "*** on a NULL communicator",
             "*** MPI_ERRORS_ARE_FATAL (processes in this communicator will now abort,",
             "***    and potentially your MPI job)",
             p + "Local abort before MPI_INIT completed completed successfully, but am not able to aggregate "
                 "error messages, and not able to guarantee that all other processes were killed!",
             "*** Check failure stack trace: ***"]
    assert spans(texts)[:3] == [(0, 5), (6, 9), (10, 10)]


@pytest.mark.parametrize("texts", [
    # fastai's table through fastprogress (ConsoleMasterBar.write(table=True)): a header, then a row per epoch
    ["epoch     train_loss  valid_loss  accuracy  time    ",
     "0         0.318497    0.223164    0.927000  00:13     ",
     "1         0.201754    #na#        0.941000  1:00:12     "],
    # nvidia-smi dmon: the header, its units line, then right-aligned rows ('-' where a value is not measured)
    ["# gpu    pwr  gtemp  mtemp     sm    mem    enc    dec    jpg    ofa   mclk   pclk ",
     "# Idx      W      C      C      %      %      %      %      %      %    MHz    MHz ",
     "    0     69     41     47      0      0      0      0      0      0   2619    345 ",
     "    1    631     63      -    100     40      0      0      0      0   2619   1980 "],
])
def test_a_tables_rows_are_lines_of_their_own(texts: list[str]) -> None:
    # rule: TOKENS "value_row" -> end in the single-line modes (each row is written when its epoch or interval
    # ends: neither a gdb source line nor a deeper line of the header)
    assert spans(texts) == [(i, i) for i in range(len(texts))]


def test_gdb_stop_report_keeps_its_source_line():
    # gdb's source line ("%d\t" then the text) after a stop is still the stop's
    texts = ["Breakpoint 1, main () at test.c:5", "5\t  int x = compute(3, 4);", "(gdb) "]
    assert spans(texts) == [(0, 1), (2, 2)]


def test_a_record_that_introduces_a_table_keeps_its_rows():
    # rule: MODES "body" value_row -> cont (a record ending with ':' prints what it announces below it)
    texts = ["2024-01-01 10:00:00,000 INFO results:", "0  1.0  2.0", "1  3.0  4.0",
             "2024-01-01 10:00:01,000 INFO done"]
    assert spans(texts) == [(0, 2), (3, 3)]
