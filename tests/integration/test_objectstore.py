"""The real S3-compatible store (S3Proxy): objects, prefixes, multipart uploads, lifecycle support."""

from __future__ import annotations

import hashlib
import io
import os

import botocore.exceptions
import fastavro
import pytest

from streams.clients import s3_client
from streams.config import Settings
from streams.contracts import parsed_schema


@pytest.fixture
def bucket(stack: Settings, unique_name) -> str:
    s3 = s3_client(stack.object_store)
    name = unique_name("sluice-test")
    s3.create_bucket(Bucket=name)
    return name


def test_avro_object_roundtrip_and_prefix_listing(stack: Settings, bucket: str, corpus) -> None:
    s3 = s3_client(stack.object_store)
    lines = (corpus / "training" / "vllm_serve_jamba_cuda_oom_kv_cache.log").read_text().splitlines()
    buf = io.BytesIO()
    fastavro.writer(buf, parsed_schema("raw_line"),
                    [{"line": line, "file_offset": i, "ts": None} for i, line in enumerate(lines)], codec="deflate")
    key = "proj/task-1/2026-11-29/trainer/logs.events.default+0+00000000000000000042.avro"
    s3.put_object(Bucket=bucket, Key=key, Body=buf.getvalue())
    s3.put_object(Bucket=bucket, Key="proj/task-2/2026-11-29/trainer/x.avro", Body=b"other")
    listed = s3.list_objects_v2(Bucket=bucket, Prefix="proj/task-1/")["Contents"]
    assert [o["Key"] for o in listed] == [key]
    body = s3.get_object(Bucket=bucket, Key=key)["Body"].read()
    assert [r["line"] for r in fastavro.reader(io.BytesIO(body))] == lines


def test_multipart_upload_assembles_parts(stack: Settings, bucket: str) -> None:
    s3 = s3_client(stack.object_store)
    part = 5 * 1024 * 1024  # S3's minimum part size
    payload = bytes(range(256)) * (part * 2 // 256) + b"tail"
    upload = s3.create_multipart_upload(Bucket=bucket, Key="big.bin")
    parts = []
    for number, start in enumerate(range(0, len(payload), part), start=1):
        resp = s3.upload_part(Bucket=bucket, Key="big.bin", PartNumber=number, UploadId=upload["UploadId"],
                              Body=payload[start:start + part])
        parts.append({"PartNumber": number, "ETag": resp["ETag"]})
    s3.complete_multipart_upload(Bucket=bucket, Key="big.bin", UploadId=upload["UploadId"],
                                 MultipartUpload={"Parts": parts})
    got = s3.get_object(Bucket=bucket, Key="big.bin")["Body"].read()
    assert hashlib.sha256(got).digest() == hashlib.sha256(payload).digest()


def test_lifecycle_rules_are_reported_unsupported(stack: Settings, bucket: str) -> None:
    """Recorded fact about S3Proxy: no lifecycle API; the cold tier must report, not pretend."""
    s3 = s3_client(stack.object_store)
    with pytest.raises(botocore.exceptions.ClientError) as err:
        s3.put_bucket_lifecycle_configuration(
            Bucket=bucket,
            LifecycleConfiguration={"Rules": [{"ID": "expire", "Status": "Enabled", "Filter": {"Prefix": ""},
                                               "Expiration": {"Days": 90}}]},
        )
    assert err.value.response["Error"]["Code"] == "NotImplemented"


def test_wrong_secret_is_refused(stack: Settings, bucket: str) -> None:
    from pydantic import SecretStr

    key_id = stack.object_store.access_key_id or os.environ["AWS_ACCESS_KEY_ID"]  # the chain's, in tests
    wrong = stack.object_store.model_copy(update={"access_key_id": key_id,
                                                  "secret_access_key": SecretStr("not-the-secret")})
    with pytest.raises(botocore.exceptions.ClientError):
        s3_client(wrong).list_objects_v2(Bucket=bucket)
