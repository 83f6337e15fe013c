"""The Elasticsearch hot tier, split the Vector way.

- :mod:`.request`: pure request builder (events in, bulk NDJSON lines and index names out);
- :mod:`.classify`: retry classifier (per item: done / retry / dead-letter with the reason);
- :mod:`.sink`: :class:`HotSink`, the :class:`~streams.sinks.base.Sink` that does the I/O;
- :mod:`.templates`: index and component templates, ILM policies where the server has ILM;
- :mod:`.retention`: the retention job where it has not;
- :mod:`.settings`: :class:`HotSinkSettings` (capacity, batch limits, window).

The worker that wires them to Kafka is :mod:`streams.workers.hot`.
"""

# Nothing is imported here: streams.config imports .settings, and .sink imports streams.config.
