"""Snapshot resolution (DESIGN §8 steps 1–2): which version of each partition, which rowsets.

`resolve` works the same for the latest state and for a past instant: per partition, the version
visible at T comes from one `seek_for_prev` on the version index, and the rowsets are the cover
of [1, V] by the fewest, largest rowsets.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from functools import lru_cache

from projections import keys
from projections.merge_on_write import enabled as merge_on_write_enabled
from projections.merge_on_write import read_plan
from projections.projection import Projection
from projections.state import DeleteRecord, PartitionState, RowsetRecord, SchemaAt, TableState, unmask
from schemas.model import Rowset, TableSchema


@dataclass(frozen=True)
class PartitionSnapshot:
    partition_id: int
    name: str
    version: int
    rowsets: tuple[Rowset, ...]
    deletes: tuple[DeleteRecord, ...]
    # Merge-on-write Unique Key: per bucket read merge-on-write, the delete bitmap files (relative to
    # the ssd tier root) the read subtracts; a bucket left out is merged on read.
    bitmaps: Mapping[int, tuple[str, ...]] = field(default_factory=dict)


@dataclass(frozen=True)
class Snapshot:
    table: TableState
    schema: TableSchema
    # Every schema up to the snapshot's, so rows written under older ones can be projected.
    schema_history: tuple[SchemaAt, ...]
    partitions: tuple[PartitionSnapshot, ...]
    ts_ms: int | None

    @property
    def rowsets(self) -> list[Rowset]:
        return [r for p in self.partitions for r in p.rowsets]


def cover_tablet(projection: Projection, table_id: int, partition: PartitionState, bucket: int,
                 version: int) -> list[Rowset]:
    """The cover of one tablet at `version`, walked top-down with one seek per rowset it uses.

    Each step takes the widest version-keeping rowset whose range holds the version still to cover
    (`Rowset.keeps_versions`; they nest, as compactions merge runs of a cover), read through that
    version (`Rowset.read_through`); else it lands on the widest rowset among those ending last at or
    before that version (the key order of `keys.rowset_key`). Then it continues below the rowset's
    start. Ranges hidden by a RESTORE in force at `version` are jumped over. The cost depends on the
    cover's size, not on how many commits or stale rowsets the tablet has."""
    chosen: list[Rowset] = []
    prefix = keys.tablet_prefix(table_id, partition.partition_id, bucket)
    # No version-keeping rowset ends above this one: the steps at or above it need not look for one.
    # A walk from the latest version over single commits piled on a base never does, one seek per step.
    keeping_top = _keeping_top(projection, table_id, partition.partition_id, bucket)
    current, limit, floor = unmask(version, partition.masks, version)
    while current >= 1:
        rowset = _keeping_around(projection, table_id, partition.partition_id, bucket, current, floor) \
            if current < keeping_top else None
        if rowset is None:
            found = projection.store.seek_for_prev(keys.cover_seek_key(prefix, current), prefix)
            rowset = _rowset_of(found[1]) if found else None
        if rowset is None or rowset.end_version <= floor:
            if floor == 0:
                break
            # Nothing more in this visible segment: continue below the restore that opened it.
            current, limit, floor = unmask(floor, partition.masks, limit)
            continue
        chosen.append(rowset)
        current, limit, floor = unmask(rowset.start_version - 1, partition.masks, limit)
    chosen.reverse()
    return chosen


def _keeping_top(projection: Projection, table_id: int, partition_id: int, bucket: int) -> int:
    """The highest end version of the tablet's version-keeping rowsets (live or stale), 0 if none: the
    index's last key (`keys.keeping_key` orders by end version)."""
    prefix = keys.keeping_prefix(table_id, partition_id, bucket)
    last = projection.store.seek_for_prev(prefix + b"\xff", prefix)
    return 0 if last is None else keys.keeping_range_of(last[0], prefix)[1]


@lru_cache(maxsize=2048)  # ~2 KB each (bytes and model): a few MB
def _rowset_of(record: bytes) -> Rowset:
    """The rowset of a stored `RowsetRecord`. Walks decode the same records again and again (every
    compaction plan and check walks the tablet's whole cover, a few hundred rowsets when single-row
    commits pile up); a record's bytes decode to one frozen Rowset, so the decoding is cached by them."""
    return RowsetRecord.model_validate_json(record).rowset


