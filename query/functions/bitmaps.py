"""Bitmap functions (https://doris.apache.org/docs/sql-manual/sql-functions/scalar-functions/bitmap-functions/).

A BITMAP is a sorted list of distinct UBIGINTs (storage.set_values), so each function is list SQL.
NULL handling follows Doris' regression suite (query_p0/sql_functions/bitmap_functions): BITMAP_OR
skips NULL arguments (NULL only when all are), BITMAP_AND / BITMAP_XOR / BITMAP_NOT are NULL when
any argument is, and the *_COUNT functions and BITMAP_COUNT answer 0 for NULL. TO_BITMAP and
BITMAP_FROM_STRING give NULL for what is not an unsigned 64-bit integer (a negative, a word).
BITMAP_HASH's member is Doris' MurmurHash3 of the value's text (query.functions.murmur_hash)."""

from __future__ import annotations

from collections.abc import Callable

from sqlglot import exp

from query.functions.murmur_hash import MURMUR3_32
from query.functions.registry import Call, Function, fn, render
from storage.set_values import SET_DUCK_TYPE, sorted_set_sql, union_sql

F = "bitmap"
EMPTY = f"CAST([] AS {SET_DUCK_TYPE})"


def _variadic(build: Callable[[list[str]], str]) -> Callable[[Call], exp.Expr]:
    """A rewrite of a call taking two or more bitmaps: `build` gets one placeholder per argument."""
    return lambda call: render(build([f"{{{i}}}" for i in range(len(call.args))]), call.args)


def _any_null(args: list[str]) -> str:
    return " OR ".join(f"{a} IS NULL" for a in args)


def and_sql(args: list[str]) -> str:
    """Members of the first bitmap every other one holds (so still sorted); NULL if any is NULL."""
    held = " AND ".join(f"LIST_CONTAINS({a}, __m)" for a in args[1:])
    return f"CASE WHEN {_any_null(args)} THEN NULL ELSE LIST_FILTER({args[0]}, __m -> {held}) END"


def or_sql(args: list[str]) -> str:
    """Members of any bitmap, NULL arguments skipped; NULL if all are NULL."""
    joined = ", ".join(f"COALESCE({a}, {EMPTY})" for a in args)
    every = sorted_set_sql(f"LIST_CONCAT({joined})")
    return f"CASE WHEN COALESCE({', '.join(args)}) IS NULL THEN NULL ELSE {every} END"


def xor_sql(args: list[str]) -> str:
    """Members an odd number of the bitmaps hold (Doris folds XOR left to right); NULL if any is NULL."""
    count = " + ".join(f"CAST(LIST_CONTAINS({a}, __m) AS INTEGER)" for a in args)
    every = sorted_set_sql(f"LIST_CONCAT({', '.join(args)})")
    return f"CASE WHEN {_any_null(args)} THEN NULL ELSE LIST_FILTER({every}, __m -> ({count}) % 2 = 1) END"


def not_sql(args: list[str]) -> str:
    """Members of the first bitmap the second lacks; NULL if either is NULL."""
    kept = f"LIST_FILTER({args[0]}, __m -> NOT LIST_CONTAINS({args[1]}, __m))"
    return f"CASE WHEN {_any_null(args)} THEN NULL ELSE {kept} END"


def _count(build: Callable[[list[str]], str]) -> Callable[[list[str]], str]:
    return lambda args: f"COALESCE(LEN({build(args)}), 0)"


_DIGITS = "'^[0-9]+$'"
# Each comma-separated part of a string, trimmed.
_PARTS = "LIST_TRANSFORM(STRING_SPLIT({0}, ','), __p -> TRIM(__p))"
FROM_STRING = (f"CASE WHEN TRIM({{0}}) = '' THEN {EMPTY} "
               f"WHEN LIST_BOOL_AND(LIST_TRANSFORM({_PARTS}, __p -> REGEXP_MATCHES(__p, {_DIGITS}) "
               f"AND TRY_CAST(__p AS UBIGINT) IS NOT NULL)) "
               f"THEN {sorted_set_sql(f'LIST_TRANSFORM({_PARTS}, __p -> TRY_CAST(__p AS UBIGINT))')} END")
# An integer (or its text) in [0, 2^64): a fractional or negative value is no member.
TO_BITMAP = (f"CASE WHEN REGEXP_MATCHES(TRIM(CAST({{0}} AS VARCHAR)), {_DIGITS}) "
             f"AND TRY_CAST(TRIM(CAST({{0}} AS VARCHAR)) AS UBIGINT) IS NOT NULL "
             f"THEN [TRY_CAST(TRIM(CAST({{0}} AS VARCHAR)) AS UBIGINT)] END")


def _intersect_count(call: Call) -> exp.Expr:
    """INTERSECT_COUNT(bitmap, column, v1, v2, …): members of the union of the rows where column = v1,
    and of those where column = v2, …"""
    unions = [union_sql(f"CASE WHEN {{1}} = {{{i}}} THEN {{0}} END") for i in range(2, len(call.args))]
    shared = unions[0]
    for union in unions[1:]:
        shared = f"LIST_INTERSECT({shared}, {union})"
    return render(f"COALESCE(LEN({shared}), 0)", call.args)


_TWO_OR_MORE = range(2, 64)

