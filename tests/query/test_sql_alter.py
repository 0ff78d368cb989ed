"""ALTER TABLE: ADD / DROP / MODIFY / RENAME COLUMN over rows written under older schemas, and
ADD / DROP PARTITION."""

from __future__ import annotations

import pymysql
import pytest

from tests.query.sqlkit import fails, rows, run, show_create, sorted_rows, values

MODELS = {
    "DUPLICATE": "CREATE TABLE t (k INT NOT NULL, v INT, w VARCHAR(10)) DUPLICATE KEY(k)",
    "UNIQUE": "CREATE TABLE t (k INT NOT NULL, v INT, w VARCHAR(10)) UNIQUE KEY(k)",
    "AGGREGATE": "CREATE TABLE t (k INT NOT NULL, v INT SUM, w VARCHAR(10) REPLACE) AGGREGATE KEY(k)",
}


def _table(conn: pymysql.connections.Connection, model: str) -> None:
    run(conn, f"{MODELS[model]} DISTRIBUTED BY HASH(k) BUCKETS 3")
    run(conn, f"INSERT INTO t VALUES {values([(1, 1, 'a'), (2, 2, 'b'), (3, 3, 'c')])}")


def _names(conn: pymysql.connections.Connection) -> list[str]:
    return [r[0] for r in rows(conn, "DESC t")]


@pytest.mark.parametrize("model", sorted(MODELS))
def test_add_column_with_default_and_position(conn: pymysql.connections.Connection, db: str, model: str,
                                              other: pymysql.connections.Connection) -> None:
    _table(conn, model)
    agg = " SUM" if model == "AGGREGATE" else ""
    run(conn, f'ALTER TABLE t ADD COLUMN n INT{agg} DEFAULT "9"')
    run(conn, f'ALTER TABLE t ADD COLUMN z BIGINT{agg} DEFAULT "0" AFTER v')
    assert _names(other) == ["k", "v", "z", "w", "n"]
    assert sorted_rows(other, "SELECT k, v, z, w, n FROM t") == [(1, 1, 0, "a", 9), (2, 2, 0, "b", 9),
                                                                  (3, 3, 0, "c", 9)]
    run(conn, "INSERT INTO t (k, v, w, n) VALUES (4, 4, 'd', 40)")
    assert sorted_rows(other, "SELECT k, n FROM t") == [(1, 9), (2, 9), (3, 9), (4, 40)]
    if model == "DUPLICATE":
        run(conn, "ALTER TABLE t ADD COLUMN f VARCHAR(3) FIRST")
        assert _names(other)[0] == "f"
        assert rows(other, "SELECT count(*) FROM t WHERE f IS NULL") == [(4,)]
    fails(conn, "ALTER TABLE t ADD COLUMN n INT", 1060, "'n'")
    fails(conn, f"ALTER TABLE t ADD COLUMN q INT{agg} NOT NULL", 1210, "'q'", "DEFAULT")
    fails(conn, f"ALTER TABLE t ADD COLUMN q INT{agg} AFTER nope", 1054, "nope")


def test_add_column_without_aggregation_is_a_key(conn: pymysql.connections.Connection, db: str) -> None:
    """Doris (regression-test/suites/schema_change_p0, agg tables): a column added to an Aggregate Key
    table without an aggregation type is a key column, placed after the last key; the rows already
    loaded take its default and aggregate as before, and the past reads as it did."""
    _table(conn, "AGGREGATE")
    run(conn, 'ALTER TABLE t SET ("enable_time_travel" = "true")')
    run(conn, "INSERT INTO t VALUES (1, 10, 'a2')")
    before = rows(conn, "SELECT now(6)")[0][0]
    run(conn, "ALTER TABLE t ADD COLUMN q INT")
    assert [r[:4] for r in rows(conn, "DESC t")] == [("k", "int", "No", "true"), ("q", "int", "Yes", "true"),
                                                     ("v", "int", "Yes", "false"), ("w", "varchar(10)", "Yes", "false")]
    assert "AGGREGATE KEY(`k`, `q`)" in show_create(conn, "t")
    run(conn, "INSERT INTO t (k, q, v, w) VALUES (1, 7, 5, 'x'), (1, 7, 1, 'y'), (1, NULL, 100, 'z')")
    assert sorted_rows(conn, "SELECT k, q, v, w FROM t WHERE k = 1") == [(1, None, 111, "z"), (1, 7, 6, "y")]
    assert sorted_rows(conn, f"SELECT k, v, w FROM t FOR TIME AS OF '{before}'") == [
        (1, 11, "a2"), (2, 2, "b"), (3, 3, "c")]
    run(conn, "ADMIN COMPACT TABLE t WHERE TYPE = 'BASE'")
    assert sorted_rows(conn, "SELECT k, q, v, w FROM t WHERE k = 1") == [(1, None, 111, "z"), (1, 7, 6, "y")]


