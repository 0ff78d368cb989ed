"""Partition pruning (query.partition_pruning) through pymysql: a WHERE clause comparing the partition
column with constants reads only the partitions that can match (EXPLAIN's `partitions=n/m`, as the read
prunes them), and every answer equals the rows a scan of every partition would give."""

from __future__ import annotations

import datetime as dt

import pytest

from tests.query.sqlkit import Conn, rows, run

_DAYS = [dt.date(2020, 1, 1) + dt.timedelta(days=9 * i) for i in range(14)]  # 2020-01-01 … 2020-04-27


def _partitions(conn: Conn, query: str, table: int = 0) -> str:
    """EXPLAIN's `partitions=n/m (names)` of the query's `table`-th table."""
    found = [str(r[0]).strip() for r in rows(conn, f"EXPLAIN {query}") if str(r[0]).strip().startswith("partitions=")]
    return found[table].split(", tablets")[0]


@pytest.fixture
def dated(conn: Conn, db: str) -> list[tuple[int, dt.date]]:
    run(conn, "CREATE TABLE t (id INT, d DATE, v INT) DUPLICATE KEY(id) PARTITION BY RANGE(d) ("
              "PARTITION p1 VALUES LESS THAN ('2020-02-01'), PARTITION p2 VALUES LESS THAN ('2020-03-01'), "
              "PARTITION p3 VALUES LESS THAN ('2020-04-01'), PARTITION pmax VALUES LESS THAN (MAXVALUE)) "
              "DISTRIBUTED BY HASH(id) BUCKETS 2")
    data = [(i, day) for i, day in enumerate(_DAYS)]
    run(conn, "INSERT INTO t VALUES " + ", ".join(f"({i}, '{day}', {i * 10})" for i, day in data))
    return data


@pytest.mark.parametrize(("where", "kept", "matches"), [
    ("d = '2020-02-10'", "partitions=1/4 (p2)", lambda d: d == dt.date(2020, 2, 10)),
    ("d >= '2020-03-01'", "partitions=2/4 (p3,pmax)", lambda d: d >= dt.date(2020, 3, 1)),
    ("d < DATE '2020-02-01'", "partitions=1/4 (p1)", lambda d: d < dt.date(2020, 2, 1)),
    ("'2020-02-01' > d", "partitions=1/4 (p1)", lambda d: d < dt.date(2020, 2, 1)),
    ("d <= '2020-02-01'", "partitions=2/4 (p1,p2)", lambda d: d <= dt.date(2020, 2, 1)),
    ("d BETWEEN '2020-02-05' AND '2020-03-05'", "partitions=2/4 (p2,p3)",
     lambda d: dt.date(2020, 2, 5) <= d <= dt.date(2020, 3, 5)),
    ("d IN ('2020-01-10', '2020-04-27')", "partitions=2/4 (p1,pmax)",
     lambda d: d in (dt.date(2020, 1, 10), dt.date(2020, 4, 27))),
    ("d > '2020-02-15' AND v >= 0 AND d < '2020-03-10'", "partitions=2/4 (p2,p3)",
     lambda d: dt.date(2020, 2, 15) < d < dt.date(2020, 3, 10)),
    ("d = '2019-01-01'", "partitions=1/4 (p1)", lambda d: False),  # p1 has no lower bound
    ("d > '2021-01-01'", "partitions=1/4 (pmax)", lambda d: False),
    # Not pruned: a disjunction, a function of the column.
    ("d = '2020-02-10' OR v = 0", "partitions=4/4 (p1,p2,p3,pmax)", lambda d: d in (dt.date(2020, 2, 10), _DAYS[0])),
    ("year(d) = 2019", "partitions=4/4 (p1,p2,p3,pmax)", lambda d: False),
])
def test_range_partitions_a_predicate_cannot_match_are_not_read(conn: Conn, dated: list[tuple[int, dt.date]],
                                                                where: str, kept: str, matches: object) -> None:
    query = f"SELECT id FROM t WHERE {where} ORDER BY id"
    assert _partitions(conn, query) == kept
    assert callable(matches)
    assert [r[0] for r in rows(conn, query)] == [i for i, d in dated if matches(d)]


