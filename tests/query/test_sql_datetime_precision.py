"""DATETIME(p) as Doris keeps it: a value is rounded to the column's p fraction digits when written, so
equality, DELETE predicates and keys see the stored value; results say the precision (cursor scale);
CAST(x AS DATETIME[(p)]) rounds the same way. The first check is issue 17's example, from Doris'
datetimev2 regression suite."""

from __future__ import annotations

from datetime import datetime

import pymysql

from tests.query.sqlkit import rows, run

TAIL = "DISTRIBUTED BY HASH(k) BUCKETS 1"


def test_a_column_keeps_its_precision(conn: pymysql.connections.Connection, db: str) -> None:
    run(conn, f"CREATE TABLE t_dt (k INT, d0 DATETIME, d3 DATETIME(3)) DUPLICATE KEY(k) {TAIL}")
    run(conn, "INSERT INTO t_dt VALUES (1, '2021-01-01 23:10:01.111111', '2021-01-02 23:10:04.111111')")
    assert rows(conn, "SELECT * FROM t_dt") == [(1, datetime(2021, 1, 1, 23, 10, 1),
                                                 datetime(2021, 1, 2, 23, 10, 4, 111000))]
    assert rows(conn, "SELECT count(*) FROM t_dt WHERE d0 = '2021-01-01 23:10:01'") == [(1,)]
    assert rows(conn, "SELECT count(*) FROM t_dt WHERE d3 = '2021-01-02 23:10:04.111'") == [(1,)]
    run(conn, "DELETE FROM t_dt WHERE d0 = '2021-01-01 23:10:01'")
    assert rows(conn, "SELECT count(*) FROM t_dt") == [(0,)]


def test_rounding_carries_and_results_state_the_precision(conn: pymysql.connections.Connection, db: str) -> None:
    run(conn, f"CREATE TABLE r (k INT, d0 DATETIME, d1 DATETIME(1), d3 DATETIME(3), d6 DATETIME(6)) "
              f"DUPLICATE KEY(k) {TAIL}")
    run(conn, "INSERT INTO r VALUES (1, '2021-12-31 23:59:59.5', '2021-01-02 23:10:04.151111', "
              "'2021-01-02 23:10:04.9996', '2021-01-02 23:10:04.123456')")
    with conn.cursor() as cur:
        cur.execute("SELECT d0, d1, d3, d6 FROM r")
        assert list(cur.fetchall()) == [(datetime(2022, 1, 1), datetime(2021, 1, 2, 23, 10, 4, 200000),
                                         datetime(2021, 1, 2, 23, 10, 5), datetime(2021, 1, 2, 23, 10, 4, 123456))]
        # MySQL's decimals of each column (pymysql's scale): 0, 3 and 6 (DATETIME(1) travels as 3).
        assert [d[5] for d in cur.description] == [0, 3, 3, 6]
        cur.execute("SELECT d0 FROM r WHERE false")
        assert cur.description[0][5] == 0


def test_a_unique_key_is_its_rounded_value(conn: pymysql.connections.Connection, db: str) -> None:
    """Two loads whose DATETIME keys differ only below the column's precision write the same key."""
    run(conn, "CREATE TABLE u (k DATETIME, v INT) UNIQUE KEY(k) DISTRIBUTED BY HASH(k) BUCKETS 1")
    run(conn, "INSERT INTO u VALUES ('2021-01-01 10:00:00.2', 1)")
    run(conn, "INSERT INTO u VALUES ('2021-01-01 09:59:59.6', 2)")
    assert rows(conn, "SELECT k, v FROM u") == [(datetime(2021, 1, 1, 10, 0), 2)]


def test_insert_select_and_defaults_round(conn: pymysql.connections.Connection, db: str) -> None:
    run(conn, f"CREATE TABLE src (k INT, d6 DATETIME(6)) DUPLICATE KEY(k) {TAIL}")
    run(conn, "CREATE TABLE dst (k INT, d0 DATETIME, at DATETIME(3) DEFAULT CURRENT_TIMESTAMP) "
              f"DUPLICATE KEY(k) {TAIL}")
    run(conn, "INSERT INTO src VALUES (1, '2021-01-01 10:00:00.654321')")
    run(conn, "INSERT INTO dst (k, d0) SELECT k, d6 FROM src")
    ((d0, at),) = rows(conn, "SELECT d0, at FROM dst")
    assert d0 == datetime(2021, 1, 1, 10, 0, 1) and at.microsecond % 1000 == 0


def test_cast_rounds_to_the_precision_named(conn: pymysql.connections.Connection, db: str) -> None:
    assert rows(conn, "SELECT CAST('2021-01-02 23:10:04.5' AS DATETIME), "
                      "CAST('2021-01-02 23:10:04.111911' AS DATETIME(3)), "
                      "CAST('2021-01-02 23:10:04.15' AS DATETIME(1)), "
                      "CAST('2021-01-02 23:10:04.123456' AS DATETIME(6))") == [
        (datetime(2021, 1, 2, 23, 10, 5), datetime(2021, 1, 2, 23, 10, 4, 112000),
         datetime(2021, 1, 2, 23, 10, 4, 200000), datetime(2021, 1, 2, 23, 10, 4, 123456))]
