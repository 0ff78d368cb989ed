"""The one filter of every SHOW: MySQL's ``[LIKE 'pattern' | WHERE condition]``.

LIKE matches the name column (`Field`, `Variable_name`, `Tables_in_db`, `Name` …), case-insensitively
as MySQL does for names. WHERE is any condition over the SHOW's own columns, by their labels
(``SHOW FULL TABLES WHERE Table_type = 'BASE TABLE'``, ``SHOW VARIABLES WHERE Variable_name IN (…)``);
the sandboxed DuckDB evaluates it over the SHOW's rows, so it has the SELECT's functions and the
statement check (query.sandbox) already vetted it.
"""

from __future__ import annotations

import itertools
import re
from datetime import UTC
from typing import Any

import duckdb
import pyarrow as pa
from sqlglot import exp

from query.context import Context, Rows, SqlFailure
from query.functions import to_duckdb
from query.reads import duck_error
from schemas.errors import ErrorCode

_ROW = "__strata_row"
_names = itertools.count(1)


def like_pattern(pattern: str) -> re.Pattern[str]:
    """SQL LIKE as a regular expression: `%` any run, `_` one character, `\\` escapes either."""
    out = []
    chars = iter(pattern)
    for ch in chars:
        if ch == "\\":
            out.append(re.escape(next(chars, "\\")))
        elif ch == "%":
            out.append(".*")
        elif ch == "_":
            out.append(".")
        else:
            out.append(re.escape(ch))
    return re.compile("".join(out), re.IGNORECASE | re.DOTALL)


def like(pattern: str | None, value: Any) -> bool:
    return pattern is None or like_pattern(pattern).fullmatch(str(value)) is not None


def apply(ctx: Context, result: Rows, like_text: str | None, where: exp.Expr | None, like_column: int = 0) -> Rows:
    """`result` with only the rows the SHOW's LIKE (on the name, `like_column`) or WHERE keeps, in
    their order."""
    kept = result.rows
    if like_text is not None:
        matcher = like_pattern(like_text)
        kept = [r for r in kept if matcher.fullmatch(str(r[like_column])) is not None]
    if where is not None:  # even over no rows: a WHERE naming no column of the SHOW is an error
        kept = _where(ctx, result.columns, kept, where)
    return Rows(result.columns, kept, result.types)


def _column(values: list[Any]) -> pa.Array:
    try:
        return pa.array(values)
    except (pa.ArrowInvalid, pa.ArrowTypeError):  # mixed kinds (a Value column): compared as text
        return pa.array([None if v is None else str(v) for v in values], pa.string())


def _where(ctx: Context, columns: list[str], rows: list[tuple[Any, ...]], where: exp.Expr) -> list[tuple[Any, ...]]:
    if where.find(exp.Subquery, exp.Select) is not None:
        raise SqlFailure(ErrorCode.NOT_SUPPORTED_YET, "subqueries in SHOW … WHERE are not supported")
    data = pa.table({**{name: _column([r[i] for r in rows]) for i, name in enumerate(columns)},
                     _ROW: pa.array(range(len(rows)), pa.int64())})
    view = f"__strata_show_{next(_names)}"
    cur = ctx.cursor()
    try:
        cur.register(view, data)
        condition = to_duckdb(where.copy(), UTC).sql(dialect="duckdb")  # no session: its zone is UTC
        found = cur.execute(f"SELECT {_ROW} FROM {view} WHERE {condition}").fetchall()
    except duckdb.Error as exc:
        raise SqlFailure(*duck_error(exc)) from None
    finally:
        cur.close()
    keep = {n for (n,) in found}
    return [r for i, r in enumerate(rows) if i in keep]
