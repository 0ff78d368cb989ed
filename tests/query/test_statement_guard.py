"""query.context.StatementGuard against a real DuckDB: cancelling it from another thread interrupts
the statement's running cursor, and a cursor opened after the cancel fails at once."""

from __future__ import annotations

import threading
import time

import duckdb
import pytest

from query.context import SqlFailure, StatementGuard

SLOW = "SELECT count(*) FROM range(100000) a, range(100000) b WHERE a.range + b.range < 0"


def test_cancel_interrupts_a_running_cursor() -> None:
    guard = StatementGuard()
    cursor = duckdb.connect().cursor()
    guard.track(cursor)
    outcome: dict[str, BaseException] = {}

    def run() -> None:
        try:
            cursor.execute(SLOW).fetchall()
        except duckdb.Error as exc:
            outcome["error"] = exc

    thread = threading.Thread(target=run)
    thread.start()
    time.sleep(0.3)
    started = time.monotonic()
    guard.cancel(SqlFailure(3024, "Query timeout"))
    thread.join(20)
    assert not thread.is_alive() and time.monotonic() - started < 10
    assert isinstance(outcome.get("error"), duckdb.InterruptException)
    with pytest.raises(SqlFailure, match="Query timeout"):
        guard.check()
    guard.cancel(SqlFailure(1317, "killed"))
    assert guard.failure is not None and guard.failure.code == 3024, "the first reason wins"


def test_a_cancel_between_two_calls_still_stops_the_next_one() -> None:
    """DuckDB forgets an interrupt that arrives while the cursor is idle; the guard repeats it."""
    guard = StatementGuard()
    cursor = duckdb.connect().cursor()
    guard.track(cursor)
    cursor.execute("SELECT 1").fetchall()
    guard.cancel(SqlFailure(1317, "Query execution was interrupted"))  # between the statement's calls
    started = time.monotonic()
    with pytest.raises(duckdb.InterruptException):
        cursor.execute(SLOW).fetchall()
    assert time.monotonic() - started < 10
    guard.finish()


def test_a_cursor_opened_after_the_cancel_fails_at_once() -> None:
    guard = StatementGuard()
    guard.cancel(SqlFailure(1317, "Query execution was interrupted"))
    with pytest.raises(SqlFailure, match="interrupted"):
        guard.track(duckdb.connect().cursor())
