"""INSERT, DELETE and UPDATE: rows are checked and typed in DuckDB, routed to partitions and
buckets, written as durable rowset files, and only then proposed as one commit."""

from __future__ import annotations

import time
import uuid
from dataclasses import replace
from datetime import UTC, datetime

import duckdb
import pyarrow as pa
import pyarrow.compute as pc
from sqlglot import exp

from projections.cooldown import local_target
from projections.snapshot import resolve
from projections.state import TableState
from query import group_commit
from query.context import Context, Done, SessionState, SqlFailure
from query.parser import statements as st
from query.reads import bind_tables, duck_error
from query.relation import default_sql, duck_type, quote_ident, quote_literal, snapshot_sql
from schemas import commands as cmd
from schemas.errors import ErrorCode
from schemas.model import Column, NewRowset
from storage.paths import HIDDEN_DELETE_SIGN, HIDDEN_SEQ
from storage.rowset_writer import write_rowset


def _bound_tuple(values: tuple[str, ...], types: list[str]) -> str:
    items = ", ".join(f"CAST({quote_literal(v)} AS {t})" for v, t in zip(values, types, strict=False))
    return f"({items})" if len(values) > 1 else items


def partition_case(table: TableState, only: tuple[int, ...] = ()) -> str:
    """A DuckDB expression giving each typed row (columns c<id>) its partition id, NULL if none
    (or none of `only`, the partitions an `INSERT … PARTITION (…)` names)."""
    live = [p for p in table.live_partitions() if not only or p.partition_id in only]
    if table.partition_kind == "UNPARTITIONED":
        return str(live[0].partition_id)
    cols = [table.schema_now.column(n) for n in table.partition_columns]
    if any(c is None for c in cols):
        raise SqlFailure(ErrorCode.WRONG_ARGUMENTS, "a partition column no longer exists")
    names = [c.file_column for c in cols if c is not None]
    types = [duck_type(c.type) for c in cols if c is not None]
    key = f"({', '.join(names)})" if len(names) > 1 else names[0]
    whens = []
    for p in live:
        bound = p.partition.bound
        if table.partition_kind == "LIST":
            options = ", ".join(_bound_tuple(v, types) for v in bound.values)
            whens.append(f"WHEN {key} IN ({options}) THEN {p.partition_id}")
        else:
            conds = []
            if bound.lower is not None:
                conds.append(f"{key} >= {_bound_tuple(bound.lower, types)}")
            if bound.upper is not None:
                conds.append(f"{key} < {_bound_tuple(bound.upper, types)}")
            whens.append(f"WHEN {' AND '.join(conds) or 'true'} THEN {p.partition_id}")
    return f"CASE {' '.join(whens)} END" if whens else "NULL"


def bucket_expr(table: TableState) -> str:
    """Each routed row's bucket: a hash of the distribution columns (random spread for RANDOM)."""
    buckets = {p.partition_id: p.partition.buckets for p in table.live_partitions()}
    if all(n == 1 for n in buckets.values()):
        return "0"
    cols = [table.schema_now.column(n) for n in table.distribution.columns]
    names = [c.file_column for c in cols if c is not None]
    spread = f"hash({', '.join(names)})" if names else "CAST(floor(random() * 4294967296) AS UBIGINT)"
    cases = " ".join(f"WHEN {pid} THEN {spread} % {n}" for pid, n in buckets.items())
    return f"CAST(CASE __partition {cases} END AS INTEGER)"


def write_rows(ctx: Context, cur: duckdb.DuckDBPyConnection, table: TableState, source_sql: str,
               targets: list[Column], *, delete_sign: bool = False, label: str | None = None,
               source: str = "insert", partitions: tuple[int, ...] = ()) -> int:
    """Writes the rows of `source_sql` (columns a0..an, one per target) as one commit; returns the
    count. With `partitions`, every row must belong to one of them."""
    data = prepare_rows(cur, table, source_sql, targets, delete_sign=delete_sign, partitions=partitions)
    if data.num_rows == 0:
        return 0
    return commit_rows(ctx, table, data, label=label or f"insert_{uuid.uuid4().hex}", source=source)


