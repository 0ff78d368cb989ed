"""MySQL rules of a SELECT that DuckDB does not share, applied to the parsed query before it runs.

* ``HAVING`` without ``GROUP BY`` in a SELECT that aggregates nothing filters rows by the select
  list, where a name is the select item's alias first (Connector/J's ``getTables`` sends
  ``… CASE … END AS TABLE_TYPE … HAVING TABLE_TYPE IN (…)``); DuckDB would make it an aggregate
  query and fail. It becomes a WHERE over the aliased expressions.
* ``CAST(x AS DATETIME(p))`` is a DATETIME of p fraction digits, rounded (Doris 2.1, MySQL); plain
  ``DATETIME`` is ``DATETIME(0)``. DuckDB's TIMESTAMP(p) keeps 0, 3 or 6 digits (TIMESTAMP_S, _MS,
  microseconds) and rounds to those; for the others the value is rounded to p digits first, as a
  DATETIME(p) column stores it (storage.rowset_sql.rounded_sql).
* ``x COLLATE <MySQL collation>`` (Connector/J 9's ``IS_NULLABLE COLLATE utf8mb4_0900_bin = 'NO'``):
  a binary or case-sensitive collation compares as DuckDB does anyway, a case-insensitive one is
  DuckDB's NOCASE; any other is refused.
"""

from __future__ import annotations

import sqlglot
from sqlglot import exp

from query.context import SqlFailure
from query.functions import aggregates_in
from schemas.errors import ErrorCode
from storage.rowset_sql import rounded_sql


def rewrite(query: exp.Expr) -> exp.Expr:
    """A copy of `query` with MySQL's meaning in DuckDB's terms."""
    query = query.copy()
    for select in list(query.find_all(exp.Select)):
        _having_as_filter(select)
    for cast in list(query.find_all(exp.Cast)):
        _datetime_cast(cast)
    for collate in list(query.find_all(exp.Collate)):
        _collation(collate)
    return query


def _datetime_cast(cast: exp.Cast) -> None:
    kind = cast.to
    if not kind.is_type(exp.DataType.Type.DATETIME):
        return
    if not kind.expressions:
        cast.set("to", exp.DataType.build("DATETIME(0)", dialect="mysql"))
        return
    precision = int(kind.expressions[0].name)
    if precision in (0, 3) or precision >= 6:
        return
    # Rounded to p digits as a microsecond TIMESTAMP, then cast to DuckDB's TIMESTAMP(p) for its type.
    placeholder = "__strata_value"
    rounded = sqlglot.parse_one(rounded_sql(placeholder, f"DATETIME({precision})"), read="duckdb")
    value = exp.cast(cast.this.copy(), exp.DataType.build("TIMESTAMP"))
    rounded = rounded.transform(lambda n: value.copy() if isinstance(n, exp.Column) and n.name == placeholder
                                else n)
    cast.set("this", rounded)


def _collation(collate: exp.Collate) -> None:
    name = collate.expression.name.lower()
    if name == "binary" or name.endswith(("_bin", "_cs")):
        collate.replace(collate.this)  # byte-wise: DuckDB's own comparison
    elif name.endswith("_ci"):
        collate.set("expression", exp.var("NOCASE"))
    else:
        raise SqlFailure(ErrorCode.UNKNOWN_COLLATION, f"Unknown collation: '{collate.expression.name}'")


def _aggregates(select: exp.Select) -> bool:
    return any(aggregates_in(item) for item in select.expressions)


def _having_as_filter(select: exp.Select) -> None:
    having = select.args.get("having")
    if having is None or select.args.get("group") is not None or _aggregates(select) \
            or aggregates_in(having):
        return
    aliased = {item.alias.lower(): item.this for item in select.expressions if isinstance(item, exp.Alias)}

    def by_alias(node: exp.Expr) -> exp.Expr:
        if isinstance(node, exp.Column) and not node.table and node.name.lower() in aliased:
            return exp.paren(aliased[node.name.lower()].copy(), copy=False)
        return node

    condition = having.this.transform(by_alias)
    select.set("having", None)
    select.where(condition, copy=False)
