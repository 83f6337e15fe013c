"""Find a Java runtime of at least a given version (Elasticsearch 9 needs 21+, Kafka 4 needs 17+)."""

from __future__ import annotations

import os
import re
import shutil
import subprocess
from pathlib import Path

from streams.errors import StackError


def java_version(java_home: Path) -> int | None:
    java = java_home / "bin" / "java"
    if not java.is_file():
        return None
    out = subprocess.run([str(java), "-version"], capture_output=True, text=True, check=False).stderr
    match = re.search(r'version "(\d+)(?:\.(\d+))?', out)
    if not match:
        return None
    major = int(match.group(1))
    return int(match.group(2) or 0) if major == 1 else major


def find_java_home(minimum: int, preferred: Path | None = None) -> Path:
    """``preferred``, else JAVA_HOME, else the ``java`` on PATH, else the newest JDK in /usr/lib/jvm."""
    ordered: list[Path] = []
    if preferred:
        ordered.append(preferred)
    if os.environ.get("JAVA_HOME"):
        ordered.append(Path(os.environ["JAVA_HOME"]))
    java = shutil.which("java")
    if java:
        ordered.append(Path(java).resolve().parent.parent)
    for home in ordered:
        version = java_version(home)
        if version is not None and version >= minimum:
            return home
    jvm = Path("/usr/lib/jvm")
    found = [(java_version(p), p) for p in sorted(jvm.iterdir())] if jvm.is_dir() else []
    usable = [(v, p) for v, p in found if v is not None and v >= minimum]
    if not usable:
        raise StackError(
            f"no Java {minimum}+ found (looked in JAVA_HOME, PATH, /usr/lib/jvm); install one, "
            f"for example `apt-get install openjdk-{max(minimum, 21)}-jre-headless`, and retry"
        )
    return max(usable, key=lambda vp: vp[0])[1]
