"""Kafka of the running stack: topics are as specified; a record goes through strata.events."""

from __future__ import annotations

import json
import time

import pytest
from confluent_kafka import Consumer, Producer, TopicPartition
from confluent_kafka.admin import ConfigResource, ResourceType

from infra.topics import SEVEN_DAYS_MS, admin_client, check_topics
from schemas.config import Settings
from schemas.topics import COMMANDS_TOPIC, DLQ_TOPIC, EVENTS_TOPIC, LEADER_TOPIC, WORKER_SLOTS, WORKERS_TOPIC

pytestmark = pytest.mark.integration

WANT = {
    COMMANDS_TOPIC: {"retention.ms": SEVEN_DAYS_MS, "min.insync.replicas": "1"},
    EVENTS_TOPIC: {"retention.ms": "-1", "min.insync.replicas": "1"},
    DLQ_TOPIC: {"retention.ms": SEVEN_DAYS_MS, "min.insync.replicas": "1"},
    WORKERS_TOPIC: {"retention.ms": SEVEN_DAYS_MS, "min.insync.replicas": "1"},
    LEADER_TOPIC: {"retention.ms": SEVEN_DAYS_MS, "min.insync.replicas": "1"},
}
FIXED_PARTITIONS = {WORKERS_TOPIC: WORKER_SLOTS, LEADER_TOPIC: 1}


def test_topics_exist_with_their_configs(stack: Settings) -> None:
    admin = admin_client(stack)
    md = admin.list_topics(timeout=10)
    for name in WANT:
        assert name in md.topics, name
        parts = md.topics[name].partitions
        assert len(parts) == FIXED_PARTITIONS.get(name, stack.topic_partitions)
        assert all(len(p.replicas) == 1 for p in parts.values())
    futures = admin.describe_configs([ConfigResource(ResourceType.TOPIC, n) for n in WANT])
    for res, fut in futures.items():
        entries = fut.result(timeout=10)
        for key, value in WANT[res.name].items():
            assert entries[key].value == value, (res.name, key)
    assert SEVEN_DAYS_MS == str(7 * 24 * 3600 * 1000)
    assert check_topics(stack) == []


def test_no_auto_created_topics(stack: Settings, unique: str) -> None:
    md = admin_client(stack).list_topics(topic=f"strata.nope.{unique}", timeout=10)
    assert md.topics[f"strata.nope.{unique}"].error is not None


def produce_one(stack: Settings, topic: str, key: str, value: bytes) -> tuple[int, int]:
    """Produces one record with acks=all; returns its (partition, offset)."""
    got: list[tuple[int, int]] = []

    def on_delivery(err, msg) -> None:  # type: ignore[no-untyped-def]
        assert err is None, err
        got.append((msg.partition(), msg.offset()))

    # As Strata's principal: only it may write Strata's topics (tests/infra/test_kafka_acl.py).
    p = Producer(stack.kafka_client(**{"acks": "all", "enable.idempotence": True}))
    p.produce(topic, key=key.encode(), value=value, on_delivery=on_delivery)
    assert p.flush(15) == 0
    assert got
    return got[0]


def consume_at(stack: Settings, topic: str, partition: int, offset: int, timeout: float = 15.0):
    c = Consumer(stack.kafka_client(**{"group.id": f"strata-infra-test-{time.time()}",
                                       "enable.auto.commit": False, "auto.offset.reset": "earliest"}))
    try:
        c.assign([TopicPartition(topic, partition, offset)])
        deadline = time.monotonic() + timeout
        while time.monotonic() < deadline:
            msg = c.poll(0.5)
            if msg is None or msg.error():
                continue
            return msg
        return None
    finally:
        c.close()


def probe_value(unique: str) -> bytes:
    # Deliberately not a valid envelope type: the worker's decoder counts and skips it.
    return json.dumps({"type": "InfraProbe", "probe": unique}).encode()


def test_produce_then_consume_on_events(stack: Settings, unique: str) -> None:
    partition, offset = produce_one(stack, EVENTS_TOPIC, f"infra-probe-{unique}", probe_value(unique))
    msg = consume_at(stack, EVENTS_TOPIC, partition, offset)
    assert msg is not None, "record not consumed back"
    assert msg.key() == f"infra-probe-{unique}".encode()
    assert json.loads(msg.value())["probe"] == unique


def test_drifted_topic_config_is_reported_then_repaired(stack: Settings) -> None:
    from confluent_kafka.admin import AlterConfigOpType, ConfigEntry

    from infra.topics import ensure_topics

    admin = admin_client(stack)
    res = ConfigResource(ResourceType.TOPIC, DLQ_TOPIC, incremental_configs=[
        ConfigEntry("retention.ms", "60000", incremental_operation=AlterConfigOpType.SET)])
    for fut in admin.incremental_alter_configs([res]).values():
        fut.result(timeout=10)
    try:
        deadline = time.monotonic() + 10
        while not (problems := check_topics(stack, admin)) and time.monotonic() < deadline:
            time.sleep(0.1)
        assert problems == [f"{DLQ_TOPIC}: retention.ms=60000, want {SEVEN_DAYS_MS}"]
        assert ensure_topics(stack, admin) == [f"altered {DLQ_TOPIC}: retention.ms={SEVEN_DAYS_MS}"]
    finally:
        ensure_topics(stack, admin)
    deadline = time.monotonic() + 10
    while check_topics(stack, admin) and time.monotonic() < deadline:
        time.sleep(0.1)
    assert check_topics(stack, admin) == []
