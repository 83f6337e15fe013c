"""Grammar of the MultiError reports written before exception groups: trio's (trio/_core/_multierror.py,
``traceback_exception_format``, trio 0.3-0.21) and anyio 1.x's ``MultiError.__str__``. After the group's own
traceback each embedded exception gets "Details of embedded exception N:" and its formatted traceback indented
by two (``textwrap.indent``), nested groups deeper again. Each test names the rule it guards.
"""

from __future__ import annotations

from devtools.testing.merger import groups

NEXT = "2026-12-01 17:44:18,359 - trainer - INFO - step 5393/10000 loss=3.2821 lr=3.0e-04"


def test_embedded_exceptions_stay_with_the_multierror_traceback():
    # rule: TOKENS "py_embedded" + MODES py_msg/py_frames "py_embedded" and MODES "py_embedded"
    texts = ["Traceback (most recent call last):",
             '  File "/app/serve.py", line 40, in <module>',
             "    trio.run(main)",
             '  File "/app/serve.py", line 31, in main',
             "    nursery.start_soon(fetch, url)",
             "trio.MultiError: OSError(104), TimeoutError()",
             "",
             "Details of embedded exception 1:",
             "",
             "  Traceback (most recent call last):",
             '    File "/app/serve.py", line 12, in fetch',
             "      await stream.receive_some()",
             "  OSError: [Errno 104] Connection reset by peer",
             "",
             "Details of embedded exception 2:",
             "",
             "  Traceback (most recent call last):",
             '    File "/app/serve.py", line 14, in fetch',
             "      raise TimeoutError",
             "  TimeoutError",
             NEXT]
    assert groups(texts) == [list(range(20)), [20]]


def test_nested_details_and_the_chain_after_them():
    # rule: MODES "py_embedded" (indented lines, blank ones among them, and a nested group's details belong to
    # the report; a chain line at the margin leads to the exception the group caused)
    texts = ["Traceback (most recent call last):",
             '  File "/app/load.py", line 26, in <module>',
             "    trio.run(load)",
             "trio.MultiError: KeyError('shard'), <MultiError: ValueError(), ValueError()>",
             "",
             "Details of embedded exception 1:",
             "",
             "  Traceback (most recent call last):",
             '    File "/app/load.py", line 8, in read',
             "      return index['shard']",
             "  KeyError: 'shard'",
             "",
             "Details of embedded exception 2:",
             "",
             "  trio.MultiError: ValueError(), ValueError()",
             "",
             "  Details of embedded exception 1:",
             "",
             "    ValueError",
             "",
             "",
             "The above exception was the direct cause of the following exception:",
             "",
             "Traceback (most recent call last):",
             '  File "/app/load.py", line 30, in <module>',
             "    raise RuntimeError('loading failed') from exc",
             "RuntimeError: loading failed",
             NEXT]
    assert groups(texts) == [list(range(27)), [27]]


def test_details_cut_above_start_a_report_and_the_margin_ends_it():
    # rule: STARTS "py_embedded" (a paste that begins at the details) + MODES "py_embedded" "any": deeper only
    texts = ["Details of embedded exception 2:",
             "",
             "  Traceback (most recent call last):",
             '    File "/app/serve.py", line 14, in fetch',
             "      raise TimeoutError",
             "  TimeoutError",
             "Epoch 3/10"]
    assert groups(texts) == [[0, 1, 2, 3, 4, 5], [6]]


def test_cut_traceback_starting_at_a_source_line_with_position_markers():
    # rule: MODES py_src_cut "py_marker" + MODES "py_src_marks" (CPython 3.11+ writes "~~~^^^" markers under a
    # frame's source line; a paste cut above its "  File" line keeps the frames and exception line below)
    texts = ["    loss = criterion(model(batch), labels)",
             "           ^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^",
             '  File "/usr/lib/python3.12/site-packages/torch/nn/modules/module.py", line 1739, in _wrapped_call_impl',
             "    return self._call_impl(*args, **kwargs)",
             "           ^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^",
             "RuntimeError: expected scalar type Float but found Half",
             NEXT]
    assert groups(texts) == [[0, 1, 2, 3, 4, 5], [6]]
    # a statement with markers and nothing of a traceback after it is left as it was read before
    assert groups([*texts[:2], "Epoch 3/10"]) == [[0, 1], [2]]


def test_details_right_under_a_bare_group_line_keep_it_and_an_annotation_does_not():
    # rule: MODES plain "py_embedded" with act "under_exc" (anyio 1.x's MultiError.__str__ writes the details
    # right under the group's message: a paste cut above the traceback keeps that line with them)
    details = ["Details of embedded exception 1:",
               "",
               "  Traceback (most recent call last):",
               '    File "/app/worker.py", line 21, in pull',
               "      raise ConnectionError('broker gone')",
               "  ConnectionError: broker gone"]
    assert groups(["anyio.exceptions.ExceptionGroup: 2 exceptions were raised in the task group:", *details,
                   NEXT]) == [list(range(7)), [7]]
    assert groups(["[... output elided ...]", *details, NEXT]) == [[0], list(range(1, 7)), [7]]
