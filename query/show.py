"""SHOW statements and DESC, answered from the catalog replica in Doris' shapes."""

from __future__ import annotations

from datetime import UTC, datetime

from projections.merge_on_write import PROPERTY as MERGE_ON_WRITE_PROPERTY
from projections.state import TableState
from query import information_schema, show_filter, views
from query.catalog_facts import COLLATION, ENGINE
from query.context import Context, Rows, SessionState, SqlFailure
from query.doris_variables import session_flag
from query.information_schema import type_text as _type_text
from query.parser import statements as st
from schemas.errors import ErrorCode
from schemas.model import DELETE_SIGN_COLUMN, SEQUENCE_COLUMN, VERSION_COLUMN, Column, PartitionBound


def show_databases(ctx: Context, session: SessionState, s: st.ShowDatabases) -> Rows:
    names = sorted(d.name for d in ctx.projection.databases.values() if d.dropped_ts_ms is None)
    return show_filter.apply(ctx, Rows(["Database"], [(n,) for n in ["information_schema", *names]]), s.like, s.where)


def show_tables(ctx: Context, session: SessionState, s: st.ShowTables) -> Rows:
    if (s.db or session.database or "").lower() == "information_schema":
        db_name, names = "information_schema", information_schema.names()
        kinds = dict.fromkeys(names, "SYSTEM VIEW")
    else:
        db_id, db_name = ctx.database_id(session, s.db)
        kinds = {t.name: "BASE TABLE" for t in ctx.projection.tables_of(db_id)}
        kinds.update({v.name: "VIEW" for v in ctx.projection.views_of(db_id)})
    ordered = sorted(kinds.items())
    if s.full:
        found = Rows([f"Tables_in_{db_name}", "Table_type"], ordered)
    else:
        found = Rows([f"Tables_in_{db_name}"], [(n,) for n, _ in ordered])
    return show_filter.apply(ctx, found, s.like, s.where)


def show_table_status(ctx: Context, session: SessionState, s: st.ShowTableStatus) -> Rows:
    """MySQL's 18 columns (Doris answers the same): sizes and counts from the live rowsets."""
    db_id, _ = ctx.database_id(session, s.db)
    rows: list[tuple[object, ...]] = []
    for table in ctx.projection.tables_of(db_id):
        if not show_filter.like(s.like, table.name):  # no size (a scan of its rowsets) for a table LIKE drops
            continue
        live_rows, data_bytes = information_schema.table_size(ctx, table)
        rows.append((table.name, ENGINE, 10, "Dynamic", live_rows, data_bytes // live_rows if live_rows else 0,
                     data_bytes, 0, 0, 0, None, information_schema.table_time(table.created_ts_ms),
                     information_schema.table_time(table.last_commit_ts_ms), None, COLLATION, None, "",
                     table.comment))
    for view in ctx.projection.views_of(db_id):  # MySQL's row of a view: no engine or sizes, Comment VIEW
        rows.append((view.name, *([None] * 16), "VIEW"))
    rows.sort(key=lambda r: str(r[0]))
    return show_filter.apply(ctx, Rows(
        ["Name", "Engine", "Version", "Row_format", "Rows", "Avg_row_length", "Data_length", "Max_data_length",
         "Index_length", "Data_free", "Auto_increment", "Create_time", "Update_time", "Check_time", "Collation",
         "Checksum", "Create_options", "Comment"], rows), s.like, s.where)


