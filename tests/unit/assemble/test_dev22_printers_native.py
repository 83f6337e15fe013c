"""Printers met in corpus/wild/dev22 (non-Python printers around GPU clusters, pasted into issues). Inputs follow
the printers' own code; each test names the rule it guards, and removing that rule makes it fail.
"""

from __future__ import annotations

from devtools.testing.merger import groups


def spans(texts: list[str]) -> list[tuple[int, int]]:
    return [(g[0], g[-1]) for g in groups(texts)]


# -- valgrind ----------------------------------------------------------------------------------------

def test_valgrind_prefix_alone_without_its_trailing_blank_still_closes_the_message():
    # rule: STREAM_PREFIXES "valgrind" ("==PID==" with the blank after it trimmed by a copy)
    texts = ["==3841557== Memcheck, a memory error detector",
             "==3841557== Command: ./Thordec crash",
             "==3841557==",
             "==3841557== Invalid read of size 1",
             "==3841557==    at 0x403B006: rindex (vg_replace_strmem.c:210)",
             "==3841557==    by 0x10AB71: main (maindec.c:116)",
             "==3841557==",
             "==3841557==",
             "next line"]
    assert spans(texts) == [(0, 2), (3, 7), (8, 8)]


def test_valgrind_stack_lines_with_their_indentation_collapsed_stay_under_the_error():
    # rules: TOKENS "vg_frame", _ATTACH "vg_frame" -> MODES "vg_frames"
    texts = ["==4879== Invalid read of size 1",
             "==4879== at 0x484ED16: strlen (in /usr/libexec/valgrind/vgpreload_memcheck-amd64-linux.so)",
             "==4879== by 0x4971582: strdup (strdup.c:41)",
             "It reads a string freed here:",
             "==4879== Address 0x4b9bfc0 is 0 bytes inside a block of size 3 free'd",
             "==4879== at 0x484B27F: free (in /usr/libexec/valgrind/vgpreload_memcheck-amd64-linux.so)",
             "==4879== by 0x10EC06: release (main.c:1697)"]
    assert spans(texts) == [(0, 2), (3, 3), (4, 6)]


# -- Open MPI's signal report --------------------------------------------------------------------------

def test_open_mpi_signal_report_without_its_host_and_pid_is_one_event():
    # rule: TOKENS "ompi_sig"/"ompi_sig_line"/"ompi_sig_end" (the "[host:pid] " optional)
    texts = ["test_alltoall_gpu",
             "*** Process received signal ***",
             "Signal: Segmentation fault (11)",
             "Signal code: Address not mapped (1)",
             "Failing at address: 0x7ff28802233f",
             "[ 0] /lib/x86_64-linux-gnu/libpthread.so.0(+0x11390)[0x7ff32df7d390]",
             "[ 1] /usr/lib/x86_64-linux-gnu/libnccl.so.2(+0x2b136)[0x7ff2bf5c3136]",
             "*** End of error message ***",
             "next line"]
    assert spans(texts) == [(0, 0), (1, 7), (8, 8)]


# -- a Rust panic whose payload is an anyhow error's Debug ----------------------------------------------

def test_pre_1_73_panic_quoting_an_error_with_caused_by_keeps_its_causes():
    # rule: MODES "rust_panic" after_blank "rust_caused" -> "rust_panic_causes"
    texts = ["thread 'tokio-runtime-worker' panicked at 'called `Result::unwrap()` on an `Err` value: error sending "
             "request for url (http://10.0.0.2:8080/): error trying to connect: tcp connect error",
             "",
             "Caused by:",
             "    0: error trying to connect: tcp connect error: Connection refused (os error 111)",
             "    1: Connection refused (os error 111)', src/bin/ticket.rs:31:66",
             "note: run with `RUST_BACKTRACE=1` environment variable to display a backtrace",
             "next line"]
    assert spans(texts) == [(0, 5), (6, 6)]


def test_panic_message_with_caused_by_list_then_its_backtrace():
    # (the same rule, Rust 1.73+: the payload on the lines under the location, the backtrace after it)
    texts = ["thread 'main' panicked at src/main.rs:12:40:",
             "called `Result::unwrap()` on an `Err` value: load model",
             "",
             "Caused by:",
             "    0: open weights.safetensors",
             "    1: No such file or directory (os error 2)",
             "stack backtrace:",
             "   0: rust_begin_unwind",
             "             at /rustc/feeba198f2c5455b31ca898c859385d5161f0bd8/library/std/src/panicking.rs:662:5",
             "note: Some details are omitted, run with `RUST_BACKTRACE=full` for a verbose backtrace.",
             "next line"]
    assert spans(texts) == [(0, 9), (10, 10)]
