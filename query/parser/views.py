"""CREATE / ALTER / DROP VIEW: the query is kept as written (its text and where it starts) so the
engine can store it with its table names qualified, as Doris does."""

from __future__ import annotations

from sqlglot.tokens import TokenType

from query.parser.cursor import Cursor
from query.parser.dml import parse_query
from query.parser.errors import UnsupportedStatement
from query.parser.statements import AlterView, CreateView, DropView, Query, Statement, ViewColumnDef


def _column(c: Cursor) -> ViewColumnDef:
    name = c.identifier("a column name")
    return ViewColumnDef(name, c.string("a quoted comment") if c.accept("COMMENT") else "")


def _columns(c: Cursor) -> tuple[ViewColumnDef, ...]:
    return tuple(c.parens(lambda: _column(c))) if c.at_type(TokenType.L_PAREN) else ()


def _query(c: Cursor) -> tuple[Query, str, int]:
    """AS query: the parsed query, its text as written and where that text starts."""
    c.expect("AS")
    start = c.peek()
    if start is None:
        raise c.error("expected a query after AS")
    query = parse_query(c)
    return query, c.sql[start.start: c.tokens[-1].end + 1], start.start


def create_view(c: Cursor, or_replace: bool = False) -> Statement:
    """Everything after ``CREATE [OR REPLACE] VIEW``."""
    if_not_exists = c.if_not_exists()
    if or_replace and if_not_exists:
        raise UnsupportedStatement("[OR REPLACE] and [IF NOT EXISTS] cannot used at the same time")
    view = c.qualified_name("a view name")
    columns = _columns(c)
    comment = c.string("a quoted comment") if c.accept("COMMENT") else None
    query, text, start = _query(c)
    return CreateView(view, query, text, start, columns, comment, or_replace, if_not_exists)


def alter_view(c: Cursor) -> Statement:
    """Everything after ``ALTER VIEW``."""
    view = c.qualified_name("a view name")
    columns = _columns(c)
    query, text, start = _query(c)
    return AlterView(view, query, text, start, columns)


def drop_view(c: Cursor) -> Statement:
    if_exists = c.if_exists()
    view = c.qualified_name("a view name")
    c.expect_end()
    return DropView(view, if_exists)
