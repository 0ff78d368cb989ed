"""Doris' Broker Load from S3: `LOAD LABEL db.label ([MERGE|APPEND|DELETE] DATA INFILE("s3://…") INTO
TABLE t … [DELETE ON cond]) WITH S3 (…) PROPERTIES (…)`, an asynchronous job (query.bulk_jobs) that
fetches the files with Strata's object store client and commits each target table's rows under the
job's label through the ordinary commit path (query.dml), so time travel stays exact.

Each data description is a Stream Load request (query.stream_load.request): its column list, SET,
WHERE, merge type and DELETE ON become the request's `columns`, `where`, `merge_type` and `delete`,
so both loads map, filter, type and judge rows by one path (`stream_load.job.loaded_batch`,
`stream_load.quality`). Rows that do not parse or fit are filtered; more than `max_filter_ratio` of
them cancels the job (ETL_QUALITY_UNSATISFIED) and commits nothing; the URL in SHOW LOAD serves them.

States: PENDING → LOADING (fetching, mapping, checking) → COMMITTED (committing; no longer
cancellable) → FINISHED, or CANCELLED (CANCEL LOAD, its `timeout`, too many filtered rows, or an
error, shown in ErrorMsg). A job resumed after a restart commits only the tables its label is not
yet on. Rows of several tables are committed table by table (Strata commits one table at a time):
a job that fails between two such commits is CANCELLED with the tables already committed named in
ErrorMsg.
"""

from __future__ import annotations

import contextlib
import json
import time
from collections.abc import Iterator
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import duckdb
import pyarrow as pa
import pyarrow.parquet as pq
import sqlglot

from projections.bulk_jobs import BulkJob
from projections.load_source import source_fields
from projections.rows import RowsetsWriter, RowsRejected
from projections.state import TableState
from query import bulk_jobs, dml
from query.context import Context, Done, SessionState, SqlFailure
from query.file_formats import READ_FORMATS, check_format, text_options
from query.identifiers import quoted
from query.parser import DIALECT
from query.parser import statements as st
from query.reads import duck_error
from query.s3_location import CONNECTION_KEYS, S3Target, connection_properties, lowered, store_errors, target
from query.s3_source import matching_objects
from query.sandbox import check_expression
from query.spool import spool_file
from query.stream_load import error_log, quality, scan
from query.stream_load.job import loaded_batch
from query.stream_load.readers import Source, read_sources
from query.stream_load.request import BadRequest, StreamLoadRequest, parse_request
from schemas.errors import ErrorCode

_PROPERTIES = frozenset({"timeout", "max_filter_ratio", "strict_mode", "comment"})
DEFAULT_TIMEOUT_S = 14400  # Doris' broker load timeout, 4 hours
WHAT = "Broker Load"
QUALITY_ERROR = "type:ETL_QUALITY_UNSATISFIED; msg:quality not good enough to cancel"  # Doris' words
# Formats whose decoded columns are matched to the load's fields by name (Stream Load's Parquet path).
_BY_NAME = ("parquet", "orc")  # formats whose columns the file names: matched to the table by name
_REPORT_EVERY_S = 2.0  # how often SHOW LOAD's progress of a running job is brought up to date


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


def _headers(spec: dict[str, Any], d: dict[str, Any], fields: list[str]) -> dict[str, str]:
    """The data description as Stream Load headers; `fields` are the file's columns as the load names them."""
    assignments = [f"{quoted(name)} = {expr}" for name, expr in d["set"]]
    headers = {"format": d["format"],
               "columns": ", ".join([quoted(f) for f in fields] + assignments),
               "merge_type": d.get("merge_type", "APPEND"),
               "max_filter_ratio": str(spec.get("max_filter_ratio", "0")),
               "strict_mode": str(spec.get("strict_mode", "false")).lower(),
               **{k: v for k, v in d["options"].items()}}
    if d["format"] == "json":
        headers["read_json_by_line"] = "true"  # one object per line, as S3() reads JSON
    for key, value in (("where", d["where"]), ("delete", d.get("delete_on")),
                       ("partitions", ",".join(d["partitions"]))):
        if value:
            headers[key] = value
    return headers




def _request(spec: dict[str, Any], d: dict[str, Any], table: TableState, fields: list[str]) -> StreamLoadRequest:
    try:
        return parse_request(_headers(spec, d, fields), table)
    except BadRequest as exc:
        raise SqlFailure(ErrorCode.WRONG_ARGUMENTS, f"{WHAT}: {exc}") from None


