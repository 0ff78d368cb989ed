"""The change feed (DESIGN §11): the rows each commit added and removed, as Arrow.

A commit's changes are the difference between the table right after it and right before it (the
sequencer gives every event its own millisecond, so `ts_ms - 1` is exactly the state before). Rows
only after are `insert`, rows only before are `delete` (multiset difference, so duplicate rows of a
Duplicate Key table count); on Unique and Aggregate Key tables a key on both sides is an
`update_preimage` + `update_postimage` pair. The old state must still be readable, so the table
needs time travel, and only commits inside its history can be read.

Schema changes: every row is given the columns of the schema in force at the end of the read
(matched by column id, so renames follow; a column a commit's schema lacks reads as its default,
NULL without one, as older rows do in the current table). A schema change commit itself adds or
removes no row, and a new column's default is not a change of the rows: it yields none — unless it
changes how the rows read in the end columns. A column dropped and brought back by a RESTORE reads
as its default while it was gone, so its drop (and the RESTORE) change the rows' values there; left
out, the feed would delete rows it never inserted and the versions folded from it (query.history)
would never end.
"""

from __future__ import annotations

import shutil
import tempfile
import time
import uuid
from dataclasses import dataclass, replace
from pathlib import Path
from typing import Protocol

import duckdb
import pyarrow as pa

from projections.follower import EventFollower
from projections.projection import Projection
from projections.remote import open_locator
from projections.retention import earliest_instant_ms
from projections.snapshot import Snapshot, resolve
from projections.state import CommitRecord, TableState
from query.context import SqlFailure
from query.relation import default_sql, quote_ident, quote_literal, read_type, snapshot_sql
from schemas.config import Settings
from schemas.errors import ErrorCode
from schemas.model import TableSchema
from storage.locator import RowsetLocator

CHANGE_COLUMNS = ("_change_type", "_commit_version", "_commit_timestamp")
# Commits that never add or remove a row; skipping them saves two snapshot reads each.
_NO_ROW_CHANGES = frozenset({"add_partition"})
# Kinds whose partition_versions name every partition they touched; others are diffed whole.
_PARTITION_SCOPED = frozenset({"load", "delete", "update", "truncate", "overwrite"})
_RANK = {"delete": 0, "update_preimage": 1, "update_postimage": 2, "insert": 3}


class FeedSource(Protocol):
    """What reading changes needs; `query.context.Context` and `TableChanges` both provide it."""

    @property
    def projection(self) -> Projection: ...

    @property
    def locator(self) -> RowsetLocator: ...

    @property
    def config(self) -> Settings: ...


def _now_ms() -> int:
    return int(time.time() * 1000)


def check_history(source: FeedSource, table: TableState, commits: list[CommitRecord]) -> None:
    """Refuses a read whose oldest state is no longer kept (or never was)."""
    if not table.time_travel:
        raise SqlFailure(ErrorCode.NOT_SUPPORTED_YET,
                         f"table '{table.name}' has no time travel, so the old versions a change feed compares "
                         f"against are not kept; enable it with ALTER TABLE {table.name} SET "
                         "(\"enable_time_travel\" = \"true\")")
    earliest = earliest_instant_ms(table, _now_ms(), source.config.time_travel_day_s)
    if earliest is None or not commits:
        return
    first = commits[0]
    if first.ts_ms - 1 < earliest:
        readable = [c.commit_number for c in source.projection.commits(table.table_id) if c.ts_ms - 1 >= earliest]
        hint = (f"changes can be read from commit {readable[0]} on (startVersion {readable[0] - 1})" if readable
                else "no commit's changes can be read yet")
        raise SqlFailure(ErrorCode.WRONG_ARGUMENTS,
                         f"commit {first.commit_number} of '{table.name}' is older than the history kept "
                         f"(time travel window or since it was enabled); {hint}")


def commit_at(projection: Projection, table: TableState, ts_ms: int) -> int:
    """The last commit at or before `ts_ms` (0: none)."""
    return max((c.commit_number for c in projection.commits(table.table_id) if c.ts_ms <= ts_ms), default=0)


def commits_between(projection: Projection, table: TableState, start_after: int, end: int | None) -> list[CommitRecord]:
    """Commits numbered in (start_after, end]; `end` None is the latest."""
    last = table.commit_number if end is None else end
    if start_after < 0 or last < start_after:
        raise SqlFailure(ErrorCode.WRONG_ARGUMENTS,
                         f"the change range of '{table.name}' ends (commit {last}) before it starts "
                         f"(after commit {start_after})")
    if last > table.commit_number:
        raise SqlFailure(ErrorCode.WRONG_ARGUMENTS,
                         f"table '{table.name}' has no commit {last} (commits are 1 to {table.commit_number})")
    return [c for c in projection.commits(table.table_id) if start_after < c.commit_number <= last]


