"""Array functions against Doris' answers: the examples of
https://doris.apache.org/docs/sql-manual/sql-functions/scalar-functions/array-functions/<name>;
arrays print as Doris 2.1 prints them ([1, null], strings quoted), see query.wire.values."""

from __future__ import annotations

from tests.query.functionkit import check
from tests.query.sqlkit import Conn, rows, run


def test_arrays(conn: Conn) -> None:
    check(conn, [
        ("array_contains([1, 2, 3], 1)", "1"), ("array_contains([1, 2, 3], 5)", "0"),  # array-contains
        ("array_distinct([1, 2, 3, 4, 5, NULL, NULL])", "[1, 2, 3, 4, 5, null]"),  # array-distinct
        ("array_distinct(['a', 'b', 'a'])", '["a", "b"]'),
        ("array_sort([3, 2, 1, NULL])", "[null, 1, 2, 3]"),  # array-sort
        ("array_join([1, 2, 3, 4, 5], '_')", "1_2_3_4_5"),  # array-join
        ("array_join([1, NULL, 3], '_', 'any')", "1_any_3"),
        ("element_at([1, 2, 3], 2)", "2"), ("element_at([1, 2, 3], -1)", "3"),  # element-at
        ("size([1, 2, 3])", "3"), ("array_size([])", "0"),  # array-size
        ("array_range(5)", "[0, 1, 2, 3, 4]"), ("array_range(0, 20, 5)", "[0, 5, 10, 15]"),  # array-range
        ("array_max([1, 3, 2])", "3"), ("array_position([1, 3, 2], 3)", "2"),
        ("array_slice([1, 2, 3, 4, 5], 2, 3)", "[2, 3, 4]"),  # array-slice
    ])


def test_lateral_view_explode(conn: Conn, db: str) -> None:
    # explode, explode-split, explode-numbers (table-functions): one row per element, the row's columns repeated.
    run(conn, "CREATE TABLE t (k INT, s VARCHAR(20)) DUPLICATE KEY(k) DISTRIBUTED BY HASH(k) BUCKETS 1")
    run(conn, "INSERT INTO t VALUES (1, 'a,b'), (2, 'c')")
    assert rows(conn, "SELECT k, e FROM t LATERAL VIEW explode_split(s, ',') tmp AS e ORDER BY k, e") == \
        [(1, "a"), (1, "b"), (2, "c")]
    assert rows(conn, "SELECT k, e FROM t LATERAL VIEW explode([10, 20]) tmp AS e WHERE k = 2 ORDER BY e") == \
        [(2, 10), (2, 20)]
    assert rows(conn, "SELECT count(*) FROM t LATERAL VIEW explode_numbers(3) tmp AS e") == [(6,)]
