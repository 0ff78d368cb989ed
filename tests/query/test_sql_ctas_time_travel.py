"""CREATE TABLE … AS SELECT, and `FOR TIME AS OF` on a time-travel table."""

from __future__ import annotations

import pymysql

from tests.query.sqlkit import fails, rows, run, scalar, show_create, sorted_rows, values


def test_create_table_as_select(conn: pymysql.connections.Connection, db: str,
                                other: pymysql.connections.Connection) -> None:
    run(conn, "CREATE TABLE src (k INT, name VARCHAR(10), amount DECIMAL(6, 2)) DUPLICATE KEY(k) "
              "DISTRIBUTED BY HASH(k) BUCKETS 3")
    run(conn, f"INSERT INTO src VALUES {values([(1, 'a', 1.5), (2, 'b', 2), (3, 'a', 4)])}")
    assert run(conn, "CREATE TABLE copy AS SELECT k, name, amount * 2 AS doubled FROM src") == 3
    assert sorted_rows(other, "SELECT * FROM copy") == [(1, "a", 3), (2, "b", 4), (3, "a", 8)]
    assert run(conn, """CREATE TABLE totals UNIQUE KEY(name) DISTRIBUTED BY HASH(name) BUCKETS 2
                        PROPERTIES ("enable_time_travel" = "true")
                        AS SELECT name, sum(amount) AS total, count(*) AS n FROM src GROUP BY name""") == 2
    text = show_create(other, "totals")
    assert "UNIQUE KEY(`name`)" in text and '"enable_time_travel" = "true"' in text and "BUCKETS 2" in text
    assert sorted_rows(other, "SELECT name, n FROM totals") == [("a", 2), ("b", 1)]
    run(conn, "CREATE TABLE IF NOT EXISTS copy AS SELECT 1 AS x FROM src")
    assert scalar(other, "SELECT count(*) FROM copy") == 3  # left as it was
    fails(conn, "CREATE TABLE copy AS SELECT k FROM src", 1050, "copy")


def test_failed_create_table_as_leaves_no_table(conn: pymysql.connections.Connection, db: str,
                                                other: pymysql.connections.Connection) -> None:
    run(conn, "CREATE TABLE src (k INT, s VARCHAR(10)) DUPLICATE KEY(k) DISTRIBUTED BY HASH(k) BUCKETS 2")
    run(conn, "INSERT INTO src VALUES (1, '1'), (2, 'two')")
    # Typing the query succeeds; the fill fails on the second row.
    fails(conn, "CREATE TABLE bad AS SELECT k, CAST(s AS INT) AS n FROM src", 1292, "two")
    fails(conn, "CREATE TABLE bad AS SELECT k, nope FROM src", 1054, "nope")
    fails(conn, 'CREATE TABLE bad PROPERTIES ("nope" = "1") AS SELECT k FROM src', 1210, "nope")
    fails(conn, "CREATE TABLE bad AS SELECT k FROM missing", 1146, "missing")
    assert rows(other, "SHOW TABLES") == [("src",)]
    fails(conn, "RECOVER TABLE bad", 1146, "bad")
    # The name is free: a good CTAS of it works.
    assert run(conn, "CREATE TABLE bad AS SELECT k FROM src") == 2


def _commit_times(conn: pymysql.connections.Connection, db: str, table: str) -> list[str]:
    found = rows(conn, f"SELECT DISTINCT CREATION_TIME FROM information_schema.rowsets WHERE TABLE_SCHEMA = '{db}' "
                       f"AND TABLE_NAME = '{table}' ORDER BY CREATION_TIME")
    return [r[0].strftime("%Y-%m-%d %H:%M:%S.%f") for r in found]