def show_columns(ctx: Context, session: SessionState, s: st.ShowColumns) -> Rows:
    """Doris' SHOW [FULL] COLUMNS: MySQL's columns, Null YES/NO, Key YES for the table's key columns."""
    rows: list[tuple[object, ...]] = []
    db = "information_schema" if information_schema.is_information_schema(session, s.table.db) else \
        ctx.database_id(session, s.table.db)[1]
    privileges = information_schema.column_privileges(ctx, session, db, s.table.name)
    for c in _columns_of(ctx, session, s.table):
        facts = information_schema.column_facts(c.type)
        key = "YES" if c.is_key else "NO"
        nullable = "YES" if c.nullable else "NO"
        shown = _type_text(c.type)  # BOOLEAN is `boolean`, as Doris says it (the Doris SQLAlchemy dialect reads it)
        if s.full:
            rows.append((c.name, shown, facts.collation, nullable, key, c.default, _extra(c), privileges, c.comment))
        else:
            rows.append((c.name, shown, nullable, key, c.default, _extra(c)))
    labels = (["Field", "Type", "Collation", "Null", "Key", "Default", "Extra", "Privileges", "Comment"] if s.full
              else ["Field", "Type", "Null", "Key", "Default", "Extra"])
    return show_filter.apply(ctx, Rows(labels, rows), s.like, s.where)


def show_index(ctx: Context, session: SessionState, s: st.ShowIndex) -> Rows:
    """MySQL's columns (and Doris' Properties). Strata tables have no secondary (inverted, bloom filter,
    ngram) indexes; a Unique Key table's key is listed as its PRIMARY index, as MySQL tools expect of
    a key that addresses one row (information_schema.primary_key)."""
    rows: list[tuple[object, ...]] = []
    if information_schema.is_information_schema(session, s.table.db) or ctx.view(session, s.table) is not None:
        _columns_of(ctx, session, s.table)  # an unknown table is an error, as in MySQL and Doris; a view has no index
    else:
        table = ctx.table(session, s.table)
        rows = [(table.name, 0, information_schema.PRIMARY, position, c.name, "A", None, None, None,
                 "YES" if c.nullable else "", "BTREE", "", "") for position, c in information_schema.index_rows(table)]
    return show_filter.apply(ctx, Rows(
        ["Table", "Non_unique", "Key_name", "Seq_in_index", "Column_name", "Collation", "Cardinality", "Sub_part",
         "Packed", "Null", "Index_type", "Comment", "Properties"], rows), None, s.where)


def show_create_database(ctx: Context, session: SessionState, s: st.ShowCreateDatabase) -> Rows:
    if s.name.lower() == "information_schema":
        return Rows(["Database", "Create Database"], [("information_schema",
                                                       "CREATE DATABASE `information_schema`")])
    found = ctx.projection.database_by_name(s.name)
    if found is None:
        raise SqlFailure(ErrorCode.BAD_DB_ERROR, f"Unknown database '{s.name}'")
    return Rows(["Database", "Create Database"], [(found.name, f"CREATE DATABASE `{found.name}`")])


def _columns_of(ctx: Context, session: SessionState, name: st.QualifiedName) -> list[Column]:
    """A table's columns; those of an information_schema table are nullable, keyless text, BIGINT and
    DATETIME (what its Arrow schema holds)."""
    if information_schema.is_information_schema(session, name.db):
        return [Column(unique_id=i, name=column, type=doris_type)
                for i, (column, doris_type) in enumerate(information_schema.view_columns(name.name), start=1)]
    view = ctx.view(session, name)
    if view is not None:
        return [Column(unique_id=i, name=c.name, type=c.type, comment=c.comment)
                for i, c in enumerate(view.columns, start=1)]
    table = ctx.table(session, name)
    schema = table.schema_now
    if not session_flag(session.system_variables, "show_hidden_columns") or table.keys_model != "UNIQUE":
        return list(schema.visible_columns)
    # Doris' hidden columns, in its order: the delete sign, the version, the sequence column (which a
    # `sequence_col` table shows as well, typed as the column it names).
    signs = [Column(unique_id=0, name=DELETE_SIGN_COLUMN, type="TINYINT", nullable=False, default="0"),
             Column(unique_id=0, name=VERSION_COLUMN, type="BIGINT", nullable=False, default="0")]
    sequence = table.sequence_column()
    hidden = [c for c in schema.columns if c not in schema.visible_columns]
    if sequence is not None and sequence in schema.visible_columns:
        hidden.append(sequence.model_copy(update={"name": SEQUENCE_COLUMN, "unique_id": 0, "default": None}))
    return [*schema.visible_columns, *signs, *hidden]


