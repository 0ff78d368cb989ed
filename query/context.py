"""What every statement handler works with: the replica, the proposer, the rowset locator, DuckDB, the
session, and the two shapes of answer (rows, or an OK with a count)."""

from __future__ import annotations

import threading
import time
from collections.abc import Callable, Mapping
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any, TypeVar, cast

import duckdb

from projections.follower import EventFollower, ReadFence
from projections.projection import Projection
from projections.proposer import CommandFailed, CommandTimeout, Proposer
from projections.remote import RemoteStores
from projections.snapshot_cache import SnapshotCache
from projections.state import TableState, ViewState
from query.parser.statements import QualifiedName
from query.sessions import SessionDirectory
from query.superseded_positions import SupersededPositions
from schemas.commands import Command
from schemas.config import Settings
from schemas.envelope import EventEnvelope
from schemas.errors import ErrorCode
from storage.locator import RowsetLocator
from storage.tiers import LocalTiers

if TYPE_CHECKING:
    from query.bulk_jobs import BulkJobRunner
    from query.group_commit import GroupCommits
    from query.streamed_rows import StreamedRows

_Service = TypeVar("_Service")
_Read = TypeVar("_Read")
_NOT_CATCHING_UP = "the projection replica is not catching up with strata.events; is Kafka reachable?"


class SqlFailure(Exception):
    """A statement failed; the client sees `code` and `message`, the connection stays usable."""

    def __init__(self, code: int, message: str) -> None:
        super().__init__(message)
        self.code = int(code)
        self.message = message


@dataclass
class Rows:
    columns: list[str]
    rows: list[tuple[Any, ...]]
    # The executor's type of each column (DuckDB's names: 'BIGINT', 'DECIMAL(10,2)', 'TIMESTAMP', …),
    # so the wire layer describes a column from its schema, not from its values; None where a result
    # is built by hand (SHOW …), whose columns are then described from their values.
    types: list[str] | None = None
    # A streamed SELECT (query.streamed_rows): `rows` is empty and the rows come from here, read as
    # the client takes them; whoever takes the result must close it.
    batches: StreamedRows | None = None


@dataclass
class Done:
    affected_rows: int = 0
    info: str = ""
    last_insert_id: int = 0  # the first AUTO_INCREMENT value the statement generated (0: none)


Result = Rows | Done


class StatementGuard:
    """The statement a session is running, as a timeout or a KILL sees it: the DuckDB cursors it
    opened (so they can be interrupted from another thread) and, once cancelled, why.

    DuckDB forgets an interrupt that arrives between two calls on a cursor (the next call starts
    afresh), and a statement makes several (views, then the query); so once cancelled, the cursors
    are interrupted again every `REPEAT_S` until the statement finishes (`finish`)."""

    REPEAT_S = 0.1
    GIVE_UP_S = 600.0  # a statement stuck outside DuckDB (a Kafka wait) is not interrupted forever

    def __init__(self) -> None:
        self._lock = threading.Lock()
        self._cursors: list[duckdb.DuckDBPyConnection] = []
        self._finished = threading.Event()
        self.failure: SqlFailure | None = None

    def track(self, cursor: duckdb.DuckDBPyConnection) -> None:
        with self._lock:
            self._cursors.append(cursor)
            cancelled = self.failure is not None
        if cancelled:
            cursor.interrupt()
            self.check()

    def cancel(self, failure: SqlFailure) -> None:
        """Thread-safe; the first reason wins (a KILL after the timeout fired changes nothing)."""
        with self._lock:
            if self.failure is not None or self._finished.is_set():
                return
            self.failure = failure
        self._interrupt()
        threading.Thread(target=self._keep_interrupting, name="statement-cancel", daemon=True).start()

    def finish(self) -> None:
        """The statement is over: nothing left to interrupt."""
        self._finished.set()

    def _interrupt(self) -> None:
        with self._lock:
            cursors = list(self._cursors)
        for cursor in cursors:
            cursor.interrupt()

    def _keep_interrupting(self) -> None:
        deadline = time.monotonic() + self.GIVE_UP_S
        while not self._finished.wait(self.REPEAT_S) and time.monotonic() < deadline:
            self._interrupt()

    def check(self) -> None:
        if self.failure is not None:
            raise self.failure


# The guard of the statement the current thread runs; Context.cursor() registers each cursor with it,
# so no handler has to pass it along (Engine.execute sets and clears it).
_running = threading.local()


def running_guard() -> StatementGuard | None:
    return getattr(_running, "guard", None)


def set_running_guard(guard: StatementGuard | None) -> None:
    _running.guard = guard


@dataclass
class SessionState:
    database: str | None = None
    variables: dict[str, str] = field(default_factory=lambda: {"time_zone": "UTC"})
    user: str = "root"  # who logged in (query.access decides what it may do)
    connection_id: int = 0  # the MySQL connection id (SHOW PROCESSLIST's Id); 0 outside the server
    client_host: str = "localhost"  # the client's address (USER() is name@client_host)
    # The MySQL system variables `@@x` reads (the server's mysql-mimic variables; query.system_variables
    # has their schema), in the session's scope and the server's (`@@global.x`); none outside the server.
    system_variables: Mapping[str, Any] = field(default_factory=dict)
    global_variables: Mapping[str, Any] = field(default_factory=dict)
    guard: StatementGuard | None = None  # the statement now running, if any
    last_insert_id: int = 0  # LAST_INSERT_ID(): the first AUTO_INCREMENT value of the last INSERT that made any
    # The statement's SELECT result may be streamed (query.streamed_rows): its taker sends it as it is
    # read (the server, for a text-protocol query) rather than reading its rows.
    stream_results: bool = False
    # The taker wants Arrow (Flight SQL): every SELECT streams DuckDB's record batches, whatever its
    # size or types (the limits of `streamable_types` are the MySQL text encoder's, not Arrow's).
    arrow_results: bool = False


