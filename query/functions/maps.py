"""Map functions (https://doris.apache.org/docs/sql-manual/sql-functions/scalar-functions/map-functions/)."""

from __future__ import annotations

from sqlglot import exp

from query.functions.registry import NOT_SUPPORTED_YET, Call, Function, FunctionError, fn, render

F = "map"


def _map(call: Call) -> exp.Expr:
    """map(k1, v1, k2, v2 …) as DuckDB's MAP(keys, values)."""
    if len(call.args) % 2:
        raise FunctionError(NOT_SUPPORTED_YET, "map: the arguments are key, value pairs")
    keys, values = call.args[0::2], call.args[1::2]
    return render("MAP({0}, {1})", [exp.Array(expressions=keys), exp.Array(expressions=values)])


FUNCTIONS: list[Function] = [
    fn("map", F, "map('k1', 1, 'k2', 2)", rewrite=_map),
    fn("map_keys", F, "map_keys(map('k1', 1, 'k2', 2))", "MAP_KEYS({0})"),
    fn("map_values", F, "map_values(map('k1', 1, 'k2', 2))", "MAP_VALUES({0})"),
    fn("map_size", F, "map_size(map('k1', 1, 'k2', 2))", "CARDINALITY({0})"),
    fn("map_contains_key", F, "map_contains_key(map('k1', 1), 'k1')", "LIST_CONTAINS(MAP_KEYS({0}), {1})"),
    fn("map_contains_value", F, "map_contains_value(map('k1', 1), 2)", "LIST_CONTAINS(MAP_VALUES({0}), {1})"),
]
