"""The live SQL sessions of one query server: who is connected from where, what each one runs and
since when (SHOW PROCESSLIST), a way to stop a statement or a whole connection (KILL), and the
per-user connection count `max_user_connections` is checked against.

Protocol-free: the MySQL server registers each connection with a `disconnect` callback and reports
statements as they start and end; the engine reads and kills through it. Arrow Flight SQL logins
are sessions too (one per bearer token, as Doris registers a connection per token), with ids the
directory hands out. Thread-safe, because statements run in executor threads while the event loop
registers connections.
"""

from __future__ import annotations

import threading
import time
from collections.abc import Callable
from dataclasses import dataclass, field
from datetime import UTC, datetime
from typing import TYPE_CHECKING

if TYPE_CHECKING:
    from query.context import StatementGuard


@dataclass
class SessionInfo:
    connection_id: int
    host: str  # the client's address as 'ip:port'
    login_time: datetime = field(default_factory=lambda: datetime.now(UTC))
    user: str | None = None  # None until the login succeeded
    database: str | None = None
    command: str = "Sleep"  # Doris' Command column: Sleep between statements, Query while one runs
    since: float = field(default_factory=time.monotonic)  # when `command` last changed
    info: str | None = None  # the running statement's text
    query_id: str = ""
    guard: StatementGuard | None = None
    disconnect: Callable[[], None] | None = None  # closes the client connection (KILL CONNECTION)


# Ids the directory hands out itself (Flight SQL sessions) count up from the middle of MySQL's 4-byte
# connection ids; mysql-mimic's count up from its server id's prefix and skip any taken here.
_OWN_IDS = (1 << 31, (1 << 32) - 1)


class SessionDirectory:
    def __init__(self) -> None:
        self._lock = threading.Lock()
        self._sessions: dict[int, SessionInfo] = {}
        self._query_seq = 0
        self._next_own_id = _OWN_IDS[0]

    def open_new(self, host: str, disconnect: Callable[[], None] | None = None) -> SessionInfo:
        """A session under an id no other session has (for sessions without a MySQL connection)."""
        with self._lock:
            while self._next_own_id in self._sessions:
                self._next_own_id = self._following(self._next_own_id)
            info = SessionInfo(self._next_own_id, host, disconnect=disconnect)
            self._next_own_id = self._following(self._next_own_id)
            self._sessions[info.connection_id] = info
        return info

    @staticmethod
    def _following(connection_id: int) -> int:
        return connection_id + 1 if connection_id + 1 < _OWN_IDS[1] else _OWN_IDS[0]

    def locate(self, connection_id: int, host: str) -> None:
        """Sets the host of a session opened without one (`open_new`: its first call knows the peer)."""
        with self._lock:
            found = self._sessions.get(connection_id)
            if found is not None and not found.host:
                found.host = host

    def taken(self, connection_id: int) -> bool:
        with self._lock:
            return connection_id in self._sessions

    def open(self, connection_id: int, host: str, disconnect: Callable[[], None] | None = None) -> SessionInfo:
        info = SessionInfo(connection_id, host, disconnect=disconnect)
        with self._lock:
            self._sessions[connection_id] = info
        return info

    def close(self, connection_id: int) -> None:
        with self._lock:
            self._sessions.pop(connection_id, None)

    def login(self, connection_id: int, user: str, database: str | None, limit: int | None) -> bool:
        """Counts the connection as `user`'s, unless that user already has `limit` (None: no limit)."""
        with self._lock:
            others = sum(1 for s in self._sessions.values() if s.connection_id != connection_id
                         and s.user is not None and s.user.lower() == user.lower())
            if limit is not None and others >= limit:
                return False
            found = self._sessions.get(connection_id)
            if found is not None:
                found.user, found.database = user, database
            return True

    def count(self, user: str) -> int:
        """Logged-in connections of `user` (case-insensitive, like user names)."""
        with self._lock:
            return sum(1 for s in self._sessions.values() if s.user is not None and s.user.lower() == user.lower())

    def get(self, connection_id: int) -> SessionInfo | None:
        with self._lock:
            return self._sessions.get(connection_id)

    def all(self) -> list[SessionInfo]:
        with self._lock:
            return sorted(self._sessions.values(), key=lambda s: s.connection_id)

    def started(self, connection_id: int, text: str, guard: StatementGuard, database: str | None) -> None:
        with self._lock:
            found = self._sessions.get(connection_id)
            if found is None:
                return
            self._query_seq += 1
            found.command, found.since, found.info, found.guard = "Query", time.monotonic(), text, guard
            found.query_id = f"{connection_id:x}-{self._query_seq:x}"
            found.database = database

    def finished(self, connection_id: int, database: str | None) -> None:
        with self._lock:
            found = self._sessions.get(connection_id)
            if found is None:
                return
            found.command, found.since, found.info, found.guard = "Sleep", time.monotonic(), None, None
            found.database = database
