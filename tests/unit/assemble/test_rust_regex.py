"""The translation of the rule tables' patterns for the native engine refuses what it cannot keep."""

from __future__ import annotations

import pytest

from streams.assemble.rust_regex import Untranslatable, class_items, translate


@pytest.mark.parametrize("pattern", [r"(?<!\d)x", r"a(?=b)", r"(a)\1", r"\bword", r"a++", r"(?>a)", r"(?i)x",
                                     r"[a&&b]", r"x{", r"(a", r"a)"])
def test_constructs_rust_reads_otherwise_are_refused(pattern: str) -> None:
    with pytest.raises(Untranslatable):
        translate(pattern)


def test_a_dollar_is_kept_only_where_the_end_is_not_used() -> None:
    with pytest.raises(Untranslatable, match="end is used"):
        translate(r"x\s*$")
    assert translate(r"x\s*$", ends_matter=False).endswith(r"(?:\n?\z)")


def test_classes_are_pythons_own() -> None:
    assert "\\x{660}-\\x{669}" in class_items("d")  # Arabic-Indic digits: Python's \d
    assert "\\x{1C}-\\x{20}" in class_items("s")  # str.isspace() holds the information separators
    assert "\\x{B2}" in class_items("w")  # superscript two: str.isalnum()
    assert translate(r"[^\s\]:]+\{,3}\u2502") == f"[^{class_items('s')}\\]:]+\\{{,3\\}}\\x{{2502}}"
