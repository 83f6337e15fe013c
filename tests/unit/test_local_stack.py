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


def test_a_listen_port_is_drawn_below_the_outgoing_range_and_is_free() -> None:
    import socket

    from devtools.stack.base import free_listen_port

    port = free_listen_port()
    assert 20_000 <= port < 32_000
    with socket.socket() as sock:
        sock.bind(("127.0.0.1", port))  # nothing holds it


def test_no_free_listen_port_in_the_range_is_an_error_that_says_so() -> None:
    import socket

    from devtools.stack.base import free_listen_port
    from streams.errors import StackError

    with socket.socket() as held:
        held.bind(("127.0.0.1", 0))
        taken = held.getsockname()[1]
        held.listen()
        with pytest.raises(StackError, match=f"no free port between {taken} and {taken + 1}"):
            free_listen_port(taken, taken + 1)
