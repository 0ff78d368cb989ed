"""The server-level SHOW statements: VARIABLES, STATUS, WARNINGS, ERRORS, ENGINES, CHARSET, COLLATION,
PROCEDURE STATUS, FUNCTION STATUS, PLUGINS."""

from __future__ import annotations

import time
from collections.abc import Mapping
from typing import Any

from query import show_filter
from query.catalog_facts import (
    CHARSET,
    CHARSET_DESCRIPTION,
    CHARSET_MAXLEN,
    COLLATION,
    COLLATION_ID,
    ENGINE,
    ENGINE_COMMENT,
)
from query.context import Context, Rows, SessionState, SqlFailure
from query.parser import statements as st
from schemas.errors import ErrorCode

_STARTED = time.monotonic()


def _variable_text(value: Any) -> str | None:
    """SHOW VARIABLES prints MySQL's ON/OFF for booleans (SELECT @@x gives 1/0)."""
    if value is None:
        return None
    if isinstance(value, bool):
        return "ON" if value else "OFF"
    return str(value)


def _variables(scope: Mapping[str, Any]) -> Rows:
    return Rows(["Variable_name", "Value"], [(name, _variable_text(scope[name])) for name in sorted(scope)])


def _status(ctx: Context, session: SessionState) -> Rows:
    running = sum(1 for s in ctx.sessions.all() if s.command == "Query")
    return Rows(["Variable_name", "Value"], [
        ("Threads_connected", str(len(ctx.sessions.all()))), ("Threads_running", str(running)),
        ("Uptime", str(int(time.monotonic() - _STARTED)))])


def _diagnostics(ctx: Context, session: SessionState) -> Rows:
    # A failed statement is answered with its error and leaves no diagnostics area behind.
    return Rows(["Level", "Code", "Message"], [])


def _engines(ctx: Context, session: SessionState) -> Rows:
    return Rows(["Engine", "Support", "Comment", "Transactions", "XA", "Savepoints"],
                [(ENGINE, "DEFAULT", ENGINE_COMMENT, "NO", "NO", "NO")])


def _charsets(ctx: Context, session: SessionState) -> Rows:
    return Rows(["Charset", "Description", "Default collation", "Maxlen"],
                [(CHARSET, CHARSET_DESCRIPTION, COLLATION, CHARSET_MAXLEN)])


def _collations(ctx: Context, session: SessionState) -> Rows:
    return Rows(["Collation", "Charset", "Id", "Default", "Compiled", "Sortlen"],
                [(COLLATION, CHARSET, COLLATION_ID, "Yes", "Yes", 1)])


def _routines(ctx: Context, session: SessionState) -> Rows:
    # Strata has no stored procedures or functions (Connector/J's getProcedures/getFunctions ask).
    return Rows(["Db", "Name", "Type", "Definer", "Modified", "Created", "Security_type", "Comment",
                 "character_set_client", "collation_connection", "Database Collation"], [])


def _plugins(ctx: Context, session: SessionState) -> Rows:
    return Rows(["Name", "Status", "Type", "Library", "License"], [])  # no server plugins


_KINDS = {"STATUS": _status, "WARNINGS": _diagnostics, "ERRORS": _diagnostics, "ENGINES": _engines,
          "CHARSET": _charsets, "COLLATION": _collations, "PROCEDURE STATUS": _routines, "FUNCTION STATUS": _routines,
          "PLUGINS": _plugins}


def show_server_info(ctx: Context, session: SessionState, s: st.ShowServerInfo) -> Rows:
    if s.kind == "VARIABLES":
        found = _variables(session.global_variables if s.scope == "GLOBAL" else session.system_variables)
    elif (build := _KINDS.get(s.kind)) is not None:
        found = build(ctx, session)
    else:
        raise SqlFailure(ErrorCode.NOT_SUPPORTED_YET, f"SHOW {s.kind} is not supported")
    # SHOW PROCEDURE / FUNCTION STATUS LIKE matches Name, the second column; the others their first.
    return show_filter.apply(ctx, found, s.like, s.where, like_column=1 if s.kind.endswith(" STATUS") else 0)
