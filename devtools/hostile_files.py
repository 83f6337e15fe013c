"""Hostile files through `sluice parse`, long mode (``python -m devtools.hostile_files --inputs 2000 --big``).

The generator and the checks are :mod:`devtools.testing.hostile_files`; the unit suite runs a small seeded
sample. Each finding is printed once, with the seed and input number that reproduce it; the report at the
end gives the inputs, the time and the slowest output (CPU seconds, and how many lines it held).
"""

from __future__ import annotations

import argparse
import random
import sys
import time

from devtools.testing.hostile_files import check, hostile_file


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(prog="python -m devtools.hostile_files", description=__doc__.splitlines()[0])
    ap.add_argument("--seed", type=int, default=1)
    ap.add_argument("--inputs", type=int, default=1000)
    ap.add_argument("--big", action="store_true", help="megabyte tokens and lines of repeated keys")
    ap.add_argument("--engine", choices=["python", "native"], default=None, help="default: the process's")
    args = ap.parse_args(argv)
    rng = random.Random(args.seed)
    seen: set[str] = set()
    slowest, slowest_lines, slowest_at = 0.0, 0, -1
    started, cpu = time.monotonic(), time.process_time()
    for i in range(args.inputs):
        report = check(hostile_file(rng, args.big), args.engine)
        if report.slowest > slowest:
            slowest, slowest_lines, slowest_at = report.slowest, report.slowest_lines, i
        for finding in report.findings:
            head = finding.split("\n", 1)[0][:200]
            if head not in seen:
                seen.add(head)
                print(f"--seed {args.seed} input {i}: {finding}", flush=True)
    print(f"{args.inputs} inputs in {time.monotonic() - started:.0f} s ({time.process_time() - cpu:.0f} CPU-s); "
          f"{len(seen)} distinct findings; slowest output {slowest:.3f} CPU-s holding {slowest_lines} line(s) "
          f"(input {slowest_at})")
    return 1 if seen else 0


if __name__ == "__main__":
    sys.exit(main())
