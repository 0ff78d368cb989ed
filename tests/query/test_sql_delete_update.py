"""DELETE (each keys model, with PARTITION), UPDATE on Unique Key, TRUNCATE TABLE."""

from __future__ import annotations

import pymysql

from tests.query.sqlkit import fails, rows, run, scalar, sorted_rows, values

RANGE = 'PARTITION BY RANGE(k) (PARTITION p1 VALUES LESS THAN ("10"), PARTITION p2 VALUES LESS THAN ("100"))'
ROWS = [(1, 1, "a"), (2, 2, "b"), (3, 3, "a"), (11, 1, "a"), (12, 2, "b")]


def _table(conn: pymysql.connections.Connection, model: str) -> None:
    value = {"DUPLICATE": "v INT, w VARCHAR(4)", "UNIQUE": "v INT, w VARCHAR(4)",
             "AGGREGATE": "v INT SUM, w VARCHAR(4) REPLACE"}[model]
    run(conn, f"CREATE TABLE t (k INT NOT NULL, {value}) {model} KEY(k) {RANGE} DISTRIBUTED BY HASH(k) BUCKETS 3")
    run(conn, f"INSERT INTO t VALUES {values(ROWS)}")


def test_delete_duplicate(conn: pymysql.connections.Connection, db: str,
                          other: pymysql.connections.Connection) -> None:
    _table(conn, "DUPLICATE")
    assert run(conn, "DELETE FROM t WHERE w = 'a' AND v < 3") == 2
    assert sorted_rows(other, "SELECT k FROM t") == [(2,), (3,), (12,)]
    assert run(conn, "DELETE FROM t PARTITION (p2) WHERE v >= 0") == 1
    assert sorted_rows(other, "SELECT k FROM t") == [(2,), (3,)]
    # A delete covers rows written before it, never rows written after.
    run(conn, "INSERT INTO t VALUES (1, 1, 'a'), (11, 1, 'a')")
    assert sorted_rows(other, "SELECT k FROM t") == [(1,), (2,), (3,), (11,)]
    assert run(conn, "DELETE FROM t WHERE k IN (1, 2)") == 2
    assert sorted_rows(other, "SELECT k FROM t") == [(3,), (11,)]
    assert run(conn, "DELETE FROM t WHERE k = 42") == 0
    fails(conn, "DELETE FROM t WHERE nope = 1", 1054, "nope")
    fails(conn, "DELETE FROM t PARTITION (p9) WHERE k = 1", 1735, "p9")
    fails(conn, "DELETE FROM t", 1210, "WHERE")
    fails(conn, "DELETE FROM nope WHERE k = 1", 1146, "nope")
    assert sorted_rows(other, "SELECT k FROM t") == [(3,), (11,)]


def test_delete_aggregate_keys_only(conn: pymysql.connections.Connection, db: str) -> None:
    _table(conn, "AGGREGATE")
    fails(conn, "DELETE FROM t WHERE v > 1", 1210, "'v'", "value column")
    fails(conn, "DELETE FROM t WHERE k = 1 OR w = 'a'", 1210, "'w'")
    assert run(conn, "DELETE FROM t WHERE k < 3") == 2
    assert run(conn, "DELETE FROM t PARTITION (p1) WHERE k > 0") == 1
    assert sorted_rows(conn, "SELECT k, v FROM t") == [(11, 1), (12, 2)]
    # Rows for a deleted key folded after the delete start from nothing.
    run(conn, "INSERT INTO t VALUES (1, 5, 'z'), (11, 10, 'z')")
    assert sorted_rows(conn, "SELECT * FROM t") == [(1, 5, "z"), (11, 11, "z"), (12, 2, "b")]


def test_delete_unique(conn: pymysql.connections.Connection, db: str, other: pymysql.connections.Connection) -> None:
    _table(conn, "UNIQUE")
    assert run(conn, "DELETE FROM t WHERE w = 'a'") == 3
    assert sorted_rows(other, "SELECT * FROM t") == [(2, 2, "b"), (12, 2, "b")]
    assert run(conn, "DELETE FROM t PARTITION (p2) WHERE v = 2") == 1
    assert sorted_rows(other, "SELECT * FROM t") == [(2, 2, "b")]
    run(conn, "INSERT INTO t VALUES (1, 100, 'new')")
    assert sorted_rows(other, "SELECT * FROM t") == [(1, 100, "new"), (2, 2, "b")]
    # The delete signs are rows of their own, visible in the rowsets.
    loads = scalar(conn, f"SELECT count(*) FROM information_schema.rowsets WHERE TABLE_SCHEMA = '{db}'")
    assert loads >= 4
    assert run(conn, "DELETE FROM t") == 2
    assert rows(other, "SELECT * FROM t") == []
    fails(conn, "DELETE FROM t WHERE nope = 1", 1054, "nope")


