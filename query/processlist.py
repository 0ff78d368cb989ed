"""SHOW [FULL] PROCESSLIST and KILL [CONNECTION | QUERY], as Doris answers them: every user sees and
kills its own sessions; ADMIN_PRIV (or root) sees and kills everyone's."""

from __future__ import annotations

import time

from query import access
from query.context import Context, Done, Rows, SessionState, SqlFailure
from query.parser import statements as st
from query.sessions import SessionInfo
from schemas.errors import ErrorCode

# Doris' columns (2.1+: CurrentConnected … QueryId, Info).
COLUMNS = ["CurrentConnected", "Id", "User", "Host", "LoginTime", "Catalog", "Db", "Command", "Time", "State",
           "QueryId", "Info"]
INFO_CHARS = 100  # without FULL, Info shows the statement's first 100 characters (MySQL and Doris)


def _is_admin(ctx: Context, session: SessionState) -> bool:
    user = access.user_of(ctx, session)
    return user is None or user.may("ADMIN_PRIV")


def _row(found: SessionInfo, session: SessionState, full: bool) -> tuple[object, ...]:
    info = found.info
    if info is not None and not full:
        info = info[:INFO_CHARS]
    return ("Yes" if found.connection_id == session.connection_id else "", found.connection_id, found.user,
            found.host, found.login_time.strftime("%Y-%m-%d %H:%M:%S"), "internal", found.database or "",
            found.command, int(time.monotonic() - found.since), "OK", found.query_id if found.info else "", info)


def visible_sessions(ctx: Context, session: SessionState) -> list[SessionInfo]:
    """The logged-in sessions the session's user may see (also information_schema.PROCESSLIST)."""
    admin = _is_admin(ctx, session)
    return [found for found in ctx.sessions.all()
            if found.user is not None and (admin or found.user.lower() == session.user.lower())]


def show_processlist(ctx: Context, session: SessionState, s: st.ShowProcesslist) -> Rows:
    return Rows(list(COLUMNS), [_row(found, session, s.full) for found in visible_sessions(ctx, session)])


def kill(ctx: Context, session: SessionState, s: st.Kill) -> Done:
    found = ctx.sessions.get(s.connection_id)
    if found is None or found.user is None:
        raise SqlFailure(ErrorCode.NO_SUCH_THREAD, f"Unknown thread id: {s.connection_id}")
    if found.user.lower() != session.user.lower() and not _is_admin(ctx, session):
        raise SqlFailure(ErrorCode.KILL_DENIED, f"You are not owner of thread or query: {s.connection_id}")
    guard = found.guard
    if guard is not None and found.connection_id != session.connection_id:  # not this KILL itself
        guard.cancel(SqlFailure(ErrorCode.QUERY_INTERRUPTED, f"Query execution was interrupted: cancelled by KILL from "
                                                   f"connection {session.connection_id} (user '{session.user}')"))
    if not s.query_only and found.disconnect is not None:
        found.disconnect()
    return Done()