def prepare_rows(cur: duckdb.DuckDBPyConnection, table: TableState, source_sql: str, targets: list[Column], *,
                 delete_sign: bool = False, partitions: tuple[int, ...] = ()) -> pa.Table:
    """The rows of `source_sql` typed to the table's current schema, checked (NULLs, lengths, values,
    partitions) and routed: the file columns, `__seq`, the delete sign on Unique Key tables, and
    `__partition`/`__bucket`. Raises the statement's SqlFailure; writes nothing."""
    schema = table.schema_now
    now = datetime.now(UTC).strftime("%Y-%m-%d %H:%M:%S.%f")
    given = {c.unique_id: i for i, c in enumerate(targets)}
    typed, checks = [], []
    for column in schema.columns:
        duck = duck_type(column.type)
        if column.unique_id in given:
            src = f"a{given[column.unique_id]}"
            value = f"TRY_CAST({src} AS {duck})"
            checks.append((column, f"{src} IS NOT NULL AND {value} IS NULL", "value"))
            if column.type.upper().startswith(("VARCHAR", "CHAR")) and "(" in column.type:
                limit = int(column.type.split("(")[1].rstrip(")"))
                # Doris sizes VARCHAR(n) in bytes of UTF-8, not in characters.
                checks.append((column, f"strlen(CAST({src} AS VARCHAR)) > {limit}", "length"))
        else:
            if not column.nullable and column.default is None:
                raise SqlFailure(1364, f"Field '{column.name}' doesn't have a default value")
            value = default_sql(column, now=now)
        typed.append(f"{value} AS {column.file_column}")
        if not column.nullable:
            checks.append((column, f"{value} IS NULL", "null"))
    check_cols = "".join(f", ({cond}) AS __chk{i}" for i, (_, cond, _) in enumerate(checks))
    typed_sql = (f"SELECT {', '.join(typed)}, row_number() OVER () - 1 AS {HIDDEN_SEQ}{check_cols} "
                 f"FROM ({source_sql})")
    routed_sql = f"SELECT *, {partition_case(table, partitions)} AS __partition FROM ({typed_sql})"
    final_sql = f"SELECT *, {bucket_expr(table)} AS __bucket FROM ({routed_sql})"
    try:
        data: pa.Table = cur.sql(final_sql).to_arrow_table()
    except duckdb.Error as exc:
        raise SqlFailure(*duck_error(exc)) from None
    for i, (column, _, kind) in enumerate(checks):
        if pc.any(data.column(f"__chk{i}")).as_py():
            if kind == "null":
                raise SqlFailure(ErrorCode.BAD_NULL_ERROR, f"Column '{column.name}' cannot be null")
            if kind == "length":
                raise SqlFailure(1406, f"Data too long for column '{column.name}' ({column.type}, counted in bytes)")
            raise SqlFailure(1366, f"Incorrect value for column '{column.name}' of type {column.type}")
    if data.column("__partition").null_count:
        named = "" if not partitions else " among the partitions named"
        raise SqlFailure(ErrorCode.NO_PARTITION_FOR_GIVEN_VALUE,
                         f"no partition of '{table.name}'{named} holds some of the rows' "
                         f"{', '.join(table.partition_columns)} values")
    keep = [c.file_column for c in schema.columns] + [HIDDEN_SEQ]
    if table.keys_model == "UNIQUE":
        data = data.append_column(HIDDEN_DELETE_SIGN, pa.array([delete_sign] * data.num_rows, pa.bool_()))
        keep.append(HIDDEN_DELETE_SIGN)
    return data.select([*keep, "__partition", "__bucket"])


def commit_rows(ctx: Context, table: TableState, data: pa.Table, *, label: str, source: str = "insert") -> int:
    """Writes prepared rows (see `prepare_rows`) as one durable rowset per partition × bucket, then
    proposes them as one commit under `label`; returns the count once the commit is applied here."""
    schema = table.schema_now
    keep = [name for name in data.column_names if name not in ("__partition", "__bucket")]
    rowsets = []
    now_ms = int(time.time() * 1000)
    groups = data.group_by(["__partition", "__bucket"]).aggregate([]).to_pylist()
    for group in groups:
        mask = pc.and_(pc.equal(data["__partition"], group["__partition"]),
                       pc.equal(data["__bucket"], group["__bucket"]))
        part = data.filter(mask).select(keep)
        # New rows land hot, on the partition's local medium; cooldown moves them later.
        tier = local_target(table, table.partitions[group["__partition"]], now_ms)
        written = write_rowset(ctx.tiers.root(tier), table.table_id, group["__partition"], group["__bucket"], part)
        rowsets.append(NewRowset(rowset_id=written.rowset_id, partition_id=group["__partition"],
                                 bucket=group["__bucket"], num_rows=written.num_rows, size_bytes=written.size_bytes,
                                 path=written.path, tier=tier, schema_version=schema.schema_version,
                                 checksum=written.checksum))
    ctx.propose(cmd.CommitRowsets(table_id=table.table_id, label=label,
                                  rowsets=tuple(rowsets), num_rows=data.num_rows, source=source),
                table_id=table.table_id)
    return data.num_rows


