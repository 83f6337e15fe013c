"""Which engine runs: the setting ``assemble.engine`` (env ``SLUICE_ASSEMBLE__ENGINE``) and its checks."""

from __future__ import annotations

import pytest

from streams.assemble.decode import decode_record
from streams.assemble.engine import NativeDecode, decoder
from streams.errors import ConfigError
from streams.native import load_native
from tests.unit.native.engines import native_or_skip


def test_python_is_always_there_and_a_bad_name_is_refused() -> None:
    assert load_native("python") is None
    assert decoder("python") is decode_record
    with pytest.raises(ConfigError, match="choose one of auto, native, python"):
        load_native("rust")


def test_native_and_auto_run_the_extension_where_it_is_built() -> None:
    native = native_or_skip()
    assert load_native("native") is native and load_native("auto") is native
    assert isinstance(decoder("native"), NativeDecode)
