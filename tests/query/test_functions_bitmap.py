"""Bitmap and HLL functions against Doris' answers: the constant cases of Doris' regression suite
(regression-test/suites/query_p0/sql_functions/bitmap_functions/test_bitmap_function.groovy and its
.out; booleans arrive as 1/0 over the MySQL protocol) and the docs' examples. A BITMAP or HLL value
itself is shown as NULL, as Doris sends it."""

from __future__ import annotations

from tests.query.functionkit import check
from tests.query.sqlkit import Conn, rows

_S = "bitmap_from_string"


def test_bitmap_and_contains_from_string(conn: Conn) -> None:
    check(conn, [
        ("bitmap_count(bitmap_and(to_bitmap(1), to_bitmap(2)))", "0"),
        ("bitmap_count(bitmap_and(to_bitmap(1), to_bitmap(1)))", "1"),
        ("bitmap_to_string(bitmap_and(to_bitmap(1), to_bitmap(1)))", "1"),
        (f"bitmap_to_string(bitmap_and({_S}('1,2,3'), {_S}('1,2'), {_S}('1,2,3,4,5')))", "1,2"),
        (f"bitmap_to_string(bitmap_and({_S}('1,2,3'), {_S}('1,2'), {_S}('1,2,3,4,5'), bitmap_empty()))", ""),
        (f"bitmap_to_string(bitmap_and({_S}('1,2,3'), {_S}('1,2'), {_S}('1,2,3,4,5'), NULL))", None),
        ("bitmap_contains(to_bitmap(1), 2)", "0"), ("bitmap_contains(to_bitmap(1), 1)", "1"),
        ("bitmap_count(bitmap_empty())", "0"), ("bitmap_to_string(bitmap_empty())", ""),
        (f'bitmap_to_string({_S}("0, 1, 2"))', "0,1,2"), (f'{_S}("-1, 0, 1, 2")', None),
        ("bitmap_has_any(to_bitmap(1), to_bitmap(2))", "0"), ("bitmap_has_any(to_bitmap(1), to_bitmap(1))", "1"),
        (f'bitmap_has_all({_S}("0, 1, 2"), {_S}("1, 2"))', "1"), (f'bitmap_has_all(bitmap_empty(), {_S}("1, 2"))', "0"),
        (f'{_S}("1") IS NULL', "0"), (f'{_S}("a") IS NULL', "1"),
    ])


def test_bitmap_or_xor_not(conn: Conn) -> None:
    check(conn, [
        ("bitmap_count(bitmap_or(to_bitmap(1), to_bitmap(2)))", "2"),
        ("bitmap_count(bitmap_or(to_bitmap(1), to_bitmap(1)))", "1"),
        ("bitmap_to_string(bitmap_or(to_bitmap(1), to_bitmap(2)))", "1,2"),
        ("bitmap_to_string(bitmap_or(to_bitmap(1), to_bitmap(2), to_bitmap(10), to_bitmap(0), NULL))", "0,1,2,10"),
        ("bitmap_to_string(bitmap_or(to_bitmap(1), to_bitmap(2), to_bitmap(10), to_bitmap(0), bitmap_empty()))",
         "0,1,2,10"),
        (f"bitmap_to_string(bitmap_or(to_bitmap(10), {_S}('1,2'), {_S}('1,2,3,4,5')))", "1,2,3,4,5,10"),
        ("bitmap_count(bitmap_or(to_bitmap(1), NULL))", "1"),
        (f'bitmap_or({_S}("a"), {_S}("b")) IS NULL', "1"),
        (f'bitmap_count(bitmap_or({_S}("a"), {_S}("b")))', "0"),
        (f'bitmap_or_count({_S}("a"), {_S}("b"))', "0"),
        ("bitmap_or(NULL, NULL) IS NULL", "1"), ("bitmap_to_string(bitmap_or(NULL, NULL))", None),
        (f"bitmap_count(bitmap_xor({_S}('2,3'), {_S}('1,2,3,4')))", "2"),
        (f"bitmap_to_string(bitmap_xor({_S}('2,3'), {_S}('1,2,3,4')))", "1,4"),
        (f"bitmap_to_string(bitmap_xor({_S}('2,3'), {_S}('1,2,3,4'), {_S}('3,4,5')))", "1,3,5"),
        (f"bitmap_to_string(bitmap_xor({_S}('2,3'), {_S}('1,2,3,4'), {_S}('3,4,5'), bitmap_empty()))", "1,3,5"),
        (f"bitmap_to_string(bitmap_xor({_S}('2,3'), {_S}('1,2,3,4'), {_S}('3,4,5'), NULL))", None),
        (f"bitmap_to_string(bitmap_not({_S}('2,3'), {_S}('1,2,3,4')))", ""),
        (f"bitmap_to_string(bitmap_not({_S}('2,3,5'), {_S}('1,2,3,4')))", "5"),
        (f"bitmap_to_string(bitmap_and_not({_S}('1,2,3'), {_S}('3,4,5')))", "1,2"),
    ])