def test_update_unique(conn: pymysql.connections.Connection, db: str, other: pymysql.connections.Connection) -> None:
    _table(conn, "UNIQUE")
    assert run(conn, "UPDATE t SET v = v * 10, w = 'up' WHERE k > 2") == 3
    assert sorted_rows(other, "SELECT * FROM t") == [(1, 1, "a"), (2, 2, "b"), (3, 30, "up"), (11, 10, "up"),
                                                     (12, 20, "up")]
    assert run(conn, "UPDATE t SET w = NULL") == 5
    assert rows(other, "SELECT count(*) FROM t WHERE w IS NULL") == [(5,)]
    assert run(conn, "UPDATE t SET v = 0 WHERE k = 42") == 0
    fails(conn, "UPDATE t SET k = 5 WHERE k = 1", 1210, "key column 'k'")
    fails(conn, "UPDATE t SET nope = 1", 1054, "nope")
    fails(conn, "UPDATE t SET v = 'abc' WHERE k = 1", 1366, "'v'")
    fails(conn, "UPDATE t SET w = 'toolong' WHERE k = 1", 1406, "'w'")
    fails(conn, "UPDATE t SET v = 1 WHERE nope = 1", 1054, "nope")
    assert sorted_rows(other, "SELECT k, v FROM t") == [(1, 1), (2, 2), (3, 30), (11, 10), (12, 20)]


def test_update_refused_on_other_models(conn: pymysql.connections.Connection, db: str) -> None:
    _table(conn, "DUPLICATE")
    fails(conn, "UPDATE t SET v = 1", 1235, "UNIQUE KEY", "DUPLICATE")
    run(conn, "CREATE TABLE a (k INT, v INT SUM) AGGREGATE KEY(k) DISTRIBUTED BY HASH(k) BUCKETS 2")
    fails(conn, "UPDATE a SET v = 1 WHERE k = 1", 1235, "UNIQUE KEY", "AGGREGATE")


def test_truncate(conn: pymysql.connections.Connection, db: str, other: pymysql.connections.Connection) -> None:
    for model in ("DUPLICATE", "UNIQUE", "AGGREGATE"):
        run(conn, "DROP TABLE IF EXISTS t FORCE")
        _table(conn, model)
        run(conn, "TRUNCATE TABLE t PARTITION (p1)")
        assert sorted_rows(other, "SELECT k FROM t") == [(11,), (12,)], model
        run(conn, "INSERT INTO t VALUES (5, 5, 'n')")
        run(conn, "TRUNCATE TABLE t")
        assert rows(other, "SELECT * FROM t") == [], model
        run(conn, "INSERT INTO t VALUES (6, 6, 'n'), (16, 6, 'n')")
        assert sorted_rows(other, "SELECT k FROM t") == [(6,), (16,)], model
        fails(conn, "TRUNCATE TABLE t PARTITION (p9)", 1735, "p9")
    run(conn, "CREATE TABLE plain (k INT) DISTRIBUTED BY HASH(k) BUCKETS 2")
    run(conn, "INSERT INTO plain VALUES (1), (2)")
    run(conn, "TRUNCATE TABLE plain")
    assert rows(other, "SELECT * FROM plain") == []
    fails(conn, "TRUNCATE TABLE nope", 1146, "nope")


def test_subqueries_in_update_and_delete(conn: pymysql.connections.Connection, db: str) -> None:
    _table(conn, "UNIQUE")
    run(conn, "CREATE TABLE picks (k INT) DUPLICATE KEY(k) DISTRIBUTED BY HASH(k) BUCKETS 1")
    run(conn, "INSERT INTO picks VALUES (2), (3)")
    assert run(conn, "UPDATE t SET v = (SELECT max(k) FROM picks) * 100 WHERE k IN (SELECT k FROM picks)") == 2
    assert run(conn, "DELETE FROM t WHERE v > (SELECT avg(v) FROM t)") == 2
    assert run(conn, "UPDATE t SET w = 'q' WHERE t.k = 1") == 1
    assert sorted_rows(conn, "SELECT * FROM t") == [(1, 1, "q"), (11, 1, "a"), (12, 2, "b")]
    # A Duplicate/Aggregate delete is a stored predicate over the table's own columns.
    run(conn, "CREATE TABLE d (k INT, v INT) DUPLICATE KEY(k) DISTRIBUTED BY HASH(k) BUCKETS 2")
    run(conn, "INSERT INTO d VALUES (2, 2), (5, 5)")
    fails(conn, "DELETE FROM d WHERE k IN (SELECT k FROM picks)", 1235, "subqueries")
    assert run(conn, "DELETE FROM d WHERE d.k = 2") == 1
    assert rows(conn, "SELECT * FROM d") == [(5, 5)]


