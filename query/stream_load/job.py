"""One Stream Load, from its spooled body to its reply: read with the request's format, mapped and
checked like a routine load's batch (`projections.load_source`), and committed like an INSERT
(`query.dml.commit_rows`, or a group commit batch, or a prepared transaction for 2PC).

Runs on a worker thread. A body is loaded a chunk at a time (`_chunked`), each chunk's rows appended
to the load's rowset files (one per partition × bucket) as they are checked, committed once the
filter ratio is decided: a failed load commits nothing and removes its files. The bodies that cannot
be (`_whole_reason`) are checked whole before any rowset file is written, up to a size bound."""

from __future__ import annotations

import logging
import time
from collections.abc import Iterator
from pathlib import Path

import duckdb

from projections.load_source import CARRIED, LoadedBatch, Rewrite, load_batch, plan_load, source_fields
from projections.rows import RowsetsWriter, RowsRejected
from projections.state import TableState
from query import group_commit
from query.context import Context, SqlFailure
from query.dml import AutoIncrement, commit_rows, commit_rowsets, rowsets_writer, with_stored_values
from query.reads import duck_error
from query.stream_load import error_log, quality, scan, transactions
from query.stream_load.readers import Source, read_sources
from query.stream_load.reply import FAIL, LABEL_EXISTS, LoadReply
from query.stream_load.request import BadRequest, StreamLoadRequest
from schemas.errors import ErrorCode
from schemas.model import Column

log = logging.getLogger("strata.stream_load")


def existing_label(ctx: Context, table: TableState, label: str) -> LoadReply | None:
    """Doris' answer to a label already used on the table: the first job's status."""
    used = ctx.projection.label(table.table_id, label)
    if used is not None:
        return LoadReply(label=label, status=LABEL_EXISTS, existing_job_status="FINISHED", txn_id=used.commit_number,
                         message=f"[LABEL_ALREADY_EXISTS]Label [{label}] has already been used, relate to commit "
                                 f"{used.commit_number} ({used.num_rows} rows), status=[VISIBLE]")
    prepared = transactions.by_label(ctx, table.table_id, label)
    if prepared is not None:
        return LoadReply(label=label, status=LABEL_EXISTS, existing_job_status="RUNNING", txn_id=prepared.txn_id,
                         message=f"[LABEL_ALREADY_EXISTS]Label [{label}] has already been used, relate to txn "
                                 f"[{prepared.txn_id}], status=[PRECOMMITTED]")
    return None


def loaded_batch(ctx: Context, table: TableState, request: StreamLoadRequest, source: Source) -> LoadedBatch:
    """The source's rows mapped, typed and checked as the request says (nothing written yet)."""
    cur = ctx.cursor()
    try:
        plan = plan_load(request, table, parsed_sql=source.parsed_sql, delete_sql=request.delete_sql)
        # An AUTO PARTITION table gets the partitions its rows need, created by this load's own commit.
        next_id = ctx.projection.next_ids["partition"] if table.auto_partition is not None else None
        return load_batch(cur, table, request, plan, source.records, next_partition_id=next_id,
                          allocate=AutoIncrement.of(ctx, table), rewrite=_partial_rewrite(ctx, table, request))
    finally:
        cur.close()


def checked_batches(ctx: Context, table: TableState, request: StreamLoadRequest, body: Path, *,
                    chunked: bool) -> Iterator[scan.Checked]:
    """The body's rows checked as the request says, a batch at a time (`chunked`; else one batch),
    each with the (reason, source text) of the rows it rejects and the share of the body read; at least
    one batch comes. A plain
    CSV or Parquet body read in chunks is read by one DuckDB statement (`scan`), the others by `readers`."""
    if chunked and scan.usable(table, request, body, ctx.config.home):
        yield from scan.batches(table, request, body, ctx.config.stream_load_chunk_bytes)
        return
    chunk_bytes = ctx.config.stream_load_chunk_bytes if chunked else None
    for source in read_sources(request, body, source_fields(request, table), chunk_bytes):
        loaded = loaded_batch(ctx, table, request, source)
        yield loaded, quality.rejected_rows(source, loaded.bad), source.read_share


def _partial_rewrite(ctx: Context, table: TableState, request: StreamLoadRequest) -> Rewrite | None:
    """`partial_columns: true`: the columns the load leaves out keep each key's stored values, as a
    partial-update INSERT does (query.dml.with_stored_values)."""
    if not request.partial_columns:
        return None
    if table.keys_model != "UNIQUE" or \
            table.properties.get("enable_unique_key_merge_on_write", "true").lower() == "false":
        raise BadRequest(f"partial_columns needs a merge-on-write UNIQUE KEY table; '{table.name}' is not one")
    if request.merge_type != "APPEND":
        raise BadRequest("partial_columns with merge_type DELETE or MERGE is not supported")

    def rewrite(source_sql: str, targets: list[Column]) -> tuple[str, list[Column]]:
        return with_stored_values(ctx, table, source_sql, targets, carry=CARRIED)
    return rewrite


