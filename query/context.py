"""What every statement handler works with: the replica, the proposer, the rowset locator, DuckDB, the
session, and the two shapes of answer (rows, or an OK with a count)."""

from __future__ import annotations

import threading
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any

import duckdb

from projections.follower import EventFollower
from projections.projection import Projection
from projections.proposer import CommandFailed, CommandTimeout, Proposer
from projections.remote import RemoteStores
from projections.state import TableState
from query.parser.statements import QualifiedName
from schemas.commands import Command
from schemas.config import Settings
from schemas.envelope import EventEnvelope
from schemas.errors import ErrorCode
from storage.locator import RowsetLocator
from storage.tiers import LocalTiers

if TYPE_CHECKING:
    from query.group_commit import GroupCommits


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


@dataclass
class Done:
    affected_rows: int = 0
    info: str = ""


Result = Rows | Done


@dataclass
class SessionState:
    database: str | None = None
    variables: dict[str, str] = field(default_factory=lambda: {"time_zone": "UTC"})
    user: str = "root"  # who logged in (query.access decides what it may do)


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

    def cursor(self) -> duckdb.DuckDBPyConnection:
        """A DuckDB connection for one statement (cursors are independent connections)."""
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
            raise SqlFailure(ErrorCode.LOCK_WAIT_TIMEOUT, "the projection replica is not catching up with "
                                                          "strata.events; is Kafka reachable?")

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
            raise SqlFailure(ErrorCode.NO_SUCH_TABLE, f"Table '{db_name}.{name.name}' doesn't exist")
        return found
