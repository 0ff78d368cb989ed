"""Workers dividing the slots of `strata.workers` through a real Kafka consumer group.

Each test uses a group of its own, so the stack's running worker keeps its share."""

from __future__ import annotations

import time
import uuid
from collections.abc import Callable

import pytest
from confluent_kafka import TopicPartition

from schemas.config import load_settings
from schemas.topics import WORKER_SLOTS, WORKERS_TOPIC
from streams.ownership import LEADER_SLOT, WorkShare, slot_of

ALL = frozenset(range(WORKER_SLOTS))


def _until(condition: Callable[[], bool], timeout: float = 30.0) -> bool:
    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline:
        if condition():
            return True
        time.sleep(0.1)
    return condition()


def test_a_table_belongs_to_one_slot() -> None:
    assert slot_of(0) == 0 and slot_of(WORKER_SLOTS) == 0 and slot_of(WORKER_SLOTS + 5) == 5
    assert {slot_of(t) for t in range(1000)} == ALL


def test_assignments_and_revocations_change_the_share_and_tell_listeners() -> None:
    share = WorkShare(load_settings(), "unit")
    seen: list[frozenset[int]] = []
    share.add_listener(seen.append)
    assert not share.assigned and not share.leads() and not share.owns_table(3)
    share._change([TopicPartition(WORKERS_TOPIC, p) for p in (0, 3)], [])
    assert share.assigned and share.leads() and share.owns_table(3) and share.owns_table(WORKER_SLOTS + 3)
    assert not share.owns_table(4)
    share._change([], [TopicPartition(WORKERS_TOPIC, 0)])
    assert not share.leads() and share.owns_table(3)
    share._change([], [TopicPartition(WORKERS_TOPIC, 0)])  # no change: listeners are not called again
    assert seen == [frozenset({0, 3}), frozenset({3})]


@pytest.mark.integration
def test_two_workers_split_the_slots_and_one_takes_all_when_the_other_leaves() -> None:
    config = load_settings()
    group = f"strata-workers-test-{uuid.uuid4().hex[:8]}"
    a, b = WorkShare(config, "a", group=group), WorkShare(config, "b", group=group)
    a.start()
    try:
        assert _until(lambda: a.slots == ALL), a.slots
        b.start()
        # Cooperative rebalancing: b gets its half without a ever holding nothing.
        assert _until(lambda: bool(b.slots) and a.slots | b.slots == ALL and not a.slots & b.slots), \
            (a.slots, b.slots)
        assert len(a.slots) == len(b.slots) == WORKER_SLOTS // 2
        assert a.leads() != b.leads(), "exactly one worker holds the leader slot"
        leader, standby = (a, b) if a.leads() else (b, a)
        assert LEADER_SLOT in leader.slots
        leader.stop()  # a clean leave: the standby needs no session timeout
        assert _until(lambda: standby.slots == ALL, timeout=20), standby.slots
        assert standby.leads()
    finally:
        a.stop()
        b.stop()
