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
from collections.abc import Callable

from projections.membership import SESSION_TIMEOUT_MS, GroupMembership
from schemas.config import Settings
from schemas.topics import LEADER_TOPIC, WORKER_CLIENT_PREFIX, WORKER_SLOTS, WORKERS_GROUP, WORKERS_TOPIC

log = logging.getLogger(__name__)
__all__ = ["SESSION_TIMEOUT_MS", "GroupMembership", "WorkShare", "slot_of", "worker_client_id"]


def worker_client_id(instance: str, web_port: int) -> str:
    """The Kafka client id of a worker's group members (schemas.topics.parse_worker_client_id reads it)."""
    return f"{WORKER_CLIENT_PREFIX}{instance}|{web_port}"


def slot_of(table_id: int) -> int:
    return table_id % WORKER_SLOTS


class WorkShare:
    """This worker's slots and whether it holds the lease."""

    def __init__(self, config: Settings, instance: str, *, group: str = WORKERS_GROUP) -> None:
        self.instance = instance
        self._listeners: list[Callable[[frozenset[int]], None]] = []
        # SQL servers read these groups' members as Doris' backends (query.cluster): the client id
        # tells them the worker's instance and where its /health answers.
        client_id = worker_client_id(instance, config.worker_port)
        self._slots = GroupMembership(config, WORKERS_TOPIC, group, instance, self._changed, client_id)
        self._lease = GroupMembership(config, LEADER_TOPIC, f"{group}-leader", instance, self._changed, client_id)

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
