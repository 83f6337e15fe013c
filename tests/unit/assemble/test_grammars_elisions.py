"""Stacks shortened where they were pasted: an elision line a reporter or a tool wrote in place of the lines it
left out ("...", "…", "[...]", "<snip>", "... (40 lines omitted)", "\\tat ..."). Inside an open stack the line
keeps the stack whole; at column 0 it is held until a frame after it confirms it; where no stack is open it
is a line of its own unless the frames of a stack cut above them follow it. One test per rule; removing or
loosening the rule makes it fail.
"""

from __future__ import annotations

import re

import pytest

from devtools.testing.merger import spans
from streams.assemble.rules import TOKENS


def reads_as(line: str) -> list[str]:
    """The tokens whose pattern matches the line, in TOKENS order (the first wins where a mode names both)."""
    return [t[0] for t in TOKENS if re.match(t[1], line)]


JAVA_HEAD = ["java.lang.NullPointerException", "\tat com.x.Appender.append(Appender.java:80)"]
JAVA_TAIL = ["\tat java.lang.reflect.Method.invoke(Method.java:566)", "INFO done"]


@pytest.mark.parametrize("mark", ["...", "…", "[...]", "(...)", "<snip>", "[snip]", "<truncated>", "[... snip ...]",
                                  "... (40 lines omitted)", "... 12 more lines ...", "... < many lines > ...",
                                  "... Many other lines. ..."])
def test_elision_marks_are_one_token_at_column_0_and_another_indented(mark: str) -> None:
    # rule: TOKENS elided, elided_in -- the mark alone on its line, bare or indented (faulthandler's own "  ..."
    # and IPython's "   (...)" are read first by the modes of those printers: fh_note, ipy_src)
    assert reads_as(mark)[:1] == ["elided"]
    assert "elided_in" in reads_as("\t" + mark)
    assert "elided_in" in reads_as("    " + mark + " ")


@pytest.mark.parametrize("line", ["\t... 25 more", "\t... 3 common frames omitted", "...additional frames elided...",
                                  "...10 frames elided...", "   (...)", "... done", "...and then it hung",
                                  "Loading...", "....:....:....:10000", "12 lines"])
def test_the_printers_own_elisions_and_text_with_dots_are_not_elision_marks(line: str) -> None:
    # rule: TOKENS elided, elided_in -- "... N more" is the JVM's (j_more), "...N frames elided..." the Go
    # runtime's (go_elided), "   (...)" IPython's (ipy_src); dots inside text are text
    assert reads_as(line)[:1] not in (["elided"], ["elided_in"])


def test_java_stack_with_an_elided_at_frame_stays_whole() -> None:
    # rule: MODES java_frames "elided_in" -- Jenkins' paste: the reporter wrote "\tat ..." for frames left out
    texts = [*JAVA_HEAD, "\tat ...", *JAVA_TAIL]
    assert spans(texts) == [(0, 3), (4, 4)]


def test_java_stack_with_an_elision_at_column_0_stays_whole() -> None:
    # rule: MODES java_frames "elided" -- held, then confirmed by the frame after it
    texts = [*JAVA_HEAD, "... < many lines > ...", *JAVA_TAIL]
    assert spans(texts) == [(0, 3), (4, 4)]


def test_elision_at_column_0_after_a_stacks_last_frame_is_a_line_of_its_own() -> None:
    # rule: MODES java_frames "elided" is held (tent), not taken: no frame confirms it, the stack ends early
    texts = [*JAVA_HEAD, "...", "INFO done"]
    assert spans(texts) == [(0, 1), (2, 2), (3, 3)]


def test_python_traceback_with_an_elision_at_column_0_between_frames_stays_whole() -> None:
    # rule: MODES py_frames "elided" (an indented one was already taken as an indented line)
    texts = ["Traceback (most recent call last):", '  File "train.py", line 9, in <module>', "    main()",
             "<snip>", '  File "model.py", line 3, in forward', "    return self.fc(x)",
             "RuntimeError: shape mismatch", "INFO next"]
    assert spans(texts) == [(0, 6), (7, 7)]


