"""Session functions and @@variables answer Strata's values over the MySQL protocol, in SELECTs with
and without FROM (issue 16); SET of the variables clients send on connect."""

from __future__ import annotations

import time
from datetime import UTC, datetime, timedelta

import pymysql
import pytest

from tests.query.sqlkit import connect, fails, rows, run, scalar

_SESSION_FUNCTIONS = "DATABASE(), SCHEMA(), USER(), CURRENT_USER(), SESSION_USER(), CONNECTION_ID(), VERSION(), " \
                     "LAST_INSERT_ID(), @@autocommit, @@session.tx_isolation, @@global.transaction_isolation"


@pytest.fixture
def table(conn: pymysql.connections.Connection, db: str) -> str:
    run(conn, "CREATE TABLE t (id INT, at DATETIME(6)) DUPLICATE KEY(id) DISTRIBUTED BY HASH(id) BUCKETS 1")
    run(conn, "INSERT INTO t VALUES (1, '2020-01-01 00:00:00')")
    return "t"


def test_session_values_with_and_without_from(conn: pymysql.connections.Connection, db: str, table: str) -> None:
    alone = rows(conn, f"SELECT {_SESSION_FUNCTIONS}")
    assert alone == rows(conn, f"SELECT {_SESSION_FUNCTIONS} FROM {table}")
    assert alone == [(db, db, "root@127.0.0.1", "root@%", "root@127.0.0.1", conn.thread_id(), "5.7.99",
                      0, 1, "REPEATABLE-READ", "REPEATABLE-READ")]


def test_database_follows_use(conn: pymysql.connections.Connection, db: str, table: str) -> None:
    run(conn, "USE information_schema")
    assert rows(conn, f"SELECT DATABASE(), count(*) FROM {db}.{table}") == [("information_schema", 1)]
    fresh = connect()
    try:
        assert scalar(fresh, "SELECT DATABASE()") is None
    finally:
        fresh.close()


def test_handshake_version(conn: pymysql.connections.Connection) -> None:
    assert conn.get_server_info() == "5.7.99"
    assert scalar(conn, "SELECT @@version") == "5.7.99"
    assert scalar(conn, "SELECT @@version_comment LIMIT 1") == "Strata 0.1.0 (Apache Doris compatible)"


@pytest.mark.parametrize(("variable", "value"), [
    ("tx_isolation", "REPEATABLE-READ"), ("transaction_isolation", "REPEATABLE-READ"), ("tx_read_only", 0),
    ("transaction_read_only", 0), ("lower_case_table_names", 0), ("sql_mode", "ONLY_FULL_GROUP_BY"),
    ("character_set_client", "utf8mb4"), ("character_set_connection", "utf8mb4"),
    ("character_set_results", "utf8mb4"), ("character_set_server", "utf8mb4"),
    ("collation_connection", "utf8mb4_general_ci"), ("collation_server", "utf8mb4_general_ci"),
    ("max_allowed_packet", 16777216), ("net_write_timeout", 600), ("wait_timeout", 28800),
    ("interactive_timeout", 3600), ("auto_increment_increment", 1), ("license", "Apache License, Version 2.0"),
    ("system_time_zone", "UTC"), ("time_zone", "UTC"), ("init_connect", ""), ("performance_schema", 0),
    ("query_cache_size", 1048576), ("query_cache_type", "OFF"), ("have_query_cache", "YES"),
    ("sql_select_limit", 9223372036854775807), ("autocommit", 1), ("foreign_key_checks", 1), ("have_ssl", "DISABLED"),
    ("group_concat_max_len", 1024), ("net_buffer_length", 16384),
])
def test_variables_clients_read_on_connect(conn: pymysql.connections.Connection, variable: str,
                                           value: object) -> None:
    assert rows(conn, f"SELECT @@{variable}, @@session.{variable}, @@global.{variable}") == [(value, value, value)]


def test_connector_j_style_variable_query(conn: pymysql.connections.Connection) -> None:
    found = rows(conn, "SELECT @@session.auto_increment_increment AS auto_increment_increment, "
                       "@@character_set_client AS character_set_client, @@net_write_timeout AS net_write_timeout, "
                       "@@sql_mode AS sql_mode, @@transaction_isolation AS transaction_isolation")
    assert found == [(1, "utf8mb4", 600, "ONLY_FULL_GROUP_BY", "REPEATABLE-READ")]


def test_unknown_variable(conn: pymysql.connections.Connection, db: str, table: str) -> None:
    fails(conn, "SELECT @@no_such_variable", 1193, "Unknown system variable 'no_such_variable'")
    fails(conn, f"SELECT @@no_such_variable FROM {table}", 1193, "no_such_variable")


@pytest.mark.parametrize(("setting", "value"), [("ON", 1), ("OFF", 0), ("on", 1), ("off", 0), ("1", 1), ("0", 0),
                                                ("true", 1), ("false", 0), ("DEFAULT", 1)])
def test_set_autocommit(conn: pymysql.connections.Connection, setting: str, value: int) -> None:
    run(conn, f"SET autocommit = {setting}")
    assert scalar(conn, "SELECT @@autocommit") == value
    run(conn, "SET @@session.autocommit = ON")
    assert scalar(conn, "SELECT @@autocommit") == 1