def _extra(column: Column) -> str:
    """DESC's and SHOW COLUMNS' Extra: AUTO_INCREMENT, or a value column's aggregation."""
    return "AUTO_INCREMENT" if column.auto_increment is not None else column.aggregation or ""


def describe(ctx: Context, session: SessionState, s: st.Describe) -> Rows:
    rows = []
    for c in _columns_of(ctx, session, s.table):
        rows.append((c.name, _type_text(c.type), "Yes" if c.nullable else "No", "true" if c.is_key else "false",
                     c.default, _extra(c)))
    return Rows(["Field", "Type", "Null", "Key", "Default", "Extra"], rows)


# The least value of each type, which Doris prints for a range's open lower end (`LESS THAN`
# partitions); strings range from ''. Printing a marker instead would not parse back as a bound.
_TYPE_MIN = {"TINYINT": "-128", "SMALLINT": "-32768", "INT": "-2147483648", "BIGINT": "-9223372036854775808",
             "LARGEINT": "-170141183460469231731687303715884105728", "DATE": "0000-01-01",
             "DATETIME": "0000-01-01 00:00:00"}
# Doris 2.x names of the types in SHOW PARTITIONS' key ranges.
_DORIS_V2 = {"DATE": "DATEV2", "DATETIME": "DATETIMEV2", "DECIMAL": "DECIMALV3"}


def _base_type(table: TableState, column: str) -> str:
    found = table.schema_now.column(column)
    return found.type.split("(")[0].upper() if found is not None else "VARCHAR"


def _lowest(table: TableState) -> tuple[str, ...]:
    return tuple(_TYPE_MIN.get(_base_type(table, c), "") for c in table.partition_columns)


def _bound_text(values: tuple[str | None, ...]) -> str:
    return "(" + ", ".join("NULL" if v is None else f'"{v}"' for v in values) + ")"


def create_table_text(table: TableState) -> str:
    lines = []
    for c in table.schema_now.visible_columns:
        parts = [f"`{c.name}` {_type_text(c.type)}"]
        if c.aggregation:
            parts.append(c.aggregation)
        parts.append("NULL" if c.nullable else "NOT NULL")
        if c.auto_increment is not None:
            parts.append(f"AUTO_INCREMENT({c.auto_increment})")
        if c.default is not None:
            parts.append("DEFAULT NULL" if c.default.upper() == "NULL" else
                         "DEFAULT CURRENT_TIMESTAMP" if c.default.upper() == "CURRENT_TIMESTAMP" else
                         f'DEFAULT "{c.default}"')
        if c.comment:
            parts.append(f"COMMENT '{c.comment}'")
        lines.append("  " + " ".join(parts))
    keys = ", ".join(f"`{c.name}`" for c in table.schema_now.key_columns)
    text = f"CREATE TABLE `{table.name}` (\n" + ",\n".join(lines) + "\n) ENGINE=OLAP\n"
    text += f"{table.keys_model} KEY({keys})\n"
    text += f"COMMENT '{table.comment or 'OLAP'}'\n"
    if table.partition_kind != "UNPARTITIONED":
        cols = ", ".join(f"`{c}`" for c in table.partition_columns)
        defs = []
        for p in sorted(table.live_partitions(), key=lambda p: p.partition_id):
            b = p.partition.bound
            if b.is_default:
                defs.append(f"PARTITION {p.name}")
            elif table.partition_kind == "LIST":
                values = ", ".join(_bound_text(v) for v in b.values)
                defs.append(f"PARTITION {p.name} VALUES IN ({values})")
            else:
                lower = _bound_text(b.lower if b.lower is not None else _lowest(table))
                upper = _bound_text(b.upper) if b.upper is not None else "(MAXVALUE)"
                defs.append(f"PARTITION {p.name} VALUES [{lower}, {upper})")
        auto = table.auto_partition
        if auto is None:
            text += f"PARTITION BY {table.partition_kind}({cols})\n"
        elif auto.unit is None:
            text += f"AUTO PARTITION BY LIST ({cols})\n"
        else:
            text += f"AUTO PARTITION BY RANGE (date_trunc({cols}, '{auto.unit}'))\n"
        text += "(" + ",\n".join(defs) + ")\n"
    d = table.distribution
    if d.kind == "HASH":
        text += f"DISTRIBUTED BY HASH({', '.join(f'`{c}`' for c in d.columns)}) BUCKETS {d.buckets}\n"
    else:
        text += f"DISTRIBUTED BY RANDOM BUCKETS {d.buckets}\n"
    props = {"replication_allocation": "tag.location.default: 1",
             **{k: v for k, v in table.properties.items() if k != MERGE_ON_WRITE_PROPERTY}}
    if table.keys_model == "UNIQUE":
        # Doris shows how a Unique Key table merges, its default too, and always in one place: the text
        # run again must print itself back, whether the property was given or defaulted.
        props[MERGE_ON_WRITE_PROPERTY] = table.properties.get(MERGE_ON_WRITE_PROPERTY, "true")
    text += "PROPERTIES (\n" + ",\n".join(f'"{k}" = "{v}"' for k, v in props.items()) + "\n);"
    return text


