"""A Faust transport driver on librdkafka (confluent-kafka): ``broker="rdkafka://host:port"``.

- :mod:`streams.rdkafka.client`: the consumer's thread, its buffer, rebalances and seeks;
- :mod:`streams.rdkafka.consumer`, :mod:`streams.rdkafka.producer`: Faust's consumer and producer;
- :mod:`streams.rdkafka.transport`: the transport (registered by URL scheme) and its assignor view;
- :mod:`streams.rdkafka.batch`: topics whose agents get batches of records (:func:`batch_topic`).
"""

from streams.rdkafka.batch import BatchSchema, Message, RecordBatch, batch_topic
from streams.rdkafka.transport import AssignedActives, Transport, use_client_config

__all__ = ["AssignedActives", "BatchSchema", "Message", "RecordBatch", "Transport", "batch_topic", "use_client_config"]
