"""Aggregate and window functions against Doris' answers: the examples of
https://doris.apache.org/docs/sql-manual/sql-functions/aggregate-functions/<name> and
https://doris.apache.org/docs/sql-manual/sql-functions/window-functions/<name>, over a table."""

from __future__ import annotations

import pytest

from tests.query.functionkit import shown
from tests.query.sqlkit import Conn, rows, run


@pytest.fixture
def values(conn: Conn, db: str) -> str:
    run(conn, "CREATE TABLE t (k INT, v VARCHAR(10), n INT) DUPLICATE KEY(k) DISTRIBUTED BY HASH(k) BUCKETS 1")
    run(conn, "INSERT INTO t VALUES (1, 'a', 10), (2, 'b', 20), (3, 'c', NULL), (4, 'c', 40)")
    return "t"


def _row(conn: Conn, sql: str) -> list[str | None]:
    found = rows(conn, sql)
    assert len(found) == 1, found
    return [shown(v) for v in found[0]]


def test_group_concat(conn: Conn, values: str) -> None:
    # group-concat: the default separator is ', '; a second argument or SEPARATOR names another.
    assert _row(conn, "SELECT group_concat(v ORDER BY k) FROM t") == ["a, b, c, c"]
    assert _row(conn, "SELECT group_concat(v, ' ' ORDER BY k) FROM t") == ["a b c c"]
    assert _row(conn, "SELECT group_concat(DISTINCT v ORDER BY v) FROM t") == ["a, b, c"]
    assert _row(conn, "SELECT group_concat(v ORDER BY k DESC SEPARATOR '-') FROM t") == ["c-c-b-a"]
    assert _row(conn, "SELECT group_concat(n ORDER BY k) FROM t") == ["10, 20, 40"]


def test_collections(conn: Conn, values: str) -> None:
    # collect-list and collect-set leave NULLs out; array-agg keeps them.
    assert _row(conn, "SELECT array_sort(collect_list(n)), array_sort(collect_set(v)) FROM t") == \
        ["[10, 20, 40]", '["a", "b", "c"]']
    assert _row(conn, "SELECT size(array_agg(n)) FROM t") == ["4"]


def test_statistics(conn: Conn, values: str) -> None:
    assert _row(conn, "SELECT count(DISTINCT k, n), count(DISTINCT v), any_value(v) IS NOT NULL FROM t") == \
        ["3", "3", "1"]
    assert _row(conn, "SELECT percentile(n, 0.5), percentile_approx(n, 0.5), median(n) FROM t") == \
        ["20.0", "20.0", "20.0"]
    # Population standard deviation and variance (stddev, variance), sample variance (var_samp) of 10, 20, 40.
    assert _row(conn, "SELECT round(stddev(n), 4), round(variance(n), 4), round(var_samp(n), 4) FROM t") == \
        ["12.4722", "155.5556", "233.3333"]
    assert _row(conn, "SELECT approx_count_distinct(v), max_by(k, n), min_by(k, n) FROM t") == ["3", "4", "1"]


def test_windows(conn: Conn, values: str) -> None:
    found = rows(conn, "SELECT k, lag(n, 1, 0) OVER (ORDER BY k), lead(n, 1, -1) OVER (ORDER BY k), "
                       "ntile(2) OVER (ORDER BY k), first_value(v) OVER (ORDER BY k), "
                       "last_value(v) OVER (ORDER BY k ROWS BETWEEN UNBOUNDED PRECEDING AND UNBOUNDED FOLLOWING) "
                       "FROM t ORDER BY k")
    assert [tuple(shown(v) for v in r) for r in found] == [
        ("1", "0", "20", "1", "a", "c"), ("2", "10", None, "1", "a", "c"),
        ("3", "20", "40", "2", "a", "c"), ("4", None, "-1", "2", "a", "c")]
