"""A fast path for the bulk form of INSERT: `INSERT INTO t [(c1, …)] VALUES (<literal>, …), …`.

Batched VALUES lists are how producers without Stream Load load rows, and a 5,000-row statement
cost seconds in sqlglot's tokenizer and parser, and again in DuckDB's binder (about 0.2 ms a row for a
VALUES list). When every value is a plain literal — a number, a quoted string without backslashes,
NULL, TRUE or FALSE — the list is cut into columns with no Python object but its strings':

- split on its quote character, the text outside the strings is the list's structure and its bare
  values; C-speed string operations normalise its whitespace, check that every string stands alone in
  its slot and turn the tuples into lines, Arrow's CSV reader cuts the lines into columns, and each
  string goes back into its cell by its number in row-major order;
- a list with both quote characters, or a quote doubled inside a string, is cut by one regular
  expression instead (values and the `(`, `,`, `)` between them), with list slices checking every
  tuple's shape.

Each column's values are then checked and typed as Arrow arrays (vectorised: a 5,000-row statement has
tens of thousands of values). The rows go to the executor typed as DuckDB types the same literals
(integers BIGINT, decimals DECIMAL(p,s), exponents DOUBLE, strings VARCHAR, booleans BOOLEAN), so they
convert into the table's columns as the parser path's rows do. Anything else (an expression, a
function, a comment, an escape sequence, a label, a partition, a second statement, a column mixing
strings with numbers, tuples of different widths) returns None and the statement takes the parser.

A short list (`_SHORT_BODY_CHARS`: the single-row INSERTs of many small writers) is cut by the regular
expression and typed value by value in Python instead (`_short_rows`): the Arrow CSV reader and the
vectorised checks cost about a millisecond whatever the size, many times what a few values need, and
this runs on the SQL server's event loop. Both ways give the same `LiteralRows` (or both None).
"""

from __future__ import annotations

import re
from collections.abc import Callable, Sequence
from dataclasses import dataclass
from typing import TypeVar

import numpy as np
import pyarrow as pa
import pyarrow.compute as pc
import pyarrow.csv as pa_csv

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
_INTEGER = r"^-?\d+$"
_DECIMAL = r"^-?(?:\d+\.\d*|\.\d+)$"
# A string's stand-in in the text outside the strings (never in a statement the split path takes).
_STRING = "\x00"
# SQL's whitespace; any other character outside a string belongs to a value (and fails its check).
_SPACE = str.maketrans("\t\n\r\f\v", "     ")
# Comments and the other quote character: the split path leaves such a list to the regular expression
# (a comment may hold a quote that pairs with a string's).
_NOT_SPLIT = ("'", '"', "#", "--", "/*")


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


# A column's texts and bare flags, as the long path (Arrow arrays) or the short one (lists) cuts them.
_T = TypeVar("_T")
_B = TypeVar("_B")

# A column as cut from the list: each value's text (a string's without its quotes and doubling) and
# whether it was bare (not a string).
_Cells = tuple[pa.Array, pa.Array]


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
    body = sql[head.end():]
    data = _rows(body)
    if data is None:
        return None
    columns = None
    if head.group("columns") is not None:
        columns = tuple(_name(c) for c in re.findall(_IDENT, head.group("columns")))
    db = _name(head.group("db").rstrip().rstrip(".")) if head.group("db") else None
    return LiteralInsert(db, _name(head.group("table")), columns, data)


def _rows(body: str) -> LiteralRows | None:
    """The VALUES list's rows: a short one typed in Python, a longer one (or one `_short_rows` would cut
    differently) vectorised."""
    if len(body) <= _SHORT_BODY_CHARS and _WIDE_SPACE.search(body) is None:
        return _short_rows(body)
    return _long_rows(body)


def _long_rows(body: str) -> LiteralRows | None:
    """The list's rows cut and typed column by column as Arrow arrays (vectorised)."""
    quote = "'" if "'" in body or '"' not in body else '"'
    cut = _split_columns(body, quote) or _pieces_columns(body)
    return _typed(cut[0], cut[1], _column) if cut is not None else None


