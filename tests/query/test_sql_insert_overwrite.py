"""INSERT OVERWRITE through the SQL port: the whole table, named partitions, PARTITION (*), the
errors Doris gives, and time travel across an overwrite (before and after ADMIN COMPACT).

The checks of `test_doris_list_partitioned_suite` follow Doris' regression suite
regression-test/suites/insert_overwrite_p0/insert_overwrite_table_list.groovy (expected rows from
regression-test/data/insert_overwrite_p0/insert_overwrite_table_list.out)."""

from __future__ import annotations

import pymysql
import pytest

from tests.query.sqlkit import fails, rows, run
from tests.query.test_sql_time_travel import TT, instant

UNKNOWN_PARTITION = 1735
NO_PARTITION_FOR_VALUE = 1526
NO_SUCH_TABLE = 1146
LABEL_EXISTS = 1105  # Doris: errCode = 5001 in the message


def _list_table(conn: pymysql.connections.Connection, name: str = "test_iot", properties: str = "") -> None:
    run(conn, f"CREATE TABLE {name} (test_int INT NOT NULL, test_varchar VARCHAR(150) NULL, test_text TEXT NULL) "
              "UNIQUE KEY(test_int) PARTITION BY LIST (test_int) (PARTITION p1 VALUES IN (\"1\",\"2\",\"3\"), "
              f"PARTITION p2 VALUES IN (\"4\",\"5\",\"6\")) DISTRIBUTED BY HASH(test_int) BUCKETS 3 {properties}")


def test_doris_list_partitioned_suite(conn: pymysql.connections.Connection, db: str) -> None:
    _list_table(conn)
    run(conn, "CREATE TABLE test_iot1 (test_int INT NOT NULL, test_varchar VARCHAR(150) NULL, test_text TEXT NULL) "
              "UNIQUE KEY(test_int) DISTRIBUTED BY HASH(test_int) BUCKETS 3")
    run(conn, "CREATE TABLE test_iot_err (test_varchar1 VARCHAR(150) NULL, test_varchar2 VARCHAR(150) NULL, "
              "test_text TEXT NULL) UNIQUE KEY(test_varchar1) DISTRIBUTED BY HASH(test_varchar1) BUCKETS 3")
    fails(conn, "INSERT OVERWRITE TABLE test_iot_wrong SELECT * FROM test_iot1", NO_SUCH_TABLE, "test_iot_wrong")
    run(conn, "INSERT INTO test_iot_err VALUES ('xxx','aaa','aaa'),('xxx','ccc','ccc')")
    with pytest.raises(pymysql.MySQLError):  # the unqualified rows ('xxx' is no INT) fail the overwrite
        run(conn, "INSERT OVERWRITE TABLE test_iot SELECT * FROM test_iot_err")
    select = "SELECT * FROM test_iot ORDER BY test_int"
    run(conn, "INSERT OVERWRITE TABLE test_iot SELECT * FROM test_iot1")  # an empty source empties the table
    assert rows(conn, select) == []
    assert run(conn, "INSERT OVERWRITE TABLE test_iot VALUES (1,'aaa','aaa'),(4,'ccc','ccc')") == 2
    assert rows(conn, select) == [(1, "aaa", "aaa"), (4, "ccc", "ccc")]
    run(conn, "INSERT OVERWRITE TABLE test_iot SELECT 1,'aaa','aaa'")
    assert rows(conn, select) == [(1, "aaa", "aaa")]
    run(conn, "INSERT INTO test_iot1 (test_int, test_varchar, test_text) VALUES (1,'aaa','aaa'),(4,'ccc','ccc')")
    run(conn, "INSERT OVERWRITE TABLE test_iot SELECT * FROM test_iot1")
    assert rows(conn, select) == [(1, "aaa", "aaa"), (4, "ccc", "ccc")]
    run(conn, "INSERT OVERWRITE TABLE test_iot (test_int, test_varchar) SELECT test_int, test_varchar FROM test_iot1")
    assert rows(conn, select) == [(1, "aaa", None), (4, "ccc", None)]
    run(conn, "INSERT OVERWRITE TABLE test_iot WITH LABEL `label1` (test_int, test_varchar, test_text) "
              "SELECT * FROM test_iot1")
    assert rows(conn, select) == [(1, "aaa", "aaa"), (4, "ccc", "ccc")]
    fails(conn, "INSERT OVERWRITE TABLE test_iot PARTITION(p3) SELECT * FROM test_iot1", UNKNOWN_PARTITION, "p3")
    fails(conn, "INSERT OVERWRITE TABLE test_iot PARTITION(p1) SELECT * FROM test_iot1 WHERE test_int = 4",
          NO_PARTITION_FOR_VALUE)
    run(conn, "INSERT OVERWRITE TABLE test_iot PARTITION(p1) VALUES (1,'aaa','aaa')")
    assert rows(conn, select) == [(1, "aaa", "aaa"), (4, "ccc", "ccc")]
    run(conn, "INSERT OVERWRITE TABLE test_iot PARTITION(p1) SELECT 1,'aaa','aaa'")
    assert rows(conn, select) == [(1, "aaa", "aaa"), (4, "ccc", "ccc")]
    run(conn, "INSERT OVERWRITE TABLE test_iot PARTITION(p1) SELECT * FROM test_iot1 WHERE test_varchar = 'aaa'")
    assert rows(conn, "SELECT * FROM test_iot PARTITION (p1) ORDER BY test_int") == [(1, "aaa", "aaa")]
    run(conn, "INSERT OVERWRITE TABLE test_iot PARTITION(p1,p2) SELECT * FROM test_iot1")
    assert rows(conn, "SELECT * FROM test_iot PARTITION (p1) ORDER BY test_int") == [(1, "aaa", "aaa")]
    assert rows(conn, "SELECT * FROM test_iot PARTITION (p2) ORDER BY test_int") == [(4, "ccc", "ccc")]
    run(conn, "INSERT OVERWRITE TABLE test_iot PARTITION(p1) (test_int, test_varchar) "
              "SELECT test_int, test_varchar FROM test_iot1 WHERE test_varchar = 'aaa'")
    assert rows(conn, select) == [(1, "aaa", None), (4, "ccc", "ccc")]
    run(conn, "INSERT OVERWRITE TABLE test_iot PARTITION(p1) WITH LABEL `label2` (test_int, test_varchar, test_text) "
              "SELECT * FROM test_iot1 WHERE test_varchar = 'aaa'")
    assert rows(conn, select) == [(1, "aaa", "aaa"), (4, "ccc", "ccc")]
    fails(conn, "INSERT OVERWRITE TABLE test_iot WITH LABEL `label2` SELECT * FROM test_iot1", LABEL_EXISTS, "label2")


