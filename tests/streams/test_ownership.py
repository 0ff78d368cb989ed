"""Workers dividing the slots of `strata.workers`, and holding the lease of `strata.leader`, through
real Kafka consumer groups.

Each test uses a group of its own, so the stack's running worker keeps its share."""

from __future__ import annotations

import time
import uuid
from collections.abc import Callable

import pytest
from confluent_kafka import TopicPartition

from schemas.config import load_settings
from schemas.topics import LEADER_TOPIC, WORKER_SLOTS, WORKERS_TOPIC
from streams.ownership import WorkShare, slot_of

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
    seen: list[tuple[frozenset[int], bool]] = []
    share.add_listener(lambda slots: seen.append((slots, share.leads())))
    assert not share.assigned and not share.leads() and not share.owns_table(3)
    share._slots.change([TopicPartition(WORKERS_TOPIC, p) for p in (0, 3)], [])
    assert not share.assigned, "the lease group has not answered yet"
    share._lease.change([], [])
    assert share.assigned and not share.leads() and share.owns_table(3) and share.owns_table(WORKER_SLOTS + 3)
    assert not share.owns_table(4)
    share._lease.change([TopicPartition(LEADER_TOPIC, 0)], [])
    assert share.leads()
    share._slots.change([], [TopicPartition(WORKERS_TOPIC, 0)])
    assert share.leads() and not share.owns_table(0) and share.owns_table(3)
    share._slots.change([], [TopicPartition(WORKERS_TOPIC, 0)])  # no change: listeners are not called again
    assert seen == [(frozenset({0, 3}), False), (frozenset({0, 3}), True), (frozenset({3}), True)]


@pytest.mark.integration
def test_two_workers_split_the_slots_keep_the_leader_and_one_takes_all_when_the_other_leaves() -> None:
    config = load_settings()
    group = f"strata-workers-test-{uuid.uuid4().hex[:8]}"
    a, b = WorkShare(config, "a", group=group), WorkShare(config, "b", group=group)
    a.start()
    try:
        assert _until(lambda: a.slots == ALL and a.leads()), (a.slots, a.leads())
        b.start()
        # Cooperative rebalancing: b gets its half without a ever holding nothing; the lease stays.
        assert _until(lambda: bool(b.slots) and a.slots | b.slots == ALL and not a.slots & b.slots), \
            (a.slots, b.slots)
        assert _until(lambda: b.assigned, 10)
        assert len(a.slots) == len(b.slots) == WORKER_SLOTS // 2
        assert a.leads() and not b.leads(), "a joining worker does not take the lease"
        a.stop()  # a clean leave: the standby needs no session timeout
        assert _until(lambda: b.slots == ALL and b.leads(), timeout=20), (b.slots, b.leads())
    finally:
        a.stop()
        b.stop()
