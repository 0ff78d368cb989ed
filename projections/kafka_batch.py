"""Reading a batch from a confluent-kafka consumer without waiting for the batch to fill."""

from __future__ import annotations

from confluent_kafka import Consumer, Message


def consume_available(consumer: Consumer, max_records: int, timeout: float) -> list[Message]:
    """Waits up to `timeout` for the first record, then takes whatever else is already fetched.

    `Consumer.consume(n, timeout)` waits the whole timeout unless n records arrive, which would
    add the timeout to every command's latency."""
    first = consumer.poll(timeout)
    if first is None:
        return []
    return [first, *consumer.consume(max_records - 1, 0)] if max_records > 1 else [first]
