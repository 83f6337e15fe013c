"""Print a log file with 1-based line numbers (as multiline_score splits on \\n), long lines cut.

Usage: python tests/corpus_tools/show_sys.py FILE [FIRST [LAST]] [--width N]
\\r and \\t are shown as visible escapes; a line cut is marked with its full length.
"""
import sys

args = [a for a in sys.argv[1:] if not a.startswith("--")]
width = 220
for a in sys.argv[1:]:
    if a.startswith("--width="):
        width = int(a.split("=", 1)[1])
path = args[0]
first = int(args[1]) if len(args) > 1 else 1
last = int(args[2]) if len(args) > 2 else 10**9
lines = open(path, "rb").read().split(b"\n")
if lines and lines[-1] == b"":
    lines.pop()
for no, raw in enumerate(lines, 1):
    if no < first or no > last:
        continue
    s = raw.decode("utf-8", "replace").replace("\r", "\\r").replace("\t", "\\t")
    if len(s) > width:
        s = s[:width] + f" ...[{len(raw)}B]"
    print(f"{no:5} {s}")
