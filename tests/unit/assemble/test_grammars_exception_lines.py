"""Exception lines pasted without their traceback, whose message the library wrote over several lines, one test
per rule.

Inputs are lines as the printers write them (c10's CUDA check, transformers' hub, Hydra's run_and_report); each
test names the rule it guards, and removing or loosening that rule makes it fail.
"""

from __future__ import annotations

from devtools.testing.merger import spans

# c10_cuda_check_implementation (c10/cuda/CUDAException.cpp): "CUDA error: " + cudaGetErrorString, then the
# suffix's hint lines; Python prints the exception line with the message's first line
CUDA_ERROR = [
    "RuntimeError: CUDA error: device-side assert triggered",
    "CUDA kernel errors might be asynchronously reported at some other API call, so the stacktrace below might "
    "be incorrect.",
    "For debugging consider passing CUDA_LAUNCH_BLOCKING=1",
    "Compile with `TORCH_USE_CUDA_DSA` to enable device-side assertions.",
]


def test_c10_cuda_hints_continue_the_exception_line_above_them():
    # rule: MODES "plain" "cuda_hint" -> py_msg_more (the hints are the message's, the line above is its first)
    assert spans([*CUDA_ERROR, "", "epoch 3 done"]) == [(0, 3), (5, 5)]
    assert spans(["torch.AcceleratorError: CUDA error: an illegal memory access was encountered", *CUDA_ERROR[1:]]) \
        == [(0, 3)]


def test_c10_cuda_message_ends_with_its_dsa_line():
    # rules: TOKENS "cuda_dsa", MODES "py_cuda_end": the check's last line ends the message; the c10::Error's
    # frames after the empty line it leaves, or a chained exception, still go on
    assert spans([*CUDA_ERROR, "![1](https://example.com/screenshot.png)"]) == [(0, 3), (4, 4)]
    tail = ["Traceback (most recent call last):", '  File "train.py", line 9, in <module>', "    loss.item()",
            *CUDA_ERROR, ""]
    assert spans([*tail, "Exception raised from c10_cuda_check_implementation at c10/cuda/CUDAException.cpp:43 "
                         "(most recent call first):",
                   "frame #0: c10::Error::Error(c10::SourceLocation, std::string) + 0x96 (0x7f in libc10.so)"]) \
        == [(0, 9)]
    assert spans([*tail, "During handling of the above exception, another exception occurred:", "",
                  "Traceback (most recent call last):", '  File "train.py", line 12, in <module>', "    main()",
                  "KeyboardInterrupt"]) == [(0, 13)]


def test_transformers_offline_mode_line_continues_the_oserror_line():
    # rules: TOKENS "hf_offline_hint", MODES "plain" "hf_offline_hint" -> py_msg_more
    texts = ["OSError: We couldn't connect to 'https://huggingface.co' to load this file, couldn't find it in the "
             "cached files and it looks like gpt2 is not the path to a directory containing a file named config.json.",
             "Checkout your internet connection or see how to run the library in offline mode at "
             "'https://huggingface.co/docs/transformers/installation#offline-mode'.",
             "",
             "Loading checkpoint shards: done"]
    assert spans(texts) == [(0, 1), (3, 3)]


def test_hydra_instantiation_error_after_error_executing_job_is_one_event():
    # rules: TOKENS "hydra_compact" (instantiate's "Error locating target '"...), MODES "plain" "hydra_compact"
    # ("announce": JobReturn.return_value's line announces what run_and_report writes next); the hint after the
    # blank line is a write of its own
    texts = ["[2022-06-08 08:12:42,395][src.train][INFO] - Instantiating model <src.models.LitModule>",
             "Error executing job with overrides: []",
             "Error locating target 'src.models.LitModule', see chained exception above.",
             "full_key: model",
             "",
             "Set the environment variable HYDRA_FULL_ERROR=1 for a complete stack trace."]
    assert spans(texts) == [(0, 0), (1, 3), (5, 5)]
    # (a line that announces nothing stays alone)
    assert spans(["step 3 done", *texts[2:]]) == [(0, 0), (1, 2), (4, 4)]


def test_a_blank_line_after_an_ipython_exception_line_ends_its_message():
    # rules: MODES "ipy_msg" "blank_own" (ultratb's empty line before the exception line is the printer's, not a
    # doubled newline of the copy), so one blank line after the message ends the traceback
    texts = ["---------------------------------------------------------------------------",
             "ZeroDivisionError                         Traceback (most recent call last)",
             "Input In [1], in <cell line: 1>()",
             "----> 4 z=1/0",
             "",
             "ZeroDivisionError: division by zero",
             "",
             "In addition, the line numbers are restored."]
    assert spans(texts) == [(0, 5), (7, 7)]
    # (its message's further lines right under it are still its own)
    assert spans([*texts[:6], "the divisor came from the config", "", "done"]) == [(0, 6), (8, 8)]


def test_python_logging_with_fields_between_bars_announces_logger_exception():
    # rule: HEADS "asctime_pipe" ("%(asctime)s |%(name)-7s|%(levelname)-7s| "): an ERROR record takes the
    # traceback logger.exception writes under it; a DEBUG record before it stays alone
    tb = ["Traceback (most recent call last):", '  File "lims.py", line 73, in get_lims_samples',
          "    self.synch_with_lims(lims)", "KeyError: 'samples'"]
    texts = ["2025-12-07 09:13:30,953 |MX3.HWR|DEBUG  | calling Lims.get_lims_samples",
             "2025-12-07 09:13:30,953 |MX3.HWR|ERROR  | Exception raised when calling Lims.get_lims_samples", *tb,
             "2025-12-07 09:13:31,002 |HWR    |INFO   | sample changer ready"]
    assert spans(texts) == [(0, 0), (1, 5), (6, 6)]
    # (the bars with blanks around them)
    assert spans(["2025-12-07 09:13:30.953 | ERROR | app.lims | lookup failed", *tb]) == [(0, 4)]
