"""INSERT INTO … VALUES / SELECT: defaults, NULLs, type and length errors, labels, partitions,
affected-row counts, and that a refused INSERT leaves nothing behind."""

from __future__ import annotations

from datetime import UTC, datetime, timedelta

import pymysql

from tests.query.sqlkit import fails, rows, run, scalar, sorted_rows, values

TABLE = """CREATE TABLE t (
  k INT NOT NULL, v VARCHAR(5), d DATE, n INT NOT NULL DEFAULT "7", s STRING DEFAULT "none",
  at DATETIME DEFAULT CURRENT_TIMESTAMP, x DECIMAL(5, 2)
) DUPLICATE KEY(k) DISTRIBUTED BY HASH(k) BUCKETS 3"""


def test_values_with_and_without_column_list(conn: pymysql.connections.Connection, db: str,
                                             other: pymysql.connections.Connection) -> None:
    run(conn, TABLE)
    assert run(conn, "INSERT INTO t VALUES (1, 'a', '2024-01-02', 1, 'x', '2024-01-02 03:04:05', 1.5), "
                     "(2, NULL, NULL, 2, NULL, NULL, NULL)") == 2
    before = datetime.now(UTC).replace(microsecond=0, tzinfo=None)
    assert run(conn, "INSERT INTO t (k) VALUES (3)") == 1
    assert run(conn, "INSERT INTO t (v, k) VALUES ('c', 4), ('d', 5)") == 2
    found = {r[0]: r for r in rows(other, "SELECT k, v, d, n, s, at, x FROM t")}
    assert found[1][:5] == (1, "a", datetime(2024, 1, 2).date(), 1, "x")
    assert found[1][5] == datetime(2024, 1, 2, 3, 4, 5) and str(found[1][6]) == "1.50"
    assert found[2] == (2, None, None, 2, None, None, None)  # an explicit NULL is not the default
    k3 = found[3]
    assert k3[1:5] == (None, None, 7, "none") and k3[6] is None
    assert before - timedelta(seconds=5) <= k3[5] <= datetime.now(UTC).replace(tzinfo=None) + timedelta(seconds=5), k3
    assert (found[4][1], found[5][1]) == ("c", "d") and found[4][3] == 7
    assert scalar(other, "SELECT count(*) FROM t") == 5


def test_value_errors_leave_nothing(conn: pymysql.connections.Connection, db: str) -> None:
    run(conn, TABLE)
    run(conn, "INSERT INTO t (k, v) VALUES (1, 'ok')")
    # Each statement has one bad row among good ones: none of its rows may appear.
    fails(conn, "INSERT INTO t (k, v) VALUES (2, 'fine'), (NULL, 'bad')", 1048, "'k'", "null")
    fails(conn, "INSERT INTO t (k, n) VALUES (2, 1), (3, NULL)", 1048, "'n'")
    fails(conn, "INSERT INTO t (k, v) VALUES (2, 'fine'), (3, 'toolong')", 1406, "'v'", "too long")
    fails(conn, "INSERT INTO t (k, v) VALUES (2, 'éééé')", 1406, "'v'")  # 8 bytes in a VARCHAR(5)
    fails(conn, "INSERT INTO t (k, d) VALUES (2, '2024-01-01'), (3, '2024-13-45')", 1366, "'d'", "DATE")
    fails(conn, "INSERT INTO t (k, d) VALUES (2, 'garbage')", 1366, "'d'")
    fails(conn, "INSERT INTO t (k) VALUES ('two')", 1366, "'k'", "INT")
    fails(conn, "INSERT INTO t (k) VALUES (99999999999)", 1366, "'k'", "INT")
    fails(conn, "INSERT INTO t (k, x) VALUES (2, 12345.6)", 1366, "'x'", "DECIMAL(5,2)")
    fails(conn, "INSERT INTO t (v) VALUES ('a')", 1364, "'k'", "default")
    fails(conn, "INSERT INTO t (k, v) VALUES (2, 'a'), (3)", 1136, "count")
    fails(conn, "INSERT INTO t VALUES (2, 'a')", 1136, "count")
    fails(conn, "INSERT INTO t (k, nope) VALUES (2, 1)", 1054, "nope")
    fails(conn, "INSERT INTO t (k, k) VALUES (2, 1)", 1060, "'k'")
    fails(conn, "INSERT INTO missing VALUES (1)", 1146, "missing")
    assert rows(conn, "SELECT k, v FROM t") == [(1, "ok")]
    assert run(conn, "INSERT INTO t (k, v) VALUES (2, 'éa')") == 1  # 3 bytes fit


