"""Grammars of the Python frameworks training clusters run (Ray, PySpark, TensorFlow, Unsloth): one test per rule,
on lines those frameworks printed (``corpus/printers/{ray,pyspark,tensorflow}``). Each fails with its rule
removed."""

from __future__ import annotations

from tests.unit.assemble.test_grammars import closes_at, groups, spans

# -- Ray -------------------------------------------------------------------------------------------------

RAY_HEAD = "\x1b[36mray::load_chained()\x1b[39m (pid=14778, ip=192.0.2.2)"


def test_ray_task_error_chain_goes_on_at_its_remote_traceback_header():
    # rule: TOKENS "ray_tb" + MODES "py_chain" (RayTaskError.__str__ writes "ray::f() (pid=.., ip=..)"
    # where the remote traceback's "Traceback (most recent call last):" was, after a chain marker too)
    texts = ["ray.exceptions.RayTaskError(RuntimeError): " + RAY_HEAD,
             "           ^^^^^^^^^^^^",
             '  File "/app/driver.py", line 43, in _parse',
             "    return int(open(path).read())",
             "FileNotFoundError: [Errno 2] No such file or directory: '/ckpt/index.json'",
             "",
             "The above exception was the direct cause of the following exception:",
             "",
             RAY_HEAD,
             '  File "/app/driver.py", line 51, in load_chained',
             '    raise RuntimeError(f"cannot load checkpoint index {path}") from e',
             "RuntimeError: cannot load checkpoint index /ckpt/index.json",
             "2026-12-01 17:45:39,623 - trainer - INFO - step 4633/10000 loss=2.5489"]
    assert groups(texts) == [list(range(12)), [12]]


def test_ray_actor_creation_error_a_worker_forwards_opens_its_remote_traceback():
    # rule: TOKENS "ray_tb" + STARTS "ray_tb" (the worker's "Exception raised in creation task: ..." ends
    # with the header of the traceback that follows: orphan caret lines of Ray's hidden frames, then frames)
    p = "\x1b[36m(Trainer pid=6517)\x1b[0m "
    texts = [p + "Exception raised in creation task: The actor died because of an error raised in its creation "
                 "task, \x1b[36mray::Trainer.__init__()\x1b[39m (pid=6517, ip=192.0.2.2, actor_id=c20ec09910658f37fd"
                 "334f0301000000, repr=<driver.Trainer object at 0x7fd7b03e8500>)",
             p + "           ^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^",
             p + '  File "/app/driver.py", line 58, in __init__',
             p + '    raise RuntimeError("CUDA device 0 not available in actor")',
             p + "RuntimeError: CUDA device 0 not available in actor",
             "2026-12-02 01:16:09,534\tINFO worker.py:2038 -- Started a local Ray instance."]
    assert groups(texts) == [list(range(5)), [5]]


# -- PySpark ---------------------------------------------------------------------------------------------

def test_pyspark_driver_traceback_after_the_jvms_error_record_is_its_own():
    # rule: HEADS "log4j_yy" + RECORD_MODES "record_jvm" (Spark's log4j2 layout "%d{yy/MM/dd HH:mm:ss} %p
    # %c{1}: %m%n%ex" writes Java throwables; the Python traceback after it is the driver's)
    texts = ["26/12/02 01:23:07 ERROR TaskSetManager: Task 0 in stage 0.0 failed 1 times; aborting job",
             "Traceback (most recent call last):",
             '  File "/app/job.py", line 43, in main',
             '    df.select(udf(parse_tokens, "int")("text").alias("n")).collect()',
             "pyspark.errors.exceptions.captured.AnalysisException: [UNRESOLVED_COLUMN] cannot be resolved.",
             "2026-12-01 17:45:39,623 - trainer - INFO - step 4633/10000 loss=2.5489"]
    assert groups(texts) == [[0], [1, 2, 3, 4], [5]]


