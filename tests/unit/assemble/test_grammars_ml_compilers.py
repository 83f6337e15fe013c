"""Grammars of the errors ML compilers and frameworks other than PyTorch's eager runtime print into training logs
(JAX's filtered tracebacks, TensorFlow's statuses, IPython's frames of them): one test per rule, on lines in
the shapes those printers write (``corpus/wild/dev29``). Each fails with its rule removed."""

from __future__ import annotations

from tests.unit.assemble.test_grammars import groups

NEXT = "2026-12-01 17:44:18,359 - trainer - INFO - step 5393/10000 loss=3.2821 lr=3.0e-04"


# -- JAX -------------------------------------------------------------------------------------------------

def test_jax_filtered_stack_trace_note_above_then_the_chain_is_one_event():
    # rule: TOKENS "msg_para" (jax/traceback_util.py's first _jax_message_append: "The stack trace above
    # excludes JAX-internal frames." under FilteredStackTrace's message, then the rule and the original's chain)
    texts = ["Traceback (most recent call last):",
             '  File "train.py", line 15, in <module>',
             "    step(params, batch)",
             "jax.traceback_util.FilteredStackTrace: AssertionError: shapes do not match",
             "",
             "The stack trace above excludes JAX-internal frames.",
             "The following is the original exception that occurred, unmodified.",
             "",
             "--------------------",
             "",
             "The above exception was the direct cause of the following exception:",
             "",
             "Traceback (most recent call last):",
             '  File "train.py", line 15, in <module>',
             "    step(params, batch)",
             "AssertionError: shapes do not match",
             NEXT]
    assert groups(texts) == [list(range(16)), [16]]


def test_jax_unfiltered_stack_trace_line_where_a_paste_starts_takes_its_message():
    # rule: TOKENS "jax_stack_exc" + STARTS (UnfilteredStackTrace's message is the original exception's, over
    # lines: the exception line of a traceback whose frames were cut above it)
    texts = ["jax._src.traceback_util.UnfilteredStackTrace: jax._src.errors.ConcretizationTypeError: Abstract tracer "
             "value encountered where concrete value is expected: Traced<ShapedArray(bool[])>with<DynamicJaxprTrace>",
             "The problem arose with the `bool` function.",
             "",
             "  operation a:bool[] = eq b c",
             "    from line /app/model.py:56 (__call__)",
             "",
             NEXT]
    assert groups(texts) == [[0, 1, 2, 3, 4], [6]]


def test_a_person_s_words_right_under_the_exception_line_are_not_its_message():
    # rule: MODES "py_msg"/"ipy_msg" "prose_ends" (a copy that removed the paste's fence leaves the reporter's
    # sentence right under the exception line; no runtime writes "I" or "my" of itself: rules.PROSE_RE)
    texts = ["Traceback (most recent call last):",
             '  File "./src/main.py", line 720, in <module>',
             "    = update(params_flow, params_van, keys, data_acc)",
             "jaxlib.xla_extension.XlaRuntimeError: RESOURCE_EXHAUSTED: Out of memory while trying to allocate "
             "3743729664 bytes.",
             "It is clear that my gpu is out of memory, and I want to check which lines caused this.",
             "Traceback (most recent call last):",
             '  File "/app/step.py", line 23, in s_shape',
             "    loss_fn(w, x)",
             "jax._src.traceback_util.UnfilteredStackTrace: ValueError: not enough values to unpack",
             "Does it give any hint as to what I've done wrong?"]
    assert groups(texts) == [[0, 1, 2, 3], [4], [5, 6, 7, 8], [9]]


def test_a_person_s_words_end_a_message_known_to_span_lines_and_ipython_s():
    # rule: MODES "py_msg_more"/"ipy_msg" "prose_ends" (after a message's further line, and under ultratb's
    # exception line)
    texts = ["Traceback (most recent call last):",
             '  File "/app/fit.py", line 43, in <module>',
             "    model.fit(x, y)",
             "tensorflow.python.framework.errors_impl.InvalidArgumentError: Graph execution error:",
             "  Matrix size-incompatible: In[0]: [1,3], In[1]: [4,2]",
             "I tried a smaller batch but it fails the same way.",
             "---------------------------------------------------------------------------",
             "ValueError                                Traceback (most recent call last)",
             "<ipython-input-3-1f2e> in <module>",
             "----> 1 f()",
             "",
             "ValueError: shapes (1,3) and (4,2) not aligned",
             "My guess is the reshape above."]
    assert groups(texts) == [[0, 1, 2, 3, 4], [5], list(range(6, 12)), [12]]