@dataclass
class Context:
    config: Settings
    projection: Projection
    follower: EventFollower
    proposer: Proposer
    locator: RowsetLocator
    stores: RemoteStores
    duck: duckdb.DuckDBPyConnection
    name: str
    _duck_lock: threading.Lock = field(default_factory=threading.Lock)
    # This server's group-commit batchers (query.group_commit.registry makes them on first use).
    group_commits: GroupCommits | None = None
    # This server's Broker Load and EXPORT jobs (query.bulk_jobs.runner makes it on first use).
    bulk_jobs: BulkJobRunner | None = None
    # The server's live SQL sessions (SHOW PROCESSLIST, KILL, max_user_connections).
    sessions: SessionDirectory = field(default_factory=lambda: SessionDirectory())
    # Merge-on-write reads' superseded positions, read once per set of delete bitmaps.
    superseded: SupersededPositions = field(init=False)
    # Snapshots resolved since the last event folded, reused by the reads that come meanwhile.
    snapshots: SnapshotCache = field(init=False)
    _services_lock: threading.Lock = field(default_factory=threading.Lock)

    def __post_init__(self) -> None:
        self.snapshots = SnapshotCache(self.projection)
        self.superseded = SupersededPositions(self._database_cursor)

    def made_once(self, attribute: str, make: Callable[[Context], _Service]) -> _Service:
        """The server's one `attribute` (a field above that starts None), made by `make` on first use:
        background services start with the first statement that needs them, once per server."""
        with self._services_lock:
            found = getattr(self, attribute)
            if found is None:
                found = make(self)
                setattr(self, attribute, found)
            return cast(_Service, found)

    def cursor(self) -> duckdb.DuckDBPyConnection:
        """A DuckDB connection for one statement (cursors are independent connections). Inside a
        statement it is registered with the statement's guard, so a timeout or KILL interrupts it."""
        cursor = self._database_cursor()
        guard = running_guard()
        if guard is not None:
            guard.track(cursor)
        return cursor

    def _database_cursor(self) -> duckdb.DuckDBPyConnection:
        with self._duck_lock:
            return self.duck.cursor()

    @property
    def tiers(self) -> LocalTiers:
        return self.locator.tiers

    def propose(self, command: Command, *, table_id: int | None = None) -> EventEnvelope:
        try:
            return self.proposer.propose(command, table_id=table_id)
        except CommandFailed as failed:
            raise SqlFailure(failed.code, failed.reason) from None
        except CommandTimeout as timeout:
            raise SqlFailure(ErrorCode.LOCK_WAIT_TIMEOUT, str(timeout)) from None

    def catch_up(self) -> None:
        """Read-your-writes across servers: wait until the replica holds the log as of now."""
        if not self.follower.wait_for_now(self.config.command_timeout_s):
            raise SqlFailure(ErrorCode.LOCK_WAIT_TIMEOUT, _NOT_CATCHING_UP)

    def read_fenced(self, read: Callable[[], _Read], again: Callable[[], _Read] | None = None) -> _Read:
        """`read()` of the projection, made while the log's end is asked for instead of after
        (`ReadFence`: read-your-writes across servers without the broker round trip in the way); made
        again (`again`, by default `read`) when the replica turns out to have been behind the log as the
        call came. A read that failed is judged the same way: the table it did not find may be one
        created just before, on this server or another."""
        fence = self.follower.fence()
        try:
            result = read()
        except (SqlFailure, duckdb.Error):
            if self._fence_held(fence):
                raise
            return (again or read)()
        return result if self._fence_held(fence) else (again or read)()

    def _fence_held(self, fence: ReadFence) -> bool:
        try:
            return fence.held(self.config.command_timeout_s)
        except TimeoutError:
            raise SqlFailure(ErrorCode.LOCK_WAIT_TIMEOUT, _NOT_CATCHING_UP) from None

    # -- name resolution -----------------------------------------------------------------------
    def database_id(self, session: SessionState, db: str | None) -> tuple[int, str]:
        name = db or session.database
        if not name:
            raise SqlFailure(ErrorCode.NO_DB_ERROR, "No database selected")
        found = self.projection.database_by_name(name)
        if found is None:
            raise SqlFailure(ErrorCode.BAD_DB_ERROR, f"Unknown database '{name}'")
        return found.db_id, found.name

    def table(self, session: SessionState, name: QualifiedName) -> TableState:
        db_id, db_name = self.database_id(session, name.db)
        found = self.projection.table_by_name(db_id, name.name)
        if found is None:
            if self.projection.view_by_name(db_id, name.name) is not None:
                raise SqlFailure(ErrorCode.WRONG_OBJECT, f"'{db_name}.{name.name}' is not TABLE")
            raise SqlFailure(ErrorCode.NO_SUCH_TABLE, f"Table '{db_name}.{name.name}' doesn't exist")
        return found

    def view(self, session: SessionState, name: QualifiedName) -> ViewState | None:
        """The view `name` names, if it names one (None for a table or nothing)."""
        db_id, _ = self.database_id(session, name.db)
        return self.projection.view_by_name(db_id, name.name)
