"""Grammars of excerpts: a traceback whose top a paste or a search index cut, starting in the middle of
what its printer wrote. Each test names the rule it guards; removing or loosening that rule makes it fail.
"""

from __future__ import annotations

from devtools.testing.merger import spans


def test_a_cut_traceback_keeps_the_source_line_above_its_first_whole_frame():
    # rule: MODES "plain" py_file -> "src_above" (traceback.py writes "  File ..." then the source line
    # 4 blanks in: an excerpt that starts at a source line starts in a frame cut above it)
    texts = ["    return self.__get_result()",
             '  File "/usr/lib/python3.10/concurrent/futures/_base.py", line 403, in __get_result',
             "    raise self._exception",
             "ValueError: bad shard",
             "2024-05-01 12:00:00,000 INFO step 3"]
    assert spans(texts) == [(0, 3), (4, 4)]
    # (a source line under the caret line ("    ~~~^^^") is deeper than "  File" as well)


def test_an_indented_line_of_another_shape_or_below_a_line_does_not_take_a_cut_traceback():
    # rule: "src_above" takes only a block of one indented line without a head: a line of text with an
    # indented line under it, or a line at the traceback's own indent, is not a frame's source line
    texts = ["loading shards:",
             "    shard 1 ok",
             '  File "/x/train.py", line 3, in main',
             "    main()",
             "KeyError: 'a'"]
    assert spans(texts) == [(0, 1), (2, 4)]
    texts = ["  step 1 done",
             '  File "/x/train.py", line 3, in main',
             "    main()",
             "KeyError: 'a'"]
    assert spans(texts) == [(0, 0), (1, 3)]


# the middle of an IPython 8 VerboseTB traceback: numbered source lines, the hidden-frames line between
# the blank lines that separate frames, the next frame's header
IPY_MIDDLE = [
    "    682         init_cache=init_cache,",
    "    683         output_attentions=output_attentions,",
    "    686     )",
    "",
    "    [... skipping hidden 2 frame]",
    "",
    "File ~/.venv/lib/python3.10/site-packages/flax/linen/linear.py:976, in Embed.setup(self)",
    "    975 def setup(self):",
    "--> 976   self.embedding = self.param(",
    "    977     'embedding',",
    "   (...)",
    "",
    "ValueError: embedding dims do not match",
    "2024-05-01 12:00:00,000 INFO step 3",
]


def test_the_middle_of_an_ipython_traceback_is_one_event():
    # rules: STARTS "ipy_src" -> MODES "ipy_cut" (numbered source lines held until a frame's header or a
    # hidden-frames line confirms them), TOKENS ipy_skip in "ipy"
    assert spans(IPY_MIDDLE) == [(0, 12), (13, 13)]
    # rule: _ATTACH "ipy_src" ends a line or record before it (numbered source lines are a frame's, not
    # deeper lines of another writer's record)
    record = "[Mon Dec 05 13:47:11 2005] [error] mod_jk child workerEnv in error state 6"
    assert spans([record, *IPY_MIDDLE]) == [(0, 0), (1, 13), (14, 14)]
    assert spans(["Processing:   0%|          | 0/50 [00:00<?, ?it/s]", *IPY_MIDDLE]) == [(0, 0), (1, 13), (14, 14)]
    # (under a record that introduces them they are its body)
    texts = ["2024-05-01 12:00:00,000 INFO top layers:", "    1  conv1", "    2  conv2"]
    assert spans(texts) == [(0, 2)]


def test_an_ipython_excerpt_cut_at_a_frames_header_is_one_event():
    # rules: STARTS "ipy_frame" -> MODES "ipy_cut_frame": the header is ultratb's when its numbered source
    # lines follow; else it is a line of its own
    assert spans(IPY_MIDDLE[6:]) == [(0, 6), (7, 7)]
    texts = ["File ~/notes/todo.py:12, in the morning", "remember the milk"]
    assert spans(texts) == [(0, 0), (1, 1)]


def test_hidden_frames_line_inside_a_whole_ipython_traceback():
    # rule: "ipy" after_blank ipy_skip (VerboseTB writes "    [... skipping hidden N frame]" between frames)
    texts = ["---------------------------------------------------------------------------",
             "ValueError                                Traceback (most recent call last)",
             "Cell In[3], line 1",
             "----> 1 model.init(key, x)",
             "",
             "    [... skipping hidden 9 frame]",
             "",
             "File ~/.venv/lib/python3.10/site-packages/flax/linen/linear.py:976, in Embed.setup(self)",
             "--> 976   self.embedding = self.param(",
             "",
             "ValueError: embedding dims do not match"]
    assert spans(texts) == [(0, 10)]


