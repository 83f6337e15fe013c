"""The `sluice` command line: one entry point for everything an operator does."""
