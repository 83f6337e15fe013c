"""The object store's failure classifier, and what the cold sink does with each kind: a transient
failure is retried, an object the store can never take has its records dead-lettered (the others of
the segment are stored), a refused credential stops the sink."""

from __future__ import annotations

import asyncio

import pytest
from botocore.exceptions import ClientError, ConnectTimeoutError, EndpointConnectionError, ReadTimeoutError

from devtools.testing.objectstore import MemoryObjectStore
from streams.config import Settings
from streams.errors import DependencyRefused, Failure
from streams.sinks.objectstore.classify import store_failure
from streams.sinks.objectstore.settings import ColdSinkSettings
from streams.sinks.objectstore.sink import ColdSink
from streams.sinks.objectstore.store import ObjectStoreError
from tests.unit.sinks.test_cold_uploads import one_segment


def client_error(code: str, status: int, op: str = "PutObject") -> ClientError:
    return ClientError({"Error": {"Code": code, "Message": f"{code} (test)"},
                        "ResponseMetadata": {"HTTPStatusCode": status}}, op)


@pytest.mark.parametrize(("exc", "kind"), [
    (client_error("SlowDown", 503), Failure.TRANSIENT),
    (client_error("InternalError", 500), Failure.TRANSIENT),
    (client_error("RequestTimeout", 400), Failure.TRANSIENT),  # S3's own idle-socket timeout, sent as 400
    (client_error("SomethingNew", 502), Failure.TRANSIENT),
    (EndpointConnectionError(endpoint_url="http://store:9000"), Failure.TRANSIENT),
    (ConnectTimeoutError(endpoint_url="http://store:9000"), Failure.TRANSIENT),
    (ReadTimeoutError(endpoint_url="http://store:9000"), Failure.TRANSIENT),
    (ConnectionRefusedError(111, "refused"), Failure.TRANSIENT),
    (client_error("AccessDenied", 403), Failure.REFUSED),
    (client_error("InvalidAccessKeyId", 403), Failure.REFUSED),
    (client_error("SignatureDoesNotMatch", 403), Failure.REFUSED),
    (client_error("403", 403, "HeadBucket"), Failure.REFUSED),  # a HEAD answer has no body: its code is the status
    (client_error("NoSuchBucket", 404), Failure.REFUSED),
    (client_error("KeyTooLongError", 400), Failure.PERMANENT),
    (client_error("EntityTooLarge", 400), Failure.PERMANENT),
    (client_error("SomethingNew", 400), Failure.PERMANENT),
])
def test_store_failures_are_classified(exc: BaseException, kind: Failure) -> None:
    assert store_failure(exc) is kind
    wrapped = ObjectStoreError(f"bucket b at http://store:9000 is not reachable: {exc}")
    wrapped.__cause__ = exc
    assert store_failure(wrapped) is kind


class RefusingStore(MemoryObjectStore):
    """Raises ``error(key)`` for the keys it names, ``times`` times (None: always)."""

    def __init__(self, conf: ColdSinkSettings, refuse: str, error: BaseException, times: int | None = None) -> None:
        super().__init__(conf)
        self.refuse, self.error, self.times = refuse, error, times

    def put(self, bucket: str, key: str, body: bytes, content_type: str = "",
            metadata: dict[str, str] | None = None) -> None:
        if self.refuse in key and (self.times is None or self.times > 0):
            if self.times is not None:
                self.times -= 1
            raise self.error
        super().put(bucket, key, body, content_type, metadata)


def run_segment(corpus, store: MemoryObjectStore, conf: ColdSinkSettings, flushes: int = 30):  # type: ignore[no-untyped-def]
    records = one_segment(corpus, conf)
    clock = [0.0]
    sink = ColdSink(Settings(), conf, store=store, clock=lambda: clock[0])  # type: ignore[arg-type]
    acked, rejected = [], []

    async def go() -> None:
        await sink.start()
        for record in records:
            sink.add(record)
        for _ in range(flushes):
            result = await sink.flush(clock[0])
            acked.extend(result.acked)
            rejected.extend(result.rejected)
            await sink.uploads_ended()
            clock[0] += 40.0  # past any backoff

    asyncio.run(go())
    return records, acked, rejected


def test_an_object_the_store_refuses_for_good_is_dead_lettered_and_the_rest_stored(corpus) -> None:
    conf = ColdSinkSettings(rotate_records=120, lifecycle_enabled=False)
    store = RefusingStore(conf, "task-2", client_error("KeyTooLongError", 400))
    records, acked, rejected = run_segment(corpus, store, conf)  # a full segment, then one cut when idle
    refused = [r for r in records if r.value["task_id"] == "task-2"]
    assert refused and {id(r) for r, _reason, _t in rejected} == {id(r) for r in refused}
    assert all(t == "unstorable" and "KeyTooLongError" in reason for _r, reason, t in rejected)
    assert {id(r) for r in acked} == {id(r) for r in records if r.value["task_id"] != "task-2"}
    assert not any("task-2" in key for key in store.data_objects()) and len(store.data_objects()) == 10


def test_a_passing_store_failure_is_retried_and_nothing_dead_lettered(corpus) -> None:
    conf = ColdSinkSettings(rotate_records=120, lifecycle_enabled=False)
    store = RefusingStore(conf, "task-2", client_error("SlowDown", 503), times=3)
    records, acked, rejected = run_segment(corpus, store, conf)
    assert not rejected
    assert {id(r) for r in acked} == {id(r) for r in records}
    assert sum("task-2" in key for key in store.data_objects()) == 2 and len(store.data_objects()) == 12


def test_refused_credentials_stop_the_cold_sink(corpus) -> None:
    conf = ColdSinkSettings(rotate_records=120, lifecycle_enabled=False)
    store = RefusingStore(conf, "task-", client_error("InvalidAccessKeyId", 403))
    store.endpoint = "http://store.example:9000"  # type: ignore[attr-defined]
    with pytest.raises(DependencyRefused) as refused:
        run_segment(corpus, store, conf)
    assert "http://store.example:9000" in str(refused.value) and "access_key_id" in str(refused.value)
