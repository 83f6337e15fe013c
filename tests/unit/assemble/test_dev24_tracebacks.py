"""Tracebacks and the lines around them met in corpus/wild/dev24 (the ops side of ML clusters: JupyterHub,
optuna, pip's build errors, ...). Inputs follow the printers' own code; each test names the rule it guards, and
removing that rule makes it fail.
"""

from __future__ import annotations

from devtools.testing.merger import groups


def test_jupyterhubs_head_with_logger_and_module_keeps_its_indented_request_and_traceback():
    # rule: HEADS tornado (jupyterhub/app.py _log_format_default "[%(levelname)1.1s %(asctime)s.%(msecs).03d
    # %(name)s %(module)s:%(lineno)d] "; tornado's LogFormatter indents every further line of a record by 4,
    # CONT_INDENT h_tornado): web.py log_exception writes "Uncaught exception %s\n%r" and the traceback
    texts = ["[D 2018-12-11 10:07:53.159 JupyterHub user:190] Creating <class 'KubeSpawner'> for test:",
             "[E 2018-12-11 10:07:53.170 JupyterHub web:1670] Uncaught exception GET /hub/user/test/ (10.0.2.15)",
             "    HTTPServerRequest(protocol='http', host='localhost:31212', method='GET', uri='/hub/user/test/')",
             "    Traceback (most recent call last):",
             '      File "/usr/local/lib/python3.6/dist-packages/tornado/web.py", line 1592, in _execute',
             "        result = yield result",
             "    AttributeError: spawner",
             "[D 2018-12-11 10:07:53.174 JupyterHub base:880] No template for 500"]
    assert groups(texts) == [[0], [1, 2, 3, 4, 5, 6], [7]]


def test_optunas_head_without_a_logger_announces_the_traceback_of_a_warning():
    # rules: HEADS tornado (optuna/logging.py create_default_formatter: colorlog "[%(levelname)1.1s %(asctime)s]
    # %(message)s", logging's default asctime with a comma), ANNOUNCE_HEAD_RE "[W " (the study logs a failed
    # trial with logger.warning(..., exc_info=True))
    texts = ["[W 2018-09-07 17:56:04,125] Setting trial status as TrialState.FAIL because of the following error: "
             "ValueError('y = 0',)",
             "Traceback (most recent call last):",
             '  File "./study.py", line 260, in _run_trial',
             "    result = func(trial)",
             "ValueError: y = 0",
             "[I 2018-09-07 17:56:04,208] Finished a trial resulted in value: 14.9."]
    assert groups(texts) == [[0, 1, 2, 3, 4], [5]]
    # an info record does not announce a traceback: the one after it is another writer's
    assert groups(["[I 2018-09-07 17:56:04,208] Trial 0 finished with value: 0.47.", *texts[1:5]]) == [
        [0], [1, 2, 3, 4]]


def test_djangos_internal_server_error_line_announces_its_traceback():
    # rule: ANNOUNCE_BODY_RE "Internal Server Error: /" (django/utils/log.py log_response logs "%s: %s" % (reason
    # phrase, path) with exc_info; Django's console handler has no formatter, so no head comes before it)
    texts = ["Internal Server Error: /v1/projects/6/docs/17329/auto-labeling",
             "Traceback (most recent call last):",
             '  File "/usr/local/lib/python3.8/site-packages/django/core/handlers/exception.py", line 47, in inner',
             "    response = get_response(request)",
             "KeyError: 'label'"]
    assert groups(texts) == [[0, 1, 2, 3, 4]]


_PIP_BOXES = ["  Preparing metadata (setup.py) ... error",
              "  error: subprocess-exited-with-error",
              "",
              "  \u00d7 python setup.py egg_info did not run successfully.",
              "  \u2502 exit code: 1",
              "  \u2570\u2500> [6 lines of output]",
              "      Traceback (most recent call last):",
              '        File "<string>", line 2, in <module>',
              '        File "/tmp/pip-install-go0vfrk9/flash-attn/setup.py", line 22, in <module>',
              "          import torch",
              "      ModuleNotFoundError: No module named 'torch'",
              "      [end of output]",
              "",
              "  note: This error originates from a subprocess, and is likely not a problem with pip.",
              "error: metadata-generation-failed",
              "",
              "\u00d7 Encountered error while generating package metadata.",
              "\u2570\u2500> See above for output.",
              "",
              "note: This is an issue with the package mentioned above, not pip.",
              "hint: See above for details.",
              "$ pip list"]


def test_pips_error_box_is_one_record_with_the_subprocess_output_inside_it():
    # rules: TOKENS pip_err/pip_x/pip_bar/pip_ctx/pip_note, MODES pip_box/pip_ctx/pip_note (pip/_internal/exceptions.py
    # DiagnosticPipError.__rich_console__, logged as one record; utils/subprocess.py call_subprocess logs the
    # subprocess's box indented by indent_log, then the command's handler logs the outer one); "own_gutter": the
    # nested box's "  \u2502 " line is its own bar, not a child's gutter
    assert groups(_PIP_BOXES) == [[0], list(range(1, 14)), list(range(14, 21)), [21]]