def _default_fields(d: dict[str, Any], table: TableState, file_columns: list[str] | None) -> list[str]:
    """The file's fields as the load names them: its column list, or else the table's columns in
    order (CSV, JSON) or the file's columns the table has (formats matched by name)."""
    if d["columns"]:
        return list(d["columns"])
    if d["format"] in _BY_NAME and file_columns is not None:
        return [n for n in file_columns if table.schema_now.column(n) is not None]
    return [c.name for c in table.schema_now.visible_columns]


def _data_spec(ctx: Context, session: SessionState, db: str, data: st.LoadData,
               s3: dict[str, str], spec: dict[str, Any]) -> dict[str, Any]:
    table = ctx.table(session, st.QualifiedName(data.table, db))
    if table.auto_partition is not None:
        raise SqlFailure(ErrorCode.NOT_SUPPORTED_YET, f"{WHAT} into AUTO PARTITION table '{table.name}' is not "
                                                      "supported yet; use INSERT INTO … SELECT … FROM S3(…)")
    fmt = check_format(data.format or "csv", READ_FORMATS, WHAT)
    options = {k: v for k, v in (("column_separator", data.column_separator),
                                 ("line_delimiter", data.line_delimiter)) if v is not None}
    text_options(options)
    for path in data.paths:
        target(ctx, path, s3, WHAT)  # the URI and keys are usable (no request yet)
    d: dict[str, Any] = {"paths": list(data.paths), "table": table.name, "table_id": table.table_id,
         "partitions": list(data.partitions), "format": fmt, "options": options, "columns": list(data.columns),
         "set": [[c.name, c.expr.sql(dialect=DIALECT)] for c in data.set if c.expr is not None],
         "where": data.where.sql(dialect=DIALECT) if data.where is not None else None,
         "merge_type": data.merge_type,
         "delete_on": data.delete_on.sql(dialect=DIALECT) if data.delete_on is not None else None}
    for text in [*(expr for _, expr in d["set"]), d["where"], d["delete_on"]]:
        if text:
            _expression(text)
    _request(spec, d, table, _default_fields(d, table, None))  # the mapping fits the table now
    return d


def _ratio(properties: dict[str, str]) -> str:
    text = properties.get("max_filter_ratio", "0")
    try:
        ratio = float(text)
    except ValueError:
        ratio = -1.0
    if not 0.0 <= ratio <= 1.0:
        raise SqlFailure(ErrorCode.WRONG_ARGUMENTS, f"max_filter_ratio must be a number from 0 to 1, not '{text}'")
    return text


def _strict_mode(properties: dict[str, str]) -> bool:
    text = properties.get("strict_mode", "false").strip().lower()
    if text not in ("true", "false"):
        raise SqlFailure(ErrorCode.WRONG_ARGUMENTS, f"strict_mode must be true or false, not '{text}'")
    return text == "true"


def create_broker_load(ctx: Context, session: SessionState, s: st.BrokerLoad) -> Done:
    ctx.catch_up()
    _, db = ctx.database_id(session, s.label.db)
    s3 = lowered(s.s3_properties)
    _check_properties(s.properties, s3)
    spec: dict[str, Any] = {"user": session.user, "db": db, "timeout": _timeout(s.properties),
                            "max_filter_ratio": _ratio(s.properties), "strict_mode": _strict_mode(s.properties),
                            "comment": s.properties.get("comment", "")}
    spec["data"] = [_data_spec(ctx, session, db, d, s3, spec) for d in s.data]
    for d in spec["data"]:
        if ctx.projection.label(d["table_id"], s.label.name) is not None:
            raise SqlFailure(ErrorCode.LABEL_ALREADY_EXISTS, f"Label [{s.label.name}] has already been used")
    spec["s3"] = ctx.stores.box.seal_properties(connection_properties(s3))
    bulk_jobs.create(ctx, "LOAD", db, s.label.name, spec)
    return Done()


