"""A hostile line never stalls the worker: each pattern that a whole message meets stays linear in it.

Each case runs one message (or one record of the worker's longest size) through the code that met it in
a child process and waits for it a generous 30 s: a pattern that backtracks over a long run takes
minutes on these inputs, the fixed code milliseconds. (A thread would not do: ``re`` holds the GIL for
the whole of one search, so the waiting thread would not wake.) No timing is asserted beyond the guard.
"""

from __future__ import annotations

import multiprocessing
from collections.abc import Callable
from typing import Any

from streams.assemble.classify import classify
from streams.assemble.pipeline import Assembler, RawRecord
from streams.assemble.rules import ANNOUNCE_BODY_RE

HANG_S = 30.0
T0 = 1_700_000_000_000


def _send(fn: Callable[[], Any], conn: Any) -> None:
    conn.send(fn())


def finishes(fn: Callable[[], Any]) -> Any:
    """``fn()``'s result, run in a forked child; fails (and ends the child) when it is still running
    after ``HANG_S``."""
    ctx = multiprocessing.get_context("fork")
    parent, child = ctx.Pipe(duplex=False)
    worker = ctx.Process(target=_send, args=(fn, child), daemon=True)
    worker.start()
    ready = parent.poll(HANG_S)
    if not ready:
        worker.kill()
    worker.join(5)
    assert ready, f"still running after {HANG_S:.0f} s: a pattern backtracks on the input"
    return parent.recv()


def test_a_long_word_in_a_java_block_does_not_stall_the_exception_search() -> None:
    # a Java stack's message with a 500 KB word: every start in the word used to scan to its end
    values = [b"2024-05-01 10:00:00 ERROR java.lang.Exception: " + b"a" * 500_000,
              b"\tat com.example.Foo.bar(Foo.java:1)", b"2024-05-01 10:00:01 INFO after"]

    def run() -> list[tuple[str, str]]:
        asm = Assembler()
        out = []
        for off, value in enumerate(values):
            out += asm.feed(RawRecord("logs.raw", 0, off, value, b"node-1/app.log", T0 + off))
        return [(o.kind, o.value["message"]) for o in out + asm.flush_all()]

    out = finishes(run)
    assert [kind for kind, _m in out] == ["event", "event"]
    assert out[0][1].endswith("\tat com.example.Foo.bar(Foo.java:1)")


def test_the_java_exception_search_still_finds_the_class_after_a_long_dotted_run() -> None:
    msg = "Exception in thread \"main\" " + "a." * 100_000 + " java.io.UncheckedIOException: x\n\tat a.B.c(B.java:1)"
    c = finishes(lambda: classify(msg, "java_stack"))
    assert (c.error_class, c.error_type) == ("java_exception", "java.io.UncheckedIOException")


def assembled(values: list[bytes]) -> list[tuple[str, str]]:
    asm = Assembler()
    out = []
    for off, value in enumerate(values):
        out += asm.feed(RawRecord("logs.raw", 0, off, value, b"node-1/app.log", T0 + off))
    return [(o.kind, o.value.get("message", "")) for o in out + asm.flush_all()]


def test_a_prometheus_like_line_without_its_closing_brace_does_not_stall_the_sample_pattern() -> None:
    # 30 labels with two blanks between them: each run of blanks could end one label or start the next
    line = b"gpu_util{" + b'gpu="0"  ' * 30 + b" 1"
    out = finishes(lambda: assembled([b"2024-05-01 10:00:00 INFO before", line, b"2024-05-01 10:00:01 INFO after"]))
    assert [kind for kind, _m in out] == ["event", "event", "event"]
    assert out[1][1] == line.decode()


def test_a_prometheus_sample_with_spaced_labels_is_still_one() -> None:
    line = b'DCGM_FI_DEV_GPU_UTIL{gpu="0" , UUID="GPU-1",  modelName="H100" ,} 87'
    asm = Assembler()
    out = asm.feed(RawRecord("logs.raw", 0, 0, line, b"node-1/app.log", T0)) + asm.flush_all()
    assert [(o.kind, o.value["metrics"]) for o in out] == [("metric", {"gpu_utilization_pct": 87.0})]


def test_a_long_word_of_underscores_before_a_compose_bar_does_not_stall_the_prefix() -> None:
    # docker compose's "name  | " prefix: every '_' of the word was tried as the one before the rest
    line = b"_" * 200_000 + b"! | x"
    out = finishes(lambda: assembled([line]))
    assert out == [("event", line.decode())]


def test_a_long_blank_run_in_a_backward_cpp_stack_does_not_stall_the_snippet_token() -> None:
    # backward-cpp's source snippet " >  12: ...": the blanks before an absent '>' could also be its own
    values = [b"Stack trace (most recent call last):", b" " * 200_000 + b"x"]
    out = finishes(lambda: assembled(values))
    assert "".join(m for _k, m in out).endswith("x")


def test_a_boosting_round_cell_of_dashes_does_not_stall_the_pair_pattern() -> None:
    # XGBoost's "[0]\ttrain-rmse:0.5" cells: a cell without a figure was tried again for each '-'
    line = b"[0]\ttrain-rmse:0.5\t2" + b"-" * 200_000
    out = finishes(lambda: assembled([line]))
    assert out == [("event", line.decode())]


def test_xgboost_cells_are_still_pairs() -> None:
    out = assembled([b"[3]\ttrain-rmse:0.25\teval-rmse:0.5+0.01"])
    assert [kind for kind, _m in out] == ["metric"]


def test_a_long_word_before_a_traceback_does_not_stall_the_announcement_search() -> None:
    # the open record's last line is searched for an announcement of the stack that follows (a throwable's
    # dotted name among them): every start in a long word, or a long dotted run, used to scan to its end
    for run in ("_" * 200_000, "a." * 100_000):
        out = finishes(lambda run=run: assembled([run.encode(), b"Traceback (most recent call last):",  # type: ignore[misc]
                                                  b"2024-05-01 10:00:01 INFO after"]))
        assert [m[:1] for _k, m in out] == [run[:1], "T", "2"]
    # still an announcement: a message that ends with a throwable's name, or names it before a colon
    for body in ("failed: org.example.io.BadInputException", "x java.lang.IllegalStateException: y",
                 "Foo.bar.BazError", "ABC.foo.BarError: x"):
        assert ANNOUNCE_BODY_RE.search(body) is not None, body
    assert ANNOUNCE_BODY_RE.search("org.example.BadInputException is retried") is None
