"""Build corpus/wild/<split>/ files from the registry in wild_sys_entries.py (this worker's share).

Repo entries are cut with `git show <commit>:<path>` from a local snapshot of the repository
(/work/.mirror/<owner>+<name>/repo, made by the session's fetch tool) and sliced to whole lines
start..end, byte for byte. The split is decided by the source URL only:
sha256(url)[0] % 3 == 0 -> test, else dev. Labels are written next to the logs from the entry's
hand-checked events.

Usage: python tests/corpus_tools/wild_sys.py [NAME-SUBSTRING]
"""
import hashlib
import json
import subprocess
import sys
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent))
from wild_sys_entries import ENTRIES  # noqa: E402

ROOT = Path(__file__).resolve().parents[2] / "corpus" / "wild"
MIRROR = Path("/work/.mirror")


def split_of(url: str) -> str:
    return "test" if hashlib.sha256(url.encode()).digest()[0] % 3 == 0 else "dev"


def repo_url(e) -> str:
    return f"https://github.com/{e['repo']}/blob/{e['commit']}/{e['path']}#L{e['start']}-L{e['end']}"


def cut(e) -> bytes:
    git = MIRROR / e["repo"].replace("/", "+") / "repo"
    data = subprocess.run(["git", "--git-dir", str(git), "show", f"{e['commit']}:{e['path']}"],
                          check=True, capture_output=True).stdout
    lines = data.split(b"\n")
    had_final_nl = data.endswith(b"\n")
    if had_final_nl:
        lines.pop()
    piece = lines[e["start"] - 1:e["end"]]
    assert len(piece) == e["end"] - e["start"] + 1, (e["name"], len(lines))
    out = b"\n".join(piece)
    if e["end"] < len(lines) or had_final_nl:
        out += b"\n"
    return out


def main():
    sub = sys.argv[1] if len(sys.argv) > 1 else ""
    names = set()
    for e in ENTRIES:
        assert e["name"] not in names, e["name"]
        names.add(e["name"])
        if sub not in e["name"]:
            continue
        if "repo" in e:
            url = repo_url(e)
            data = cut(e)
        else:  # issue excerpt, already cut into place by issue_cut_sys.py
            url = e["url"]
            data = None
        split = split_of(url)
        d = ROOT / split
        (d / "labels").mkdir(parents=True, exist_ok=True)
        if data is None:
            data = (d / (e["name"] + ".log")).read_bytes()
        else:
            (d / (e["name"] + ".log")).write_bytes(data)
        lab = {"source": url, "notes": e["notes"], "license": e["license"], "events": e["events"]}
        (d / "labels" / (e["name"] + ".json")).write_text(json.dumps(lab, indent=1, ensure_ascii=False) + "\n")
        n = data.count(b"\n")
        print(f"{split:4} {e['name']} ({n} lines, {len(e['events'])} events)")


if __name__ == "__main__":
    main()
