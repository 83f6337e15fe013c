"""Blocks end on evidence: a record of its own right after a block, or right before one, stays alone.

Each block below ends where its printer's grammar says, or (free text) at a line that is a record
of its own. The singles are the records real training logs interleave with them: Python logging,
glog and klog, NCCL, JSON and logfmt records, launcher prefixes, vLLM, tqdm, shell prompts, plain
prints. A record before a block is part of it only when it announces it (WARN and up, or a message
ending with ':'); those are tested where the announcement is the rule under test.
"""

from __future__ import annotations

import pytest

from devtools.testing.merger import spans

BLOCKS = {
    "python_traceback": ["Traceback (most recent call last):",
                         '  File "/workspace/train.py", line 212, in <module>',
                         "    main()",
                         "RuntimeError: CUDA error: an illegal memory access was encountered"],
    "python_bare_exception": ["Traceback (most recent call last):",
                              '  File "/workspace/train.py", line 212, in <module>',
                              "    main()",
                              "KeyboardInterrupt"],
    "java_stack": ["java.lang.IllegalStateException: boom",
                   "\tat com.example.Worker.run(Worker.java:10)",
                   "\tat java.lang.Thread.run(Thread.java:748)"],
    "java_caused": ["java.lang.IllegalStateException: boom",
                    "\tat com.example.Worker.run(Worker.java:10)",
                    "Caused by: java.io.IOException: disk full",
                    "\tat com.example.Disk.write(Disk.java:3)",
                    "\t... 3 more"],
    "go_panic": ["panic: runtime error: index out of range [3] with length 3",
                 "",
                 "goroutine 1 [running]:",
                 "main.main()",
                 "\t/app/main.go:12 +0x1d",
                 "exit status 2"],
    "rust_panic": ["thread 'main' panicked at src/main.rs:3:5:",
                   "index out of bounds: the len is 3 but the index is 7",
                   "note: run with `RUST_BACKTRACE=1` environment variable to display a backtrace"],
    "rust_panic_no_note": ["thread '<unnamed>' panicked at src/lib.rs:40:9:",
                           "called `Option::unwrap()` on a `None` value"],
    "c10_frames": ["terminate called after throwing an instance of 'c10::Error'",
                   "  what():  CUDA error: device-side assert triggered",
                   "Exception raised from c10_cuda_check_implementation at ../c10/cuda/CUDAException.cpp:44 "
                   "(most recent call first):",
                   "frame #0: c10::Error::Error() + 0x57 (0x7f3c in /usr/lib/libc10.so)",
                   "frame #1: <unknown function> + 0x1c2 (0x7f3d in /usr/lib/libc10.so)"],
    "glibc_backtrace": ["/lib/x86_64-linux-gnu/libc.so.6(+0x42520) [0x7f0d1e442520]",
                        "/lib/x86_64-linux-gnu/libc.so.6(pthread_kill+0x12c) [0x7f0d1e496a7c]"],
}

SINGLES = {
    "python_logging": "2024-05-01 10:00:00,123 - trainer - INFO - step 10 done",
    "python_basic": "INFO:trainer:step 10 done",
    "glog": "I0506 12:00:00.123456  4242 loader.cc:10] Loader: ready",
    "klog": "I1201 10:00:00.123456       1 controller.go:123] Synced cache for pods",
    "nccl_info": "node1:1234:1300 [0] NCCL INFO Channel 00/02 :    0   1",
    "json": '{"level": "info", "msg": "saved checkpoint", "step": 100}',
    "json_metrics": '{"loss": 0.34, "epoch": 0.12}',
    "rank_prefixed": "[rank3]: saving checkpoint to /ckpt",
    "ray_prefixed": "(RayWorkerWrapper pid=123, ip=10.0.0.1) saving checkpoint",
    "ray_vllm": "(RayWorkerWrapper pid=123, ip=10.0.0.1) INFO 12-01 10:00:00 worker.py:10] init done",
    "vllm": "INFO 12-01 10:00:00 [file.py:12] Avg prompt throughput: 1.0 tokens/s",
    "tqdm": " 45%|\u2588\u2588\u2588\u2588\u258c     | 45/100 [00:10<00:12,  4.50it/s]",
    "prompt": "user@host:~/work$ python train.py",
    "logfmt": 'time="2024-05-01T10:00:00Z" level=info msg="started"',
    "key_value": "step=100 loss=2.17 lr=3e-4",
    "print": "Saving checkpoint to /ckpt/step_100",
    "hf_metrics": "{'loss': 2.17, 'learning_rate': 3e-05, 'epoch': 0.5}",
    "megatron": " iteration      100/   10000 | consumed samples: 1 | loss: 2.1",
}