def projected_sql(snapshot: Snapshot, locator: RowsetLocator, schema: TableSchema) -> str:
    """The snapshot's rows with `schema`'s columns, found by column id."""
    present = {c.unique_id: c.name for c in snapshot.schema.columns}
    # A column added later reads as its default, as the rows written before it do in today's table.
    items = [f"CAST({quote_ident(present[c.unique_id])} AS {read_type(c.type)})" if c.unique_id in present
             else f"CAST({default_sql(c)} AS {read_type(c.type)})" for c in schema.columns]
    select = ", ".join(f"{item} AS {quote_ident(c.name)}" for item, c in zip(items, schema.columns, strict=True))
    return f"SELECT {select} FROM ({snapshot_sql(snapshot, locator)})"


def _scoped(snapshot: Snapshot, partitions: set[int] | None) -> Snapshot:
    if partitions is None:
        return snapshot
    return replace(snapshot, partitions=tuple(p for p in snapshot.partitions if p.partition_id in partitions))


def _commit_sql(source: FeedSource, table: TableState, commit: CommitRecord, schema: TableSchema) -> str:
    scope = set(commit.partition_versions) if commit.kind in _PARTITION_SCOPED else None
    before = _scoped(resolve(source.projection, table, commit.ts_ms - 1), scope)
    after = _scoped(resolve(source.projection, table, commit.ts_ms), scope)
    b = projected_sql(before, source.locator, schema)
    a = projected_sql(after, source.locator, schema)
    stamp = (f"{commit.commit_number}::BIGINT AS _commit_version, "
             f"make_timestamp({commit.ts_ms * 1000}::BIGINT) AS _commit_timestamp")
    keys = [quote_ident(c.name) for c in schema.columns if c.is_key]
    if table.keys_model == "DUPLICATE" or not keys:
        typed = ("SELECT *, 'insert' AS _change_type FROM __ins "
                 "UNION ALL SELECT *, 'delete' AS _change_type FROM __del")
    else:
        def matched(side: str, other: str) -> str:
            same = " AND ".join(f"{other}.{k} IS NOT DISTINCT FROM {side}.{k}" for k in keys)
            return f"EXISTS (SELECT 1 FROM {other} WHERE {same})"
        typed = (f"SELECT __ins.*, CASE WHEN {matched('__ins', '__del')} THEN 'update_postimage' ELSE 'insert' END "
                 f"AS _change_type FROM __ins UNION ALL "
                 f"SELECT __del.*, CASE WHEN {matched('__del', '__ins')} THEN 'update_preimage' ELSE 'delete' END "
                 f"AS _change_type FROM __del")
    return (f"SELECT *, {stamp} FROM (WITH __b AS MATERIALIZED ({b}), __a AS MATERIALIZED ({a}), "
            f"__ins AS (SELECT * FROM __a EXCEPT ALL SELECT * FROM __b), "
            f"__del AS (SELECT * FROM __b EXCEPT ALL SELECT * FROM __a) {typed})")


def _may_change_rows(table: TableState, commit: CommitRecord, schema: TableSchema) -> bool:
    """Whether `commit` may change the rows as read in `schema`'s columns. A schema change only does when
    one of those columns reads otherwise after it (present or not, or of another type): a column it
    dropped that `schema` has again reads as its default from there on."""
    if commit.kind in _NO_ROW_CHANGES:
        return False
    if commit.kind != "schema_change":
        return True
    def read_as(then: TableSchema | None) -> list[str | None]:
        types = {c.unique_id: c.type for c in then.columns} if then is not None else {}
        return [types.get(c.unique_id) for c in schema.columns]
    return read_as(table.schema_at(commit.ts_ms - 1)) != read_as(table.schema_at(commit.ts_ms))


def changes_sql(source: FeedSource, table: TableState, commits: list[CommitRecord],
                schema: TableSchema | None = None) -> str:
    """DuckDB SQL of the change rows of `commits` (in commit order, then by key, a pre-image before
    its post-image), with the columns of `schema` (default: the table's current one)."""
    check_history(source, table, commits)
    schema = schema or table.schema_now
    # Doris' hidden columns (a hidden sequence column) are not part of a change row.
    schema = schema.model_copy(update={"columns": schema.visible_columns})
    parts = [_commit_sql(source, table, c, schema) for c in commits if _may_change_rows(table, c, schema)]
    columns = ", ".join(quote_ident(c.name) for c in schema.columns)
    if not parts:
        empty = ", ".join(f"CAST(NULL AS {read_type(c.type)}) AS {quote_ident(c.name)}" for c in schema.columns)
        return (f"SELECT {empty}, CAST(NULL AS VARCHAR) AS _change_type, CAST(NULL AS BIGINT) AS _commit_version, "
                "CAST(NULL AS TIMESTAMP) AS _commit_timestamp WHERE false")
    rank = "CASE _change_type " + " ".join(f"WHEN {quote_literal(k)} THEN {v}" for k, v in _RANK.items()) + " END"
    order = ", ".join(["_commit_version"] + [quote_ident(c.name) for c in schema.columns if c.is_key] + [rank])
    return (f"SELECT {columns}, _change_type, _commit_version, _commit_timestamp FROM ("
            + " UNION ALL ".join(f"({p})" for p in parts) + f") ORDER BY {order}")