# A VALUES list up to this long is cut and typed in Python (`_short_rows`), a longer one vectorised.
_SHORT_BODY_CHARS = 1024
_INTEGER_RE, _DECIMAL_RE, _NUMBER_RE = re.compile(_INTEGER), re.compile(_DECIMAL), re.compile(_NUMBER)
_BIGINT_MIN, _BIGINT_MAX = -(1 << 63), (1 << 63) - 1
# Whitespace beyond SQL's (a no-break space…): the regular expression's pieces end at it where the long
# path's split keeps it in the value, so a list holding one takes the long path.
_WIDE_SPACE = re.compile(r"[^\S \t\n\r\f\v]")


def _short_rows(body: str) -> LiteralRows | None:
    """`_long_rows` of a short list, value by value in Python: the same rows and types, or None alike."""
    cut = _tuples(_PIECE.findall(body))
    if cut is None:
        return None
    pieces, width, rows = cut
    columns: list[tuple[list[str], list[bool]]] = []
    for i in range(width):
        texts: list[str] = []
        bare: list[bool] = []
        for piece in pieces[1 + 2 * i::2 * width + 2]:
            quote = piece[0]
            if quote in "'\"":
                if len(piece) < 2:
                    return None  # a lone quote
                texts.append(piece[1:-1].replace(quote * 2, quote))
                bare.append(False)
            else:
                texts.append(piece)
                bare.append(True)
        columns.append((texts, bare))
    return _typed(columns, rows, _short_column)


def _short_column(texts: list[str], bare: list[bool]) -> tuple[pa.Array, str] | None:
    """`_column` of a short list's column, value by value (the same decisions in the same order)."""
    if not any(bare):
        return pa.array(texts, pa.string()), "VARCHAR"
    if all(_INTEGER_RE.search(t) for t in texts):
        numbers = [int(t) for t in texts]
        if any(not _BIGINT_MIN <= n <= _BIGINT_MAX for n in numbers):
            return None  # beyond BIGINT: the parser path types it
        return pa.array(numbers, pa.int64()), "BIGINT"
    if all(_DECIMAL_RE.search(t) for t in texts):
        decimal = _short_decimal_type(texts)
        return (pa.array(texts, pa.string()), decimal) if decimal is not None else None
    upper = [_upper(t) for t in texts]
    null = [b and u == "NULL" for b, u in zip(bare, upper, strict=True)]
    values: list[str | None] = [None if n else t for n, t in zip(null, texts, strict=True)]
    if not all(bare):
        if not all(n or not b for n, b in zip(null, bare, strict=True)):
            return None  # strings mixed with numbers or booleans: the parser path's typing
        return pa.array(values, pa.string()), "VARCHAR"
    boolean = [u in ("TRUE", "FALSE") for u in upper]
    number = [not (n or b) for n, b in zip(null, boolean, strict=True)]
    if not all(_NUMBER_RE.search(t) for t, is_number in zip(texts, number, strict=True) if is_number):
        return None  # a name, an empty slot: no literal list
    has_number, has_bool = any(number), any(boolean)
    if not has_number and not has_bool:
        return pa.array(values, pa.string()), "VARCHAR"  # NULLs alone
    if has_bool and has_number:
        return None
    if has_bool:
        return pa.array([None if n else u == "TRUE" for n, u in zip(null, upper, strict=True)], pa.bool_()), "BOOLEAN"
    if any("E" in u for u in upper):
        return pc.cast(pa.array(values, pa.string()), pa.float64()), "DOUBLE"  # Arrow's parse, as `_column`
    if any("." in t for t in texts):
        decimal = _short_decimal_type(values)
        return (pa.array(values, pa.string()), decimal) if decimal is not None else None
    nullable_numbers = [None if v is None else int(v) for v in values]
    if any(n is not None and not _BIGINT_MIN <= n <= _BIGINT_MAX for n in nullable_numbers):
        return None
    return pa.array(nullable_numbers, pa.int64()), "BIGINT"


def _upper(text: str) -> str:
    """`text` in upper case as Arrow's utf8_upper has it (Python's differs beyond ASCII: 'ß' → 'SS')."""
    return text.upper() if text.isascii() else str(pc.utf8_upper(pa.scalar(text, pa.string())).as_py())