def test_pips_progress_lines_are_records_of_their_own_under_the_requirement():
    # rule: RECORDS pip_status (operations/prepare.py logs "Collecting %s", then under indent_log "Using cached
    # %s", "Downloading %s" and rich's download bar, each a record of its own)
    texts = ["Collecting accelerate==1.6.0 (from -r requirements.txt (line 1))",
             "  Using cached accelerate-1.6.0-py3-none-any.whl.metadata (19 kB)",
             "Collecting flash_attn==2.7.4.post1 (from -r requirements.txt (line 3))",
             "  Downloading flash_attn-2.7.4.post1.tar.gz (6.0 MB)",
             "     \u2501\u2501\u2501\u2501\u2501\u2501\u2501\u2501\u2501\u2501 6.0/6.0 MB 164.7 kB/s eta 0:00:00",
             "  Installing build dependencies ... done"]
    assert groups(texts) == [[0], [1], [2], [3], [4], [5]]
    # a message's own indented line under it still joins it
    assert groups(["Namespace(lr=0.1,", "  batch_size=8)"]) == [[0, 1]]


def test_a_failed_to_line_without_a_head_announces_the_traceback_logged_with_it():
    # rule: ANNOUNCE_BODY_RE "Failed to " (logger.exception("Failed to transform operator %s", op) under logging's
    # default "%(message)s": the message, then the traceback, in one write)
    texts = ["Failed to transform operator <merlin.systems.PredictPyTorchTriton object at 0x7f017f6129d0>",
             "Traceback (most recent call last):",
             '  File "/workspace/merlin/systems/triton/conversions.py", line 160, in triton_response_to_tensor_table',
             '    values = _array_from_triton_tensor(response, f"{out_col_name}__values")',
             "ValueError: Column output__values not found"]
    assert groups(texts) == [[0, 1, 2, 3, 4]]
    # a line that says nothing of a failure stays apart from the traceback an uncaught exception prints after it
    assert groups(["Loading model weights", *texts[1:]]) == [[0], [1, 2, 3, 4]]


def test_dasks_compute_failed_warning_keeps_its_fields():
    # rules: BODY_SUFFIX_STARTS "Compute Failed", MODES dask_compute (distributed/worker.py logs a failed task with
    # logger.warning("Compute Failed\nKey: ...\nFunction: ...\nargs: ...\nkwargs: ...\nException: %r\n..."), also
    # right after pytest's unterminated progress line ("test_x.py ")
    texts = ["2024-01-01 10:00:00,000 - distributed.worker - WARNING - Compute Failed",
             "Key:       raise_exception-9d1f",
             "State:     executing",
             "Function:  raise_exception",
             "args:      ()",
             "kwargs:    {}",
             "Exception: \"ValueError('foo')\"",
             "Traceback: '  File \"test_x.py\", line 26, in raise_exception\\n'",
             "",
             "2024-01-01 10:00:00,100 - distributed.worker - INFO - next"]
    assert groups(texts) == [list(range(8)), [9]]
    texts = ["test_x.py distributed.worker - WARNING - Compute Failed",
             "Function:  raise_exception",
             "args:      ()",
             "kwargs:    {}",
             "Exception: ValueError('foo')",
             "",
             "F"]
    assert groups(texts) == [[0, 1, 2, 3, 4], [6]]
    # the same words in another line do not open it
    assert groups(["Compute Failed", "Function is slow"]) == [[0], [1]]


def test_pips_error_box_behind_buildkits_prefix_keeps_its_bar():
    # rule: "own_gutter" (merger: the gutter behind a relay's prefix, BuildKit's "#25 55.31 ", is the open box's
    # own bar), TOKENS pip_* first in the table (the bar at the body's start is not Rich's panel edge there)
    step = "#25 55.31 "
    texts = [step + "  Building wheel for unicodecsv (setup.py): finished with status 'error'",
             step + "  error: subprocess-exited-with-error",
             step + "  ",
             step + "  \u00d7 python setup.py bdist_wheel did not run successfully.",
             step + "  \u2502 exit code: 1",
             step + "  \u2570\u2500> [2 lines of output]",
             step + "      error: invalid command 'bdist_wheel'",
             step + "      [end of output]",
             step + "  ",
             step + "  note: This error originates from a subprocess, and is likely not a problem with pip.",
             step + "  ERROR: Failed building wheel for unicodecsv"]
    assert groups(texts) == [[0], list(range(1, 10)), [10]]


def test_pips_older_command_errored_out_record_runs_to_its_divider():
    # rules: TOKENS pip_legacy/pip_divider, MODES pip_legacy (pip 20-21 utils/subprocess.py
    # make_subprocess_output_error, logged as one ERROR record indented by indent_log, closed by LOG_DIVIDER)
    texts = ["  Building wheel for horovod (setup.py) ... error",
             "  ERROR: Command errored out with exit status 1:",
             "   command: /usr/bin/python3 -u -c 'import sys, setuptools' bdist_wheel -d /tmp/pip-wheel-x",
             "       cwd: /tmp/pip-install-abc/horovod/",
             "  Complete output (6 lines):",
             "  running bdist_wheel",
             "",
             "  Traceback (most recent call last):",
             '    File "<string>", line 1, in <module>',
             "  ModuleNotFoundError: No module named 'torch'",
             "  ----------------------------------------",
             "  ERROR: Failed building wheel for horovod"]
    assert groups(texts) == [[0], list(range(1, 11)), [11]]