def test_labels(conn: pymysql.connections.Connection, db: str, other: pymysql.connections.Connection) -> None:
    run(conn, "CREATE TABLE t (k INT, v INT) DUPLICATE KEY(k) DISTRIBUTED BY HASH(k) BUCKETS 2")
    assert run(conn, "INSERT INTO t WITH LABEL load_1 VALUES (1, 1), (2, 2)") == 2
    fails(other, "INSERT INTO t WITH LABEL load_1 VALUES (3, 3)", 1105, "errCode = 5001", "load_1")
    fails(conn, "INSERT INTO t WITH LABEL load_1 (k, v) SELECT 9, 9", 1105, "errCode = 5001", "load_1")
    assert run(conn, "INSERT INTO t WITH LABEL load_2 (k, v) VALUES (3, 3)") == 1
    assert sorted_rows(other, "SELECT * FROM t") == [(1, 1), (2, 2), (3, 3)]


def test_insert_select_with_join(conn: pymysql.connections.Connection, db: str,
                                 other: pymysql.connections.Connection) -> None:
    run(conn, "CREATE TABLE users (id INT, name VARCHAR(20)) UNIQUE KEY(id) DISTRIBUTED BY HASH(id) BUCKETS 2")
    run(conn, "CREATE TABLE orders (oid INT, uid INT, amount INT) DUPLICATE KEY(oid) "
              "DISTRIBUTED BY HASH(oid) BUCKETS 3")
    run(conn, "CREATE TABLE totals (name VARCHAR(20), total BIGINT SUM, orders BIGINT SUM) "
              "AGGREGATE KEY(name) DISTRIBUTED BY HASH(name) BUCKETS 2")
    run(conn, f"INSERT INTO users VALUES {values([(1, 'ann'), (2, 'bob'), (3, 'cy')])}")
    run(conn, f"INSERT INTO orders VALUES {values([(10, 1, 5), (11, 1, 7), (12, 2, 1), (13, 9, 100)])}")
    assert run(conn, "INSERT INTO totals SELECT u.name, o.amount, 1 FROM orders o JOIN users u ON o.uid = u.id") == 3
    assert run(conn, "INSERT INTO totals (name, total, orders) SELECT name, 0, 0 FROM users") == 3
    assert sorted_rows(other, "SELECT * FROM totals") == [("ann", 12, 2), ("bob", 1, 1), ("cy", 0, 0)]
    # From a table in another database, and nothing when the SELECT is empty.
    run(conn, f"CREATE DATABASE {db}_x")
    try:
        run(conn, f"CREATE TABLE {db}_x.src (a INT) DISTRIBUTED BY HASH(a) BUCKETS 1")
        run(conn, f"INSERT INTO {db}_x.src VALUES (1), (2)")
        assert run(conn, f"INSERT INTO orders (oid, uid, amount) SELECT a + 100, a, 0 FROM {db}_x.src") == 2
        assert run(conn, "INSERT INTO orders SELECT * FROM orders WHERE amount > 1000") == 0
        assert scalar(other, "SELECT count(*) FROM orders") == 6
    finally:
        run(conn, f"DROP DATABASE {db}_x FORCE")
    fails(conn, "INSERT INTO orders SELECT oid FROM orders", 1136, "count")
    fails(conn, "INSERT INTO orders SELECT * FROM nowhere", 1146, "nowhere")
    fails(conn, "INSERT INTO orders SELECT oid, uid, nocol FROM orders", 1054, "nocol")


