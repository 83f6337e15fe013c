"""The I/O side of the cold tier: puts (single or multipart), listings, recorded cuts, lifecycle.

Blocking boto3 calls; the sink runs them in threads (``asyncio.to_thread``). boto3 clients are
thread-safe, so one client serves every upload.
"""

from __future__ import annotations

import logging
from collections.abc import Iterator
from dataclasses import dataclass
from typing import Any

from streams.clients import s3_client
from streams.config import ObjectStoreSettings
from streams.errors import SluiceError
from streams.sinks.objectstore.classify import error_code
from streams.sinks.objectstore.partition import OFFSET_WIDTH
from streams.sinks.objectstore.settings import ColdSinkSettings

log = logging.getLogger(__name__)

class ObjectStoreError(SluiceError):
    """The object store refused or did not answer; the sink retries the segment later."""


@dataclass(frozen=True)
class LifecycleStatus:
    bucket: str
    applied: bool
    detail: str


def lifecycle_rules(conf: ColdSinkSettings) -> list[dict[str, Any]]:
    transitions = []
    if conf.lifecycle_infrequent_days is not None:
        transitions.append({"Days": conf.lifecycle_infrequent_days, "StorageClass": "STANDARD_IA"})
    if conf.lifecycle_archive_days is not None:
        transitions.append({"Days": conf.lifecycle_archive_days, "StorageClass": "GLACIER"})
    rule: dict[str, Any] = {"ID": conf.lifecycle_rule_id, "Status": "Enabled", "Filter": {"Prefix": ""}}
    if transitions:
        rule["Transitions"] = transitions
    if conf.lifecycle_expire_days is not None:
        rule["Expiration"] = {"Days": conf.lifecycle_expire_days}
    rule["AbortIncompleteMultipartUpload"] = {"DaysAfterInitiation": 7}
    return [rule]


def cut_key(prefix: str, topic: str, partition: int, first: int, last: int) -> str:
    return f"{prefix}{topic}+{partition}+{first:0{OFFSET_WIDTH}d}+{last:0{OFFSET_WIDTH}d}"


