"""One evaluator: a SELECT without FROM runs on the same engine as one over a table, with the same
Doris functions, the same sandbox and the labels MySQL gives (issue 16)."""

from __future__ import annotations

import pymysql
import pytest

from tests.query.sqlkit import columns, fails, rows, run

# Expressions whose value must not depend on whether the SELECT reads a table.
_EXPRESSIONS = [
    "concat_ws('|', 'a', NULL, 'c')",
    "split_part('a,b,c', ',', 2)",
    "regexp_extract('abc123def', '([0-9]+)', 1)",
    "concat('x', 1, NULL)",
    "ifnull(NULL, 'd')",
    "upper('straße')",
    "length('héllo')",
    "char_length('héllo')",
    "1 / 4",
    "7 DIV 2",
    "round(2.345, 2)",
    "date_format('2026-01-02 03:04:05', '%Y/%m/%d %H')",
    "datediff('2026-03-01', '2026-02-01')",
    "CASE WHEN 1 > 0 THEN 'yes' ELSE 'no' END",
    "substring('abcdef', 2, 3)",
    "coalesce(NULL, NULL, 3)",
]


@pytest.fixture
def one_row(conn: pymysql.connections.Connection, db: str) -> str:
    run(conn, "CREATE TABLE one (id INT) DUPLICATE KEY(id) DISTRIBUTED BY HASH(id) BUCKETS 1")
    run(conn, "INSERT INTO one VALUES (1)")
    return f"{db}.one"


@pytest.mark.parametrize("expression", _EXPRESSIONS)
def test_same_answer_with_and_without_from(conn: pymysql.connections.Connection, one_row: str,
                                           expression: str) -> None:
    alone = rows(conn, f"SELECT {expression}")
    assert alone == rows(conn, f"SELECT {expression} FROM {one_row}")
    assert alone == rows(conn, f"SELECT {expression} FROM DUAL")


def test_doris_functions_without_from(conn: pymysql.connections.Connection) -> None:
    assert rows(conn, "SELECT concat_ws('|', 'a', NULL, 'c'), split_part('a,b,c', ',', 2), "
                      "regexp_extract('abc123', '([0-9]+)', 1)") == [("a|c", "b", "123")]


def test_duplicate_labels(conn: pymysql.connections.Connection) -> None:
    assert rows(conn, "SELECT 1, 1") == [(1, 1)]
    assert columns(conn, "SELECT 1, 1") == ["1", "1"]
    assert rows(conn, "SELECT @@autocommit, @@autocommit") == [(1, 1)]
    assert columns(conn, "SELECT @@autocommit, @@autocommit") == ["@@autocommit", "@@autocommit"]


def test_labels_as_mysql_gives_them(conn: pymysql.connections.Connection, one_row: str) -> None:
    assert columns(conn, f"SELECT count(*), length(CAST(id AS VARCHAR)), CURRENT_SCHEMA(), id, one.id, 'text', "
                         f"id + 1, id AS renamed FROM {one_row} GROUP BY id") == [
        "count(*)", "length(CAST(id AS VARCHAR))", "CURRENT_SCHEMA()", "id", "id", "text", "id + 1", "renamed"]
    assert columns(conn, f"SELECT *, upper('q') FROM {one_row}") == ["id", "upper('q')"]
    assert columns(conn, "SELECT length('ab'), DATABASE()") == ["length('ab')", "DATABASE()"]


def test_sandbox_still_refuses_without_from(conn: pymysql.connections.Connection) -> None:
    fails(conn, "SELECT read_text('/etc/passwd')", 1227, "read_text")
    fails(conn, "SELECT current_setting('threads')", 1227, "current_setting")
    fails(conn, "SELECT getenv('HOME')", 1227, "getenv")
    fails(conn, "SELECT * FROM read_csv('/etc/passwd')", 1227, "read_csv")


def test_a_failing_expression_keeps_the_connection(conn: pymysql.connections.Connection) -> None:
    fails(conn, "SELECT no_such_function(1)", 1105, "no_such_function")  # Doris: "Can not found function"
