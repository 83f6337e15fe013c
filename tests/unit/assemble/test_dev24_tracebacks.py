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