def _targets(table: TableState, names: tuple[str, ...] | None) -> list[Column]:
    schema = table.schema_now
    if names is None:
        return list(schema.columns)
    targets = []
    for name in names:
        column = schema.column(name)
        if column is None:
            raise SqlFailure(ErrorCode.BAD_FIELD_ERROR, f"Unknown column '{name}' in '{table.name}'")
        if column in targets:
            raise SqlFailure(ErrorCode.DUP_FIELDNAME, f"Column '{name}' specified twice")
        targets.append(column)
    return targets


def insert(ctx: Context, session: SessionState, s: st.Insert) -> Done:
    ctx.catch_up()
    table = ctx.table(session, s.table)
    targets = _targets(table, s.columns)
    if s.label and ctx.projection.label(table.table_id, s.label):
        raise SqlFailure(ErrorCode.LABEL_ALREADY_EXISTS, f"Label [{s.label}] has already been used")
    cur = ctx.cursor()
    try:
        if isinstance(s.query, exp.Values):
            for row in s.query.expressions:
                width = len(row.expressions) if isinstance(row, exp.Tuple) else 1
                if width != len(targets):
                    raise SqlFailure(ErrorCode.WRONG_VALUE_COUNT, "Column count doesn't match value count")
            aliases = ", ".join(f"a{i}" for i in range(len(targets)))
            source_sql = f"SELECT * FROM ({s.query.sql(dialect='duckdb')}) AS __v({aliases})"
        else:
            inner = bind_tables(ctx, session, s.query, cur)
            try:
                width = len(cur.execute(f"SELECT * FROM ({inner}) LIMIT 0").description or [])
            except duckdb.Error as exc:
                raise SqlFailure(*duck_error(exc)) from None
            if width != len(targets):
                raise SqlFailure(ErrorCode.WRONG_VALUE_COUNT, "Column count doesn't match value count")
            source_sql = f"SELECT * FROM ({inner}) AS __q({', '.join(f'a{i}' for i in range(width))})"
        partitions = tuple(_named_partition(table, n) for n in s.partitions)
        mode = group_commit.session_mode(session)
        if mode != "off_mode" and isinstance(s.query, exp.Values) and not s.label:
            # Only `INSERT INTO t VALUES …` without a label is batched, as in Doris; the rows are typed
            # and checked here, so a bad row fails this statement alone and never reaches the batch.
            data = prepare_rows(cur, table, source_sql, targets, partitions=partitions)
            count, label = group_commit.registry(ctx).submit(table, data, mode)
            status = "VISIBLE" if mode == "sync_mode" else "PREPARE"
            return Done(count, f"{{'label':'{label}', 'status':'{status}'}}")
        count = write_rows(ctx, cur, table, source_sql, targets, label=s.label, partitions=partitions)
    finally:
        cur.close()
    return Done(count, f"{{'label':'{s.label or ''}', 'status':'VISIBLE'}}")


def _to_file_columns(table: TableState, where: exp.Expr, *, keys_only: bool) -> str:
    """The predicate in terms of rowset columns (c<id>), checked against the schema."""
    if where.find(exp.Query) is not None:
        # The predicate is stored and applied to this table's rows alone at every later read.
        raise SqlFailure(ErrorCode.NOT_SUPPORTED_YET, f"DELETE on a {table.keys_model} KEY table takes a predicate "
                                                      "on its own columns; subqueries are not supported")
    where = where.copy()
    for column in list(where.find_all(exp.Column)):
        found = table.schema_now.column(column.name)
        if found is None:
            raise SqlFailure(ErrorCode.BAD_FIELD_ERROR, f"Unknown column '{column.name}' in 'where clause'")
        if keys_only and not found.is_key:
            raise SqlFailure(ErrorCode.WRONG_ARGUMENTS,
                             f"DELETE on an AGGREGATE KEY table may only filter key columns; '{found.name}' is "
                             "a value column")
        column.replace(exp.column(found.file_column))
    return where.sql(dialect="duckdb")


def _user_predicate(where: exp.Expr | None) -> str:
    return "true" if where is None else where.sql(dialect="duckdb")


def _bound_sql(ctx: Context, session: SessionState, expr: exp.Expr, cur: duckdb.DuckDBPyConnection) -> str:
    """An UPDATE/DELETE expression as DuckDB SQL, the tables its subqueries read bound on `cur`."""
    try:
        return bind_tables(ctx, session, expr, cur)
    except duckdb.Error as exc:
        raise SqlFailure(*duck_error(exc)) from None


