"""A fast path for the bulk form of INSERT: `INSERT INTO t [(c1, …)] VALUES (<literal>, …), …`.

Batched VALUES lists are how producers without Stream Load load rows, and a 5,000-row statement
cost seconds in sqlglot's tokenizer and parser, and again in DuckDB's binder (about 0.2 ms a row for a
VALUES list). When every value is a plain literal — a number, a quoted string without backslashes,
NULL, TRUE or FALSE — one regular expression checks the whole list, a second cuts it into values
(both in C), and the rows go to the executor as Arrow columns typed as DuckDB types the same
literals (integers BIGINT, decimals DECIMAL(p,s), exponents DOUBLE, strings VARCHAR, booleans
BOOLEAN), so they convert into the table's columns as the parser path's rows do. Anything else
(an expression, a function, a comment, an escape sequence, a label, a partition, a second
statement, a column mixing strings with numbers) returns None and the statement takes the parser.
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
# Every piece is atomic ((?>…), possessive quantifiers) and unambiguous: a regular expression that can
# split the same text two ways backtracks through every split when the list fails at its end (one
# trailing comment after 100 rows cost minutes, holding the GIL). Atomic, a failed list fails in one pass.
_LITERAL = (r"""(?>-?(?:\d++(?:\.\d*+)?|\.\d++)(?:[eE][-+]?\d++)?(?![\w.])|'(?:[^'\\]|'')*+'|"(?:[^"\\]|"")*+\""""
            r"""|(?:NULL|TRUE|FALSE)\b)""")
_TUPLE = rf"(?>\(\s*+{_LITERAL}(?:\s*+,\s*+{_LITERAL})*+\s*+\))"
_VALUES = re.compile(rf"(?P<list>{_TUPLE}(?:\s*+,\s*+{_TUPLE})*+)\s*;?\s*", re.IGNORECASE)
_ITEM = re.compile(rf"({_LITERAL})\s*(\)?)", re.IGNORECASE)


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
    if head is None or _VALUES.fullmatch(sql, head.end()) is None:
        return None
    # Each value, and whether a ")" closes its tuple: the whole list checked, cut in one pass.
    items = _ITEM.findall(sql, head.end())
    ends = [i for i, (_, closes) in enumerate(items) if closes]
    width = ends[0] + 1
    if ends != list(range(width - 1, len(items), width)):
        return None  # tuples of different widths: the parser path answers the width error
    tokens = [token for token, _ in items]
    data = _columns([tuple(tokens[i::width]) for i in range(width)], len(ends))
    if data is None:
        return None
    columns = None
    if head.group("columns") is not None:
        columns = tuple(_name(c) for c in re.findall(_IDENT, head.group("columns")))
    db = _name(head.group("db").rstrip().rstrip(".")) if head.group("db") else None
    return LiteralInsert(db, _name(head.group("table")), columns, data)


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
        decimal = _decimal_type([t for t in values.to_pylist() if t is not None])
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


def _decimal_type(tokens: list[str]) -> str | None:
    """DECIMAL(p,s) holding every value, as DuckDB types a decimal literal; None beyond 38 digits."""
    whole = scale = 0
    for token in tokens:
        digits = token.lstrip("-")
        integer, _, fraction = digits.partition(".")
        scale = max(scale, len(fraction))
        whole = max(whole, len(integer.lstrip("0")))
    precision = whole + scale
    return f"DECIMAL({max(precision, 1)},{scale})" if precision <= 38 else None
