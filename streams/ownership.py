"""Which share of the work this worker process does, when several run against one cluster.

The workers of a cluster form two Kafka consumer groups on topics nothing is written to:

- on `strata.workers`, whose WORKER_SLOTS partitions are *slots*: Kafka's group protocol divides
  them among the live workers, and hands a dead worker's slots to the others once its session
  expires. A table belongs to slot ``table_id % WORKER_SLOTS``; its compactions, cooldowns and
  routine loads run on the worker holding that slot.
- on `strata.leader`, one partition: the *lease*. Its holder leads — it runs the cluster-wide
  singletons: the sequencer (the one writer of `strata.events`, DESIGN §5), the recycler and the
  dynamic partition scheduler. A group of its own, because with one partition the sticky assignor
  leaves it where it is when a worker joins; had the lease been a slot, a joining worker could
  be handed it and every write would wait for the sequencer to move.

The groups only decide who *should* work. Correctness never rests on them: the sequencer's
transactional.id fences a leader that lost the lease but has not noticed yet, and routine load
tasks are fenced the same way by their job's transactional.id. Static membership
(group.instance.id) lets a restarted worker take its share back at once instead of waiting out its
old session, and the cooperative-sticky assignor moves only the slots that must move.
"""

from __future__ import annotations

import logging
import threading
from collections.abc import Callable

from confluent_kafka import Consumer, KafkaException, TopicPartition

from schemas.config import Settings
from schemas.topics import LEADER_TOPIC, WORKER_CLIENT_PREFIX, WORKER_SLOTS, WORKERS_GROUP, WORKERS_TOPIC

log = logging.getLogger(__name__)
SESSION_TIMEOUT_MS = 6000


def worker_client_id(instance: str, web_port: int) -> str:
    """The Kafka client id of a worker's group members (schemas.topics.parse_worker_client_id reads it)."""
    return f"{WORKER_CLIENT_PREFIX}{instance}|{web_port}"


def slot_of(table_id: int) -> int:
    return table_id % WORKER_SLOTS


class GroupMembership:
    """One consumer-group member on `topic`, polled in a thread of its own: the partitions it holds."""

    def __init__(self, config: Settings, topic: str, group: str, instance: str,
                 on_change: Callable[[], None]) -> None:
        self.config, self.topic, self.group, self.instance = config, topic, group, instance
        self._on_change = on_change
        self._held: frozenset[int] = frozenset()
        self._assigned = threading.Event()
        self._stop = threading.Event()
        self._lock = threading.Lock()
        self._thread: threading.Thread | None = None

    @property
    def held(self) -> frozenset[int]:
        return self._held

    @property
    def assigned(self) -> bool:
        """True once the group answered (with any share, even none)."""
        return self._assigned.is_set()

    def start(self) -> None:
        self._thread = threading.Thread(target=self._run, name=f"group-{self.group}", daemon=True)
        self._thread.start()

    def stop(self) -> None:
        self._stop.set()
        if self._thread is not None:
            self._thread.join(10)

    def change(self, added: list[TopicPartition], removed: list[TopicPartition]) -> None:
        with self._lock:
            held = (set(self._held) | {tp.partition for tp in added}) - {tp.partition for tp in removed}
            changed = frozenset(held) != self._held
            self._held = frozenset(held)
        self._assigned.set()
        if changed:
            self._on_change()

    def _consumer(self) -> Consumer:
        return Consumer({
            **self.config.kafka_client(),
            "group.id": self.group,
            "group.instance.id": f"{self.group}-{self.instance}",
            # SQL servers read the members of this group as Doris' backends (query.cluster): the client
            # id tells them the worker's instance and where its /health answers.
            "client.id": worker_client_id(self.instance, self.config.worker_port),
            "partition.assignment.strategy": "cooperative-sticky",
            "session.timeout.ms": SESSION_TIMEOUT_MS,
            "heartbeat.interval.ms": 1000,
            "enable.auto.commit": False,
            "auto.offset.reset": "latest",
        })

    def _run(self) -> None:
        while not self._stop.is_set():
            consumer = None
            try:
                consumer = self._consumer()
                consumer.subscribe([self.topic],
                                   on_assign=lambda _c, parts: self.change(parts, []),
                                   on_revoke=lambda _c, parts: self.change([], parts),
                                   on_lost=lambda _c, parts: self.change([], parts))
                while not self._stop.is_set():
                    consumer.poll(0.5)  # nothing is ever written: the poll drives the group protocol
            except KafkaException as exc:
                log.warning("worker %s: membership of %s failed (%s); rejoining", self.instance, self.group, exc)
                self._stop.wait(1)
            finally:
                if consumer is not None:
                    try:
                        consumer.close()  # a clean leave: the others get its share without a timeout
                    except Exception:  # noqa: BLE001 - closing after a failure must not mask it
                        log.debug("group %s: close failed", self.group, exc_info=True)


class WorkShare:
    """This worker's slots and whether it holds the lease."""

    def __init__(self, config: Settings, instance: str, *, group: str = WORKERS_GROUP) -> None:
        self.instance = instance
        self._listeners: list[Callable[[frozenset[int]], None]] = []
        self._slots = GroupMembership(config, WORKERS_TOPIC, group, instance, self._changed)
        self._lease = GroupMembership(config, LEADER_TOPIC, f"{group}-leader", instance, self._changed)

    @property
    def slots(self) -> frozenset[int]:
        return self._slots.held

    @property
    def assigned(self) -> bool:
        """True once both groups answered (with any share, even none)."""
        return self._slots.assigned and self._lease.assigned

    def leads(self) -> bool:
        return bool(self._lease.held)

    def owns_table(self, table_id: int) -> bool:
        return slot_of(table_id) in self._slots.held

    def add_listener(self, listener: Callable[[frozenset[int]], None]) -> None:
        """`listener(slots)` after every change of this worker's share (called on a group's thread)."""
        self._listeners.append(listener)

    def start(self) -> None:
        self._slots.start()
        self._lease.start()

    def stop(self) -> None:
        self._lease.stop()
        self._slots.stop()

    def _changed(self) -> None:
        log.info("worker %s now holds slots %s%s", self.instance, sorted(self.slots),
                 " and the lease" if self.leads() else "")
        for listener in self._listeners:
            try:
                listener(self.slots)
            except Exception:  # noqa: BLE001 - one listener's failure must not stop the group thread
                log.exception("work share listener failed")
