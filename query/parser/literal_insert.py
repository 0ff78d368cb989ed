"""A fast path for the bulk form of INSERT: `INSERT INTO t [(c1, …)] VALUES (<literal>, …), …`.

Batched VALUES lists are how producers without Stream Load load rows, and a 5,000-row statement
cost seconds in sqlglot's tokenizer and parser, and again in DuckDB's binder (about 0.2 ms a row for a
VALUES list). When every value is a plain literal — a number, a quoted string without backslashes,
NULL, TRUE or FALSE — one regular expression cuts the list into pieces (values and the `(`, `,`, `)`
between them, in C), list slices check that every tuple has the first one's shape, and each column's
values are checked and typed as Arrow arrays (vectorised: a 5,000-row statement has tens of thousands
of values). The rows go to the executor typed as DuckDB types the same literals (integers BIGINT,
decimals DECIMAL(p,s), exponents DOUBLE, strings VARCHAR, booleans BOOLEAN), so they convert into the
table's columns as the parser path's rows do. Anything else (an expression, a function, a comment, an
escape sequence, a label, a partition, a second statement, a column mixing strings with numbers)
returns None and the statement takes the parser.
"""

from __future__ import annotations

import re
from dataclasses import dataclass

import pyarrow as pa
import pyarrow.compute as pc

_IDENT = r"(?:`(?:[^`]|``)+`|[A-Za-z_][A-Za-z0-9_$]*)"
_HEAD = re.compile(
    rf"\s*INSERT\s+INTO\s+(?P<db>{_IDENT}\s*\.\s*)?(?P<table>{_IDENT})\s*"
    rf"(?:\((?P<columns>\s*{_IDENT}(?:\s*,\s*{_IDENT})*\s*)\)\s*)?VALUES\s*",
    re.IGNORECASE)
# Every value, and every other character but whitespace, as a piece of its own: a quoted string
# (quotes doubled inside, no backslash), a run of characters that may make a bare literal, or one
# single character (a parenthesis, a comma, a semicolon, a stray quote). Possessive quantifiers: a
# piece is never split two ways, so a list that fails at its end fails in one pass (a backtracking
# pattern cost minutes on one trailing comment after 100 rows, holding the GIL).
_PIECE = re.compile(r"""'(?:[^'\\]|'')*+'|"(?:[^"\\]|"")*+"|[^\s,();'"]++|\S""")
# A bare value must be one of these whole (checked by Arrow, vectorised).
_NUMBER = r"^-?(?:\d+(?:\.\d*)?|\.\d+)(?:[eE][-+]?\d+)?$"


@dataclass(frozen=True)
class LiteralRows:
    """The rows of a literal VALUES list as Arrow columns c0..cn, each with the DuckDB type its
    literals have (DECIMAL columns are carried as text and cast to that type)."""

    data: pa.Table
    duck_types: tuple[str, ...]

    def select_sql(self, view: str) -> str:
        """SELECT of the rows from `view` (where `data` is registered) as columns a0..an."""
        return "SELECT " + ", ".join(f"CAST(c{i} AS {t}) AS a{i}" for i, t in enumerate(self.duck_types)) \
            + f" FROM {view}"


@dataclass(frozen=True)
class LiteralInsert:
    db: str | None
    table: str
    columns: tuple[str, ...] | None
    rows: LiteralRows


def _name(text: str) -> str:
    text = text.strip()
    return text[1:-1].replace("``", "`") if text.startswith("`") else text


def parse_literal_insert(sql: str) -> LiteralInsert | None:
    """The statement as a literal INSERT, or None when it is anything else (see the module docstring)."""
    if "\\" in sql:
        return None
    head = _HEAD.match(sql)
    if head is None:
        return None
    cut = _tuples(_PIECE.findall(sql, head.end()))
    if cut is None:
        return None
    values, width, rows = cut
    data = _columns([tuple(values[1 + 2 * i::2 * width + 2]) for i in range(width)], rows)
    if data is None:
        return None
    columns = None
    if head.group("columns") is not None:
        columns = tuple(_name(c) for c in re.findall(_IDENT, head.group("columns")))
    db = _name(head.group("db").rstrip().rstrip(".")) if head.group("db") else None
    return LiteralInsert(db, _name(head.group("table")), columns, data)


