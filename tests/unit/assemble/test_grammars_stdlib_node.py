"""Grammars of CPython's standard-library printers beyond ``traceback`` itself (logging's ``stack_info``,
asyncio's exception handler, concurrent.futures' and multiprocessing.pool's remote tracebacks, unittest's
report) and of Node.js's uncaught exception report and ``util.inspect`` of errors. Lines are the printers'
own output (``corpus/printers/pystdlib``, ``corpus/printers/node``); each test names the rule it guards.
"""

from __future__ import annotations

from test_grammars import groups

NEXT = "2026-12-01 17:44:18,359 - trainer - INFO - step 5393/10000 loss=3.2821 lr=3.0e-04"
PRINT = "Epoch 3/10"


def test_logging_stack_info_stays_with_its_record():
    # rule: TOKENS "py_stack" + _ATTACH "py_stack" (logging's Logger.findCaller writes the stack with the record)
    texts = ["2026-12-02 00:28:19,421 - trainer - INFO - checkpoint saved",
             "Stack (most recent call last):",
             '  File "/app/train.py", line 125, in <module>',
             "    main()",
             '  File "/app/train.py", line 42, in save',
             '    logging.getLogger("trainer").info("checkpoint saved", stack_info=True)',
             PRINT]
    assert groups(texts) == [[0, 1, 2, 3, 4, 5], [6]]


def test_logging_stack_info_after_the_records_traceback():
    # rule: MODES py_msg "py_stack" (exc_info and stack_info together: the traceback, then the stack)
    texts = ["[2026-12-02 00:28:19,667] [ERROR] [trainer] batch failed",
             "Traceback (most recent call last):",
             '  File "/app/train.py", line 54, in step',
             "    load_batch(0)",
             "KeyError: 'labels'",
             "Stack (most recent call last):",
             '  File "/app/train.py", line 56, in step',
             '    log.error("batch failed", exc_info=True, stack_info=True)',
             PRINT]
    assert groups(texts) == [list(range(8)), [8]]


def test_asyncio_callback_exception_with_its_source_traceback():
    # rule: MODES "py_stack" (asyncio's "source_traceback: Object created at ..." frames, then the traceback)
    texts = ["Exception in callback _cb(3) at /app/train.py:79",
             "handle: <Handle _cb(3) at /app/train.py:79 created at /app/train.py:95>",
             "source_traceback: Object created at (most recent call last):",
             '  File "/app/train.py", line 97, in main',
             "    asyncio.run(main(), debug=True)",
             "Traceback (most recent call last):",
             '  File "/app/train.py", line 80, in _cb',
             "    return load_batch(n)",
             "KeyError: 'labels'",
             NEXT]
    assert groups(texts) == [list(range(9)), [9]]


def test_remote_traceback_in_quotes_then_the_chain_is_one_event():
    # rule: TOKENS "py_remote"/"py_triple" + STARTS "py_remote" (concurrent.futures.process._RemoteTraceback)
    texts = ["concurrent.futures.process._RemoteTraceback: ",
             '"""',
             "Traceback (most recent call last):",
             '  File "/usr/lib/python3.12/concurrent/futures/process.py", line 263, in _process_worker',
             "    r = call_item.fn(*call_item.args, **call_item.kwargs)",
             "KeyError: 'labels'",
             '"""',
             "",
             "The above exception was the direct cause of the following exception:",
             "",
             "Traceback (most recent call last):",
             '  File "/app/train.py", line 26, in main',
             "    ex.submit(load_batch, 3).result()",
             "KeyError: 'labels'",
             NEXT]
    assert groups(texts) == [list(range(14)), [14]]


def test_unittest_failure_from_its_rule_to_the_message():
    # rule: TOKENS "ut_case" + MODES table_eq "ut_case" -> ut_head -> ut_rule (unittest's printErrorList)
    texts = ["=" * 70,
             "ERROR: test_step (__main__.StepTest.test_step)",
             "-" * 70,
             "Traceback (most recent call last):",
             '  File "/app/test_train.py", line 112, in test_step',
             "    load_batch(0)",
             "KeyError: 'labels'",
             "",
             "=" * 70,
             "FAIL: test_loss (__main__.StepTest.test_loss)",
             "-" * 70,
             "Traceback (most recent call last):",
             '  File "/app/test_train.py", line 115, in test_loss',
             '    self.assertLess(2.31, 1.0, "loss did not go down")',
             "AssertionError: 2.31 not less than 1.0 : loss did not go down",
             NEXT]
    assert groups(texts) == [list(range(7)), list(range(8, 15)), [15]]


