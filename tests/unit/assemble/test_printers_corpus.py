"""``corpus/printers``: multiline events printed by the real printers (CPython's traceback, faulthandler
and warnings, the JDK's printStackTrace and java.util.logging, the Go runtime, Rust's panic hook,
glibc's backtrace_symbols_fd, gdb; rich, loguru, absl-py, structlog, IPython, typer, tqdm), each
followed at once by a single-line record, bare and under launchers' per-line prefixes. Labels come
from how the files were made (``devtools/printers``), so nothing short of every event whole and every
single line alone is right.
"""

from __future__ import annotations

import pytest
from corpus_helpers import CORPUS

from tests.multiline_score import labelled_files, score_file

PRINTERS = CORPUS / "printers"
LANGS = ("c", "go", "java", "pylibs", "python", "rust")


@pytest.mark.parametrize("lang", LANGS)
def test_every_printed_event_whole_and_every_record_alone(lang: str) -> None:
    files = labelled_files([PRINTERS / lang])
    assert files, f"{PRINTERS / lang} holds no labelled files: regenerate with python -m devtools.printers"
    misses: list[str] = []
    kinds: set[str] = set()
    for path, labels in files:
        s = score_file(path, labels)
        kinds.update(k for k in s.total if k != "single")
        misses += s.misses
    assert kinds, f"{lang}: no multiline event is labelled"
    assert not misses, f"{lang}: {len(misses)} labelled events not met\n" + "\n".join(misses[:40])
