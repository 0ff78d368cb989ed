"""A snapshot as DuckDB SQL (DESIGN §8 step 3): read its rowset files, project them onto the
schema in force, drop deleted rows, and merge by the keys model.

Stages, each a subquery:
1. raw — the Parquet files with `__version` (a constant for single-version rowsets; compacted
   files carry their own), `__seq`, `__delete_sign`, `__partition` and `__sv` (schema version);
2. logical — every column of the target schema by unique id (`c<id>`), with the DEFAULT for rows
   written before the column existed and a cast to today's type;
3. visible — delete predicates: a row written below a delete's version that matches it is gone;
4. merged — Duplicate: all rows; Unique: newest (`__version`, `__seq`) per key unless it is a
   delete sign; Aggregate: each value folded by its function in version order.
"""

from __future__ import annotations

from collections.abc import Callable

from projections.snapshot import Snapshot
from schemas.model import Column, Rowset, TableSchema

_DUCK_TYPES = {
    "BOOLEAN": "BOOLEAN", "TINYINT": "TINYINT", "SMALLINT": "SMALLINT", "INT": "INTEGER",
    "BIGINT": "BIGINT", "LARGEINT": "HUGEINT", "FLOAT": "FLOAT", "DOUBLE": "DOUBLE", "DATE": "DATE",
    "DATETIME": "TIMESTAMP", "CHAR": "VARCHAR", "VARCHAR": "VARCHAR", "STRING": "VARCHAR", "JSON": "VARCHAR",
    "TEXT": "VARCHAR", "DECIMALV3": "DECIMAL",
}
# Weight of __version against __seq when ordering rows of one key: versions < 1e9, seq < 1e9.
_ORDER = "(CAST(__version AS BIGINT) * 1000000000 + __seq)"


def duck_type(doris_type: str) -> str:
    """DuckDB's type for a canonical Doris type string (`DECIMAL(10,2)`, `VARCHAR(20)`, `INT`)."""
    base, _, params = doris_type.partition("(")
    base = base.upper()
    if base in ("DECIMAL", "DECIMALV3"):
        precision, _, scale = params.rstrip(")").partition(",")
        p = min(int(precision or 9), 38)
        return f"DECIMAL({p},{int(scale or 0)})"
    try:
        return _DUCK_TYPES[base]
    except KeyError:
        raise ValueError(f"type {doris_type} is not supported") from None


def quote_ident(name: str) -> str:
    return '"' + name.replace('"', '""') + '"'


def quote_literal(text: str) -> str:
    return "'" + text.replace("'", "''") + "'"


def default_sql(column: Column) -> str:
    if column.default is None or column.default.upper() == "NULL":
        return f"CAST(NULL AS {duck_type(column.type)})"
    if column.default.upper() == "CURRENT_TIMESTAMP":
        return f"CAST(NULL AS {duck_type(column.type)})"
    return f"CAST({quote_literal(column.default)} AS {duck_type(column.type)})"


def _raw_group(rowsets: list[Rowset], locate: Callable[[Rowset], str], compacted: bool,
               present: set[str], delete_sign: bool) -> str:
    files = ", ".join(quote_literal(locate(r)) for r in rowsets)
    mapping = ", ".join(
        f"({quote_literal(locate(r))}, {r.end_version}, {r.partition_id}, {r.schema_version})" for r in rowsets)
    version = "r.__version" if compacted else "m.v"
    sign = "r.__delete_sign" if delete_sign else "false"
    cols = "".join(f"r.{c}, " for c in sorted(present))
    return (f"SELECT {cols}{version} AS __version, r.__seq AS __seq, {sign} AS __delete_sign, "
            f"m.p AS __partition, m.sv AS __sv "
            f"FROM read_parquet([{files}], filename = true, union_by_name = true) AS r "
            f"JOIN (VALUES {mapping}) AS m(f, v, p, sv) ON r.filename = m.f")


