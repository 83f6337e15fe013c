"""Real node agents (rsyslog, the OpenTelemetry Collector, Fluent Bit) run against the local Kafka."""