def test_partition_star_replaces_the_partitions_the_rows_fall_in(conn: pymysql.connections.Connection,
                                                                 db: str) -> None:
    _list_table(conn, "t")
    run(conn, "INSERT INTO t VALUES (1, 'a', NULL), (2, 'b', NULL), (4, 'd', NULL)")
    run(conn, "INSERT OVERWRITE TABLE t PARTITION(*) VALUES (3, 'c', NULL)")
    assert rows(conn, "SELECT test_int FROM t ORDER BY test_int") == [(3,), (4,)]
    assert run(conn, "INSERT OVERWRITE t PARTITION(*) SELECT * FROM t WHERE test_int > 100") == 0
    assert rows(conn, "SELECT test_int FROM t ORDER BY test_int") == [(3,), (4,)]
    fails(conn, "INSERT INTO t PARTITION(*) VALUES (1, 'a', NULL)", 1064, "PARTITION (*)")


def test_duplicate_and_aggregate_tables_lose_every_old_row(conn: pymysql.connections.Connection, db: str) -> None:
    run(conn, "CREATE TABLE d (k INT, v INT) DUPLICATE KEY(k) DISTRIBUTED BY HASH(k) BUCKETS 2")
    run(conn, "INSERT INTO d VALUES (1, 1), (1, 1), (2, 2)")
    run(conn, "DELETE FROM d WHERE k = 2")
    run(conn, "INSERT OVERWRITE d VALUES (1, 1), (2, 5)")
    assert rows(conn, "SELECT * FROM d ORDER BY k") == [(1, 1), (2, 5)]
    run(conn, "CREATE TABLE a (k INT, s BIGINT SUM) AGGREGATE KEY(k) DISTRIBUTED BY HASH(k) BUCKETS 2")
    run(conn, "INSERT INTO a VALUES (1, 10), (1, 5)")
    run(conn, "INSERT OVERWRITE TABLE a VALUES (1, 1), (1, 2)")
    assert rows(conn, "SELECT * FROM a") == [(1, 3)]
    run(conn, "INSERT INTO a VALUES (1, 4)")
    assert rows(conn, "SELECT * FROM a") == [(1, 7)]


def test_time_travel_before_an_overwrite_reads_the_old_rows(conn: pymysql.connections.Connection, db: str) -> None:
    _list_table(conn, "t", TT)
    run(conn, "INSERT INTO t VALUES (1, 'a', NULL), (2, 'b', NULL), (4, 'd', NULL)")
    run(conn, "INSERT INTO t VALUES (5, 'e', NULL)")
    before = instant()
    run(conn, "INSERT OVERWRITE TABLE t VALUES (3, 'c', NULL), (6, 'f', NULL)")
    whole = instant()
    run(conn, "INSERT INTO t VALUES (2, 'b2', NULL)")
    run(conn, "INSERT OVERWRITE TABLE t PARTITION (p1) VALUES (1, 'x', NULL)")
    expected = {
        before: [(1, "a"), (2, "b"), (4, "d"), (5, "e")],
        whole: [(3, "c"), (6, "f")],
        instant(): [(1, "x"), (6, "f")],
    }

    def check() -> None:
        for at, want in expected.items():
            got = rows(conn, f"SELECT test_int, test_varchar FROM t FOR TIME AS OF '{at}' ORDER BY test_int")
            assert got == want, at

    check()
    for kind in ("CUMULATIVE", "BASE"):
        run(conn, f"ADMIN COMPACT TABLE t WHERE TYPE = '{kind}'")
        check()
    history = rows(conn, "SHOW TIME TRAVEL ON t")
    overwrites = [(r[7], r[8], r[10]) for r in history if r[6] == "overwrite"]
    assert overwrites == [(2, 4, "INSERT OVERWRITE"), (1, 2, "INSERT OVERWRITE PARTITION (p1)")]
    run(conn, f"RESTORE TABLE t TO TIME AS OF '{before}'")
    assert rows(conn, "SELECT test_int FROM t ORDER BY test_int") == [(1,), (2,), (4,), (5,)]


def test_change_feed_of_an_overwrite(conn: pymysql.connections.Connection, db: str) -> None:
    run(conn, f"CREATE TABLE d (k INT, v INT) DUPLICATE KEY(k) DISTRIBUTED BY HASH(k) BUCKETS 2 {TT}")
    run(conn, "INSERT INTO d VALUES (1, 1), (2, 2)")
    run(conn, "INSERT OVERWRITE TABLE d VALUES (2, 2), (3, 3)")
    got = rows(conn, "SELECT k, v, _change_type FROM d@incr('startVersion'='1') ORDER BY k, _change_type")
    assert got == [(1, 1, "delete"), (3, 3, "insert")]
