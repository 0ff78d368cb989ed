"""Compaction of one tablet: choose the run of live rowsets, merge them (storage), propose the commit.

Shared by the automatic compaction agent (streams) and `ADMIN COMPACT TABLE` (query); it sits
here because it needs both the projection (what is live) and storage (merging files), the two
layers both callers may import.

Cumulative compaction merges every live rowset above the base rowset; base compaction merges
the whole cover of the tablet into one rowset starting at version 1. With time travel on, the
output keeps versions where it can (`keeps_versions_possible`): every input row unmerged with its
`__version`, no delete applied, so the output answers every instant inside its range (read through
that version) and its inputs are needed by no read; otherwise the inputs become stale (kept for
reads at earlier instants) rather than deleted. A time-travel table's base compaction merges only
what lies at or below its retention horizon (`horizon_version`) and keeps versions above it.

A run never mixes tiers: the output goes where its inputs are, so compacting cooled rowsets reads
them through the file cache and uploads the merged file to their resource before committing.
"""

from __future__ import annotations

import itertools
import time
from collections.abc import Callable
from dataclasses import dataclass, field
from typing import Literal

import duckdb

from projections.projection import Projection
from projections.proposer import CommandFailed, Proposer
from projections.remote import RemoteStores
from projections.retention import retention_ms, tag_instants_ms
from projections.snapshot import cover_tablet, keeps_versions_possible, visible_deletes
from projections.state import PartitionState, TableState
from projections.tablet_locks import TabletLocks
from schemas import commands as cmd
from schemas.events import CompactionCommitted
from schemas.model import Column, NewRowset, Rowset
from storage.compaction import compact_files
from storage.locator import RowsetLocator
from storage.rowset_sql import DeleteRule, MergeSpec, RowsetFile
from storage.tiers import resource_of

Kind = Literal["cumulative", "base"]
# A tablet with this many small rowsets at its top is due for an automatic cumulative compaction.
CUMULATIVE_TRIGGER = 5
# … and for a base compaction once its cover holds more than this many rowsets.
BASE_TRIGGER = 20
# A rowset spanning this many versions is promoted: cumulative compactions leave it to the next
# base compaction, so rows are not rewritten again and again as the top of the tablet grows.
PROMOTE_SPAN = 64
# No compaction merges more rowsets than this at once; a long pile is worked down over passes
# (one merge of 100k rowsets once took 22 GB).
MAX_INPUTS = 100


def column_ids_of(table: TableState, rowset: Rowset) -> frozenset[int]:
    if rowset.column_ids is not None:
        return frozenset(rowset.column_ids)
    for entry in table.schemas:
        if entry.table_schema.schema_version == rowset.schema_version:
            return frozenset(c.unique_id for c in entry.table_schema.columns)
    return frozenset(c.unique_id for c in table.schema_now.columns)


def column_definitions(table: TableState) -> dict[int, Column]:
    """Every column the table ever had, by unique id, as last defined."""
    defined: dict[int, Column] = {}
    for entry in table.schemas:
        defined.update({c.unique_id: c for c in entry.table_schema.columns})
    return defined


def rowset_file(table: TableState, rowset: Rowset, locate: Callable[[Rowset], str]) -> RowsetFile:
    return RowsetFile(location=locate(rowset), partition_id=rowset.partition_id, start_version=rowset.start_version,
                      end_version=rowset.end_version, column_ids=column_ids_of(table, rowset),
                      read_through=rowset.read_through)


def delete_rules(partition: PartitionState, projection: Projection, table: TableState) -> list[DeleteRule]:
    return [DeleteRule(d.partition_id, d.version, d.predicate)
            for d in visible_deletes(projection, table.table_id, partition, partition.version)]


def plan(projection: Projection, table: TableState, partition: PartitionState, bucket: int,
         kind: Kind, horizon: int | None = None) -> list[Rowset]:
    """The live rowsets a compaction of `kind` would merge (empty: nothing worth doing); `horizon`: a
    time-travel table's horizon version (`horizon_version`)."""
    live = cover_tablet(projection, table.table_id, partition, bucket, partition.version)
    run = _one_tier(_base_run(live, horizon) if kind == "base" else _small_top(live))[:MAX_INPUTS]
    return run if len(run) >= 2 else []


def horizon_version(projection: Projection, table: TableState, partition: PartitionState, now_ms: int,
                    day_s: float) -> int:
    """The partition's version at the retention horizon (or at the oldest live tag, if older): every
    read a time-travel table still serves — at an instant inside retention, or at a tag — is at this
    version or above, so rows of versions up to it may be merged."""
    at = now_ms - retention_ms(table, day_s)
    tags = tag_instants_ms(table, now_ms)
    return projection.version_at(table.table_id, partition.partition_id, min([at, *tags[:1]]))


def _base_run(live: list[Rowset], horizon: int | None) -> list[Rowset]:
    """A base compaction's run. Without time travel (`horizon` None): the whole cover. With it: the rowsets
    ending at or below the horizon version, merged (no read needs their versions apart); when fewer than
    two, the rowsets above the one holding the horizon, keeping their versions. That one is left alone,
    so the horizon passes its end within the retention and it settles: history stays bounded."""
    if horizon is None:
        return live
    settled = list(itertools.takewhile(lambda r: r.end_version <= horizon, live))
    if len(settled) >= 2:
        return settled
    rest = live[len(settled):]
    return rest[1:] if rest and rest[0].start_version <= horizon else rest