FUNCTIONS: list[Function] = [
    fn("to_bitmap", F, "bitmap_to_string(to_bitmap(10))", TO_BITMAP),
    fn("bitmap_from_string", F, "bitmap_to_string(bitmap_from_string('0, 1, 2'))", FROM_STRING),
    fn("bitmap_hash", F, "bitmap_to_string(bitmap_hash('hello'))",
       f"CASE WHEN {{0}} IS NOT NULL THEN [{MURMUR3_32}] END"),
    fn("bitmap_to_string", F, "bitmap_to_string(bitmap_from_string('3,1,2'))", "ARRAY_TO_STRING({0}, ',')"),
    fn("bitmap_empty", F, "bitmap_count(bitmap_empty())", EMPTY),
    fn("bitmap_count", F, "bitmap_count(bitmap_from_string('1,2,3'))", "COALESCE(LEN({0}), 0)"),
    fn("bitmap_min", F, "bitmap_min(bitmap_from_string('3,1,2'))", "LIST_MIN({0})"),
    fn("bitmap_max", F, "bitmap_max(bitmap_from_string('3,1,2'))", "LIST_MAX({0})"),
    fn("bitmap_contains", F, "bitmap_contains(to_bitmap(1), 1)", "LIST_CONTAINS({0}, TRY_CAST({1} AS UBIGINT))"),
    fn("bitmap_has_any", F, "bitmap_has_any(to_bitmap(1), to_bitmap(2))", "LIST_HAS_ANY({0}, {1})"),
    fn("bitmap_has_all", F, "bitmap_has_all(bitmap_from_string('0, 1, 2'), bitmap_from_string('1, 2'))",
       "LIST_HAS_ALL({0}, {1})"),
    fn("bitmap_and", F, "bitmap_to_string(bitmap_and(to_bitmap(1), to_bitmap(1)))", rewrite=_variadic(and_sql),
       arities=_TWO_OR_MORE),
    fn("bitmap_or", F, "bitmap_to_string(bitmap_or(to_bitmap(1), to_bitmap(2)))", rewrite=_variadic(or_sql),
       arities=_TWO_OR_MORE),
    fn("bitmap_xor", F, "bitmap_to_string(bitmap_xor(bitmap_from_string('2,3'), bitmap_from_string('1,2,3,4')))",
       rewrite=_variadic(xor_sql), arities=_TWO_OR_MORE),
    *(fn(name, F, f"bitmap_to_string({name}(bitmap_from_string('1,2,3'), bitmap_from_string('3,4,5')))",
         rewrite=_variadic(not_sql), arities={2}) for name in ("bitmap_not", "bitmap_and_not", "bitmap_andnot")),
    fn("bitmap_and_count", F, "bitmap_and_count(bitmap_from_string('1,2,3'), bitmap_from_string('3,4,5'))",
       rewrite=_variadic(_count(and_sql)), arities=_TWO_OR_MORE),
    fn("bitmap_or_count", F, "bitmap_or_count(bitmap_from_string('1,2,3'), bitmap_from_string('3,4,5'))",
       rewrite=_variadic(_count(or_sql)), arities=_TWO_OR_MORE),
    fn("bitmap_xor_count", F, "bitmap_xor_count(bitmap_from_string('1,2,3'), bitmap_from_string('3,4,5'))",
       rewrite=_variadic(_count(xor_sql)), arities=_TWO_OR_MORE),
    *(fn(name, F, f"{name}(bitmap_from_string('1,2,3'), bitmap_from_string('3,4,5'))",
         rewrite=_variadic(_count(not_sql)), arities={2}) for name in ("bitmap_and_not_count", "bitmap_andnot_count")),
    # Aggregates.
    fn("bitmap_union", F, "bitmap_to_string(bitmap_union(to_bitmap(1)))", union_sql("{0}"), aggregate=True),
    fn("bitmap_union_count", F, "bitmap_union_count(to_bitmap(1))", f"COALESCE(LEN({union_sql('{0}')}), 0)",
       aggregate=True),
    fn("bitmap_union_int", F, "bitmap_union_int(1)", "COUNT(DISTINCT {0})", aggregate=True),
    fn("bitmap_intersect", F, "bitmap_to_string(bitmap_intersect(to_bitmap(1)))",
       "CASE WHEN COUNT({0}) = 0 THEN NULL ELSE LIST_SORT(LIST_REDUCE(LIST({0}) FILTER (WHERE {0} IS NOT NULL), "
       "(__a, __b) -> LIST_INTERSECT(__a, __b))) END", aggregate=True),
    fn("group_bitmap_xor", F, "bitmap_to_string(group_bitmap_xor(bitmap_from_string('1,2')))",
       # Members an odd number of the group's bitmaps hold.
       # The aggregate is bound once, as a lambda's argument: DuckDB cannot run one inside a lambda.
       "LIST_TRANSFORM([FLATTEN(LIST({0}) FILTER (WHERE {0} IS NOT NULL))], __all -> LIST_FILTER("
       "LIST_SORT(LIST_DISTINCT(__all)), __m -> LEN(LIST_FILTER(__all, __n -> __n = __m)) % 2 = 1))[1]",
       aggregate=True),
    fn("intersect_count", F, "intersect_count(to_bitmap(1), 1, 1)", rewrite=_intersect_count,
       arities=range(3, 64), aggregate=True),
]