# A headless line of text is all the printer writes in these two places, so nothing tells it from a
# print: after an exception line it is the message's next line (str(exc) and __notes__ are free
# text, ended by a record of its own), right above glibc frames it is the crash handler's message.
AFTER_IS_THE_BLOCKS = {("python_traceback", "print")}
BEFORE_IS_THE_BLOCKS = {("glibc_backtrace", "print")}


@pytest.mark.parametrize(("block", "single"), sorted(
    (b, s) for b in BLOCKS for s in SINGLES if (b, s) not in AFTER_IS_THE_BLOCKS))
def test_a_record_right_after_a_block_stays_alone(block: str, single: str) -> None:
    texts = [*BLOCKS[block], SINGLES[single]]
    n = len(texts) - 1
    assert (n, n) in spans(texts), spans(texts)


@pytest.mark.parametrize(("block", "single"), sorted(
    (b, s) for b in BLOCKS for s in SINGLES if (b, s) not in BEFORE_IS_THE_BLOCKS))
def test_a_record_right_before_a_block_stays_alone(block: str, single: str) -> None:
    texts = [SINGLES[single], *BLOCKS[block]]
    assert (0, 0) in spans(texts), spans(texts)


# -- the rules behind those boundaries --------------------------------------------------------------

def test_text_after_the_exception_line_is_its_message_until_a_record_of_its_own():
    # rule: MODES "py_msg" text -> cont (traceback.py prints the notes of add_note() under the
    # exception line; a glog record ends them)
    texts = [*BLOCKS["python_traceback"], "while building the optimizer for param group 0", "check --lr",
             SINGLES["glog"]]
    assert spans(texts) == [(0, 5), (6, 6)]


def test_a_plain_line_above_glibc_frames_is_the_handlers_own_but_a_record_is_not():
    # rule: MODES "plain" glibc_frame -> own (backtrace_symbols_fd writes frames only; the handler's
    # message is the line above, unless that line is a record of its own)
    assert spans(["Error: signal 11:", *BLOCKS["glibc_backtrace"]]) == [(0, 2)]
    assert spans([SINGLES["json"], *BLOCKS["glibc_backtrace"]]) == [(0, 0), (1, 2)]


def test_a_message_whose_exception_line_ends_with_a_colon_goes_on():
    # rule: MODES "py_msg" text -> after_colon -> py_msg_more (torch's DistBackendError names the
    # NCCL error, "Last error:" and the CUDA failure on lines of their own)
    texts = [*BLOCKS["python_traceback"][:3],
             "torch.distributed.DistBackendError: NCCL error in: ProcessGroupNCCL.cpp:3356, unhandled cuda error",
             "ncclUnhandledCudaError: Call to CUDA function failed.",
             "Last error:",
             "Cuda failure 700 'an illegal memory access was encountered'",
             "node1:1234:1300 [0] NCCL INFO comm 0x55 rank 0 nranks 8 - Abort COMPLETE"]
    assert spans(texts) == [(0, 6), (7, 7)]


def test_a_held_line_of_the_message_is_confirmed_by_indented_lines_under_it():
    # rule: MODES "py_msg" text -> cont, then indent (XLA's report under its exception line)
    texts = [*BLOCKS["python_traceback"][:3],
             "jaxlib.xla_extension.XlaRuntimeError: RESOURCE_EXHAUSTED: Out of memory allocating 6291456 bytes.",
             "Peak buffers:",
             "        Buffer 1:",
             SINGLES["python_logging"]]
    assert spans(texts) == [(0, 5), (6, 6)]