def test_node_uncaught_report_from_the_throw_site_to_the_version_line():
    # rule: TOKENS "node_src"/"node_caret"/"node_version" + STARTS "node_src" (src/node_errors.cc)
    texts = ["/app/worker.js:9",
             "  return shards[i].rows;",
             "                   ^",
             "",
             "TypeError: Cannot read properties of undefined (reading 'rows')",
             "    at loadShard (/app/worker.js:9:20)",
             "    at Function.executeUserEntryPoint [as runMain] (node:internal/modules/run_main:164:12)",
             "    at node:internal/main/run_main_module:28:49",
             "",
             "Node.js v20.20.2",
             PRINT]
    assert groups(texts) == [list(range(10)), [10]]


def test_v8_frame_of_a_method_called_under_another_name():
    # rule: TOKENS "j_at" (V8's "f [as g] (loc)"): the frame stays in the stack
    texts = ["Error: shard 7 unreachable",
             "    at fetchShard (/app/worker.js:1:38)",
             "    at Function.executeUserEntryPoint [as runMain] (node:internal/modules/run_main:164:12)",
             "    at node:internal/main/run_main_module:28:49",
             NEXT]
    assert groups(texts) == [[0, 1, 2, 3], [4]]


def test_console_error_of_an_error_with_a_cause_to_its_closing_brace():
    # rule: TOKENS "node_at_open"/"node_more"/"node_close" + MODES java_frames "node_at_open" -> node_props
    texts = ["Error: config load failed",
             "    at load (/app/worker.js:1:65)",
             "    ... 5 lines matching cause stack trace ...",
             "    at node:internal/main/run_main_module:28:49 {",
             "  [cause]: SyntaxError: Expected property name or '}' in JSON at position 1",
             "      at JSON.parse (<anonymous>)",
             "      at load (/app/worker.js:1:30)",
             "}",
             PRINT]
    assert groups(texts) == [list(range(8)), [8]]


def test_print_stack_frames_end_at_a_tqdm_bar():
    # rule: TOKENS "tqdm_bar" + MODES py_frames "tqdm_bar" (a bar is indented by at most three blanks,
    # a frame's source line by four: frames without an exception line end at it)
    texts = ['  File "/app/train.py", line 125, in <module>',
             "    main()",
             '  File "/app/train.py", line 60, in where',
             "    traceback.print_stack()",
             "  8%|          | 89/1000 [00:14<01:58,  7.15it/s]"]
    assert groups(texts) == [[0, 1, 2, 3], [4]]


# -- valgrind and UBSan ----------------------------------------------------------------------------

def test_valgrind_messages_end_at_the_empty_message_after_them():
    # rule: STREAM_PREFIXES "valgrind" (the prefix alone is the writer's blank line: it closes a message)
    # and TOKENS/STARTS "vg_banner" (the preamble's fixed lines are one message)
    texts = ["==11320== Memcheck, a memory error detector",
             "==11320== Copyright (C) 2002-2022, and GNU GPL'd, by Julian Seward et al.",
             "==11320== Using Valgrind-3.19.0 and LibVEX; rerun with -h for copyright info",
             "==11320== Command: ./worker invalid_read",
             "==11320== ",
             "==11320== Invalid read of size 4",
             "==11320==    at 0x1091D8: sum_shard (worker.c:14)",
             "==11320==    by 0x1092CE: main (worker.c:25)",
             "==11320==  Address 0x4a40050 is 0 bytes after a block of size 16 alloc'd",
             "==11320==    at 0x48417B4: malloc (in /usr/libexec/valgrind/vgpreload_memcheck-amd64-linux.so)",
             "==11320==    by 0x109209: alloc_shard (worker.c:15)",
             "==11320== ",
             "==11320== Conditional jump or move depends on uninitialised value(s)",
             "==11320==    at 0x10932A: main (worker.c:29)",
             "==11320== ",
             "==11320== For lists of detected and suppressed errors, rerun with: -s",
             "==11320== ERROR SUMMARY: 2 errors from 2 contexts (suppressed: 0 from 0)"]
    assert groups(texts) == [[0, 1, 2, 3, 4], list(range(5, 12)), [12, 13, 14], [15], [16]]


def test_ubsan_runtime_error_takes_its_frames_and_no_line_of_text():
    # rule: STARTS "san_runtime" -> MODES "ubsan" (UBSan's report is the line, its notes and its stack)
    texts = ["worker.c:41:9: runtime error: signed integer overflow: 2147483647 + 1 cannot be represented in "
             "type 'int'",
             "Training completed.",
             "worker.c:41:9: runtime error: signed integer overflow: 2147483647 + 1 cannot be represented in "
             "type 'int'",
             "    #0 0x557c6da34797 in main /app/worker.c:41",
             "    #1 0x7fec73245249 in __libc_start_call_main ../sysdeps/nptl/libc_start_call_main.h:58",
             "",
             "done."]
    assert groups(texts) == [[0], [1], [2, 3, 4], [6]]


