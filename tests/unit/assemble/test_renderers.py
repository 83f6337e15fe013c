"""Python tracebacks as third-party renderers and loggers print them (loguru, Rich, IPython, VS Code's
Jupyter log), from ``corpus/wild/dev14``. Each test names the rule it guards; removing that rule makes it fail.
"""

from __future__ import annotations

from devtools.testing.merger import groups


def spans(texts: list[str]) -> list[tuple[int, int]]:
    return [(g[0], g[-1]) for g in groups(texts)]


def test_rich_panel_whose_top_edge_lost_its_left_half():
    # rule: TOKENS rich_tb, the title without "╭─" (a copy that starts at the title)
    texts = ["Traceback (most recent call last) ────────────────────────────────╮",
             "│ in <module>:4                                                                                    │",
             "│                                                                                                  │",
             "│ /home/u/miniconda3/lib/python3.10/site-packages/transformers/modeling_utils.py:2777  │",
             "│ in from_pretrained                                                                               │",
             "│ ❱ 2777 │   │   │   ) = cls._load_pretrained_model(                                               │",
             "╰──────────────────────────────────────────────────────────────────────────────────────────────────╯",
             "AttributeError: 'NoneType' object has no attribute 'cget_col_row_stats'",
             "[INFO] next"]
    assert spans(texts) == [(0, 7), (8, 8)]


def test_loguru_values_where_an_excerpt_starts_belong_to_the_frames_below():
    # rule: TOKENS py_value, STARTS py_value -> MODES py_values (held until a frame line confirms them)
    texts = ["        │             └ tensor([[[[ 0.7591,  0.7591,  0.7419,  ..., -2.1179, -2.1179, -2.1179],",
             "        │                         [ 0.7591,  0.7591,  0.7419,  ..., -2.1179, ...",
             "        └ CascadeRCNN(",
             '  File "/opt/conda/lib/python3.6/site-packages/torch/nn/modules/module.py", line 532, in __call__',
             "    result = self.forward(*input, **kwargs)",
             "             │    │        │        └ {}",
             "             │    └ <bound method CascadeRCNN.forward>",
             "             └ CascadeRCNN(",
             "RuntimeError: CUDA out of memory.",
             "[INFO] next"]
    assert spans(texts) == [(0, 8), (9, 9)]


def test_loguru_values_without_a_frame_below_stay_lines_of_their_own():
    # rule: MODES py_values (the held lines are released when no frame line confirms them)
    texts = ["    │   └ 0",
             "    └ 1234",
             "[INFO] next"]
    assert spans(texts) == [(0, 0), (1, 1), (2, 2)]


def test_a_shell_prompt_after_an_exception_line_is_a_line_of_its_own():
    # rule: RECORDS prompt_dir (zsh's "dir $" without user@host, PowerShell's "PS C:\dir> ")
    texts = ["2024-11-21 15:28:15.393 | ERROR    | __main__:func:13 - ",
             "Traceback (most recent call last):",
             "",
             '  File "/home/u/loguru/a.py", line 18, in <module>',
             "    func(1234, 0)",
             "    └ <function func at 0x7121083272e0>",
             "",
             "ZeroDivisionError: division by zero",
             "programming/loguru $",
             "(venv) PS C:\\Users\\u\\bot> python main.py"]
    assert spans(texts) == [(0, 7), (8, 8), (9, 9)]


def test_a_record_that_introduces_a_traceback_keeps_it_after_a_blank_line():
    # rule: MODES body after_blank "py_tb" (the record's message ends with ':')
    texts = ["2024-01-01 12:00:00,123 ERROR Exception in message handler:",
             "",
             "Traceback (most recent call last):",
             '  File "/x.py", line 1, in f',
             "    g()",
             "NameError: name 'g' is not defined",
             "2024-01-01 12:00:01,000 INFO next"]
    assert spans(texts) == [(0, 5), (6, 6)]


def test_vscode_jupyter_log_head_on_every_line_of_a_kernel_traceback():
    # rule: HEADS vscode_kernel (repeated on every chunk of the kernel's stderr; the log doubles newlines)
    p = "Warn 12:06:22: StdErr from Kernel Process "
    texts = ["Info 12:06:22: Execute Cell 8 ~/notebooks/a.ipynb",
             p + "[IPKernelApp] ERROR | Exception in message handler:",
             "",
             p + "Traceback (most recent call last):",
             "",
             p + '  File "/tmp/ipykernel_11358/939499826.py", line 1, in <module>',
             "",
             p + "    process_carriers()",
             "",
             p + "NameError: name 'process_carriers' is not defined"]
    assert spans(texts) == [(0, 0), (1, 9)]
