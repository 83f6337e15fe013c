"""Grammars of lldb's output on a crashed program: the stop report with its source listing (SourceManager),
the process's other state changes after it, and a backtrace.

Each test names the rule it guards and builds its lines from the format lldb writes them in (quoted in
``rules.py``); removing or loosening the rule makes it fail.
"""

from __future__ import annotations

from devtools.testing.merger import groups, spans

SOURCE = ["    _exit(128 + sig);", "}", "", "int store_grad(float *grad, int i) { grad[i] = 1.0f; return i; }",
          "int apply_update(float *grad, int n) { return store_grad(grad, n); }"]


def _listing(first: int, stop: int, column: int) -> list[str]:
    # SourceManager::File::DisplaySourceLines: the marker in two columns ("->" on the stop's line), a space,
    # the number left-justified in four, a tab, the line; under the stop's line "    \t" and the column's caret
    out = []
    for n, src in enumerate(SOURCE, first):
        out.append(f"{'->' if n == stop else '':2.2s} {n:<4d}\t{src}")
        if n == stop:
            out.append("    \t" + " " * (column - 1) + "^")
    return out


def _stop(pid: int, listing: bool) -> list[str]:
    head = [f"Process {pid} stopped",
            "* thread #1, name = 'crash', stop reason = signal SIGSEGV: invalid address (fault address: 0x0)",
            "    frame #0: 0x00005555555552e9 crash`store_grad(grad=0x0000000000000000, i=0) at crash.c:23:72"]
    return head + (_listing(20, 23, 48) if listing else [])


def test_stop_report_ends_with_its_source_listing() -> None:
    # rules: TOKENS lldb_src, MODES lldb_stop -> "lldb_listing" (a line that is not the listing's ends it)
    texts = [*_stop(16487, True), "Process 16487 launched: '/work/crash' (x86_64)", "(lldb) bt"]
    assert texts[6] == "-> 23  \tint store_grad(float *grad, int i) { grad[i] = 1.0f; return i; }"
    assert spans(texts) == [(0, 8), (9, 9), (10, 10)]


def test_stop_report_without_a_listing_ends_at_the_process_event_after_it() -> None:
    # rules: TOKENS lldb_process, MODES lldb_stop "lldb_process" (the run command's "Process N launched")
    texts = [*_stop(15733, False), "Process 15733 launched: '/work/crash' (x86_64)",
             "I1201 17:44:23.690548  81935 trainer.cc:677] step 923 took 1.274s"]
    assert spans(texts) == [(0, 2), (3, 3), (4, 4)]


def test_stop_report_listing_under_a_rank_prefix_that_took_a_leading_space() -> None:
    # rule: TOKENS lldb_src (two or three spaces before the number, three or four before the caret's tab)
    texts = [f"[rank3]: {x[1:] if x.startswith(' ') else x}" for x in _stop(17189, True)]
    texts += ["[rank3]: Process 17189 launched: '/work/crash' (x86_64)"]
    assert groups(texts) == [list(range(9)), [9]]
