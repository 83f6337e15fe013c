"""Which paths the shipper reads: glob matching, confinement, and real symlinks, FIFOs and loops on disk."""

from __future__ import annotations

import os
from pathlib import Path

import pytest

from streams.ship.paths import GlobPattern, Refusal, inside
from streams.ship.tailer import discover, open_confined, resolved_roots


def test_glob_root_and_components() -> None:
    p = GlobPattern.parse("/var/log/train/**/*.log")
    assert p.root == "/var/log/train" and p.parts == ("**", "*.log")
    assert p.matches(("a.log",)) and p.matches(("job", "rank0", "a.log"))
    assert not p.matches(("a.log.1",)) and not p.matches(("job", "a.txt"))
    assert p.may_contain(("job",)) and p.may_contain(("job", "deeper"))
    assert GlobPattern.parse("/logs/a.log") == GlobPattern("/logs/a.log", "/logs", ("a.log",))
    flat = GlobPattern.parse("/logs/*/x.log")
    assert flat.may_contain(("job",)) and not flat.may_contain(("job", "deeper"))
    assert flat.matches(("job", "x.log")) and not flat.matches(("job", "deeper", "x.log"))


def test_wildcards_leave_hidden_names_alone_as_glob_does() -> None:
    p = GlobPattern.parse("/l/**/*.log")
    assert not p.matches((".hidden.log",)) and not p.matches((".cache", "a.log"))
    assert not p.may_contain((".cache",))
    assert GlobPattern.parse("/l/*/.*.log").matches(("job", ".a.log"))  # a pattern that asks for them


def test_inside_is_by_whole_components() -> None:
    roots = ("/var/log/train",)
    assert inside("/var/log/train/a.log", roots) and inside("/var/log/train", roots)
    assert not inside("/var/log/train2/a.log", roots) and not inside("/etc/passwd", roots)
    assert inside("/anything", ("/",))


@pytest.fixture
def tree(tmp_path: Path) -> tuple[Path, Path]:
    """logs/ (the root) with real files, and outside/ with a secret the logs must never lead to."""
    logs, outside = tmp_path / "logs", tmp_path / "outside"
    (logs / "job").mkdir(parents=True)
    outside.mkdir()
    (outside / "secret.log").write_text("token=hunter2\n")
    (outside / "dir").mkdir()
    (outside / "dir" / "secret.log").write_text("token=hunter2\n")
    (logs / "rank0.log").write_text("ok\n")
    (logs / "job" / "rank1.log").write_text("ok\n")
    return logs, outside


def test_discovery_refuses_symlinks_fifos_and_never_walks_a_linked_directory(tree) -> None:
    logs, outside = tree
    (logs / "token.log").symlink_to(outside / "secret.log")  # to a file outside the root
    (logs / "linked").symlink_to(outside / "dir")  # to a directory: `**` would walk it
    (logs / "inner.log").symlink_to(logs / "rank0.log")  # even a symlink inside the root is refused
    os.mkfifo(logs / "pipe.log")
    (logs / "loop").symlink_to(logs)  # a loop a recursive glob would follow until the path is too long
    patterns = [GlobPattern.parse(f"{logs}/**/*.log")]
    found = discover(patterns, exclude=[])
    assert found.files == [f"{logs}/job/rank1.log", f"{logs}/rank0.log"]
    assert found.refused == {f"{logs}/token.log": Refusal.SYMLINK, f"{logs}/linked": Refusal.SYMLINK,
                             f"{logs}/inner.log": Refusal.SYMLINK, f"{logs}/loop": Refusal.SYMLINK,
                             f"{logs}/pipe.log": Refusal.NOT_REGULAR}
    excluded = discover(patterns, exclude=["*/token.log", "*/pipe.log"])
    assert f"{logs}/token.log" not in excluded.refused and f"{logs}/pipe.log" not in excluded.refused


def test_open_refuses_a_symlink_a_fifo_and_a_path_through_a_linked_directory(tree) -> None:
    logs, outside = tree
    roots = resolved_roots([GlobPattern.parse(f"{logs}/**/*.log")])
    (logs / "token.log").symlink_to(outside / "secret.log")
    assert open_confined(str(logs / "token.log"), roots) is Refusal.SYMLINK  # O_NOFOLLOW
    os.mkfifo(logs / "pipe.log")
    assert open_confined(str(logs / "pipe.log"), roots) is Refusal.NOT_REGULAR  # and it did not block
    # A directory swapped for a symlink after discovery: O_NOFOLLOW only guards the last component,
    # the resolved location of what was opened catches the rest.
    (logs / "swapped").symlink_to(outside / "dir")
    assert open_confined(str(logs / "swapped" / "secret.log"), roots) is Refusal.OUTSIDE_ROOTS
    opened = open_confined(str(logs / "rank0.log"), roots)
    assert isinstance(opened, tuple)
    os.close(opened[0])
    assert open_confined(str(logs / "missing.log"), roots) is None


def test_a_root_that_is_itself_a_symlink_is_the_operators_choice(tree, tmp_path) -> None:
    logs, _ = tree
    (tmp_path / "mounted").symlink_to(logs)
    patterns = [GlobPattern.parse(f"{tmp_path}/mounted/*.log")]
    roots = resolved_roots(patterns)
    assert roots == (str(logs.resolve()),)
    found = discover(patterns, exclude=[])
    assert found.files == [f"{tmp_path}/mounted/rank0.log"] and not found.refused
    opened = open_confined(found.files[0], roots)
    assert isinstance(opened, tuple)
    os.close(opened[0])
