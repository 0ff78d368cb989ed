"""A commit's delete bitmaps (merge-on-write Unique Key, see projections.merge_on_write): per tablet
the commit wrote, the rows of its keys that are not the key's winner against the cover below it,
computed by the worker once the commit is on the log (so against exactly the rowsets it builds on)."""

from __future__ import annotations

from collections.abc import Callable, Sequence

import duckdb
import pyarrow as pa

from projections.compaction import column_definitions, rowset_file
from projections.merge_on_write import BITMAP_TIER, enabled
from projections.projection import Projection
from projections.snapshot import cover_tablet, visible_deletes
from projections.state import DeleteBitmapRecord
from schemas import commands as cmd
from schemas.model import BitmapTarget, Rowset, TabletBitmap
from storage.delete_bitmaps import bitmap_path, superseded_rows_sql, write_bitmap
from storage.locator import RowsetLocator
from storage.rowset_sql import DeleteRule, MergeSpec


def _locate(located: dict[str, str]) -> Callable[[Rowset], str]:
    return lambda rowset: located[rowset.rowset_id]


def bitmaps_command(cursor: duckdb.DuckDBPyConnection, projection: Projection, locator: RowsetLocator,
                    table_id: int, partition_id: int, version: int, written: Sequence[Rowset], *,
                    replacing: DeleteBitmapRecord | None = None) -> cmd.CommitDeleteBitmaps | None:
    """The bitmaps of the commit at `version` that wrote `written` (the partition's rowsets of it),
    computed against each tablet's cover at version - 1 and written durably; None when the table keeps
    none (merge-on-read, restored partition) or the version has them already.

    `replacing`: the version's bitmaps, some of whose tablets named rowsets a compaction replaced since;
    `written` are those tablets' rowsets of the version, computed again (the other tablets' are kept)."""
    with projection.lock:
        table = projection.tables.get(table_id)
        partition = table.partitions.get(partition_id) if table is not None else None
        if table is None or partition is None or not enabled(table) or partition.masks or \
                (replacing is None and projection.delete_bitmaps(table_id, partition_id, version - 1, version)):
            return None
        buckets = {r.bucket for r in written}
        if any(r.start_version < version <= r.end_version for b in buckets
               for r in cover_tablet(projection, table_id, partition, b, partition.version)):
            # A compaction merged this version with older ones before its bitmap was computed: the rowsets
            # below it may be recycled already (the cover below the version would have gaps). Its tablet
            # is read merge-on-read until a base compaction over this version.
            return None
        covers = {b: cover_tablet(projection, table_id, partition, b, version - 1) for b in buckets}
        deletes = [DeleteRule(d.partition_id, d.version, d.predicate)
                   for d in visible_deletes(projection, table_id, partition, version - 1)]
    keys = tuple(c for c in table.schema_now.columns if c.is_key)
    sequence = table.sequence_column()
    # Every column a delete predicate may name, dropped ones too (the read prunes those unused).
    extra = tuple(c for c in column_definitions(table).values() if not c.is_key and c != sequence)
    spec = MergeSpec(keys_model="UNIQUE", columns=keys, extra_columns=extra, delete_sign=True, sequence=sequence)
    root = locator.tiers.root(BITMAP_TIER)
    tablets = []
    for rowset in sorted(written, key=lambda r: r.bucket):
        rowsets = [*covers[rowset.bucket], rowset]
        located = locator.locate_many(rowsets)
        files = [rowset_file(table, r, _locate(located)) for r in rowsets]
        found: pa.Table = cursor.execute(superseded_rows_sql(spec, files, deletes)).to_arrow_table()
        if not found.num_rows:
            tablets.append(TabletBitmap(bucket=rowset.bucket))
            continue
        ids = [r.rowset_id for r in rowsets]
        marked = sorted(set(found["__file"].to_pylist()))
        pairs = pa.table({"rowset_id": pa.array([ids[i] for i in found["__file"].to_pylist()], pa.string()),
                          "row": found["__row"].cast(pa.int64())})
        path = bitmap_path(table_id, partition_id, rowset.bucket, version)
        write_bitmap(root, path, pairs.sort_by([("rowset_id", "ascending"), ("row", "ascending")]))
        targets = tuple(BitmapTarget(rowset_id=rowsets[i].rowset_id, start_version=rowsets[i].start_version,
                                     end_version=rowsets[i].end_version) for i in marked)
        tablets.append(TabletBitmap(bucket=rowset.bucket, path=path, rows=found.num_rows, targets=targets))
    if replacing is not None:
        kept = [t for t in replacing.tablets if t.bucket not in {r.bucket for r in written}]
        tablets = sorted([*kept, *tablets], key=lambda t: t.bucket)
    return cmd.CommitDeleteBitmaps(table_id=table_id, partition_id=partition_id, version=version,
                                   tablets=tuple(tablets), replace=replacing is not None)


def stale_bitmaps(projection: Projection, table_id: int, partition_id: int,
                  above: int) -> list[tuple[DeleteBitmapRecord, tuple[Rowset, ...]]]:
    """The bitmaps of versions above `above` (a compaction's end) naming rowsets that are no longer live,
    each with the rowsets of its version of the tablets to compute again (every tablet of it whose
    bitmap names such a rowset: a replacement keeps only live names); under the projection's lock."""
    table = projection.tables.get(table_id)
    partition = table.partitions.get(partition_id) if table is not None else None
    if table is None or partition is None or not enabled(table):
        return []
    live: dict[int, list[Rowset]] = {}
    found = []
    for record in projection.delete_bitmaps(table_id, partition_id, above, partition.version):
        again = []
        for tablet in record.tablets:
            if tablet.bucket not in live:
                live[tablet.bucket] = cover_tablet(projection, table_id, partition, tablet.bucket, partition.version)
            cover = {r.rowset_id: r for r in live[tablet.bucket]}
            written = next((r for r in cover.values() if r.start_version == r.end_version == record.version), None)
            if written is not None and any(t.rowset_id not in cover for t in tablet.targets):
                again.append(written)
        if again:
            found.append((record, tuple(again)))
    return found