def test_insert_into_partitions(conn: pymysql.connections.Connection, db: str) -> None:
    run(conn, """CREATE TABLE p (d DATE, k INT, v INT) DUPLICATE KEY(d, k)
                 PARTITION BY RANGE(d) (PARTITION p1 VALUES LESS THAN ("2024-01-01"),
                                        PARTITION p2 VALUES LESS THAN ("2025-01-01"))
                 DISTRIBUTED BY HASH(k) BUCKETS 3""")
    run(conn, """CREATE TABLE l (c VARCHAR(4), k INT) DUPLICATE KEY(c)
                 PARTITION BY LIST(c) (PARTITION pa VALUES IN ("a", "b"), PARTITION pc VALUES IN ("c"))
                 DISTRIBUTED BY HASH(k) BUCKETS 2""")
    rows_in = [(f"2023-0{m}-01", m, m) for m in range(1, 7)] + [(f"2024-0{m}-01", m, m) for m in range(1, 4)]
    assert run(conn, f"INSERT INTO p VALUES {values(rows_in)}") == 9
    assert {r[1]: r[-1] for r in rows(conn, "SHOW PARTITIONS FROM p")} == {"p1": 6, "p2": 3}
    fails(conn, "INSERT INTO p VALUES ('2024-05-05', 1, 1), ('2030-01-01', 2, 2)", 1526, "no partition")
    fails(conn, "INSERT INTO l VALUES ('a', 1), ('z', 2)", 1526, "no partition")
    assert run(conn, "INSERT INTO l VALUES ('a', 1), ('b', 2), ('c', 3)") == 3
    assert {r[1]: r[-1] for r in rows(conn, "SHOW PARTITIONS FROM l")} == {"pa": 2, "pc": 1}
    # INSERT … PARTITION (…) only takes rows of the partitions it names.
    assert run(conn, "INSERT INTO p PARTITION (p2) VALUES ('2024-07-07', 7, 7)") == 1
    fails(conn, "INSERT INTO p PARTITION (p2) VALUES ('2023-07-07', 8, 8)", 1526, "partitions named")
    fails(conn, "INSERT INTO p PARTITION (p9) VALUES ('2024-07-07', 8, 8)", 1735, "p9")
    assert scalar(conn, "SELECT count(*) FROM p") == 10
    assert scalar(conn, "SELECT count(*) FROM l") == 3
    # Rows landed in every bucket they hash to; all of them read back.
    buckets = {r[0] for r in rows(conn, f"SELECT TABLET_ID FROM information_schema.rowsets WHERE TABLE_SCHEMA = "
                                        f"'{db}' AND TABLE_NAME = 'p'")}
    assert len(buckets) > 2


def test_read_your_writes_across_connections(conn: pymysql.connections.Connection, db: str,
                                             other: pymysql.connections.Connection) -> None:
    run(conn, "CREATE TABLE t (k INT, v INT) UNIQUE KEY(k) DISTRIBUTED BY HASH(k) BUCKETS 4")
    for i in range(1, 6):
        run(conn, f"INSERT INTO t VALUES ({i}, {i})")
        assert scalar(other, "SELECT count(*) FROM t") == i
        run(other, f"UPDATE t SET v = v * 10 WHERE k = {i}")
        assert scalar(conn, f"SELECT v FROM t WHERE k = {i}") == i * 10


def test_affected_rows_reach_the_client(conn: pymysql.connections.Connection, db: str) -> None:
    run(conn, "CREATE TABLE t (k INT, v INT) UNIQUE KEY(k) DISTRIBUTED BY HASH(k) BUCKETS 2")
    with conn.cursor() as cur:
        assert cur.execute("INSERT INTO t VALUES (1, 1), (2, 2), (3, 3)") == 3 and cur.rowcount == 3
        assert cur.execute("INSERT INTO t SELECT k + 10, v FROM t WHERE k > 1") == 2
        assert cur.execute("UPDATE t SET v = 0 WHERE k > 10") == 2
        assert cur.execute("DELETE FROM t WHERE k = 1") == 1
        # The next OK carries its own count, never the previous statement's.
        assert cur.execute("CREATE TABLE t2 (k INT) DISTRIBUTED BY HASH(k) BUCKETS 1") == 0
        assert cur.execute("SET NAMES utf8mb4") == 0
        assert cur.execute("SELECT k FROM t ORDER BY k") == 4 and cur.fetchall() == ((2,), (3,), (12,), (13,))
        assert cur.execute("DELETE FROM t WHERE k = 99") == 0
    assert conn.affected_rows() == 0
