"""What the SQL server asks a routine load's Kafka cluster: a topic's partitions when a job is
created, and each partition's end for SHOW ROUTINE LOAD's lag. Short timeouts: a statement must
answer, even when the cluster does not."""

from __future__ import annotations

from collections.abc import Mapping

from confluent_kafka import Consumer, KafkaException, TopicPartition

METADATA_TIMEOUT_S = 5.0
WATERMARK_TIMEOUT_S = 2.0


class SourceUnavailable(Exception):
    pass


def _consumer(broker_list: str, client: Mapping[str, str]) -> Consumer:
    return Consumer({**client, "bootstrap.servers": broker_list, "group.id": "strata-sql-metadata",
                     "enable.auto.commit": False, "socket.timeout.ms": int(METADATA_TIMEOUT_S * 1000)})


def topic_partitions(broker_list: str, topic: str, client: Mapping[str, str]) -> list[int]:
    consumer = _consumer(broker_list, client)
    try:
        metadata = consumer.list_topics(topic, timeout=METADATA_TIMEOUT_S)
    except KafkaException as exc:
        raise SourceUnavailable(f"cannot reach Kafka at {broker_list}: {exc}") from None
    finally:
        consumer.close()
    found = metadata.topics.get(topic)
    if found is None or found.error is not None or not found.partitions:
        why = found.error.str() if found is not None and found.error is not None else "it does not exist"
        raise SourceUnavailable(f"topic '{topic}' cannot be read at {broker_list}: {why}")
    return sorted(found.partitions)


def watermarks(broker_list: str, topic: str, partitions: list[int],
               client: Mapping[str, str]) -> dict[int, tuple[int, int]]:
    """(low, high) per partition; partitions that do not answer in time are left out."""
    consumer = _consumer(broker_list, client)
    found: dict[int, tuple[int, int]] = {}
    try:
        for partition in partitions:
            try:
                low, high = consumer.get_watermark_offsets(TopicPartition(topic, partition),
                                                           timeout=WATERMARK_TIMEOUT_S)
            except KafkaException:
                break  # the cluster is not answering; the others would wait as long
            found[partition] = (low, high)
    finally:
        consumer.close()
    return found