def _logical_column(column: Column, history: dict[int, TableSchema], present: set[str]) -> str:
    if column.file_column not in present:
        return f"{default_sql(column)} AS {column.file_column}"
    lacking = sorted(sv for sv, schema in history.items()
                     if all(c.unique_id != column.unique_id for c in schema.columns))
    value = f"CAST({column.file_column} AS {duck_type(column.type)})"
    if lacking:
        value = f"CASE WHEN __sv IN ({', '.join(map(str, lacking))}) THEN {default_sql(column)} ELSE {value} END"
    return f"{value} AS {column.file_column}"


def _empty(schema: TableSchema) -> str:
    cols = ", ".join(f"{default_sql(c)} AS {quote_ident(c.name)}" for c in schema.columns)
    return f"SELECT {cols} WHERE false"


def snapshot_sql(snapshot: Snapshot, locate: Callable[[Rowset], str]) -> str:
    """SELECT returning the table's visible rows at the snapshot, columns named as the user sees them."""
    schema = snapshot.schema
    rowsets = snapshot.rowsets
    if not rowsets:
        return _empty(schema)
    history = {s.table_schema.schema_version: s.table_schema for s in snapshot.schema_history}
    # Columns some file of the snapshot actually holds (a rowset holds its schema's columns).
    present = {c.file_column for r in rowsets for c in history.get(r.schema_version, schema).columns}
    unique = snapshot.table.keys_model == "UNIQUE"
    groups = []
    for compacted in (False, True):
        group = [r for r in rowsets if (r.start_version != r.end_version) == compacted]
        if group:
            groups.append(_raw_group(group, locate, compacted, present, unique))
    raw = " UNION ALL BY NAME ".join(f"({g})" for g in groups)
    logical_cols = ", ".join(_logical_column(c, history, present) for c in schema.columns)
    logical = f"SELECT {logical_cols}, __version, __seq, __delete_sign, __partition FROM ({raw})"
    conditions = []
    for partition in snapshot.partitions:
        for delete in partition.deletes:
            predicate = delete.predicate or "true"
            conditions.append(f"(__partition = {partition.partition_id} AND __version < {delete.version} "
                              f"AND coalesce(({predicate}), false))")
    visible = f"SELECT * FROM ({logical})" + (f" WHERE NOT ({' OR '.join(conditions)})" if conditions else "")
    return _merge(snapshot.table.keys_model, schema, visible)


def _merge(keys_model: str, schema: TableSchema, visible: str) -> str:
    named = ", ".join(f"{c.file_column} AS {quote_ident(c.name)}" for c in schema.columns)
    if keys_model == "DUPLICATE":
        return f"SELECT {named} FROM ({visible})"
    keys = ", ".join(c.file_column for c in schema.key_columns)
    if keys_model == "UNIQUE":
        return (f"SELECT {named} FROM (SELECT *, row_number() OVER (PARTITION BY {keys} "
                f"ORDER BY __version DESC, __seq DESC) AS __rn FROM ({visible})) "
                f"WHERE __rn = 1 AND NOT __delete_sign")
    folded = []
    for c in schema.columns:
        if c.is_key:
            folded.append(f"{c.file_column} AS {quote_ident(c.name)}")
        elif c.aggregation in ("SUM", "MIN", "MAX"):
            folded.append(f"{c.aggregation.lower()}({c.file_column}) AS {quote_ident(c.name)}")
        elif c.aggregation == "REPLACE_IF_NOT_NULL":
            folded.append(f"arg_max({c.file_column}, {_ORDER}) FILTER (WHERE {c.file_column} IS NOT NULL) "
                          f"AS {quote_ident(c.name)}")
        else:  # REPLACE: the newest value, even a NULL
            folded.append(f"arg_max_null({c.file_column}, {_ORDER}) AS {quote_ident(c.name)}")
    return f"SELECT {', '.join(folded)} FROM ({visible}) GROUP BY {keys}"