def test_set_transaction_and_names(conn: pymysql.connections.Connection) -> None:
    run(conn, "SET SESSION TRANSACTION ISOLATION LEVEL READ COMMITTED")
    assert rows(conn, "SELECT @@tx_isolation, @@transaction_isolation") == [("READ-COMMITTED", "READ-COMMITTED")]
    run(conn, "SET tx_isolation = 'SERIALIZABLE'")
    assert rows(conn, "SELECT @@tx_isolation, @@transaction_isolation") == [("SERIALIZABLE", "SERIALIZABLE")]
    run(conn, "SET NAMES utf8mb4 COLLATE utf8mb4_unicode_ci")
    assert rows(conn, "SELECT @@character_set_client, @@collation_connection") == [("utf8mb4", "utf8mb4_unicode_ci")]
    run(conn, "SET sql_mode = 'STRICT_TRANS_TABLES'")
    assert scalar(conn, "SELECT @@sql_mode") == "STRICT_TRANS_TABLES"


def _between(value: datetime, zone_hours: int) -> None:
    local = datetime.now(UTC).replace(tzinfo=None) + timedelta(hours=zone_hours)
    assert abs((value - local).total_seconds()) < 10, (value, local)


def test_now_with_and_without_from(conn: pymysql.connections.Connection, db: str, table: str) -> None:
    for source in ("", f" FROM {table}"):
        now0, now3, now6, current, today = rows(conn, f"SELECT NOW(), NOW(3), NOW(6), CURRENT_TIMESTAMP(), "
                                                      f"CURDATE(){source}")[0]
        for value in (now0, now3, now6, current):
            assert isinstance(value, datetime) and value.tzinfo is None
            _between(value, 0)
        assert now0.microsecond == 0 and current.microsecond == 0 and now3.microsecond % 1000 == 0
        assert now0 == now6.replace(microsecond=0) and today == now6.date()


def test_now_in_the_session_time_zone(conn: pymysql.connections.Connection, db: str, table: str) -> None:
    run(conn, "SET time_zone = '+08:00'")
    now, utc = rows(conn, f"SELECT NOW(6), UTC_TIMESTAMP(6) FROM {table}")[0]
    assert now - utc == timedelta(hours=8)
    _between(now, 8)


def test_now_in_predicates_and_writes(conn: pymysql.connections.Connection, db: str, table: str) -> None:
    assert rows(conn, f"SELECT id FROM {table} WHERE at < NOW() - INTERVAL 1 DAY") == [(1,)]
    run(conn, f"INSERT INTO {table} SELECT 2, NOW(6)")
    written = scalar(conn, f"SELECT at FROM {table} WHERE id = 2")
    assert isinstance(written, datetime)
    _between(written, 0)


def test_now_precision_checked(conn: pymysql.connections.Connection) -> None:
    fails(conn, "SELECT NOW(7)", 1426, "Too-big precision 7")


def test_session_values_in_insert_values(conn: pymysql.connections.Connection, db: str) -> None:
    run(conn, "CREATE TABLE w (id INT, at DATETIME, who VARCHAR(64), dbname VARCHAR(64)) DUPLICATE KEY(id) "
              "DISTRIBUTED BY HASH(id) BUCKETS 1")
    run(conn, "SET time_zone = '+08:00'")
    run(conn, "INSERT INTO w VALUES (1, NOW(), CURRENT_USER(), DATABASE())")
    at, who, dbname = rows(conn, "SELECT at, who, dbname FROM w")[0]
    _between(at, 8)
    assert (who, dbname) == ("root@%", db)


def test_a_stored_delete_predicate_keeps_the_statements_now(conn: pymysql.connections.Connection, db: str) -> None:
    """DELETE on a Duplicate Key table stores its predicate and applies it at every later read: NOW()
    in it is the DELETE's instant, not each read's."""
    run(conn, "CREATE TABLE d (id INT, at DATETIME(6)) DUPLICATE KEY(id) DISTRIBUTED BY HASH(id) BUCKETS 1")
    run(conn, "INSERT INTO d VALUES (1, NOW(6) - INTERVAL 1 HOUR), (2, NOW(6) + INTERVAL 2 SECOND)")
    assert run(conn, "DELETE FROM d WHERE at < NOW(6)") == 1
    assert rows(conn, "SELECT id FROM d") == [(2,)]
    time.sleep(2.5)  # row 2's time is now in the past: a predicate evaluated at read time would hide it
    assert rows(conn, "SELECT id FROM d") == [(2,)]


def test_set_refusals_are_mysqls(conn: pymysql.connections.Connection) -> None:
    fails(conn, "SET autocommit = 'maybe'", 1231, "Variable 'autocommit' can't be set to the value of 'maybe'")
    fails(conn, "SET wait_timeout = 'abc'", 1231, "wait_timeout")
    fails(conn, "SET version = '1.0'", 1238, "Variable 'version' is a read only variable")
    assert scalar(conn, "SELECT @@autocommit") == 1 and scalar(conn, "SELECT VERSION()") == "5.7.99"
