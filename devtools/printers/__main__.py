"""Regenerate ``corpus/printers``: ``python -m devtools.printers [--out DIR] [--lang python ...]``.

Needs the printers named in ``corpus/printers/README.md`` (CPython 3.11-3.13 under pyenv, JDK 17
and 25, Go, rustc, gcc, gdb). Output differs between runs in addresses, thread ids and times only.
"""

from __future__ import annotations

import argparse
import json
import sys
import tempfile
from pathlib import Path

from devtools import CORPUS_DIR
from devtools.printers import capture, frameworks
from devtools.printers.compose import WRAPPERS, compose, compose_interleaved

LANGS = {**capture.LANGS, **frameworks.LANGS}
INTERLEAVED = ("rank", "ray")  # wrappers whose prefix tells the ranks apart
SEEDS = (1, 2)  # each seed lays the same captures out in another order between other records


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--out", type=Path, default=CORPUS_DIR / "printers")
    ap.add_argument("--lang", action="append", choices=sorted(LANGS))
    args = ap.parse_args(argv)
    with tempfile.TemporaryDirectory(prefix="sluice-printers-") as tmp:
        for lang in args.lang or LANGS:
            captures = list(LANGS[lang](Path(tmp)))
            d = args.out / lang
            (d / "labels").mkdir(parents=True, exist_ok=True)
            for old in (*d.glob("*.log"), *(d / "labels").glob("*.json")):
                old.unlink()
            n = 0
            for wrapper in WRAPPERS:
                for seed in SEEDS:
                    text, labels = compose(captures, lang, wrapper, seed)
                    name = f"{lang}_{wrapper}_s{seed}"
                    (d / f"{name}.log").write_text(text, encoding="utf-8")
                    (d / "labels" / f"{name}.json").write_text(json.dumps(labels, indent=1) + "\n")
                    n += sum(e["kind"] != "ignore" for e in labels["events"])
            for wrapper in INTERLEAVED:
                text, labels = compose_interleaved(captures, lang, wrapper, 1)
                name = f"{lang}_{wrapper}_interleaved"
                (d / f"{name}.log").write_text(text, encoding="utf-8")
                (d / "labels" / f"{name}.json").write_text(json.dumps(labels, indent=1) + "\n")
                n += sum(e["kind"] != "ignore" for e in labels["events"])
            print(f"{lang}: {len(captures)} captures, {n} labelled events in {d}", file=sys.stderr)
    return 0


if __name__ == "__main__":
    sys.exit(main())