def _short_decimal_type(tokens: Sequence[str | None]) -> str | None:
    """`_decimal_type` of a short list's values (NULLs skipped)."""
    whole = scale = 0
    for token in tokens:
        if token is None:
            continue
        digits = token.lstrip("-").lstrip("0")
        point = digits.find(".")
        whole = max(whole, point if point >= 0 else len(digits))
        scale = max(scale, len(digits) - point - 1 if point >= 0 else 0)
    precision = whole + scale
    return f"DECIMAL({max(precision, 1)},{scale})" if precision <= 38 else None


def _split_columns(body: str, quote: str) -> tuple[list[_Cells], int] | None:
    """(columns, row count) of a list whose strings all use `quote`, cut by splitting on it (see the
    module docstring); None when the list is not that."""
    if _STRING in body:
        return None
    parts = body.split(quote)
    if len(parts) % 2 == 0:
        return None  # a quote never closed
    # The text outside the strings, a stand-in in each string's place.
    outside = _STRING.join(parts[0::2])
    if _STRING * 2 in outside:
        return None  # a quote doubled inside a string, or strings side by side: the pieces cut's
    if any(space in outside for space in "\t\n\r\f\v"):
        outside = outside.translate(_SPACE)
    outside = outside.strip().replace(", ", ",")
    if any(mark in outside for mark in _NOT_SPLIT):
        return None
    if " " in outside:  # any spacing but the usual ", " (whitespace is only ever between tokens)
        while "  " in outside:
            outside = outside.replace("  ", " ")
        for sep in ",();":
            outside = outside.replace(f" {sep}", sep).replace(f"{sep} ", sep)
    if outside.endswith(";"):
        outside = outside[:-1]
    if " " in outside or ";" in outside or not (outside.startswith("(") and outside.endswith(")")):
        return None  # two values without a comma between, a second statement, …
    lines = outside[1:-1].replace("),(", "\n")
    if "(" in lines or ")" in lines:
        return None  # a function, a parenthesised value, tuples without a comma between
    # Every string alone in its slot: nothing stuck to it (`'a'x`, `x'41'`, `DATE '2024-01-01'`).
    strings = len(parts) // 2
    if lines.startswith(_STRING) + lines.count("," + _STRING) + lines.count("\n" + _STRING) != strings \
            or lines.endswith(_STRING) + lines.count(_STRING + ",") + lines.count(_STRING + "\n") != strings:
        return None
    rows = lines.count("\n") + 1
    names = [f"f{i}" for i in range(lines.count(",", 0, lines.find("\n") % (len(lines) + 1)) + 1)]
    try:
        table = pa_csv.read_csv(
            pa.py_buffer(lines.encode()), read_options=pa_csv.ReadOptions(column_names=names, use_threads=False),
            parse_options=pa_csv.ParseOptions(quote_char=False, escape_char=False, ignore_empty_lines=False),
            convert_options=pa_csv.ConvertOptions(column_types=dict.fromkeys(names, pa.string()), null_values=[],
                                                   strings_can_be_null=False))
        texts = pa.array(parts[1::2], pa.string())
    except (pa.ArrowInvalid, UnicodeEncodeError):
        return None  # tuples of different widths: the parser path answers the width error
    if table.num_rows != rows:
        return None
    cut = [raw.combine_chunks() for raw in table.columns]
    quoted = [pc.equal(column, _STRING) for column in cut]
    # The strings in row-major order, as they stand in the list: each string cell's number among them.
    grid = np.stack([q.to_numpy(zero_copy_only=False) for q in quoted], axis=1)
    number = (np.cumsum(grid.ravel()) - 1).reshape(grid.shape)
    columns: list[_Cells] = []
    for i, (column, strings_here) in enumerate(zip(cut, quoted, strict=True)):
        if pc.any(strings_here).as_py():
            found = texts.take(pa.array(np.where(grid[:, i], number[:, i], 0)))
            column = pc.if_else(strings_here, found, column)
        columns.append((column, pc.invert(strings_here)))
    return columns, rows


