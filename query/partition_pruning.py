"""Partition pruning: a snapshot limited to the partitions a query's WHERE clause can match.

Only where it is provably safe — a wrong answer is worse than a slow one. A partition is left out
when one top-level conjunct of the WHERE clause of the SELECT whose FROM/JOIN names the table compares
the table's one partition column with a constant (`=`, `<`, `<=`, `>`, `>=`, `IN (…)`, `BETWEEN`) in a
way no row of the partition can satisfy, judged from the partition's bound:

- RANGE `[lower, upper)`: `c = x` / `c IN (…)` need some x inside it, `c < x` needs lower < x, `c <= x`
  lower <= x, `c > x` / `c >= x` need x < upper (an unbounded side never excludes);
- LIST: some listed value must satisfy the comparison; the DEFAULT partition is always read (a later
  ADD PARTITION may take values it already holds).

Every comparison of a bound with the constant is evaluated by DuckDB as the query's own comparison is
(the bound cast to the column's type, the constant as the query writes it), so coercions agree; an
error or NULL keeps the partition. A conjunct is null-rejecting, so pruning under outer joins is safe
too. Not pruned: a column named without its table when the SELECT reads more than one source; tables
partitioned by several columns; Unique and Aggregate tables whose partition column is not a key (a key's
rows could then span partitions, and the merge must see them all); columns read in another type than
stored (DATETIME(0–3)); types whose order DuckDB and Doris might not share (FLOAT, DOUBLE, BOOLEAN …).
"""

from __future__ import annotations

from dataclasses import replace

import duckdb
from sqlglot import exp

from projections.snapshot import Snapshot
from schemas.model import Column, PartitionBound
from storage.rowset_sql import duck_type, quote_literal, read_type

_PRUNABLE_TYPES = ("TINYINT", "SMALLINT", "INT", "BIGINT", "LARGEINT", "DATE", "DATETIME", "DATETIMEV2",
                   "CHAR", "VARCHAR", "STRING", "DECIMAL", "DECIMALV3")
_COMPARISONS: dict[type[exp.Expr], str] = {exp.EQ: "=", exp.LT: "<", exp.LTE: "<=", exp.GT: ">", exp.GTE: ">="}
_FLIPPED = {"=": "=", "<": ">", "<=": ">=", ">": "<", ">=": "<="}
_UNBOUNDED = ("MAXVALUE", "MINVALUE")  # as bound words, never values: no bound on that side
Condition = tuple[str, list[str]]  # (operator, its constants as DuckDB SQL: one, or an IN list's)


def pruned(snapshot: Snapshot, node: exp.Table, cur: duckdb.DuckDBPyConnection) -> Snapshot:
    """`snapshot` without the partitions the WHERE clause around the table reference `node` cannot match."""
    column = _partition_column(snapshot)
    if column is None or len(snapshot.partitions) < 2:
        return snapshot
    conditions = _conditions(node, column.name)
    if not conditions:
        return snapshot
    bounds = {p.partition_id: snapshot.table.partitions[p.partition_id].partition.bound
              for p in snapshot.partitions if p.partition_id in snapshot.table.partitions}
    tests = {pid: _excluded_sql(snapshot.table.partition_kind, bound, duck_type(column.type), conditions)
             for pid, bound in bounds.items()}
    tests = {pid: sql for pid, sql in tests.items() if sql is not None}
    if not tests:
        return snapshot
    try:
        found = cur.execute(f"SELECT [{', '.join(f'coalesce(({sql}), false)' for sql in tests.values())}]").fetchall()
    except duckdb.Error:
        return snapshot  # the query itself will say what is wrong with its constants
    excluded = {pid for pid, out in zip(tests, found[0][0], strict=True) if out is True}
    if not excluded:
        return snapshot
    return replace(snapshot, partitions=tuple(p for p in snapshot.partitions if p.partition_id not in excluded))


def _partition_column(snapshot: Snapshot) -> Column | None:
    """The column (as the snapshot's schema names it) of a table partitioned by one column, if prunable."""
    table = snapshot.table
    if table.partition_kind not in ("RANGE", "LIST") or len(table.partition_columns) != 1:
        return None
    current = table.schema_now.column(table.partition_columns[0])
    if current is None:
        return None
    column = next((c for c in snapshot.schema.columns if c.unique_id == current.unique_id), None)
    if column is None or column.type.partition("(")[0].strip().upper() not in _PRUNABLE_TYPES:
        return None
    if read_type(column.type) != duck_type(column.type):
        return None
    if table.keys_model != "DUPLICATE" and not column.is_key:
        return None
    return column


