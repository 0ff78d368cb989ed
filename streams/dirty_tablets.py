"""Which tablets an agent must look at again: those the log's events touched since its last pass.

An event naming the partitions whose rowsets it changed (a load, a delete, a compaction) marks those
partitions' tablets; any other event of a table (a property, schema or partition change, a restore,
a move, a recycle) all of the table's; a resource or storage policy event, or a change of the
worker's share of the tables, every table's. A pass then costs what changed, never the catalog.
"""

from __future__ import annotations

import threading
from collections.abc import Iterator

from projections.state import TableState
from projections.tablet_locks import TabletKey
from schemas import events as ev

CATALOG_WIDE = (ev.ResourceCreated, ev.ResourceAltered, ev.ResourceDropped, ev.StoragePolicyCreated,
                ev.StoragePolicyAltered, ev.StoragePolicyDropped)


def partitions_changed(payload: object) -> set[int] | None:
    """The partitions a table's event changed the rowsets of, when it names them (None: it may have
    changed any, or the table's properties)."""
    if isinstance(payload, (ev.RowsetsCommitted, ev.DeleteCommitted)):
        changed = set(payload.partition_versions)
        if isinstance(payload, ev.RowsetsCommitted):
            changed.update(p.partition_id for p in payload.new_partitions)
        return changed
    if isinstance(payload, ev.CompactionCommitted):
        return {payload.partition_id}
    return None


class DirtyTablets:
    """The marks, taken whole by each pass; every table is marked at first."""

    def __init__(self) -> None:
        self._guard = threading.Lock()
        # Table id → its partitions to look at (None: all of them); None: every table.
        self._dirty: dict[int, set[int] | None] | None = None

    def on_event(self, payload: object) -> bool:
        """Marks what the event touched; False when it touches no table."""
        if isinstance(payload, CATALOG_WIDE):
            self.rescan()
            return True
        table_id = getattr(payload, "table_id", None)
        if not isinstance(table_id, int):
            return False
        self.mark(table_id, partitions_changed(payload))
        return True

    def rescan(self) -> None:
        with self._guard:
            self._dirty = None

    def mark(self, table_id: int, partitions: set[int] | None) -> None:
        """Marks `partitions` of the table (None: every one of its partitions)."""
        with self._guard:
            if self._dirty is None:
                return
            if table_id not in self._dirty:
                self._dirty[table_id] = None if partitions is None else set(partitions)
                return
            marked = self._dirty[table_id]
            if marked is not None:
                if partitions is None:
                    self._dirty[table_id] = None
                else:
                    marked.update(partitions)

    def take(self, tables: dict[int, TableState]) -> list[TabletKey]:
        """The marked tablets of `tables` (the live tables the agent works on), in key order; the
        marks are cleared."""
        with self._guard:
            dirty, self._dirty = self._dirty, {}
        return sorted(_tablets(dirty, tables))


def _tablets(dirty: dict[int, set[int] | None] | None, tables: dict[int, TableState]) -> Iterator[TabletKey]:
    for table_id in tables.keys() if dirty is None else dirty.keys() & tables.keys():
        marked = None if dirty is None else dirty[table_id]
        for partition in tables[table_id].live_partitions():
            if marked is None or partition.partition_id in marked:
                yield from ((table_id, partition.partition_id, b) for b in range(partition.partition.buckets))
