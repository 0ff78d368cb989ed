"""SELECT over Strata tables: joins, aggregates, ORDER BY / LIMIT, subqueries, CTEs, several
tables and databases, and errors naming what is wrong."""

from __future__ import annotations

import pymysql

from tests.query.sqlkit import columns, fails, rows, run, values


def _shop(conn: pymysql.connections.Connection) -> None:
    run(conn, "CREATE TABLE users (id INT NOT NULL, name VARCHAR(10), city VARCHAR(10)) UNIQUE KEY(id) "
              "DISTRIBUTED BY HASH(id) BUCKETS 3")
    run(conn, """CREATE TABLE orders (day DATE NOT NULL, oid INT NOT NULL, uid INT, amount DECIMAL(8, 2))
                 DUPLICATE KEY(day, oid)
                 PARTITION BY RANGE(day) (PARTITION p1 VALUES LESS THAN ("2024-02-01"),
                                          PARTITION p2 VALUES LESS THAN ("2024-03-01"))
                 DISTRIBUTED BY HASH(oid) BUCKETS 4""")
    run(conn, "CREATE TABLE daily (day DATE NOT NULL, n BIGINT SUM, top DECIMAL(8, 2) MAX) AGGREGATE KEY(day) "
              "DISTRIBUTED BY HASH(day) BUCKETS 2")
    users = [(1, "ann", "ny"), (2, "bob", "sf"), (3, "cy", "ny"), (4, "dee", None)]
    run(conn, f"INSERT INTO users VALUES {values(users)}")
    orders = [("2024-01-05", 1, 1, 10.5), ("2024-01-06", 2, 1, 20), ("2024-01-06", 3, 2, 5),
              ("2024-02-10", 4, 3, 7.25), ("2024-02-11", 5, 9, 100)]
    run(conn, f"INSERT INTO orders VALUES {values(orders)}")
    run(conn, "INSERT INTO daily SELECT day, 1, amount FROM orders")


def test_joins_and_aggregates(conn: pymysql.connections.Connection, db: str) -> None:
    _shop(conn)
    assert rows(conn, """SELECT u.name, count(*) AS n, sum(o.amount) AS total FROM orders o
                         JOIN users u ON u.id = o.uid GROUP BY u.name ORDER BY total DESC""") == [
        ("ann", 2, 30.5), ("cy", 1, 7.25), ("bob", 1, 5)]
    assert columns(conn, "SELECT u.name, count(*) AS n FROM users u GROUP BY u.name") == ["name", "n"]
    assert rows(conn, """SELECT u.name, count(o.oid) FROM users u LEFT JOIN orders o ON o.uid = u.id
                         GROUP BY u.name HAVING count(o.oid) = 0 ORDER BY 1""") == [("dee", 0)]
    assert rows(conn, "SELECT city, count(*) FROM users GROUP BY city ORDER BY city NULLS FIRST") == [
        (None, 1), ("ny", 2), ("sf", 1)]
    assert rows(conn, "SELECT day, n, top FROM daily WHERE day = '2024-01-06'")[0][1:] == (2, 20)
    assert rows(conn, "SELECT min(amount), max(amount), count(DISTINCT uid) FROM orders") == [(5, 100, 4)]


def test_order_limit_subqueries_ctes(conn: pymysql.connections.Connection, db: str) -> None:
    _shop(conn)
    assert rows(conn, "SELECT oid FROM orders ORDER BY amount DESC LIMIT 2") == [(5,), (2,)]
    assert rows(conn, "SELECT oid FROM orders ORDER BY oid LIMIT 2 OFFSET 3") == [(4,), (5,)]
    assert rows(conn, "SELECT oid FROM orders ORDER BY oid LIMIT 1, 2") == [(2,), (3,)]
    assert rows(conn, "SELECT name FROM users WHERE id IN (SELECT uid FROM orders WHERE amount > 6) "
                      "ORDER BY name") == [("ann",), ("cy",)]
    assert rows(conn, "SELECT name FROM users u WHERE NOT EXISTS (SELECT 1 FROM orders o WHERE o.uid = u.id) "
                      "ORDER BY name") == [("dee",)]
    assert rows(conn, "SELECT (SELECT count(*) FROM users), (SELECT count(*) FROM orders)") == [(4, 5)]
    assert rows(conn, """WITH spend AS (SELECT uid, sum(amount) AS s FROM orders GROUP BY uid),
                              rich AS (SELECT uid FROM spend WHERE s > 8)
                         SELECT u.name FROM rich r JOIN users u ON u.id = r.uid ORDER BY u.name""") == [("ann",)]
    assert rows(conn, "SELECT t.n FROM (SELECT count(*) AS n FROM orders WHERE day >= '2024-02-01') t") == [(2,)]
    assert rows(conn, "SELECT name FROM users UNION SELECT city FROM users WHERE city = 'sf' ORDER BY 1") == [
        ("ann",), ("bob",), ("cy",), ("dee",), ("sf",)]


def test_across_databases_and_qualified_names(conn: pymysql.connections.Connection, db: str) -> None:
    _shop(conn)
    run(conn, f"CREATE DATABASE {db}_b")
    try:
        run(conn, f"CREATE TABLE {db}_b.cities (city VARCHAR(10), state VARCHAR(2)) DISTRIBUTED BY HASH(city) "
                  "BUCKETS 1")
        run(conn, f"INSERT INTO {db}_b.cities VALUES ('ny', 'NY'), ('sf', 'CA')")
        assert rows(conn, f"""SELECT c.state, count(*) FROM {db}.users u JOIN {db}_b.cities c ON c.city = u.city
                              GROUP BY c.state ORDER BY c.state""") == [("CA", 1), ("NY", 2)]
        assert rows(conn, f"SELECT count(*) FROM {db}.orders, {db}_b.cities") == [(10,)]
    finally:
        run(conn, f"DROP DATABASE {db}_b FORCE")


def test_select_errors(conn: pymysql.connections.Connection, db: str) -> None:
    _shop(conn)
    fails(conn, "SELECT nope FROM users", 1054, "nope")
    fails(conn, "SELECT * FROM nope", 1146, "nope")
    fails(conn, "SELECT * FROM nodb.users", 1049, "nodb")
    fails(conn, "SELECT * FROM users WHERE", 1064)
    assert rows(conn, "SELECT count(*) FROM users") == [(4,)]


def test_columns_may_name_their_database(conn: pymysql.connections.Connection, db: str) -> None:
    """MySQL's `db.t.c` column references (dbt-doris' snapshot SQL writes them), also in subqueries."""
    run(conn, "CREATE TABLE q (k INT, v INT) DISTRIBUTED BY HASH(k) BUCKETS 1")
    run(conn, "INSERT INTO q VALUES (1, 10), (2, 20)")
    assert rows(conn, f"SELECT {db}.q.k FROM {db}.q ORDER BY 1") == [(1,), (2,)]
    assert rows(conn, f"SELECT `{db}`.`q`.`v` FROM q WHERE {db}.q.k = 2") == [(20,)]
    assert rows(conn, f"SELECT k FROM q WHERE k NOT IN (SELECT `{db}`.`q`.k FROM `{db}`.`q` WHERE v > 10)") == [(1,)]
