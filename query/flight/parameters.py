"""A Flight SQL prepared statement and the parameters a client binds to it.

ADBC's `cursor.execute(sql, parameters)` and `executemany` prepare the statement (CreatePreparedStatement),
send the values as an Arrow record batch (DoPut of CommandPreparedStatementQuery / …Update), then run it.
Each row of the batch is bound into the statement's text as typed literals by the MySQL port's binder
(query.wire.params: the placeholders Strata's tokenizer finds, every value one literal of its type, no
splicing), so a `?` means the same on both ports and the bound text runs through the one engine. A query
runs with one row of values; an update runs once per row (a batch), its counts added up — except an
`INSERT INTO … VALUES (…)` whose one row holds every placeholder, which runs as multi-row INSERTs of up
to `ROWS_PER_INSERT` rows (one commit each, as PyMySQL's executemany and Connector/J's rewritten batches
do), not as one commit per row.
"""

from __future__ import annotations

import datetime as dt
from collections.abc import Callable
from dataclasses import dataclass, field
from typing import Any, TypeVar

import pyarrow as pa
from mysql_mimic.charset import CharacterSet
from mysql_mimic.errors import MysqlError
from sqlglot.tokens import Token, TokenType

from query.context import SqlFailure
from query.parser.errors import SqlSyntaxError
from query.parser.lexing import tokenize
from query.wire.params import bind, placeholders
from schemas.errors import ErrorCode

T = TypeVar("T")
# Rows bound to an `INSERT … VALUES (?, …)` that go into one multi-row INSERT (one statement, one commit).
ROWS_PER_INSERT = 4096
# Arrow strings are UTF-8; a binary value that is not UTF-8 is bound as X'…'.
_CHARSET = CharacterSet.utf8mb4


@dataclass(frozen=True)
class FirstRun:
    """A prepared statement's rows from running it when it was prepared: the server's pending result
    `handle`, made at `at` (monotonic), after the login's `after`-th statement."""

    handle: bytes
    at: float
    after: int


@dataclass
class PreparedStatement:
    """A prepared statement's text, where its `?` placeholders stand, and the rows last bound to it
    (kept until bound again, so it runs as often as the client asks); the schema of its rows, when it
    has rows, the types its parameters take, and its rows' first run, when it was run as it was
    prepared (query.flight.server)."""

    sql: str
    placeholders: list[int]
    dataset_schema: pa.Schema | None = None
    parameter_schema: pa.Schema | None = None
    first_run: FirstRun | None = None
    # [start, end) of the one row of an `INSERT INTO … VALUES (…)` holding every placeholder: rows
    # bound to it are inserted as rows of one statement. None for any other statement.
    values_row: tuple[int, int] | None = None
    # For such an INSERT, the position in the row of each placeholder that is a value of its own (None
    # for one inside an expression): which column it fills.
    row_slots: tuple[int | None, ...] = ()
    bound: list[tuple[Any, ...]] = field(default_factory=list)

    @property
    def parameters(self) -> int:
        return len(self.placeholders)


def prepare(sql: str) -> PreparedStatement:
    """The statement with its placeholders found; SqlFailure (a syntax error) for text that does not tokenize."""
    offsets = _mysql_errors(placeholders, sql)
    found = _values_row(sql, offsets) if offsets else None
    if found is None:
        return PreparedStatement(sql, offsets)
    return PreparedStatement(sql, offsets, values_row=found[0], row_slots=found[1])


def _values_row(sql: str, offsets: list[int]) -> tuple[tuple[int, int], tuple[int | None, ...]] | None:
    """Where the one row of `INSERT INTO … VALUES (…)` stands and the slot of each placeholder in it
    (`row_slots`), if the statement is that and the row holds every placeholder (`offsets`)."""
    try:
        tokens = tokenize(sql)
    except SqlSyntaxError:
        return None
    while tokens and tokens[-1].token_type == TokenType.SEMICOLON:
        tokens.pop()
    if len(tokens) < 2 or (tokens[0].token_type, tokens[1].token_type) != (TokenType.INSERT, TokenType.INTO):
        return None
    values = next((i for i, t in enumerate(tokens) if t.token_type == TokenType.VALUES), None)
    if values is None or values + 1 >= len(tokens) or tokens[values + 1].token_type != TokenType.L_PAREN:
        return None
    close = _closing(tokens, values + 1)
    if close != len(tokens) - 1:  # more rows, or anything after the row
        return None
    start, end = tokens[values + 1].start, tokens[close].end + 1
    if not all(start <= offset < end for offset in offsets):
        return None
    return (start, end), _slots(tokens[values + 1:close + 1])