def test_python_exception_message_that_quotes_a_workers_traceback_after_a_colon():
    # rule: MODES "py_msg" "py_tb": after_colon (PySpark's PythonException: "An exception was thrown from the
    # Python worker:" and the worker's traceback, in the driver's exception message)
    texts = ["Traceback (most recent call last):",
             '  File "/pyspark/errors/exceptions/captured.py", line 262, in deco',
             "    raise converted from None",
             "pyspark.errors.exceptions.captured.PythonException: An exception was thrown from the Python worker:",
             "Traceback (most recent call last):",
             '  File "/app/job.py", line 30, in parse_tokens',
             '    raise ValueError(f"cannot tokenize record {s!r}")',
             "ValueError: cannot tokenize record 'bad record'",
             "2026-12-01 17:45:39,623 - trainer - INFO - step 4633/10000 loss=2.5489",
             "Traceback (most recent call last):",
             '  File "/app/job.py", line 12, in <module>',
             "KeyError: 'x'"]
    # (a traceback after a message that does not end with ':' is another one)
    assert groups(texts) == [list(range(8)), [8], [9, 10, 11]]


def test_a_json_record_on_one_line_does_not_take_the_traceback_after_it():
    # rule: NO_EXC_BODY_RE's one-line JSON object (PySpark's JSONFormatter writes the exception into the record:
    # its "msg" names org.apache.spark.sql.AnalysisException, the driver's own traceback follows)
    texts = ['{"ts": "2026-12-02 02:00:59.343", "level": "ERROR", "logger": "SQLQueryContextLogger", "msg": '
             '"[UNRESOLVED_COLUMN] cannot be resolved.", "context": {}, "exception": {"class": "Py4JJavaError", '
             '"msg": "An error occurred while calling o29.sql.\\n: org.apache.spark.sql.AnalysisException: x", '
             '"stacktrace": []}}',
             "Traceback (most recent call last):",
             '  File "/app/job.py", line 47, in main',
             '    spark.sql("SELECT tokens FROM range(3)").collect()',
             "pyspark.errors.exceptions.captured.AnalysisException: [UNRESOLVED_COLUMN] cannot be resolved."]
    assert groups(texts) == [[0], [1, 2, 3, 4]]


def test_pyspark_jvm_stacktrace_paragraph_and_its_frames_after_the_plans_empty_line():
    # rule: TOKENS msg_para "JVM stacktrace:" + MODES py_msg_more after_blank "j_at" (captured.py appends
    # "\n\nJVM stacktrace:\n" + the Java stack, whose exception message, the plan, ends with a newline)
    texts = ["Traceback (most recent call last):",
             '  File "/pyspark/errors/exceptions/captured.py", line 262, in deco',
             "    raise converted from None",
             "pyspark.errors.exceptions.captured.AnalysisException: [UNRESOLVED_COLUMN] `tokens` cannot be resolved.",
             "'Project ['tokens]",
             "+- Range (0, 3, step=1)",
             "",
             "",
             "JVM stacktrace:",
             "org.apache.spark.sql.AnalysisException: [UNRESOLVED_COLUMN] `tokens` cannot be resolved.",
             "'Project ['tokens]",
             "+- Range (0, 3, step=1)",
             "",
             "\tat org.apache.spark.sql.errors.QueryCompilationErrors$.unresolvedAttributeError(QueryCompilationErrors"
             ".scala:551)",
             "\tat java.base/java.lang.Thread.run(Thread.java:840)",
             "2026-12-01 17:45:38,602 INFO  org.example.train.Trainer - checkpoint 35 saved"]
    assert groups(texts) == [list(range(15)), [15]]


# -- TensorFlow ------------------------------------------------------------------------------------------

TF_W = ("W0000 00:00:1796174796.167605   21235 local_rendezvous.cc:412] Local rendezvous is aborting with status: "
        "INVALID_ARGUMENT: loss is not finite : Tensor had NaN values")


def test_tensorflow_cpp_record_does_not_take_the_python_traceback_after_it():
    # rule: HEADS "glog_cc" + RECORD_MODES "record_cpp" (a glog/absl record naming a C++ source is C++ code's:
    # its message goes on with the status's node line, but the Python traceback after it is the caller's)
    texts = [TF_W,
             "\t [[{{node CheckNumerics}}]]",
             "Traceback (most recent call last):",
             '  File "/app/fit.py", line 43, in s_check_numerics',
             "    step(tf.zeros(2))",
             "tensorflow.python.framework.errors_impl.InvalidArgumentError: {{function_node __wrapped__Reshape}} "
             "Input to reshape is a tensor with 6 values, but the requested shape has 4 [Op:Reshape]"]
    assert groups(texts) == [[0, 1], [2, 3, 4, 5]]


