"""Group commit (Doris `SET group_commit = off_mode | sync_mode | async_mode`): many small
`INSERT INTO t VALUES …` statements share one commit.

Each statement types and checks its rows exactly like a plain insert (`dml.prepare_rows`), so a bad
row fails that statement alone, before anything is batched. The typed rows are appended to the
table's open batch in this SQL server; the table's flusher thread writes the batch as one rowset per
partition × bucket and proposes one CommitRowsets (label `group_commit_<id>`) once the table's
`group_commit_interval_ms` (Doris default 10000) has passed since the batch's first rows, or at once
when the batch holds `group_commit_data_bytes` (Doris default 64 MB) of rows. `__seq` is renumbered
over the whole batch in the order statements were accepted, and batches of a table commit one after
the other in that order, so on a Unique Key table a later statement's row wins, as with plain inserts.

Guarantees:
- `sync_mode`: the statement returns once the batch's commit is applied by this server's replica
  (read-your-writes, answer status VISIBLE), exactly like a plain insert, only later.
- `async_mode`: Strata keeps no write-ahead log, so to lose nothing on a crash an async statement also
  waits until its batch's files are durable and its commit is accepted on `strata.events`; it returns
  then (its Done info says status PREPARE, as Doris answers; the MySQL OK carries no info today, so a
  client cannot tell the two modes apart). Durability, ordering and failure are therefore the same as
  sync_mode; the latency is not lower than sync_mode's. What a crash can cost: only statements that have
  not returned yet (their client sees the connection fail and never got an OK).
- A failed batch commit (table dropped or truncated, its schema changed since the rows were typed, the
  sequencer unreachable) fails every statement of the batch with the same error, async ones included;
  each failure is logged and counted in `strata_group_commit_failed_batches_total`.
- A schema change between accepting and flushing: the flusher re-reads the table and fails the batch
  (error 1105 "schema … changed") rather than committing rows typed for an older schema.
- Statements other than a label-less `INSERT INTO t VALUES …` (INSERT … SELECT, labelled inserts,
  DELETE, UPDATE, DDL) run as before with group commit on; they do not wait for pending batches.
"""

from __future__ import annotations

import logging
import threading
import time
import uuid
from dataclasses import dataclass, field
from typing import TYPE_CHECKING

import pyarrow as pa
from prometheus_client import Counter, Gauge

from query.context import Context, SessionState, SqlFailure
from schemas.errors import ErrorCode
from storage.paths import HIDDEN_SEQ

if TYPE_CHECKING:
    from projections.state import TableState

log = logging.getLogger(__name__)

MODES = ("off_mode", "sync_mode", "async_mode")
DEFAULT_INTERVAL_MS = 10_000  # Doris 2.1 / 3.0 default of the table property group_commit_interval_ms
DEFAULT_DATA_BYTES = 64 * 1024 * 1024  # Doris default of group_commit_data_bytes

BATCHES = Counter("strata_group_commit_batches_total", "group-commit batches committed")
ROWS = Counter("strata_group_commit_rows_total", "rows committed through group commit")
STATEMENTS = Counter("strata_group_commit_statements_total", "INSERT statements committed through group commit")
FAILED = Counter("strata_group_commit_failed_batches_total", "group-commit batches whose commit failed")
FAILED_STATEMENTS = Counter("strata_group_commit_failed_statements_total",
                            "statements (sync and async) failed by their batch's commit", ["mode"])
PENDING = Gauge("strata_group_commit_pending_rows", "rows accepted and not yet committed")


def session_mode(session: SessionState) -> str:
    mode = session.variables.get("group_commit", "off_mode").lower()
    return mode if mode in MODES else "off_mode"


def _table_int(table: TableState, key: str, default: int) -> int:
    try:
        return max(0, int(table.properties.get(key, default)))
    except ValueError:
        return default


@dataclass
class _Batch:
    schema_version: int
    deadline: float
    max_bytes: int
    label: str = field(default_factory=lambda: f"group_commit_{uuid.uuid4().hex}")
    parts: list[pa.Table] = field(default_factory=list)
    modes: list[str] = field(default_factory=list)
    nbytes: int = 0
    sealed: bool = False  # full, or followed by a batch of another schema: flush now, accept no more
    done: threading.Event = field(default_factory=threading.Event)
    error: SqlFailure | None = None

    @property
    def due(self) -> bool:
        return self.sealed or self.nbytes >= self.max_bytes or time.monotonic() >= self.deadline


