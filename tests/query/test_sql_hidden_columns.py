"""Doris' hidden columns of Unique Key tables: __DORIS_DELETE_SIGN__ written by CDC loads deletes a key;
SET show_hidden_columns shows them (and the rows a delete sign hides) in SELECT * and DESC."""

from __future__ import annotations

import pymysql

from tests.query.sqlkit import columns, fails, rows, run
from tests.query.test_sql_time_travel import instant

TT = 'PROPERTIES ("enable_time_travel" = "true")'


def test_delete_sign_rows_delete_their_key(conn: pymysql.connections.Connection, db: str) -> None:
    run(conn, f"CREATE TABLE t (k INT, v VARCHAR(8)) UNIQUE KEY(k) DISTRIBUTED BY HASH(k) BUCKETS 2 {TT}")
    run(conn, "INSERT INTO t VALUES (1, 'a'), (2, 'b'), (3, 'c')")
    before = instant()
    # A CDC batch: an upsert and two deletes, the delete sign given per row.
    run(conn, "INSERT INTO t (k, v, __DORIS_DELETE_SIGN__) VALUES (1, 'a2', 0), (2, NULL, 1), (4, 'd', 1)")
    assert rows(conn, "SELECT * FROM t ORDER BY k") == [(1, "a2"), (3, "c")]
    assert rows(conn, f"SELECT * FROM t FOR TIME AS OF '{before}' ORDER BY k") == [(1, "a"), (2, "b"), (3, "c")]
    run(conn, "INSERT INTO t (k, v) VALUES (2, 'back')")  # a later load of the key brings it back
    assert rows(conn, "SELECT * FROM t ORDER BY k") == [(1, "a2"), (2, "back"), (3, "c")]
    run(conn, "ADMIN COMPACT TABLE t WHERE TYPE = 'BASE'")
    assert rows(conn, "SELECT * FROM t ORDER BY k") == [(1, "a2"), (2, "back"), (3, "c")]
    assert rows(conn, f"SELECT * FROM t FOR TIME AS OF '{before}' ORDER BY k") == [(1, "a"), (2, "b"), (3, "c")]


def test_show_hidden_columns(conn: pymysql.connections.Connection, db: str) -> None:
    run(conn, "CREATE TABLE t (k INT, v INT) UNIQUE KEY(k) DISTRIBUTED BY HASH(k) BUCKETS 1")
    run(conn, "INSERT INTO t VALUES (1, 10), (2, 20)")
    run(conn, "INSERT INTO t (k, v, __DORIS_DELETE_SIGN__) VALUES (2, 20, 1)")
    assert columns(conn, "SELECT * FROM t") == ["k", "v"]
    assert [r[0] for r in rows(conn, "DESC t")] == ["k", "v"]
    fails(conn, "SELECT __DORIS_DELETE_SIGN__ FROM t", 1054)
    run(conn, "SET show_hidden_columns = true")
    assert columns(conn, "SELECT * FROM t") == ["k", "v", "__DORIS_DELETE_SIGN__", "__DORIS_VERSION_COL__"]
    # As in Doris, the newest row of a deleted key shows, with its sign.
    assert rows(conn, "SELECT * FROM t ORDER BY k") == [(1, 10, 0, 1), (2, 20, 1, 2)]
    assert rows(conn, "DESC t")[2:] == [("__DORIS_DELETE_SIGN__", "tinyint", "No", "false", "0", ""),
                                        ("__DORIS_VERSION_COL__", "bigint", "No", "false", "0", "")]
    run(conn, "SET show_hidden_columns = false")
    assert rows(conn, "SELECT * FROM t ORDER BY k") == [(1, 10)]


def test_hidden_columns_belong_to_unique_tables(conn: pymysql.connections.Connection, db: str) -> None:
    run(conn, "CREATE TABLE d (k INT, v INT) DUPLICATE KEY(k) DISTRIBUTED BY HASH(k) BUCKETS 1")
    fails(conn, "INSERT INTO d (k, v, __DORIS_DELETE_SIGN__) VALUES (1, 1, 1)", 1054, "__DORIS_DELETE_SIGN__")
    run(conn, "SET show_hidden_columns = true")
    assert columns(conn, "SELECT * FROM d") == ["k", "v"]
