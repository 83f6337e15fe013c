"""Which paths the shipper may read (pure: callers pass names and resolved paths, never the disk).

A job that can write under the log directory must not be able to make the shipper read anything
else: a symlink named ``x.log`` pointing at the service-account token, a symlinked directory
pointing at ``/proc/self``, a FIFO that blocks the reader. So the globs are matched while walking
the directories without following symlinks (``GlobPattern``), symlinks and non-regular files are
refused, and the file actually opened must resolve inside the globs' roots (``inside``).

Glob syntax is Python's ``glob``: ``*``, ``?`` and ``[...]`` within one path component, ``**`` as a
whole component for zero or more directories; wildcards do not match a leading dot.
"""

from __future__ import annotations

import enum
import fnmatch
from dataclasses import dataclass

_MAGIC = frozenset("*?[")


class Refusal(enum.Enum):
    """Why a path the globs match is not read."""

    SYMLINK = "symlink"  # the path (or a directory the globs would descend into) is a symbolic link
    OUTSIDE_ROOTS = "outside_roots"  # what was opened resolves outside every glob's root
    NOT_REGULAR = "not_regular"  # a FIFO, socket or device


def _magic(component: str) -> bool:
    return not _MAGIC.isdisjoint(component)


def _component_matches(name: str, pattern: str) -> bool:
    if not _magic(pattern):
        return name == pattern
    if name.startswith(".") and not pattern.startswith("."):
        return False  # as glob: wildcards leave hidden names alone
    return fnmatch.fnmatchcase(name, pattern)


@dataclass(frozen=True, slots=True)
class GlobPattern:
    """A glob split into its literal root directory and the components matched below it."""

    pattern: str
    root: str
    parts: tuple[str, ...]

    @classmethod
    def parse(cls, pattern: str) -> GlobPattern:
        components = pattern.split("/")
        literal = 0
        while literal < len(components) - 1 and not _magic(components[literal]):
            literal += 1
        root = "/".join(components[:literal]) or ("/" if pattern.startswith("/") else ".")
        return cls(pattern, root, tuple(c for c in components[literal:] if c))

    def matches(self, rel: tuple[str, ...]) -> bool:
        """Does the path ``root/rel...`` match the whole pattern?"""
        return _match(rel, self.parts)

    def may_contain(self, rel: tuple[str, ...]) -> bool:
        """Could a file below the directory ``root/rel...`` match (is it worth walking into)?"""
        return _prefix(rel, self.parts)


def _match(rel: tuple[str, ...], parts: tuple[str, ...]) -> bool:
    if not parts:
        return not rel
    head = parts[0]
    if head == "**":
        for i in range(len(rel) + 1):
            if _match(rel[i:], parts[1:]):
                return True
            if i < len(rel) and rel[i].startswith("."):
                return False  # `**` does not walk through hidden directories
        return False
    return bool(rel) and _component_matches(rel[0], head) and _match(rel[1:], parts[1:])


def _prefix(rel: tuple[str, ...], parts: tuple[str, ...]) -> bool:
    if not rel:
        return bool(parts)
    if not parts:
        return False
    head = parts[0]
    if head == "**":
        return _prefix(rel, parts[1:]) or (not rel[0].startswith(".") and _prefix(rel[1:], parts))
    return _component_matches(rel[0], head) and _prefix(rel[1:], parts[1:])


def inside(resolved: str, roots: tuple[str, ...]) -> bool:
    """Is an absolute, symlink-free path at or below one of the (resolved) roots?"""
    return any(resolved == root or resolved.startswith(root if root.endswith("/") else root + "/")
               for root in roots)

