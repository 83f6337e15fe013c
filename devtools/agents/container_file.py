"""Write a container log (CRI or docker json-file) from the real lines of a corpus file.

    python -m devtools.agents.container_file --format cri corpus/training/X.log tests/fixtures/agents/inputs/cri_X.log

CRI (containerd, CRI-O): ``<RFC3339Nano> <stream> <P|F> <text>``. Docker json-file:
``{"log":"<text>\\n","stream":"<stream>","time":"<RFC3339Nano>"}``. The stream is ``stdout`` for
the lines Python's logging prints at INFO and below, ``stderr`` otherwise. A line longer than
``--split`` characters is cut into pieces the way the runtime cuts a line longer than its buffer:
CRI tags every piece but the last ``P``; docker leaves the newline off every piece but the last.
Times start at ``--start`` and advance one microsecond per record, so the file is the same on
every run.
"""

from __future__ import annotations

import argparse
import json
import re
from datetime import UTC, datetime, timedelta
from pathlib import Path

_QUIET = re.compile(r"^(INFO|DEBUG)\b")


def container_lines(lines: list[str], fmt: str, split: int, start: datetime) -> list[str]:
    out = []
    t = start
    for line in lines:
        stream = "stdout" if _QUIET.match(line) else "stderr"
        pieces = [line[i:i + split] for i in range(0, len(line), split)] or [""]
        for n, piece in enumerate(pieces):
            last = n == len(pieces) - 1
            stamp = t.strftime("%Y-%m-%dT%H:%M:%S.%f") + "123Z"  # nanoseconds, as the runtimes write them
            if fmt == "cri":
                out.append(f"{stamp} {stream} {'F' if last else 'P'} {piece}")
            else:
                out.append(json.dumps({"log": piece + ("\n" if last else ""), "stream": stream, "time": stamp},
                                      ensure_ascii=False, separators=(",", ":")))
            t += timedelta(microseconds=1)
    return out


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("source", type=Path)
    ap.add_argument("target", type=Path)
    ap.add_argument("--format", choices=("cri", "docker"), required=True)
    ap.add_argument("--split", type=int, default=150)
    ap.add_argument("--start", default="2024-08-29T09:57:06+00:00")
    args = ap.parse_args(argv)
    lines = args.source.read_bytes().decode("utf-8").split("\n")
    if lines and lines[-1] == "":
        lines.pop()
    start = datetime.fromisoformat(args.start).astimezone(UTC)
    args.target.parent.mkdir(parents=True, exist_ok=True)
    text = "\n".join(container_lines(lines, args.format, args.split, start)) + "\n"
    args.target.write_text(text, encoding="utf-8")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