def test_a_java_stack_after_an_info_record_of_a_python_or_glog_formatter_is_its_own():
    # rule: RECORD_MODES -> "record_native" (j_exc -> announce): glog and Python logging never print
    # a Java throwable under a record
    for record in (SINGLES["glog"], SINGLES["python_logging"]):
        assert spans([record, *BLOCKS["java_stack"]]) == [(0, 0), (1, 3)]


def test_a_java_logger_record_keeps_the_throwable_it_logs_at_info():
    # rule: "record" j_exc -> expect -> record_exc, confirmed by the frames (Flink logs a failed
    # checkpoint at INFO with its exception)
    texts = ["2024-05-01 10:00:00,123 INFO  org.apache.flink.runtime.checkpoint.CheckpointCoordinator "
             "- Triggering checkpoint 1 failed",
             *BLOCKS["java_stack"]]
    assert spans(texts) == [(0, 3)]


def test_text_held_after_an_info_record_is_not_confirmed_by_a_stack_it_does_not_announce():
    # rule: MODES "record_tent" j_at -> announce: lines of text after a record and then frames are
    # another writer's exception, unless the record announced it
    texts = ["2024-05-01 10:00:00,123 INFO  com.example.Server - listening on 8080",
             "starting worker pool",
             "Exception in worker: boom",
             "\tat com.example.Worker.run(Worker.java:10)"]
    assert spans(texts) == [(0, 0), (1, 1), (2, 3)]
    announced = ["2024-05-01 10:00:00,123 ERROR com.example.Server - request failed", *texts[1:]]
    assert spans(announced) == [(0, 3)]


def test_a_key_value_record_ends_a_free_text_message():
    # rule: RECORDS "kv_pairs" (a structured record of key=value pairs)
    texts = [*BLOCKS["python_traceback"][:3], "ValueError: bad config:", "  lr must be positive",
             "step=100 loss=2.17 lr=3e-4"]
    assert spans(texts) == [(0, 4), (5, 5)]


def test_a_rust_panic_message_ends_after_its_line_without_a_note():
    # rule: MODES "rust_panic" text -> after_colon (the header's ':' announces one message line)
    texts = [*BLOCKS["rust_panic_no_note"], "Saving checkpoint to /ckpt/step_100"]
    assert spans(texts) == [(0, 1), (2, 2)]


def test_stream_labels_of_a_relayed_child_are_a_prefix():
    # rule: STREAM_PREFIXES "stdio" (accelerate's execute_subprocess_async labels each line)
    texts = ["stderr: Traceback (most recent call last):",
             'stderr:   File "/usr/bin/accelerate-launch", line 8, in <module>',
             "stderr:     sys.exit(main())",
             "stderr: subprocess.CalledProcessError: Command '['python', 'train.py']' returned non-zero exit status 1.",
             "stdout: done"]
    assert spans(texts) == [(0, 3), (4, 4)]


def test_nothing_but_a_chain_follows_an_exception_line_without_a_message():
    # rule: TOKENS "exc_bare" -> MODES "py_done" (a bare exception has no message to go on)
    texts = [*BLOCKS["python_bare_exception"],
             "kafka.errors.KafkaTimeoutError: Failed to update metadata after 60.0 secs."]
    assert spans(texts) == [(0, 3), (4, 4)]
    chained = [*BLOCKS["python_bare_exception"], "",
               "During handling of the above exception, another exception occurred:", "",
               *BLOCKS["python_traceback"]]
    assert spans(chained) == [(0, 10)]


def test_makes_error_report_ends_a_what_message():
    # rule: RECORDS "make" (GNU make reports a failed recipe as "make: *** [target] ...")
    texts = ["terminate called after throwing an instance of 'std::runtime_error'",
             "  what():  System failure (addr=0xd0114000, size=0x10000)",
             "(in file vm.cpp:329)",
             "make: *** [test] Aborted (core dumped)"]
    assert spans(texts) == [(0, 2), (3, 3)]


