"""query.session_functions and query.labels without a server: the literals a statement's session
functions become, run on the sandboxed DuckDB the engine uses, with the types the wire layer reads
(`Rows.types`); and the labels MySQL gives the columns. The same over the MySQL protocol is in
test_sql_session_functions.py."""

from __future__ import annotations

from collections.abc import Iterator
from datetime import UTC, date, datetime, time, timedelta, timezone
from typing import Any

import duckdb
import pytest

from query.context import SessionState, SqlFailure
from query.functions import to_duckdb
from query.labels import column_labels
from query.parser import parse_statement
from query.parser import statements as st
from query.session_functions import session_zone, substitute
from query.system_variables import MYSQL_VARIABLES, SERVER_VERSION
from schemas.errors import ErrorCode
from storage.sandbox import sandboxed_connection


@pytest.fixture(scope="module")
def duck() -> Iterator[duckdb.DuckDBPyConnection]:
    connection = sandboxed_connection([])
    yield connection
    connection.close()


def _session(**variables: object) -> SessionState:
    session_values = {name: default for name, (_, default, _) in MYSQL_VARIABLES.items()} | variables
    return SessionState(database="shop", user="ana", connection_id=42, client_host="10.0.0.7",
                        variables={"time_zone": str(session_values["time_zone"])},
                        system_variables=session_values, global_variables={"autocommit": True, "tx_isolation": "X"})


def _run(duck: duckdb.DuckDBPyConnection, sql: str, session: SessionState | None = None) -> tuple[
        list[str], list[str], list[tuple[Any, ...]]]:
    """(labels, DuckDB types, rows) of a SELECT, as query.reads.run_query makes them."""
    statement = parse_statement(sql)
    assert isinstance(statement, st.Query)
    session = session or _session()
    substituted = to_duckdb(substitute(session, statement.expr), session_zone(session))
    result = duck.execute(substituted.sql(dialect="duckdb"))
    description = result.description or []
    rows = result.fetchall()
    return column_labels(statement.expr, [d[0] for d in description]), [str(d[1]) for d in description], rows


def test_session_functions_answer_the_session(duck: duckdb.DuckDBPyConnection) -> None:
    labels, types, rows = _run(duck, "SELECT DATABASE(), SCHEMA(), CURRENT_SCHEMA(), USER(), CURRENT_USER(), "
                                     "CURRENT_USER, SESSION_USER(), CONNECTION_ID(), VERSION(), LAST_INSERT_ID()")
    assert rows == [("shop", "shop", "shop", "ana@10.0.0.7", "ana@%", "ana@%", "ana@10.0.0.7", 42,
                     SERVER_VERSION, 0)]
    assert labels == ["DATABASE()", "SCHEMA()", "CURRENT_SCHEMA()", "USER()", "CURRENT_USER()", "CURRENT_USER",
                      "SESSION_USER()", "CONNECTION_ID()", "VERSION()", "LAST_INSERT_ID()"]
    assert types[7] == "BIGINT" and types[0] == "VARCHAR"


def test_no_database_is_a_typed_null(duck: duckdb.DuckDBPyConnection) -> None:
    session = _session()
    session.database = None
    _, types, rows = _run(duck, "SELECT DATABASE()", session)
    assert rows == [(None,)] and types == ["VARCHAR"]


def test_variables_in_either_scope(duck: duckdb.DuckDBPyConnection) -> None:
    labels, types, rows = _run(duck, "SELECT @@autocommit, @@session.tx_isolation, @@GLOBAL.tx_isolation, "
                                     "@@version, @@sql_mode, @@max_allowed_packet",
                               _session(autocommit=False))
    assert rows == [(0, "REPEATABLE-READ", "X", SERVER_VERSION, "ONLY_FULL_GROUP_BY", 16777216)]
    assert labels == ["@@autocommit", "@@session.tx_isolation", "@@GLOBAL.tx_isolation", "@@version", "@@sql_mode",
                      "@@max_allowed_packet"]
    assert types[0] == "BIGINT" and types[1] == "VARCHAR"


