"""Array functions (https://doris.apache.org/docs/sql-manual/sql-functions/scalar-functions/array-functions/).

Doris keeps an array's order where DuckDB's list functions may not (LIST_DISTINCT), and sorts
NULLs first."""

from __future__ import annotations

from collections.abc import Callable

from sqlglot import exp

from query.functions.registry import Call, Function, fn, render

F = "array"


def _exploding(text: str) -> Callable[[Call], exp.Expr]:
    """A LATERAL VIEW generator: sqlglot writes `LATERAL VIEW explode(list) t AS c` as DuckDB's UNNEST."""
    return lambda call: exp.Explode(this=render(text, call.args))


def _element_at(call: Call) -> exp.Expr:
    """A 1-based (or from the end, negative) array index, or a map key: DuckDB's brackets do both."""
    return exp.Bracket(this=call.args[0], expressions=[call.args[1]], offset=1)


def _lateral(call: str) -> str:
    return f"(SELECT count(*) FROM (SELECT 1 k) t LATERAL VIEW {call} tmp AS e)"

FUNCTIONS: list[Function] = [
    fn("array", F, "array(1, 2, 3)", "[{*}]", arities=None),
    fn("array_contains", F, "array_contains([1, 2], 2)", "LIST_CONTAINS({0}, {1})"),
    fn("array_distinct", F, "array_distinct([1, 1, NULL, 2, NULL])",
       # The first of each value (and of NULLs) stays, in order.
       "LIST_FILTER({0}, (x, i) -> i = COALESCE(LIST_POSITION({0}, x), "
       "LIST_POSITION(LIST_TRANSFORM({0}, y -> y IS NULL), TRUE)))"),
    fn("array_sort", F, "array_sort([3, NULL, 1, 2])", "LIST_SORT({0}, 'ASC', 'NULLS FIRST')"),
    fn("array_reverse_sort", F, "array_reverse_sort([3, NULL, 1, 2])", "LIST_SORT({0}, 'DESC', 'NULLS LAST')"),
    fn("array_join", F, "array_join([1, NULL, 3], '_', 'x')", a2="ARRAY_TO_STRING({0}, {1})",
       a3="ARRAY_TO_STRING(LIST_TRANSFORM({0}, x -> COALESCE(CAST(x AS VARCHAR), {2})), {1})"),
    fn("element_at", F, "element_at([1, 2, 3], 2)", rewrite=_element_at, arities={2}),
    fn("size", F, "size([1, 2, 3])", "LEN({0})"),
    fn("array_size", F, "array_size([1, 2, 3])", "LEN({0})"),
    fn("cardinality", F, "cardinality([1, 2, 3])", "LEN({0})"),
    fn("array_range", F, "array_range(1, 7, 2)", a1="RANGE(0, {0})", a2="RANGE({0}, {1})", a3="RANGE({0}, {1}, {2})"),
    fn("array_max", F, "array_max([1, 3, 2])", "LIST_MAX({0})"),
    fn("array_min", F, "array_min([1, 3, 2])", "LIST_MIN({0})"),
    fn("array_sum", F, "array_sum([1, 3, 2])", "LIST_SUM({0})"),
    fn("array_avg", F, "array_avg([1, 3, 2])", "LIST_AVG({0})"),
    fn("array_position", F, "array_position([1, 3, 2], 3)", "COALESCE(LIST_POSITION({0}, {1}), 0)"),
    fn("array_slice", F, "array_slice([1, 2, 3, 4], 2, 2)", a2="LIST_SLICE({0}, {1}, -1)",
       a3="LIST_SLICE({0}, {1}, {1} + {2} - 1)"),
    fn("array_concat", F, "array_concat([1, 2], [3])", "LIST_CONCAT({*})", arities=None),
    fn("array_reverse", F, "array_reverse([1, 2, 3])", "LIST_REVERSE({0})"),
    fn("arrays_overlap", F, "arrays_overlap([1, 2], [2, 5])", "LIST_HAS_ANY({0}, {1})"),
    fn("array_with_constant", F, "array_with_constant(3, 'x')", "LIST_TRANSFORM(RANGE(0, {0}), i -> {1})"),
    fn("explode", F, _lateral("explode([1, 2, 3])"), rewrite=_exploding("{0}"), arities={1}),
    fn("explode_split", F, _lateral("explode_split('a,b', ',')"), rewrite=_exploding("STRING_SPLIT({0}, {1})"),
       arities={2}),
    fn("explode_numbers", F, _lateral("explode_numbers(3)"), rewrite=_exploding("RANGE(0, {0})"), arities={1}),
]
