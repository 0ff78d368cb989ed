"""Doris' EXPORT: `EXPORT TABLE t [FOR TIME AS OF '<ts>'] [PARTITION (p, …)] [WHERE …] TO "s3://bucket/dir/"
[PROPERTIES (…)] WITH S3 (…)`, an asynchronous job (query.bulk_jobs: PENDING → EXPORTING →
FINISHED | CANCELLED) that writes the table's rows as INTO OUTFILE does (query.outfile).

The rows are those of one snapshot: the instant `FOR TIME AS OF` names (a Strata extension, in the
place a read puts it), or else the moment the EXPORT statement ran, when the table keeps time
travel; a table without it is read as it is when the job runs. A job cut short by a restart runs
again from the start (files of the first attempt may remain next to the new ones). The rows are
written as the query gives them, a file at a time (query.outfile.write_files), never all in memory.
"""

from __future__ import annotations

import json
import time
import uuid
from collections.abc import Iterator
from datetime import UTC, datetime
from typing import Any

import pyarrow as pa

from projections.bulk_jobs import BulkJob
from query import bulk_jobs, dml
from query.context import Context, Done, SessionState, SqlFailure
from query.file_formats import WRITE_FORMATS, check_format, text_options
from query.identifiers import quoted, quoted_table
from query.outfile import check_properties, max_file_size, query_id, write_files
from query.parser import DIALECT, Query, parse_statement
from query.parser import statements as st
from query.reads import as_of_table, now_ms, query_batches
from query.s3_location import CONNECTION_KEYS, connection_properties, lowered, target
from schemas.errors import ErrorCode

_PROPERTIES = frozenset({"label", "column_separator", "line_delimiter", "format", "max_file_size", "columns",
                         "timeout", "delete_existing_files"})
DEFAULT_TIMEOUT_S = 7200  # Doris' export timeout, 2 hours
WHAT = "EXPORT"


def _instant_text(ts_ms: int) -> str:
    return datetime.fromtimestamp(ts_ms / 1000, tz=UTC).strftime("%Y-%m-%d %H:%M:%S.%f")


def create_export(ctx: Context, session: SessionState, s: st.ExportTable) -> Done:
    ctx.catch_up()
    properties = s.properties
    s3 = lowered(s.s3_properties)
    check_properties(properties, _PROPERTIES, WHAT)
    check_properties(s3, CONNECTION_KEYS, WHAT)
    _, db = ctx.database_id(session, s.table.db)
    table = ctx.table(session, s.table)
    for name in s.partitions:
        dml._named_partition(table, name)
    fmt = check_format(properties.get("format", "csv"), WRITE_FORMATS, WHAT)
    text_options({k: v for k, v in properties.items() if k in ("column_separator", "line_delimiter")})
    max_file_size(properties.get("max_file_size"))
    if properties.get("delete_existing_files", "false").lower() != "false":
        raise SqlFailure(ErrorCode.NOT_SUPPORTED_YET,
                         f"{WHAT}: delete_existing_files is not supported; use SELECT … INTO OUTFILE")
    timeout = properties.get("timeout", str(DEFAULT_TIMEOUT_S))
    if not timeout.isdigit() or int(timeout) <= 0:
        raise SqlFailure(ErrorCode.WRONG_ARGUMENTS, f"timeout '{timeout}' must be a positive number of seconds")
    target(ctx, s.path, s3, WHAT)  # the URI and keys are usable (no request yet)
    columns = [c.strip() for c in properties.get("columns", "").split(",") if c.strip()]
    for column in columns:
        if table.schema_now.column(column) is None:
            raise SqlFailure(ErrorCode.BAD_FIELD_ERROR, f"Unknown column '{column}' in table '{table.name}'")
    ts_ms: int | None
    if s.as_of is not None:
        _, ts_ms = as_of_table(ctx, session, table, s.as_of)
    else:
        ts_ms = now_ms() if table.time_travel else None
    label = properties.get("label") or f"export_{uuid.uuid4()}"
    spec: dict[str, Any] = {
        "user": session.user, "db": db, "table": table.name, "partitions": list(s.partitions),
        "where": s.where.sql(dialect=DIALECT) if s.where is not None else None, "ts_ms": ts_ms,
        "as_of_text": _instant_text(ts_ms) if ts_ms is not None else None, "columns": columns,
        "path": s.path, "format": fmt, "column_separator": properties.get("column_separator", "\t"),
        "line_delimiter": properties.get("line_delimiter", "\n"), "max_file_size": properties.get("max_file_size"),
        "timeout": int(timeout), "s3": ctx.stores.box.seal_properties(connection_properties(s3))}
    bulk_jobs.create(ctx, "EXPORT", db, label, spec)
    return Done()