def test_unknown_variable_is_mysql_1193(duck: duckdb.DuckDBPyConnection) -> None:
    with pytest.raises(SqlFailure) as caught:
        _run(duck, "SELECT @@no_such_thing")
    assert caught.value.code == ErrorCode.UNKNOWN_SYSTEM_VARIABLE == 1193
    assert caught.value.message == "Unknown system variable 'no_such_thing'"


def test_user_variables_are_refused_not_guessed(duck: duckdb.DuckDBPyConnection) -> None:
    with pytest.raises(SqlFailure) as caught:
        _run(duck, "SELECT @v")
    assert caught.value.code == ErrorCode.NOT_SUPPORTED_YET and "@v" in caught.value.message


@pytest.mark.parametrize(("call", "kind", "step_us"), [
    ("NOW()", "TIMESTAMP_S", 1_000_000), ("CURRENT_TIMESTAMP", "TIMESTAMP_S", 1_000_000),
    ("CURRENT_TIMESTAMP(0)", "TIMESTAMP_S", 1_000_000), ("NOW(1)", "TIMESTAMP_MS", 100_000),
    ("NOW(3)", "TIMESTAMP_MS", 1_000), ("CURRENT_TIMESTAMP(3)", "TIMESTAMP_MS", 1_000),
    ("NOW(4)", "TIMESTAMP", 100), ("NOW(6)", "TIMESTAMP", 1), ("SYSDATE()", "TIMESTAMP_S", 1_000_000),
    ("LOCALTIMESTAMP", "TIMESTAMP_S", 1_000_000), ("LOCALTIME()", "TIMESTAMP_S", 1_000_000),
])
def test_now_is_naive_in_the_session_zone_with_its_precision(duck: duckdb.DuckDBPyConnection, call: str, kind: str,
                                                             step_us: int) -> None:
    zone = timezone(timedelta(hours=8))
    before = datetime.now(zone).replace(tzinfo=None)
    labels, types, rows = _run(duck, f"SELECT {call}", _session(time_zone="+08:00"))
    after = datetime.now(zone).replace(tzinfo=None)
    value = rows[0][0]
    assert isinstance(value, datetime) and value.tzinfo is None
    assert before - timedelta(seconds=1) <= value <= after
    assert value.microsecond % step_us == 0
    assert types == [kind] and labels == [call]


def test_one_instant_per_statement(duck: duckdb.DuckDBPyConnection) -> None:
    _, _, rows = _run(duck, "SELECT NOW(6), CURRENT_TIMESTAMP(6), NOW(), CURDATE(), CURTIME(6), UNIX_TIMESTAMP()")
    now6, current6, now0, today, clock, unix = rows[0]
    assert now6 == current6 and now0 == now6.replace(microsecond=0)
    assert today == now6.date() and clock == now6.time()
    assert unix == int(now6.replace(tzinfo=UTC).timestamp())  # the session zone is UTC here


def test_dates_times_and_utc(duck: duckdb.DuckDBPyConnection) -> None:
    labels, types, rows = _run(duck, "SELECT CURDATE(), CURRENT_DATE, UTC_DATE(), CURTIME(), CURRENT_TIME(3), "
                                     "UTC_TIME(), UTC_TIMESTAMP(), UTC_TIMESTAMP(6)", _session(time_zone="-05:00"))
    today, current_date, utc_date, clock, clock3, utc_clock, utc_now, utc_now6 = rows[0]
    assert types == ["DATE", "DATE", "DATE", "TIME", "TIME", "TIME", "TIMESTAMP_S", "TIMESTAMP"]
    assert isinstance(today, date) and today == current_date and isinstance(clock, time)
    assert clock.microsecond == 0 and clock3.microsecond % 1000 == 0
    utc = datetime.now(UTC).replace(tzinfo=None)
    assert abs((utc_now6 - utc).total_seconds()) < 5 and utc_date == utc_now6.date()
    assert utc_now == utc_now6.replace(microsecond=0) and utc_clock == utc_now6.time().replace(microsecond=0)
    local = utc_now6 - timedelta(hours=5)
    assert clock == local.time().replace(microsecond=0) and today == local.date()
    assert labels[1] == "CURRENT_DATE"