def test_open_mpi_signal_report_to_its_end_line():
    # rule: TOKENS "ompi_sig"/"ompi_sig_line"/"ompi_sig_end" + MODES "ompi_sig" (opal/util/stacktrace.c)
    texts = ["[vm:14768] *** Process received signal ***",
             "[vm:14768] Signal: Segmentation fault (11)",
             "[vm:14768] Signal code: Address not mapped (1)",
             "[vm:14768] Failing at address: (nil)",
             "[vm:14768] [ 0] /lib/x86_64-linux-gnu/libc.so.6(+0x3c050)[0x7f75cd51e050]",
             "[vm:14768] [1,1]<stderr>:[ 1] [1,1]<stderr>:./allreduce(+0x11cd)[0x565100e111cd]",
             "[vm:14768] *** End of error message ***",
             "-" * 74,
             "Primary job  terminated normally, but 1 process returned",
             "a non-zero exit code. Per user-direction, the job has been aborted.",
             "-" * 74]
    assert groups(texts) == [list(range(7)), list(range(7, 11))]


# -- JAX ---------------------------------------------------------------------------------------------

def test_jax_filtering_note_after_the_message_stays_with_the_traceback():
    # rule: TOKENS "jax_note" + MODES table_dash "jax_note" (traceback_util.py adds "-"*20 + the note)
    texts = ["Traceback (most recent call last):",
             '  File "/app/step.py", line 17, in loss_fn',
             "    return jnp.dot(x, w).sum()",
             "FloatingPointError: invalid value (nan) encountered in log",
             "--------------------",
             "For simplicity, JAX has removed its internal frames from the traceback of the following exception. "
             "Set JAX_TRACEBACK_FILTERING=off to include these.",
             NEXT]
    assert groups(texts) == [list(range(6)), [6]]


def test_jax_unfiltered_stack_trace_then_the_chain_is_one_event():
    # rule: TOKENS "msg_para" (JAX's "The stack trace below excludes ...") + MODES table_dash "py_chain"
    texts = ["Traceback (most recent call last):",
             '  File "/app/step.py", line 23, in s_shape',
             "    loss_fn(w, x)",
             "jax._src.traceback_util.UnfilteredStackTrace: TypeError: dot_general requires contracting dimensions",
             "",
             "The stack trace below excludes JAX-internal frames.",
             "The preceding is the original exception that occurred, unmodified.",
             "",
             "--------------------",
             "",
             "The above exception was the direct cause of the following exception:",
             "",
             "Traceback (most recent call last):",
             '  File "/app/step.py", line 23, in s_shape',
             "    loss_fn(w, x)",
             "TypeError: dot_general requires contracting dimensions to have the same shape, got (5,) and (4,).",
             NEXT]
    assert groups(texts) == [list(range(16)), [16]]


def test_a_rule_in_a_message_survives_another_ranks_lines():
    # rule: MODES "py_msg_rule" (not one_write: traceback.py writes the message line by line)
    texts = ["[rank3]:Traceback (most recent call last):",
             '[rank3]:  File "/app/step.py", line 23, in s_shape',
             "[rank3]:    loss_fn(w, x)",
             "[rank3]:jax._src.traceback_util.UnfilteredStackTrace: TypeError: dot_general requires contracting",
             "[rank3]:",
             "[rank3]:The stack trace below excludes JAX-internal frames.",
             "[rank3]:",
             "[rank3]:--------------------",
             '[rank5]:  File "/app/step.py", line 17, in loss_fn',
             "[rank3]:",
             "[rank3]:The above exception was the direct cause of the following exception:",
             "[rank3]:",
             "[rank3]:Traceback (most recent call last):",
             '[rank3]:  File "/app/step.py", line 23, in s_shape',
             "[rank3]:    loss_fn(w, x)",
             "[rank3]:TypeError: dot_general requires contracting dimensions to have the same shape",
             "[rank3]:" + NEXT]
    assert [g for g in groups(texts) if g[0] == 0] == [[0, 1, 2, 3, 4, 5, 6, 7, 9, 10, 11, 12, 13, 14, 15]]


def _report(head: str, exc: str) -> list[str]:
    return [head, "Traceback (most recent call last):", '  File "/app/train.py", line 12, in close',
            "    self.handle.release()", exc]


