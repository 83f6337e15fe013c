"""Compiled Hyperscan databases kept on disk between processes.

Compiling the secret gate's database costs seconds of CPU, paid by every worker start and every ``sluice
parse``; loading the same database serialized takes a millisecond. The file is named by a digest of what was
compiled (the expressions, their flags, the Hyperscan binding's version and the machine), so another rule set
or version never reads it; Hyperscan refuses a file that is cut, changed or built for another platform, and
then the database is compiled again and the file replaced. Where no cache directory can be written (a
read-only root file system) everything works as before, only slower to start.

The directory: ``$XDG_CACHE_HOME/sluice/hyperscan``, else ``~/.cache/sluice/hyperscan``. It keeps the
:data:`KEEP` databases used last (a file is a megabyte or so; each upgrade of the rules writes a new one).
"""

from __future__ import annotations

import contextlib
import hashlib
import logging
import os
import platform
import tempfile
from collections.abc import Callable, Sequence
from pathlib import Path
from typing import Any

log = logging.getLogger(__name__)

KEEP = 8


def cache_dir() -> Path | None:
    """Where the databases are kept, or None when there is no home to keep them in."""
    base = os.environ.get("XDG_CACHE_HOME", "").strip()
    if base:
        return Path(base) / "sluice" / "hyperscan"
    try:
        return Path.home() / ".cache" / "sluice" / "hyperscan"
    except RuntimeError:  # no HOME and no passwd entry (some containers)
        return None


def digest(hyperscan: Any, what: Sequence[bytes]) -> str:
    """The name of the file that holds the database compiled from ``what``."""
    h = hashlib.sha256()
    for part in (str(getattr(hyperscan, "__version__", "")).encode(), platform.machine().encode(), *what):
        h.update(len(part).to_bytes(8, "big"))
        h.update(part)
    return h.hexdigest()[:40]


def cached_database(hyperscan: Any, what: Sequence[bytes], build: Callable[[], Any], directory: Path | None) -> Any:
    """The block-mode database that ``build`` compiles from ``what`` (every input it reads): loaded from
    ``directory`` when a good copy is there, else built and written there for the next process."""
    if directory is None:
        return build()
    path = directory / f"{digest(hyperscan, what)}.hsdb"
    data = _read_own(path)
    if data is not None:
        try:
            db = hyperscan.loadb(data, hyperscan.HS_MODE_BLOCK)
        except hyperscan.error as exc:
            log.info("the cached Hyperscan database %s is not usable (%s): compiling it again", path, exc)
        else:
            _touch(path)
            return db
    db = build()
    _write(path, hyperscan.dumpb(db))
    _prune(directory)
    return db


def _read_own(path: Path) -> bytes | None:
    """The file's bytes when this user wrote it (a database is loaded into the matcher as it is)."""
    try:
        with path.open("rb") as f:
            if os.fstat(f.fileno()).st_uid != os.getuid():
                log.warning("ignoring %s: it belongs to another user", path)
                return None
            return f.read()
    except OSError:
        return None


def _write(path: Path, data: bytes) -> None:
    """Write ``data`` whole or not at all (a reader never sees half a file); a failure only costs the next start."""
    try:
        path.parent.mkdir(mode=0o700, parents=True, exist_ok=True)
        fd, name = tempfile.mkstemp(dir=path.parent, prefix=".tmp-", suffix=".hsdb")
        tmp = Path(name)
        try:
            with os.fdopen(fd, "wb") as f:
                f.write(data)
            tmp.replace(path)
        except BaseException:
            tmp.unlink()
            raise
    except OSError as exc:
        log.debug("not keeping the Hyperscan database in %s: %s", path.parent, exc)


def _touch(path: Path) -> None:
    """Mark the file used now, so that pruning keeps it."""
    with contextlib.suppress(OSError):
        os.utime(path)


def _prune(directory: Path) -> None:
    """Remove all but the :data:`KEEP` databases used last."""
    try:
        found = sorted(directory.glob("*.hsdb"), key=lambda p: p.stat().st_mtime, reverse=True)
        for old in found[KEEP:]:
            old.unlink()
    except OSError as exc:
        log.debug("not pruning %s: %s", directory, exc)
