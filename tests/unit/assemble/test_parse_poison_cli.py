"""`sluice parse` on a file holding poison lines: exit 0, an output for every line, reasons on stderr."""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path

from test_poison import GOOD, POISON

from streams.assemble.outputs import encode_body
from streams.assemble.pipeline import Output, parse_files

ROOT = Path(__file__).resolve().parents[3]


def poison_file(tmp_path: Path) -> tuple[Path, dict[int, str]]:
    """Good lines with each poison line between two of them; returns the file and {line number: poison name}."""
    lines: list[bytes] = []
    poison_at = {}
    for i, name in enumerate(sorted(POISON)):
        lines.append(GOOD[i % len(GOOD)].encode())
        lines.append(POISON[name][0])
        poison_at[len(lines)] = name
    lines.append(GOOD[0].encode())
    path = tmp_path / "poison.log"
    path.write_bytes(b"\n".join(lines) + b"\n")
    return path, poison_at


def covers(output: dict, no: int) -> bool:
    if output.get("kind") == "dead_letter":
        return output["offset"] == no or output["offset"] <= no <= int(output["headers"].get("last_offset", -1))
    return output["raw"]["first_offset"] <= no <= output["raw"]["last_offset"]


def test_sluice_parse_prints_an_output_for_every_line_and_exits_0(tmp_path: Path) -> None:
    path, poison_at = poison_file(tmp_path)
    env = {**os.environ, "PYTHONPATH": str(ROOT)}
    run = subprocess.run([sys.executable, "-m", "streams.cli", "parse", str(path)], capture_output=True, env=env,
                         timeout=120, check=False)
    assert run.returncode == 0, run.stderr.decode()
    outputs = [json.loads(line) for line in run.stdout.decode().splitlines()]
    total = len(path.read_bytes().splitlines())
    for no in range(1, total + 1):
        holding = [o for o in outputs if covers(o, no)]
        assert len(holding) == 1, (no, poison_at.get(no), holding)
    letters = [o for o in outputs if o.get("kind") == "dead_letter"]
    assert letters, "today's poison lines include some that only a dead letter can hold"
    stderr = run.stderr.decode()
    for letter in letters:
        assert letter["stage"] == "assemble" and letter["error_type"]
        assert f"{path}:{letter['offset']}" in letter["error"]
        assert letter["error"] in stderr
    deep = next(no for no, name in poison_at.items() if name == "deeply_nested_json")
    assert next(o for o in outputs if covers(o, deep))["error_type"] == "json_limits"
    for o in outputs:  # what it prints as an event, the worker can produce: it encodes
        if o.get("kind") != "dead_letter":
            encode_body(Output("event" if "message" in o else "metric", "", None, o))
    events = [o["message"] for o in outputs if "message" in o]
    assert sum(events.count(g) for g in GOOD) == len(poison_at) + 1, "every good line is its own event"


def test_parse_files_without_the_encoder_still_isolates_each_line(tmp_path: Path) -> None:
    path, poison_at = poison_file(tmp_path)
    outputs = list(parse_files([path]))
    for no in range(1, len(path.read_bytes().splitlines()) + 1):
        assert len([o for o in outputs if covers(o, no)]) == 1, (no, poison_at.get(no))


def test_an_unreadable_file_is_one_line_on_stderr_and_exit_1(tmp_path: Path) -> None:
    path = tmp_path / "secret.log"
    path.write_text("x\n")
    path.chmod(0)
    if os.access(path, os.R_OK):  # root reads whatever the mode: a file whose every read fails instead
        path, error = Path("/proc/self/mem"), "Input/output error"
    else:
        error = "Permission denied"
    env = {**os.environ, "PYTHONPATH": str(ROOT)}
    run = subprocess.run([sys.executable, "-m", "streams.cli", "parse", str(path)], capture_output=True, env=env,
                         timeout=120, check=False)
    assert run.returncode == 1
    assert run.stderr.decode().startswith(f"sluice: cannot read {path}: {error}")
    assert len(run.stderr.decode().strip().splitlines()) == 1


def test_parse_files_with_the_workers_encoder_letters_what_would_not_encode(tmp_path: Path) -> None:
    path = tmp_path / "x.log"
    path.write_text(f"{GOOD[0]}\nPOISON that the encoder refuses\n{GOOD[1]}\n")

    def encode(out: Output) -> bytes:
        if "POISON" in (out.value.get("message") or ""):
            raise ValueError("refused")
        return encode_body(out)

    outputs = list(parse_files([path], encode=encode, default_ts_ms=1_700_000_000_000))
    assert [o.get("kind", "event") for o in outputs] == ["event", "dead_letter", "event"]
    letter = outputs[1]
    assert letter["headers"]["step"] == "encode" and letter["offset"] == 2 and f"{path}:2" in letter["error"]