def delete(ctx: Context, session: SessionState, s: st.Delete) -> Done:
    ctx.catch_up()
    table = ctx.table(session, s.table)
    partitions = tuple(_named_partition(table, n) for n in s.partitions)
    if table.keys_model == "UNIQUE":
        return _rewrite_unique(ctx, session, table, s.where, None, delete_sign=True, partitions=partitions)
    if s.where is None:
        raise SqlFailure(ErrorCode.WRONG_ARGUMENTS, "DELETE needs a WHERE clause on this table; use TRUNCATE TABLE")
    predicate = _to_file_columns(table, s.where, keys_only=table.keys_model == "AGGREGATE")
    count = _count(ctx, table, s.where, partitions)
    ctx.propose(cmd.CommitDelete(table_id=table.table_id,
                                 partition_ids=partitions or tuple(p.partition_id for p in table.live_partitions()),
                                 predicate=predicate, description=f"DELETE WHERE {s.where.sql()}", num_rows=count),
                table_id=table.table_id)
    return Done(count)


def _current_sql(ctx: Context, table: TableState, partitions: tuple[int, ...]) -> str:
    """The table's latest rows as SQL, only those of `partitions` when some are named."""
    snapshot = resolve(ctx.projection, table)
    if partitions:
        snapshot = replace(snapshot, partitions=tuple(p for p in snapshot.partitions if p.partition_id in partitions))
    return snapshot_sql(snapshot, ctx.locator)


def _named_partition(table: TableState, name: str) -> int:
    found = table.partition_by_name(name)
    if found is None:
        raise SqlFailure(ErrorCode.UNKNOWN_PARTITION, f"Unknown partition '{name}' in table '{table.name}'")
    return found.partition_id


def _count(ctx: Context, table: TableState, where: exp.Expr | None, partitions: tuple[int, ...]) -> int:
    cur = ctx.cursor()
    try:
        sql = _current_sql(ctx, table, partitions)
        row = cur.execute(f"SELECT count(*) FROM ({sql}) AS {quote_ident(table.name)} "
                          f"WHERE {_user_predicate(where)}").fetchone()
        return int(row[0]) if row else 0
    except duckdb.Error as exc:
        raise SqlFailure(*duck_error(exc)) from None
    finally:
        cur.close()


def update(ctx: Context, session: SessionState, s: st.Update) -> Done:
    ctx.catch_up()
    table = ctx.table(session, s.table)
    if table.keys_model != "UNIQUE":
        raise SqlFailure(ErrorCode.NOT_SUPPORTED_YET,
                         f"UPDATE is only supported on UNIQUE KEY tables; '{table.name}' is {table.keys_model} KEY")
    assignments: dict[int, exp.Expr] = {}
    for name, value in s.assignments:
        column = table.schema_now.column(name)
        if column is None:
            raise SqlFailure(ErrorCode.BAD_FIELD_ERROR, f"Unknown column '{name}' in 'field list'")
        if column.is_key:
            raise SqlFailure(ErrorCode.WRONG_ARGUMENTS, f"Can not update key column '{column.name}'")
        assignments[column.unique_id] = value
    return _rewrite_unique(ctx, session, table, s.where, assignments, delete_sign=False)


def _rewrite_unique(ctx: Context, session: SessionState, table: TableState, where: exp.Expr | None,
                    assignments: dict[int, exp.Expr] | None, *, delete_sign: bool,
                    partitions: tuple[int, ...] = ()) -> Done:
    """Unique Key DELETE/UPDATE (merge-on-write style): the matching rows are written again, with a
    delete sign or with their new values, as one commit."""
    columns = list(table.schema_now.columns)
    cur = ctx.cursor()
    try:
        selected = []
        for i, c in enumerate(columns):
            value = (assignments or {}).get(c.unique_id)
            selected.append(f"{_bound_sql(ctx, session, value, cur) if value is not None else quote_ident(c.name)}"
                            f" AS a{i}")
        sql = _current_sql(ctx, table, partitions)
        predicate = "true" if where is None else _bound_sql(ctx, session, where, cur)
        source = f"SELECT {', '.join(selected)} FROM ({sql}) AS {quote_ident(table.name)} WHERE {predicate}"
        count = write_rows(ctx, cur, table, source, columns, delete_sign=delete_sign,
                           source="delete" if delete_sign else "update")
    finally:
        cur.close()
    return Done(count)
