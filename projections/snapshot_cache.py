"""Resolved snapshots kept while the projection they came from is unchanged.

Every read resolves the snapshot of each table it names (`snapshot.resolve`: a version-index seek per
partition, a cover walk per tablet, the delete records), and most reads of a table come while nothing
was folded since the last one: a dashboard's refresh, an application's point lookups, the next statement
of a report. Resolving again would give the same snapshot, so it is kept by (table, instant) and handed
out again as long as the projection's `generation` (every event folded counts) is the one it was resolved
at. A snapshot is immutable (frozen dataclasses; readers narrow it with `dataclasses.replace`), so one
object may serve many statements at once. Nothing else is kept: file locations, pins and the SQL are
made per statement from the snapshot, as before.
"""

from __future__ import annotations

import threading
from collections import OrderedDict

from projections.projection import Projection
from projections.snapshot import Snapshot, resolve
from projections.state import TableState

# Snapshots kept, least recently used first out: one per table and instant read, so a few hundred cover
# the tables a server's clients read at once. A snapshot is as large as its rowset list (a Rowset is
# about a kilobyte in memory), so the rowsets kept are bounded too; a larger snapshot is not kept.
MAX_ENTRIES = 256
MAX_ROWSETS = 100_000

_Key = tuple[int, int | None]


class SnapshotCache:
    def __init__(self, projection: Projection, entries: int = MAX_ENTRIES, rowsets: int = MAX_ROWSETS) -> None:
        self._projection = projection
        self._entries = entries
        self._budget = rowsets
        self._rowsets = 0
        self._kept: OrderedDict[_Key, tuple[int, Snapshot, int]] = OrderedDict()  # generation, snapshot, rowsets
        self._lock = threading.Lock()
        self.resolved = 0  # snapshots resolved rather than reused (tests watch it)

    def resolve(self, table: TableState, ts_ms: int | None = None) -> Snapshot:
        """`snapshot.resolve(projection, table, ts_ms)`, reused while nothing was folded since."""
        key = (table.table_id, ts_ms)
        # A kept snapshot resolved at the generation read here is the projection as it was then (the
        # number moves after each change is in place, and is read under the lock when resolving).
        generation = self._projection.generation
        with self._lock:
            kept = self._kept.get(key)
            if kept is not None and kept[0] == generation:
                self._kept.move_to_end(key)
                return kept[1]
        with self._projection.lock:  # no event is folded between reading the number and resolving
            generation = self._projection.generation
            snapshot = resolve(self._projection, table, ts_ms)
        size = sum(len(p.rowsets) for p in snapshot.partitions)
        with self._lock:
            self.resolved += 1
            replaced = self._kept.pop(key, None)
            if replaced is not None:
                self._rowsets -= replaced[2]
            if size <= self._budget:
                self._kept[key] = (generation, snapshot, size)
                self._rowsets += size
            while len(self._kept) > self._entries or self._rowsets > self._budget:
                _, (_, _, dropped) = self._kept.popitem(last=False)
                self._rowsets -= dropped
        return snapshot