def _tuples(pieces: list[str]) -> tuple[list[str], int, int] | None:
    """(pieces ending in a ",", tuple width, row count) when the pieces are tuples of one width, each
    `(` value `,` … value `)` and separated by `,`, with at most a `;` after the last; else None (widths
    that differ take the parser path, which answers the width error)."""
    if pieces and pieces[-1] == ";":
        pieces.pop()
    if len(pieces) < 3 or pieces[0] != "(" or ")" not in pieces:
        return None
    close = pieces.index(")")
    if close % 2:
        return None
    width, stride = close // 2, close + 2  # a tuple and the "," after it
    pieces.append(",")
    if len(pieces) % stride:
        return None
    rows = len(pieces) // stride
    # Every tuple's separators in their places, checked column by column with C-speed list slices.
    shape = [(0, "("), (close, ")"), (close + 1, ",")] + [(2 + 2 * i, ",") for i in range(width - 1)]
    if any(pieces[at::stride].count(piece) != rows for at, piece in shape):
        return None
    return pieces, width, rows


def _column(tokens: tuple[str, ...]) -> tuple[pa.Array, str] | None:
    """One column's literals as an Arrow array and the DuckDB type of the literals (vectorised: a
    5,000-row statement has tens of thousands of values)."""
    raw = pa.array(tokens, pa.string())
    upper = pc.utf8_upper(raw)
    null = pc.equal(upper, "NULL")
    single = pc.starts_with(raw, "'")
    quoted = pc.or_(single, pc.starts_with(raw, '"'))
    boolean = pc.or_(pc.equal(upper, "TRUE"), pc.equal(upper, "FALSE"))
    number = pc.invert(pc.or_(pc.or_(null, quoted), boolean))
    # A value slot holding anything but a literal — a name, `(`, a lone quote — is no literal list.
    if not pc.all(pc.or_(pc.invert(number), pc.match_substring_regex(raw, _NUMBER))).as_py() \
            or not pc.all(pc.or_(pc.invert(quoted), pc.greater(pc.utf8_length(raw), 1))).as_py():
        return None
    double = pc.and_(number, pc.match_substring(upper, "E"))
    decimal = pc.and_(number, pc.match_substring(raw, "."))
    has = {name: pc.any(mask).as_py() for name, mask in
           (("string", quoted), ("bool", boolean), ("number", number), ("double", double), ("decimal", decimal))}
    absent = pa.scalar(None, pa.string())
    if not has["number"] and not has["bool"]:
        inner = pc.utf8_slice_codeunits(raw, 1, -1)
        text = pc.if_else(single, pc.replace_substring(inner, "''", "'"), pc.replace_substring(inner, '""', '"'))
        return pc.if_else(null, absent, text), "VARCHAR"
    if has["string"] or (has["bool"] and has["number"]):
        return None  # strings or booleans mixed with numbers: the parser path's typing decides
    if has["bool"]:
        return pc.if_else(null, pa.scalar(None, pa.bool_()), pc.equal(upper, "TRUE")), "BOOLEAN"
    values = pc.if_else(null, absent, raw)
    if has["double"]:
        return pc.cast(values, pa.float64()), "DOUBLE"
    if has["decimal"]:
        decimal = _decimal_type(values)
        return (values, decimal) if decimal is not None else None
    try:
        return pc.cast(values, pa.int64()), "BIGINT"
    except pa.ArrowInvalid:
        return None  # beyond BIGINT: the parser path types it


def _columns(columns: list[tuple[str, ...]], rows: int) -> LiteralRows | None:
    arrays: list[pa.Array] = []
    types: list[str] = []
    for tokens in columns:
        typed = _column(tokens)
        if typed is None:
            return None
        arrays.append(typed[0])
        types.append(typed[1])
    data = pa.table(arrays, names=[f"c{i}" for i in range(len(arrays))])
    return LiteralRows(data, tuple(types)) if data.num_rows == rows else None


def _decimal_type(tokens: pa.Array) -> str | None:
    """DECIMAL(p,s) holding every value, as DuckDB types a decimal literal; None beyond 38 digits."""
    digits = pc.utf8_ltrim(pc.utf8_ltrim(tokens, "-"), "0")  # the integer part's leading zeros don't count
    length = pc.utf8_length(digits)
    point = pc.find_substring(digits, ".")
    has_point = pc.greater_equal(point, 0)
    whole = pc.max(pc.if_else(has_point, point, length)).as_py() or 0
    scale = pc.max(pc.if_else(has_point, pc.subtract(pc.subtract(length, point), 1), 0)).as_py() or 0
    precision = whole + scale
    return f"DECIMAL({max(precision, 1)},{scale})" if precision <= 38 else None
