"""A member of a Kafka consumer group on a topic nothing is written to: the group protocol itself is the
point. Kafka divides the topic's partitions among the live members and drops a member whose session
expires, so the members are the live processes and their partitions their share (streams.ownership:
the workers' slots and lease; query.cluster: the SQL servers present). Static membership
(group.instance.id) lets a restarted process take its place back at once.
"""

from __future__ import annotations

import logging
import threading
from collections.abc import Callable

from confluent_kafka import Consumer, KafkaException, TopicPartition

from schemas.config import Settings

log = logging.getLogger(__name__)
SESSION_TIMEOUT_MS = 6000


class GroupMembership:
    """One consumer-group member on `topic`, polled in a thread of its own: the partitions it holds."""

    def __init__(self, config: Settings, topic: str, group: str, instance: str,
                 on_change: Callable[[], None], client_id: str) -> None:
        self.config, self.topic, self.group, self.instance = config, topic, group, instance
        # Who reads the group's members learns from it who the member is (query.cluster).
        self.client_id = client_id
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
            "client.id": self.client_id,
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
