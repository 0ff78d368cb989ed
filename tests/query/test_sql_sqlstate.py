"""Errors carry MySQL's SQLSTATE (query/wire/errors.py), as pymysql, mysql-connector-python and the
`mariadb` CLI see them; Doris' own codes (5000-5999, which MariaDB's client library keeps for itself)
go out as 1105 with the code in the text."""

from __future__ import annotations

import os
import shutil
import subprocess

import mysql.connector
import pymysql
import pytest

from tests.query.sqlkit import run

# statement (in a database holding table `t (k INT NOT NULL, v INT)`) → MySQL's error code and SQLSTATE
CASES = [
    ("SELECT * FROM no_such_table", 1146, "42S02"),
    ("SELECT no_such_column FROM t", 1054, "42S22"),
    ("SELEC 1", 1064, "42000"),
    ("CREATE TABLE t (k INT)", 1050, "42S01"),
    ("CREATE TABLE d (k INT, k INT)", 1060, "42S21"),
    ("USE no_such_db", 1049, "42000"),
    ("INSERT INTO t VALUES (1)", 1136, "21S01"),
    ("INSERT INTO t VALUES (NULL, 1)", 1048, "23000"),
    ("SELECT k FROM t JOIN t u ON t.k = u.k", 1052, "23000"),
    ("SELECT no_such_function(k) FROM t", 1105, "HY000"),  # Doris: "Can not found function"
    ("SHOW ROUTINE LOAD TASK", 1235, "42000"),
    ("INSERT INTO t WITH LABEL twice VALUES (1, 1)", 1105, "HY000"),
]


@pytest.fixture
def table(conn: pymysql.connections.Connection, db: str) -> str:
    run(conn, "CREATE TABLE t (k INT NOT NULL, v INT) DISTRIBUTED BY HASH(k) BUCKETS 1")
    run(conn, "INSERT INTO t WITH LABEL twice VALUES (0, 0)")
    return db


def test_pymysql_sees_sqlstates(conn: pymysql.connections.Connection, table: str) -> None:
    for sql, code, state in CASES:
        with pytest.raises(pymysql.MySQLError) as caught:
            run(conn, sql)
        assert (caught.value.args[0], caught.value.sqlstate) == (code, state), (sql, caught.value.args)
        assert conn.query("SELECT 1") == 1, "the connection is unusable after an error"
    with pytest.raises(pymysql.err.ProgrammingError):  # 42S02 → ProgrammingError in PEP 249 terms
        run(conn, "SELECT * FROM no_such_table")


def test_mysql_connector_sees_sqlstates(table: str) -> None:
    # The C extension where the installed wheel has one (HAVE_CEXT), the pure-Python protocol always.
    for pure in (True, *((False,) if mysql.connector.HAVE_CEXT else ())):
        connection = mysql.connector.connect(host="127.0.0.1", port=int(os.environ["STRATA_SQL_PORT"]), user="root",
                                             database=table, use_pure=pure)
        try:
            for sql, code, state in CASES:
                cursor = connection.cursor()
                with pytest.raises(mysql.connector.Error) as caught:
                    cursor.execute(sql)
                    cursor.fetchall()
                assert (caught.value.errno, caught.value.sqlstate) == (code, state), (pure, sql, caught.value)
                cursor.close()
            label = str(caught.value.msg)
            assert "errCode = 5001" in label and "twice" in label, label
        finally:
            connection.close()


@pytest.mark.skipif(shutil.which("mariadb") is None, reason="the mariadb CLI is not installed (apt mariadb-client)")
def test_mariadb_cli_shows_doris_codes(table: str) -> None:
    def cli(sql: str) -> subprocess.CompletedProcess[str]:
        return subprocess.run(["mariadb", "-h127.0.0.1", f"-P{os.environ['STRATA_SQL_PORT']}", "-uroot", "--skip-ssl",
                               table, "-e", sql], capture_output=True, text=True, timeout=30)

    label = cli("INSERT INTO t WITH LABEL twice VALUES (1, 1)")
    assert label.returncode == 1 and "ERROR 1105 (HY000)" in label.stderr, label.stderr
    assert "Label [twice] has already been used" in label.stderr and "malformed" not in label.stderr
    missing = cli("SELECT * FROM no_such_table")
    assert "ERROR 1146 (42S02)" in missing.stderr, missing.stderr
