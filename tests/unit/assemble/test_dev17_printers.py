"""Printers met in corpus/wild/dev17 (Python tracebacks and warnings in GPU training and serving logs). Inputs
follow the printers' own code; each test names the rule it guards, and removing that rule makes it fail.
"""

from __future__ import annotations

from devtools.testing.merger import groups

# -- journalctl's short format in the reader's locale ---------------------------------------------------


def _journal(month: str) -> list[str]:
    return [f"{month} 12 14:43:55 gpu-host systemd[1]: Started Collect GPU stats.",
            f"{month} 12 14:43:55 gpu-host exporter.py[75010]: Traceback (most recent call last):",
            f'{month} 12 14:43:55 gpu-host exporter.py[75010]:   File "/usr/bin/exporter.py", line 5, in <module>',
            f"{month} 12 14:43:55 gpu-host exporter.py[75010]:     import pynvml",
            f"{month} 12 14:43:55 gpu-host exporter.py[75010]: ModuleNotFoundError: No module named 'pynvml'",
            f"{month} 12 14:43:55 gpu-host systemd[1]: exporter.service: Main process exited, code=exited",
            f"{month} 12 14:43:56 gpu-host systemd[1]: exporter.service: Failed with result 'exit-code'."]


def test_journald_lines_with_a_localised_month_keep_their_writer():
    # rule: STREAM_PREFIXES "syslog" month as strftime's %b in any locale (journalctl's short format): the
    # program's traceback is one event under its tag, systemd's records are each a line of their own
    for month in ("Dez", "окт", "nov.", "7月", "Oct"):
        assert groups(_journal(month)) == [[0], [1, 2, 3, 4], [5], [6]], month


def test_a_time_and_a_word_without_a_writer_tag_is_not_a_journal_line():
    # the same rule: the month may be any short word only where the writer's tag follows the time
    texts = ["Step 12 10:00:00 loss 1.25", "Traceback (most recent call last):",
             '  File "train.py", line 3, in <module>', "    main()", "RuntimeError: boom"]
    assert groups(texts) == [[0], [1, 2, 3, 4]]


# -- a tqdm bar the next writer's first line was spliced onto -------------------------------------------

_BAR = "  0%|          | 0/12575 [00:00<?, ?it/s]"
_WARN = ("/opt/venv/lib/python3.12/site-packages/torch/utils/checkpoint.py:295: FutureWarning: "
         "`torch.cpu.amp.autocast(args...)` is deprecated. Please use `torch.amp.autocast('cpu', args...)` instead.")
_SRC = "  with torch.enable_grad(), device_autocast_ctx, torch.cpu.amp.autocast(**ctx.cpu_autocast_kwargs):"


def test_a_warning_spliced_after_a_progress_bar_keeps_its_source_line():
    # rule: rules.SPLICE_REST_RE (warnings.showwarning writes "file:line: Category: message" to stderr while the
    # bar on the same terminal has no newline yet; the bar is a splice before the warning's first line)
    assert groups([_BAR + _WARN, _SRC, _WARN, _SRC]) == [[0, 1], [2, 3]]


def test_a_bar_before_other_text_stays_a_line_of_its_own():
    # a bar before free text is not a splice before a printer's first line: the next indented line is not its
    assert groups([_BAR + "some text", _SRC]) != [[0, 1]]