def _conditions(node: exp.Table, column: str) -> list[Condition]:
    """(operator, constant) of each top-level WHERE conjunct comparing `column` of `node`'s table with a
    constant, in the SELECT whose FROM or JOIN is `node`."""
    holder = node.parent
    select = holder.parent if isinstance(holder, exp.From | exp.Join) else None
    if not isinstance(select, exp.Select):
        return []
    where = select.args.get("where")
    if not isinstance(where, exp.Where):
        return []
    alone = isinstance(holder, exp.From) and not select.args.get("joins")
    names = {(node.alias_or_name or "").lower()}

    def ours(expr: exp.Expr) -> bool:
        if not isinstance(expr, exp.Column) or expr.name.lower() != column.lower():
            return False
        return expr.table.lower() in names if expr.table else alone

    found: list[Condition] = []
    for conjunct in where.this.flatten() if isinstance(where.this, exp.And) else [where.this]:
        conjunct = conjunct.unnest()
        op = _COMPARISONS.get(type(conjunct))
        if op is not None:
            left, right = conjunct.this, conjunct.expression
            if ours(left) and (value := _constant(right)) is not None:
                found.append((op, [value]))
            elif ours(right) and (value := _constant(left)) is not None:
                found.append((_FLIPPED[op], [value]))
        elif isinstance(conjunct, exp.In) and ours(conjunct.this) and not conjunct.args.get("query"):
            values = [_constant(e) for e in conjunct.expressions]
            if values and all(v is not None for v in values):
                found.append(("IN", [v for v in values if v is not None]))
        elif isinstance(conjunct, exp.Between) and ours(conjunct.this):
            low, high = _constant(conjunct.args["low"]), _constant(conjunct.args["high"])
            if low is not None and high is not None:
                found.extend([(">=", [low]), ("<=", [high])])
    return found


def _constant(expr: exp.Expr) -> str | None:
    """DuckDB SQL of a literal (a number, a string, `-n`, a typed literal such as DATE '…'); None otherwise."""
    inner = expr.this if isinstance(expr, exp.Neg | exp.Cast) else expr
    if not isinstance(inner, exp.Literal):
        return None
    return expr.sql(dialect="duckdb")


def _excluded_sql(kind: str, bound: PartitionBound, column_type: str, conditions: list[Condition]) -> str | None:
    """DuckDB SQL true when no row of a partition with `bound` can satisfy every condition (None: it may)."""
    if bound.is_default:
        return None
    if kind == "LIST":
        values = [v[0] for v in bound.values if len(v) == 1]
        if len(values) != len(bound.values):
            return None
        typed = [f"CAST({'NULL' if v is None else quote_literal(v)} AS {column_type})" for v in values]
        # Excluded when some condition holds for none of the listed values.
        return " OR ".join(f"NOT coalesce({' OR '.join(_holds(t, op, values) for t in typed) or 'false'}, false)"
                           for op, values in conditions)
    if (bound.lower is not None and len(bound.lower) != 1) or (bound.upper is not None and len(bound.upper) != 1):
        return None
    lower, upper = (None if side is None or side[0] in _UNBOUNDED
                    else f"CAST({quote_literal(side[0])} AS {column_type})" for side in (bound.lower, bound.upper))
    tests = [t for op, values in conditions if (t := _range_excludes(lower, upper, op, values)) is not None]
    return " OR ".join(f"coalesce({t}, false)" for t in tests) if tests else None


def _holds(value: str, op: str, constants: list[str]) -> str:
    if op == "IN":
        return f"({value} IN ({', '.join(constants)}))"
    return f"({value} {op} ({constants[0]}))"


def _range_excludes(lower: str | None, upper: str | None, op: str, constants: list[str]) -> str | None:
    """True when no value v with lower <= v < upper satisfies `v op constants`."""
    if op in ("=", "IN"):
        outside = [_outside(lower, upper, constant) for constant in constants]
        if any(test is None for test in outside):
            return None
        return "(" + " AND ".join(f"coalesce({test}, false)" for test in outside if test is not None) + ")"
    if op in ("<", "<=") and lower is not None:
        return f"({lower} {'>=' if op == '<' else '>'} ({constants[0]}))"
    if op in (">", ">=") and upper is not None:
        return f"({upper} <= ({constants[0]}))"
    return None


def _outside(lower: str | None, upper: str | None, constant: str) -> str | None:
    """True when `constant` is not in [lower, upper)."""
    tests = ([f"{lower} > ({constant})"] if lower is not None else []) + \
        ([f"{upper} <= ({constant})"] if upper is not None else [])
    return "(" + " OR ".join(tests) + ")" if tests else None
