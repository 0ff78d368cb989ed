"""Doris' resource controls on the SQL port: `query_timeout` / `insert_timeout` stop a statement that
runs too long (the connection stays usable), SHOW PROCESSLIST lists the sessions (a user its own),
KILL [QUERY] stops another session's statement or closes it (its own, or any with ADMIN_PRIV), and
the user property `max_user_connections` refuses one connection too many."""

from __future__ import annotations

import os
import threading
import time
from collections.abc import Callable
from typing import Any

import pymysql
import pytest
from pymysql.connections import Connection as Conn

from tests.query.sqlkit import connect, fails, rows, run, scalar, values

pytestmark = pytest.mark.integration

# Three copies of a 2,000-row table: 8·10⁹ combinations, each multiplied out (statistics cannot rule the
# predicate out, and it is no join key), far more work than any timeout below allows.
SLOW_PREDICATE = "a.k * b.k * c.k = 7777777777"
SLOW_SELECT = f"SELECT count(*) FROM big a, big b, big c WHERE {SLOW_PREDICATE}"
PROCESSLIST_COLUMNS = ["CurrentConnected", "Id", "User", "Host", "LoginTime", "Catalog", "Db", "Command", "Time",
                       "State", "QueryId", "Info"]


def _login(user: str, password: str, database: str | None = None) -> Conn:
    return pymysql.connect(host="127.0.0.1", port=int(os.environ["STRATA_SQL_PORT"]), user=user, password=password,
                           database=database, autocommit=True, connect_timeout=20, read_timeout=120)


@pytest.fixture
def big(conn: Conn, db: str) -> str:
    run(conn, "CREATE TABLE big (k BIGINT, v BIGINT) DUPLICATE KEY(k) DISTRIBUTED BY HASH(k) BUCKETS 1")
    run(conn, f"INSERT INTO big VALUES {values([(i, i) for i in range(2000)])}")
    return db


def _connection_id(conn: Conn) -> int:
    return int(scalar(conn, "SELECT CONNECTION_ID()"))


def _processlist(conn: Conn) -> list[dict[str, Any]]:
    with conn.cursor() as cur:
        cur.execute("SHOW FULL PROCESSLIST")
        names = [d[0] for d in cur.description or ()]
        return [dict(zip(names, row, strict=True)) for row in cur.fetchall()]


def _in_background(fn: Callable[[], Any]) -> tuple[threading.Thread, dict[str, Any]]:
    outcome: dict[str, Any] = {}

    def target() -> None:
        try:
            outcome["result"] = fn()
        except pymysql.MySQLError as exc:
            outcome["error"] = exc

    thread = threading.Thread(target=target, daemon=True)
    thread.start()
    return thread, outcome


def _wait_running(watcher: Conn, connection_id: int, timeout_s: float = 30.0) -> None:
    deadline = time.monotonic() + timeout_s
    while time.monotonic() < deadline:
        found = [r for r in _processlist(watcher) if r["Id"] == connection_id]
        if found and found[0]["Command"] == "Query":
            return
        time.sleep(0.1)
    raise AssertionError(f"connection {connection_id} never showed a running statement")


def test_query_timeout_stops_a_long_select_and_the_connection_stays_usable(conn: Conn, big: str) -> None:
    assert rows(conn, "SHOW VARIABLES LIKE 'query_timeout'") == [("query_timeout", "900")]
    assert rows(conn, "SHOW VARIABLES LIKE 'insert_timeout'") == [("insert_timeout", "14400")]
    run(conn, "SET query_timeout = 1")
    started = time.monotonic()
    fails(conn, SLOW_SELECT, 3024, "Query timeout", "query_timeout")
    assert time.monotonic() - started < 15, "the timeout did not stop the statement"
    assert scalar(conn, "SELECT count(*) FROM big") == 2000
    run(conn, "SET query_timeout = 900")
    assert scalar(conn, "SELECT count(*) FROM big a, big b WHERE a.k = b.k") == 2000
    run(conn, "SET max_execution_time = 500")  # MySQL's limit in ms, which Doris takes as query_timeout
    fails(conn, SLOW_SELECT, 3024, "Query timeout", "max_execution_time")


