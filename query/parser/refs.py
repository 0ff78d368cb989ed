"""Table references of a query, with their time-travel clause."""

from __future__ import annotations

import math
from dataclasses import dataclass

from sqlglot import exp

from query.parser.dialect import VERSION_KIND
from query.parser.statements import AsOf, AsOfTime, AsOfVersion


@dataclass(frozen=True, eq=False)
class TableRef:
    """One occurrence of a table in a query.

    Equality is identity of ``node``: the same table read at two points in time (or twice at the
    same time) yields distinct refs, and a planner can substitute scans node by node.
    """

    node: exp.Table
    db: str | None
    name: str
    as_of: AsOf | None

    def __eq__(self, other: object) -> bool:
        return isinstance(other, TableRef) and other.node is self.node

    def __hash__(self) -> int:
        return id(self.node)


def as_of(table: exp.Table) -> AsOf | None:
    version = table.args.get("version")
    if not isinstance(version, exp.Version):
        return None
    literal = version.expression
    if version.name == VERSION_KIND:
        return AsOfVersion(int(literal.name))
    return AsOfTime(literal.name)


def _cte_names_in_scope(node: exp.Expr) -> set[str]:
    """Names of CTEs visible at ``node``: those of every enclosing WITH."""
    names: set[str] = set()
    current: exp.Expr | None = node
    while current is not None:
        with_ = current.args.get("with_") if isinstance(current, exp.Query) else None
        if isinstance(with_, exp.With):
            names.update(cte.alias_or_name for cte in with_.expressions)
        current = current.parent
    return names


def table_refs(expr: exp.Expr) -> list[TableRef]:
    """Base tables read by ``expr`` in source order, including inside subqueries and CTE bodies.

    References to CTE names are not base tables and are left out.
    """
    refs: list[TableRef] = []
    for table in expr.find_all(exp.Table, bfs=False):
        if not table.name or not isinstance(table.this, exp.Identifier):
            continue  # table functions, UNNEST and friends
        if not table.db and table.name in _cte_names_in_scope(table):
            continue
        refs.append(TableRef(table, table.db or None, table.name, as_of(table)))
    # The tree walk visits a WITH clause after the main FROM; callers expect reading order. Nodes
    # built programmatically have no position and keep walk order (the sort is stable).
    refs.sort(key=_source_offset)
    return refs


def _source_offset(ref: TableRef) -> float:
    start = ref.node.this.meta.get("start")
    return float(start) if isinstance(start, int) else math.inf
