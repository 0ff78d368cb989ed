"""The recycler: deletes what no query inside retention can read any more (DESIGN §9).

A stale rowset (replaced by compaction, or hidden by a restore) of a time-travel table is needed
by reads at instants before it went stale. Every instant a query may name lies in
`[now − retention, now]`, so a rowset stale since before `now − retention − grace` is needed by
none of them (the grace covers queries already running). The decision is anchored to query
instants, not to when the inputs were written. Tables without time travel keep stale rowsets
only for the grace, and so do the inputs of a version-keeping compaction (`Rowset.keeps_versions`):
its output answers every instant they did, so history costs about the rows written. Whatever the
retention, a rowset a live tag's snapshot reads is kept (and the sequencer refuses a recycle that
would delete one, so a tag created meanwhile is safe too).

Every deletion is first an event (`RowsetsRecycled`, which also trims the version index to the
horizon); files are removed only after the event is in the log. A crash between the two leaves
files no rowset names; the orphan sweep removes those once they are older than the grace.

A clone (CREATE TABLE … CLONE) shares its source's files: its rowset records name the source's
file (`Rowset.shared_file`) and the projection folds, per file, the rowsets of any table that hold
it (`Projection.file_holders`). Recycling or purging a record releases its hold; the file itself
is deleted only by whichever release leaves no holder — here, after the recycle event is folded,
or by the orphan sweep, which keeps every file some record still holds. The clone's event is keyed
by its source, so it is ordered before any later recycle of the source's rowsets: a hold is only
ever added on the partition of a table that holds the file already, and released on its holder's
own partition, so a replica behind on some partition of `strata.events` (another worker's) sees a
superset of the holders and at worst keeps a file for the orphan sweep, never deletes a held one.

The same holds on remote resources: a recycled cooled rowset's object is removed after its event,
and objects no rowset names there — uploads a crash or a refused commit left — are removed once
older than the grace, each removal logged and counted.

A pass costs what became garbage, not the catalog's size: it looks only at the tables whose
stale-rowset indexes were written since the last pass or still hold something (`Recycler.sweep`), and
at the dropped ones (from the catalog's name index); their stale rowsets are read through the index up
to the horizon (`due_rowsets`), never by decoding every rowset record; a dropped table's purge deletes
the files of the rowsets it forgot right after its event, like a recycle. The orphan sweeps, which
walk every file and object, are only the safety net for what a crash left between an event and its
deletions: they run at start and then every `ORPHAN_SWEEP_EVERY_S`.
"""

from __future__ import annotations

import logging
import os
import re
import time
from collections.abc import Callable
from dataclasses import dataclass, field

from projections.merge_on_write import BITMAP_TIER
from projections.projection import Projection
from projections.proposer import CommandFailed, Proposer
from projections.remote import RemoteStores
from projections.retention import needed_by_tags, retention_ms, tag_instants_ms
from projections.state import TableState
from schemas import commands as cmd
from schemas.model import Rowset
from storage.delete_bitmaps import BITMAP_FILE, checked_bitmap_path
from storage.object_store import ResourceError
from storage.paths import UnsafePath, rowset_path
from storage.tiers import LocalTiers, remote_tier, resource_of

log = logging.getLogger(__name__)
# Object keys Strata writes under a resource's root path (anything else there is left alone).
_ROWSET_OBJECT = re.compile(r"^t\d+/p\d+/b\d+/([0-9a-f]+)\.parquet$")
_PROBE_OBJECT = re.compile(r"^_strata_probe/[0-9a-f]+$")
# The orphan sweeps (every file of every tier, every object of every resource) only catch what a
# crash left behind: rare, and at start.
ORPHAN_SWEEP_EVERY_S = 600.0
# A delete bitmap file is named by the log only once the worker that wrote it has proposed it and this
# replica has folded that: whatever the configured grace, one younger than this is never an orphan.
BITMAP_ORPHAN_GRACE_S = 3600.0


def due_rowsets(projection: Projection, table: TableState, horizon_ms: int, tagged: list[int],
                grace_horizon_ms: int | None = None) -> list[Rowset]:
    """The table's rowsets stale since `horizon_ms` or before that no live tag (at `tagged`) reads,
    and those a version-keeping compaction replaced by `grace_horizon_ms` (its output answers every
    instant, tags' included, they did), read through the stale-rowset indexes: a pass over a table with
    nothing stale reads no record."""
    with projection.lock:
        due = [r.rowset for r in projection.stale_records(table.table_id, horizon_ms)
               if not needed_by_tags(r.rowset, r.stale_ts_ms, tagged)]
        if grace_horizon_ms is not None:
            due += [r.rowset for r in projection.stale_records(table.table_id, grace_horizon_ms, by_keeping=True)]
        return due


