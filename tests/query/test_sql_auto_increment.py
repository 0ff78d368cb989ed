"""AUTO_INCREMENT columns (Doris 2.1): rows that give no value get increasing values no other row of the
table ever got, whoever writes them; Aggregate Key tables and ill-typed columns are refused."""

from __future__ import annotations

from concurrent.futures import ThreadPoolExecutor

import pymysql

from tests.query.sqlkit import connect, fails, rows, run


def test_values_for_rows_without_one(conn: pymysql.connections.Connection, db: str) -> None:
    # regression-test/suites/data_model_p0/unique/test_unique_table_auto_inc.groovy (table8, table9):
    # a column list without the column numbers the rows from 1.
    run(conn, "CREATE TABLE t (id BIGINT NOT NULL AUTO_INCREMENT, name VARCHAR(10) NOT NULL) UNIQUE KEY(id) "
              "DISTRIBUTED BY HASH(id) BUCKETS 3")
    run(conn, 'INSERT INTO t (name) VALUES ("a"), ("b"), ("c")')
    assert rows(conn, "SELECT * FROM t ORDER BY id, name") == [(1, "a"), (2, "b"), (3, "c")]
    # A value given is kept; NULL asks for one; values only increase (gaps allowed, as in Doris).
    run(conn, 'INSERT INTO t VALUES (100, "x"), (NULL, "y")')
    run(conn, 'INSERT INTO t (name) SELECT name FROM t WHERE id <= 2')
    found = rows(conn, "SELECT id, name FROM t ORDER BY id")
    assert (100, "x") in found and len({i for i, _ in found}) == len(found) == 7
    generated = [i for i, n in found if i != 100]
    assert generated[:3] == [1, 2, 3] and all(b > a for a, b in zip(generated, generated[1:], strict=False))


def test_explicit_keys_and_updates(conn: pymysql.connections.Connection, db: str) -> None:
    # test_unique_table_auto_inc.groovy (table11, table12): explicit values, UPDATE and INSERT … SELECT of
    # the column keep the values they name.
    run(conn, "CREATE TABLE t (r_regionkey BIGINT NOT NULL AUTO_INCREMENT, r_name VARCHAR(25) NOT NULL, "
              "r_comment VARCHAR(152) NULL) UNIQUE KEY(r_regionkey) DISTRIBUTED BY HASH(r_regionkey) BUCKETS 10")
    run(conn, "INSERT INTO t VALUES (0, 'AFRICA', 'a'), (1, 'AMERICA', 'b'), (2, 'ASIA', 'c'), (3, 'EUROPE', 'd'), "
              "(4, 'MIDDLE EAST', 'e')")
    run(conn, "UPDATE t SET r_comment = 'foobar' WHERE r_regionkey <= 10")
    run(conn, 'INSERT INTO t SELECT r_regionkey, "test1", "test2" FROM t WHERE r_regionkey = 3')
    assert rows(conn, "SELECT * FROM t ORDER BY r_regionkey") == [
        (0, "AFRICA", "foobar"), (1, "AMERICA", "foobar"), (2, "ASIA", "foobar"), (3, "test1", "test2"),
        (4, "MIDDLE EAST", "foobar")]


def test_partial_update_keeps_the_stored_value(conn: pymysql.connections.Connection, db: str) -> None:
    # test_unique_table_auto_inc.groovy (table7): a partial update of other columns keeps a key's id; a new
    # key gets a new one.
    run(conn, "CREATE TABLE t (name VARCHAR(10) NOT NULL, value INT NOT NULL, id BIGINT NOT NULL AUTO_INCREMENT(50)) "
              "UNIQUE KEY(name) DISTRIBUTED BY HASH(name) BUCKETS 1")
    run(conn, "INSERT INTO t (name, value) VALUES ('Bob', 1), ('Tom', 2)")
    run(conn, "SET enable_unique_key_partial_update = true")
    run(conn, "INSERT INTO t (name, value) VALUES ('Bob', 10), ('Ann', 3)")
    assert rows(conn, "SELECT * FROM t ORDER BY id") == [("Bob", 10, 50), ("Tom", 2, 51), ("Ann", 3, 52)]


