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
