"""The private-server fixture gives a test its own store to stop and restart without touching the shared stack."""

from __future__ import annotations

import httpx

from streams.clients import s3_client


def test_private_objectstore_stops_and_restarts_keeping_data(private_server) -> None:
    settings, service = private_server("objectstore")
    s3 = s3_client(settings.object_store, timeout_s=5)
    s3.create_bucket(Bucket="private-bucket")
    s3.put_object(Bucket="private-bucket", Key="k", Body=b"v")
    service.down()
    assert not service.healthy()
    service.up()
    assert s3_client(settings.object_store).get_object(Bucket="private-bucket", Key="k")["Body"].read() == b"v"


def test_private_elasticsearch_takes_extra_settings(private_server) -> None:
    settings, _service = private_server("elasticsearch", elasticsearch_extra={"thread_pool.write.queue_size": "1"})
    pools = httpx.get(f"{settings.elasticsearch.url}/_nodes/thread_pool", timeout=10).json()["nodes"]
    write = next(iter(pools.values()))["thread_pool"]["write"]
    assert write["queue_size"] == 1
