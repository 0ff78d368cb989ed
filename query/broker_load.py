"""Doris' Broker Load from S3: `LOAD LABEL db.label (DATA INFILE("s3://…") INTO TABLE t …) WITH S3 (…)
PROPERTIES (…)`, an asynchronous job (query.bulk_jobs) that fetches the files with Strata's object
store client, maps them through the column list, SET and WHERE, and commits each target table's rows
under the job's label through the ordinary commit path (query.dml), so time travel stays exact.

States: PENDING → LOADING (fetching, mapping, checking) → COMMITTED (committing; no longer
cancellable) → FINISHED, or CANCELLED (CANCEL LOAD, its `timeout`, or an error, shown in ErrorMsg).
A job resumed after a restart commits only the tables its label is not yet on. Rows of several
tables are committed table by table (Strata commits one table at a time): a job that fails between
two such commits is CANCELLED with the tables already committed named in ErrorMsg.
A row that does not fit fails the job (`max_filter_ratio` must be 0: error rows are not filtered yet).
"""

from __future__ import annotations

import json
import time
from typing import Any

import pyarrow as pa
import sqlglot

from projections.bulk_jobs import BulkJob
from projections.state import TableState
from query import bulk_jobs, dml
from query.context import Context, Done, SessionState, SqlFailure
from query.file_formats import READ_FORMATS, check_format, text_options
from query.load_mapping import load_expression_sql
from query.parser import DIALECT
from query.parser import statements as st
from query.s3_location import CONNECTION_KEYS, connection_properties, lowered, target
from query.s3_source import matching_keys, read_objects
from query.sandbox import check_expression
from schemas.errors import ErrorCode
from schemas.model import Column
from storage.rowset_sql import converted_sql, quote_ident

_PROPERTIES = frozenset({"timeout", "max_filter_ratio", "comment"})
DEFAULT_TIMEOUT_S = 14400  # Doris' broker load timeout, 4 hours
WHAT = "Broker Load"


def _timeout(properties: dict[str, str]) -> int:
    text = properties.get("timeout", str(DEFAULT_TIMEOUT_S))
    if not text.isdigit() or int(text) <= 0:
        raise SqlFailure(ErrorCode.WRONG_ARGUMENTS, f"timeout '{text}' must be a positive number of seconds")
    return int(text)


def _check_properties(properties: dict[str, str], s3: dict[str, str]) -> None:
    unknown = sorted(k for k in properties if k not in _PROPERTIES)
    unknown += sorted(k for k in s3 if k not in CONNECTION_KEYS)
    if unknown:
        raise SqlFailure(ErrorCode.NOT_SUPPORTED_YET, f"{WHAT}: unknown or unsupported propert"
                                                      f"{'y' if len(unknown) == 1 else 'ies'} {', '.join(unknown)}")
    ratio = properties.get("max_filter_ratio", "0")
    try:
        zero = float(ratio) == 0
    except ValueError:
        zero = False
    if not zero:
        raise SqlFailure(ErrorCode.NOT_SUPPORTED_YET, f"{WHAT}: max_filter_ratio '{ratio}' is not supported: a row "
                                                      "that does not fit fails the load (max_filter_ratio 0)")


def _data_spec(ctx: Context, session: SessionState, db: str, data: st.LoadData,
               s3: dict[str, str]) -> dict[str, Any]:
    table = ctx.table(session, st.QualifiedName(data.table, db))
    if table.auto_partition is not None:
        raise SqlFailure(ErrorCode.NOT_SUPPORTED_YET, f"{WHAT} into AUTO PARTITION table '{table.name}' is not "
                                                      "supported yet; use INSERT INTO … SELECT … FROM S3(…)")
    for name in data.partitions:
        dml._named_partition(table, name)
    fmt = check_format(data.format or "csv", READ_FORMATS, WHAT)
    options = {k: v for k, v in (("column_separator", data.column_separator),
                                 ("line_delimiter", data.line_delimiter)) if v is not None}
    text_options(options)
    for path in data.paths:
        target(ctx, path, s3, WHAT)  # the URI and keys are usable (no request yet)
    return {"paths": list(data.paths), "table": table.name, "table_id": table.table_id,
            "partitions": list(data.partitions), "format": fmt, "options": options, "columns": list(data.columns),
            "set": [[c.name, c.expr.sql(dialect=DIALECT)] for c in data.set if c.expr is not None],
            "where": data.where.sql(dialect=DIALECT) if data.where is not None else None}


