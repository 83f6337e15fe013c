"""Cut a log excerpt out of a GitHub issue text returned by the search tool, byte-exact.

stdin: the excerpt exactly as the search tool returned it, still JSON-escaped (the characters between
the quotes of its "excerpt" field). It is decoded with json.loads, split on \\n, and the lines from the
first one starting with FIRST through the first later one starting with LAST are written (LF, final
newline) to corpus/wild/<split>/<NAME>.log, where split comes from the issue URL's sha256.

Usage: python tests/corpus_tools/issue_cut_sys.py URL NAME FIRST LAST [NTH] < excerpt.json-string
"""
import hashlib
import json
import sys
from pathlib import Path

url, name, first, last = sys.argv[1:5]
nth = int(sys.argv[5]) if len(sys.argv) > 5 else 1  # LAST's occurrence after FIRST
raw = sys.stdin.read()
if raw.endswith("\n"):
    raw = raw[:-1]
text = json.loads('"' + raw + '"')
lines = text.split("\n")
i = next(k for k, l in enumerate(lines) if l.startswith(first))
j = [k for k in range(i, len(lines)) if lines[k].startswith(last)][nth - 1]
split = "test" if hashlib.sha256(url.encode()).digest()[0] % 3 == 0 else "dev"
out = Path(__file__).resolve().parents[2] / "corpus" / "wild" / split / (name + ".log")
out.parent.mkdir(parents=True, exist_ok=True)
out.write_text("\n".join(lines[i:j + 1]) + "\n")
print(split, out.name, j - i + 1, "lines")
for n, l in enumerate(lines[i:j + 1], 1):
    print(f"{n:4} {l[:150]!r}")
