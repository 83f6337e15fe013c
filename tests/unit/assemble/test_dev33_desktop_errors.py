"""Errors met in corpus/wild/dev33 (Python errors as users paste them from notebooks, IDEs and Windows/macOS
desktop setups: conda's reports, pip's boxes, PowerShell's error records, ...). Inputs follow the printers' own
code; each test names the rule it guards, and removing that rule makes it fail.
"""

from __future__ import annotations

from devtools.testing.merger import groups

_CONDA_REPORT = ["Collecting package metadata (current_repodata.json): done",
                 "Solving environment: done",
                 "",
                 "# >>>>>>>>>>>>>>>>>>>>>> ERROR REPORT <<<<<<<<<<<<<<<<<<<<<<",
                 "",
                 "    Traceback (most recent call last):",
                 '      File "/opt/conda/lib/python3.9/site-packages/conda/exceptions.py", line 1079, in __call__',
                 "        return func(*args, **kwargs)",
                 "    AttributeError: '_thread._local' object has no attribute 'session'",
                 "",
                 "`$ /opt/conda/bin/conda create -n x python=3.9`",
                 "",
                 "  environment variables:",
                 "                 CIO_TEST=<not set>",
                 "",
                 "     active environment : None",
                 "            shell level : 0",
                 "",
                 "An unexpected error has occurred. Conda has prepared the above report.",
                 "",
                 "Upload successful."]


def test_condas_error_report_runs_from_its_banner_to_its_closing_sentence():
    # rules: TOKENS conda_report/conda_report_end, MODES conda_report (conda/exception_handler.py
    # print_unexpected_error_report: one write of the banner, the traceback indented 4, the command, the
    # environment and conda info, and the closing sentence)
    assert groups(_CONDA_REPORT) == [[0], [1], list(range(3, 19)), [20]]


def test_condas_error_report_cut_after_its_traceback_ends_at_a_record_of_its_own():
    # rule: MODES conda_report (a copy cut above the closing sentence: a line with a record head is not the
    # report's)
    texts = [*_CONDA_REPORT[3:9], "2024-05-01 12:00:00,123 INFO next job started"]
    assert groups(texts) == [[0, 1, 2, 3, 4, 5], [6]]


def test_pips_verbose_full_command_and_cwd_records_after_a_box_are_lines_of_their_own():
    # rule: TOKENS pip_status "full command: " / "cwd: " (pip/_internal/utils/subprocess.py call_subprocess logs
    # the box, then subprocess_logger.verbose("full command: %s") and ("cwd: %s") as records of their own, all
    # behind indent_log's indentation; a paste that cut a blank off the box's first line makes them look deeper)
    texts = [" error: subprocess-exited-with-error",
             "  ",
             "  \u00d7 Getting requirements to build wheel did not run successfully.",
             "  \u2502 exit code: 1",
             "  \u2570\u2500> See above for output.",
             "  ",
             "  note: This error originates from a subprocess, and is likely not a problem with pip.",
             "  full command: /usr/bin/python3.7 /usr/lib/pip/_in_process.py get_requires_for_build_wheel /tmp/x",
             "  cwd: /tmp/pip-install-fbmefnq8/video2x_eddd2409a1c6472fafa0186672d5e031",
             "  Getting requirements to build wheel ... error"]
    assert groups(texts) == [list(range(7)), [7], [8], [9]]


def test_pips_box_cut_above_its_reference_line_starts_at_its_message():
    # rule: STARTS pip_x (pip/_internal/exceptions.py DiagnosticPipError.__rich_console__ writes "× <message>"
    # right under "error: <reference>" and a blank; an excerpt that starts there still holds the whole box)
    texts = ["  \u00d7 Building wheel for pysptk (pyproject.toml) did not run successfully.",
             "  \u2502 exit code: 1",
             "  \u2570\u2500> See above for output.",
             "  ",
             "  note: This error originates from a subprocess, and is likely not a problem with pip.",
             "  Building wheel for pysptk (pyproject.toml) ... error",
             "  ERROR: Failed building wheel for pysptk"]
    assert groups(texts) == [[0, 1, 2, 3, 4], [5], [6]]


def test_cmds_copy_counts_are_lines_of_their_own_not_indented_lines_of_the_one_above():
    # rule: RECORDS win_copy (cmd.exe's COPY writes "%1 file(s) copied." with the count right-aligned in 9
    # columns, once per command; XCOPY writes "N File(s) copied")
    texts = ["493 File(s) copied",
             "        1 file(s) copied.",
             "        1 file(s) copied.",
             "'conda' is not recognized as an internal or external command,",
             "operable program or batch file."]
    assert groups(texts) == [[0], [1], [2], [3, 4]]


