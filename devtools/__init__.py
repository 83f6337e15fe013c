"""Developer tooling beside the product: the local stack, the demo, benches, fault runs, test helpers.

Run from a checkout (``python -m devtools ...``); the ``sluice`` wheel does not contain it.
"""

from pathlib import Path

REPO_ROOT = Path(__file__).resolve().parent.parent
# Real logs with their sources (corpus/README.md), used by the demo, the tests and the benches.
CORPUS_DIR = REPO_ROOT / "corpus"