def create_broker_load(ctx: Context, session: SessionState, s: st.BrokerLoad) -> Done:
    ctx.catch_up()
    _, db = ctx.database_id(session, s.label.db)
    s3 = lowered(s.s3_properties)
    _check_properties(s.properties, s3)
    timeout = _timeout(s.properties)
    data = [_data_spec(ctx, session, db, d, s3) for d in s.data]
    for d in data:
        if ctx.projection.label(d["table_id"], s.label.name) is not None:
            raise SqlFailure(ErrorCode.LABEL_ALREADY_EXISTS, f"Label [{s.label.name}] has already been used")
    spec = {"user": session.user, "db": db, "timeout": timeout, "max_filter_ratio": s.properties.get(
        "max_filter_ratio", "0"), "comment": s.properties.get("comment", ""),
        "s3": ctx.stores.box.seal_properties(connection_properties(s3)), "data": data}
    bulk_jobs.create(ctx, "LOAD", db, s.label.name, spec)
    return Done()


def _mapped_sql(table: TableState, fields: list[str], derived: list[tuple[str, sqlglot.exp.Expr]],
                where: sqlglot.exp.Expr | None) -> tuple[str, list[Column]]:
    """SQL over `__src` (columns __f0…) giving a0… for the table's targets, and those targets: each
    source field typed as the column it fills for SET and WHERE (as routine load does), a plain
    field passed as it is so that the load's checks see the value that does not convert."""
    schema = table.schema_now
    typed = {name.lower() for name in fields if schema.column(name) is not None}
    scope = []
    for i, name in enumerate(fields):
        column = schema.column(name)
        scope.append(f"{converted_sql(f'__f{i}', column.type) if column is not None else f'__f{i}'} "
                     f"AS {quote_ident(name)}")
    raw = [f"__f{i}" for i in range(len(fields))]
    scope_sql = f"SELECT {', '.join(raw + scope)} FROM __src"
    names = set(fields)
    if derived:
        computed = ", ".join(f"{load_expression_sql(expr, names, typed, f'SET {name}')} AS {quote_ident(name)}"
                             for name, expr in derived)
        scope_sql = f"SELECT *, {computed} FROM ({scope_sql})"
        names |= {name for name, _ in derived}
    filtered = f" WHERE {load_expression_sql(where, names, typed | {n.lower() for n, _ in derived}, 'WHERE')}" \
        if where is not None else ""
    targets: list[Column] = []
    values: list[str] = []
    derived_names = {name.lower() for name, _ in derived}
    for name in [*fields, *(name for name, _ in derived)]:
        column = schema.column(name)
        if column is None:
            if name.lower() in derived_names:
                raise SqlFailure(ErrorCode.BAD_FIELD_ERROR, f"Unknown column '{name}' in table '{table.name}'")
            continue  # a source field only SET or WHERE uses
        if column in targets:
            if name.lower() in derived_names:  # SET overrides the field of the same name
                values[targets.index(column)] = quote_ident(name)
            continue
        targets.append(column)
        values.append(quote_ident(name) if name.lower() in derived_names else f"__f{fields.index(name)}")
    if not targets:
        raise SqlFailure(ErrorCode.WRONG_ARGUMENTS, f"the load fills no column of table '{table.name}'")
    select = ", ".join(f"{v} AS a{i}" for i, v in enumerate(values))
    return f"SELECT {select} FROM ({scope_sql}){filtered}", targets


def _fields(source: pa.Table, columns: list[str], fmt: str, table: TableState) -> tuple[pa.Table, list[str]]:
    """The source's columns as the load names them: the column list, or else the table's columns
    in order (CSV) or by name (Parquet, ORC, JSON)."""
    if fmt == "csv":
        names = columns or [c.name for c in table.schema_now.visible_columns]
        if len(names) != source.num_columns:
            raise SqlFailure(ErrorCode.WRONG_ARGUMENTS,
                             f"the file has {source.num_columns} columns, the load expects {len(names)} "
                             f"({', '.join(names)})")
        return source, names
    by_name = {n.lower(): i for i, n in enumerate(source.column_names)}
    names = columns or [n for n in source.column_names if table.schema_now.column(n) is not None]
    missing = [n for n in names if n.lower() not in by_name]
    if missing:
        raise SqlFailure(ErrorCode.BAD_FIELD_ERROR, f"the file has no column {', '.join(missing)}")
    return source.select([by_name[n.lower()] for n in names]), names