def test_pyinstallers_failed_to_execute_script_line_ends_the_exception_message():
    # rule: RECORDS pyinstaller_failed (the bootloader's pyi_launch.c writes "Failed to execute script '%s' due to
    # unhandled exception!" after PyErr_Print() has written the traceback; the frozen frames have no source)
    texts = ["Traceback (most recent call last):",
             '  File "app.py", line 25, in <module>',
             '  File "llama_cpp\\_internals.py", line 50, in __init__',
             "OSError: [WinError -1073741795] Windows Error 0xc000001d",
             "[17724] Failed to execute script 'app' due to unhandled exception!"]
    assert groups(texts) == [[0, 1, 2, 3], [4]]


def test_comfyuis_error_report_holds_its_sections_and_ends_at_a_log_record():
    # rules: TOKENS comfy_report, MODES comfy_report (ComfyUI's front end, src/utils/errorReportUtil.ts
    # generateErrorReport: one Markdown text, the traceback's frames each followed by an empty line; the server
    # log it quotes under "## Logs" is made of records of their own)
    texts = ["# ComfyUI Error Report",
             "## Error Details",
             "- **Node ID:** 7",
             "- **Node Type:** KSampler",
             "- **Exception Type:** RuntimeError",
             "- **Exception Message:** MPS backend out of memory (MPS allocated: 8.72 GB, max allowed: 9.07 GB).",
             "## Stack Trace",
             "",
             '  File "/Applications/ComfyUI.app/Contents/Resources/ComfyUI/execution.py", line 323, in execute',
             "    output_data, output_ui, has_subgraph = get_output_data(obj, input_data_all)",
             "",
             "## System Information",
             "- **OS:** posix",
             "## Logs",
             "2024-11-27T10:12:01.123456 - got prompt"]
    assert groups(texts) == [list(range(14)), [14]]


_IPYKERNEL = ["[2019-08-12 21:06:27.455384] INFO: ipykernel.inprocess.ipkernel: Exception in execute request:",
              "---------------------------------------------------------------------------",
              "NameError                                 Traceback (most recent call last)",
              "<ipython-input-6-890ba7f62585> in <module>",
              "----> 1 part",
              "",
              "NameError: name 'part' is not defined"]


def test_ipykernels_exception_in_execute_request_record_keeps_the_ultratb_traceback_it_logs():
    # rule: MODES body "rule_dash" -> body_rule (ipykernel/ipkernel.py do_execute logs "Exception in execute
    # request:\n%s" with the traceback's lines joined; IPython's ultratb opens it with a rule of dashes and
    # "NameError   Traceback (most recent call last)")
    assert groups(_IPYKERNEL) == [list(range(7))]


def test_a_dashed_rule_under_a_colon_record_without_a_traceback_header_is_not_the_records():
    # rule: MODES body_rule (only ultratb's header confirms the rule; else it is read again on its own)
    texts = [_IPYKERNEL[0], _IPYKERNEL[1], "Some other output", _IPYKERNEL[1]]
    assert groups(texts)[0] == [0]


def test_ipythons_banner_is_one_event_and_the_prompt_after_it_another():
    # rule: TOKENS py_banner_more in _ATTACH (IPython/core/usage.py default_banner: one string of three lines)
    ipython = ["Python 3.10.2 (main, Jan 15 2022, 18:02:07) [GCC 9.3.0]",
               "Type 'copyright', 'credits' or 'license' for more information",
               "IPython 8.0.1 -- An enhanced Interactive Python. Type '?' for help.",
               "",
               "In [1]: raise Exception"]
    assert groups(ipython) == [[0, 1, 2], [4]]
    # CPython's REPL header is two writes (Modules/main.c pymain_header: two fprintf calls): two lines of their own
    python = ["Python 3.11.4 (main, Jun  7 2023, 10:13:09) [GCC 12.2.0] on linux",
              'Type "help", "copyright", "credits" or "license" for more information.',
              ">>> import torch"]
    assert groups(python) == [[0], [1], [2]]


def test_asyncios_future_repr_over_lines_stays_with_its_record_and_traceback():
    # rules: TOKENS asyncio_handle_open/asyncio_repr_end, MODES asyncio_repr/asyncio_after (asyncio's
    # base_events.py default_exception_handler logs the message, "future: {task!r}" and the traceback in one
    # record; a Task's repr holds its exception's repr, which pydantic's ValidationError writes over lines)
    texts = ["ERROR | root | Task exception was never retrieved",
             "future: <Task finished name='4f44_7' coro=<Queue.process_events() done, defined at "
             "C:\\rvc\\gradio\\queueing.py:343> exception=1 validation error for PredictBody",
             "event_id",
             "  Field required [type=missing, input_value={'data': []}, input_type=dict]",
             "    For further information visit https://errors.pydantic.dev/2.4/v/missing>",
             "Traceback (most recent call last):",
             '  File "C:\\rvc\\gradio\\queueing.py", line 347, in process_events',
             "    client_awake = await self.gather_event_data(event)",
             "pydantic_core._pydantic_core.ValidationError: 1 validation error for PredictBody",
             "2024-01-01 12:00:00,000 INFO next"]
    assert groups(texts) == [list(range(9)), [9]]
    # a repr that never closes: its lines are read again on their own
    assert groups([*texts[:3], texts[9]]) == [[0, 1], [2], [3]]


