"""Merge-on-write Unique Key tables (Doris' default, `enable_unique_key_merge_on_write`): which delete
bitmaps a read applies (projections.superseded computes them).

A commit's bitmap (storage.delete_bitmaps) marks, per tablet it wrote, every row of the keys it wrote
that is not the key's winner against the cover below the commit — the winner chosen exactly as the
merge-on-read merge chooses it. So a read is the same with or without bitmaps: a bitmap is an index,
and a tablet whose bitmaps this module cannot prove complete and exact is read merge-on-read. That
keeps every instant's answer unchanged (time travel, compaction, restore, clones) whatever the order
in which bitmaps reach the log. A tablet at version V is read merge-on-write when:

- the table is a merge-on-write Unique Key table whose keys decide the tablet of a row (partition and
  distribution columns are keys), and the partition has no RESTORE/OVERWRITE mask;
- every commit in (B, V] has its bitmap, B being the end of the tablet's base compaction output (the
  bottom of its cover, merged over [1, B]: every bitmap below B is already applied in it);
- no delete predicate above B (a predicate removing a winner would let merge-on-read bring back the
  row it superseded);
- each bitmap names rowsets of the cover, or rowsets a compaction output of the cover replaced whose
  range holds the bitmap's version (that output's merge dropped those rows already). A bitmap naming
  rowsets a compaction replaced before reaching its version — computed while the compaction committed
  — cannot be applied to the output;
- on a table with a sequence column, the cover has no cumulative compaction output: its merge keeps a
  key's winner of its own run even where an older row of a higher sequence value outranks it;
- the cover has no version-keeping compaction output (a time-travel table's): it holds every row of its
  inputs unmerged, at positions no bitmap names.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from typing import TYPE_CHECKING

from projections.state import DeleteBitmapRecord, DeleteRecord, PartitionState, TableState
from schemas.model import Rowset

if TYPE_CHECKING:
    from projections.projection import Projection

PROPERTY = "enable_unique_key_merge_on_write"
# Where bitmap files live: the local tier every worker and reader has (paths in TabletBitmap are
# relative to its root).
BITMAP_TIER = "ssd"


def enabled(table: TableState) -> bool:
    """Whether the table keeps delete bitmaps: a Unique Key table not created with the property
    `false` (Doris' default is true), whose keys alone decide each row's tablet."""
    if table.keys_model != "UNIQUE" or table.properties.get(PROPERTY, "true").lower() == "false":
        return False
    keys = {c.name.lower() for c in table.schema_now.columns if c.is_key}
    routed_by = {c.lower() for c in (*table.distribution.columns, *table.partition_columns)}
    return table.distribution.kind == "HASH" and routed_by <= keys


def _compacted(rowset: Rowset) -> bool:
    return rowset.start_version != rowset.end_version


def _base_end(cover: Sequence[Rowset]) -> int:
    """B: the versions a base compaction output at the bottom of the cover already merged."""
    return cover[0].end_version if cover and cover[0].start_version == 1 and _compacted(cover[0]) else 0


def applied_bitmaps(bucket: int, cover: Sequence[Rowset], version: int, sequenced: bool,
                    deletes: Sequence[DeleteRecord],
                    bitmaps: Mapping[int, DeleteBitmapRecord]) -> tuple[str, ...] | None:
    """The bitmap paths one tablet's merge-on-write read at `version` subtracts; None: read it merge-on-read."""
    if sequenced and any(_compacted(r) and r.start_version > 1 for r in cover):
        return None
    if any(r.keeps_versions for r in cover):
        return None  # its rows are unmerged and at positions no bitmap names
    base = _base_end(cover)
    if any(d.predicate is not None and d.version > base for d in deletes):
        return None
    removals = {d.version for d in deletes}
    in_cover = {r.rowset_id for r in cover}
    paths = []
    for v in range(base + 1, version + 1):
        if v in removals:
            continue
        record = bitmaps.get(v)
        if record is None:
            return None
        tablet = next((t for t in record.tablets if t.bucket == bucket), None)
        if tablet is None:
            continue  # the commit wrote no row of this tablet
        for target in tablet.targets:
            if target.rowset_id in in_cover:
                continue
            holder = next((r for r in cover if r.start_version <= target.start_version
                           and target.end_version <= r.end_version), None)
            if holder is None or v > holder.end_version:
                return None
        if tablet.path is not None:
            paths.append(tablet.path)
    return tuple(paths)


def read_plan(projection: Projection, table: TableState, partition: PartitionState, version: int,
              covers: Mapping[int, Sequence[Rowset]], deletes: Sequence[DeleteRecord]) -> dict[int, tuple[str, ...]]:
    """Per bucket read merge-on-write at `version`, the bitmap paths to subtract (relative to the
    `BITMAP_TIER` root); buckets left out are read merge-on-read. Called under the projection's lock."""
    if not enabled(table) or not version or partition.masks:
        return {}
    lowest = min((_base_end(c) for c in covers.values()), default=0)
    records = {r.version: r for r in projection.delete_bitmaps(table.table_id, partition.partition_id, lowest, version)}
    sequenced = table.sequence_column() is not None
    plan = {}
    for bucket, cover in covers.items():
        applied = applied_bitmaps(bucket, cover, version, sequenced, deletes, records)
        if applied is not None:
            plan[bucket] = applied
    return plan