def test_rollups_are_refused_with_the_alternative(conn: pymysql.connections.Connection, db: str) -> None:
    _table(conn, "AGGREGATE")
    for statement in ("ALTER TABLE t ADD ROLLUP r (k, v)", "ALTER TABLE t DROP ROLLUP r"):
        fails(conn, statement, 1235, "ROLLUP", "CREATE TABLE", "AS SELECT")


@pytest.mark.parametrize("model", sorted(MODELS))
def test_drop_column_and_readd(conn: pymysql.connections.Connection, db: str, model: str,
                               other: pymysql.connections.Connection) -> None:
    _table(conn, model)
    run(conn, "ALTER TABLE t DROP COLUMN v")
    assert sorted_rows(other, "SELECT * FROM t") == [(1, "a"), (2, "b"), (3, "c")]
    fails(other, "SELECT v FROM t", 1054, "v")
    run(conn, "INSERT INTO t VALUES (4, 'd')")
    # A new column of the same name is a new column: the dropped values must not come back.
    agg = " SUM" if model == "AGGREGATE" else ""
    run(conn, f"ALTER TABLE t ADD COLUMN v INT{agg}")
    assert sorted_rows(other, "SELECT k, v, w FROM t") == [(1, None, "a"), (2, None, "b"), (3, None, "c"),
                                                           (4, None, "d")]
    run(conn, "INSERT INTO t (k, w, v) VALUES (5, 'e', 50)")
    assert sorted_rows(other, "SELECT k, v FROM t WHERE v IS NOT NULL") == [(5, 50)]
    fails(conn, "ALTER TABLE t DROP COLUMN k", 1210, "key column 'k'")
    fails(conn, "ALTER TABLE t DROP COLUMN nope", 1054, "nope")


def test_drop_column_a_delete_used(conn: pymysql.connections.Connection, db: str) -> None:
    """A delete predicate on a column keeps covering its rows after the column is dropped."""
    _table(conn, "DUPLICATE")
    run(conn, "DELETE FROM t WHERE v = 2")
    run(conn, "ALTER TABLE t DROP COLUMN v")
    assert sorted_rows(conn, "SELECT * FROM t") == [(1, "a"), (3, "c")]
    run(conn, 'ALTER TABLE t ADD COLUMN v INT DEFAULT "2"')
    run(conn, "INSERT INTO t VALUES (4, 'd', 2)")
    assert sorted_rows(conn, "SELECT * FROM t") == [(1, "a", 2), (3, "c", 2), (4, "d", 2)]


@pytest.mark.parametrize("model", sorted(MODELS))
def test_modify_column_widening(conn: pymysql.connections.Connection, db: str, model: str,
                                other: pymysql.connections.Connection) -> None:
    _table(conn, model)
    agg = {"AGGREGATE": (" SUM", " REPLACE")}.get(model, ("", ""))
    run(conn, f"ALTER TABLE t MODIFY COLUMN v BIGINT{agg[0]}")
    run(conn, f"ALTER TABLE t MODIFY COLUMN w VARCHAR(20){agg[1]}")
    assert rows(other, "DESC t")[1][1] == "bigint" and rows(other, "DESC t")[2][1] == "varchar(20)"
    run(conn, f"INSERT INTO t VALUES (9, 9000000000, '{'x' * 20}')")
    assert sorted_rows(other, "SELECT * FROM t") == [(1, 1, "a"), (2, 2, "b"), (3, 3, "c"), (9, 9000000000, "x" * 20)]
    fails(conn, f"ALTER TABLE t MODIFY COLUMN w VARCHAR(5){agg[1]}", 1210, "'w'", "VARCHAR(20)", "VARCHAR(5)")
    fails(conn, f"ALTER TABLE t MODIFY COLUMN v INT{agg[0]}", 1210, "'v'", "BIGINT", "INT")
    fails(conn, f"ALTER TABLE t MODIFY COLUMN w INT{agg[1]}", 1210, "'w'")
    fails(conn, f"ALTER TABLE t MODIFY COLUMN v BIGINT{agg[0]} NOT NULL", 1210, "'v'", "NOT NULL")
    fails(conn, "ALTER TABLE t MODIFY COLUMN k BIGINT", 1210, "'k'", "distribution")
    fails(conn, "ALTER TABLE t MODIFY COLUMN nope INT", 1054, "nope")
    if model == "AGGREGATE":
        fails(conn, "ALTER TABLE t MODIFY COLUMN v BIGINT MAX", 1210, "aggregation")
    assert rows(other, "DESC t")[2][1] == "varchar(20)"