def test_timeouts_are_checked_when_set(conn: Conn) -> None:
    for bad in ("0", "'soon'", "99999999999"):
        fails(conn, f"SET query_timeout = {bad}", 1231, "query_timeout")
        fails(conn, f"SET insert_timeout = {bad}", 1231, "insert_timeout")
    assert rows(conn, "SHOW VARIABLES LIKE 'query_timeout'") == [("query_timeout", "900")]


def test_insert_timeout_stops_a_long_insert(conn: Conn, big: str) -> None:
    run(conn, "CREATE TABLE sink (k BIGINT) DUPLICATE KEY(k) DISTRIBUTED BY HASH(k) BUCKETS 1")
    run(conn, "INSERT INTO sink SELECT k FROM big WHERE k < 10")
    run(conn, "SET insert_timeout = 1")  # INSERT … SELECT runs under insert_timeout; query_timeout stays 900
    started = time.monotonic()
    fails(conn, f"INSERT INTO sink SELECT a.k FROM big a, big b, big c WHERE {SLOW_PREDICATE}",
          3024, "Insert timeout", "insert_timeout")
    assert time.monotonic() - started < 15
    assert scalar(conn, "SELECT count(*) FROM sink") == 10, "the timed-out INSERT must not commit rows"


def test_show_processlist_lists_sessions_and_a_user_sees_only_its_own(conn: Conn, big: str,
                                                                      user: tuple[str, str]) -> None:
    name, password = user
    mine = _connection_id(conn)
    with _login(name, password) as theirs:
        their_id = _connection_id(theirs)
        with conn.cursor() as cur:
            cur.execute("SHOW PROCESSLIST")
            assert [d[0] for d in cur.description or ()] == PROCESSLIST_COLUMNS
        seen = {r["Id"]: r for r in _processlist(conn)}
        assert seen[mine]["User"] == "root" and seen[mine]["CurrentConnected"] == "Yes"
        assert seen[mine]["Db"] == big and seen[mine]["Command"] == "Query"
        assert seen[mine]["Info"] == "SHOW FULL PROCESSLIST"
        assert seen[their_id]["User"] == name and seen[their_id]["Command"] == "Sleep"
        assert seen[their_id]["CurrentConnected"] == "" and seen[their_id]["Info"] is None
        assert str(seen[their_id]["Host"]).startswith("127.0.0.1:")
        own_view = _processlist(theirs)
        assert [r["Id"] for r in own_view] == [their_id], "a user without ADMIN_PRIV sees only its own sessions"
        run(conn, f"GRANT ADMIN_PRIV ON *.* TO '{name}'")
        assert mine in {r["Id"] for r in _processlist(theirs)}, "ADMIN_PRIV sees every session"


def test_kill_query_stops_the_statement_of_another_connection(conn: Conn, big: str) -> None:
    with connect(big) as victim:
        victim_id = _connection_id(victim)
        thread, outcome = _in_background(lambda: rows(victim, SLOW_SELECT))
        _wait_running(conn, victim_id)
        started = time.monotonic()
        run(conn, f"KILL QUERY {victim_id}")
        thread.join(30)
        assert not thread.is_alive(), "KILL QUERY did not stop the statement"
        assert time.monotonic() - started < 15
        error = outcome.get("error")
        assert error is not None and error.args[0] == 1317, outcome
        assert "interrupted" in str(error.args[1])
        assert rows(victim, "SELECT 1") == [(1,)], "KILL QUERY must leave the connection usable"
        assert scalar(victim, "SELECT count(*) FROM big") == 2000


def test_kill_closes_the_connection(conn: Conn, big: str) -> None:
    victim = connect(big)
    victim_id = _connection_id(victim)
    thread, outcome = _in_background(lambda: rows(victim, SLOW_SELECT))
    _wait_running(conn, victim_id)
    run(conn, f"KILL {victim_id}")
    thread.join(30)
    assert not thread.is_alive() and "error" in outcome, outcome
    with pytest.raises((pymysql.MySQLError, pymysql.err.InterfaceError)):
        rows(victim, "SELECT 1")
    deadline = time.monotonic() + 10
    while victim_id in {r["Id"] for r in _processlist(conn)} and time.monotonic() < deadline:
        time.sleep(0.1)
    assert victim_id not in {r["Id"] for r in _processlist(conn)}
    idle = connect()
    idle_id = _connection_id(idle)
    run(conn, f"KILL CONNECTION {idle_id}")  # an idle connection is closed too
    with pytest.raises((pymysql.MySQLError, pymysql.err.InterfaceError)):
        rows(idle, "SELECT 1")


