"""Conditional functions (https://doris.apache.org/docs/sql-manual/sql-functions/scalar-functions/conditional-functions/)."""

from __future__ import annotations

from query.functions.registry import Function, fn

F = "conditional"

FUNCTIONS: list[Function] = [
    fn("if", F, "if(1 > 0, 'a', 'b')"),
    fn("ifnull", F, "ifnull(NULL, 2)", "COALESCE({0}, {1})"),
    fn("nvl", F, "nvl(NULL, 2)", "COALESCE({0}, {1})"),
    fn("coalesce", F, "coalesce(NULL, NULL, 3)", "COALESCE({*})", arities=None),
    fn("nullif", F, "nullif(1, 1)", "NULLIF({0}, {1})"),
    fn("case", F, "case when 1 > 0 then 'a' else 'b' end"),
]