def test_concurrent_writers_never_share_a_value(conn: pymysql.connections.Connection, db: str) -> None:
    run(conn, "CREATE TABLE t (id BIGINT NOT NULL AUTO_INCREMENT, w INT) DUPLICATE KEY(id) "
              "DISTRIBUTED BY HASH(id) BUCKETS 2")

    def writer(w: int) -> None:
        own = connect(db)
        try:
            for _ in range(5):
                run(own, f"INSERT INTO t (w) VALUES ({w}), ({w}), ({w})")
        finally:
            own.close()

    with ThreadPoolExecutor(4) as pool:
        list(pool.map(writer, range(4)))
    ids = [i for (i,) in rows(conn, "SELECT id FROM t")]
    assert len(ids) == 60 and len(set(ids)) == 60


def test_refusals(conn: pymysql.connections.Connection, db: str) -> None:
    fails(conn, "CREATE TABLE a (k INT, id BIGINT NOT NULL AUTO_INCREMENT) AGGREGATE KEY(k, id) "
                "DISTRIBUTED BY HASH(k) BUCKETS 1", 1210, "only supported in duplicate table and unique table")
    fails(conn, "CREATE TABLE a (id INT NOT NULL AUTO_INCREMENT) DUPLICATE KEY(id) DISTRIBUTED BY HASH(id) BUCKETS 1",
          1210, "should be BIGINT type")
    fails(conn, "CREATE TABLE a (id BIGINT AUTO_INCREMENT) DUPLICATE KEY(id) DISTRIBUTED BY HASH(id) BUCKETS 1",
          1210, "can't be null")
    fails(conn, "CREATE TABLE a (id BIGINT NOT NULL AUTO_INCREMENT, j BIGINT NOT NULL AUTO_INCREMENT) "
                "DUPLICATE KEY(id) DISTRIBUTED BY HASH(id) BUCKETS 1", 1210, "at most one auto increment column")
    run(conn, "CREATE TABLE a (id BIGINT NOT NULL AUTO_INCREMENT(10), v INT) DUPLICATE KEY(id) "
              "DISTRIBUTED BY HASH(id) BUCKETS 1")
    fails(conn, "ALTER TABLE a ADD COLUMN j BIGINT NOT NULL AUTO_INCREMENT", 1235, "AUTO_INCREMENT")
    assert rows(conn, "DESC a")[0][5] == "AUTO_INCREMENT"
    # What MySQL tools look for (DBeaver, Connector/J: EXTRA LIKE '%auto_increment%').
    assert rows(conn, f"SELECT EXTRA FROM information_schema.columns WHERE TABLE_SCHEMA = '{db}' "
                      "AND TABLE_NAME = 'a' ORDER BY ORDINAL_POSITION") == [("auto_increment",), ("",)]
    assert "`id` bigint NOT NULL AUTO_INCREMENT(10)" in rows(conn, "SHOW CREATE TABLE a")[0][1]


def test_last_insert_id_is_the_first_generated_value(conn: pymysql.connections.Connection, db: str) -> None:
    # MySQL's rule, which clients read (cursor.lastrowid from the OK packet, LAST_INSERT_ID()): the first
    # value the last INSERT that generated any gave; an INSERT naming every value leaves it as it was.
    run(conn, "CREATE TABLE t (id BIGINT NOT NULL AUTO_INCREMENT, v INT) DUPLICATE KEY(id) "
              "DISTRIBUTED BY HASH(id) BUCKETS 1")
    assert rows(conn, "SELECT LAST_INSERT_ID()") == [(0,)]
    with conn.cursor() as cur:
        cur.execute("INSERT INTO t (v) VALUES (10), (11)")
        first = cur.lastrowid
        assert first > 0
        assert rows(conn, "SELECT id FROM t WHERE v = 10") == [(first,)]
        assert rows(conn, "SELECT LAST_INSERT_ID()") == [(first,)]
        cur.execute("INSERT INTO t VALUES (500, 12)")
        assert cur.lastrowid == 0
        assert rows(conn, "SELECT LAST_INSERT_ID()") == [(first,)]
        cur.execute("INSERT INTO t (v) VALUES (13)")
        assert rows(conn, "SELECT id FROM t WHERE v = 13") == [(cur.lastrowid,)]
        assert cur.lastrowid > first
    other = connect(db)
    try:  # per session
        assert rows(other, "SELECT LAST_INSERT_ID()") == [(0,)]
    finally:
        other.close()