def test_a_user_kills_only_its_own_sessions(conn: Conn, user: tuple[str, str]) -> None:
    name, password = user
    root_id = _connection_id(conn)
    with _login(name, password) as first, _login(name, password) as second:
        fails(first, f"KILL {root_id}", 1095, "not owner", str(root_id))
        fails(first, f"KILL QUERY {root_id}", 1095, "not owner")
        fails(first, "KILL 4294967295", 1094, "Unknown thread id")
        second_id = _connection_id(second)
        run(first, f"KILL {second_id}")
        with pytest.raises((pymysql.MySQLError, pymysql.err.InterfaceError)):
            rows(second, "SELECT 1")
    assert rows(conn, "SELECT 1") == [(1,)]


def test_the_user_property_query_timeout_overrides_the_session_variable(conn: Conn, big: str,
                                                                       user: tuple[str, str]) -> None:
    name, password = user
    run(conn, f"GRANT SELECT_PRIV ON {big}.big TO '{name}'")
    run(conn, f"SET PROPERTY FOR '{name}' 'query_timeout' = '1'")
    fails(conn, f"SET PROPERTY FOR '{name}' 'query_timeout' = '0'", 1210, "query_timeout")
    with _login(name, password, big) as limited:
        run(limited, "SET query_timeout = 3600")  # the user cannot lift its own limit
        fails(limited, "SET PROPERTY 'query_timeout' = '3600'", 1227, "ADMIN_PRIV")
        started = time.monotonic()
        fails(limited, SLOW_SELECT, 3024, "Query timeout", "user property")
        assert time.monotonic() - started < 15
        assert scalar(limited, "SELECT count(*) FROM big") == 2000
    run(conn, f"SET PROPERTY FOR '{name}' 'query_timeout' = '-1'")
    assert rows(conn, f"SHOW PROPERTY FOR '{name}' LIKE '%timeout'") == [("query_timeout", "-1"),
                                                                        ("insert_timeout", "-1")]


def test_max_user_connections_refuses_one_connection_too_many(conn: Conn, user: tuple[str, str]) -> None:
    name, password = user
    fails(conn, f"SET PROPERTY FOR '{name}' 'max_user_connections' = '0'", 1210, "max_user_connections")
    fails(conn, f"SET PROPERTY FOR '{name}' 'cpu_resource_limit' = '2'", 1235, "cpu_resource_limit")
    assert rows(conn, f"SHOW PROPERTY FOR '{name}'") == [("max_user_connections", "100"), ("query_timeout", "-1"),
                                                         ("insert_timeout", "-1")]  # Doris' defaults
    run(conn, f"SET PROPERTY FOR '{name}' 'max_user_connections' = '2'")
    assert rows(conn, f"SHOW PROPERTY FOR '{name}' LIKE 'max_user%'") == [("max_user_connections", "2")]
    first, second = _login(name, password), _login(name, password)
    assert rows(first, "SHOW PROPERTY LIKE 'max%'") == [("max_user_connections", "2")]
    fails(first, "SHOW PROPERTY FOR 'root'", 1227, "ADMIN_PRIV")
    with pytest.raises(pymysql.MySQLError) as refused:
        _login(name, password)
    assert refused.value.args[0] == 1203, refused.value.args
    assert "max_user_connections" in refused.value.args[1]
    fails(first, f"SET PROPERTY FOR '{name}' 'max_user_connections' = '10'", 1227, "ADMIN_PRIV")
    second.close()
    deadline = time.monotonic() + 10
    while True:  # the server notices the closed connection a moment later
        try:
            third = _login(name, password)
            break
        except pymysql.MySQLError:
            if time.monotonic() > deadline:
                raise
            time.sleep(0.2)
    assert rows(third, "SELECT 1") == [(1,)]
    third.close()
    first.close()
    assert rows(connect(), "SELECT 1") == [(1,)], "root is not limited by another user's property"