def test_tensorflow_cpu_feature_guard_message_over_two_lines():
    # rule: TOKENS "tf_cpu_hint" + MODES "record_cpp" (cpu_feature_guard.cc's INFO record, both generations)
    texts = ["I0000 00:00:1796174793.362337   21189 cpu_feature_guard.cc:227] This TensorFlow binary is optimized to "
             "use available CPU instructions in performance-critical operations.",
             "To enable the following instructions: AVX2 AVX512F FMA, in other operations, rebuild TensorFlow with "
             "the appropriate compiler flags.",
             "2022-06-01 10:00:00.123456: I tensorflow/core/platform/cpu_feature_guard.cc:193] This TensorFlow binary "
             "is optimized with oneAPI Deep Neural Network Library (oneDNN) to use the following CPU instructions in "
             "performance-critical operations:  AVX2 FMA",
             "To enable them in other operations, rebuild TensorFlow with the appropriate compiler flags.",
             "4/4 - 0s - 121ms/step - loss: 0.3668"]
    assert groups(texts) == [[0, 1], [2, 3], [4]]


def test_tensorflow_node_definition_frames_separated_by_blank_lines():
    # rule: TOKENS "tf_detected"/"tf_node_line" + MODES "tf_node" (error_interpolation.py in TF 2.11+: each
    # frame of the node's definition site followed by an empty line, the op's message, the node line)
    texts = ["Traceback (most recent call last):",
             '  File "/tf/python/eager/execute.py", line 53, in quick_execute',
             "    tensors = pywrap_tfe.TFE_Py_Execute(ctx._handle, device_name, op_name,",
             "tensorflow.python.framework.errors_impl.InvalidArgumentError: Graph execution error:",
             "",
             "Detected at node CheckNumerics defined at (most recent call last):",
             '  File "/app/fit.py", line 57, in <module>',
             "",
             '  File "/app/fit.py", line 41, in step',
             "",
             "loss is not finite : Tensor had NaN values",
             "\t [[{{node CheckNumerics}}]] [Op:__inference_step_11]",
             "Saving model checkpoint to /ckpt/step_1200"]
    assert groups(texts) == [list(range(12)), [12]]


# -- Unsloth ---------------------------------------------------------------------------------------------

def test_unsloth_banners_are_one_event_each():
    # rule: unsloth_top/unsloth_art/unsloth_end, mode "unsloth" -- Unsloth prints its trainer and model-loading
    # banners as one string of five lines, the sloth drawn down the first 14 columns (f"{chr(92)}{chr(92)}"
    # in newer versions, one backslash in older ones); the line after the drawing is another write
    texts = ["==((====))==  Unsloth 2025.3.9: Fast Qwen2 patching. Transformers: 4.49.0.",
             "   \\\\   /|    GPU: NVIDIA A10G. Max memory: 22.184 GB. Platform: Linux.",
             "O^O/ \\_/ \\    Torch: 2.6.0+cu124. CUDA: 8.6. CUDA Toolkit: 12.4. Triton: 3.2.0",
             "\\        /    Bfloat16 = TRUE. FA [Xformers = 0.0.29. FA2 = False]",
             ' "-____-"     Free license: http://github.com/unslothai/unsloth',
             "Unsloth: Fast downloading is enabled - ignore downloading bars which are red colored!",
             "==((====))==  Unsloth - 2x faster free finetuning | Num GPUs = 1",
             "   \\   /|    Num examples = 1,000 | Num Epochs = 3",
             "O^O/ \\_/ \\    Batch size per device = 4 | Gradient Accumulation steps = 2",
             "\\        /    Total batch size = 8 | Total steps = 375",
             ' "-____-"     Number of trainable parameters = 41,943,040',
             "  0%|          | 0/375 [00:00<?, ?it/s]"]
    assert spans(texts) == [(0, 4), (5, 5), (6, 10), (11, 11)]
    assert closes_at(texts[:5]) == [0, 0, 0, 0, 1]  # the drawing's last line ends the banner at once


def test_unsloth_banner_under_a_logging_head_and_cut_short():
    # rule: as above; the trainer's banner comes through transformers' logger.warning_once in some versions,
    # so a formatter's head is on its first line only; a banner cut before its last line ends at the next record
    head = "2025-03-02 05:38:03,057 - transformers.trainer - WARNING - "
    texts = [head + "==((====))==  Unsloth - 2x faster free finetuning | Num GPUs = 1",
             "   \\\\   /|    Num examples = 521 | Num Epochs = 1",
             "O^O/ \\_/ \\    Batch size per device = 2 | Gradient Accumulation steps = 4",
             "\\        /    Total batch size = 8 | Total steps = 30",
             ' "-____-"     Number of trainable parameters = 65,536,000',
             "==((====))==  Unsloth: Conversion from QLoRA to GGUF information",
             "   \\\\   /|    [0] Installing llama.cpp might take 3 minutes.",
             "2025-03-02 05:40:00,000 - INFO - saving"]
    assert spans(texts) == [(0, 4), (5, 6), (7, 7)]


