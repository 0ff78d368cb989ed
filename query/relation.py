"""A snapshot as DuckDB SQL (DESIGN §8 step 3): its rowsets, deletes and schema handed to the
shared builder in `storage.rowset_sql`, which reads, projects, filters and merges by keys model."""

from __future__ import annotations

import sqlglot
from sqlglot import exp

from projections.compaction import column_definitions, rowset_file
from projections.merge_on_write import BITMAP_TIER
from projections.snapshot import Snapshot
from query.doris_variables import PLAIN_READ, ReadOptions
from query.superseded_positions import PositionsSql
from schemas.model import DELETE_SIGN_COLUMN, SEQUENCE_COLUMN, VERSION_COLUMN, Column, TableSchema
from storage.delete_bitmaps import checked_bitmap_path, superseded_sql
from storage.locator import RowsetLocator
from storage.rowset_sql import (
    DeleteRule,
    MergeSpec,
    RowsetFile,
    default_sql,
    duck_type,
    quote_ident,
    quote_literal,
    read_type,
    table_rows_sql,
)

__all__ = ["default_sql", "duck_type", "quote_ident", "quote_literal", "read_type", "snapshot_sql"]


def _dropped_since(schema: TableSchema, defined: dict[int, Column], deletes: list[DeleteRule]) -> list[Column]:
    """Columns a delete predicate names (as `c<id>`) that the schema in force no longer has: the
    rows the delete covers still need them, as they were when the delete was committed."""
    named = {int(c.name[1:]) for d in deletes if d.predicate
             for c in sqlglot.parse_one(d.predicate, read="duckdb").find_all(exp.Column)
             if c.name[:1] == "c" and c.name[1:].isdigit()}
    named -= {c.unique_id for c in schema.columns}
    return [defined[i] for i in sorted(named) if i in defined]


def _merged_rows_sql(snapshot: Snapshot, locator: RowsetLocator, spec: MergeSpec, files: list[RowsetFile],
                     deletes: list[DeleteRule], positions: PositionsSql) -> str:
    """`table_rows_sql` over the snapshot's files; on a merge-on-write Unique Key table, the tablets whose
    delete bitmaps apply (projections.merge_on_write) subtract them (the positions' SQL from
    `positions`) and the others merge by key — the same rows either way, as a key's rows are all in
    one tablet."""
    on_write = {(p.partition_id, bucket): paths for p in snapshot.partitions for bucket, paths in p.bitmaps.items()}
    if not on_write or not spec.merge:
        return table_rows_sql(spec, files, deletes)
    rowsets = snapshot.rowsets
    written = [i for i, r in enumerate(rowsets) if (r.partition_id, r.bucket) in on_write]
    merged = [i for i, r in enumerate(rowsets) if (r.partition_id, r.bucket) not in on_write]
    root = locator.tiers.root(BITMAP_TIER)
    bitmaps = [str(root / checked_bitmap_path(path, snapshot.table.table_id, partition_id, bucket))
               for (partition_id, bucket), paths in on_write.items() for path in paths]
    superseded = positions(bitmaps, {rowsets[i].rowset_id: n for n, i in enumerate(written)})
    parts = [table_rows_sql(spec, [files[i] for i in written], deletes, superseded=superseded)]
    if merged:
        parts.append(table_rows_sql(spec, [files[i] for i in merged], deletes))
    return " UNION ALL ".join(f"({part})" for part in parts)


def snapshot_sql(snapshot: Snapshot, locator: RowsetLocator, options: ReadOptions = PLAIN_READ,
                 positions: PositionsSql = superseded_sql) -> str:
    """SELECT returning the table's visible rows at the snapshot, columns named as the user sees them;
    `options`, the session's Doris read options, may keep deleted rows or skip merging by key. With
    `options.show_hidden` (show_hidden_columns), Doris' hidden columns too, and the rows of a Unique
    Key table whose newest load deleted them (with __DORIS_DELETE_SIGN__ = 1), as Doris shows.
    `positions`: how a merge-on-write read gets the positions its delete bitmaps mark (by default read
    from the bitmap files; a query's cursor reads them from `query.superseded_positions`' cache).

    Cold rowsets are fetched into the file cache first (in parallel), so the SQL names local files."""
    table = snapshot.table
    paths = locator.locate_many(snapshot.rowsets)
    files = [rowset_file(table, r, lambda r: paths[r.rowset_id]) for r in snapshot.rowsets]
    deletes = [DeleteRule(p.partition_id, d.version, d.predicate) for p in snapshot.partitions for d in p.deletes
               if options.delete_predicates or d.predicate is None]  # TRUNCATE is no delete predicate
    show_hidden = options.show_hidden
    schema = snapshot.schema
    visible = schema.visible_columns
    hidden = tuple(c for c in schema.columns if c not in visible) if show_hidden else ()
    spec = MergeSpec(keys_model=table.keys_model, columns=(*visible, *hidden),
                     extra_columns=tuple(_dropped_since(schema, column_definitions(table), deletes)),
                     delete_sign=table.keys_model == "UNIQUE", sequence=table.sequence_column(schema),
                     show_hidden=show_hidden, merge=options.merge, hide_delete_signs=options.delete_signs)
    rows = _merged_rows_sql(snapshot, locator, spec, files, deletes, positions)
    if not show_hidden or table.keys_model != "UNIQUE":
        return rows
    # Doris' order: the table's columns, the delete sign and version, then the sequence column (a
    # `sequence_col` table shows the column it names under the hidden name too).
    hidden_names = [quote_ident(c.name) for c in hidden]
    if spec.sequence is not None and spec.sequence in visible:
        hidden_names.append(f"{quote_ident(spec.sequence.name)} AS {quote_ident(SEQUENCE_COLUMN)}")
    signs = [quote_ident(DELETE_SIGN_COLUMN), quote_ident(VERSION_COLUMN)]
    selected = [*(quote_ident(c.name) for c in visible), *signs, *hidden_names]
    return f"SELECT {', '.join(selected)} FROM ({rows})"
