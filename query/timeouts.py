"""Doris' statement time limits: the session variables `query_timeout` (default 900 s) and
`insert_timeout` (default 14400 s, for INSERT, CREATE TABLE … AS SELECT, UPDATE and DELETE), the
user properties of the same names that override them (query.user_properties), and the error a
statement that outran its limit fails with. The MySQL server arms a timer per statement
that cancels the statement's guard (query.context.StatementGuard), which interrupts its DuckDB work."""

from __future__ import annotations

import threading
from collections.abc import Callable
from typing import Any

from mysql_mimic.errors import MysqlError

from projections.users import UserRecord
from query.context import Result, SessionState, SqlFailure, StatementGuard
from query.parser import statements as st
from schemas.errors import ErrorCode

QUERY_TIMEOUT = "query_timeout"
INSERT_TIMEOUT = "insert_timeout"
# MySQL's limit in milliseconds; Doris takes it as another way to set query_timeout.
MAX_EXECUTION_TIME = "max_execution_time"
DEFAULT_QUERY_TIMEOUT_S = 900
DEFAULT_INSERT_TIMEOUT_S = 14400
MAX_TIMEOUT_S = 2**31 - 1
_WRITES = (st.Insert, st.CreateTableAs, st.Update, st.Delete)


def _seconds(name: str) -> Callable[[Any], int]:
    """Checked when set, as Doris does: a positive whole number of seconds."""

    def parse(value: Any) -> int:
        try:
            seconds = int(str(value).strip().strip("'\""))
        except ValueError:
            seconds = 0
        if not 1 <= seconds <= MAX_TIMEOUT_S:
            raise MysqlError(f"Variable '{name}' can't be set to the value of '{value}' (a number of seconds, "
                             f"1 to {MAX_TIMEOUT_S})", ErrorCode.WRONG_VALUE_FOR_VAR)  # type: ignore[arg-type]
        return seconds

    return parse


# For the server's variable schema: name → (type, default, settable per session).
VARIABLES: dict[str, tuple[Any, Any, bool]] = {
    QUERY_TIMEOUT: (_seconds(QUERY_TIMEOUT), DEFAULT_QUERY_TIMEOUT_S, True),
    INSERT_TIMEOUT: (_seconds(INSERT_TIMEOUT), DEFAULT_INSERT_TIMEOUT_S, True),
}
# The session variables the engine's SessionState carries for `limit_of` (mysql-mimic keeps the third).
SESSION_VARIABLES = (QUERY_TIMEOUT, INSERT_TIMEOUT, MAX_EXECUTION_TIME)


def limit_of(statement: st.Statement, variables: dict[str, str],
             user: UserRecord | None = None) -> tuple[float, SqlFailure]:
    """The statement's time limit in seconds, and the failure it gets when the limit passes. The
    user's property of the same name, when set, wins over the session variable, as in Doris."""
    name = INSERT_TIMEOUT if isinstance(statement, _WRITES) else QUERY_TIMEOUT
    what = "Insert" if name == INSERT_TIMEOUT else "Query"
    own = 0 if user is None else (user.insert_timeout_s if name == INSERT_TIMEOUT else user.query_timeout_s)
    if own > 0:
        return own, SqlFailure(ErrorCode.QUERY_TIMEOUT, f"{what} timeout ({name} = {own} s, the user property of "
                                                        f"'{user.name if user else ''}'). Ask an admin to raise it")
    default = DEFAULT_INSERT_TIMEOUT_S if name == INSERT_TIMEOUT else DEFAULT_QUERY_TIMEOUT_S
    seconds = _int(variables.get(name), default)
    max_execution_ms = _int(variables.get(MAX_EXECUTION_TIME), 0)
    if name == QUERY_TIMEOUT and 0 < max_execution_ms < seconds * 1000:
        return max_execution_ms / 1000, SqlFailure(
            ErrorCode.QUERY_TIMEOUT, f"Query timeout ({MAX_EXECUTION_TIME} = {max_execution_ms} ms). Increase the "
                                     f"{MAX_EXECUTION_TIME} session variable and retry")
    return seconds, SqlFailure(ErrorCode.QUERY_TIMEOUT, f"{what} timeout ({name} = {seconds} s). Increase the "
                                                        f"{name} session variable and retry")


def _int(value: str | None, default: int) -> int:
    try:
        return int(value) if value is not None else default
    except ValueError:
        return default


def run_limited(execute: Callable[[SessionState, st.Statement], Result], session: SessionState,
                statement: st.Statement, user: UserRecord | None) -> Result:
    """`execute(session, statement)` on this thread, cancelled through a fresh guard once the
    statement's limit (`limit_of`) passes: for callers without an event loop (the console, Flight SQL)."""
    limit_s, timed_out = limit_of(statement, session.variables, user)
    session.guard = StatementGuard()
    timer = threading.Timer(limit_s, session.guard.cancel, args=(timed_out,))
    timer.daemon = True
    timer.start()
    try:
        return execute(session, statement)
    finally:
        timer.cancel()
        session.guard = None
