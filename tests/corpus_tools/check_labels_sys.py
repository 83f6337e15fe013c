"""Show every labelled event's edges for an eye check: the line before, first, (count), last, the line after.

Usage: python tests/corpus_tools/check_labels_sys.py DIR [NAME-SUBSTRING] [--width=N]
"""
import json
import sys
from pathlib import Path

args = [a for a in sys.argv[1:] if not a.startswith("--")]
width = 150
for a in sys.argv[1:]:
    if a.startswith("--width="):
        width = int(a.split("=", 1)[1])
d = Path(args[0])
sub = args[1] if len(args) > 1 else ""


def show(no, lines, mark):
    if 1 <= no <= len(lines):
        s = lines[no - 1].decode("utf-8", "replace").replace("\r", "\\r").replace("\t", "\\t")
        print(f"   {mark}{no:5} {s[:width]}")


for lab in sorted((d / "labels").glob("*.json")):
    if sub not in lab.stem:
        continue
    lines = (d / (lab.stem + ".log")).read_bytes().split(b"\n")
    if lines and lines[-1] == b"":
        lines.pop()
    data = json.loads(lab.read_text())
    print(f"== {lab.stem} ({len(lines)} lines, {len(data['events'])} events)")
    for e in data["events"]:
        nums = sorted(e["lines"]) if "lines" in e else list(range(e["first"], e["last"] + 1))
        print(f"  [{e['kind']}] {nums[0]}-{nums[-1]} ({len(nums)} lines)")
        show(nums[0] - 1, lines, " ")
        show(nums[0], lines, ">")
        show(nums[-1], lines, "<")
        show(nums[-1] + 1, lines, " ")
