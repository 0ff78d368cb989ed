"""Tokenizing, statement splitting and error positions shared by both parsing layers."""

from __future__ import annotations

import re
from collections.abc import Iterator

from sqlglot.errors import TokenError
from sqlglot.tokens import Token, TokenType

from query.parser.dialect import DIALECT
from query.parser.errors import SqlSyntaxError, strip_ansi

_TOKEN_ERROR_OFFSET = re.compile(r"(\d+):(\d+)\s*$")
_SNIPPET_CHARS = 40


def position(sql: str, offset: int) -> tuple[int, int]:
    """1-based (line, column) of a character offset; sqlglot's own ``Token.col`` marks token ends."""
    offset = max(0, min(offset, len(sql)))
    line = sql.count("\n", 0, offset) + 1
    return line, offset - (sql.rfind("\n", 0, offset) + 1) + 1


def _snippet(text: str) -> str:
    """Shortened, with control characters escaped so that messages cannot drive a terminal."""
    if len(text) > _SNIPPET_CHARS:
        text = text[: _SNIPPET_CHARS - 3] + "..."
    return "".join(ch if ch.isprintable() else ascii(ch)[1:-1] for ch in text)


def token_text(sql: str, token: Token) -> str:
    """The token as the user wrote it (quotes included), for messages."""
    return _snippet(sql[token.start : token.end + 1] or token.text)


def syntax_error(sql: str, token: Token | None, detail: str) -> SqlSyntaxError:
    """Error pointing at ``token``, or at the end of ``sql`` when the input ran out."""
    detail = strip_ansi(detail)
    if token is None:
        line, col = position(sql, len(sql.rstrip()))
        message = f"syntax error at end of input (line {line}, column {col}): {detail}"
        return SqlSyntaxError(message, line, col)
    line, col = position(sql, token.start)
    return SqlSyntaxError(
        f"syntax error near '{token_text(sql, token)}' at line {line}, column {col}: {detail}", line, col
    )


def tokenize(sql: str) -> list[Token]:
    try:
        return DIALECT.tokenize(sql)
    except TokenError as exc:
        if isinstance(exc.__cause__, IndexError):
            # sqlglot runs off the end of the text inside an unterminated `/* …` comment and says only
            # "string index out of range".
            opened = sql.rfind("/*")
            offset = opened if opened > sql.rfind("*/") else len(sql)
            line, col = position(sql, offset)
            what = "unterminated comment" if offset < len(sql) else "unexpected end of input"
            raise SqlSyntaxError(f"syntax error at line {line}, column {col}: {what}", line, col) from None
        cause = strip_ansi(str(exc.__cause__ or exc))
        match = _TOKEN_ERROR_OFFSET.search(cause)
        offset = int(match.group(2)) if match else len(sql)
        line, col = position(sql, offset)
        near = _snippet(sql[offset : offset + _SNIPPET_CHARS].split("\n", 1)[0])
        reason = _TOKEN_ERROR_OFFSET.sub("", cause).strip() or "cannot tokenize"
        raise SqlSyntaxError(
            f"syntax error near '{near}' at line {line}, column {col}: {reason}", line, col
        ) from None


def split_statements(tokens: list[Token]) -> Iterator[list[Token]]:
    """Token lists of the non-empty statements; quotes and comments never yield a SEMICOLON token."""
    current: list[Token] = []
    for token in tokens:
        if token.token_type == TokenType.SEMICOLON:
            if current:
                yield current
            current = []
        else:
            current.append(token)
    if current:
        yield current
