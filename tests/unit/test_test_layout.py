"""The test tree itself: pytest imports test modules by basename (rootdir import mode, no packages),
so two test files with one name in different folders stop the whole run at collection."""

from collections import defaultdict
from pathlib import Path

import pytest

pytestmark = pytest.mark.unit

TESTS = Path(__file__).resolve().parents[1]


def test_every_test_module_has_a_unique_basename():
    seen: dict[str, list[str]] = defaultdict(list)
    for path in TESTS.rglob("test_*.py"):
        seen[path.name].append(str(path.relative_to(TESTS)))
    clashes = {name: paths for name, paths in seen.items() if len(paths) > 1}
    assert not clashes, f"rename one of each pair so pytest can collect both: {clashes}"
