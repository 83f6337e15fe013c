"""Python tracebacks as notebooks and tools' dialogs render them, copied into a report.

Inputs are short runs of real lines from ``corpus/wild/dev26`` (paths shortened). Each test names the rule
it guards; removing or loosening that rule makes it fail.
"""

from __future__ import annotations

from devtools.testing.merger import groups


def spans(texts: list[str]) -> list[tuple[int, int]]:
    return [(g[0], g[-1]) for g in groups(texts)]


def test_ipython8_module_level_frame_without_a_function_goes_on_after_the_blank_line():
    # rule: TOKENS ipy_frame "File path:L" alone (VerboseTB.format_record writes no ", in f(...)" for a
    # module-level frame, which is what an import chain is made of)
    texts = ["I get:",
             "",
             "---------------------------------------------------------------------------",
             "RecursionError                            Traceback (most recent call last)",
             "Cell In[7], line 1",
             "----> 1 from FabricSync.BQ.Setup import Installer",
             "      2 from FabricSync.BQ.Enum import FabricDestinationType",
             "",
             "File /nfs4/pyenv/lib/python3.10/site-packages/FabricSync/BQ/__init__.py:8",
             "      6 from .Logging import *",
             "----> 8 from .Model.Config import *",
             "",
             "RecursionError: maximum recursion depth exceeded",
             "",
             "next cell's output"]
    assert spans(texts) == [(0, 0), (2, 12), (14, 14)]


def test_jupyterlab_copy_with_its_linked_frame_paths_is_one_traceback():
    # rule: TOKENS ipy_frame "File [path:L](link), in f(...)" (JupyterLab links the file of each frame; a
    # copy of the page writes the link in Markdown)
    texts = ["File [~/envs/lib/python3.10/site-packages/huggingface_hub/utils/_pagination.py:37]"
             "(http://localhost:8081/lab/tree/envs/lib/python3.10/site-packages/huggingface_hub/utils/"
             "_pagination.py#line=36), in paginate(path, params, headers)",
             "     36 r = session.get(path, params=params, headers=headers)",
             "---> 37 hf_raise_for_status(r)",
             "",
             "File [~/envs/lib/python3.10/site-packages/huggingface_hub/utils/_http.py:481]"
             "(http://localhost:8081/lab/tree/envs/lib/python3.10/site-packages/huggingface_hub/utils/"
             "_http.py#line=480), in hf_raise_for_status(response, endpoint_name)",
             "--> 481 raise _format(HfHubHTTPError, str(e), response) from e",
             "",
             "HfHubHTTPError: 500 Server Error: Internal Server Error for url: https://huggingface.co/api/models"]
    assert spans(texts) == [(0, 7)]


def test_old_ipython_frame_on_a_windows_drive_goes_on_after_the_blank_line():
    # rule: TOKENS ipy_frame "d:\\path\\x.py in f(...)" (IPython 7's ultratb writes the file as it is)
    texts = ["FileNotFoundError                         Traceback (most recent call last)",
             "<ipython-input-1-e612a8cab787> in <module>",
             "----> 2 metric = load_metric(\"squad_v2\")",
             "",
             "d:\\projects\\datasets\\src\\datasets\\load.py in load_metric(path, config_name)",
             "   1337         revision = script_version",
             "-> 1338     metric_module = metric_module_factory(",
             "",
             "FileNotFoundError: Couldn't find a metric script at squad_v2.py",
             "",
             "In [2]: "]
    assert spans(texts) == [(0, 8), (10, 10)]


def test_syntax_error_report_copied_without_its_indentation_keeps_its_exception_line():
    # rule: TOKENS py_file_bare 'File "x", line N' without ", in" (TracebackException._format_syntax_error
    # names no function: the file line, the source, the caret, then "SyntaxError: ...")
    texts = ['File "/content/noah-research/configs/config_likelihood.yaml", line 9',
             "    defaults:",
             "            ^",
             "SyntaxError: invalid syntax",
             "INFO:root:epoch 1 done"]
    assert spans(texts) == [(0, 3), (4, 4)]


def test_comfyui_error_dialog_is_one_traceback_whatever_its_frames_indentation():
    # rule: TOKENS comfy_exec, MODES comfy_head/comfy_msg (ComfyUI's #formatExecutionError: header, blank,
    # the exception's message, blank, traceback.format_tb's frames; a copy of the dialog may strip their indent)
    frames = ['File "F:\\ComfyUI\\execution.py", line 283, in execute',
              "obj = class_def()",
              'File "F:\\ComfyUI\\custom_nodes\\enhance\\node.py", line 8, in __init__',
              "self.tokenizer = AutoTokenizer.from_pretrained(self.model_checkpoint)"]
    for lines in (frames, ["  " + f if f.startswith("File") else "    " + f for f in frames]):
        texts = ["Error occurred when executing FluxPromptEnhance:",
                 "",
                 "data did not match any variant of untagged enum PyPreTokenizerTypeWrapper at line 951 column 3",
                 "",
                 *lines,
                 "",
                 "got prompt"]
        assert spans(texts) == [(0, 7), (9, 9)]


def test_comfyui_dialog_header_without_frames_after_its_message_ends_there():
    # rule: MODES comfy_msg after_blank (only a frame goes on after the blank line under the message)
    texts = ["Error occurred when executing KSampler:",
             "",
             "CUDA error: out of memory",
             "CUDA kernel errors might be asynchronously reported at some other API call",
             "",
             "Prompt executed in 3.20 seconds"]
    assert spans(texts) == [(0, 3), (5, 5)]


def test_vscode_copy_with_every_source_line_number_linked_is_one_frame():
    # rule: TOKENS ipy_num "     [24](file:///...) src" (VS Code's Jupyter extension links the number of each
    # source line of a file's frame, keeping its padding), after a module-level frame "File c:\\...:33"
    uri = "file:///C:/env/Lib/site-packages/transformers/utils/__init__.py"
    texts = ["File c:\\env\\Lib\\site-packages\\transformers\\utils\\__init__.py:33",
             f"     [24]({uri}:24) from .constants import IMAGENET_DEFAULT_MEAN",
             f"     [25]({uri}:25) from .doc import (",
             "   (...)",
             f"     [32]({uri}:32) )",
             f"---> [33]({uri}:33) from .generic import (",
             f"     [34]({uri}:34)     ContextManagers,",
             "",
             "ImportError: cannot import name 'ContextManagers'",
             "",
             "In [3]: "]
    assert spans(texts) == [(0, 8), (10, 10)]