def _query(spec: dict[str, Any]) -> Query:
    """The export's rows as a query (checked by the parser and, when run, by the sandbox and binder
    as any query is)."""
    picked = ", ".join(quoted(c) for c in spec["columns"]) or "*"
    sql = f"SELECT {picked} FROM {quoted_table(spec['table'], spec['db'])}"
    if spec["partitions"]:
        sql += f" PARTITION ({', '.join(quoted(p) for p in spec['partitions'])})"
    if spec["ts_ms"] is not None:
        sql += f" FOR TIME AS OF '{_instant_text(spec['ts_ms'])}'"
    if spec["where"]:
        sql += f" WHERE {spec['where']}"
    parsed = parse_statement(sql)
    if not isinstance(parsed, Query):
        raise SqlFailure(ErrorCode.UNKNOWN_ERROR, f"{WHAT}: the export's query is not a query")
    return parsed


def _watched(ctx: Context, job: BulkJob, spec: dict[str, Any], batches: pa.RecordBatchReader) -> pa.RecordBatchReader:
    """The batches, the job stopped between two of them once cancelled or past its timeout."""
    deadline_ms = job.created_ts_ms + int(spec["timeout"]) * 1000

    def watched() -> Iterator[pa.RecordBatch]:
        for batch in batches:
            if time.time() * 1000 > deadline_ms:
                raise SqlFailure(ErrorCode.UNKNOWN_ERROR, f"the export ran past its timeout of {spec['timeout']} s")
            bulk_jobs.still_running(ctx, job)
            yield batch
    return pa.RecordBatchReader.from_batches(batches.schema, watched())


def run_export(ctx: Context, job: BulkJob) -> None:
    from query.sandbox import check_statement  # the spec comes back from the log: checked again

    spec = json.loads(job.spec)
    if job.state == "PENDING" and not bulk_jobs.move(ctx, job, "EXPORTING", ("PENDING",), progress="0%",
                                                     info={"started_ms": str(int(time.time() * 1000))}):
        raise bulk_jobs.JobCancelled()
    ctx.catch_up()
    query = _query(spec)
    check_statement(query)
    session = SessionState(database=spec["db"], user=spec["user"])
    s3 = ctx.stores.box.open_properties(dict(spec["s3"]))
    where = target(ctx, spec["path"], s3, WHAT)
    options = text_options({"column_separator": spec["column_separator"], "line_delimiter": spec["line_delimiter"]})
    with query_batches(ctx, session, query.expr) as batches:
        written = write_files(ctx, where, _watched(ctx, job, spec, batches), spec["format"], options,
                              max_file_size(spec["max_file_size"]), WHAT, name=query_id())
    outfile = json.dumps([[{"fileNumber": str(written.files), "totalRows": str(written.rows),
                            "fileSize": f"{written.bytes}bytes", "url": written.url}]])
    bulk_jobs.move(ctx, job, "FINISHED", ("EXPORTING",), progress="100%", info={"outfile": outfile})


bulk_jobs.RUNNERS["EXPORT"] = run_export