def show_create_table(ctx: Context, session: SessionState, s: st.ShowCreateTable) -> Rows:
    if ctx.view(session, s.table) is not None:  # MySQL and Doris answer as SHOW CREATE VIEW
        return views.show_create_view(ctx, session, st.ShowCreateView(s.table))
    table = ctx.table(session, s.table)
    return Rows(["Table", "Create Table"], [(table.name, create_table_text(table))])


def _key_range(table: TableState, bound: PartitionBound) -> str:
    """SHOW PARTITIONS' `Range` in Doris' form: `[types: [INT]; keys: [10]; ..types: [INT]; keys: [20]; )`."""
    if table.partition_kind == "UNPARTITIONED":
        return ""
    types = ", ".join(_DORIS_V2.get(t, t) for t in (_base_type(table, c) for c in table.partition_columns))

    def key(values: tuple[str | None, ...]) -> str:
        return f"types: [{types}]; keys: [{', '.join('NULL' if v is None else v for v in values)}]; "

    if table.partition_kind == "LIST":
        return "[" + ", ".join(key(v) for v in bound.values) + "]"
    lower = bound.lower if bound.lower is not None else _lowest(table)
    upper = bound.upper if bound.upper is not None else ("MAXVALUE",) * len(table.partition_columns)
    return f"[{key(lower)}..{key(upper)})"


def show_partitions(ctx: Context, session: SessionState, s: st.ShowPartitions) -> Rows:
    table = ctx.table(session, s.table)
    rows = []
    records = list(ctx.projection.rowset_records(table.table_id))
    for p in sorted(table.live_partitions(), key=lambda p: p.partition_id):
        mine = [r for r in records if r.rowset.partition_id == p.partition_id and r.stale_ts_ms is None]
        size = sum(r.rowset.size_bytes for r in mine)
        tiers = ",".join(sorted({r.rowset.tier for r in mine})) or p.partition.properties.get("storage_medium", "ssd")
        key_range = _key_range(table, p.partition.bound)
        changed = datetime.fromtimestamp(table.last_commit_ts_ms / 1000, tz=UTC).strftime("%Y-%m-%d %H:%M:%S")
        rows.append((p.partition_id, p.name, p.version, changed, "NORMAL", ", ".join(table.partition_columns),
                     key_range, ", ".join(table.distribution.columns), p.partition.buckets, 1,
                     p.partition.properties.get("storage_medium",
                                                table.properties.get("storage_medium", "SSD")).upper(),
                     p.partition.properties.get("storage_policy", table.properties.get("storage_policy", "")),
                     f"{size} B", tiers, sum(r.rowset.num_rows for r in mine)))
    return Rows(["PartitionId", "PartitionName", "VisibleVersion", "VisibleVersionTime", "State", "PartitionKey",
                 "Range", "DistributionKey", "Buckets", "ReplicationNum", "StorageMedium", "RemoteStoragePolicy",
                 "DataSize", "Tier", "RowCount"], rows)