def _slots(row: list[Token]) -> tuple[int | None, ...]:
    """For each placeholder of a parenthesised row, its element's index when the element is the
    placeholder alone, else None."""
    slots: list[int | None] = []
    depth, element = 0, 0
    for i, token in enumerate(row):
        kind = token.token_type
        if kind == TokenType.L_PAREN:
            depth += 1
        elif kind == TokenType.R_PAREN:
            depth -= 1
        elif kind == TokenType.COMMA and depth == 1:
            element += 1
        elif kind == TokenType.PLACEHOLDER:
            alone = depth == 1 and row[i - 1].token_type in (TokenType.L_PAREN, TokenType.COMMA) and \
                row[i + 1].token_type in (TokenType.R_PAREN, TokenType.COMMA)
            slots.append(element if alone else None)
    return tuple(slots)


def _closing(tokens: list[Token], opening: int) -> int | None:
    """The index of the parenthesis closing the one at `opening`."""
    depth = 0
    for i in range(opening, len(tokens)):
        kind = tokens[i].token_type
        depth += 1 if kind == TokenType.L_PAREN else -1 if kind == TokenType.R_PAREN else 0
        if depth == 0:
            return i
    return None


def bind_rows(prepared: PreparedStatement, values: pa.Table) -> None:
    """Binds the rows of `values` (one column per placeholder, in order) to `prepared`. An empty
    binding (no columns, no rows) clears it."""
    if values.num_columns == 0 and values.num_rows == 0:
        prepared.bound = []
        return
    if values.num_columns != prepared.parameters:
        raise SqlFailure(ErrorCode.WRONG_ARGUMENTS, f"the statement takes {prepared.parameters} parameters, "
                                                    f"{values.num_columns} were bound")
    columns = [[_python(v) for v in column.to_pylist()] for column in values.columns]
    prepared.bound = list(zip(*columns, strict=True))


def with_values(prepared: PreparedStatement, values: list[Any]) -> str:
    """The statement with `values` bound (each a typed literal): NULLs, to describe its rows; markers,
    to find its parameters in it (query.flight.parameter_types)."""
    return _mysql_errors(bind, prepared.sql, prepared.placeholders, values, _CHARSET)


def statements(prepared: PreparedStatement) -> list[str]:
    """The text to run for each bound row; the text itself when the statement takes no parameters."""
    if not prepared.parameters:
        if prepared.bound:
            raise SqlFailure(ErrorCode.WRONG_ARGUMENTS, "the statement takes no parameters, values were bound")
        return [prepared.sql]
    if not prepared.bound:
        raise SqlFailure(ErrorCode.WRONG_ARGUMENTS, f"the statement takes {prepared.parameters} parameters, "
                                                    "none were bound")
    if prepared.values_row is not None and len(prepared.bound) > 1:
        start, end = prepared.values_row
        row, offsets = prepared.sql[start:end], [offset - start for offset in prepared.placeholders]
        rows = [_mysql_errors(bind, row, offsets, list(values), _CHARSET) for values in prepared.bound]
        return [prepared.sql[:start] + ", ".join(rows[i:i + ROWS_PER_INSERT])
                for i in range(0, len(rows), ROWS_PER_INSERT)]
    return [_mysql_errors(bind, prepared.sql, prepared.placeholders, list(row), _CHARSET) for row in prepared.bound]


def _python(value: Any) -> Any:
    """An Arrow value as the binder's Python value: a time of day as the TIME it is (a timedelta)."""
    if isinstance(value, dt.time):
        return dt.timedelta(hours=value.hour, minutes=value.minute, seconds=value.second,
                            microseconds=value.microsecond)
    if isinstance(value, dt.datetime) and value.tzinfo is not None:
        # Doris' DATETIME has no zone, and which zone to convert to is the session's (time_zone):
        # refused rather than guessed.
        raise SqlFailure(ErrorCode.NOT_SUPPORTED_YET, "a timestamp with a time zone is not supported as a "
                                                      "parameter: bind a timestamp without one")
    return value


def _mysql_errors(call: Callable[..., T], *args: Any) -> T:
    """`call(*args)`, the binder's MySQL errors raised as the engine's (SqlFailure)."""
    try:
        return call(*args)
    except MysqlError as exc:
        raise SqlFailure(int(exc.code), str(exc.msg)) from None