def _pieces_columns(body: str) -> tuple[list[_Cells], int] | None:
    """(columns, row count) of the list cut by the regular expression, when its tuples have one shape."""
    cut = _tuples(_PIECE.findall(body))
    if cut is None:
        return None
    pieces, width, rows = cut
    columns: list[_Cells] = []
    for i in range(width):
        raw = pa.array(pieces[1 + 2 * i::2 * width + 2], pa.string())
        single, double = pc.starts_with(raw, "'"), pc.starts_with(raw, '"')
        quoted = pc.or_(single, double)
        if not pc.all(pc.or_(pc.invert(quoted), pc.greater(pc.utf8_length(raw), 1))).as_py():
            return None  # a lone quote
        inner = pc.utf8_slice_codeunits(raw, 1, -1)
        text = pc.if_else(single, pc.replace_substring(inner, "''", "'"),
                          pc.if_else(double, pc.replace_substring(inner, '""', '"'), raw))
        columns.append((text, pc.invert(quoted)))
    return columns, rows


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


def _column(text: pa.Array, bare: pa.Array) -> tuple[pa.Array, str] | None:
    """One column's literals as an Arrow array and the DuckDB type of the literals (vectorised: a
    5,000-row statement has tens of thousands of values)."""
    if not pc.any(bare).as_py():
        return text, "VARCHAR"
    if pc.all(pc.match_substring_regex(text, _INTEGER)).as_py():  # the common columns: integers alone …
        try:
            return pc.cast(text, pa.int64()), "BIGINT"
        except pa.ArrowInvalid:
            return None  # beyond BIGINT: the parser path types it
    if pc.all(pc.match_substring_regex(text, _DECIMAL)).as_py():  # … or decimals alone
        decimal = _decimal_type(text)
        return (text, decimal) if decimal is not None else None
    upper = pc.utf8_upper(text)
    null = pc.and_(bare, pc.equal(upper, "NULL"))
    if not pc.all(bare).as_py():
        # Strings and NULLs are a string column; strings mixed with numbers or booleans are left to
        # the parser path's typing.
        if not pc.all(pc.or_(pc.invert(bare), null)).as_py():
            return None
        return pc.if_else(null, pa.scalar(None, pa.string()), text), "VARCHAR"
    boolean = pc.or_(pc.equal(upper, "TRUE"), pc.equal(upper, "FALSE"))
    number = pc.invert(pc.or_(null, boolean))
    # A value slot holding anything but a literal — a name, an empty slot — is no literal list.
    if not pc.all(pc.or_(pc.invert(number), pc.match_substring_regex(text, _NUMBER))).as_py():
        return None
    has_number, has_bool = pc.any(number).as_py(), pc.any(boolean).as_py()
    if not has_number and not has_bool:
        return pc.if_else(null, pa.scalar(None, pa.string()), text), "VARCHAR"  # NULLs alone
    if has_bool and has_number:
        return None  # booleans mixed with numbers: the parser path's typing decides
    if has_bool:
        return pc.if_else(null, pa.scalar(None, pa.bool_()), pc.equal(upper, "TRUE")), "BOOLEAN"
    values = pc.if_else(null, pa.scalar(None, pa.string()), text) if pc.any(null).as_py() else text
    if pc.any(pc.match_substring(upper, "E")).as_py():
        return pc.cast(values, pa.float64()), "DOUBLE"
    if pc.any(pc.match_substring(text, ".")).as_py():
        decimal = _decimal_type(values)
        return (values, decimal) if decimal is not None else None
    try:
        return pc.cast(values, pa.int64()), "BIGINT"
    except pa.ArrowInvalid:
        return None  # beyond BIGINT: the parser path types it


def _typed(columns: Sequence[tuple[_T, _B]], rows: int,
           column: Callable[[_T, _B], tuple[pa.Array, str] | None]) -> LiteralRows | None:
    """The cut columns (each value's text, whether bare) typed by `column`; None if any is no literal list."""
    arrays: list[pa.Array] = []
    types: list[str] = []
    for text, bare in columns:
        typed = column(text, bare)
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
