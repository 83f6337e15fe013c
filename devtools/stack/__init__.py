"""The local stack: real Kafka, schema registry, Elasticsearch and object store, no Docker."""
