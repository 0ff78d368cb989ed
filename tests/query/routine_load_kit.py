"""Helpers for routine load tests: topics filled by a real producer, jobs waited on through SHOW
ROUTINE LOAD, and the dead-letter records read back from `strata.dlq`."""

from __future__ import annotations

import json
import time
import uuid
from collections.abc import Callable, Iterable
from typing import Any

import pymysql
from confluent_kafka import Consumer, Producer, TopicPartition

from schemas.config import settings
from schemas.topics import DLQ_TOPIC
from streams.producer import create_topic
from tests.query.sqlkit import columns, rows


def _headers(message: Any) -> dict[str, str]:
    """A Kafka message's headers as text (the routine load writes them UTF-8)."""
    return {key: value.decode() if isinstance(value, bytes) else str(value or "")
            for key, value in message.headers() or []}

def bootstrap() -> str:
    return settings().kafka_bootstrap


def new_topic(partitions: int = 1) -> str:
    topic = f"rl_{uuid.uuid4().hex[:10]}"
    create_topic(topic, partitions=partitions)
    return topic


def produce(topic: str, values: Iterable[bytes | str | dict[str, Any] | None], *, partition: int | None = None) -> int:
    """Sends raw values (dicts as JSON) in order; returns how many."""
    producer = Producer({"bootstrap.servers": bootstrap(), "enable.idempotence": True})
    count = 0
    for value in values:
        raw = json.dumps(value).encode() if isinstance(value, dict) else value.encode() if isinstance(value, str) \
            else value
        if partition is None:
            producer.produce(topic, raw)
        else:
            producer.produce(topic, raw, partition=partition)
        count += 1
    assert producer.flush(30) == 0
    return count


def kafka_source(topic: str, **extra: str) -> str:
    props = {"kafka_broker_list": bootstrap(), "kafka_topic": topic,
             "property.kafka_default_offsets": "OFFSET_BEGINNING", **extra}
    return "FROM KAFKA (" + ", ".join(f'"{k}" = "{v}"' for k, v in props.items()) + ")"


def show(conn: pymysql.connections.Connection, job: str) -> dict[str, Any]:
    sql = f"SHOW ROUTINE LOAD FOR {job}"
    found = dict(zip(columns(conn, sql), rows(conn, sql)[0], strict=True))
    for key in ("Statistic", "Progress", "Lag", "JobProperties", "DataSourceProperties", "CustomProperties"):
        found[key] = json.loads(found[key])
    return found


def wait_for(check: Callable[[], bool], what: str, timeout: float = 60.0) -> None:
    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline:
        if check():
            return
        time.sleep(0.2)
    raise AssertionError(f"timed out after {timeout:.0f}s waiting for {what}")


def wait_rows(conn: pymysql.connections.Connection, table: str, count: int, timeout: float = 60.0) -> None:
    wait_for(lambda: rows(conn, f"SELECT count(*) FROM {table}")[0][0] >= count, f"{count} rows in {table}", timeout)


def dead_letters(job: str, topic: str, expected: int,
                 timeout: float = 30.0) -> list[tuple[bytes | None, dict[str, str]]]:
    """The DLQ records of `job` ('db.name') reading `topic`: (value, headers), read committed, waiting
    for `expected` (a name can be used again; the topic is new per test)."""
    # strata.dlq is Strata's: only its principal may read it (the broker's ACLs).
    consumer = Consumer(settings().kafka_client(**{"group.id": f"t-{uuid.uuid4().hex}",
                                                   "isolation.level": "read_committed", "enable.auto.commit": False}))
    metadata = consumer.list_topics(DLQ_TOPIC, timeout=10)
    consumer.assign([TopicPartition(DLQ_TOPIC, p, 0) for p in metadata.topics[DLQ_TOPIC].partitions])
    found: list[tuple[bytes | None, dict[str, str]]] = []
    deadline = time.monotonic() + timeout
    try:
        while time.monotonic() < deadline and len(found) < expected:
            for message in consumer.consume(500, timeout=0.5):
                if message.error() is not None:
                    continue
                headers = _headers(message)
                if headers.get("strata.job") == job and headers.get("strata.source.topic") == topic:
                    found.append((message.value(), headers))
        # Anything more would be a duplicate: look a little longer.
        for message in consumer.consume(500, timeout=1.0):
            headers = _headers(message)
            if message.error() is None and headers.get("strata.job") == job and \
                    headers.get("strata.source.topic") == topic:
                found.append((message.value(), headers))
    finally:
        consumer.close()
    return found
