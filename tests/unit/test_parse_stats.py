"""`sluice parse --stats`: the events on stdout, then per multiline kind the events and their lines on stderr."""

from __future__ import annotations

import json
from pathlib import Path

from click.testing import CliRunner

from streams.cli.main import cli

LOG = """\
2024-07-13 15:06:34,921 - INFO - starting
Traceback (most recent call last):
  File "/workspace/train.py", line 212, in <module>
    main()
RuntimeError: CUDA error: an illegal memory access was encountered
[rank0]:[E1021 12:00:01.123456789 ProcessGroupNCCL.cpp:1595] [PG 0 Rank 0] Process group watchdog thread terminated
Exception raised from c10_cuda_check_implementation at ../c10/cuda/CUDAException.cpp:43 (most recent call first):
frame #0: c10::Error::Error(c10::SourceLocation, std::string) + 0x96 (0x7f31b24b9446 in /usr/lib/libc10.so)
2024-07-13 15:06:35,000 - INFO - done
"""


def test_stats_count_events_per_multiline_kind_and_the_lines_they_merged(tmp_path: Path) -> None:
    log = tmp_path / "train.log"
    log.write_text(LOG)
    result = CliRunner().invoke(cli, ["parse", "--stats", str(log)])
    assert result.exit_code == 0, result.output
    events = [json.loads(line) for line in result.stdout.splitlines()]
    assert [e["line_count"] for e in events] == [1, 4, 3, 1]
    report = result.stderr.splitlines()
    assert report[0] == "4 events and 0 metric points from 9 lines"
    assert report[1] == "2 multiline events merged 7 lines:"
    rows = {line.split()[0]: line.split()[1:] for line in report[2:]}
    assert rows == {"python_traceback": ["1", "events", "4", "lines"], "cpp_frames": ["1", "events", "3", "lines"]}


def test_without_stats_stderr_stays_empty(tmp_path: Path) -> None:
    log = tmp_path / "train.log"
    log.write_text(LOG)
    result = CliRunner().invoke(cli, ["parse", str(log)])
    assert result.exit_code == 0 and result.stderr == ""
    assert len(result.stdout.splitlines()) == 4