def test_bitmap_counts(conn: Conn) -> None:
    check(conn, [
        (f"bitmap_and_count({_S}('1,2,3'), bitmap_empty())", "0"),
        (f"bitmap_and_count({_S}('1,2,3'), {_S}('1,2,3'))", "3"),
        (f"bitmap_and_count({_S}('1,2,3'), {_S}('3,4,5'))", "1"),
        (f"bitmap_and_count({_S}('1,2,3'), {_S}('1,2'), {_S}('1,2,3,4,5'))", "2"),
        (f"bitmap_and_count({_S}('1,2,3'), {_S}('1,2'), {_S}('1,2,3,4,5'), bitmap_empty())", "0"),
        (f"bitmap_and_count({_S}('1,2,3'), {_S}('1,2'), {_S}('1,2,3,4,5'), NULL)", "0"),
        (f"bitmap_or_count({_S}('1,2,3'), bitmap_empty())", "3"),
        (f"bitmap_or_count({_S}('1,2,3'), {_S}('1,2,3'))", "3"),
        (f"bitmap_or_count({_S}('1,2,3'), {_S}('3,4,5'))", "5"),
        (f"bitmap_or_count({_S}('1,2,3'), {_S}('3,4,5'), to_bitmap(100), bitmap_empty())", "6"),
        (f"bitmap_or_count({_S}('1,2,3'), {_S}('3,4,5'), to_bitmap(100), NULL)", "6"),
        (f"bitmap_xor_count({_S}('1,2,3'), {_S}('3,4,5'))", "4"),
        (f"bitmap_xor_count({_S}('1,2,3'), {_S}('1,2,3'))", "0"),
        (f"bitmap_xor_count({_S}('1,2,3'), {_S}('4,5,6'))", "6"),
        (f"bitmap_xor_count({_S}('2,3'), {_S}('1,2,3,4'), {_S}('3,4,5'))", "3"),
        (f"bitmap_xor_count({_S}('2,3'), {_S}('1,2,3,4'), {_S}('3,4,5'), bitmap_empty())", "3"),
        (f"bitmap_xor_count({_S}('2,3'), {_S}('1,2,3,4'), {_S}('3,4,5'), NULL)", "0"),
        (f"bitmap_and_not_count({_S}('1,2,3'), {_S}('3,4,5'))", "2"),
        ("bitmap_count(NULL)", "0"),
    ])


def test_bitmap_conversions_and_bounds(conn: Conn) -> None:
    check(conn, [
        ("bitmap_to_string(to_bitmap(10))", "10"), ("bitmap_to_string(to_bitmap('10'))", "10"),
        ("bitmap_to_string(to_bitmap(-5))", None), ("bitmap_to_string(to_bitmap(NULL))", None),
        ("bitmap_to_string(to_bitmap(18446744073709551615))", "18446744073709551615"),
        (f"bitmap_to_string({_S}('3,1,2,3'))", "1,2,3"), (f"bitmap_to_string({_S}(''))", ""),
        (f"bitmap_to_string({_S}('1.5'))", None),
        (f"bitmap_min({_S}('3,1,2'))", "1"), (f"bitmap_max({_S}('3,1,2'))", "3"),
        ("bitmap_min(bitmap_empty())", None),
        # bitmap_hash: Doris' MurmurHash3 (docs: 'hello' is 1321743225; the regression suite's counts).
        ("bitmap_to_string(bitmap_hash('hello'))", "1321743225"),
        ("bitmap_to_string(bitmap_hash('world'))", "2453398188"),
        ("bitmap_count(bitmap_hash('hello'))", "1"), ("bitmap_count(bitmap_hash(''))", "1"),
        ("bitmap_count(bitmap_hash(NULL))", "0"),
        # Tails of 1 to 3 bytes and multi-byte UTF-8 (MurmurHash3_x86_32, seed 104729).
        ("bitmap_to_string(bitmap_hash('abcdefg'))", "2789668594"),
        ("bitmap_to_string(bitmap_hash('日本語テキスト'))", "2134501433"),
    ])


def test_bitmap_aggregates(conn: Conn) -> None:
    source = "(SELECT 1 AS g, 1 AS v UNION ALL SELECT 1, 2 UNION ALL SELECT 2, 2 UNION ALL SELECT 2, NULL) t"
    assert rows(conn, f"SELECT g, bitmap_to_string(bitmap_union(to_bitmap(v))), bitmap_union_count(to_bitmap(v)), "
                      f"bitmap_union_int(v) FROM {source} GROUP BY g ORDER BY g") == [(1, "1,2", 2, 2), (2, "2", 1, 1)]
    assert rows(conn, f"SELECT bitmap_to_string(bitmap_intersect(b)), bitmap_to_string(group_bitmap_xor(b)) FROM "
                      f"(SELECT g, bitmap_union(to_bitmap(v)) b FROM {source} GROUP BY g) u") == [("2", "1")]
    assert rows(conn, f"SELECT intersect_count(to_bitmap(v), g, 1, 2), intersect_count(to_bitmap(v), g, 1) "
                      f"FROM {source}") == [(1, 2)]


def test_hll(conn: Conn) -> None:
    check(conn, [
        ("hll_cardinality(hll_hash('a'))", "1"), ("hll_cardinality(hll_empty())", "0"),
        ("hll_cardinality(hll_hash(NULL))", "0"), ("hll_cardinality(NULL)", "0"),
        ("hll_hash('a') IS NULL", "0"),
    ])
    source = "(SELECT 'a' AS v UNION ALL SELECT 'b' UNION ALL SELECT 'a' UNION ALL SELECT NULL) t"
    assert rows(conn, f"SELECT hll_union_agg(hll_hash(v)), hll_cardinality(hll_union(hll_hash(v))), "
                      f"hll_cardinality(hll_raw_agg(hll_hash(v))), approx_count_distinct(v) FROM {source}") == [
        (2, 2, 2, 2)]
    # HLL_HASH hashes a value's text: 1 and '1' are one value.
    assert rows(conn, "SELECT hll_cardinality(hll_union(h)) FROM (SELECT hll_hash(1) h UNION ALL "
                      "SELECT hll_hash('1')) t") == [(1,)]
