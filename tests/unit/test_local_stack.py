"""Pieces of the local stack that can be checked without starting it."""

import pytest

from devtools.stack.kafka import _cluster_id

pytestmark = pytest.mark.unit


def test_kraft_cluster_ids_never_read_as_an_option() -> None:
    # One draw in 64 of a base64url UUID starts with '-'; 2,000 draws meet one with near certainty.
    ids = {_cluster_id() for _ in range(2000)}
    assert len(ids) == 2000
    assert not [i for i in ids if i.startswith("-")]
    assert all(len(i) == 22 for i in ids)
