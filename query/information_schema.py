"""`information_schema` tables, built from the catalog replica as Arrow tables on each query."""

from __future__ import annotations

from collections.abc import Callable
from datetime import UTC, datetime

import pyarrow as pa

from projections.state import TableState
from query import access
from query.context import Context, SessionState, SqlFailure
from schemas.errors import ErrorCode


def _ts(ms: int | None) -> datetime | None:
    return None if ms is None else datetime.fromtimestamp(ms / 1000, tz=UTC).replace(tzinfo=None)


def _schemata(ctx: Context) -> pa.Table:
    dbs = sorted(d.name for d in ctx.projection.databases.values() if d.dropped_ts_ms is None)
    names = ["information_schema", *dbs]
    return pa.table({"CATALOG_NAME": ["internal"] * len(names), "SCHEMA_NAME": names,
                     "DEFAULT_CHARACTER_SET_NAME": ["utf8mb4"] * len(names)})


def _live_tables(ctx: Context) -> list[tuple[str, TableState]]:
    dbs = {d.db_id: d.name for d in ctx.projection.databases.values() if d.dropped_ts_ms is None}
    return [(dbs[t.db_id], t) for t in ctx.projection.tables.values()
            if t.dropped_ts_ms is None and t.db_id in dbs]


def _tables(ctx: Context) -> pa.Table:
    rows: dict[str, list[object]] = {k: [] for k in (
        "TABLE_CATALOG", "TABLE_SCHEMA", "TABLE_NAME", "TABLE_TYPE", "ENGINE", "TABLE_ROWS", "CREATE_TIME",
        "UPDATE_TIME", "TABLE_COMMENT")}
    for db, t in _live_tables(ctx):
        rows["TABLE_CATALOG"].append("internal")
        rows["TABLE_SCHEMA"].append(db)
        rows["TABLE_NAME"].append(t.name)
        rows["TABLE_TYPE"].append("BASE TABLE")
        rows["ENGINE"].append("Doris")
        rows["TABLE_ROWS"].append(sum(r.rowset.num_rows for r in ctx.projection.rowset_records(
            t.table_id) if r.stale_ts_ms is None))
        rows["CREATE_TIME"].append(_ts(t.created_ts_ms))
        rows["UPDATE_TIME"].append(_ts(t.last_commit_ts_ms))
        rows["TABLE_COMMENT"].append(t.comment)
    return pa.table(rows)


# information_schema.columns' COLUMN_KEY of a key column, by keys model (as Doris shows it).
_KEY_KIND = {"DUPLICATE": "DUP", "UNIQUE": "UNI", "AGGREGATE": "AGG"}


def _columns(ctx: Context) -> pa.Table:
    rows: dict[str, list[object]] = {k: [] for k in (
        "TABLE_CATALOG", "TABLE_SCHEMA", "TABLE_NAME", "COLUMN_NAME", "ORDINAL_POSITION", "COLUMN_DEFAULT",
        "IS_NULLABLE", "DATA_TYPE", "COLUMN_TYPE", "COLUMN_KEY", "COLUMN_COMMENT")}
    for db, table in _live_tables(ctx):
        for i, c in enumerate(table.schema_now.columns, start=1):
            rows["TABLE_CATALOG"].append("internal")
            rows["TABLE_SCHEMA"].append(db)
            rows["TABLE_NAME"].append(table.name)
            rows["COLUMN_NAME"].append(c.name)
            rows["ORDINAL_POSITION"].append(i)
            rows["COLUMN_DEFAULT"].append(c.default)
            rows["IS_NULLABLE"].append("YES" if c.nullable else "NO")
            rows["DATA_TYPE"].append(c.type.split("(")[0].lower())
            rows["COLUMN_TYPE"].append(c.type.lower())
            rows["COLUMN_KEY"].append(_KEY_KIND[table.keys_model] if c.is_key else "")
            rows["COLUMN_COMMENT"].append(c.comment)
    return pa.table(rows)


def _rowsets(ctx: Context) -> pa.Table:
    """Doris' `information_schema.rowsets` columns, plus where each rowset is and whether it is live."""
    rows: dict[str, list[object]] = {k: [] for k in (
        "BACKEND_ID", "ROWSET_ID", "TABLET_ID", "ROWSET_NUM_ROWS", "TXN_ID", "NUM_SEGMENTS", "START_VERSION",
        "END_VERSION", "INDEX_DISK_SIZE", "DATA_DISK_SIZE", "CREATION_TIME", "NEWEST_WRITE_TIMESTAMP",
        "TABLE_SCHEMA", "TABLE_NAME", "PARTITION_NAME", "STATE", "TIER", "SCHEMA_VERSION", "STALE_TIME")}
    for db, table in _live_tables(ctx):
        names = {p.partition_id: p.name for p in table.partitions.values()}
        dropped = {p.partition_id: p.dropped_ts_ms for p in table.partitions.values() if p.dropped_ts_ms is not None}
        for record in ctx.projection.rowset_records(table.table_id):
            r = record.rowset
            # A dropped partition's rowsets are kept only for time travel, like compacted ones: stale
            # since the drop (the latest state no longer reads them, and tiering leaves them be).
            stale_ts_ms = record.stale_ts_ms if record.stale_ts_ms is not None else dropped.get(r.partition_id)
            rows["BACKEND_ID"].append(0)
            rows["ROWSET_ID"].append(r.rowset_id)
            rows["TABLET_ID"].append(r.partition_id * 1000 + r.bucket)
            rows["ROWSET_NUM_ROWS"].append(r.num_rows)
            rows["TXN_ID"].append(r.end_version)
            rows["NUM_SEGMENTS"].append(1)
            rows["START_VERSION"].append(r.start_version)
            rows["END_VERSION"].append(r.end_version)
            rows["INDEX_DISK_SIZE"].append(0)
            rows["DATA_DISK_SIZE"].append(r.size_bytes)
            rows["CREATION_TIME"].append(_ts(r.visible_ts_ms))
            rows["NEWEST_WRITE_TIMESTAMP"].append(_ts(r.written_ts_ms))
            rows["TABLE_SCHEMA"].append(db)
            rows["TABLE_NAME"].append(table.name)
            rows["PARTITION_NAME"].append(names.get(r.partition_id, ""))
            rows["STATE"].append("stale" if stale_ts_ms is not None else "visible")
            rows["TIER"].append(r.tier)
            rows["SCHEMA_VERSION"].append(r.schema_version)
            rows["STALE_TIME"].append(_ts(stale_ts_ms))
    schema = pa.schema([(k, pa.timestamp("ms") if k in ("CREATION_TIME", "NEWEST_WRITE_TIMESTAMP", "STALE_TIME")
                         else pa.string() if k in ("ROWSET_ID", "TABLE_SCHEMA", "TABLE_NAME", "PARTITION_NAME",
                                                   "STATE", "TIER") else pa.int64()) for k in rows])
    return pa.table(rows, schema=schema)


_TABLES: dict[str, Callable[[Context], pa.Table]] = {
    "schemata": _schemata, "tables": _tables, "columns": _columns, "rowsets": _rowsets,
}


def table(ctx: Context, session: SessionState, name: str) -> pa.Table:
    builder = _TABLES.get(name.lower())
    if builder is None:
        raise SqlFailure(ErrorCode.NO_SUCH_TABLE, f"Table 'information_schema.{name}' doesn't exist; "
                                                  f"available: {', '.join(names())}")
    return access.visible(ctx, session, builder(ctx))


def names() -> list[str]:
    return sorted(_TABLES)
