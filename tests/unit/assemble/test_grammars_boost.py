"""Grammars of boost::stacktrace's frames as a fatal signal handler writes them, after glibc's abort
message and before the shell's report of the death.

Each test names the rule it guards and builds its lines from the format boost writes them in (quoted in
``rules.py``); removing or loosening the rule makes it fail.
"""

from __future__ import annotations

from devtools.testing.merger import groups, spans

FRAMES = [("on_signal(int)", "at /src/worker.cc:30"), ("0x00007F728F85A050", "in /lib/x86_64-linux-gnu/libc.so.6"),
          ("__pthread_kill_implementation", "at ./nptl/pthread_kill.c:44"), ("raise", "at ../sysdeps/posix/raise.c:27"),
          ("abort", "at ./stdlib/abort.c:81"), ("__libc_message", "at ../sysdeps/posix/libc_fatal.c:157"),
          ("_int_free", "at ./malloc/malloc.c:4683"), ("cfree", "at ./malloc/malloc.c:3388"),
          ("main", "at /src/worker.cc:50"), ("__libc_start_call_main", "at ../sysdeps/nptl/libc_start_call_main.h:74"),
          ("__libc_start_main", "at ../csu/libc-start.c:347"), ("_start", "in ./worker")]


def _stack() -> list[str]:
    # detail/frame_decl.hpp to_string: a space before a one-digit index, the index, "# ", the frame, "\n"
    return [f"{' ' if i < 10 else ''}{i}# {name} {where}" for i, (name, where) in enumerate(FRAMES)]


def test_boost_stack_after_its_handlers_line_is_one_event_between_glibcs_and_the_shells_lines() -> None:
    # rules: TOKENS boost_frame, _ATTACH/"body" boost_frame (the handler's line announces the stack),
    # MODES boost_bt (two-digit indexes too)
    stack = _stack()
    assert stack[0].startswith(" 0# ") and stack[10].startswith("10# ")
    texts = ["free(): double free detected in tcache 2", "Received signal 6 (Aborted), stack trace:", *stack,
             "bash: line 1: 20354 Aborted                 ./worker double_free"]
    assert spans(texts) == [(0, 0), (1, 13), (14, 14)]


def test_boost_stack_under_a_rank_prefix_that_took_the_indexes_space() -> None:
    # rule: TOKENS boost_frame (the space before a one-digit index is optional)
    texts = [f"[rank3]: {x.lstrip(' ')}" for x in ["Received signal 11 (Segmentation fault), stack trace:", *_stack()]]
    texts.append("[rank3]: bash: line 1: 20354 Segmentation fault      ./worker segv")
    assert groups(texts) == [list(range(13)), [13]]
