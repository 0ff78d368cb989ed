"""Client matrix, Apache Arrow's Flight SQL JDBC driver (from Maven Central), the JDBC driver Doris documents for
its Arrow Flight SQL port: tests/clients/java/FlightSqlJdbc.java runs every check as the module's user and the
tests here compare what JDBC returned, as [Java class, toString()], exactly.

The driver prepares every statement and runs it as a query only when CreatePreparedStatement announces rows
(`dataset_schema`), and fills `?` from the announced `parameter_schema` (query.flight.server)."""

from __future__ import annotations

import os
import shutil
from typing import Any

import pytest

from tests.clients import install
from tests.clients.external import Results, run_program, value
from tests.clients.matrix import Login

pytestmark = pytest.mark.integration

INT, LONG, DEC, DATE = "java.lang.Integer", "java.lang.Long", "java.math.BigDecimal", "java.sql.Date"
TS, STR, DBL, BOOL, NULL = "java.sql.Timestamp", "java.lang.String", "java.lang.Double", "java.lang.Boolean", "null"
# java.sql.Types
T_INTEGER, T_BIGINT, T_DECIMAL, T_DATE, T_TIMESTAMP, T_VARCHAR, T_DOUBLE, T_BOOLEAN = 4, -5, 3, 91, 93, 12, 8, 16


def _obj(cls: str, text: str | None) -> list[Any]:
    return [cls, text]


@pytest.fixture(scope="module")
def jdbc(login: Login) -> tuple[Results, str]:
    """(results, database) of one run of FlightSqlJdbc as the module's user."""
    if shutil.which("java") is None:
        pytest.skip("java not found on PATH — install a JDK 17+ (apt-get install openjdk-17-jdk-headless)")
    try:
        classpath = install.flight_sql_jdbc()
    except install.ClientUnavailable as exc:
        pytest.skip(str(exc))
    port = os.environ.get("STRATA_ARROW_FLIGHT_SQL_PORT")
    if not port or port == "0":
        pytest.fail("STRATA_ARROW_FLIGHT_SQL_PORT is not set; run the tests through infra/test")
    # Arrow's memory needs java.nio opened to it on Java 17+.
    results = run_program(["java", "--add-opens=java.base/java.nio=ALL-UNNAMED", "-cp", classpath, "FlightSqlJdbc",
                           login.host, port, login.user, login.password, login.database, "fj"])
    return results, login.database


def test_connect_and_query(jdbc: tuple[Results, str]) -> None:
    assert value(jdbc[0], "connect") == [42, "Strata (Apache Doris Arrow Flight SQL)"]


def test_ddl_and_dml_run_as_updates(jdbc: tuple[Results, str]) -> None:
    assert value(jdbc[0], "ddl") == 0
    assert value(jdbc[0], "insert") == 2


def test_select_types(jdbc: tuple[Results, str]) -> None:
    assert value(jdbc[0], "select_types") == [
        [_obj(INT, "1"), _obj(LONG, "9000000000"), _obj(DEC, "12.50"), _obj(DATE, "2024-02-29"),
         _obj(TS, "2024-02-29 12:34:56.123456"), _obj(STR, "héllo"), _obj(DBL, "2.5"), _obj(BOOL, "true")],
        [_obj(INT, "2"), *[_obj(NULL, None)] * 7],
    ]


def test_result_metadata(jdbc: tuple[Results, str]) -> None:
    # (label, type name, java.sql.Types, precision, scale, class name) as the driver reports them: from the
    # Arrow schema, a DECIMAL's precision and scale from Flight SQL's field metadata.
    assert value(jdbc[0], "result_metadata") == [["id", "INTEGER", T_INTEGER, 0, 0, None],
                                                 ["label", "VARCHAR", T_VARCHAR, 0, 0, None],
                                                 ["amount", "DECIMAL", T_DECIMAL, 10, 2, None]]


def test_prepared_query_with_parameters(jdbc: tuple[Results, str]) -> None:
    one, two = [_obj(INT, "1"), _obj(STR, "héllo")], [_obj(INT, "2"), _obj(NULL, None)]
    # Two parameters announced; a string bound is one literal: `id = 1 OR txt = <injection>` finds row 1 only.
    assert value(jdbc[0], "prepared_query") == [2, [one], [one], [two]]


def test_prepared_insert_of_every_type(jdbc: tuple[Results, str]) -> None:
    assert value(jdbc[0], "prepared_insert") == [1, [[
        _obj(INT, "3"), _obj(LONG, "-7"), _obj(DEC, "-0.25"), _obj(DATE, "1999-12-31"),
        _obj(TS, "2000-01-01 00:00:00.5"), _obj(STR, "it's"), _obj(DBL, "1.0E300"), _obj(BOOL, "false")]]]


def test_batch(jdbc: tuple[Results, str]) -> None:
    total, rows = value(jdbc[0], "batch")
    assert total == 3
    assert rows == [[_obj(INT, str(i)), _obj(STR, f"batch-{i}")] for i in (10, 11, 12)]


def test_prepared_delete(jdbc: tuple[Results, str]) -> None:
    assert value(jdbc[0], "prepared_delete") == [[_obj(INT, "10")], [_obj(INT, "12")]]


def test_show_and_metadata(jdbc: tuple[Results, str]) -> None:
    results, database = jdbc
    assert value(results, "show_tables") == [[_obj(STR, "fj_t")]]
    assert value(results, "get_tables") == [[database, "fj_t", "BASE TABLE"]]  # before get_primary_keys' table
    assert value(results, "get_columns") == [
        ["id", T_INTEGER, 1], ["big", T_BIGINT, 2], ["amount", T_DECIMAL, 3], ["d", T_DATE, 4],
        ["dt6", T_TIMESTAMP, 5], ["txt", T_VARCHAR, 6], ["dbl", T_DOUBLE, 7], ["flag", T_BOOLEAN, 8]]


def test_primary_keys(jdbc: tuple[Results, str]) -> None:
    """A Unique Key table's key columns are its primary key (as on the MySQL port); a Duplicate Key table has none."""
    assert value(jdbc[0], "get_primary_keys") == [["fj_t_uniq", "id", 1]]


def test_errors_keep_mysql_s_text_and_the_connection(jdbc: tuple[Results, str]) -> None:
    results, database = jdbc
    assert value(results, "error_unknown_table") == [
        f"ERROR 1146 (42S02): Table '{database}.nope' doesn't exist. Detail: Failed", 1]
    assert value(results, "error_syntax") == [
        "ERROR 1064 (42000): syntax error near 'SELEC' at line 1, column 1: unknown statement. Detail: Failed", 1]
