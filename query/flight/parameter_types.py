"""The Arrow type of each `?` of a prepared statement, announced in its `parameter_schema`.

The Flight SQL JDBC driver builds the parameter batch from that schema: `setLong` needs an integer
field, `setString` a string one, and a statement announced without parameters takes none. So each
parameter gets the type of the column it stands for — the column it is compared with (`k = ?`,
`? < k`, `k IN (?, …)`, `k BETWEEN ? AND ?`, in a SELECT's WHERE, HAVING or JOIN … ON, an UPDATE's or
a DELETE's WHERE), the column an UPDATE assigns it to, or the column an INSERT's VALUES row fills with
it — read as a query of those columns returns them (the same executor types as any result). A
parameter that stands for no column (`SELECT ? + 1`) is a string: the binder casts a string literal
wherever the statement needs another type.

Each `?` is found in the parsed statement as a marker string bound in its place (`MARKER`).
"""

from __future__ import annotations

import logging
from collections.abc import Callable, Sequence

import pyarrow as pa
from sqlglot import exp

from query.identifiers import quoted, quoted_table
from query.parser import statements as st
from query.parser.dialect import DIALECT

log = logging.getLogger(__name__)

# Bound in place of parameter i to find it in the parsed statement; no statement holds this text itself.
_MARKER_PREFIX = "\x01strata-parameter-"
MARKER = _MARKER_PREFIX + "{}\x01"
UNKNOWN = pa.string()
_COMPARISONS = (exp.EQ, exp.NEQ, exp.GT, exp.GTE, exp.LT, exp.LTE, exp.NullSafeEQ, exp.Like, exp.ILike)

Describe = Callable[[str], pa.Schema]  # a query's result schema, run as the caller through the engine


def markers(count: int) -> list[str]:
    return [MARKER.format(i) for i in range(count)]


def parameter_schema(statement: st.Statement, count: int, row_slots: Sequence[int | None],
                     describe: Describe) -> pa.Schema:
    """`count` fields, `parameter_1` …, typed from the columns the parameters stand for in `statement`
    (parsed with `markers(count)` bound); a string where none is found or the columns cannot be read."""
    try:
        types = _types(statement, count, row_slots, describe)
    except Exception:  # noqa: BLE001 - typing parameters is a courtesy: the statement reports its own errors
        log.debug("parameter types of a prepared statement not found", exc_info=True)
        types = [UNKNOWN] * count
    return pa.schema([pa.field(f"parameter_{i + 1}", _as_announced(kind)) for i, kind in enumerate(types)])


def _as_announced(kind: pa.DataType) -> pa.DataType:
    """A timestamp parameter is announced in milliseconds: the Flight SQL JDBC driver (18.x) writes a
    Timestamp's epoch milliseconds into the parameter's vector whatever its unit, so a DATETIME(6)
    parameter announced in microseconds came back a thousand times too early. It cannot send the
    microseconds anyway; the binder reads whatever unit a batch really has."""
    return pa.timestamp("ms", kind.tz) if pa.types.is_timestamp(kind) else kind


def _types(statement: st.Statement, count: int, row_slots: Sequence[int | None],
           describe: Describe) -> list[pa.DataType]:
    if isinstance(statement, st.Insert):
        # The row's slots fill the named columns, or the table's columns in order.
        table = quoted_table(statement.table.name, statement.table.db)
        names = ", ".join(quoted(n) for n in statement.columns) if statement.columns else "*"
        filled = describe(f"SELECT {names} FROM {table} LIMIT 0").types
        slots = list(row_slots) + [None] * (count - len(row_slots))
        return [filled[slot] if slot is not None and slot < len(filled) else UNKNOWN for slot in slots]
    # The SELECT whose FROM (and joins) the columns are read from.
    frame: exp.Select | None = None
    columns: list[exp.Expression | None] = [None] * count
    if isinstance(statement, st.Query) and isinstance(statement.expr, exp.Select):
        frame, columns = statement.expr, _compared(statement.expr, count)
    elif isinstance(statement, (st.Update, st.Delete)):
        frame = exp.select("*").from_(quoted_table(statement.table.name, statement.table.db), dialect=DIALECT)
        if statement.where is not None:
            columns = _compared(statement.where, count)
        for name, value in statement.assignments if isinstance(statement, st.Update) else ():
            index = _marker_index(value)
            if index is not None:
                columns[index] = exp.column(name)
    named = [c for c in columns if c is not None]
    if frame is None or not named:
        return [UNKNOWN] * count
    found = describe(_select_of(frame, [c.copy() for c in named])).types
    typed = iter(found)
    return [UNKNOWN if c is None else next(typed) for c in columns]


def _compared(tree: exp.Expr, count: int) -> list[exp.Expression | None]:
    """The column each parameter is compared with in `tree`, where one is."""
    columns: list[exp.Expression | None] = [None] * count
    for literal in tree.find_all(exp.Literal):
        index = _marker_index(literal)
        if index is None:
            continue
        parent = literal.parent
        if isinstance(parent, exp.Paren):
            parent = parent.parent
        column: exp.Expression | None = None
        if isinstance(parent, _COMPARISONS):
            other = parent.expression if parent.this is literal else parent.this
            column = other if isinstance(other, exp.Column) else None
        elif isinstance(parent, (exp.In, exp.Between)) and isinstance(parent.this, exp.Column) \
                and parent.this is not literal:
            column = parent.this
        columns[index] = column
    return columns


def _marker_index(node: exp.Expr) -> int | None:
    if isinstance(node, exp.Literal) and node.is_string and node.this.startswith(_MARKER_PREFIX):
        return int(node.this.removeprefix(_MARKER_PREFIX).rstrip("\x01"))
    return None


def _select_of(select: exp.Select, cols: list[exp.Expression]) -> str:
    """The columns read from the SELECT's own FROM and joins, no row (LIMIT 0)."""
    query = select.copy()
    query.set("expressions", cols)
    for clause in ("where", "group", "having", "order", "qualify", "limit", "offset", "distinct"):
        query.set(clause, None)
    return query.limit(0).sql(dialect=DIALECT)

