"""What the console shows of a table's rows, read by running SQL on the engine as the viewer, and
the one statement it writes with (RESTORE TABLE, "restore to here").

Rows as of a moment, a commit's changes and row counts are the answers of the SQL shown next to
them, run through `Engine.execute` with a session of the viewer's user: the same parser, access
checks (a user without SELECT_PRIV is refused as on the SQL port), snapshot resolution and
sandbox as a client's statement, so the page can never disagree with what that SQL returns.
"""

from __future__ import annotations

from datetime import date, datetime
from decimal import Decimal
from typing import Any

from query import access, timeouts
from query.console.data import Viewer, iso
from query.context import Result, Rows, SessionState, SqlFailure
from query.engine import Engine
from query.identifiers import quoted_table
from query.parser import SqlError, parse_script, parse_statement

# The session time zone the console's SQL runs in, and names in the SET it shows.
TIME_ZONE = "UTC"
PAGE_ROWS = 100
DIFF_ROWS = 1000


def _session(viewer: Viewer) -> SessionState:
    return SessionState(user=viewer.name, variables={"time_zone": TIME_ZONE})


def execute_as(engine: Engine, viewer: Viewer, sql: str) -> Result:
    """`sql` (one statement) run on the engine as `viewer`, in the console's session time zone, and
    cancelled like a client's statement once the user's query_timeout passes."""
    (statement,) = parse_script(sql)
    return timeouts.run_limited(engine.execute, _session(viewer), statement, viewer.user)


def run_as(engine: Engine, viewer: Viewer, sql: str) -> Rows:
    """A SELECT's rows, run as `execute_as` runs it."""
    result = execute_as(engine, viewer, sql)
    if not isinstance(result, Rows):
        raise SqlFailure(0, "the console's statement returned no rows")
    return result


def _cell(value: Any) -> Any:
    """A value as JSON and HTML show it (times and decimals as the SQL client prints them)."""
    if isinstance(value, datetime | date | Decimal):
        return str(value)
    if isinstance(value, bytes):
        return value.hex()
    return value


def _answer(engine: Engine, viewer: Viewer, sql: str) -> dict[str, Any]:
    shown = {"sql": sql, "time_zone": TIME_ZONE, "set_time_zone": f"SET time_zone = '{TIME_ZONE}'"}
    try:
        rows = run_as(engine, viewer, sql)
    except SqlFailure as exc:
        return {**shown, "error": exc.message, "error_code": int(exc.code), "columns": [], "rows": []}
    except SqlError as exc:
        return {**shown, "error": str(exc), "error_code": 0, "columns": [], "rows": []}
    return {**shown, "error": None, "columns": list(rows.columns),
            "rows": [[_cell(v) for v in row] for row in rows.rows]}


def rows_as_of(engine: Engine, viewer: Viewer, db: str, table: str, at_ms: int) -> dict[str, Any]:
    """The first page of `db.table` as it was at `at_ms` (UTC milliseconds)."""
    sql = f"SELECT * FROM {quoted_table(table, db)} FOR TIME AS OF '{iso(at_ms)}' LIMIT {PAGE_ROWS}"
    return {"ts_ms": at_ms, "time": iso(at_ms), "limit": PAGE_ROWS, **_answer(engine, viewer, sql)}


def commit_diff(engine: Engine, viewer: Viewer, db: str, table: str, commit: int) -> dict[str, Any]:
    """The rows commit `commit` inserted, deleted and updated, from the change feed."""
    sql = (f"SELECT * FROM {quoted_table(table, db)}@incr('startVersion'='{commit - 1}', 'endVersion'='{commit}') "
           f"LIMIT {DIFF_ROWS}")
    return {"commit": commit, "limit": DIFF_ROWS, **_with_change_counts(_answer(engine, viewer, sql))}


def _with_change_counts(answer: dict[str, Any]) -> dict[str, Any]:
    """A change-feed answer with its rows counted by change type."""
    kinds: dict[str, int] = {}
    if answer["error"] is None and "_change_type" in answer["columns"]:
        at = answer["columns"].index("_change_type")
        for row in answer["rows"]:
            kinds[row[at]] = kinds.get(row[at], 0) + 1
    return {"change_counts": kinds, **answer}


def count_rows(engine: Engine, viewer: Viewer, db: str, table: str, at_ms: int | None = None) -> dict[str, Any]:
    """`SELECT COUNT(*)` of the table (now, or as of `at_ms`): what a SELECT returns, after DELETE
    predicates and key merges, unlike the rows stored in the snapshot's rowsets."""
    as_of = f" FOR TIME AS OF '{iso(at_ms)}'" if at_ms is not None else ""
    answer = _answer(engine, viewer, f"SELECT COUNT(*) FROM {quoted_table(table, db)}{as_of}")
    count = answer["rows"][0][0] if answer["error"] is None and answer["rows"] else None
    return {"sql": answer["sql"], "count": count, "error": answer["error"]}


def changes_since(engine: Engine, viewer: Viewer, db: str, table: str, at_ms: int) -> dict[str, Any]:
    """Every row the commits after `at_ms` inserted, deleted or updated, from the change feed: what
    restoring the table to `at_ms` undoes."""
    sql = f"SELECT * FROM {quoted_table(table, db)}@incr('startTimestamp'='{iso(at_ms)}') LIMIT {DIFF_ROWS}"
    return {"ts_ms": at_ms, "time": iso(at_ms), "limit": DIFF_ROWS, **_with_change_counts(_answer(engine, viewer, sql))}


def restore_sql(db: str, table: str, at_ms: int) -> str:
    return f"RESTORE TABLE {quoted_table(table, db)} TO TIME AS OF '{iso(at_ms)}'"


def restore_refusal(engine: Engine, viewer: Viewer, db: str, table: str, at_ms: int) -> str | None:
    """Why `viewer` may not restore the table (None: it may): the privilege check the engine makes
    before it runs that RESTORE TABLE (query.access), without running it."""
    try:
        access.check(engine.ctx, _session(viewer), parse_statement(restore_sql(db, table, at_ms)))
    except SqlFailure as exc:
        return exc.message
    return None


def restore(engine: Engine, viewer: Viewer, db: str, table: str, at_ms: int) -> dict[str, Any]:
    """Runs RESTORE TABLE … TO TIME AS OF `at_ms` as `viewer`: {"sql", "error"} (error None: done)."""
    sql = restore_sql(db, table, at_ms)
    try:
        execute_as(engine, viewer, sql)
    except SqlFailure as exc:
        return {"sql": sql, "error": exc.message, "error_code": int(exc.code)}
    except SqlError as exc:
        return {"sql": sql, "error": str(exc), "error_code": 0}
    return {"sql": sql, "error": None, "error_code": 0}