def test_shutdown_reports_written_back_to_back_are_each_their_own():
    # rule: RECORDS "py_report" (sys.unraisablehook and atexit write one report after another at shutdown;
    # the next head is not a further line of the exception message above it)
    for head in ("Exception ignored in: <function Loader.__del__ at 0x7f3a2c1e0a60>",
                 "Error in atexit._run_exitfuncs:", "Error in sys.exitfunc:"):
        texts = _report(head, "RuntimeError: main thread is not in main loop") * 2 + [NEXT]
        assert groups(texts) == [[0, 1, 2, 3, 4], [5, 6, 7, 8, 9], [10]], head


def test_thread_logging_and_asyncio_reports_after_an_exception_line_start_anew():
    # rule: RECORDS "py_report" (threading.excepthook, logging.Handler.handleError, asyncio's default handler)
    first = _report("Exception in thread Thread-3 (_pin_memory_loop):", "OSError: [Errno 3] No such process")
    for head in ("Exception in thread Thread-4:", "--- Logging error ---", "Task exception was never retrieved",
                 "Future exception was never retrieved",
                 "Exception in callback _raise_exception_on_finish(<Task finishe...>) at engine.py:38"):
        texts = [*first, head, "Traceback (most recent call last):", '  File "/app/x.py", line 3, in f',
                 "    g()", "ValueError: boom"]
        assert groups(texts) == [[0, 1, 2, 3, 4], [5, 6, 7, 8, 9]], head


def test_java_uncaught_exception_line_is_not_a_python_thread_report():
    # rule: RECORDS "py_report" leaves Java's quoted thread name to its own grammar
    texts = [*_report("Exception in thread Thread-3:", "ValueError: x: y:"),
             'Exception in thread "main" java.lang.IllegalStateException: closed:']
    assert groups(texts)[0][:5] == [0, 1, 2, 3, 4]


def test_warning_whose_source_line_lost_its_indentation_keeps_it():
    # rule: TOKENS "warn_src_bare" + MODES py_warn (a notebook's output pasted as text: the warn call at column 0)
    texts = ["/usr/lib/python3.10/site-packages/torch/utils/data/dataloader.py:554: UserWarning: This DataLoader "
             "will create 8 worker processes in total.",
             "warnings.warn(_create_warning_msg(",
             PRINT]
    assert groups(texts) == [[0, 1], [2]]


def test_opennmt_error_handler_message_carries_the_childs_traceback():
    # rule: TOKENS "onmt_ignored"/"onmt_ignored_end" + MODES "onmt_ignored" (OpenNMT-py's ErrorHandler raises
    # Exception("\n\n-- Tracebacks above this line can probably\n" + 17 blanks + "be ignored --\n\n" + trace))
    texts = ["Traceback (most recent call last):",
             '  File "train.py", line 146, in <module>',
             "    main(opt)",
             '  File "/app/train.py", line 103, in signal_handler',
             "    raise Exception(msg)",
             "Exception: ",
             "",
             "-- Tracebacks above this line can probably",
             "                 be ignored --",
             "",
             "Traceback (most recent call last):",
             '  File "/app/train.py", line 61, in run',
             "    single_main(opt, device_id)",
             "RuntimeError: CUDA out of memory.",
             NEXT]
    assert groups(texts) == [list(range(14)), [14]]


def test_dataloader_message_pasted_without_the_parents_traceback_keeps_the_workers():
    # rule: TOKENS "py_orig_tb" + MODES plain (torch's ExceptionWrapper message: "Caught ... in DataLoader worker
    # process N." then "Original Traceback (most recent call last):" and the worker's traceback)
    for first in ("Caught ValueError in DataLoader worker process 0.",
                  "ValueError: Caught ValueError in DataLoader worker process 3."):
        texts = [first,
                 "Original Traceback (most recent call last):",
                 '  File "/usr/lib/python3.10/torch/utils/data/_utils/worker.py", line 308, in _worker_loop',
                 "    data = fetcher.fetch(index)",
                 "ValueError: too many values to unpack (expected 2)",
                 NEXT]
        assert groups(texts) == [[0, 1, 2, 3, 4], [5]], first


def test_torchscript_interpreter_trace_stays_in_the_message():
    # rule: TOKENS "ts_failed" + MODES "ts_failed" (a traced module's error in torch 1.x: the op's message, "The
    # above operation failed in interpreter.", then the trace's header and its "path(line): fn" lines)
    texts = ["Traceback (most recent call last):",
             '  File "/app/train.py", line 639, in run',
             "    outs = mod(*inputs)",
             "RuntimeError: Input type (CUDAFloatType) and weight type (CUDAHalfType) should be the same",
             "The above operation failed in interpreter.",
             "Traceback (most recent call last):",
             "/usr/lib/python3.6/site-packages/torch/nn/modules/conv.py(342): conv2d_forward",
             "/usr/lib/python3.6/site-packages/torch/nn/modules/conv.py(345): forward",
             NEXT]
    assert groups(texts) == [list(range(8)), [8]]
