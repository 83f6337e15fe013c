"""Which engine runs the per-line path: the compiled extension ``streams._native`` where it was built,
else the pure-Python core, which is the reference implementation.

``pip install -e .`` (and ``make install``) builds the extension when a Rust toolchain (``cargo``) is on
the PATH; without one the install goes on and every stage runs in Python, with the same results (a
differential test holds the two engines to the same bytes). ``SLUICE_ASSEMBLE__ENGINE`` chooses: ``auto`` (the
default: native where built), ``native`` (fail at start when it is not built), ``python``. The variable is
the environment override of the setting ``assemble.engine``, which the workers and ``sluice parse`` pass on.
"""

from __future__ import annotations

import os
from types import ModuleType

from streams.errors import ConfigError

ENGINE_ENV = "SLUICE_ASSEMBLE__ENGINE"  # the environment override of the setting assemble.engine
CHOICES = ("auto", "native", "python")
INTERFACE = 3  # the extension's interface version this Python side speaks (native/src/lib.rs)


def load_native(choice: str | None = None) -> ModuleType | None:
    """The extension module, or None when the Python core is to run."""
    choice = (choice if choice is not None else os.environ.get(ENGINE_ENV, "auto")).strip().lower() or "auto"
    if choice not in CHOICES:
        raise ConfigError(f"{ENGINE_ENV}={choice!r}: choose one of {', '.join(CHOICES)}")
    if choice == "python":
        return None
    try:
        from streams import _native  # type: ignore[attr-defined]
    except ImportError as exc:
        if choice == "native":
            raise ConfigError(f"{ENGINE_ENV}=native, but the extension streams._native is not built ({exc}): "
                              "install a Rust toolchain and run `pip install -e .` again (docs/native.md)") from exc
        return None
    if getattr(_native, "INTERFACE", None) != INTERFACE:
        if choice == "native":
            raise ConfigError(f"streams._native speaks interface {getattr(_native, 'INTERFACE', None)}, this "
                              f"checkout {INTERFACE}: rebuild it with `pip install -e .` (docs/native.md)")
        return None  # an extension left over from another checkout: the Python core is always right
    return _native


def _process_default() -> ModuleType | None:
    """The engine of callers that name none. Lenient: a bad value or a missing build must not break an
    import; the setting (``assemble.engine``) is validated with the configuration, and the stages that
    take it (the worker, ``sluice parse``) refuse to start on ``native`` without the extension."""
    if os.environ.get(ENGINE_ENV, "auto").strip().lower() == "python":
        return None
    return load_native("auto")


NATIVE = _process_default()


def engine_name(native: ModuleType | None = NATIVE) -> str:
    return "native" if native is not None else "python"