def changes(source: FeedSource, table: TableState, start_after: int, end: int | None = None, *,
            cur: duckdb.DuckDBPyConnection | None = None) -> pa.Table:
    """The change rows of the commits numbered in (start_after, end] (`end` None: the latest)."""
    commits = commits_between(source.projection, table, start_after, end)
    own = cur is None
    cursor = duckdb.connect() if cur is None else cur
    try:
        with source.locator.statement():
            return cursor.sql(changes_sql(source, table, commits)).to_arrow_table()
    finally:
        if own:
            cursor.close()


@dataclass(frozen=True)
class ChangeBatch:
    """One `poll()`: the changes of commits (cursor_before, cursor], and the cursor to store."""

    table: pa.Table
    cursor: int


class ChangeFollower:
    """Tails a table's commits. The cursor is the last commit number already delivered: store the
    one each batch returns and pass it back to resume, and no change comes twice or goes missing."""

    def __init__(self, source: FeedSource, table_id: int, cursor: int = 0, *, max_commits: int = 100) -> None:
        self.source = source
        self.table_id = table_id
        self.cursor = cursor
        self.max_commits = max_commits

    def _table(self) -> TableState:
        found = self.source.projection.tables.get(self.table_id)
        if found is None or found.dropped_ts_ms is not None:
            raise SqlFailure(ErrorCode.NO_SUCH_TABLE, f"table {self.table_id} was dropped")
        return found

    def poll(self) -> ChangeBatch:
        """The next changes (at most `max_commits` commits' worth); an empty table when none are new."""
        table = self._table()  # a published state never changes (copy-on-write)
        end = min(table.commit_number, self.cursor + self.max_commits)
        data = changes(self.source, table, self.cursor, max(end, self.cursor))
        self.cursor = max(end, self.cursor)
        return ChangeBatch(data, self.cursor)


class TableChanges:
    """A change feed of one table outside the SQL server, on its own read-only replica of the log."""

    def __init__(self, config: Settings, db: str, table: str, *, path: Path | None = None,
                 catch_up_timeout: float = 300.0) -> None:
        self.config = config
        self._temporary = path is None
        name = f"change-feed-{uuid.uuid4().hex[:8]}"
        config.state_dir.mkdir(parents=True, exist_ok=True)
        self.path = Path(tempfile.mkdtemp(prefix=f"{name}-", dir=config.state_dir)) if path is None else path
        self.projection = Projection(self.path)
        self.follower = EventFollower(self.projection, config, name=name)
        try:
            self.follower.catch_up(timeout=catch_up_timeout)
            self.follower.start()
            self.locator, _ = open_locator(config, self.projection, name)
            self.table = self._find(db, table)
        except BaseException:
            self.close()
            raise

    def _find(self, db: str, table: str) -> TableState:
        database = self.projection.database_by_name(db)
        if database is None:
            raise SqlFailure(ErrorCode.BAD_DB_ERROR, f"Unknown database '{db}'")
        found = self.projection.table_by_name(database.db_id, table)
        if found is None:
            raise SqlFailure(ErrorCode.NO_SUCH_TABLE, f"Table '{db}.{table}' doesn't exist")
        return found

    def catch_up(self, timeout: float | None = None) -> None:
        """Waits until the replica holds every commit on the log as of now."""
        if not self.follower.wait_for_now(self.config.command_timeout_s if timeout is None else timeout):
            raise SqlFailure(ErrorCode.LOCK_WAIT_TIMEOUT, "the change feed's replica is not catching up with "
                                                          "strata.events; is Kafka reachable?")

    def changes(self, start_after: int, end: int | None = None) -> pa.Table:
        self.catch_up()
        return changes(self, self._current(), start_after, end)

    def follow(self, cursor: int = 0, *, max_commits: int = 100) -> ChangeFollower:
        return _CatchingUpFollower(self, self.table.table_id, cursor, max_commits=max_commits)

    def _current(self) -> TableState:
        return self.projection.tables[self.table.table_id]  # a published state never changes (copy-on-write)

    def close(self) -> None:
        self.follower.stop()
        self.projection.close()
        if self._temporary:
            shutil.rmtree(self.path, ignore_errors=True)

    def __enter__(self) -> TableChanges:
        return self

    def __exit__(self, *_: object) -> None:
        self.close()


class _CatchingUpFollower(ChangeFollower):
    """Polls see every commit on the log when called, not just what the replica had applied."""

    source: TableChanges

    def poll(self) -> ChangeBatch:
        self.source.catch_up()
        return super().poll()


def open_table_changes(config: Settings, db: str, table: str, *, path: Path | None = None) -> TableChanges:
    """The entry point for programs: `with open_table_changes(load_settings(), "shop", "orders") as feed:
    batch = feed.follow(saved_cursor).poll()`."""
    return TableChanges(config, db, table, path=path)
