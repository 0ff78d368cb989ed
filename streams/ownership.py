"""Which share of the work this worker process does, when several run against one cluster.

The workers of a cluster form one Kafka consumer group on `strata.workers`, a topic nothing is
written to: its WORKER_SLOTS partitions are *slots*, and Kafka's group protocol divides them
among the live workers — and hands a dead worker's slots to the others once its session expires.
A table belongs to slot ``table_id % WORKER_SLOTS``; its compactions, cooldowns and routine loads
run on the worker holding that slot. Slot 0 also carries the cluster-wide singletons: the
sequencer (the one writer of `strata.events`, DESIGN §5), the recycler and the dynamic partition
scheduler.

The group only decides who *should* work. Correctness never rests on it: the sequencer's
transactional.id fences a leader that lost slot 0 but has not noticed yet, and routine load tasks
are fenced the same way by their job's transactional.id. Static membership (group.instance.id)
lets a restarted worker take its slots back at once instead of waiting out its old session, and
the cooperative-sticky assignor moves only the slots that must move, so a joining worker does not
stop the sequencer of the one already leading.
"""

from __future__ import annotations

import logging
import threading
from collections.abc import Callable

from confluent_kafka import Consumer, KafkaException, TopicPartition

from schemas.config import Settings
from schemas.topics import WORKER_SLOTS, WORKERS_TOPIC

log = logging.getLogger(__name__)
LEADER_SLOT = 0
SESSION_TIMEOUT_MS = 6000


def slot_of(table_id: int) -> int:
    return table_id % WORKER_SLOTS


class WorkShare:
    """This worker's slots, kept current by a consumer-group member polled in a thread of its own."""

    def __init__(self, config: Settings, instance: str, *, group: str = "strata-workers") -> None:
        self.config = config
        self.instance = instance
        self.group = group
        self._slots: frozenset[int] = frozenset()
        self._assigned = threading.Event()
        self._stop = threading.Event()
        self._listeners: list[Callable[[frozenset[int]], None]] = []
        self._lock = threading.Lock()
        self._thread: threading.Thread | None = None
        self.rebalances = 0

    @property
    def slots(self) -> frozenset[int]:
        return self._slots

    @property
    def assigned(self) -> bool:
        """True once the group answered (with any share, even none)."""
        return self._assigned.is_set()

    def leads(self) -> bool:
        return LEADER_SLOT in self._slots

    def owns_table(self, table_id: int) -> bool:
        return slot_of(table_id) in self._slots

    def add_listener(self, listener: Callable[[frozenset[int]], None]) -> None:
        """`listener(slots)` after every change of this worker's share (called on the group thread)."""
        self._listeners.append(listener)

    def wait_assigned(self, timeout: float) -> bool:
        return self._assigned.wait(timeout)

    def start(self) -> None:
        self._thread = threading.Thread(target=self._run, name="work-share", daemon=True)
        self._thread.start()

    def stop(self) -> None:
        self._stop.set()
        if self._thread is not None:
            self._thread.join(10)

    def _change(self, added: list[TopicPartition], removed: list[TopicPartition]) -> None:
        with self._lock:
            slots = (set(self._slots) | {tp.partition for tp in added}) - {tp.partition for tp in removed}
            changed = frozenset(slots) != self._slots
            self._slots = frozenset(slots)
            self.rebalances += 1
        self._assigned.set()
        if changed:
            log.info("worker %s now holds slots %s", self.instance, sorted(self._slots))
            for listener in self._listeners:
                try:
                    listener(self._slots)
                except Exception:  # noqa: BLE001 - one listener's failure must not stop the group thread
                    log.exception("work share listener failed")

    def _consumer(self) -> Consumer:
        return Consumer({
            **self.config.kafka_client(),
            "group.id": self.group,
            "group.instance.id": f"{self.group}-{self.instance}",
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
                consumer.subscribe([WORKERS_TOPIC],
                                   on_assign=lambda _c, parts: self._change(parts, []),
                                   on_revoke=lambda _c, parts: self._change([], parts),
                                   on_lost=lambda _c, parts: self._change([], parts))
                while not self._stop.is_set():
                    consumer.poll(0.5)  # nothing is ever written: the poll drives the group protocol
            except KafkaException as exc:
                log.warning("worker %s: group membership failed (%s); rejoining", self.instance, exc)
                self._stop.wait(1)
            finally:
                if consumer is not None:
                    try:
                        consumer.close()  # a clean leave: the others get its slots without a timeout
                    except Exception:  # noqa: BLE001 - closing after a failure must not mask it
                        log.debug("work share: close failed", exc_info=True)