def test_a_line_of_text_at_column_0_ends_a_dump_whose_brackets_did_not_close():
    # rule: MODES "json" text -> end (dumps indent their inner lines; json_line / json_close continue)
    texts = ["Model args: {",
             '    "hidden_size": 4096,',
             '    "layers": [1, 2, 3',
             "Using cuda_amp half precision backend"]
    assert spans(texts) == [(0, 2), (3, 3)]
    es = ['{"type": "server", "message": "fatal error", "stacktrace": [',
          '"java.lang.IllegalStateException: boom",',
          '"at org.elasticsearch.bootstrap.Elasticsearch.init(Elasticsearch.java:163)"] }',
          SINGLES["print"]]
    assert spans(es) == [(0, 2), (3, 3)]


def test_a_dump_member_under_a_record_that_opened_no_bracket_is_a_cut_dump():
    # rule: MODES "record"/"plain" json_member -> end (the member starts "json_tail")
    texts = ['time="2024-02-21T09:30:12Z" level=info msg="Controller created service"',
             '    "train_micro_batch_size_per_gpu": 2,',
             '    "gradient_accumulation_steps": 1',
             "}"]
    assert spans(texts) == [(0, 0), (1, 3)]


def test_a_line_of_text_after_ipython_frames_is_not_the_exception_line():
    # rule: MODES "ipy" has no "text" entry (ultratb writes "Type: message" after the frames)
    texts = ["---------------------------------------------------------------------------",
             "ValueError                                Traceback (most recent call last)",
             "Cell In[3], line 1",
             "----> 1 f()",
             "[0, 0, 0, 0]"]
    assert spans(texts)[-1] == (4, 4)


def test_a_logger_named_errors_does_not_announce_the_traceback_after_its_info_record():
    # rule: ANNOUNCE_HEAD_RE (a level is a word of its own, not part of the logger's name)
    for info in ("INFO:torch.distributed.elastic.multiprocessing.errors:local_rank 1 FAILED with no error file.",
                 "2024-05-01 10:00:00,123 - uvicorn.error - INFO - Application startup complete.",
                 "2024-05-01 10:00:00,123 INFO [error_handler.py:12] retrying the request"):
        assert spans([info, *BLOCKS["python_traceback"]]) == [(0, 0), (1, 4)]
    error = "ERROR:torch.distributed.elastic.multiprocessing.errors:local_rank 1 FAILED, see below"
    assert spans([error, *BLOCKS["python_traceback"]]) == [(0, 4)]


def test_c10_frames_after_an_info_record_are_not_its_own():
    # rule: MODES "record_native" c10_raised/frame -> announce (c10 frames follow the E/F record)
    frames = BLOCKS["c10_frames"][2:]
    assert spans([SINGLES["glog"], *frames]) == [(0, 0), (1, 3)]
    error = "E0506 12:00:00.123456  4242 ProcessGroupNCCL.cpp:1234] CUDA error: device-side assert triggered"
    assert spans([error, *frames]) == [(0, 3)]


def test_a_keras_progress_line_is_a_record_of_its_own():
    # rule: RECORDS "keras_progbar" (an indented progress line is not the line above's continuation)
    texts = ["Epoch 1/10",
             "   1/1875 [..............................] - ETA: 5:23 - loss: 2.3020 - accuracy: 0.1250",
             "1875/1875 [==============================] - 5s 2ms/step - loss: 0.2000 - accuracy: 0.9400"]
    assert spans(texts) == [(0, 0), (1, 1), (2, 2)]


@pytest.mark.parametrize("line", [
    "ERROR: Unexpected bus error encountered in worker. This might be caused by insufficient shared memory (shm).",
    "srun: error: node7: task 3: Exited with exit code 1",
])
def test_a_record_of_its_own_after_the_frames_is_not_the_exception_line(line: str) -> None:
    # rule: merger._decide, BARE_TOKENS: an exception line is written bare, so a line that is a record
    # of its own (RECORDS "level_colon", "slurm") ends the traceback even where it has the exception's shape
    assert spans([*BLOCKS["python_traceback"][:3], line]) == [(0, 2), (3, 3)]