# -- PyTorch 2's compiler stack ---------------------------------------------------------------------------

TORCH_LOG = "V1202 10:25:10.065000 20058 torch/_dynamo/guards.py:6374] [0/1] [__recompiles] "


def test_torch_logs_artifact_record_at_debug_level_is_one_event():
    # rule: HEADS "glog" with torch._logging's V level (TorchLogsFormatter writes the head on every line of a
    # record; TORCH_LOGS=recompiles,graph_breaks records are DEBUG: "V")
    texts = [TORCH_LOG + "Recompiling function scale in /app/compile.py:83",
             TORCH_LOG + "    triggered by the following guard failure(s):",
             TORCH_LOG + "    - 0/0: n == 0",
             TORCH_LOG.replace("10.065000", "10.174000") + "Recompiling function scale in /app/compile.py:83",
             TORCH_LOG.replace("10.065000", "10.174000") + "    - 0/1: tensor 'x' rank mismatch. expected 1, actual 2",
             "done."]
    assert groups(texts) == [[0, 1, 2], [3, 4], [5]]


def test_inductor_cpp_compile_error_keeps_its_command_and_the_compilers_output():
    # rule: TOKENS "msg_para" "Command:" / "Output:" (torch/_inductor/exc.py CppCompileError: "C++ compile
    # error\n\nCommand:\n<cmd>\n\nOutput:\n<diagnostics>", then dynamo's hint after two blank lines)
    texts = ["Traceback (most recent call last):",
             '  File "/app/compile.py", line 40, in s_inductor',
             "    torch.compile(f)(torch.ones(8))",
             "torch._inductor.exc.InductorError: CppCompileError: C++ compile error",
             "",
             "Command:",
             "g++ /tmp/ic/nq/cnqgd4ae.main.cpp -D TORCH_INDUCTOR_CPP_WRAPPER -O3 -shared -fPIC -o /tmp/ic/c.so",
             "",
             "Output:",
             "/tmp/ic/nq/cnqgd4ae.main.cpp:12:5: error: 'tmp0' was not declared in this scope",
             "   12 |     tmp0 = in_ptr0[x0];",
             "      |     ^~~~",
             "",
             "",
             "Set TORCHDYNAMO_VERBOSE=1 for the full Dynamo stack trace (please do this especially if you're "
             "reporting a bug to PyTorch). For even more developer context, set TORCH_LOGS=\"+dynamo\"",
             "2026-12-01 17:45:39,623 - trainer - INFO - step 4633/10000 loss=2.5489"]
    assert groups(texts) == [list(range(15)), [15]]


def test_export_data_dependent_guard_error_keeps_its_paragraphs():
    # rule: TOKENS "msg_para" (fx/experimental/symbolic_shapes.py _make_data_dependent_error and _blame_user_code,
    # export/__init__.py's pointer to draft_export: paragraphs of the message after blank lines)
    texts = ["Traceback (most recent call last):",
             '  File "/app/compile.py", line 62, in s_export',
             "    torch.export.export(Branch(), (torch.ones(3),))",
             "torch.fx.experimental.symbolic_shapes.GuardOnDataDependentSymNode: Could not guard on data-dependent "
             "expression Eq(u0, 1) (unhinted: Eq(u0, 1)).  (Size-like symbols: none)",
             "",
             "consider using data-dependent friendly APIs such as guard_or_false, guard_or_true and "
             "statically_known_true.",
             'For more information, run with TORCH_LOGS="dynamic"',
             "",
             "For C++ stack trace, run with TORCHDYNAMO_EXTENDED_DEBUG_CPP=1",
             "",
             "The following call raised this error:",
             '  File "/app/compile.py", line 53, in branch',
             "    if x.sum() > 0:",
             "",
             "",
             "The error above occurred when calling torch.export.export. If you would like to view some more "
             "information about this error, you can replace your `export()` call with `draft_export()`.",
             "I1201 17:45:02.198727  70315 trainer.cc:642] step 8435 took 1.047s"]
    assert groups(texts) == [list(range(16)), [16]]


