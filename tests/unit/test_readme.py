"""The README is a user's guide: short, with current figures that docs/benchmarks.md holds, and no history."""

from __future__ import annotations

import re

from streams.config import REPO_ROOT

README = (REPO_ROOT / "README.md").read_text(encoding="utf-8")
DOCS = {p.name: p.read_text(encoding="utf-8") for p in (REPO_ROOT / "docs").glob("*.md")}


def test_the_readme_stays_short() -> None:
    assert len(README.encode()) < 15_000


def test_the_readme_starts_with_the_two_commands() -> None:
    first_block = README.split("```")[3]  # the picture is the first code block, the commands the second
    lines = first_block.strip().splitlines()[1:]  # after the block's language
    assert [line.split("#")[0].strip() for line in lines] == ["make demo", "make test"]
    ci = (REPO_ROOT / ".ci" / "run").read_text()
    assert ci.rstrip().splitlines()[-1] == "make test", ".ci/run runs exactly the README's test command"


def test_headline_figures_are_the_ones_in_benchmarks_md() -> None:
    section = README.split("## Performance", 1)[1].split("\n## ", 1)[0]
    rows = [r for r in section.splitlines() if r.startswith("| ") and not r.startswith(("| what", "|---"))]
    assert rows, "the README has a headline table"
    for row in rows:
        figure = row.split("|")[2]
        for number in re.findall(r"\d[\d,]*(?:\.\d+)?", figure):
            assert number in DOCS["benchmarks.md"], f"{number} ({row}) is not a figure of docs/benchmarks.md"


def test_every_linked_doc_exists() -> None:
    for target in re.findall(r"\]\((docs/[^)#]+)\)", README):
        assert (REPO_ROOT / target).is_file(), target


def test_no_history_in_the_readme_and_docs() -> None:
    """Dates, our issue numbers and session stories belong in commits; upstream bugs are cited as
    `<project>'s issue #N`."""
    for name, text in {"README.md": README, **DOCS}.items():
        assert not re.search(r"\bissue \d|\(issue|\bsession\b", text, flags=re.I), name
        # A transcript of commands as they were run ("$ sluice ..." and what they printed) shows times
        # as data, not history.
        prose = re.sub(r"```\n\$ .*?```", "", text, flags=re.S)
        assert not re.search(r"\b20\d\d-\d\d-\d\d\b", prose.replace("2026-01-", "")), name
