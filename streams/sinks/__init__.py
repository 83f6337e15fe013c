"""Sinks: the same small shape for every store (see base.py), written once."""
