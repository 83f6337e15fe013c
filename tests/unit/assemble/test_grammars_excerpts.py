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
