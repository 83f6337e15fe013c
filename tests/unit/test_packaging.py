"""What the package declares, locks and ships: every import declared, the lock files agreeing with
pyproject.toml, and a wheel that holds the product only."""

from __future__ import annotations

import ast
import os
import re
import shutil
import subprocess
import sys
import tomllib
import zipfile
from importlib.metadata import packages_distributions
from pathlib import Path

import pytest
from packaging.requirements import Requirement
from packaging.utils import canonicalize_name
from packaging.version import Version

from streams.config import REPO_ROOT

PYPROJECT = tomllib.loads((REPO_ROOT / "pyproject.toml").read_text())["project"]
RUNTIME = [Requirement(r) for r in PYPROJECT["dependencies"]]
DEV = [Requirement(r) for r in PYPROJECT["optional-dependencies"]["dev"]]
# Extras a user opts into (`sluice[gpu]`): the product may import them where it uses them.
USER_EXTRAS = [Requirement(r) for name, reqs in PYPROJECT["optional-dependencies"].items()
               if name not in ("dev", "fuzz") for r in reqs]
# Dev tooling may also use the tools installed on demand, such as the fuzzer's engine (`pip install -e .[fuzz]`).
ALL_EXTRAS = [Requirement(r) for reqs in PYPROJECT["optional-dependencies"].values() for r in reqs]
FIRST_PARTY = {"streams", "devtools", "tests", "deploy"}
LOCKED_DEV = {canonicalize_name(r.name) for r in RUNTIME + DEV}  # what requirements-dev.lock installs
# Capture programs devtools.printers runs under an interpreter of their own, with the printer installed
# outside the project (pip --target; corpus/printers/README.md names it): their imports are not the
# project's dependencies.
OWN_INTERPRETER = tuple(f"devtools/printers/programs/{lang}/"
                        for lang in ("jax", "ray", "pyspark", "tensorflow", "torch", "hf", "lightning", "cli",
                                     "torch_compile"))


def _third_party_imports(root: Path) -> dict[str, set[str]]:
    """Top-level module -> files importing it, for every absolute import outside the standard library."""
    found: dict[str, set[str]] = {}
    for path in root.rglob("*.py"):
        if str(path.relative_to(REPO_ROOT)).startswith(OWN_INTERPRETER):
            continue
        for node in ast.walk(ast.parse(path.read_text(encoding="utf-8"))):
            if isinstance(node, ast.Import):
                names = [a.name for a in node.names]
            elif isinstance(node, ast.ImportFrom) and node.level == 0 and node.module:
                names = [node.module]
            else:
                continue
            for name in names:
                top = name.split(".")[0]
                if top not in sys.stdlib_module_names and top not in FIRST_PARTY:
                    found.setdefault(top, set()).add(str(path.relative_to(REPO_ROOT)))
    return found


def _undeclared(root: Path, declared: list[Requirement]) -> list[str]:
    names = {canonicalize_name(r.name) for r in declared}
    dists = packages_distributions()
    problems = []
    for module, files in sorted(_third_party_imports(root).items()):
        if module not in dists:
            # A module of the test tree imported by file name (tests/perf/*.py, tests/conftest.py).
            if any((REPO_ROOT / "tests").rglob(f"{module}.py")):
                continue
            # A tool of an extra installed on demand (`pip install -e .[fuzz]`), imported only where it is used.
            if canonicalize_name(module) in names and canonicalize_name(module) not in LOCKED_DEV:
                continue
            problems.append(f"{module} (imported by {sorted(files)[0]}) is not installed")
        elif not {canonicalize_name(d) for d in dists[module]} & names:
            problems.append(f"{module} (imported by {sorted(files)[0]}): declare {dists[module][0]}")
    return problems


def test_every_package_the_product_imports_is_declared() -> None:
    assert _undeclared(REPO_ROOT / "streams", RUNTIME + USER_EXTRAS) == []


@pytest.mark.parametrize("folder", ["devtools", "tests"])
def test_every_package_the_dev_tooling_imports_is_declared(folder: str) -> None:
    assert _undeclared(REPO_ROOT / folder, RUNTIME + ALL_EXTRAS) == []


def _pins(lock: Path) -> dict[str, Version]:
    pins = re.findall(r"^([A-Za-z0-9_.-]+)==([^\s\\;]+)", lock.read_text(), flags=re.M)
    return {canonicalize_name(name): Version(version) for name, version in pins}


@pytest.mark.parametrize(("lock", "requirements"), [("requirements.lock", RUNTIME),
                                                    ("requirements-dev.lock", RUNTIME + DEV)])
def test_the_lock_files_satisfy_pyproject(lock: str, requirements: list[Requirement]) -> None:
    """Change a dependency in pyproject.toml without `make lock` and this fails."""
    pins = _pins(REPO_ROOT / lock)
    for req in requirements:
        name = canonicalize_name(req.name)
        assert name in pins, f"{req.name} is missing from {lock}: run `make lock`"
        assert req.specifier.contains(pins[name], prereleases=True), \
            f"{lock} pins {req.name}=={pins[name]}, outside {req.specifier}: run `make lock`"
    assert "--hash=sha256:" in (REPO_ROOT / lock).read_text(), "the lock must carry hashes"


def test_the_dev_lock_pins_the_runtime_packages_alike() -> None:
    runtime, dev = _pins(REPO_ROOT / "requirements.lock"), _pins(REPO_ROOT / "requirements-dev.lock")
    assert {n: v for n, v in dev.items() if n in runtime} == runtime


def test_the_wheel_ships_the_product_only(tmp_path: Path) -> None:
    # As a user builds it, `pip wheel --no-deps .` with the build backend pyproject.toml asks for, from a copy
    # of the files git knows (a build in the checkout leaves build/ behind, which later builds would reuse).
    tracked = subprocess.run(["git", "ls-files", "-z", "--cached", "--others", "--exclude-standard"], cwd=REPO_ROOT,
                             check=True, capture_output=True).stdout
    src = tmp_path / "src"
    for name in tracked.decode().split("\0"):
        if name and (REPO_ROOT / name).is_file() and not name.startswith("corpus/"):
            (src / name).parent.mkdir(parents=True, exist_ok=True)
            shutil.copy2(REPO_ROOT / name, src / name)
    # The native engine's crate compiles into the checkout's own target folder: built once, not per test run.
    env = {**os.environ, "CARGO_TARGET_DIR": str(REPO_ROOT / "native" / "target")}
    subprocess.run([sys.executable, "-m", "pip", "wheel", "--no-deps", "-q", "-w", str(tmp_path), str(src)],
                   check=True, capture_output=True, env=env)
    (wheel,) = tmp_path.glob("sluice-*.whl")
    names = zipfile.ZipFile(wheel).namelist()
    modules = [n for n in names if not n.startswith("sluice-")]
    assert modules and all(n.startswith("streams/") for n in modules), sorted(set(modules))[:10]
    workshop = re.compile(r"(^|/)(stack|faults?|bench\w*|testing|tests?|conftest|demo)(/|\.py$)")
    assert [n for n in modules if workshop.search(n)] == []
    assert "streams/cli/main.py" in modules and "streams/assemble/pipeline.py" in modules
    if shutil.which("cargo"):  # where a Rust toolchain is, the wheel carries the native engine
        assert [n for n in modules if n.startswith("streams/_native.") and n.endswith(".so")], modules
    contracts = {Path(n).name for n in names if n.startswith("sluice-") and "/share/sluice/schemas/" in n}
    assert contracts == {p.name for p in (REPO_ROOT / "schemas").glob("*.avsc")}, "the wheel carries the contracts"
