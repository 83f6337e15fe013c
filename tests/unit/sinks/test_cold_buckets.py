"""Bucket creation by several sinks at once (a cold worker runs one for events and one for metrics)."""

from __future__ import annotations

import pytest
from botocore.exceptions import ClientError

from streams.config import ObjectStoreSettings
from streams.sinks.objectstore.settings import ColdSinkSettings
from streams.sinks.objectstore.store import ObjectStore, ObjectStoreError

pytestmark = pytest.mark.unit


def client_error(code: str, op: str) -> ClientError:
    return ClientError({"Error": {"Code": code, "Message": code}}, op)


class RacingClient:
    """An S3 client whose bucket another caller creates between our head_bucket and create_bucket."""

    def __init__(self, create_code: str, ours: bool = True) -> None:
        self.create_code, self.ours = create_code, ours
        self.heads = 0

    def head_bucket(self, Bucket: str) -> dict:
        self.heads += 1
        if self.heads == 1:
            raise client_error("404", "HeadBucket")
        if not self.ours:
            raise client_error("403", "HeadBucket")
        return {}

    def create_bucket(self, Bucket: str) -> dict:
        raise client_error(self.create_code, "CreateBucket")


def store(client: RacingClient) -> ObjectStore:
    return ObjectStore(ObjectStoreSettings(), ColdSinkSettings(), client=client)


@pytest.mark.parametrize("code", ["BucketAlreadyOwnedByYou", "BucketAlreadyExists"])
def test_a_bucket_created_meanwhile_by_this_account_is_used(code: str) -> None:
    client = RacingClient(code)
    store(client).ensure_bucket("sluice-cold")
    assert client.heads == 2


def test_a_bucket_name_taken_by_another_account_is_an_error_that_says_so() -> None:
    with pytest.raises(ObjectStoreError, match=r"not this account's.*choose another bucket name"):
        store(RacingClient("BucketAlreadyExists", ours=False)).ensure_bucket("sluice-cold")


def test_other_create_errors_still_raise() -> None:
    with pytest.raises(ClientError, match="AccessDenied"):
        store(RacingClient("AccessDenied")).ensure_bucket("sluice-cold")