@dataclass
class Recycler:
    projection: Projection
    proposer: Proposer
    tiers: LocalTiers
    stores: RemoteStores
    grace_s: float
    day_s: float
    recovery_window_s: float = 86400.0
    clock: Callable[[], float] = time.time
    recycled_rowsets: int = 0
    removed_files: int = 0
    removed_orphans: int = 0
    removed_remote_orphans: int = 0
    refused_paths: int = 0
    tables_looked_at: int = 0  # live tables the last pass read the stale indexes of (how incremental it is)
    _last_orphan_sweep: float = float("-inf")
    # Tables the next pass looks at besides those whose stale indexes grew since the last one
    # (`Projection.stale_writes`, compared with `_writes_seen`) and the dropped ones: every table at
    # first (None), then those a pass left with stale rowsets (not due yet, kept by a tag, refused).
    _left: set[int] | None = None
    _writes_seen: dict[int, int] = field(default_factory=dict)

    def horizon_ms(self, table: TableState) -> int:
        return int((self.clock() - self.grace_s) * 1000) - retention_ms(table, self.day_s)

    def sweep(self) -> int:
        """One pass; returns how many rowsets were recycled. It looks at the tables that may have
        something to recycle — stale rowsets written since the last pass or left by it, a dropped
        table's purge — not at every table: a table whose history has nothing stale costs nothing."""
        with self.projection.lock:  # the counts and the catalog as of one moment of the fold
            writes = dict(self.projection.stale_writes)
            tables = self.projection.tables
            dropped = self.projection.dropped_tables()
        grown = {table_id for table_id, n in writes.items() if self._writes_seen.get(table_id) != n}
        live = set(tables) if self._left is None else self._left | grown
        left: set[int] = set()
        count = looked = 0
        for dropped_table in dropped:
            self.purge_if_expired(dropped_table)
        for table_id in sorted(live):
            table = tables.get(table_id)
            if table is None:
                continue  # purged
            if table.dropped_ts_ms is not None:
                left.add(table_id)  # its stale rowsets wait until it is recovered (or purged with it)
                continue
            count += self.recycle_table(table)
            looked += 1
            with self.projection.lock:
                if self.projection.has_stale(table_id):
                    left.add(table_id)
        # Only after a whole pass: one cut short by an error is redone from the same starting point.
        self._left, self._writes_seen = left, writes
        self.tables_looked_at = looked
        if self.clock() - self._last_orphan_sweep >= ORPHAN_SWEEP_EVERY_S:
            self._last_orphan_sweep = self.clock()
            self.remove_orphans()
            self.remove_remote_orphans()
        return count

    def purge_if_expired(self, table: TableState) -> None:
        """A dropped table whose recovery window (its retention, with time travel) has passed is
        purged; then the files of its rowsets go, each once no clone holds it (a crash in between
        leaves them to the orphan sweep)."""
        assert table.dropped_ts_ms is not None
        window_ms = retention_ms(table, self.day_s) if table.time_travel else int(self.recovery_window_s * 1000)
        if table.dropped_ts_ms + window_ms + int(self.grace_s * 1000) > self.clock() * 1000:
            return
        with self.projection.lock:
            forgotten = [r.rowset for r in self.projection.rowset_records(table.table_id)]
            bitmaps = [(p, t.bucket, t.path) for p in table.partitions
                       for record in self.projection.delete_bitmaps(table.table_id, p, 0, 2 ** 62)
                       for t in record.tablets if t.path is not None]
        try:
            self.proposer.propose(cmd.DropTable(table_id=table.table_id, force=True), table_id=table.table_id)
        except CommandFailed as failed:
            log.info("recycler: purge of %s skipped: %s", table.name, failed.reason)
            return
        for rowset in forgotten:
            self._remove_rowset(table.table_id, rowset)
        root = self.tiers.root(BITMAP_TIER)
        for partition_id, bucket, path in bitmaps:  # delete bitmaps are the table's own, never shared
            try:
                (root / checked_bitmap_path(path, table.table_id, partition_id, bucket)).unlink(missing_ok=True)
            except UnsafePath as exc:
                log.error("recycler: refused to delete a delete bitmap of table id %d: %s", table.table_id, exc)

    def recycle_table(self, table: TableState) -> int:
        horizon = self.horizon_ms(table)
        due = due_rowsets(self.projection, table, horizon, tag_instants_ms(table, int(self.clock() * 1000)),
                          int((self.clock() - self.grace_s) * 1000))
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
            self._remove_rowset(table.table_id, rowset)
        self.recycled_rowsets += len(due)
        return len(due)

    def _remove_rowset(self, table_id: int, rowset: Rowset) -> None:
        """Removes a recycled rowset's file unless another rowset (a clone's, or its source's) still
        holds it, and only at the path Strata builds from the file's ids: the path on the log could
        be forged (this process may run as root), so any other is refused and left to an operator,
        with a log line."""
        file_table, file_partition, file_rowset = rowset.file_ids(table_id)
        with self.projection.lock:
            holders = self.projection.file_holders(file_rowset)
        if holders:
            log.info("recycler: kept the file of rowset %s: rowsets %s still read it", rowset.rowset_id, holders)
            return
        try:
            expected = rowset_path(file_table, file_partition, rowset.bucket, file_rowset)
        except ValueError as exc:
            log.error("recycler: refused to delete rowset %r of table id %d: %s", rowset.rowset_id, table_id, exc)
            return
        if rowset.path != expected:
            log.error("recycler: refused to delete %r for rowset %s of table id %d: not %r, the path built "
                      "from its ids", rowset.path, rowset.rowset_id, table_id, expected)
            self.refused_paths += 1
            return
        self._remove_file(rowset.tier, expected)

    def _remove_file(self, tier: str, path: str) -> None:
        resource = resource_of(tier)
        if resource is None:
            try:
                self.tiers.locate(tier, path).unlink(missing_ok=True)
            except UnsafePath as exc:  # belt and braces: locate resolves and checks containment
                log.error("recycler: refused to delete: %s", exc)
                self.refused_paths += 1
                return
        else:
            try:
                self.stores(resource).remove(path)
            except ResourceError as exc:  # the remote orphan sweep takes it later
                log.warning("recycler: %s", exc)
                return
        self.removed_files += 1

    def _names(self, rowset_id: str, tier: str, path: str | None = None) -> bool:
        """Whether the log names this copy of rowset `rowset_id`'s file: a rowset holding it (its own,
        or a clone's) lives on this tier (at this path), or it belongs to a load still prepared
        (two-phase Stream Load), which a commit may yet make visible."""
        with self.projection.lock:
            records = [self.projection.rowset_record(holder) for holder in self.projection.file_holders(rowset_id)]
            prepared = self.projection.prepared_rowset(rowset_id)
        if prepared is not None:
            return prepared.tier == tier and (path is None or prepared.path == path)
        return any(record is not None and record.rowset.tier == tier and (path is None or record.rowset.path == path)
                   for record in records)

    def remove_remote_orphans(self, resources: list[str] | None = None) -> None:
        """Objects under each resource's root (or those of `resources`) that no rowset names there,
        older than the grace."""
        cutoff = self.clock() - self.grace_s
        for resource in list(self.projection.named["resource"]) if resources is None else resources:
            try:
                store = self.stores(resource)
                for obj in store.objects():
                    found = _ROWSET_OBJECT.match(obj.path)
                    if (found is None and not _PROBE_OBJECT.match(obj.path)) or obj.last_modified is None:
                        continue
                    if obj.last_modified.timestamp() > cutoff:
                        continue
                    if found is not None and self._names(found.group(1), remote_tier(resource), obj.path):
                        continue
                    store.remove(obj.path)
                    self.removed_remote_orphans += 1
                    log.info("recycler: removed orphan object %s (%d bytes) from resource '%s'", obj.path,
                             obj.size, resource)
            except ResourceError as exc:
                log.warning("recycler: remote orphan sweep of '%s' skipped: %s", resource, exc)

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
                # A copy left on a tier its rowset moved away from is an orphan as well.
                if not self._names(rowset_id, tier):
                    path.unlink(missing_ok=True)
                    self.removed_orphans += 1
                    log.info("recycler: removed orphan %s", os.path.relpath(path, root))
        self._remove_orphan_bitmaps(self.clock() - max(self.grace_s, BITMAP_ORPHAN_GRACE_S))

    def _remove_orphan_bitmaps(self, cutoff: float) -> None:
        """Delete bitmap files no DeleteBitmapsCommitted names (a refused or crashed computation, a table
        dropped FORCE), last written before `cutoff`."""
        root = self.tiers.root(BITMAP_TIER)
        if not root.exists():
            return
        for path in root.rglob("*.bitmap*"):
            found = BITMAP_FILE.fullmatch(path.name.lstrip(".").removesuffix(".tmp"))
            try:
                if found is None or path.stat().st_mtime > cutoff:
                    continue
                table_id, partition_id, bucket = (int(part[1:]) for part in path.relative_to(root).parts[:3])
            except (FileNotFoundError, ValueError):
                continue
            rel = path.relative_to(root).as_posix()
            version = int(found.group(1))
            with self.projection.lock:
                named = any(t.bucket == bucket and t.path == rel
                            for r in self.projection.delete_bitmaps(table_id, partition_id, version - 1, version)
                            for t in r.tablets)
            if not named:
                path.unlink(missing_ok=True)
                self.removed_orphans += 1
                log.info("recycler: removed orphan delete bitmap %s", rel)
