"""Partial column updates of Unique Key tables (SET enable_unique_key_partial_update = true): an INSERT
naming some columns updates only those of existing keys; the stored rowset holds whole rows, so reads
at earlier instants and compaction stay exact."""

from __future__ import annotations

import pymysql

from tests.query.sqlkit import fails, rows, run
from tests.query.test_sql_time_travel import instant

TT = 'PROPERTIES ("enable_time_travel" = "true")'


def _table(conn: pymysql.connections.Connection, properties: str = TT) -> None:
    run(conn, "CREATE TABLE t (k INT NOT NULL, a INT, b VARCHAR(8) DEFAULT 'dflt', c INT NOT NULL DEFAULT '0') "
              f"UNIQUE KEY(k) DISTRIBUTED BY HASH(k) BUCKETS 2 {properties}")
    run(conn, "INSERT INTO t VALUES (1, 10, 'x', 100), (2, 20, 'y', 200)")


def test_partial_update_keeps_other_columns(conn: pymysql.connections.Connection, db: str) -> None:
    _table(conn)
    before = instant()
    run(conn, "SET enable_unique_key_partial_update = true")
    run(conn, "INSERT INTO t (k, a) VALUES (1, 11), (3, 33)")  # key 3 is new: defaults and NULLs
    run(conn, "INSERT INTO t (c, k) VALUES (222, 2)")
    after = [(1, 11, "x", 100), (2, 20, "y", 222), (3, 33, "dflt", 0)]
    assert rows(conn, "SELECT * FROM t ORDER BY k") == after
    assert rows(conn, f"SELECT * FROM t FOR TIME AS OF '{before}' ORDER BY k") == [(1, 10, "x", 100),
                                                                                  (2, 20, "y", 200)]
    run(conn, "ADMIN COMPACT TABLE t WHERE TYPE = 'BASE'")
    assert rows(conn, "SELECT * FROM t ORDER BY k") == after
    # Every column named: an ordinary upsert.
    run(conn, "INSERT INTO t (k, a, b, c) VALUES (1, NULL, NULL, 1)")
    assert rows(conn, "SELECT * FROM t WHERE k = 1") == [(1, None, None, 1)]
    run(conn, "SET enable_unique_key_partial_update = false")
    run(conn, "INSERT INTO t (k, a) VALUES (2, 21)")  # off again: the others take their defaults
    assert rows(conn, "SELECT * FROM t WHERE k = 2") == [(2, 21, "dflt", 0)]


def test_partial_update_needs_every_key(conn: pymysql.connections.Connection, db: str) -> None:
    _table(conn)
    run(conn, "SET enable_unique_key_partial_update = true")
    fails(conn, "INSERT INTO t (a) VALUES (5)", 1210, "Partial update should include all key columns, missing: k")


def test_partial_update_with_delete_sign_and_sequence(conn: pymysql.connections.Connection, db: str) -> None:
    run(conn, "CREATE TABLE t (k INT, a INT, b INT) UNIQUE KEY(k) DISTRIBUTED BY HASH(k) BUCKETS 1 "
              'PROPERTIES ("function_column.sequence_type" = "int")')
    run(conn, "INSERT INTO t (k, a, b, __DORIS_SEQUENCE_COL__) VALUES (1, 1, 1, 10), (2, 2, 2, 10)")
    run(conn, "SET enable_unique_key_partial_update = true")
    # Without the sequence column, the stored value is kept, so the update (a later, equal value) wins.
    run(conn, "INSERT INTO t (k, a) VALUES (1, 100)")
    run(conn, "INSERT INTO t (k, b, __DORIS_SEQUENCE_COL__) VALUES (2, 200, 5)")  # a lower value loses
    run(conn, "INSERT INTO t (k, __DORIS_DELETE_SIGN__) VALUES (3, 1)")
    assert rows(conn, "SELECT * FROM t ORDER BY k") == [(1, 100, 1), (2, 2, 2)]
    run(conn, "INSERT INTO t (k, __DORIS_DELETE_SIGN__) VALUES (2, 1)")
    assert rows(conn, "SELECT * FROM t ORDER BY k") == [(1, 100, 1)]


def test_merge_on_read_tables_take_whole_rows(conn: pymysql.connections.Connection, db: str) -> None:
    # Doris applies partial updates to merge-on-write tables only; elsewhere the INSERT is a plain one.
    _table(conn, 'PROPERTIES ("enable_unique_key_merge_on_write" = "false")')
    run(conn, "SET enable_unique_key_partial_update = true")
    run(conn, "INSERT INTO t (k, a) VALUES (1, 11)")
    assert rows(conn, "SELECT * FROM t WHERE k = 1") == [(1, 11, "dflt", 0)]
