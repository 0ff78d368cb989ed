"""Sequence columns of Unique Key tables: per key the row with the highest sequence value wins, whatever
the load order; equal values go to the later load; a NULL value loses to any other. Reads at earlier
instants and compacted tablets merge the same way."""

from __future__ import annotations

import pymysql

from tests.query.sqlkit import fails, rows, run
from tests.query.test_sql_time_travel import instant

SEQ_COL = ('PROPERTIES ("function_column.sequence_col" = "ts", "enable_time_travel" = "true")')
SEQ_TYPE = 'PROPERTIES ("function_column.sequence_type" = "int")'


def test_sequence_col_orders_loads(conn: pymysql.connections.Connection, db: str) -> None:
    run(conn, f"CREATE TABLE t (k INT, v VARCHAR(8), ts INT) UNIQUE KEY(k) DISTRIBUTED BY HASH(k) BUCKETS 2 {SEQ_COL}")
    run(conn, "INSERT INTO t VALUES (1, 'a', 5), (2, 'b', 5), (3, 'c', NULL)")
    first = instant()
    run(conn, "INSERT INTO t VALUES (1, 'older', 3), (2, 'newer', 7), (3, 'any', 1)")
    run(conn, "INSERT INTO t VALUES (1, 'tie', 5), (3, 'null', NULL)")  # a tie goes to the later load
    # Within one load too: the highest value wins, not the last row.
    run(conn, "INSERT INTO t VALUES (4, 'x', 9), (4, 'y', 2)")
    latest = [(1, "tie", 5), (2, "newer", 7), (3, "any", 1), (4, "x", 9)]
    assert rows(conn, "SELECT * FROM t ORDER BY k") == latest
    assert rows(conn, f"SELECT * FROM t FOR TIME AS OF '{first}' ORDER BY k") == [(1, "a", 5), (2, "b", 5),
                                                                                 (3, "c", None)]
    run(conn, "ADMIN COMPACT TABLE t WHERE TYPE = 'CUMULATIVE'")
    run(conn, "INSERT INTO t VALUES (2, 'late', 6)")  # merged against the compacted rowset: still loses
    assert rows(conn, "SELECT * FROM t ORDER BY k") == latest
    run(conn, "ADMIN COMPACT TABLE t WHERE TYPE = 'BASE'")
    assert rows(conn, "SELECT * FROM t ORDER BY k") == latest
    assert rows(conn, f"SELECT * FROM t FOR TIME AS OF '{first}' ORDER BY k") == [(1, "a", 5), (2, "b", 5),
                                                                                 (3, "c", None)]


def test_sequence_type_hidden_column(conn: pymysql.connections.Connection, db: str) -> None:
    # regression-test/suites/data_model_p0/unique/test_unique_table_sequence.groovy (its last table; expected
    # rows from regression-test/data/data_model_p0/unique/test_unique_table_sequence.out, qt_1 to qt_3).
    run(conn, "CREATE TABLE t (k1 INT NULL, v1 TINYINT NULL, v2 INT, v3 INT, `or` INT) UNIQUE KEY(k1) "
              f"DISTRIBUTED BY HASH(k1) BUCKETS 3 {SEQ_TYPE}")
    fails(conn, "INSERT INTO t VALUES (15, 8, 19, 20, 21)", 1210,
          "Table t has sequence column, need to specify the sequence column")
    fails(conn, "INSERT INTO t (k1, v1, v2, v3, `or`) VALUES (15, 8, 19, 20, 21)", 1210,
          "need to specify the sequence column")
    run(conn, "INSERT INTO t (k1, v1, v2, v3, `or`, __doris_sequence_col__) "
              "VALUES (1,1,1,1,1,1), (2,2,2,2,2,2), (3,3,3,3,3,3)")
    run(conn, "INSERT INTO t (k1, v1, v2, v3, `or`, __DORIS_SEQUENCE_COL__) VALUES (2,20,20,20,20,20)")
    run(conn, "INSERT INTO t (k1, v1, v2, v3, `or`, __DORIS_SEQUENCE_COL__) VALUES (3,30,30,30,30,1)")
    assert rows(conn, "SELECT * FROM t ORDER BY k1") == [(1, 1, 1, 1, 1), (2, 20, 20, 20, 20), (3, 3, 3, 3, 3)]
    run(conn, "SET show_hidden_columns = true")
    shown = rows(conn, "SELECT * FROM t ORDER BY k1")
    # Doris' versions count from 2 (its version 1 is the empty table); Strata's from 1.
    assert [r[:6] + r[7:] for r in shown] == [(1, 1, 1, 1, 1, 0, 1), (2, 20, 20, 20, 20, 0, 20),
                                              (3, 3, 3, 3, 3, 0, 3)]
    assert shown[1][6] == shown[0][6] + 1 and shown[2][6] == shown[0][6]