def _joined_tables(conn: pymysql.connections.Connection) -> None:
    run(conn, "CREATE TABLE ut (k INT, v INT, w VARCHAR(5)) UNIQUE KEY(k) DISTRIBUTED BY HASH(k) BUCKETS 1 "
              'PROPERTIES ("enable_time_travel" = "true")')
    run(conn, "CREATE TABLE us (k INT, nv INT) DUPLICATE KEY(k) DISTRIBUTED BY HASH(k) BUCKETS 1")
    run(conn, "CREATE TABLE uz (k INT, tag VARCHAR(5)) DUPLICATE KEY(k) DISTRIBUTED BY HASH(k) BUCKETS 1")
    run(conn, "INSERT INTO ut VALUES (1, 1, 'a'), (2, 2, 'b'), (3, 3, 'c')")
    run(conn, "INSERT INTO us VALUES (1, 10), (3, 30)")
    run(conn, "INSERT INTO uz VALUES (1, 'x'), (3, 'y')")


def test_update_from_and_delete_using(conn: pymysql.connections.Connection, db: str) -> None:
    """Doris 2.x: UPDATE t SET … FROM t2 [JOIN …] WHERE … and DELETE FROM t USING t2 [JOIN …] WHERE … on
    Unique Key tables (regression-test/suites/update/test_update_from, delete_p0/test_delete_using),
    each one commit that time travel sees as such."""
    _joined_tables(conn)
    before = rows(conn, "SELECT now(6)")[0][0]
    assert run(conn, "UPDATE ut SET v = us.nv + 1 FROM us WHERE ut.k = us.k") == 2
    assert rows(conn, "SELECT * FROM ut ORDER BY k") == [(1, 11, "a"), (2, 2, "b"), (3, 31, "c")]
    run(conn, "UPDATE ut AS a SET w = uz.tag FROM us JOIN uz ON us.k = uz.k WHERE a.k = us.k AND us.nv > 20")
    assert rows(conn, "SELECT * FROM ut ORDER BY k") == [(1, 11, "a"), (2, 2, "b"), (3, 31, "y")]
    run(conn, "INSERT INTO us VALUES (1, 99)")  # two source rows match k = 1: the target row goes once
    assert run(conn, "DELETE FROM ut USING us WHERE ut.k = us.k AND us.nv < 50") == 2
    assert rows(conn, "SELECT * FROM ut ORDER BY k") == [(2, 2, "b")]
    assert rows(conn, f"SELECT * FROM ut FOR TIME AS OF '{before}' ORDER BY k") == [
        (1, 1, "a"), (2, 2, "b"), (3, 3, "c")]
    fails(conn, "DELETE FROM us USING ut WHERE us.k = ut.k", 1235, "UNIQUE KEY")
    fails(conn, "UPDATE ut SET v = 1 FROM nope WHERE ut.k = nope.k", 1146, "nope")


def test_joined_tables_need_their_own_grants(conn: pymysql.connections.Connection, db: str,
                                             user: tuple[str, str]) -> None:
    """The tables after FROM/USING are read: the user needs SELECT on them, and the sandbox checks them."""
    _joined_tables(conn)
    name, password = user
    run(conn, f"GRANT SELECT_PRIV, LOAD_PRIV ON {db}.ut TO '{name}'")
    me = pymysql.connect(host=conn.host, port=conn.port, user=name, password=password, database=db, autocommit=True)
    try:
        fails(me, "UPDATE ut SET v = us.nv FROM us WHERE ut.k = us.k", 1142, "us")
        fails(me, "DELETE FROM ut USING us WHERE ut.k = us.k", 1142, "us")
        run(conn, f"GRANT SELECT_PRIV ON {db}.us TO '{name}'")
        assert run(me, "DELETE FROM ut USING us WHERE ut.k = us.k AND us.nv = 10") == 1
        fails(me, "DELETE FROM ut USING read_csv('/etc/passwd') AS f WHERE ut.k = 1", 1227, "read_csv")
    finally:
        me.close()
    assert rows(conn, "SELECT k FROM ut ORDER BY k") == [(2,), (3,)]