class _TableBatcher:
    """The batches of one table, flushed strictly in the order they were opened by one thread."""

    def __init__(self, ctx: Context, table_id: int) -> None:
        self.ctx = ctx
        self.table_id = table_id
        self._cond = threading.Condition()
        self._queue: list[_Batch] = []  # [0] is the oldest; only the last one accepts rows
        self._thread: threading.Thread | None = None
        self._closed = False

    def submit(self, table: TableState, data: pa.Table, mode: str) -> _Batch:
        interval_ms = _table_int(table, "group_commit_interval_ms", DEFAULT_INTERVAL_MS)
        max_bytes = _table_int(table, "group_commit_data_bytes", DEFAULT_DATA_BYTES)
        version = table.schema_now.schema_version
        with self._cond:
            if self._closed:
                raise SqlFailure(ErrorCode.UNKNOWN_ERROR, "the SQL server is shutting down")
            last = self._queue[-1] if self._queue else None
            if last is None or last.sealed or last.schema_version != version:
                if last is not None:
                    last.sealed = True  # rows of two schemas never share a batch
                last = _Batch(schema_version=version, deadline=time.monotonic() + interval_ms / 1000,
                              max_bytes=max(1, max_bytes))
                self._queue.append(last)
            last.parts.append(data)
            last.modes.append(mode)
            last.nbytes += data.nbytes
            if last.nbytes >= last.max_bytes:
                last.sealed = True
            PENDING.inc(data.num_rows)
            if self._thread is None:
                self._thread = threading.Thread(target=self._run, name=f"group-commit-{self.table_id}", daemon=True)
                self._thread.start()
            self._cond.notify_all()
        return last

    def _run(self) -> None:
        while True:
            with self._cond:
                while True:
                    if not self._queue:
                        self._thread = None  # idle: the next submit starts a new flusher
                        return
                    head = self._queue[0]
                    if head.due or self._closed:
                        head.sealed = True
                        break
                    self._cond.wait(timeout=max(0.0, head.deadline - time.monotonic()))
            try:
                self._flush(head)
            finally:
                with self._cond:
                    self._queue.pop(0)
                    head.done.set()

    def _flush(self, batch: _Batch) -> None:
        from query.dml import commit_rows  # dml routes inserts here; importing it at the top would be a cycle

        rows = sum(p.num_rows for p in batch.parts)
        try:
            self.ctx.catch_up()  # a schema change or drop made through another server counts too
            table = self.ctx.projection.tables.get(self.table_id)
            if table is None or table.dropped_ts_ms is not None:
                raise SqlFailure(ErrorCode.NO_SUCH_TABLE, "the table was dropped while its group commit batch "
                                                          "was pending")
            if table.schema_now.schema_version != batch.schema_version:
                raise SqlFailure(ErrorCode.UNKNOWN_ERROR, f"the schema of '{table.name}' changed while its group "
                                                          "commit batch was pending; retry the insert")
            data = pa.concat_tables(batch.parts, promote_options="permissive")
            # One commit, one order: statements' rows keep their acceptance order in `__seq`.
            data = data.set_column(data.column_names.index(HIDDEN_SEQ), HIDDEN_SEQ,
                                   pa.array(range(data.num_rows), data.schema.field(HIDDEN_SEQ).type))
            commit_rows(self.ctx, table, data, label=batch.label, source="insert")
        except Exception as exc:  # noqa: BLE001 - every waiting statement must get an answer
            batch.error = exc if isinstance(exc, SqlFailure) else SqlFailure(
                ErrorCode.UNKNOWN_ERROR, f"group commit {batch.label} failed: {exc}")
            FAILED.inc()
            for mode in batch.modes:
                FAILED_STATEMENTS.labels(mode).inc()
            log.error("group commit %s of table %d failed (%d statements, %d rows, async %d): %s", batch.label,
                      self.table_id, len(batch.modes), rows, batch.modes.count("async_mode"), batch.error.message)
        else:
            BATCHES.inc()
            ROWS.inc(rows)
            STATEMENTS.inc(len(batch.modes))
        finally:
            PENDING.dec(rows)

    def close(self) -> None:
        """Flushes what is pending (the flusher stops waiting for deadlines) and refuses new rows."""
        with self._cond:
            self._closed = True
            self._cond.notify_all()
            thread = self._thread
        if thread is not None:
            thread.join(timeout=self.ctx.config.command_timeout_s + 5)


class GroupCommits:
    """This server's batchers, one per table that saw a group-committed insert."""

    def __init__(self, ctx: Context) -> None:
        self.ctx = ctx
        self._lock = threading.Lock()
        self._tables: dict[int, _TableBatcher] = {}

    def submit(self, table: TableState, data: pa.Table, mode: str) -> tuple[int, str]:
        """Adds typed rows (`dml.prepare_rows`) to the table's batch and waits for its commit; returns
        the count and the batch label, or raises the batch's failure."""
        if data.num_rows == 0:
            return 0, ""
        with self._lock:
            batcher = self._tables.get(table.table_id)
            if batcher is None:
                batcher = self._tables[table.table_id] = _TableBatcher(self.ctx, table.table_id)
        batch = batcher.submit(table, data, mode)
        interval_s = _table_int(table, "group_commit_interval_ms", DEFAULT_INTERVAL_MS) / 1000
        # The flusher always ends a batch (its catch-up and its proposal have timeouts); this bound only
        # keeps a client from hanging on a bug.
        if not batch.done.wait(interval_s + 3 * self.ctx.config.command_timeout_s + 10):
            # The flusher still owns the batch and will commit or fail it; this client just stops waiting.
            FAILED_STATEMENTS.labels(mode).inc()
            raise SqlFailure(ErrorCode.LOCK_WAIT_TIMEOUT, f"group commit {batch.label} did not finish in time; "
                                                          "its outcome is unknown (check the label)")
        if batch.error is not None:
            raise SqlFailure(batch.error.code, batch.error.message)
        return data.num_rows, batch.label

    def close(self) -> None:
        with self._lock:
            batchers = list(self._tables.values())
        for batcher in batchers:
            batcher.close()


def registry(ctx: Context) -> GroupCommits:
    """The server's GroupCommits, made on first use (the Context field starts empty)."""
    return ctx.made_once("group_commits", GroupCommits)
