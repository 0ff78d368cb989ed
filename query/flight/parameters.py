"""A Flight SQL prepared statement and the parameters a client binds to it.

ADBC's `cursor.execute(sql, parameters)` and `executemany` prepare the statement (CreatePreparedStatement),
send the values as an Arrow record batch (DoPut of CommandPreparedStatementQuery / …Update), then run it.
Each row of the batch is bound into the statement's text as typed literals by the MySQL port's binder
(query.wire.params: the placeholders Strata's tokenizer finds, every value one literal of its type, no
splicing), so a `?` means the same on both ports and the bound text runs through the one engine. A query
runs with one row of values; an update runs once per row (a batch), its counts added up.
"""

from __future__ import annotations

import datetime as dt
from collections.abc import Callable
from dataclasses import dataclass, field
from typing import Any, TypeVar

import pyarrow as pa
from mysql_mimic.charset import CharacterSet
from mysql_mimic.errors import MysqlError

from query.context import SqlFailure
from query.wire.params import bind, placeholders
from schemas.errors import ErrorCode

T = TypeVar("T")
# Arrow strings are UTF-8; a binary value that is not UTF-8 is bound as X'…'.
_CHARSET = CharacterSet.utf8mb4


@dataclass
class PreparedStatement:
    """A prepared statement's text, where its `?` placeholders stand, and the rows last bound to it
    (kept until bound again, so it runs as often as the client asks)."""

    sql: str
    placeholders: list[int]
    bound: list[tuple[Any, ...]] = field(default_factory=list)

    @property
    def parameters(self) -> int:
        return len(self.placeholders)


def prepare(sql: str) -> PreparedStatement:
    """The statement with its placeholders found; SqlFailure (a syntax error) for text that does not tokenize."""
    return PreparedStatement(sql, _mysql_errors(placeholders, sql))


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


def statements(prepared: PreparedStatement) -> list[str]:
    """The text to run for each bound row; the text itself when the statement takes no parameters."""
    if not prepared.parameters:
        if prepared.bound:
            raise SqlFailure(ErrorCode.WRONG_ARGUMENTS, "the statement takes no parameters, values were bound")
        return [prepared.sql]
    if not prepared.bound:
        raise SqlFailure(ErrorCode.WRONG_ARGUMENTS, f"the statement takes {prepared.parameters} parameters, "
                                                    "none were bound")
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