@dataclass
class _Tally:
    """What the job has read so far: SHOW LOAD's counts, reported as it goes (`_Tally.report`)."""

    total_bytes: int
    rejected: error_log.ErrorLog
    counts: dict[str, int] = field(default_factory=lambda: dict.fromkeys(
        ("files", "bytes", "scanned", "unselected", "normal", "abnormal"), 0))
    done_bytes: int = 0  # of the files read to their end
    reading_bytes: int = 0  # of the file being read, read so far (Source.read_share)
    reported_at: float = 0.0

    def report(self, ctx: Context, job: BulkJob) -> None:
        """The job's progress on the log, at most every `_REPORT_EVERY_S` (each report is a command)."""
        now = time.monotonic()
        if job.state == "COMMITTED" or now - self.reported_at < _REPORT_EVERY_S:
            return  # a committed job resumed after a restart reads its files again, past LOADING
        self.reported_at = now
        share = min(99, (self.done_bytes + self.reading_bytes) * 100 // max(self.total_bytes, 1))
        info = {k: str(self.counts[k]) for k in ("files", "bytes", "scanned")}
        if not bulk_jobs.move(ctx, job, "LOADING", ("LOADING",), progress=f"ETL:N/A; LOAD:{share}%", info=info):
            raise bulk_jobs.JobCancelled()


@contextlib.contextmanager
def _spooled(ctx: Context, where: S3Target, key: str) -> Iterator[Path]:
    """The object in a spool file on local disk, streamed there (never whole in memory); removed after."""
    path = spool_file(ctx.config.home, ".object")
    try:
        with store_errors(WHAT):
            where.store.download(key, path)
        yield path
    finally:
        path.unlink(missing_ok=True)


def _sources(ctx: Context, table: TableState, request: StreamLoadRequest, path: Path, uri: str) -> Iterator[Source]:
    """One spooled file as the load's sources, a chunk at a time (`stream_load_chunk_bytes`): CSV
    (a header skipped, as Doris loads csv_with_names) and JSON lines by lines, Parquet by row groups,
    ORC by stripes."""
    try:
        yield from read_sources(request, path, source_fields(request, table), ctx.config.stream_load_chunk_bytes)
    except BadRequest as exc:
        raise SqlFailure(ErrorCode.WRONG_ARGUMENTS, f"{WHAT}: {uri}: {exc}") from None


def _file_columns(path: Path, fmt: str) -> list[str]:
    if fmt == "parquet":
        return list(pq.ParquetFile(str(path)).schema_arrow.names)
    from pyarrow import orc  # optional part of pyarrow: imported only when asked for
    return list(orc.ORCFile(str(path)).schema.names)


def _checked(ctx: Context, spec: dict[str, Any], d: dict[str, Any], table: TableState,
             request: StreamLoadRequest | None, path: Path, uri: str) -> Iterator[scan.Checked]:
    """One spooled file's rows checked by Stream Load's mapping and checks, a batch at a time, each
    with the (reason, source text) of the rows it rejects and the share of the file read: a plain CSV
    or a Parquet file by one DuckDB statement (`scan`), the others a chunk at a time (`_sources`)."""
    if request is None:  # Parquet and ORC: the file names its columns
        try:
            names = _file_columns(path, d["format"])
        except (pa.ArrowInvalid, OSError) as exc:
            raise SqlFailure(ErrorCode.WRONG_ARGUMENTS,
                             f"{WHAT}: {uri}: not a readable {d['format']} file ({exc})") from None
        request = _request(spec, d, table, _default_fields(d, table, names))
    if scan.usable(table, request, path, ctx.config.home):
        with _job_errors():
            yield from scan.batches(table, request, path, ctx.config.stream_load_chunk_bytes)
        return
    for source in _sources(ctx, table, request, path, uri):
        with _job_errors():
            loaded = loaded_batch(ctx, table, request, source)
        yield loaded, quality.rejected_rows(source, loaded.bad), source.read_share


@contextlib.contextmanager
def _job_errors() -> Iterator[None]:
    """Stream Load's mapping and checks' failures as the job's."""
    try:
        yield
    except (RowsRejected, BadRequest) as exc:
        message = exc.message if isinstance(exc, RowsRejected) else str(exc)
        raise SqlFailure(exc.code if isinstance(exc, RowsRejected) else ErrorCode.WRONG_ARGUMENTS,
                         f"{WHAT}: {message}") from None
    except duckdb.Error as exc:
        raise SqlFailure(ErrorCode.UNKNOWN_ERROR, duck_error(exc)[1]) from None


def _listed(ctx: Context, d: dict[str, Any], s3: dict[str, str]) -> list[tuple[S3Target, str, int]]:
    """(where, key, size) of every object the data description's paths match."""
    found = []
    for path in d["paths"]:
        where = target(ctx, path, s3, WHAT)
        found += [(where, key, size) for key, size in matching_objects(where, WHAT)]
    return found


def _load_description(ctx: Context, job: BulkJob, spec: dict[str, Any], d: dict[str, Any],
                      files: list[tuple[S3Target, str, int]], writer: RowsetsWriter, tally: _Tally,
                      deadline_ms: int) -> None:
    """Every file of one data description, read, checked and written a chunk at a time by `writer`."""
    table = writer.table
    # Text formats name their fields before reading; formats matched by name may differ file by file.
    request = None if d["format"] in _BY_NAME else _request(spec, d, table, _default_fields(d, table, None))
    for where, key, size in files:
        uri = f"s3://{where.bucket}/{key}"
        tally.counts["files"] += 1
        with _spooled(ctx, where, key) as path:
            tally.counts["bytes"] += size
            for loaded, rejected, read_share in _checked(ctx, spec, d, table, request, path, uri):
                if loaded.rows.num_rows:
                    writer.append(loaded.rows)
                tally.rejected.add(rejected)
                tally.counts["scanned"] += loaded.rows.num_rows + loaded.bad.num_rows + loaded.unselected
                tally.counts["unselected"] += loaded.unselected
                tally.counts["normal"] += loaded.rows.num_rows
                tally.counts["abnormal"] += loaded.bad.num_rows
                bulk_jobs.still_running(ctx, job)
                _check_deadline(spec, deadline_ms)
                tally.reading_bytes = int(size * read_share)
                tally.report(ctx, job)
        tally.done_bytes += size
        tally.reading_bytes = 0


def _check_deadline(spec: dict[str, Any], deadline_ms: int) -> None:
    if time.time() * 1000 > deadline_ms:
        raise SqlFailure(ErrorCode.UNKNOWN_ERROR, f"LoadTimeout: the load ran past its timeout of "
                                                  f"{spec['timeout']} s")


def _live_table(ctx: Context, d: dict[str, Any]) -> TableState:
    table = ctx.projection.tables.get(d["table_id"])
    if table is None or table.dropped_ts_ms is not None:
        raise SqlFailure(ErrorCode.NO_SUCH_TABLE, f"table '{d['table']}' was dropped")
    return table


def _expression(text: str) -> sqlglot.exp.Expr:
    """A SET, WHERE or DELETE ON expression, checked by the sandbox (again when the job runs: the
    spec is read back from the log)."""
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
    s3 = ctx.stores.box.open_properties(dict(spec["s3"]))
    for d in spec["data"]:
        for text in [*(expr for _, expr in d["set"]), d["where"], d.get("delete_on")]:
            if text:
                _expression(text)
    listed = [_listed(ctx, d, s3) for d in spec["data"]]
    tally = _Tally(total_bytes=sum(size for files in listed for _, _, size in files),
                   rejected=error_log.ErrorLog(ctx.config.home))
    writers: dict[int, RowsetsWriter] = {}  # by table: one commit each, whatever the files and chunks
    try:
        for d, files in zip(spec["data"], listed, strict=True):
            table = _live_table(ctx, d)
            writer = writers.setdefault(table.table_id, dml.rowsets_writer(ctx, table))
            _load_description(ctx, job, spec, d, files, writer, tally,
                              job.created_ts_ms + int(spec["timeout"]) * 1000)
        _commit(ctx, job, spec, writers, tally)
    finally:
        tally.rejected.close()
        for writer in writers.values():
            writer.abandon()  # the files of a load that failed (once committed, none is left open)


def _commit(ctx: Context, job: BulkJob, spec: dict[str, Any], writers: dict[int, RowsetsWriter],
            tally: _Tally) -> None:
    counts = tally.counts
    info = {k: str(v) for k, v in counts.items()}
    if (url := quality.error_url(tally.rejected.close(), quality.server_url(ctx))) is not None:
        info["url"] = url
    if quality.too_many_filtered(counts["abnormal"], counts["normal"], float(spec.get("max_filter_ratio", "0"))):
        if not bulk_jobs.move(ctx, job, "CANCELLED", ("LOADING", "PENDING"), info=info, error=QUALITY_ERROR):
            raise bulk_jobs.JobCancelled()
        return
    if job.state != "COMMITTED" and not bulk_jobs.move(ctx, job, "COMMITTED", ("LOADING", "PENDING"),
                                                       progress="ETL:100%; LOAD:99%", info=info):
        raise bulk_jobs.JobCancelled()
    committed: list[str] = []
    try:
        for table_id, writer in writers.items():
            table = ctx.projection.tables.get(table_id, writer.table)
            if ctx.projection.label(table_id, job.label) is not None:
                committed.append(table.name)  # committed before a restart
                continue
            rowsets = writer.finish()
            if rowsets:
                dml.commit_rowsets(ctx, table, rowsets, sum(r.num_rows for r in rowsets), label=job.label,
                                   source="broker_load")
            committed.append(table.name)
    except SqlFailure as failure:
        done = f" (already committed: {', '.join(committed)})" if committed else ""
        raise SqlFailure(failure.code, f"{failure.message}{done}") from None
    bulk_jobs.move(ctx, job, "FINISHED", ("COMMITTED",), progress="ETL:100%; LOAD:100%", info=info)


bulk_jobs.RUNNERS["LOAD"] = run_load