def test_named_time_zone(duck: duckdb.DuckDBPyConnection) -> None:
    _, _, rows = _run(duck, "SELECT NOW(6), UTC_TIMESTAMP(6)", _session(time_zone="Asia/Kathmandu"))
    local, utc = rows[0]
    assert local - utc == timedelta(hours=5, minutes=45)


def test_bad_precision_is_mysql_1426(duck: duckdb.DuckDBPyConnection) -> None:
    with pytest.raises(SqlFailure) as caught:
        _run(duck, "SELECT NOW(7)")
    assert caught.value.code == ErrorCode.TOO_BIG_PRECISION == 1426 and "Maximum is 6" in caught.value.message
    with pytest.raises(SqlFailure) as caught:
        _run(duck, "SELECT DATABASE(1)")
    assert caught.value.code == ErrorCode.WRONG_PARAMCOUNT_TO_NATIVE_FCT


def test_typed_even_when_no_row_comes_back(duck: duckdb.DuckDBPyConnection) -> None:
    _, types, rows = _run(duck, "SELECT NOW(3), CONNECTION_ID(), DATABASE() WHERE 1 = 0")
    assert rows == [] and types == ["TIMESTAMP_MS", "BIGINT", "VARCHAR"]


@pytest.mark.parametrize(("zone", "offset"), [("UTC", timedelta(0)), ("+08:00", timedelta(hours=8)),
                                              ("-05:30", timedelta(hours=-5, minutes=-30)),
                                              ("America/New_York", timedelta(hours=-4))])
def test_unix_time_conversions_use_the_session_zone(duck: duckdb.DuckDBPyConnection, zone: str,
                                                    offset: timedelta) -> None:
    """1719792000 is 2024-07-01 00:00:00 UTC (New York is on daylight time then)."""
    labels, types, rows = _run(duck, "SELECT FROM_UNIXTIME(1719792000), FROM_UNIXTIME(1719792000, '%Y-%m-%d %H:%i'), "
                                     "UNIX_TIMESTAMP('2024-07-01 00:00:00'), "
                                     "UNIX_TIMESTAMP(FROM_UNIXTIME(1719792000)), "
                                     "UNIX_TIMESTAMP(NOW()) - UNIX_TIMESTAMP()", _session(time_zone=zone))
    local = datetime(2024, 7, 1) + offset
    assert rows == [(local, local.strftime("%Y-%m-%d %H:%M"), 1719792000 - int(offset.total_seconds()), 1719792000,
                     0)]
    assert types == ["TIMESTAMP_S", "VARCHAR", "BIGINT", "BIGINT", "BIGINT"]
    assert labels[0] == "FROM_UNIXTIME(1719792000)"


def test_unix_timestamp_reads_a_format(duck: duckdb.DuckDBPyConnection) -> None:
    assert _run(duck, "SELECT UNIX_TIMESTAMP('2024', '%Y')")[2] == [(1704067200,)]


@pytest.mark.parametrize(("sql", "labels"), [
    ("SELECT 1, 1", ["1", "1"]),
    ("SELECT count(*), length( 'abc' ), 'lit', 1 + 1 AS two, null, true", ["count(*)", "length( 'abc' )", "lit",
                                                                           "two", "NULL", "TRUE"]),
    ("SELECT concat_ws('|', 'a', NULL, 'c')", ["concat_ws('|', 'a', NULL, 'c')"]),
    ("SELECT x.a, b FROM (SELECT 1 AS a, 2 AS b) x", ["a", "b"]),
    ("SELECT *, upper('q') FROM (SELECT 1 AS a, 2 AS b) x", ["a", "b", "upper('q')"]),
    ("SELECT length('ab') FROM (SELECT 1) x UNION ALL SELECT 5", ["length('ab')"]),
])
def test_labels_are_what_the_user_wrote(duck: duckdb.DuckDBPyConnection, sql: str, labels: list[str]) -> None:
    assert _run(duck, sql)[0] == labels