def _prepared(ctx: Context, job: BulkJob, spec: dict[str, Any], d: dict[str, Any], s3: dict[str, str],
              counts: dict[str, int]) -> tuple[TableState, pa.Table]:
    table = ctx.projection.tables.get(d["table_id"])
    if table is None or table.dropped_ts_ms is not None:
        raise SqlFailure(ErrorCode.NO_SUCH_TABLE, f"table '{d['table']}' was dropped")
    limit = ctx.config.s3_transfer_max_bytes
    options = text_options(d["options"])
    sources = []
    for path in d["paths"]:
        where = target(ctx, path, s3, WHAT)
        found = matching_keys(where, WHAT, limit)
        counts["files"] += len(found)
        sources.append(read_objects(where, found, d["format"], options, WHAT, limit))
        bulk_jobs.still_running(ctx, job)
    source = pa.concat_tables(sources, promote_options="permissive") if len(sources) > 1 else sources[0]
    counts["bytes"] += source.nbytes
    source, fields = _fields(source, d["columns"], d["format"], table)
    derived = [(name, _expression(text)) for name, text in d["set"]]
    where_expr = _expression(d["where"]) if d["where"] else None
    sql, targets = _mapped_sql(table, fields, derived, where_expr)
    cur = ctx.cursor()
    try:
        cur.register("__src", source.rename_columns([f"__f{i}" for i in range(len(fields))]))
        kept = int(cur.execute(f"SELECT count(*) FROM ({sql})").fetchall()[0][0])
        partitions = tuple(dml._named_partition(table, p) for p in d["partitions"])
        data = dml.prepare_rows(cur, table, sql, targets, partitions=partitions,
                                allocate=dml.AutoIncrement.of(ctx, table))
    finally:
        cur.close()
    counts["scanned"] += source.num_rows
    counts["unselected"] += source.num_rows - kept
    counts["normal"] += data.num_rows
    return table, data


def _expression(text: str) -> sqlglot.exp.Expr:
    """A SET or WHERE expression from the job's spec, checked by the sandbox again (the spec is
    read back from the log)."""
    expr = sqlglot.parse_one(text, read=DIALECT)
    check_expression(expr)
    return expr


def run_load(ctx: Context, job: BulkJob) -> None:
    spec = json.loads(job.spec)
    started = str(int(time.time() * 1000))
    if job.state == "PENDING" and not bulk_jobs.move(ctx, job, "LOADING", ("PENDING",), progress="ETL:N/A; LOAD:0%",
                                                     info={"started_ms": started}):
        raise bulk_jobs.JobCancelled()
    ctx.catch_up()
    deadline = job.created_ts_ms + int(spec["timeout"]) * 1000
    s3 = ctx.stores.box.open_properties(dict(spec["s3"]))
    counts = {"files": 0, "bytes": 0, "scanned": 0, "unselected": 0, "normal": 0, "abnormal": 0}
    by_table: dict[int, tuple[TableState, list[pa.Table]]] = {}
    for d in spec["data"]:
        table, data = _prepared(ctx, job, spec, d, s3, counts)
        by_table.setdefault(table.table_id, (table, []))[1].append(data)
        if time.time() * 1000 > deadline:
            raise SqlFailure(ErrorCode.UNKNOWN_ERROR, f"LoadTimeout: the load ran past its timeout of "
                                                      f"{spec['timeout']} s")
    info = {k: str(v) for k, v in counts.items()}
    if job.state != "COMMITTED" and not bulk_jobs.move(ctx, job, "COMMITTED", ("LOADING", "PENDING"),
                                                       progress="ETL:100%; LOAD:99%", info=info):
        raise bulk_jobs.JobCancelled()
    committed: list[str] = []
    try:
        for table, parts in by_table.values():
            if ctx.projection.label(table.table_id, job.label) is not None:
                committed.append(table.name)  # committed before a restart
                continue
            rows = pa.concat_tables(parts) if len(parts) > 1 else parts[0]
            if rows.num_rows:
                dml.commit_rows(ctx, ctx.projection.tables[table.table_id], rows, label=job.label,
                                source="broker_load")
            committed.append(table.name)
    except SqlFailure as failure:
        done = f" (already committed: {', '.join(committed)})" if committed else ""
        raise SqlFailure(failure.code, f"{failure.message}{done}") from None
    bulk_jobs.move(ctx, job, "FINISHED", ("COMMITTED",), progress="ETL:100%; LOAD:100%", info=info)


bulk_jobs.RUNNERS["LOAD"] = run_load
