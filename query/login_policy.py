"""What a login must pass besides its password, as Doris' FE checks it:

* the lockout policy of CREATE/ALTER USER (`FAILED_LOGIN_ATTEMPTS n PASSWORD_LOCK_TIME t`): after n
  failed logins in a row, counted per user across every connection to this server, the account is
  refused — even with the right password — for t seconds (or until `ALTER USER … ACCOUNT_UNLOCK`),
  with MySQL's error 3955;
* the database named in the handshake: unknown → 1049, not visible to the user → 1044, before the
  client hears OK (a refused login never gets a session);
* the user property `max_user_connections` (Doris' default 100): one more connection → 1203.

The failure counts and locks live in this server's memory, as in a Doris FE (which neither persists
nor shares them): a restart forgets them, and with several SQL servers each counts its own logins.
The policy itself (attempts, lock time, connection limit) and every unlock are events of the log.
"""

from __future__ import annotations

import threading
import time
from collections.abc import Callable
from dataclasses import dataclass

from projections.users import ROOT, UserRecord
from query.sessions import SessionDirectory
from query.wire.errors import CodedRefusal
from schemas.errors import ErrorCode

INFORMATION_SCHEMA = "information_schema"
UNBOUNDED_LOCK_LEFT_S = 9999  # what Doris reports as the time left of an UNBOUNDED lock


@dataclass
class _Failures:
    count: int = 0
    locked_at: float = 0.0  # time.monotonic() of the lock; 0: not locked
    reset_seen: int = 0  # the user's lock_reset_ts_ms these counts belong to


class LoginPolicy:
    def __init__(self, users: Callable[[str], UserRecord | None], database_exists: Callable[[str], bool],
                 sessions: SessionDirectory) -> None:
        """`users(name)`: the user of the log (None for root and unknown names)."""
        self._users = users
        self._database_exists = database_exists
        self._sessions = sessions
        self._lock = threading.Lock()
        self._failures: dict[str, _Failures] = {}

    def _state(self, user: UserRecord) -> _Failures | None:
        """The user's failure record, forgotten once an unlock or policy change postdates it."""
        found = self._failures.get(user.name.lower())
        if found is not None and found.reset_seen != user.lock_reset_ts_ms:
            del self._failures[user.name.lower()]
            return None
        return found

    @staticmethod
    def _left_s(user: UserRecord, state: _Failures) -> int:
        if state.locked_at == 0.0 or user.failed_login_attempts <= 0 or user.password_lock_time_s == 0:
            return 0
        if user.password_lock_time_s < 0:
            return UNBOUNDED_LOCK_LEFT_S
        return max(0, int(user.password_lock_time_s - (time.monotonic() - state.locked_at) + 0.999))

    def locked(self, name: str) -> CodedRefusal | None:
        """Asked before the password is checked: a locked account is refused whatever it sends."""
        user = self._users(name)
        if user is None:
            return None
        with self._lock:
            state = self._state(user)
            left = self._left_s(user, state) if state is not None else 0
            count = state.count if state is not None else 0
        if left <= 0:
            return None
        lock_s = user.password_lock_time_s if user.password_lock_time_s > 0 else UNBOUNDED_LOCK_LEFT_S
        return CodedRefusal(ErrorCode.ACCOUNT_LOCKED,
                            f"Access denied for user '{user.name}'@'%'. Account is blocked for {lock_s} second(s) "
                            f"({left} second(s) remaining) due to {count} consecutive failed logins.")

    def failed(self, name: str) -> bool:
        """Counts a wrong password; True when this failure locked the account."""
        user = self._users(name)
        if user is None or user.failed_login_attempts <= 0 or user.password_lock_time_s == 0:
            return False
        with self._lock:
            state = self._state(user) or _Failures(reset_seen=user.lock_reset_ts_ms)
            self._failures[user.name.lower()] = state
            if state.locked_at and self._left_s(user, state) <= 0:
                state.count, state.locked_at = 0, 0.0  # the lock ran out: count afresh (Doris #61592)
            state.count += 1
            if state.count >= user.failed_login_attempts and not state.locked_at:
                state.locked_at = time.monotonic()
                return True
            return False

    def succeeded(self, name: str) -> None:
        with self._lock:
            self._failures.pop(name.lower(), None)

    def admit(self, name: str, database: str | None, connection_id: int) -> CodedRefusal | None:
        """After the right password: the handshake's database, then the connection limit. On success the
        connection is counted as the user's (query.sessions)."""
        user = self._users(name)
        if database:
            if database.lower() != INFORMATION_SCHEMA and not self._database_exists(database):
                return CodedRefusal(ErrorCode.BAD_DB_ERROR, f"Unknown database '{database}'")
            if user is not None and database.lower() != INFORMATION_SCHEMA and not user.sees_database(database):
                return CodedRefusal(ErrorCode.DB_ACCESS_DENIED,
                                    f"Access denied for user '{user.name}'@'%' to database '{database}'")
        limit = None if user is None or name.lower() == ROOT else user.max_user_connections
        if not self._sessions.login(connection_id, user.name if user is not None else name, database, limit):
            return CodedRefusal(ErrorCode.TOO_MANY_USER_CONNECTIONS,
                                f"User {name} already has more than 'max_user_connections' active connections "
                                f"(max_user_connections = {limit})")
        return None