_PS_RECORD = [".\\venv\\Scripts\\activate : The term '.\\venv\\Scripts\\activate' is not recognized as the name of a "
              "cmdlet, function,",
              "script file, or operable program. Check the spelling of the name, or if a path was included, verify "
              "that the path is",
              "correct and try again.",
              "At line:1 char:1",
              "+ .\\venv\\Scripts\\activate",
              "+ ~~~~~~~~~~~~~~~~~~~~~~~",
              "    + CategoryInfo          : ObjectNotFound: (.\\venv\\Scripts\\activate:String) [], "
              "CommandNotFoundException",
              "    + FullyQualifiedErrorId : CommandNotFoundException",
              "PS C:\\kohya_ss> .\\setup.bat"]


def test_powershells_error_record_holds_its_wrapped_message_position_and_fields():
    # rules: TOKENS ps_msg/ps_pos/ps_src/ps_field, MODES ps_msg/ps_pos/ps_fields (PowerShell's ErrorRecord view,
    # PowerShellCore_format_ps1xml.cs "ErrorInstance": "<command> : <message>", the PositionMessage, the fields)
    assert groups(_PS_RECORD) == [list(range(8)), [8]]


def test_a_command_colon_line_without_a_position_lets_the_lines_under_it_go():
    # rule: MODES ps_msg (the lines held under "<x> : <y>" are read again on their own when no position message
    # or field confirms them)
    texts = ["Device : cuda", "Loading model weights", "done"]
    assert groups(texts) == [[0], [1], [2]]


def test_libmambas_solver_error_holds_its_problem_lines():
    # rules: TOKENS mamba_solve/mamba_problem, MODES mamba_problems (libmamba's MSolver::problems_to_str:
    # "Encountered problems while solving.\n" then a "Problem: " line per libsolv problem)
    texts = ["Encountered problems while solving.",
             "Problem: package kitchen-sink-0.1.1-0 requires yellowbrick >=1.1, but none of the providers can be "
             "installed",
             "Problem: nothing provides _python_rc needed by python-3.12.0rc3-rc3_h2628c8c_1_cpython",
             "The error is nonsensical because the package does exist on conda-forge:"]
    assert groups(texts) == [[0, 1, 2], [3]]


def test_pydantics_validation_error_pasted_without_its_traceback_keeps_its_errors():
    # rule: TOKENS pyd_validation, a soft start (pydantic v1 error_wrappers.py ValidationError.__str__ and v2
    # pydantic_core: "N validation error(s) for Model", then each error's location and indented message)
    texts = ["ValidationError: 1 validation error for LlamaCpp",
             "__root__",
             "  Could not load Llama model from path: C:\\ggml-model-q4_0.bin. (type=value_error)",
             "2024-01-01 12:00:00,000 INFO next"]
    assert groups(texts) == [[0, 1, 2], [3]]
    # under a traceback it is that traceback's exception line, as before
    tb = ["Traceback (most recent call last):", '  File "a.py", line 1, in <module>', "    x()",
          "pydantic.error_wrappers.ValidationError: 1 validation error for LlamaCpp", *texts[1:]]
    assert groups(tb) == [[0, 1, 2, 3, 4, 5], [6]]


def test_vscodes_copied_notebook_error_is_one_json_with_its_stack_string_over_lines():
    # rules: TOKENS json_str_open/json_str_close, MODES json_str (VS Code copies a notebook cell's error output as
    # {"name", "message", "stack"} with the stack's newlines as they are and its quotes and backslashes escaped;
    # the brackets inside the string are text, the closing brace ends the dump)
    texts = ["{",
             '\t"name": "OSError",',
             '\t"message": "[WinError 126] Error loading \\\\.venv\\\\Lib\\\\torch\\\\lib\\\\fbgemm.dll\\" or one",',
             '\t"stack": "-------------------------------------------------------------------------',
             "OSError                                   Traceback (most recent call last)",
             "Cell In[3], line 3",
             "      2 from datasets import load_dataset",
             '----> 3 x = {\\"a\\": [1, 2]}',
             "",
             "OSError: [WinError 126] The specified module could not be found.\"",
             "}",
             "2024-01-01 12:00:00,000 INFO next"]
    assert groups(texts) == [list(range(11)), [11]]
