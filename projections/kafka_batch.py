"""Reading a batch from a confluent-kafka consumer without waiting for the batch to fill."""

from __future__ import annotations

from confluent_kafka import Consumer, Message

# How long the broker holds a fetch that finds nothing new (`fetch.wait.max.ms`). New records — for
# read_committed readers, the commit marker that makes them stable — answer a held fetch at once, so
# this adds no latency; it only sets how often an idle reader asks again. At 5–10 ms every follower
# and the sequencer made 100–200 empty fetches a second, CPU of the broker and of their own process
# taken from the writers on a small machine.
IDLE_FETCH_WAIT_MS = 100


def consume_available(consumer: Consumer, max_records: int, timeout: float) -> list[Message]:
    """Waits up to `timeout` for the first record, then takes whatever else is already fetched.

    `Consumer.consume(n, timeout)` waits the whole timeout unless n records arrive, which would
    add the timeout to every command's latency."""
    first = consumer.poll(timeout)
    if first is None:
        return []
    return [first, *consumer.consume(max_records - 1, 0)] if max_records > 1 else [first]
