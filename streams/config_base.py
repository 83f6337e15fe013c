"""The base of every configuration section: unknown keys are errors, not silently ignored.

Each section is a plain pydantic model nested in :class:`streams.config.Settings`, which alone reads
the YAML file and the ``SLUICE_*`` environment. Every field carries a ``description``: it is what
``deploy/sluice.reference.yaml`` and ``docs/configuration.md`` print, so a setting is documented where
it is declared.
"""

from __future__ import annotations

from pydantic import BaseModel, ConfigDict


class Section(BaseModel):
    """A configuration section: a typo in a key fails loading instead of falling back to a default."""

    model_config = ConfigDict(extra="forbid")