def test_pythons_own_previous_line_repeated_line_stays_in_the_traceback() -> None:
    # (traceback.py's own elision: an indented line among frames, taken by MODES py_frames "indent")
    texts = ["Traceback (most recent call last):", '  File "<stdin>", line 1, in <module>',
             '  File "<stdin>", line 1, in f', "  [Previous line repeated 996 more times]",
             "RecursionError: maximum recursion depth exceeded", "INFO next"]
    assert spans(texts) == [(0, 4), (5, 5)]


def test_go_goroutine_with_an_elision_at_column_0_between_frames_stays_whole() -> None:
    # rule: MODES go_stack "elided"
    texts = ["panic: boom", "", "goroutine 1 [running]:", "main.load(...)", "\t/src/main.go:12 +0x1d",
             "...", "main.main()", "\t/src/main.go:30 +0x45", "exit status 2"]
    assert spans(texts) == [(0, 7), (8, 8)]


def test_gdb_backtrace_with_an_elision_at_column_0_between_frames_stays_whole() -> None:
    # rule: MODES gdb "elided"
    texts = ["#0  0x00007f3a in raise () from /lib/libc.so.6", "#1  0x00007f3b in abort () from /lib/libc.so.6",
             "[...]", "#9  0x0000555d in main (argc=1, argv=0x7ffd) at main.c:12", "(gdb) quit"]
    assert spans(texts) == [(0, 3), (4, 4)]


def test_c10_frames_with_an_elision_at_column_0_stay_whole() -> None:
    # rule: MODES c10_frames "elided" (a line that does not end a frame's ')' is otherwise read as its wrap)
    texts = ["terminate called after throwing an instance of 'c10::Error'", "  what():  CUDA error",
             "Exception raised from c10_cuda_check at CUDAException.cpp:44 (most recent call first):",
             "frame #0: c10::Error::Error() + 0x96 (0x7f1 in /lib/libc10.so)", "...",
             "frame #9: main + 0x1 (0x5f in /usr/bin/python)", "Aborted (core dumped)"]
    assert spans(texts) == [(0, 5), (6, 6)]


def test_elision_before_the_frames_of_a_stack_cut_above_them_is_the_stacks_head() -> None:
    # rule: STARTS elided, MODES elided_lead -- the reporter left out frames #0-#8 and wrote "..." for them
    texts = ["(gdb) bt", "...", "#9  0x00007f49757e4780 in do_sample (signum=27, info=0x7ffd16fb4970)",
             "    at ...", "#10 0x00007f48ff74d053 in ?? ()", "(gdb) f 9"]
    assert spans(texts) == [(0, 0), (1, 4), (5, 5)]


def test_elision_alone_where_no_stack_is_open_is_a_line_of_its_own() -> None:
    # rule: MODES elided_lead takes only frames; SOFT_STARTS elided -- inside a message it is text as before
    texts = ["...", "12/08/03 14:37:43 WARN mapred.DefaultTaskController: Exit code from task is : 1", "...",
             "some text", "..."]
    assert spans(texts) == [(0, 0), (1, 1), (2, 2), (3, 3), (4, 4)]


def test_gdb_signal_handler_frame_continues_the_backtrace() -> None:
    # rule: TOKENS gdb_frame -- print_frame_info's "<signal handler called>" frame
    texts = ["#9  0x00007f49757e4780 in do_sample (signum=27) at sample.c:40", "#10 <signal handler called>",
             "#11 0x00007f48ff74d053 in ?? ()", "(gdb) quit"]
    assert spans(texts) == [(0, 2), (3, 3)]


def test_elision_inside_an_exceptions_message_is_read_as_the_message_text_it_was() -> None:
    # rule: SOFT_STARTS elided -- outside the frame modes that name it, the mark is text as before: a Python
    # exception's message takes it (a start of its own would end the traceback there)
    texts = ["Traceback (most recent call last):", '  File "run.py", line 3, in <module>', "    parse(cfg)",
             "ValueError: could not parse the config:", "...", "INFO next"]
    assert spans(texts) == [(0, 4), (5, 5)]