def test_frames_right_under_an_info_record_are_a_cut_stack_of_their_own():
    # rule: MODES "record" j_at -> announce (printStackTrace writes the exception line first)
    texts = ["[2024-05-07 10:55:47,711] INFO [LocalLog partition=ingest-12] Rolled new segment (kafka.log.LocalLog)",
             "\tat kafka.log.LogManager.$anonfun$cleanupLogs$3(LogManager.scala:914)",
             "\tat kafka.log.LogManager.cleanupLogs(LogManager.scala:900)"]
    assert spans(texts) == [(0, 0), (1, 2)]


def test_a_record_that_ends_with_its_throwable_keeps_the_frames():
    # rule: ANNOUNCE_BODY_RE (a qualified exception name in the message: a "%m %ex" layout)
    texts = ["2014-08-29 16:27:31,259 INFO  stram.StramLocalCluster - container-2 msg: Stopped running due to "
             "an exception. java.lang.IllegalArgumentException: Wrong FS: file:/tmp",
             "\tat org.apache.hadoop.fs.FileSystem.checkPath(FileSystem.java:642)",
             "\tat org.apache.hadoop.fs.RawLocalFileSystem.pathToFile(RawLocalFileSystem.java:69)"]
    assert spans(texts) == [(0, 2)]


def test_a_line_of_text_after_a_blank_line_does_not_continue_a_records_body():
    # rule: MODES "body" after_blank has no "text" entry (indented lines still continue the body)
    texts = ["2024-05-01 10:00:00,123 - trainer - INFO - Training arguments:",
             "lr: 3e-4",
             "  batch_size: 32",
             "",
             "Saving checkpoint to /ckpt/step_100"]
    assert spans(texts) == [(0, 2), (4, 4)]
    indented = [*texts[:4], "  warmup: 100"]
    assert spans(indented) == [(0, 4)]


def test_a_record_after_a_head_with_an_empty_message_is_not_its_message():
    # rule: merger._decide "await": the next line is the message unless it is a record of its own
    for record in (SINGLES["python_logging"], SINGLES["json"], SINGLES["nccl_info"]):
        assert spans(["WARNING:torch.distributed.run:", record]) == [(0, 0), (1, 1)]
    banner = ["WARNING:torch.distributed.run:", "*****************************************",
              "Setting OMP_NUM_THREADS environment variable for each process to be 1 in default",
              "*****************************************"]
    assert spans(banner) == [(0, 3)]


def test_airflows_task_log_record_announces_its_traceback():
    # rules: HEADS "generic" (_FIELD "{file.py:N}", _DATE_TIME "2022-11-09, 09:59:40 UTC"): the level
    # after Airflow's braced source field is the record's, so an ERROR record keeps its traceback
    for head in ("[2022-11-09, 09:59:40 UTC] {taskinstance.py:1851} ERROR - Task failed with exception",
                 "[2022-11-09 09:59:40,123] {taskinstance.py:1851} ERROR - Task failed with exception"):
        debug = head.replace("ERROR - Task failed with exception", "DEBUG - Task Duration set to 0.06")
        assert spans([head, *BLOCKS["python_traceback"], debug]) == [(0, 4), (5, 5)]


def test_a_line_of_another_writer_among_a_tables_rows_ends_the_table():
    # rule: MODES "table_dash" one_write (a table is one print; separators around a script's own
    # prints, with another writer's line between them, are lines of their own)
    rule = "-" * 60
    texts = [rule, "Epoch 5: 28/04/2021 07:49:46",
             "wandb: Network error (ReadTimeout), entering retry loop.",
             "gen_sine - 16/16 (0m 3s)  | loss = 0.000", rule]
    assert spans(texts) == [(0, 0), (1, 1), (2, 2), (3, 3), (4, 4)]
    table = [rule, "Successful requests:    100", "Benchmark duration (s): 12.3", rule]
    assert spans(table) == [(0, 3)]


