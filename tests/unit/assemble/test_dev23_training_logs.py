"""Lines met in corpus/wild/dev23 (Python tracebacks in GPU training framework logs and the lines around them:
pip's build output, rich's boxes, torch's launchers). Inputs follow the printers' own code; each test names the
rule it guards, and removing that rule makes it fail.
"""

from __future__ import annotations

from devtools.testing.merger import groups


def test_pip_records_indented_under_a_requirement_are_records_of_their_own():
    # rule: TOKENS "pip_status" (pip's IndentingFormatter indents each record by indent_log()'s level; none of
    # them continues the record above it)
    texts = ["Collecting flash-attn",
             "  Downloading flash_attn-1.0.1.tar.gz (1.9 MB)",
             "     \u2501\u2501\u2501\u2501\u2501\u2501\u2501\u2501 1.9/1.9 MB 371.5 kB/s eta 0:00:00",
             "  Preparing metadata (setup.py): started",
             "  Preparing metadata (setup.py): finished with status 'error'",
             "  error: subprocess-exited-with-error",
             "Requirement already satisfied: torch in ./venv/lib/python3.10/site-packages (2.1.0)",
             "  Using cached einops-0.7.0-py3-none-any.whl (44 kB)",
             "Installing collected packages: pip",
             "  Found existing installation: pip 19.3.1",
             "    Uninstalling pip-19.3.1:",
             "      Successfully uninstalled pip-19.3.1",
             "Collecting apex",
             "  Preparing metadata (setup.py) ... done",
             "Building wheels for collected packages: apex",
             "  Building wheel for apex (setup.py) ... done",
             "  Created wheel for apex: filename=apex-0.1-py3-none-any.whl size=406181 sha256=3c2f",
             "  Stored in directory: /tmp/pip-ephem-wheel-cache-1/wheels/2f/0c"]
    assert groups(texts) == [[i] for i in range(18)]


def test_a_rich_traceback_whose_corners_the_consoles_code_page_lacks():
    # rule: TOKENS "rich_tb" and "rich_end" ('?' for the rounded corners: the console's encoding has the box's
    # lines but not its corners, and the stream writes what it cannot encode as '?')
    texts = ["trainable params: 16,706,477,656 || all params: 16,713,162,328 || trainable%: 99.96",
             "?\u2500\u2500\u2500\u2500 Traceback (most recent call last) \u2500\u2500\u2500\u2500?",
             "\u2502 /root/infer_lora_finetuning.py:56 in <module>          \u2502",
             "\u2502   56 \u2502   \u2502   response = gen_core.chat(query)         \u2502",
             "?\u2500\u2500\u2500\u2500\u2500\u2500\u2500\u2500\u2500\u2500\u2500\u2500\u2500\u2500\u2500\u2500\u2500?",
             "AttributeError: 'NoneType' object has no attribute 'chat'",
             "INFO:aigc_zoo:done"]
    assert groups(texts) == [[0], [1, 2, 3, 4, 5], [6]]


def test_mmcvs_state_dict_mismatch_report_keeps_its_key_lists_after_blank_lines():
    # rule: TOKENS "mm_sd_head" and the keys among "msg_para" (mmcv's load_state_dict joins "The model and loaded
    # state dict do not match exactly\n" and each "... in source state_dict: ...\n" with newlines, then logs it
    # with logger.warning, prints it, or raises it as a RuntimeError when strict)
    head = "2021-03-16 11:48:19,698 - mmdet - WARNING - "
    texts = [head + "The model and loaded state dict do not match exactly", "",
             "unexpected key in source state_dict: fc.weight, fc.bias", "",
             "missing keys in source state_dict: neck.lateral_convs.0.conv.weight", "",
             "2021-03-16 11:48:24,285 - mmdet - INFO - Start running, host: u@h, work_dir: /w"]
    assert groups(texts) == [[0, 1, 2, 3, 4], [6]]
    raised = ["Traceback (most recent call last):",
              '  File "tools/train.py", line 180, in main',
              "    load_checkpoint(model, args.load_from, strict=True)",
              "RuntimeError: The model and loaded state dict do not match exactly", "",
              "missing keys in source state_dict: backbone.conv1.weight", "",
              "2021-03-16 11:48:24,285 - mmdet - INFO - done"]
    assert groups(raised) == [[0, 1, 2, 3, 4, 5], [7]]


def test_python_313_unraisable_reports_back_to_back_stay_apart():
    # rule: RECORDS "py_report" (3.13+ PyErr_FormatUnraisable: the default hook writes the message and ":" before
    # the traceback, Python/errors.c write_unraisable_exc_file; a DataLoader's __del__ at shutdown writes several)
    report = ["Exception ignored while calling deallocator <function _MultiProcessingDataLoaderIter.__del__ at 0x7f>:",
              "Traceback (most recent call last):",
              '  File "/usr/lib/python3.13/multiprocessing/process.py", line 160, in is_alive',
              "    assert self._parent_pid == os.getpid(), 'can only test a child process'",
              "AssertionError: can only test a child process"]
    assert groups(report + report) == [[0, 1, 2, 3, 4], [5, 6, 7, 8, 9]]
