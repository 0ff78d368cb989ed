"""Table references of a query, with their time-travel clause or incremental read."""

from __future__ import annotations

import math
from dataclasses import dataclass

from sqlglot import exp

from query.parser.dialect import HISTORY_KIND, INCR_KIND, TAG_KIND, TIME_KIND, VERSION_KIND
from query.parser.statements import (
    AsOf,
    AsOfTag,
    AsOfTime,
    AsOfVersion,
    ChangeRange,
    HistoryRead,
    IncrementalRead,
)


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
    incr: IncrementalRead | None = None
    history: HistoryRead | None = None

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
    if version.name == TIME_KIND:
        return AsOfTime(literal.name)
    if version.name == TAG_KIND:
        return AsOfTag(literal.name)
    return None


def incremental(table: exp.Table) -> IncrementalRead | None:
    version = table.args.get("version")
    if not isinstance(version, exp.Version) or version.name != INCR_KIND:
        return None
    pairs = version.expression.expressions if isinstance(version.expression, exp.Tuple) else []
    return IncrementalRead(tuple((p.this.name, p.expression.name) for p in pairs))


def history(table: exp.Table) -> HistoryRead | None:
    version = table.args.get("version")
    if not isinstance(version, exp.Version) or version.name != HISTORY_KIND:
        return None
    bounds = version.expression.expressions if isinstance(version.expression, exp.Tuple) else []
    return HistoryRead(version.text("kind"), *(b.name for b in bounds))


class IncrementalArgumentError(ValueError):
    """An ``@incr`` pair the engine cannot use; the message names it."""


# Doris' own spellings for Paimon/Iceberg incremental reads are accepted for commit numbers too.
_START_KEYS = {"starttimestamp": "time", "startversion": "version", "startsnapshotid": "version", "starttag": "tag"}
_END_KEYS = {"endtimestamp": "time", "endversion": "version", "endsnapshotid": "version", "endtag": "tag"}
_KNOWN = "'startTimestamp', 'endTimestamp', 'startVersion', 'endVersion', 'startTag', 'endTag'"


def _bound(key: str, kind: str, value: str) -> AsOf:
    if kind == "tag":
        if not value.strip():
            raise IncrementalArgumentError(f"@incr '{key}' is empty; expected a tag's name")
        return AsOfTag(value)
    if kind == "time":
        if not value.strip():
            raise IncrementalArgumentError(f"@incr '{key}' is empty; expected 'YYYY-MM-DD HH:MM:SS[.ffffff]'")
        return AsOfTime(value)
    text = value.strip()
    if not text.isdigit():
        raise IncrementalArgumentError(f"@incr '{key}' must be a commit number (0 or more), not '{value}'")
    return AsOfVersion(int(text))


def change_range(read: IncrementalRead) -> ChangeRange:
    """The commits ``read`` names: a start (exclusive) is required, the end (inclusive) defaults to
    the latest commit. Keys are matched case-insensitively; unknown or repeated keys are refused."""
    start: AsOf | None = None
    end: AsOf | None = None
    seen: set[str] = set()
    for key, value in read.params:
        lowered = key.lower()
        if lowered in seen:
            raise IncrementalArgumentError(f"@incr names '{key}' twice")
        if lowered in _START_KEYS:
            if start is not None:
                raise IncrementalArgumentError("@incr takes one start: 'startTimestamp', 'startVersion' or 'startTag'")
            start = _bound(key, _START_KEYS[lowered], value)
        elif lowered in _END_KEYS:
            if end is not None:
                raise IncrementalArgumentError("@incr takes one end: 'endTimestamp', 'endVersion' or 'endTag'")
            end = _bound(key, _END_KEYS[lowered], value)
        else:
            raise IncrementalArgumentError(f"unknown @incr parameter '{key}'; expected {_KNOWN}")
        seen.add(lowered)
    if start is None:
        raise IncrementalArgumentError("@incr needs a start: 'startTimestamp', 'startVersion' or 'startTag'")
    if isinstance(start, AsOfVersion) and isinstance(end, AsOfVersion) and end.n < start.n:
        raise IncrementalArgumentError(f"@incr 'endVersion' {end.n} is before 'startVersion' {start.n}")
    return ChangeRange(start, end)


def _cte_names_in_scope(node: exp.Expr) -> set[str]:
    """Lower-cased names of the CTEs visible at ``node``, scoped as DuckDB (and SQL) does.

    A CTE is visible in the body of its WITH and in the CTEs defined after it, but not in its own
    body unless the WITH is RECURSIVE: there, DuckDB binds the name to a real table or to one of its
    system views (``WITH duckdb_views AS (SELECT * FROM duckdb_views)``). Treating such a name as a
    CTE would let it reach DuckDB unbound and unchecked, so the scoping here must be exact.
    """
    names: set[str] = set()
    child: exp.Expr = node
    current = node.parent
    while current is not None:
        if isinstance(current, exp.With) and isinstance(child, exp.CTE):
            position = next(i for i, cte in enumerate(current.expressions) if cte is child)
            visible = current.expressions[: position + 1] if current.args.get("recursive") else \
                current.expressions[:position]
            names.update(cte.alias_or_name.lower() for cte in visible)
        else:
            with_ = current.args.get("with_")
            if isinstance(with_, exp.With) and child is not with_:
                names.update(cte.alias_or_name.lower() for cte in with_.expressions)
        child, current = current, current.parent
    return names


def is_dual(table: exp.Table) -> bool:
    """MySQL's ``FROM DUAL``: no table at all (DUAL is a reserved word, never a table's name)."""
    return (not table.db and isinstance(table.this, exp.Identifier) and not table.this.quoted
            and table.name.upper() == "DUAL" and not table.args.get("version"))


def table_refs(expr: exp.Expr) -> list[TableRef]:
    """Base tables read by ``expr`` in source order, including inside subqueries and CTE bodies.

    References to CTE names are not base tables and are left out, and so is ``DUAL``.
    """
    refs: list[TableRef] = []
    for table in expr.find_all(exp.Table, bfs=False):
        if not table.name or not isinstance(table.this, exp.Identifier) or is_dual(table):
            continue  # table functions, UNNEST and friends; FROM DUAL
        if not table.db and table.name.lower() in _cte_names_in_scope(table):
            continue
        refs.append(TableRef(table, table.db or None, table.name, as_of(table), incremental(table), history(table)))
    # The tree walk visits a WITH clause after the main FROM; callers expect reading order. Nodes
    # built programmatically have no position and keep walk order (the sort is stable).
    refs.sort(key=_source_offset)
    return refs


def _source_offset(ref: TableRef) -> float:
    start = ref.node.this.meta.get("start")
    return float(start) if isinstance(start, int) else math.inf
