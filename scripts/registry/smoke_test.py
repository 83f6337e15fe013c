"""Smoke test for a Confluent-API schema registry (needs confluent-kafka[schemaregistry,avro]).

    python scripts/registry/smoke_test.py http://127.0.0.1:PORT/apis/ccompat/v7
    python scripts/registry/smoke_test.py URL --check-persisted   # after a restart on the same DATA_DIR

Safe to re-run against the same registry: every run uses fresh subject names,
except "smoke-persist-value", which --check-persisted looks for.
"""
import sys
import uuid

from confluent_kafka.schema_registry import Schema, SchemaRegistryClient
from confluent_kafka.schema_registry.avro import AvroDeserializer, AvroSerializer
from confluent_kafka.schema_registry.error import SchemaRegistryError
from confluent_kafka.serialization import MessageField, SerializationContext

url = sys.argv[1]
c = SchemaRegistryClient({"url": url})
V1 = '{"type":"record","name":"A","fields":[{"name":"x","type":"int"}]}'
# new field without default: not BACKWARD compatible with V1
V2_BAD = '{"type":"record","name":"A","fields":[{"name":"x","type":"int"},{"name":"y","type":"string"}]}'
V2_OK = '{"type":"record","name":"A","fields":[{"name":"x","type":"int"},{"name":"y","type":"string","default":"d"}]}'
PERSIST = "smoke-persist-value"

if "--check-persisted" in sys.argv:
    subs = c.get_subjects()
    assert PERSIST in subs, subs
    lv = c.get_latest_version(PERSIST)
    level = c.get_compatibility(PERSIST)
    print("persisted:", PERSIST, "version", lv.version, "id", lv.schema_id, level)
    assert level == "BACKWARD_TRANSITIVE", level
    print("ALL OK")
    sys.exit(0)

run = uuid.uuid4().hex[:8]
subj = f"smoke-{run}-value"

sid = c.register_schema(subj, Schema(V1, "AVRO"))
print("registered id", sid, c.get_schema(sid).schema_str)
assert c.register_schema(subj, Schema(V1, "AVRO")) == sid  # same schema, same id
c.set_compatibility(subj, "BACKWARD_TRANSITIVE")
assert c.get_compatibility(subj) == "BACKWARD_TRANSITIVE"

assert c.test_compatibility(subj, Schema(V2_BAD, "AVRO")) is False
try:
    c.register_schema(subj, Schema(V2_BAD, "AVRO"))
    raise SystemExit("FAIL: incompatible schema was accepted")
except SchemaRegistryError as e:
    assert e.http_status_code == 409, e
    print("incompatible schema rejected:", e.http_status_code, str(e)[:100])

assert c.test_compatibility(subj, Schema(V2_OK, "AVRO")) is True
sid2 = c.register_schema(subj, Schema(V2_OK, "AVRO"))
assert c.get_versions(subj) == [1, 2]
assert c.get_latest_version(subj).schema_id == sid2
assert c.lookup_schema(subj, Schema(V1, "AVRO")).version == 1

# Transitivity: V2_BAD is compatible with the latest (V2_OK) but not with V1.
assert c.test_compatibility(subj, Schema(V2_BAD, "AVRO")) is True  # checks latest only
try:
    c.register_schema(subj, Schema(V2_BAD, "AVRO"))
    raise SystemExit("FAIL: BACKWARD_TRANSITIVE not enforced")
except SchemaRegistryError as e:
    assert e.http_status_code == 409, e
print("transitive check enforced")

# Avro serializer / deserializer round trip (auto-registers "<topic>-value")
ctx = SerializationContext(f"smoke-{run}", MessageField.VALUE)
data = AvroSerializer(c, V1)({"x": 42}, ctx)
assert data[0] == 0  # Confluent wire format: magic byte + 4-byte schema id
out = AvroDeserializer(c)(data, ctx)
assert out == {"x": 42}, out
print("avro round trip ok, schema id", int.from_bytes(data[1:5], "big"))

tmp = f"smoke-{run}-tmp-value"
c.register_schema(tmp, Schema('"string"', "AVRO"))
assert c.delete_subject(tmp) == [1]
assert tmp not in c.get_subjects()

c.register_schema(PERSIST, Schema(V1, "AVRO"))
c.set_compatibility(PERSIST, "BACKWARD_TRANSITIVE")
print("ALL OK")
