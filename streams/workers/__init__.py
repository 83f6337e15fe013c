"""Stage workers: each wires a pure core to Kafka and a store."""