class ObjectStore:
    def __init__(self, settings: ObjectStoreSettings, conf: ColdSinkSettings, client: Any | None = None) -> None:
        self.conf = conf
        self.endpoint = settings.endpoint_url
        self.client = client or s3_client(settings, timeout_s=conf.request_timeout_s)

    # -- buckets ---------------------------------------------------------------------------------
    def ensure_bucket(self, bucket: str) -> None:
        try:
            self.client.head_bucket(Bucket=bucket)
        except Exception as exc:
            if error_code(exc) not in ("404", "NoSuchBucket", "NotFound"):
                raise ObjectStoreError(f"bucket {bucket} at {self.endpoint} is not reachable: {exc}") from exc
            try:
                self.client.create_bucket(Bucket=bucket)
            except Exception as create_exc:
                # Another sink of this worker, or another replica, created it in the meantime; some servers
                # say BucketAlreadyExists for a bucket of one's own too, so whether it is ours is asked.
                if error_code(create_exc) not in ("BucketAlreadyOwnedByYou", "BucketAlreadyExists"):
                    raise
                try:
                    self.client.head_bucket(Bucket=bucket)
                except Exception as head_exc:
                    raise ObjectStoreError(f"bucket {bucket} at {self.endpoint} exists but is not this account's "
                                           f"({head_exc}): choose another bucket name") from head_exc

    def apply_lifecycle(self, bucket: str) -> LifecycleStatus:
        """Put the tiering rules on a bucket; a server without the API is reported, not faked."""
        rules = lifecycle_rules(self.conf)
        try:
            self.client.put_bucket_lifecycle_configuration(Bucket=bucket, LifecycleConfiguration={"Rules": rules})
        except Exception as exc:
            code = error_code(exc)
            if code in ("NotImplemented", "501", "MethodNotAllowed"):
                detail = (f"{self.endpoint} does not implement bucket lifecycle rules ({code}): objects in "
                          f"{bucket} will NOT move to infrequent access or archive, nor expire; configure "
                          "tiering on the server or run a retention job")
                log.warning("cold tier: %s", detail)
                return LifecycleStatus(bucket, False, detail)
            raise ObjectStoreError(f"setting lifecycle rules on {bucket} at {self.endpoint} failed: {exc}") from exc
        detail = ", ".join(
            [f"{t['StorageClass']} after {t['Days']} d" for t in rules[0].get("Transitions", [])]
            + ([f"expire after {rules[0]['Expiration']['Days']} d"] if "Expiration" in rules[0] else [])
        )
        log.info("cold tier: lifecycle rules on %s: %s", bucket, detail)
        return LifecycleStatus(bucket, True, detail)

    # -- objects ---------------------------------------------------------------------------------
    def put(self, bucket: str, key: str, body: bytes, content_type: str = "application/octet-stream",
            metadata: dict[str, str] | None = None) -> None:
        """One object, with its user metadata in the same request (single PUT or multipart upload)."""
        extra = {"ContentType": content_type, "Metadata": metadata or {}}
        if len(body) <= self.conf.multipart_threshold:
            self.client.put_object(Bucket=bucket, Key=key, Body=body, **extra)
            return
        self._put_multipart(bucket, key, body, extra)

    def _put_multipart(self, bucket: str, key: str, body: bytes, extra: dict[str, Any]) -> None:
        upload = self.client.create_multipart_upload(Bucket=bucket, Key=key, **extra)
        upload_id = upload["UploadId"]
        try:
            parts = []
            view = memoryview(body)
            size = self.conf.part_size
            for number, start in enumerate(range(0, len(body), size), start=1):
                resp = self.client.upload_part(Bucket=bucket, Key=key, PartNumber=number, UploadId=upload_id,
                                               Body=bytes(view[start:start + size]))
                parts.append({"PartNumber": number, "ETag": resp["ETag"]})
            self.client.complete_multipart_upload(Bucket=bucket, Key=key, UploadId=upload_id,
                                                  MultipartUpload={"Parts": parts})
        except BaseException:
            try:
                self.client.abort_multipart_upload(Bucket=bucket, Key=key, UploadId=upload_id)
            except Exception:  # noqa: BLE001 - the store is likely down; the lifecycle rule aborts it later
                log.debug("could not abort multipart upload %s of %s", upload_id, key)
            raise

    def get(self, bucket: str, key: str) -> bytes:
        body: bytes = self.client.get_object(Bucket=bucket, Key=key)["Body"].read()
        return body

    def metadata(self, bucket: str, key: str) -> dict[str, str]:
        """An object's user metadata (a HEAD: the object's bytes are not read)."""
        return dict(self.client.head_object(Bucket=bucket, Key=key).get("Metadata", {}))

    def list_keys(self, bucket: str, prefix: str, start_after: str | None = None) -> Iterator[str]:
        kwargs: dict[str, Any] = {"Bucket": bucket, "Prefix": prefix}
        if start_after:
            kwargs["StartAfter"] = start_after
        while True:
            resp = self.client.list_objects_v2(**kwargs)
            for item in resp.get("Contents", []):
                yield str(item["Key"])
            if not resp.get("IsTruncated"):
                return
            kwargs.pop("StartAfter", None)
            kwargs["ContinuationToken"] = resp["NextContinuationToken"]

    # -- recorded cuts ---------------------------------------------------------------------------
    def load_cuts(self, bucket: str, topic: str, partition: int, from_offset: int) -> dict[int, int]:
        """Cuts recorded for this partition at or after ``from_offset``: first offset -> last offset."""
        prefix = f"{self.conf.cuts_prefix}{topic}+{partition}+"
        start_after = f"{prefix}{from_offset - 1:0{OFFSET_WIDTH}d}" if from_offset > 0 else None
        cuts = {}
        for key in self.list_keys(bucket, prefix, start_after):
            first, _, last = key[len(prefix):].partition("+")
            if first.isdigit() and last.isdigit() and int(first) >= from_offset:
                cuts[int(first)] = int(last)
        return cuts

    def record_cut(self, bucket: str, topic: str, partition: int, first: int, last: int) -> None:
        # The key says it all; an empty body keeps listing it enough to read it back.
        self.client.put_object(Bucket=bucket, Key=cut_key(self.conf.cuts_prefix, topic, partition, first, last),
                               Body=b"")
