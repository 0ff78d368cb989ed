"""Errors raised by the SQL front end; the only exceptions ``parse_statement`` lets escape."""

from __future__ import annotations

import re

_ANSI_ESCAPE = re.compile(r"\x1b\[[0-9;]*m")


def strip_ansi(text: str) -> str:
    """Remove terminal escape sequences (sqlglot underlines the offending token with them)."""
    return _ANSI_ESCAPE.sub("", text)


class SqlError(Exception):
    """Base class so the server can map every front-end failure to a MySQL error packet."""

    def __init__(self, message: str) -> None:
        super().__init__(message)
        self.message = message

    def __str__(self) -> str:
        return self.message


class SqlSyntaxError(SqlError):
    """The text is not valid Strata/Doris SQL; ``line``/``col`` are 1-based."""

    def __init__(self, message: str, line: int, col: int) -> None:
        super().__init__(strip_ansi(message))
        self.line = line
        self.col = col

    def __reduce__(self) -> tuple[type[SqlSyntaxError], tuple[str, int, int]]:
        # The default pickling would call __init__ with only the message.
        return (type(self), (self.message, self.line, self.col))


class UnsupportedStatement(SqlError):
    """The statement is valid Doris SQL that Strata deliberately does not implement."""