def test_update_keeps_sequence_value(conn: pymysql.connections.Connection, db: str) -> None:
    # test_unique_table_sequence.groovy: UPDATE writes the key's row again with its stored sequence value,
    # so the update (a later load of an equal value) wins.
    run(conn, f"CREATE TABLE t (k INT, v INT) UNIQUE KEY(k) DISTRIBUTED BY HASH(k) BUCKETS 1 {SEQ_TYPE}")
    run(conn, "INSERT INTO t (k, v, __DORIS_SEQUENCE_COL__) VALUES (1, 1, 10), (2, 2, 20)")
    run(conn, "UPDATE t SET v = 10 WHERE k = 1")
    run(conn, "DELETE FROM t WHERE k = 2")
    assert rows(conn, "SELECT * FROM t ORDER BY k") == [(1, 10)]
    run(conn, "INSERT INTO t (k, v, __DORIS_SEQUENCE_COL__) VALUES (1, 99, 5)")  # lower: loses
    assert rows(conn, "SELECT * FROM t ORDER BY k") == [(1, 10)]


def test_sequence_property_rules(conn: pymysql.connections.Connection, db: str) -> None:
    fails(conn, "CREATE TABLE d (k INT, v INT) DUPLICATE KEY(k) DISTRIBUTED BY HASH(k) BUCKETS 1 " + SEQ_TYPE,
          1210, "Sequence column only support UNIQUE_KEYS")
    fails(conn, "CREATE TABLE u (k INT, v INT) UNIQUE KEY(k) DISTRIBUTED BY HASH(k) BUCKETS 1 "
                'PROPERTIES ("function_column.sequence_col" = "nope")', 1210, "sequence column[nope] not exists")
    fails(conn, "CREATE TABLE u (k INT, v VARCHAR(3)) UNIQUE KEY(k) DISTRIBUTED BY HASH(k) BUCKETS 1 "
                'PROPERTIES ("function_column.sequence_col" = "v")', 1210, "integer types and date types")
    fails(conn, "CREATE TABLE u (k INT, v INT) UNIQUE KEY(k) DISTRIBUTED BY HASH(k) BUCKETS 1 "
                'PROPERTIES ("function_column.sequence_type" = "varchar")', 1210, "integer types and date types")
    fails(conn, "CREATE TABLE u (k INT, __DORIS_X INT) UNIQUE KEY(k) DISTRIBUTED BY HASH(k) BUCKETS 1", 1166,
          "__DORIS_X")
    run(conn, "CREATE TABLE u (k INT, v INT, ts DATE) UNIQUE KEY(k) DISTRIBUTED BY HASH(k) BUCKETS 1 "
              'PROPERTIES ("function_column.sequence_col" = "ts")')
    fails(conn, "ALTER TABLE u DROP COLUMN ts", 1210, "sequence column")
    fails(conn, "ALTER TABLE u RENAME COLUMN ts ts2", 1210, "sequence column")
    fails(conn, 'ALTER TABLE u SET ("function_column.sequence_col" = "v")', 1235, "when the table is created")
    create = rows(conn, "SHOW CREATE TABLE u")[0][1]
    assert '"function_column.sequence_col" = "ts"' in create and "__DORIS" not in create
