"""A load's column mapping (Doris' COLUMNS and WHERE of a routine load, the `columns`, `where` and
`delete` headers of a Stream Load) as DuckDB SQL over the source fields, checked against the table."""

from __future__ import annotations

import json
from datetime import UTC

from sqlglot import exp

from projections.state import TableState
from query.context import SqlFailure
from query.functions import to_duckdb
from query.parser import statements as st
from schemas.errors import ErrorCode
from schemas.model import LoadColumn

_ARITHMETIC = (exp.Add, exp.Sub, exp.Mul, exp.Div, exp.Mod, exp.IntDiv, exp.Neg)


def load_expression_sql(expr: exp.Expr, names: set[str], typed: set[str], what: str) -> str:
    """`expr` as DuckDB SQL over the quoted source names it may use. A source field the table has
    no column for is text; in arithmetic it is read as a number, as Doris casts it implicitly."""
    if expr.find(exp.Query) is not None:
        raise SqlFailure(ErrorCode.NOT_SUPPORTED_YET, f"subqueries are not supported in {what}")
    expr = expr.copy()
    lowered = {n.lower(): n for n in names}
    for column in list(expr.find_all(exp.Column)):
        found = lowered.get(column.name.lower())
        if found is None:
            raise SqlFailure(ErrorCode.BAD_FIELD_ERROR, f"Unknown column '{column.name}' in {what}")
        ref: exp.Expr = exp.column(found, quoted=True)
        if found.lower() not in typed and isinstance(column.parent, _ARITHMETIC):
            ref = exp.TryCast(this=ref, to=exp.DataType.build("DOUBLE"))
        column.replace(ref)
    # A load has no session: its times are UTC, the zone Strata's loads run in.
    return to_duckdb(expr, UTC).sql(dialect="duckdb")


def mapping(columns: tuple[st.LoadColumn, ...], where: exp.Expr | None,
            table: TableState) -> tuple[tuple[LoadColumn, ...], str | None, str | None]:
    """The mapping's columns (each derived one with its DuckDB SQL), and WHERE as written and as DuckDB SQL."""
    plain = {c.name for c in columns if c.expr is None}
    typed = {c.name.lower() for c in table.schema_now.columns}
    mapped = tuple(
        LoadColumn(name=c.name) if c.expr is None else
        LoadColumn(name=c.name, expr=c.expr.sql(dialect="mysql"),
                   expr_sql=load_expression_sql(c.expr, plain, typed, f"the COLUMNS expression of '{c.name}'"))
        for c in columns)
    if where is None:
        return mapped, None, None
    return mapped, where.sql(dialect="mysql"), load_expression_sql(where, source_names(columns, table), typed, "WHERE")


def source_names(columns: tuple[st.LoadColumn, ...], table: TableState) -> set[str]:
    """The names a WHERE (or a Stream Load's `delete`) condition may use."""
    return {c.name for c in columns} or {c.name for c in table.schema_now.columns}


def parse_jsonpaths(text: str | None) -> tuple[str, ...]:
    """Doris' `jsonpaths` (a JSON array of paths such as ["$.id", "$.name"]); ValueError names the problem."""
    if text is None:
        return ()
    try:
        paths = json.loads(text)
    except json.JSONDecodeError:
        paths = None
    if not isinstance(paths, list) or not paths or not all(isinstance(p, str) and p.startswith("$") for p in paths):
        raise ValueError(f"jsonpaths must be a JSON array of paths such as [\"$.id\", \"$.name\"], not '{text}'")
    return tuple(paths)