def test_time_travel_between_loads(conn: pymysql.connections.Connection, db: str,
                                   other: pymysql.connections.Connection) -> None:
    run(conn, 'CREATE TABLE tt (k INT, v INT) UNIQUE KEY(k) DISTRIBUTED BY HASH(k) BUCKETS 3 '
              'PROPERTIES ("enable_time_travel" = "true")')
    run(conn, "INSERT INTO tt VALUES (1, 1), (2, 2), (3, 3)")
    run(conn, "INSERT INTO tt VALUES (2, 20), (4, 4)")
    first, second = _commit_times(conn, db, "tt")
    assert sorted_rows(other, f"SELECT * FROM tt FOR TIME AS OF '{first}'") == [(1, 1), (2, 2), (3, 3)]
    assert sorted_rows(other, f"SELECT * FROM tt FOR TIME AS OF '{second}'") == [(1, 1), (2, 20), (3, 3), (4, 4)]
    assert sorted_rows(other, "SELECT * FROM tt") == [(1, 1), (2, 20), (3, 3), (4, 4)]
    # Joined with itself at two instants: what changed between the loads.
    assert rows(other, f"SELECT n.k, o.v, n.v FROM tt FOR TIME AS OF '{second}' n "
                       f"JOIN tt FOR TIME AS OF '{first}' o ON o.k = n.k WHERE o.v <> n.v") == [(2, 2, 20)]
    fails(other, "SELECT * FROM tt FOR TIME AS OF '2999-01-01 00:00:00'", 1210, "future")
    fails(other, "SELECT * FROM tt FOR TIME AS OF '2001-01-01 00:00:00'", 1210, "before table 'tt' existed")
    fails(other, "SELECT * FROM tt FOR TIME AS OF 'yesterday'", 1525, "yesterday", "timestamp")


def test_time_travel_refused_without_the_property(conn: pymysql.connections.Connection, db: str) -> None:
    run(conn, "CREATE TABLE plain (k INT) DISTRIBUTED BY HASH(k) BUCKETS 1")
    run(conn, "INSERT INTO plain VALUES (1)")
    fails(conn, "SELECT * FROM plain FOR TIME AS OF '2024-01-01 00:00:00'", 1235, "plain", "enable_time_travel")
    (ts,) = _commit_times(conn, db, "plain")
    run(conn, 'ALTER TABLE plain SET ("enable_time_travel" = "true")')
    # Enabling later makes history available from that moment on, not before it.
    fails(conn, f"SELECT * FROM plain FOR TIME AS OF '{ts}'", 1210, "beyond the time-travel window", "earliest")
    run(conn, "INSERT INTO plain VALUES (2)")
    (_, second) = _commit_times(conn, db, "plain")
    assert rows(conn, f"SELECT * FROM plain FOR TIME AS OF '{second}' ORDER BY k") == [(1,), (2,)]


def test_time_travel_sees_the_schema_and_partitions_of_then(conn: pymysql.connections.Connection, db: str) -> None:
    run(conn, """CREATE TABLE tt (k INT, v INT) UNIQUE KEY(k)
                 PARTITION BY RANGE(k) (PARTITION p1 VALUES LESS THAN ("10"), PARTITION p2 VALUES LESS THAN ("20"))
                 DISTRIBUTED BY HASH(k) BUCKETS 2 PROPERTIES ("enable_time_travel" = "true")""")
    run(conn, "INSERT INTO tt VALUES (1, 1), (15, 15)")
    (then,) = _commit_times(conn, db, "tt")
    run(conn, 'ALTER TABLE tt ADD COLUMN n INT DEFAULT "3"')
    run(conn, "ALTER TABLE tt DROP COLUMN v")
    run(conn, "TRUNCATE TABLE tt PARTITION (p1)")
    run(conn, "ALTER TABLE tt DROP PARTITION p2")
    run(conn, "INSERT INTO tt VALUES (2, 2)")
    assert sorted_rows(conn, f"SELECT * FROM tt FOR TIME AS OF '{then}'") == [(1, 1), (15, 15)]
    assert rows(conn, "SELECT * FROM tt") == [(2, 2)]