def test_a_chain_marker_after_a_cut_tracebacks_exception_line_continues_it():
    # rules: MODES "plain"/"java_head" after_blank py_chain (traceback.py writes the marker only
    # after an exception line)
    for exc in ("jax.errors.SimplifiedTraceback: For simplicity, JAX has removed its internal frames.",
                "java.lang.IllegalStateException: boom"):
        texts = [exc, "", "The above exception was the direct cause of the following exception:", "",
                 *BLOCKS["python_traceback"], SINGLES["python_logging"]]
        assert spans(texts) == [(0, 7), (8, 8)]


def test_a_blank_line_among_java_frames_does_not_cut_the_stack():
    # rule: MODES "java_frames" after_blank j_at (a frame cannot stand without its exception line)
    texts = [*BLOCKS["java_stack"], "", "\tat com.example.Main.main(Main.java:5)", SINGLES["print"]]
    assert spans(texts) == [(0, 4), (5, 5)]


def test_ucx_signal_report_with_its_log_prefix_bfd_warnings_and_resolved_frames():
    # rules: TOKENS "ucx_sig" (ucs_log_fatal_error's prefix), "ucx_bt" (no tid), "ucx_frame"; MODES
    # "ucx" text -> tent (libbfd's warnings, confirmed by the backtrace header)
    texts = ["[cgpu12:56309:2:56362] Caught signal 11 (Segmentation fault: address not mapped to object at 0x20)",
             "BFD: Dwarf Error: Can't find .debug_ranges section.",
             "==== backtrace ====",
             "0 0x0000000000012ce0 __funlockfile()  :0",
             "    1  /usr/lib/libucs.so.0(+0x22ba4) [0x2aab23b7aba4]",
             "=================================",
             "srun: error: cgpu12: task 0: Segmentation fault"]
    assert spans(texts) == [(0, 5), (6, 6)]


def test_lldb_bt_all_continues_across_thread_headers_without_the_star():
    # rules: TOKENS "lldb_thread" (star optional), MODES "c10_frames"/"lldb_bt" lldb_thread
    texts = ["    frame #19: 0x0000000100005864 python`main + 56",
             "    frame #20: 0x000000018fd020e0 dyld`start + 2360",
             "  thread #26",
             "    frame #0: 0x0000000190052b70 libsystem_kernel.dylib`poll + 8",
             SINGLES["prompt"]]
    assert spans(texts) == [(0, 3), (4, 4)]


def test_an_error_record_keeps_the_remote_frames_under_it_but_an_info_record_does_not():
    # rule: _ATTACH py_file -> announce (Ray's "Unhandled error ...: ray::X()" carries the remote
    # traceback's frames without a header)
    frames = ['  File "/usr/lib/python3.12/dist-packages/vllm/worker/worker_base.py", line 468, in execute_method',
              "    raise e"]
    error = "2025-01-29 07:44:33,389 ERROR worker.py:422 -- Unhandled error: ray::RayWorkerWrapper.execute_method()"
    assert spans([error, *frames]) == [(0, 2)]
    assert spans([SINGLES["python_logging"], *frames]) == [(0, 0), (1, 2)]


def test_a_chain_marker_confirms_the_line_held_after_the_exception_line():
    # rule: MODES "py_msg_more" py_chain (the message's last line, then the chain)
    texts = [*BLOCKS["python_traceback"], "RuntimeError",
             "The above exception was the direct cause of the following exception:", "",
             *BLOCKS["python_traceback"]]
    assert spans(texts) == [(0, 10)]


def test_gdbs_stop_report_is_a_record_of_its_own():
    # rule: RECORDS "gdb_signal" (ends a free-text part: here torchrun's box cut before its closing rule)
    texts = ["torch.distributed.elastic.multiprocessing.errors.ChildFailedError: ",
             "============================================================",
             "train.py FAILED",
             "Failures:",
             "  <NO_OTHER_FAILURES>",
             "Program received signal SIGABRT, Aborted."]
    assert spans(texts) == [(0, 4), (5, 5)]
