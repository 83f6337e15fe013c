"""Sluice: a Kafka-buffered stream processor for the logs of GPU training clusters."""

__version__ = "0.1.0"