def test_jax_unfiltered_stack_trace_after_frames_is_still_the_exception_line():
    # rule: SOFT_STARTS "jax_stack_exc" (after a traceback's frames it is read as the exception line there)
    texts = ["Traceback (most recent call last):",
             '  File "/app/step.py", line 23, in s_shape',
             "    loss_fn(w, x)",
             "jax._src.traceback_util.UnfilteredStackTrace: TypeError: dot_general requires contracting dimensions",
             NEXT]
    assert groups(texts) == [[0, 1, 2, 3], [4]]


def test_jax_note_rule_is_the_message_s_own_where_a_paste_stops_at_it():
    # rule: TOKENS "jax_orig" + MODES "jax_orig"/"jax_rule" (_jax_message_append ends with an empty line and 20
    # dashes: the message's rule, not a table's opening one, also with nothing after it)
    texts = ["Traceback (most recent call last):",
             '  File "/app/step.py", line 23, in s_shape',
             "    loss_fn(w, x)",
             "jax._src.traceback_util.UnfilteredStackTrace: TypeError: dot_general requires contracting dimensions",
             "",
             "The stack trace below excludes JAX-internal frames.",
             "The preceding is the original exception that occurred, unmodified.",
             "",
             "--------------------"]
    assert groups(texts) == [list(range(9))]


def test_ipython_exception_then_jax_note_after_the_blank():
    # rule: MODES "ipy_msg" after_blank "msg_para" (ultratb prints the message whole: JAX's note is its paragraph)
    texts = ["UnfilteredStackTrace                      Traceback (most recent call last)",
             "<ipython-input-42-1daea13ed585> in <module>",
             "----> 3 measure_number_dead_neurons(net_relu.bind(params))",
             "",
             "UnfilteredStackTrace: flax.errors.JaxTransformError: Jax transforms and Flax models cannot be mixed.",
             "",
             "The stack trace below excludes JAX-internal frames.",
             "The preceding is the original exception that occurred, unmodified.",
             "",
             "--------------------",
             "",
             "The above exception was the direct cause of the following exception:",
             "",
             "Traceback (most recent call last):",
             '  File "/app/step.py", line 3, in <module>',
             "flax.errors.JaxTransformError: Jax transforms and Flax models cannot be mixed.",
             NEXT]
    assert groups(texts) == [list(range(16)), [16]]


# -- TensorFlow ------------------------------------------------------------------------------------------

def test_tensorflow_oom_hint_stays_with_the_status_message_it_ends():
    # rule: TOKENS "tf_oom_hint" + _ATTACH (TF 1's "(see above for traceback)" message pasted alone: its node
    # line, then the runtime's OOM hint)
    texts = ["ResourceExhaustedError (see above for traceback): OOM when allocating tensor with shape[128,3,8,128] "
             "and type float on /job:localhost/replica:0/task:0/device:GPU:0 by allocator GPU_0_bfc",
             "         [[node G/Tile (defined at /app/networks.py:66) ]]",
             "Hint: If you want to see a list of allocated tensors when OOM happens, add "
             "report_tensor_allocations_upon_oom to RunOptions for current allocation info.",
             NEXT]
    assert groups(texts) == [[0, 1, 2], [3]]


def test_tensorflow_oom_hint_after_the_node_line_of_a_graph_execution_error():
    # rule: MODES "tf_node_end" takes "tf_oom_hint" (TF 2: the hint under "\t [[{{node N}}]]")
    texts = ["Traceback (most recent call last):",
             '  File "/tf/python/eager/execute.py", line 53, in quick_execute',
             "    tensors = pywrap_tfe.TFE_Py_Execute(ctx._handle, device_name, op_name,",
             "tensorflow.python.framework.errors_impl.ResourceExhaustedError: Graph execution error:",
             "",
             "Detected at node model/dense/MatMul defined at (most recent call last):",
             '  File "/app/fit.py", line 57, in <module>',
             "",
             "OOM when allocating tensor with shape[22436962,512] and type float on "
             "/job:localhost/replica:0/task:0/device:GPU:0 by allocator GPU_0_bfc",
             "\t [[{{node model/dense/MatMul}}]]",
             "Hint: If you want to see a list of allocated tensors when OOM happens, add "
             "report_tensor_allocations_upon_oom to RunOptions for current allocation info. This isn't available "
             "when running in Eager mode.",
             NEXT]
    assert groups(texts) == [list(range(11)), [11]]


# -- IPython's ultratb -----------------------------------------------------------------------------------

