"""Result column labels as MySQL and Doris give them: a column's alias, else a plain column's name,
else the expression's text as the user wrote it (`count(*)`, `length(x)`, `NOW(3)`).

DuckDB labels a column with the text of the SQL it ran, which is the Doris → DuckDB rewrite
(`count_star()`, a `CASE …` for `length(x)`, a literal for `DATABASE()`); so the labels are taken
from the parsed statement (query.parser.dialect keeps each SELECT item's source text), position by
position, and DuckDB's names are kept only where a `*` makes the positions unknowable.
"""

from __future__ import annotations

from sqlglot import exp

from query.parser.dialect import SOURCE_TEXT


def _is_star(item: exp.Expr) -> bool:
    return isinstance(item, exp.Star) or (isinstance(item, exp.Column) and isinstance(item.this, exp.Star))


def label(item: exp.Expr) -> str | None:
    """The label of one SELECT item; None for a `*`."""
    if _is_star(item):
        return None
    if isinstance(item, exp.Alias):
        return item.alias
    if isinstance(item, exp.Column):
        return item.name
    if isinstance(item, exp.Literal) and item.is_string:
        return str(item.this)  # MySQL labels 'abc' as abc
    if isinstance(item, exp.Null | exp.Boolean):
        return item.sql(dialect="mysql")  # NULL, TRUE, FALSE in capitals, however written
    text = item.meta.get(SOURCE_TEXT)
    return str(text) if text else item.sql(dialect="mysql")


def column_labels(query: exp.Expr, names: list[str]) -> list[str]:
    """The labels of `query`'s result columns, whose executor names are `names`. A UNION takes its
    first SELECT's labels; the items before the first `*` and after the last one are matched from
    either end (a `*` expands to as many columns as its tables have)."""
    items = query.selects if isinstance(query, exp.Query) else []
    labels = list(names)
    stars = [i for i, item in enumerate(items) if _is_star(item)]
    if not stars and len(items) != len(names):
        return labels
    head = items[:stars[0]] if stars else items
    tail = items[stars[-1] + 1:] if stars else []
    for i, item in enumerate(head):
        labels[i] = label(item) or labels[i]
    for offset, item in enumerate(reversed(tail), start=1):
        labels[len(labels) - offset] = label(item) or labels[len(labels) - offset]
    return labels