def test_joins_prune_by_the_qualified_column_only(conn: Conn, dated: list[tuple[int, dt.date]]) -> None:
    run(conn, "CREATE TABLE u (id INT, d DATE) DUPLICATE KEY(id) DISTRIBUTED BY HASH(id) BUCKETS 1")
    run(conn, "INSERT INTO u VALUES (1, '2020-01-10'), (6, '2020-02-25'), (7, '2020-03-05'), (99, '2020-03-05')")
    qualified = "SELECT u.id, x.id FROM u LEFT JOIN t AS x ON x.id = u.id WHERE x.d >= '2020-03-01' ORDER BY u.id"
    assert _partitions(conn, qualified, 1) == "partitions=2/4 (p3,pmax)"
    # Rows of u whose match the pruning removed would come back with x.id NULL: the WHERE drops them.
    assert rows(conn, qualified) == [(7, 7)]
    # `d` alone could be u's column: no pruning.
    ambiguous = "SELECT t.id FROM t JOIN u ON t.id = u.id WHERE t.v > 0 AND u.d < '2020-02-01' ORDER BY t.id"
    assert _partitions(conn, ambiguous, 0) == "partitions=4/4 (p1,p2,p3,pmax)"
    assert rows(conn, ambiguous) == [(1,)]


def test_integer_ranges_and_constants_of_another_type(conn: Conn, db: str) -> None:
    run(conn, "CREATE TABLE n (k INT, v INT) DUPLICATE KEY(k) PARTITION BY RANGE(k) (PARTITION a VALUES LESS THAN "
              "(3), PARTITION b VALUES LESS THAN (6)) DISTRIBUTED BY HASH(k) BUCKETS 1")
    run(conn, "INSERT INTO n VALUES (0, 0), (1, 1), (2, 2), (3, 3), (4, 4), (5, 5), (-7, 9)")
    cases = {"k <= 2.5": ([-7, 0, 1, 2], "partitions=1/2 (a)"), "k > 2.5": ([3, 4, 5], "partitions=2/2 (a,b)"),
             "k >= 3": ([3, 4, 5], "partitions=1/2 (b)"), "k = -7": ([-7], "partitions=1/2 (a)"),
             "k IN (4, 5)": ([4, 5], "partitions=1/2 (b)")}
    for where, (expected, kept) in cases.items():
        query = f"SELECT k FROM n WHERE {where} ORDER BY k"
        assert _partitions(conn, query) == kept, where
        assert [r[0] for r in rows(conn, query)] == expected, where


def test_list_partitions_keep_the_default_partition(conn: Conn, db: str) -> None:
    run(conn, "CREATE TABLE l (k INT, city VARCHAR(10)) DUPLICATE KEY(k) PARTITION BY LIST(city) ("
              "PARTITION pa VALUES IN ('a', 'b'), PARTITION pc VALUES IN ('c'), PARTITION other) "
              "DISTRIBUTED BY HASH(k) BUCKETS 1")
    run(conn, "INSERT INTO l VALUES (1, 'a'), (2, 'b'), (3, 'c'), (4, 'z')")
    assert _partitions(conn, "SELECT k FROM l WHERE city = 'c'") == "partitions=2/3 (pc,other)"
    assert rows(conn, "SELECT k FROM l WHERE city = 'c'") == [(3,)]
    assert _partitions(conn, "SELECT k FROM l WHERE city IN ('b', 'z')") == "partitions=2/3 (pa,other)"
    assert rows(conn, "SELECT k FROM l WHERE city IN ('b', 'z') ORDER BY k") == [(2,), (4,)]


def test_unique_key_partition_column_prunes_and_merges(conn: Conn, db: str) -> None:
    run(conn, "CREATE TABLE q (d DATE, k INT, v INT) UNIQUE KEY(d, k) PARTITION BY RANGE(d) ("
              "PARTITION p1 VALUES LESS THAN ('2020-02-01'), PARTITION p2 VALUES LESS THAN ('2020-03-01')) "
              "DISTRIBUTED BY HASH(k) BUCKETS 1")
    run(conn, "INSERT INTO q VALUES ('2020-01-05', 1, 1), ('2020-02-05', 1, 1)")
    run(conn, "INSERT INTO q VALUES ('2020-01-05', 1, 2), ('2020-02-05', 2, 3)")
    query = "SELECT k, v FROM q WHERE d >= '2020-02-01' ORDER BY k"
    assert _partitions(conn, query) == "partitions=1/2 (p2)"
    assert rows(conn, query) == [(1, 1), (2, 3)]
