"""Both engines, for the differential tests: the native one is required wherever a Rust toolchain is.

``make install`` builds ``streams._native`` when ``cargo`` is on the PATH (CI's machines have it), so a
missing extension there is a broken build, not a reason to skip; only a machine without cargo skips.
"""

from __future__ import annotations

import shutil
from types import ModuleType

import pytest

from streams.native import load_native


def native_or_skip() -> ModuleType:
    try:
        native = load_native("native")
    except Exception as exc:  # noqa: BLE001 - ConfigError: not built, or a stale build
        if shutil.which("cargo") is not None:
            pytest.fail(f"cargo is on the PATH but the native engine is not usable: {exc}; run `pip install -e .`")
        pytest.skip(f"no Rust toolchain here, so no native engine to compare: {exc}")
    assert native is not None
    return native