def test_rename_column(conn: pymysql.connections.Connection, db: str, other: pymysql.connections.Connection) -> None:
    _table(conn, "UNIQUE")
    run(conn, "ALTER TABLE t RENAME COLUMN w label")
    assert _names(other) == ["k", "v", "label"]
    assert sorted_rows(other, "SELECT k, label FROM t") == [(1, "a"), (2, "b"), (3, "c")]
    run(conn, "UPDATE t SET label = 'B' WHERE k = 2")
    assert rows(other, "SELECT label FROM t WHERE k = 2") == [("B",)]
    assert "`label` varchar(10)" in show_create(other, "t")
    fails(conn, "ALTER TABLE t RENAME COLUMN v label", 1060, "label")
    fails(conn, "ALTER TABLE t RENAME COLUMN nope x", 1054, "nope")
    fails(conn, "ALTER TABLE t RENAME COLUMN k kk", 1210, "'k'")


def test_failed_alter_applies_nothing(conn: pymysql.connections.Connection, db: str) -> None:
    _table(conn, "DUPLICATE")
    fails(conn, 'ALTER TABLE t ADD COLUMN n INT DEFAULT "1", SET ("no_such" = "x")', 1210, "no_such")
    fails(conn, "ALTER TABLE t ADD COLUMN n INT, DROP COLUMN nope", 1054, "nope")
    assert _names(conn) == ["k", "v", "w"]
    fails(conn, "ALTER TABLE nope ADD COLUMN n INT", 1146, "nope")


def test_add_and_drop_partitions(conn: pymysql.connections.Connection, db: str,
                                 other: pymysql.connections.Connection) -> None:
    run(conn, """CREATE TABLE r (k INT, v INT) DUPLICATE KEY(k)
                 PARTITION BY RANGE(k) (PARTITION p1 VALUES LESS THAN ("10")) DISTRIBUTED BY HASH(k) BUCKETS 2""")
    run(conn, "INSERT INTO r VALUES (1, 1)")
    fails(conn, "INSERT INTO r VALUES (15, 15)", 1526, "no partition")
    run(conn, 'ALTER TABLE r ADD PARTITION p2 VALUES LESS THAN ("20")')
    run(conn, 'ALTER TABLE r ADD PARTITION p3 VALUES [("30"), ("40")) DISTRIBUTED BY HASH(k) BUCKETS 4')
    run(conn, "INSERT INTO r VALUES (15, 15), (35, 35)")
    parts = {r[1]: r for r in rows(other, "SHOW PARTITIONS FROM r")}
    assert list(parts) == ["p1", "p2", "p3"] and parts["p3"][8] == 4
    fails(conn, 'ALTER TABLE r ADD PARTITION p2 VALUES LESS THAN ("50")', 1517, "p2")
    run(conn, 'ALTER TABLE r ADD PARTITION IF NOT EXISTS p2 VALUES LESS THAN ("50")')
    fails(conn, 'ALTER TABLE r ADD PARTITION p0 VALUES LESS THAN ("5")', 1210, "p0", "empty")
    fails(conn, 'ALTER TABLE r ADD PARTITION px VALUES [("15"), ("25"))', 1210, "px", "intersects", "p2")
    fails(conn, 'ALTER TABLE r ADD PARTITION pl VALUES IN ("50")', 1210, "RANGE")
    run(conn, "ALTER TABLE r DROP PARTITION p2")
    assert sorted_rows(other, "SELECT k FROM r") == [(1,), (35,)]
    fails(conn, "INSERT INTO r VALUES (15, 15)", 1526, "no partition")
    fails(conn, "ALTER TABLE r DROP PARTITION p2", 1735, "p2")
    run(conn, "ALTER TABLE r DROP PARTITION IF EXISTS p2")
    # A partition re-added under the same name starts empty.
    run(conn, 'ALTER TABLE r ADD PARTITION p2 VALUES [("10"), ("20"))')
    assert sorted_rows(other, "SELECT k FROM r") == [(1,), (35,)]

    run(conn, """CREATE TABLE l (c VARCHAR(4), k INT) DUPLICATE KEY(c)
                 PARTITION BY LIST(c) (PARTITION pa VALUES IN ("a")) DISTRIBUTED BY HASH(k) BUCKETS 2""")
    run(conn, 'ALTER TABLE l ADD PARTITION pb VALUES IN ("b", "c")')
    run(conn, "INSERT INTO l VALUES ('a', 1), ('c', 2)")
    fails(conn, 'ALTER TABLE l ADD PARTITION pz VALUES IN ("z", "c")', 1210, "pz", "pb")
    fails(conn, 'ALTER TABLE l ADD PARTITION pr VALUES LESS THAN ("z")', 1210, "LIST")
    run(conn, "ALTER TABLE l DROP PARTITION pa")
    assert rows(other, "SELECT * FROM l") == [("c", 2)]
    run(conn, "CREATE TABLE plain (k INT) DISTRIBUTED BY HASH(k) BUCKETS 1")
    fails(conn, 'ALTER TABLE plain ADD PARTITION p VALUES LESS THAN ("1")', 1210, "not partitioned")
