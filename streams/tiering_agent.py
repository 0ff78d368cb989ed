"""The tiering agent: keeps a schedule of when each tablet next has a rowset due to move, and
moves what is due (DESIGN §10; the decisions are `projections.cooldown`'s).

The schedule reacts to the log: the tablets an event touched are planned again (`DirtyTablets`: the
partitions a load, delete or compaction names, a table's for its other events, every table's for a
policy or resource event). Between events a tablet is only looked at when its due time comes
(time-driven cooldowns: each plan says when its tablet is next due), so a pass costs what changed,
never the catalog.

A failing store (down, slow, refusing) puts the tablet on a backoff of its own — 1 s doubling
to a minute — and its data stays hot and readable meanwhile. The source copy of a moved rowset
is removed `local_grace_s` after the move is in the log, so queries that resolved their snapshot
before the move can still read it; a copy left by a crash is the recycler's orphan sweep's.
"""

from __future__ import annotations

import logging
import threading
import time
from collections.abc import Callable
from concurrent.futures import ThreadPoolExecutor
from dataclasses import dataclass, field
from pathlib import Path

from projections.cooldown import Cooler, TabletMoves, plan_tablet
from projections.proposer import CommandFailed, CommandTimeout
from projections.state import PartitionState, TableState
from projections.tablet_locks import TabletKey, TabletLocks
from schemas.envelope import EventEnvelope
from storage.object_store import ResourceError
from streams.dirty_tablets import DirtyTablets

log = logging.getLogger(__name__)
# Tablets moved at once: uploads of different tablets overlap (each tablet's own moves stay in order).
MOVE_THREADS = 4
FIRST_BACKOFF_S = 1.0
MAX_BACKOFF_S = 60.0
@dataclass
class _Backoff:
    retry_at: float
    delay: float


@dataclass
class TieringAgent:
    cooler: Cooler
    locks: TabletLocks
    local_grace_s: float
    clock: Callable[[], float] = time.time
    # SSD data without its own storage_cooldown_time moves to HDD this long after its partition was created.
    default_cooldown_s: float | None = None
    # Whether this worker holds a table's share of the work (streams.ownership); all, when alone.
    owns: Callable[[int], bool] = lambda _table_id: True
    failures: int = 0
    _due: dict[TabletKey, float] = field(default_factory=dict)
    _backoff: dict[TabletKey, _Backoff] = field(default_factory=dict)
    _removals: list[tuple[float, Path]] = field(default_factory=list)
    _dirty: DirtyTablets = field(default_factory=DirtyTablets)
    _guard: threading.Lock = field(default_factory=threading.Lock)
    # Set when an event made something plannable, so the next sweep need not wait for its interval.
    wake: threading.Event = field(default_factory=threading.Event)
    _pool: ThreadPoolExecutor = field(default_factory=lambda: ThreadPoolExecutor(MOVE_THREADS, "tiering-move"))

    def on_event(self, envelope: EventEnvelope) -> None:
        """Follower listener: marks what the event may have made due (or no longer due)."""
        if self._dirty.on_event(envelope.payload):
            self.wake.set()

    def rescan(self) -> None:
        """This worker's share changed: the next sweep looks at every table it now holds."""
        self._dirty.rescan()
        self.wake.set()

    def sweep(self) -> int:
        """Moves every due rowset it can; returns how many moved."""
        now = self.clock()
        self._remove_sources(now)
        projection = self.cooler.projection
        wanted: set[TabletKey] = {key for key, at in self._due.items() if at <= now * 1000}
        with projection.lock:
            live = {t.table_id: t for t in projection.tables.values()
                    if t.dropped_ts_ms is None and self.owns(t.table_id)}
            wanted.update(self._dirty.take(live))
            # No copies: a published state never changes (copy-on-write, projections.projection).
            tables = {i: live[i] for i in {key[0] for key in wanted} if i in live}
        jobs = []
        for key in sorted(wanted):
            backoff = self._backoff.get(key)
            if backoff is not None and backoff.retry_at > now:
                self._due[key] = backoff.retry_at * 1000
                continue
            table = tables.get(key[0])
            state = table.partitions.get(key[1]) if table is not None else None
            if table is None or state is None or state.dropped_ts_ms is not None:
                self._due.pop(key, None)
                continue
            jobs.append(self._pool.submit(self._cool_tablet, table, state, key, now))
        return sum(job.result() for job in jobs)

    def _cool_tablet(self, table: TableState, partition: PartitionState, key: TabletKey, now: float) -> int:
        projection = self.cooler.projection
        with self.locks(*key):
            with projection.lock:
                plan = plan_tablet(projection, table, partition, key[2], int(now * 1000), self.default_cooldown_s)
            if not plan.moves:
                result = TabletMoves([], None)
            else:
                try:
                    result = self.cooler.move_tablet(table, plan.moves)
                except (CommandFailed, CommandTimeout) as exc:
                    # The tablet changed under us (compaction, recycle, drop): plan it again next pass.
                    log.info("tiering: moves of tablet %s deferred: %s", key, exc)
                    self._dirty.mark(table.table_id, {partition.partition_id})
                    return 0
            with self._guard:
                self._removals.extend((now + self.local_grace_s, source) for source in result.sources)
            moved = len(result.sources)
            if isinstance(result.failure, ResourceError):
                self._back_off(key, now, str(result.failure))
                return moved
            if result.failure is not None:
                log.error("tiering: %s", result.failure)
        with self._guard:
            self._backoff.pop(key, None)
            if plan.next_due_ms is None:
                self._due.pop(key, None)
            else:
                self._due[key] = plan.next_due_ms
        return moved

    def _back_off(self, key: TabletKey, now: float, reason: str) -> None:
        with self._guard:
            self.failures += 1
            previous = self._backoff.get(key)
            delay = FIRST_BACKOFF_S if previous is None else min(previous.delay * 2, MAX_BACKOFF_S)
            self._backoff[key] = _Backoff(now + delay, delay)
            self._due[key] = (now + delay) * 1000
        log.warning("tiering: tablet %s stays hot, retry in %.0f s: %s", key, delay, reason)

    def _remove_sources(self, now: float) -> None:
        with self._guard:
            due = [path for at, path in self._removals if at <= now]
            self._removals = [(at, path) for at, path in self._removals if at > now]
        for path in due:
            path.unlink(missing_ok=True)

    @property
    def pending_removals(self) -> int:
        return len(self._removals)
