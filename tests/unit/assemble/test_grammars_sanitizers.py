"""Grammars of clang's sanitizer reports (compiler-rt's sanitizer_common, frames symbolized by
llvm-symbolizer): AddressSanitizer's shadow rows where the guilty byte opens a row, MemorySanitizer's header,
and a report's '=' rule written apart from its header, as a launcher that interleaves ranks by line shows it.

Each test names the rule it guards and builds its lines from the format strings of the code that prints
them (quoted in ``rules.py``); removing or loosening the rule makes it fail.
"""

from __future__ import annotations

from devtools.testing.merger import groups, spans

RULE = "=" * 65  # asan_report.cpp / lsan_common.cpp print it before the report


def _frame(n: int, pc: int, func: str, where: str) -> str:
    # sanitizer_common's default stack_trace_format "    #%n %p %F %L": "in func file:line:col" from
    # llvm-symbolizer, or "(module+0xoffset) (BuildId: ..)" where it has no line table
    return f"    #{n} 0x{pc:012x} in {func} {where}"


def _shadow_row(addr: int, values: list[int], guilty: int | None = None, lead: str = "  ") -> str:
    # asan_errors.cpp PrintShadowBytes: "%s%p:" then each byte with " " before it, "[" and "]" around the guilty
    out = f"{lead}0x{addr:012x}:"
    for i, v in enumerate(values):
        before = "[" if i == guilty else "" if guilty is not None and i == guilty + 1 else " "
        out += f"{before}{v:02x}{']' if i == guilty else ''}"
    return out


def _asan_stack_overflow(pid: int) -> list[str]:
    return [RULE,
            f"=={pid}==ERROR: AddressSanitizer: stack-buffer-overflow on address 0x7ffe342d2f80 at pc "
            "0x55a886c59636 bp 0x7ffe342d2ec0 sp 0x7ffe342d2eb8",
            "READ of size 4 at 0x7ffe342d2f80 thread T0",
            _frame(0, 0x55A886C59635, "trainer::sum_rows(int const*, int)", "/src/worker.cc:20:43"),
            _frame(1, 0x55A886B993B0, "_start", "(/src/worker+0x223b0) (BuildId: 43f8e46ea80780d0e8d9ee1043d3)"),
            "",
            "SUMMARY: AddressSanitizer: stack-buffer-overflow /src/worker.cc:20:43 in trainer::sum_rows(int const*, "
            "int)",
            "Shadow bytes around the buggy address:",
            _shadow_row(0x1000468525E0, [0xF1] * 4 + [0] * 4 + [0xF2] * 4 + [0xF8, 0xF2, 0, 0]),
            _shadow_row(0x1000468525F0, [0xF2, 0xF2, 0xF8] + [0xF3] * 5 + [0] * 8, guilty=0, lead="=>"),
            _shadow_row(0x100046852600, [0] * 16),
            "Shadow byte legend (one shadow byte represents 8 application bytes):",
            "  Addressable:           00",
            "  Stack right redzone:     f3"]


def test_asan_shadow_row_whose_first_byte_is_the_guilty_one_stays_in_the_report() -> None:
    # rule: TOKENS san_shadow ("=>0x..:" then "[" where the guilty byte opens the row, as well as " ")
    report = _asan_stack_overflow(12141)
    assert report[9].startswith("=>0x1000468525f0:[f2]f2 f8")
    texts = [*report, "==12141==ABORTING", "I1201 17:45:14.569047  34844 trainer.cc:467] step 9628"]
    assert spans(texts) == [(0, 13), (14, 14), (15, 15)]


def _msan_report(pid: int) -> list[str]:
    # msan_report.cpp ReportUMR: Report("WARNING: MemorySanitizer: use-of-uninitialized-value\n") (Report()
    # writes "==PID==" first), the stack, a blank line, the SUMMARY
    return [f"=={pid}==WARNING: MemorySanitizer: use-of-uninitialized-value",
            _frame(0, 0x55BDDF622A19, "main", "/src/worker.cc:63:13"),
            _frame(1, 0x7F29DDA45249, "__libc_start_call_main", "csu/../sysdeps/nptl/libc_start_call_main.h:58:16"),
            "",
            "SUMMARY: MemorySanitizer: use-of-uninitialized-value /src/worker.cc:63:13 in main"]


def test_msan_report_keeps_its_header_when_another_rank_writes_between() -> None:
    # rule: TOKENS san_head ("==PID==WARNING: MemorySanitizer: ..." opens a report as ASan's "ERROR:" does)
    msan = [f"[rank1]:{x}" for x in _msan_report(7264)]
    other = "[rank0]:I1201 17:45:14.569047  34844 trainer.cc:467] step 9628 took 0.519s"
    texts = [msan[0], other, *msan[1:], "[rank1]:Exiting"]
    assert groups(texts) == [[0, 2, 3, 4, 5], [1], [6]]


def test_asan_rule_written_apart_from_its_header_opens_the_report_under_interleaved_ranks() -> None:
    # rules: MODES table_eq "writer_alone" (an '=' rule another writer's line comes after before any row
    # goes to "rule_eq_alone") and "rule_eq_alone" (only a report's header, _RULE_EQ_REPORTS, goes on)
    asan = [f"[rank5]:{x}" for x in _asan_stack_overflow(7816)]
    others = [f"[rank3]:I1201 17:45:1{i}.569047  34844 trainer.cc:467] step {9628 + i} took 0.519s"
              for i in range(3)]
    texts = [asan[0], *others, *asan[1:]]
    assert groups(texts) == [[0, *range(4, 4 + len(asan) - 1)], [1], [2], [3]]


def test_a_rule_alone_before_another_writers_line_is_still_no_table_of_the_lines_after_it() -> None:
    # rule: MODES "rule_eq_alone" takes nothing but a report's header: a script's separator and its own lines
    # after another writer's line are lines of their own, as before
    texts = ["[rank1]:" + RULE, "[rank0]:step 12 loss 0.31", "[rank1]:Epoch 1 summary", "[rank1]:loss 0.29",
             "[rank1]:" + RULE]
    assert groups(texts) == [[0], [1], [2], [3], [4]]