def _one_tier(run: list[Rowset]) -> list[Rowset]:
    """The longest stretch of the run on a single tier (cooled rowsets are its lower part)."""
    best: list[Rowset] = []
    start = 0
    for i in range(1, len(run) + 1):
        if i == len(run) or run[i].tier != run[start].tier:
            if i - start > len(best):
                best = run[start:i]
            start = i
    return best


def _small_top(live: list[Rowset]) -> list[Rowset]:
    """The run of unpromoted rowsets at the top of a cover (above the base and every promoted one)."""
    start = len(live)
    while start > 0 and live[start - 1].end_version - live[start - 1].start_version + 1 < PROMOTE_SPAN:
        start -= 1
    if start == 0 and live and live[0].start_version == 1:
        start = 1  # the base itself is left to base compaction
    return live[start:]


def due(projection: Projection, table: TableState, partition: PartitionState, bucket: int) -> Kind | None:
    """Which automatic compaction the tablet needs now, scored by its number of live rowsets."""
    live = cover_tablet(projection, table.table_id, partition, bucket, partition.version)
    if len(_one_tier(live)) > BASE_TRIGGER:
        return "base"
    return "cumulative" if len(_one_tier(_small_top(live))) >= CUMULATIVE_TRIGGER else None


@dataclass
class Compactor:
    projection: Projection
    proposer: Proposer
    locator: RowsetLocator
    stores: RemoteStores
    locks: TabletLocks = field(default_factory=TabletLocks)
    # The length of a retention day (`time_travel_day_s`) and the clock the retention horizon is read on.
    day_s: float = 86400.0
    clock: Callable[[], float] = time.time

    def compact(self, cursor: duckdb.DuckDBPyConnection, table: TableState, partition: PartitionState,
                bucket: int, kind: Kind) -> CompactionCommitted | None:
        """Merges the planned run and proposes it; None when there was nothing to merge.

        Raises `CommandFailed` when the sequencer finds the inputs changed meanwhile, `ResourceError`
        when cooled inputs cannot be read or the output cannot be uploaded."""
        with self.locks(table.table_id, partition.partition_id, bucket), self.locator.statement():
            return self._compact(cursor, table, partition, bucket, kind)

    def _compact(self, cursor: duckdb.DuckDBPyConnection, table: TableState, partition: PartitionState,
                 bucket: int, kind: Kind) -> CompactionCommitted | None:
        with self.projection.lock:
            horizon = horizon_version(self.projection, table, partition, int(self.clock() * 1000), self.day_s) \
                if table.time_travel else None
            inputs = plan(self.projection, table, partition, bucket, kind, horizon)
            deletes = delete_rules(partition, self.projection, table)
        if not inputs:
            return None
        # Rows no read inside retention tells apart by version are merged; the others keep theirs.
        keep = keeps_versions_possible(table, partition, inputs) and not (
            horizon is not None and inputs[-1].end_version <= horizon)
        paths = self.locator.locate_many(inputs)
        files = [rowset_file(table, r, lambda r: paths[r.rowset_id]) for r in inputs]
        defined = column_definitions(table)
        wanted = set().union(*(f.column_ids for f in files))
        current = [c for c in table.schema_now.columns if c.unique_id in wanted]
        dropped = [defined[i] for i in sorted(wanted - {c.unique_id for c in current}) if i in defined]
        spec = MergeSpec(keys_model=table.keys_model, columns=(*current, *dropped),
                         delete_sign=table.keys_model == "UNIQUE", sequence=table.sequence_column())
        tier = inputs[0].tier
        resource = resource_of(tier)
        # Cooled inputs: the merged file is written hot, uploaded, and committed as remote.
        write_tier = "ssd" if resource is not None else tier
        tiers = self.locator.tiers
        merged = compact_files(cursor, tiers.root(write_tier), table.table_id, partition.partition_id, bucket, spec,
                               files, deletes, base=kind == "base" and inputs[0].start_version == 1, keep_versions=keep,
                               codec=table.rowset_codec)
        local = tiers.locate(write_tier, merged.written.path)
        if resource is not None:
            try:
                self.stores(resource).upload(local, merged.written.path, merged.written.checksum)
            finally:
                local.unlink(missing_ok=True)
        output = NewRowset(rowset_id=merged.written.rowset_id, partition_id=partition.partition_id, bucket=bucket,
                           num_rows=merged.written.num_rows, size_bytes=merged.written.size_bytes,
                           path=merged.written.path, tier=tier, schema_version=table.schema_now.schema_version,
                           checksum=merged.written.checksum)
        try:
            event = self.proposer.propose(cmd.CommitCompaction(
                table_id=table.table_id, partition_id=partition.partition_id, bucket=bucket, kind=kind,
                input_rowset_ids=tuple(r.rowset_id for r in inputs), output=output,
                start_version=merged.start_version, end_version=merged.end_version,
                column_ids=merged.column_ids, keeps_versions=keep), table_id=table.table_id).payload
        except CommandFailed:
            # Refused (the inputs changed meanwhile): the file was never named by the log.
            if resource is not None:
                self.stores(resource).remove(output.path)
            else:
                local.unlink(missing_ok=True)
            raise
        assert isinstance(event, CompactionCommitted)
        return event
