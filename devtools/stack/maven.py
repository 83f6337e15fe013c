"""Resolve server artifacts from Maven Central into the stack directory, once."""

from __future__ import annotations

import shutil
from pathlib import Path

from devtools.stack.base import run_checked
from streams.errors import StackError


def mvn() -> str:
    path = shutil.which("mvn")
    if path is None:
        raise StackError("Maven (mvn) is not on PATH; install it (apt-get install maven) and retry")
    return path


def copy_dependencies(pom: Path, dest: Path, properties: dict[str, str]) -> None:
    """All runtime jars of ``pom``'s dependencies into ``dest`` (skipped when a stamp matches)."""
    stamp = dest / ".stamp"
    want = f"{pom.read_text()}\n{sorted(properties.items())}"
    if stamp.is_file() and stamp.read_text() == want:
        return
    tmp = dest.with_name(dest.name + ".new")
    shutil.rmtree(tmp, ignore_errors=True)
    props = [f"-D{k}={v}" for k, v in properties.items()]
    run_checked(
        [mvn(), "-B", "-q", "-ntp", "-f", str(pom), "dependency:copy-dependencies",
         f"-DoutputDirectory={tmp}", "-DincludeScope=runtime", *props],
        f"resolving {pom.parent.name} jars from Maven Central",
    )
    shutil.rmtree(dest, ignore_errors=True)
    tmp.rename(dest)
    stamp.write_text(want)


def fetch_artifact(coordinates: str, dest_dir: Path) -> Path:
    """One artifact (``group:artifact:version[:packaging[:classifier]]``) copied into ``dest_dir``."""
    parts = coordinates.split(":")
    group, artifact, version = parts[:3]
    packaging = parts[3] if len(parts) > 3 else "jar"
    classifier = parts[4] if len(parts) > 4 else ""
    name = f"{artifact}-{version}{'-' + classifier if classifier else ''}.{packaging}"
    target = dest_dir / name
    if target.is_file():
        return target
    dest_dir.mkdir(parents=True, exist_ok=True)
    artifact_arg = f"{group}:{artifact}:{version}:{packaging}" + (f":{classifier}" if classifier else "")
    run_checked(
        [mvn(), "-B", "-q", "-ntp", "dependency:copy", f"-Dartifact={artifact_arg}",
         f"-DoutputDirectory={dest_dir}", "-Dmdep.useBaseVersion=true"],
        f"fetching {coordinates} from Maven Central",
        cwd=dest_dir,
    )
    if not target.is_file():
        raise StackError(f"Maven reported success but {target} is missing; check ~/.m2 and retry")
    return target