def test_ipython_cut_source_lines_then_the_exception_line_after_the_blank():
    # rule: MODES "ipy_cut" after_blank "exc_line" (ultratb ends the last frame with an empty line, then
    # writes the exception line: the numbered lines above were that frame's)
    texts = ["   1157     raise TypeError(",
             '   1158       int, size, "The error arose in jax.numpy.reshape.")',
             "",
             "TypeError: Shapes must be 1D sequences of concrete values of integer type, got (Traced<int32[]>,).",
             NEXT]
    assert groups(texts) == [[0, 1, 2, 3], [4]]


def test_ipython_frames_without_source_then_a_linked_frame_and_the_exception():
    # rule: TOKENS "ipy_frame" ("<decorator-gen-N> in f(...)") + MODES "ipy_cut_frame" after_blank (a frame
    # whose file has no source is its header alone, then ultratb's empty line and the next frame)
    texts = ["<decorator-gen-178> in set_make_frame(self, mf)",
             "",
             "<decorator-gen-128> in get_frame(self, t)",
             "",
             "/usr/local/lib/python3.10/dist-packages/tensorflow/python/eager/execute.py in quick_execute(op_name)",
             "     51     ctx.ensure_initialized()",
             "---> 52     tensors = pywrap_tfe.TFE_Py_Execute(ctx._handle, device_name, op_name,",
             "",
             "InvalidArgumentError: Graph execution error:",
             NEXT]
    assert groups(texts) == [list(range(9)), [9]]


def test_ipython_graph_execution_error_then_the_node_definition_site():
    # rule: MODES "ipy_msg" after_blank "tf_detected" (error_interpolation.py's block after the message's
    # empty line, as after traceback.py's exception line)
    texts = ["File ~/lib/site-packages/tensorflow/python/eager/execute.py:53, in quick_execute(op_name, ctx, name)",
             "     52   ctx.ensure_initialized()",
             "---> 53   tensors = pywrap_tfe.TFE_Py_Execute(ctx._handle, device_name, op_name,",
             "",
             "InvalidArgumentError: Graph execution error:",
             "",
             "Detected at node 'while/MatMul' defined at (most recent call last):",
             '    File "/app/runpy.py", line 197, in _run_module_as_main',
             "      return _run_code(code, main_globals, None,",
             "Node: 'while/MatMul'",
             "Matrix size-incompatible: In[0]: [1,3], In[1]: [4,2]",
             "\t [[{{node while/MatMul}}]] [Op:__inference_predict_function_812]",
             NEXT]
    assert groups(texts) == [list(range(12)), [12]]


# -- gin-config ------------------------------------------------------------------------------------------

def test_gin_location_lines_stay_with_an_exception_line_pasted_alone():
    # rule: TOKENS "gin_loc" in MODES "java_head" (augment_exception_message_and_reraise's lines under a dotted
    # exception line, the traceback above it cut; under a bare one "plain" takes them as deeper lines)
    texts = ["tensorflow.python.framework.errors_impl.InternalError: cudaSetDevice() on GPU:0 failed. Status: "
             "CUDA-capable device(s) is/are busy or unavailable",
             '  In file "/app/configs/runs/eval.gin", line 3',
             "    import app.tasks",
             NEXT,
             "AttributeError: 'tuple' object has no attribute 'rank'",
             "  In call to configurable 'DqnAgent' (<function DqnAgent.__init__ at 0x7f2c0e0b3e18>)",
             NEXT]
    assert groups(texts) == [[0, 1, 2], [3], [4, 5], [6]]


# -- ONNX Runtime's .NET binding -------------------------------------------------------------------------

def test_dotnet_rethrow_marker_between_frames_of_one_exception():
    # rule: TOKENS "dotnet_marker" in MODES "java_frames" (.NET's "--- End of stack trace from previous
    # location ---" where an async method rethrew, between the "   at " frames of one exception)
    texts = ["Microsoft.ML.OnnxRuntime.OnnxRuntimeException: [ErrorCode:RuntimeException] Non-zero status code "
             "returned while running Add node. Name:'Add_221'",
             "   at Microsoft.ML.OnnxRuntime.NativeApiStatus.VerifySuccess(IntPtr nativeStatus)",
             "   at Microsoft.ML.OnnxRuntime.InferenceSession.<RunAsync>b__0(IntPtr status)",
             "--- End of stack trace from previous location ---",
             "   at Microsoft.ML.OnnxRuntime.InferenceSession.<RunAsync>d__75.MoveNext()",
             NEXT]
    assert groups(texts) == [[0, 1, 2, 3, 4], [5]]
