"""The three keys models read back right after several loads, partitioned and not, on several
buckets: Duplicate keeps every row, Unique the newest per key, Aggregate folds each value."""

from __future__ import annotations

import pymysql
import pytest

from tests.query.sqlkit import rows, run, sorted_rows, values

PARTITIONING = {
    "none": "",
    "range": 'PARTITION BY RANGE(k) (PARTITION p1 VALUES LESS THAN ("3"), PARTITION p2 VALUES LESS THAN MAXVALUE)',
    "list": 'PARTITION BY LIST(k) (PARTITION p1 VALUES IN ("1", "2"), PARTITION p2 VALUES IN ("3", "4", "5"))',
}


@pytest.mark.parametrize("partitioning", sorted(PARTITIONING))
def test_aggregate_functions(conn: pymysql.connections.Connection, db: str, partitioning: str) -> None:
    run(conn, f"""CREATE TABLE a (k INT NOT NULL, s BIGINT SUM, lo INT MIN, hi INT MAX,
                  r VARCHAR(8) REPLACE, rn VARCHAR(8) REPLACE_IF_NOT_NULL) AGGREGATE KEY(k)
                  {PARTITIONING[partitioning]} DISTRIBUTED BY HASH(k) BUCKETS 3""")
    # Two rows of one key inside a load fold in load order, as rows of later loads do.
    run(conn, f"INSERT INTO a VALUES {values([(1, 10, 5, 5, 'a', 'a'), (1, 1, 7, 2, 'b', None)])}")
    run(conn, f"INSERT INTO a VALUES {values([(1, 100, 1, 9, None, None), (3, 1, 1, 1, 'x', 'x')])}")
    run(conn, f"INSERT INTO a VALUES {values([(3, None, None, None, 'y', None), (5, 2, 2, 2, None, 'z')])}")
    assert sorted_rows(conn, "SELECT * FROM a") == [
        (1, 111, 1, 9, None, "a"), (3, 1, 1, 1, "y", "x"), (5, 2, 2, 2, None, "z")]
    assert rows(conn, "SELECT sum(s), count(*) FROM a") == [(114, 3)]


@pytest.mark.parametrize("partitioning", sorted(PARTITIONING))
def test_unique_newest_wins(conn: pymysql.connections.Connection, db: str, partitioning: str) -> None:
    run(conn, f"""CREATE TABLE u (k INT NOT NULL, v VARCHAR(8)) UNIQUE KEY(k) {PARTITIONING[partitioning]}
                  DISTRIBUTED BY HASH(k) BUCKETS 4""")
    run(conn, f"INSERT INTO u VALUES {values([(k, f'v{k}') for k in range(1, 6)])}")
    run(conn, f"INSERT INTO u VALUES {values([(2, 'old'), (2, 'new'), (4, None)])}")
    assert sorted_rows(conn, "SELECT * FROM u") == [(1, "v1"), (2, "new"), (3, "v3"), (4, None), (5, "v5")]


@pytest.mark.parametrize("partitioning", sorted(PARTITIONING))
def test_duplicate_keeps_all(conn: pymysql.connections.Connection, db: str, partitioning: str) -> None:
    run(conn, f"""CREATE TABLE d (k INT NOT NULL, v INT) DUPLICATE KEY(k) {PARTITIONING[partitioning]}
                  DISTRIBUTED BY HASH(k) BUCKETS 3""")
    batch = [(k, k * 10) for k in range(1, 6)]
    run(conn, f"INSERT INTO d VALUES {values(batch)}")
    run(conn, f"INSERT INTO d VALUES {values(batch)}")
    assert sorted_rows(conn, "SELECT * FROM d") == sorted(batch * 2)
    assert rows(conn, "SELECT k, count(*) FROM d GROUP BY k ORDER BY k") == [(k, 2) for k in range(1, 6)]
