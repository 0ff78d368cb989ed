"""Aggregate functions (https://doris.apache.org/docs/sql-manual/sql-functions/aggregate-functions/).

GROUP_CONCAT's default separator is ', ' in Doris (MySQL's is ','); COLLECT_LIST leaves NULLs out,
ARRAY_AGG keeps them; PERCENTILE interpolates linearly (DuckDB's QUANTILE_CONT), and
PERCENTILE_APPROX is answered exactly, which is within any approximation."""

from __future__ import annotations

from sqlglot import exp

from query.functions.registry import Call, Function, fn

F = "aggregate"


def _group_concat(call: Call) -> exp.Expr:
    """The parser reads `GROUP_CONCAT([DISTINCT] x [, sep] [ORDER BY …] [SEPARATOR sep])` into one node."""
    node = call.node
    value, order = node.this, None
    if isinstance(value, exp.Order):
        value, order = value.this, value.expressions
    separator = node.args.get("separator") or exp.Literal.string(", ")
    text = exp.cast(value.expressions[0] if isinstance(value, exp.Distinct) else value, exp.DataType.build("VARCHAR"))
    first: exp.Expr = exp.Distinct(expressions=[text]) if isinstance(value, exp.Distinct) else text
    last: exp.Expr = exp.Order(this=separator, expressions=order) if order else separator
    return exp.Anonymous(this="STRING_AGG", expressions=[first, last])


FUNCTIONS: list[Function] = [
    fn("count", F, "count(1)"),
    fn("sum", F, "sum(1)"),
    fn("avg", F, "avg(1)"),
    fn("min", F, "min(1)"),
    fn("max", F, "max(1)"),
    fn("group_concat", F, "group_concat('a')", rewrite=_group_concat, positional=False),
    fn("collect_list", F, "collect_list(1)", "LIST({0}) FILTER (WHERE {0} IS NOT NULL)"),
    fn("group_array", F, "group_array(1)", "LIST({0}) FILTER (WHERE {0} IS NOT NULL)"),
    fn("collect_set", F, "collect_set(1)", "LIST(DISTINCT {0}) FILTER (WHERE {0} IS NOT NULL)"),
    fn("group_uniq_array", F, "group_uniq_array(1)", "LIST(DISTINCT {0}) FILTER (WHERE {0} IS NOT NULL)"),
    fn("array_agg", F, "array_agg(1)", "LIST({0})"),
    fn("percentile", F, "percentile(10, 0.5)", "QUANTILE_CONT(CAST({0} AS DOUBLE), {1})"),
    fn("percentile_approx", F, "percentile_approx(10, 0.5)", a2="QUANTILE_CONT(CAST({0} AS DOUBLE), {1})",
       a3="QUANTILE_CONT(CAST({0} AS DOUBLE), {1})"),
    fn("median", F, "median(10)", "QUANTILE_CONT(CAST({0} AS DOUBLE), 0.5)"),
    fn("any_value", F, "any_value(1)", "ANY_VALUE({0})"),
    fn("stddev", F, "stddev(1)", "STDDEV_POP({0})"),
    fn("std", F, "std(1)", "STDDEV_POP({0})"),
    fn("stddev_pop", F, "stddev_pop(1)", "STDDEV_POP({0})"),
    fn("stddev_samp", F, "stddev_samp(1)", "STDDEV_SAMP({0})"),
    fn("variance", F, "variance(1)", "VAR_POP({0})"),
    fn("var_pop", F, "var_pop(1)", "VAR_POP({0})"),
    fn("variance_pop", F, "variance_pop(1)", "VAR_POP({0})"),
    fn("var_samp", F, "var_samp(1)", "VAR_SAMP({0})"),
    fn("variance_samp", F, "variance_samp(1)", "VAR_SAMP({0})"),
    fn("approx_count_distinct", F, "approx_count_distinct(1)", "APPROX_COUNT_DISTINCT({0})"),
    fn("ndv", F, "ndv(1)", "APPROX_COUNT_DISTINCT({0})"),
    fn("max_by", F, "max_by(1, 2)"),
    fn("min_by", F, "min_by(1, 2)"),
    fn("bool_and", F, "bool_and(1 > 0)", "BOOL_AND({0})"),
    fn("bool_or", F, "bool_or(1 > 0)", "BOOL_OR({0})"),
]
