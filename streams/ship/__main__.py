"""``python -m streams.ship ...``: the same as `sluice ship ...`."""

import sys

from streams.cli.main import cli

cli(["ship", *sys.argv[1:]])
