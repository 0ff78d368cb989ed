"""The recycler: deletes what no query inside retention can read any more (DESIGN §9).

A stale rowset (replaced by compaction, or hidden by a restore) of a time-travel table is needed
by reads at instants before it went stale. Every instant a query may name lies in
`[now − retention, now]`, so a rowset stale since before `now − retention − grace` is needed by
none of them (the grace covers queries already running). The decision is anchored to query
instants, not to when the inputs were written. Tables without time travel keep stale rowsets
only for the grace.

Every deletion is first an event (`RowsetsRecycled`, which also trims the version index to the
horizon); files are removed only after the event is in the log. A crash between the two leaves
files no rowset names; the orphan sweep removes those once they are older than the grace.
"""

from __future__ import annotations

import logging
import os
import time
from collections.abc import Callable
from dataclasses import dataclass

from projections.projection import Projection
from projections.proposer import CommandFailed, Proposer
from projections.retention import retention_ms
from projections.state import TableState
from schemas import commands as cmd
from storage.tiers import LocalTiers

log = logging.getLogger(__name__)


@dataclass
class Recycler:
    projection: Projection
    proposer: Proposer
    tiers: LocalTiers
    grace_s: float
    day_s: float
    recovery_window_s: float = 86400.0
    clock: Callable[[], float] = time.time
    recycled_rowsets: int = 0
    removed_files: int = 0
    removed_orphans: int = 0

    def horizon_ms(self, table: TableState) -> int:
        return int((self.clock() - self.grace_s) * 1000) - retention_ms(table, self.day_s)

    def sweep(self) -> int:
        """One pass over every table; returns how many rowsets were recycled."""
        count = 0
        for table in list(self.projection.tables.values()):
            if table.dropped_ts_ms is not None:
                self.purge_if_expired(table)
            else:
                count += self.recycle_table(table)
        self.remove_orphans()
        return count

    def purge_if_expired(self, table: TableState) -> None:
        """A dropped table whose recovery window (its retention, with time travel) has passed is
        purged; its files then go with the orphan sweep."""
        assert table.dropped_ts_ms is not None
        window_ms = retention_ms(table, self.day_s) if table.time_travel else int(self.recovery_window_s * 1000)
        if table.dropped_ts_ms + window_ms + int(self.grace_s * 1000) > self.clock() * 1000:
            return
        try:
            self.proposer.propose(cmd.DropTable(table_id=table.table_id, force=True), table_id=table.table_id)
        except CommandFailed as failed:
            log.info("recycler: purge of %s skipped: %s", table.name, failed.reason)

    def recycle_table(self, table: TableState) -> int:
        horizon = self.horizon_ms(table)
        with self.projection.lock:
            due = [r.rowset for r in self.projection.rowset_records(table.table_id)
                   if r.stale_ts_ms is not None and r.stale_ts_ms <= horizon]
        if not due:
            return 0
        try:
            self.proposer.propose(cmd.RecycleRowsets(table_id=table.table_id,
                                                     rowset_ids=tuple(r.rowset_id for r in due),
                                                     horizon_ts_ms=horizon if table.time_travel else None),
                                  table_id=table.table_id)
        except CommandFailed as failed:
            log.info("recycler: %s skipped this pass: %s", table.name, failed.reason)
            return 0
        for rowset in due:
            self.tiers.locate(rowset.tier, rowset.path).unlink(missing_ok=True)
            self.removed_files += 1
        self.recycled_rowsets += len(due)
        return len(due)

    def remove_orphans(self) -> None:
        """Files under the tiers that no rowset names, older than the grace: crashed writes,
        refused commits, and deletions a crash interrupted."""
        cutoff = self.clock() - self.grace_s
        for tier in self.tiers.names():
            root = self.tiers.root(tier)
            if not root.exists():
                continue
            for path in root.rglob("*.parquet*"):
                rowset_id = path.name.lstrip(".").split(".")[0]
                try:
                    if path.stat().st_mtime > cutoff:
                        continue
                except FileNotFoundError:
                    continue
                with self.projection.lock:
                    named = self.projection.rowset_record(rowset_id) is not None
                if not named:
                    path.unlink(missing_ok=True)
                    self.removed_orphans += 1
                    log.info("recycler: removed orphan %s", os.path.relpath(path, root))