def test_fx_graph_code_printed_whole_with_blank_lines_inside():
    # rule: TOKENS "py_def" + MODES "py_def" (fx/graph_module.py print_readable: the class, its forward and the
    # node groups with blank lines between them; torch.export prints it before it raises)
    texts = ["class GraphModule(torch.nn.Module):",
             '    def forward(self, L_flat_args_0_: "f32[3][1]cpu"):',
             "        l_flat_args_0_ = L_flat_args_0_",
             "",
             "        # File: /app/compile.py:48 in branch, code: if x.sum() > 0:",
             '        sum_1: "f32[][]cpu" = l_flat_args_0_.sum();  l_flat_args_0_ = None',
             "",
             "Traceback (most recent call last):",
             '  File "/app/compile.py", line 62, in s_export',
             "torch._dynamo.exc.Unsupported: Data-dependent branching"]
    assert groups(texts) == [[0, 1, 2, 3, 4, 5], [7, 8, 9]]


# -- pytest ------------------------------------------------------------------------------------------------

def test_pytest_report_of_one_test_is_one_event_to_the_next_title():
    # rule: TOKENS "pt_title" + MODES "pt_report" (_pytest/terminal.py summary_failures: the "_" rule with the
    # test's name, its longrepr, its captured sections with whatever the test logged, to the next report)
    texts = ["_______________________________ test_loss_value ________________________________",
             "Traceback (most recent call last):",
             '  File "/app/tests/test_train.py", line 27, in test_loss_value',
             "    assert loss_at(10) == pytest.approx(0.2, abs=1e-3)",
             "AssertionError: assert 0.22727272727272727 == 0.2 ± 0.001",
             "  ",
             "  comparison failed",
             "----------------------------- Captured stdout call -----------------------------",
             "step 10: computing loss",
             "",
             "------------------------------ Captured log call -------------------------------",
             "ERROR    trainer:test_train.py:26 loss diverged at step 10",
             "______________________________ test_shard_loader _______________________________",
             "",
             "    def test_shard_loader():",
             ">       load(17)",
             "E       FileNotFoundError: /data/shard-00017.arrow",
             "",
             "test_train.py:30: FileNotFoundError",
             "=============================== warnings summary ===============================",
             "2026-12-01 17:45:39,623 - trainer - INFO - step 4633/10000 loss=2.5489"]
    assert groups(texts) == [list(range(12)), list(range(12, 19)), [19], [20]]


def test_pytest_report_ends_at_a_section_rule_with_a_short_fill():
    # rule: TOKENS "pt_eq" (write_sep("=", title) shrinks the fill to one "=" each side of a long title)
    texts = ["_________________________________ test_config _________________________________",
             "E   AssertionError: assert {'lr': 0.0003...atch_size': 8} == {'lr': 0.0003..., 'epochs': 3}",
             "= 3 failed, 2 passed, 1 warning, 1 error, 4 skipped, 2 xfailed, 1 xpassed in 0.60s =",
             "done."]
    assert groups(texts) == [[0, 1], [2], [3]]


def test_tensorflow1_op_error_message_runs_through_its_op_frames_to_see_above():
    # rules: TOKENS tf1_caused_by_op, tf1_original_op, tf1_see_above (TF1 errors_impl.py OpError.__str__: the
    # message, "Caused by op 'X', defined at:" and the op's frames, "...which was originally created as op",
    # then "<Type> (see above for traceback): <message>", each part after an empty line)
    texts = ["Traceback (most recent call last):",
             '  File "train.py", line 12, in <module>',
             "    sess.run(train_op)",
             "tensorflow.python.framework.errors_impl.AbortedError: Horovod has been shut down.",
             "",
             "Caused by op 'HorovodBroadcast_w_0', defined at:",
             '  File "train.py", line 8, in <module>',
             "    bcast = hvd.broadcast_global_variables(0)",
             "",
             "...which was originally created as op 'w', defined at:",
             '  File "train.py", line 5, in <module>',
             "    w = tf.Variable(0)",
             "",
             "AbortedError (see above for traceback): Horovod has been shut down.",
             "",
             "I0101 00:00:00.000000 1 x.cc:1] next"]
    assert spans(texts) == [(0, 13), (15, 15)]
    # a copy cut above "Caused by op": its frames and the rest of the message are still one event
    assert spans(texts[5:]) == [(0, 8), (10, 10)]