def _keeping_around(projection: Projection, table_id: int, partition_id: int, bucket: int, version: int,
                    floor: int) -> Rowset | None:
    """The widest version-keeping rowset of the tablet starting in (floor, version] and ending above
    `version`, read through `version`; None if there is none. Its range and key come from the index
    (`keys.keeping_key`): only the one taken is decoded. A latest read (nothing ends above it) costs one seek."""
    prefix = keys.keeping_prefix(table_id, partition_id, bucket)
    widest: tuple[int, int, bytes] | None = None
    for key, rowset_key in projection.store.scan(prefix, keys.keeping_seek_key(table_id, partition_id, bucket,
                                                                                version)):
        start, end = keys.keeping_range_of(key, prefix)
        if floor < start <= version and (widest is None or (start, -end) < widest[:2]):
            widest = (start, -end, rowset_key)
    raw = projection.store.get(widest[2]) if widest is not None else None
    if raw is None:
        return None
    rowset = _rowset_of(raw)
    through = version if rowset.read_through is None else min(version, rowset.read_through)
    return rowset.model_copy(update={"read_through": through})


def keeps_versions_possible(table: TableState, partition: PartitionState, run: Sequence[Rowset]) -> bool:
    """Whether a compaction of `run` (a contiguous run of a tablet's live rowsets) may keep every row with
    its version: on a time-travel table, when each input does (one version, or version-keeping itself,
    read whole) and no RESTORE hides versions inside the run's range (its rows would not be that range's
    history). Not on a merge-on-write Unique Key table: its reads subtract delete bitmaps naming rows of
    merged outputs, which an unmerged output would turn into reads merged by key (projections.merge_on_write)."""
    if not table.time_travel or merge_on_write_enabled(table) or not run:
        return False
    start, end = run[0].start_version, run[-1].end_version
    if any(low < end and high >= start for low, high in partition.masks):
        return False
    return all((r.start_version == r.end_version or r.keeps_versions) and r.read_through is None for r in run)


def visible_deletes(projection: Projection, table_id: int, partition: PartitionState,
                    version: int) -> tuple[DeleteRecord, ...]:
    return tuple(d for d in projection.deletes(table_id, partition.partition_id)
                 if d.version <= version and unmask(d.version, partition.masks, version)[0] == d.version)


def resolve(projection: Projection, table: TableState, ts_ms: int | None = None) -> Snapshot:
    """The table as of `ts_ms` (None: latest): per partition one version-index seek, then the
    cover walk of each tablet."""
    with projection.lock:
        # The newest state of the table, as the lock holds the fold still: the caller's copy may be
        # from before the last batch (states are replaced, never changed: projections.projection).
        table = projection.tables.get(table.table_id, table)
        if ts_ms is None:
            partitions = [(p, p.version) for p in table.live_partitions()]
            schema_history = tuple(table.schemas)
        else:
            partitions = [(p, projection.version_at(table.table_id, p.partition_id, ts_ms))
                          for p in table.partitions.values()
                          if p.created_ts_ms <= ts_ms and (p.dropped_ts_ms is None or p.dropped_ts_ms > ts_ms)]
            schema_history = tuple(s for s in table.schemas if s.ts_ms <= ts_ms)
        result = []
        for partition, version in sorted(partitions, key=lambda pv: pv[0].partition_id):
            covers = {bucket: cover_tablet(projection, table.table_id, partition, bucket, version)
                      for bucket in range(partition.partition.buckets)}
            rowsets = tuple(r for cover in covers.values() for r in cover)
            deletes = visible_deletes(projection, table.table_id, partition, version)
            bitmaps = read_plan(projection, table, partition, version, covers, deletes)
            result.append(PartitionSnapshot(partition.partition_id, partition.name, version, rowsets, deletes,
                                            bitmaps))
        return Snapshot(table=table, schema=schema_history[-1].table_schema,
                        schema_history=schema_history, partitions=tuple(result), ts_ms=ts_ms)