def test_numbered_lines_without_a_frame_are_not_a_traceback():
    # rule: "ipy_cut" holds its lines (tent): without a frame's header they are read again on their own,
    # and a frame list of another printer that numbers its frames keeps its own shape (UCX's " 0  /lib..")
    texts = ["   12 files copied", "   13 files skipped", "done"]
    assert spans(texts) == [(0, 0), (1, 1), (2, 2)]
    # rule: TOKENS ipy_num is VerboseTB's own layout (numbers right-aligned to 7 columns): a deeper line
    # that starts with a number elsewhere is still a deeper line of the line above (ptxas under pip)
    texts = ["      ptxas info    : Function properties for _Z25flash_bwd_dot_do_o_kernel",
             "          0 bytes stack frame, 0 bytes spill stores, 0 bytes spill loads",
             "      ptxas info    : Used 46 registers, 696 bytes cmem[0]"]
    assert spans(texts) == [(0, 1), (2, 2)]
    texts = ["Caught signal 11 (Segmentation fault: address not mapped to object at address 0x7eff867fbcc0)",
             "==== backtrace (tid:  74387) ====",
             " 0  /usr/lib/libucs.so.0(ucs_handle_error+0x10c) [0x7eced5f1a08c]",
             " 1  /usr/lib/libucs.so.0(+0x2640c) [0x7eced5f1a40c]",
             "=================================",
             "done"]
    assert spans(texts) == [(0, 4), (5, 5)]


XFORMERS_MESSAGE = [
    "NotImplementedError: No operator found for `memory_efficient_attention_forward` with inputs:",
    "     query       : shape=(2, 498, 8, 32) (torch.float16)",
    "     p           : 0.0",
    "`fa2F@2.5.7-pt` is not supported because:",
    "    attn_bias type is <class 'torch.Tensor'>",
    "`cutlassF-pt` is not supported because:",
    "    attn_bias.stride(-2) % 8 != 0 (attn_bias.stride() = (1984032, 248004, 498, 1))",
    "2024-05-01 12:00:00,000 INFO step 3",
]


def test_xformers_dispatch_error_is_one_message_also_without_its_traceback():
    # rule: MODES "plain" xf_unsupported (dispatch.py writes "`op` is not supported because:" and its
    # reasons into the one NotImplementedError message, after the inputs)
    assert spans(XFORMERS_MESSAGE) == [(0, 6), (7, 7)]
    frames = ["Traceback (most recent call last):", '  File "/x/attn.py", line 3, in forward',
              "    out = xops.memory_efficient_attention(q, k, v)"]
    assert spans(frames + XFORMERS_MESSAGE) == [(0, 9), (10, 10)]


# -- copies indented as a whole ------------------------------------------------------------------------

def test_a_paste_indented_as_a_whole_is_read_without_its_indent():
    # rule: merger._unshift -- a record head after at most 4 blanks (no formatter writes glog's or Python
    # logging's head indented) says the copy indented every line: glog's LogMessage::Fail writes "*** Check
    # failure stack trace: ***" and the frames after its F record, the shell's "Aborted" is a line of its own
    texts = ["  F0621 18:12:44.710584 4242 loader.cc:16] Check failed: n > 0 (0 vs. 0) empty shard",
             "  *** Check failure stack trace: ***",
             "      @     0x559e2704711a  google::LogMessage::Fail()",
             "      @     0x559e27046dd5  main",
             "  Aborted (core dumped)"]
    assert spans(texts) == [(0, 3), (4, 4)]


def test_an_indented_paste_keeps_the_traceback_grammar_and_ends_at_a_line_at_column_0():
    # rule: as above, four blanks: traceback.py's exception line "Exception: " (torch.multiprocessing.spawn's
    # message starts with a blank line, then the child's traceback) is read at its own column, its message
    # goes on after the blank line; a line at column 0 ends the copy's indent, so the traceback after it
    # keeps its frames' indent
    ind = "    "
    texts = [ind + "2024-05-01 12:00:00,123 - INFO - train - begin epoch 1",
             ind + "Traceback (most recent call last):",
             ind + '  File "/app/train.py", line 9, in <module>',
             ind + "    mp.spawn(run, nprocs=2)",
             ind + "Exception: ",
             "",
             ind + "-- Process 1 terminated with the following error:",
             ind + "Traceback (most recent call last):",
             ind + '  File "/app/worker.py", line 2, in run',
             ind + "    1 / 0",
             ind + "ZeroDivisionError: division by zero",
             "2024-05-01 12:00:09,000 - INFO - eval - start",
             "Traceback (most recent call last):",
             '  File "/app/eval.py", line 3, in <module>',
             "    main()",
             "ValueError: no checkpoint"]
    assert spans(texts) == [(0, 0), (1, 10), (11, 11), (12, 15)]
    # (and once a line came at column 0, an indented line is read with its indent again: under a record
    # that announces it, a deeper line is its own)
    texts = [ind + "I0501 12:00:00.000001 7 a.cc:1] start",
             "I0501 12:00:01.000001 7 a.cc:2] shards:",
             ind + "I0501 12:00:01.000002 7 a.cc:3] shard 0 ready"]
    assert spans(texts) == [(0, 0), (1, 2)]


def test_a_formatters_own_indented_head_is_no_indented_copy():
    # rule: merger._unshift -- a head its formatter writes indented (tracing-subscriber's Pretty format puts
    # two blanks before the time) is read as it is: its "at"/"in" lines stay the record's
    texts = ["  2024-05-01T12:00:00.000001Z ERROR loader: config invalid:",
             "  lr: must be > 0",
             "    at src/main.rs:117",
             "    in loader::load with rank: 3",
             "",
             "  2024-05-01T12:00:00.000002Z  INFO loader: retry",
             "    at src/main.rs:120",
             ""]
    assert spans(texts) == [(0, 3), (5, 6)]