def run(ctx: Context, table: TableState, request: StreamLoadRequest, body: Path, load_bytes: int,
        base_url: str) -> LoadReply:
    """Loads the body into `table`; the reply says what happened (it never raises for a bad load)."""
    started = time.monotonic()
    if request.user_label:
        existing = existing_label(ctx, table, request.label)
        if existing is not None:
            existing.load_bytes = load_bytes
            return existing
    reply = LoadReply(label=request.label, load_bytes=load_bytes, two_phase_commit=request.two_phase_commit)
    try:
        _run(ctx, table, request, body, reply, base_url)
    except BadRequest as exc:
        reply.status, reply.message = FAIL, f"[INVALID_ARGUMENT]{exc}"
    except RowsRejected as exc:
        reply.status, reply.message = FAIL, f"[ANALYSIS_ERROR]{exc.message}"
    except SqlFailure as exc:
        status = LABEL_EXISTS if exc.code == ErrorCode.LABEL_ALREADY_EXISTS else FAIL
        reply.status, reply.message = status, f"[{'LABEL_ALREADY_EXISTS' if status == LABEL_EXISTS else 'ERROR'}]" \
                                              f"{exc.message}"
        if status == LABEL_EXISTS:  # taken by a load that committed (or prepared) meanwhile
            ctx.catch_up()
            prepared = transactions.by_label(ctx, table.table_id, request.label)
            reply.existing_job_status = "RUNNING" if prepared is not None else "FINISHED"
    except duckdb.Error as exc:
        reply.status, reply.message = FAIL, f"[ANALYSIS_ERROR]{duck_error(exc)[1]}"
    if reply.status == FAIL:
        reply.loaded_rows = 0
    reply.load_time_ms = int((time.monotonic() - started) * 1000)
    log.info("stream load %s into %s: %s, %d loaded, %d filtered, %d unselected", request.label, table.name,
             reply.status, reply.loaded_rows, reply.filtered_rows, reply.unselected_rows)
    return reply


def _chunked(table: TableState, request: StreamLoadRequest) -> bool:
    """Whether the body may be loaded a chunk at a time, each chunk's rows written as soon as they are
    checked (and committed together): so a body larger than the server's memory loads. Rows of one
    key in a Unique or Aggregate Key table merge in load order (`RowsetsWriter` keeps that order
    across chunks), so those load in chunks too. A partial update (`partial_columns`) reads stored
    rows, AUTO PARTITION, 2PC and group commit take one batch of rows: those bodies are loaded whole."""
    return table.auto_partition is None and not request.two_phase_commit and request.group_commit == "off_mode" \
        and not request.partial_columns


def _whole_reason(table: TableState, request: StreamLoadRequest) -> str | None:
    """Why this body is read whole (None: it is read a chunk at a time)."""
    if not _chunked(table, request):
        return "a load with partial_columns, 2PC, group commit or into an AUTO PARTITION table is loaded whole"
    if request.format == "json" and not request.read_json_by_line:
        return "a JSON document (without read_json_by_line) is read whole"
    if request.format == "csv" and (request.enclose is not None or request.escape is not None):
        return "a CSV body with enclose or escape is read whole"
    return None


def check_whole_size(table: TableState, request: StreamLoadRequest, body_bytes: int, limit: int) -> None:
    """A body read whole takes about ten times its size in memory: beyond `limit` it is refused."""
    reason = _whole_reason(table, request)
    if reason is not None and body_bytes > limit:
        raise BadRequest(f"{reason}; this body holds {body_bytes} bytes, more than the {limit} a load read "
                         "whole may hold (STRATA_LOAD_WHOLE_MAX_BYTES)")


def _run(ctx: Context, table: TableState, request: StreamLoadRequest, body: Path, reply: LoadReply,
         base_url: str) -> None:
    check_whole_size(table, request, reply.load_bytes, ctx.config.load_whole_max_bytes)
    writer = rowsets_writer(ctx, table) if _chunked(table, request) else None
    try:
        _load(ctx, table, request, body, reply, base_url, writer)
    finally:
        if writer is not None:
            writer.abandon()  # the files of a load that failed (once committed, none is left open)


def _load(ctx: Context, table: TableState, request: StreamLoadRequest, body: Path, reply: LoadReply,
          base_url: str, writer: RowsetsWriter | None) -> None:
    """`writer`: the body is loaded in chunks, each chunk's rows written by it as they are checked."""
    loaded: LoadedBatch | None = None  # not chunked: the whole body's rows
    with error_log.ErrorLog(ctx.config.home) as rejected:
        for loaded, rows_rejected, _ in checked_batches(ctx, table, request, body, chunked=writer is not None):
            reply.loaded_rows += loaded.rows.num_rows
            reply.filtered_rows += loaded.bad.num_rows
            reply.unselected_rows += loaded.unselected
            rejected.add(rows_rejected)
            if writer is not None and loaded.rows.num_rows:
                writer.append(loaded.rows)
    reply.error_url = quality.error_url(rejected.name, base_url)  # the log is closed: every row is on disk
    assert loaded is not None  # read_sources gives at least one
    reply.total_rows = reply.loaded_rows + reply.filtered_rows + reply.unselected_rows
    if quality.too_many_filtered(reply.filtered_rows, reply.loaded_rows, request.max_filter_ratio):
        reply.status, reply.message = FAIL, "[DATA_QUALITY_ERROR]too many filtered rows"
        return
    target = loaded.table or table
    if request.two_phase_commit:
        reply.txn_id = transactions.prepare(ctx, target, loaded.rows, request, loaded.new_partitions)
        reply.message = "OK"
        return
    if reply.loaded_rows == 0:
        reply.message = "OK"  # nothing to commit: the label stays free, as Doris keeps no empty transaction
        return
    if request.group_commit != "off_mode":
        if loaded.new_partitions:
            raise BadRequest("group commit cannot load rows that need new AUTO PARTITION partitions")
        _, reply.label = group_commit.registry(ctx).submit(table, loaded.rows, request.group_commit)
        reply.group_commit = True
        return
    if writer is not None:
        commit_rowsets(ctx, table, writer.finish(), reply.loaded_rows, label=request.label, source="stream_load")
    else:
        commit_rows(ctx, target, loaded.rows, label=request.label, source="stream_load",
                    new_partitions=loaded.new_partitions)
    used = ctx.projection.label(table.table_id, request.label)
    reply.txn_id = used.commit_number if used is not None else -1
