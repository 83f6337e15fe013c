"""The cold tier: LogEvents as compressed Avro objects in S3-compatible storage, exactly once.

- ``partition.py``: record -> bucket and key (pure);
- ``segment.py``: when a partition's objects are cut (pure, record time only);
- ``build.py``: events -> object bytes and manifest (pure, deterministic; the manifest is
  stored as the object's user metadata);
- ``store.py``: boto3 puts, multipart, listings, recorded cuts, lifecycle rules;
- ``sink.py``: :class:`ColdSink`, the Sink protocol over those;
- ``rehydrate.py``: objects back into Elasticsearch (``sluice rehydrate``).
"""

# Nothing is imported here: streams.config imports .settings, and .sink imports streams.config.

