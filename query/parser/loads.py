"""Doris' S3 bulk statements: ``… INTO OUTFILE``, ``EXPORT TABLE``, Broker Load (``LOAD LABEL``),
and ``SHOW`` / ``CANCEL`` of LOAD and EXPORT jobs."""

from __future__ import annotations

from typing import Literal

from sqlglot import exp
from sqlglot.tokens import TokenType

from query.parser.cursor import Cursor
from query.parser.dml import partition_names
from query.parser.errors import UnsupportedStatement
from query.parser.statements import (
    BrokerLoad,
    CancelLoads,
    ExportTable,
    LoadColumn,
    LoadData,
    Properties,
    SelectIntoOutfile,
    ShowLoads,
)

JobKind = Literal["LOAD", "EXPORT"]


def outfile_position(c: Cursor) -> int | None:
    """Where a top-level ``INTO OUTFILE`` starts in a query's tokens, if it has one."""
    depth = 0
    for i, token in enumerate(c.tokens):
        if token.token_type == TokenType.L_PAREN:
            depth += 1
        elif token.token_type == TokenType.R_PAREN:
            depth -= 1
        elif depth == 0 and token.text.upper() == "INTO" and i + 1 < len(c.tokens) and \
                c.tokens[i + 1].text.upper() == "OUTFILE":
            return i
    return None


def into_outfile(c: Cursor, query: exp.Expr) -> SelectIntoOutfile:
    """From ``INTO OUTFILE`` to the end, for an already parsed query."""
    c.expect("INTO", "OUTFILE")
    path = c.string("a quoted output path")
    fmt = "csv"
    if c.accept("FORMAT", "AS"):
        fmt = c.name_or_string("a format").lower()
    properties = c.properties() if c.accept("PROPERTIES") else {}
    c.expect_end()
    return SelectIntoOutfile(query, path, fmt, properties)


def _with_s3(c: Cursor) -> Properties:
    c.expect("WITH")
    if c.accept("BROKER"):
        raise UnsupportedStatement("WITH BROKER is not supported; use WITH S3 (…)")
    if c.accept("HDFS"):
        raise UnsupportedStatement("WITH HDFS is not supported; use WITH S3 (…)")
    c.expect("S3")
    return c.properties()


def export_table(c: Cursor) -> ExportTable:
    """Everything after EXPORT."""
    from query.parser.misc import parse_read_as_of  # misc dispatches here: imported late

    c.expect("TABLE")
    table = c.qualified_name()
    as_of = parse_read_as_of(c) if c.accept("FOR") else None
    partitions = partition_names(c) if c.accept_any(("PARTITION", "PARTITIONS")) else ()
    where = c.sqlglot("condition", "a condition") if c.accept("WHERE") else None
    c.expect("TO")
    path = c.string("a quoted s3:// path")
    properties = c.properties() if c.accept("PROPERTIES") else {}
    s3 = _with_s3(c)
    c.expect_end()
    return ExportTable(table, path, partitions, where, as_of, properties, s3)


def _data(c: Cursor) -> LoadData:
    merge_type = next((t for t in ("MERGE", "APPEND", "DELETE") if c.accept(t)), "APPEND")
    c.expect("DATA", "INFILE")
    paths = tuple(c.parens(lambda: c.string("a quoted s3:// path")))
    if c.accept("NEGATIVE"):
        raise UnsupportedStatement("NEGATIVE loads are not supported")
    c.expect("INTO", "TABLE")
    table = c.identifier("a table name")
    partitions = partition_names(c) if c.accept_any(("PARTITION", "PARTITIONS")) else ()
    separator = delimiter = fmt = None
    columns: tuple[str, ...] = ()
    derived: tuple[LoadColumn, ...] = ()
    where = delete_on = None
    while True:
        if c.accept("COLUMNS", "TERMINATED", "BY"):
            separator = c.string("a quoted column separator")
        elif c.accept("LINES", "TERMINATED", "BY"):
            delimiter = c.string("a quoted line delimiter")
        elif c.accept("FORMAT", "AS"):
            fmt = c.name_or_string("a format").lower()
        elif c.at_type(TokenType.L_PAREN):
            columns = c.name_list()
        elif c.accept("DELETE", "ON"):
            delete_on = c.sqlglot("condition", "a condition")
        elif c.accept("COLUMNS", "FROM", "PATH", "AS") or c.at("PRECEDING") or c.at("ORDER"):
            raise UnsupportedStatement("Broker Load COLUMNS FROM PATH, PRECEDING FILTER and ORDER BY are not "
                                       "supported")
        elif c.accept("SET"):
            derived = tuple(c.parens(lambda: _assignment(c)))
        elif c.accept("WHERE"):
            where = c.sqlglot("condition", "a condition")
        elif c.accept("PROPERTIES"):
            raise UnsupportedStatement("per-file PROPERTIES of a Broker Load are not supported")
        else:
            break
    return LoadData(paths, table, partitions, separator, delimiter, fmt, columns, derived, where, merge_type,
                    delete_on)


def _assignment(c: Cursor) -> LoadColumn:
    name = c.identifier("a column name")
    c.expect_type(TokenType.EQ, "'=' after the column name")
    return LoadColumn(name, c.sqlglot("condition", "an expression"))


def load_label(c: Cursor) -> BrokerLoad:
    """Everything after LOAD LABEL."""
    label = c.qualified_name("a load label")
    data = tuple(c.parens(lambda: _data(c)))
    s3 = _with_s3(c)
    properties = c.properties() if c.accept("PROPERTIES") else {}
    c.expect_end()
    return BrokerLoad(label, data, s3, properties)


def _job_filter(c: Cursor) -> tuple[str | None, str | None, str | None]:
    """``WHERE LABEL = "l" | LABEL LIKE "p" | STATE = "s"`` joined by AND: (label, like, state)."""
    label = like = state = None
    if not c.accept("WHERE"):
        return label, like, state
    while True:
        if c.accept("LABEL"):
            if c.accept("LIKE"):
                like = c.string("a quoted LIKE pattern")
            else:
                c.expect_type(TokenType.EQ, "'=' or LIKE after LABEL")
                label = c.string("a quoted label")
        elif c.accept("STATE"):
            c.expect_type(TokenType.EQ, "'=' after STATE")
            state = c.string("a quoted state").upper()
        else:
            raise c.error("expected LABEL = \"…\", LABEL LIKE \"…\" or STATE = \"…\"")
        if not c.accept("AND"):
            return label, like, state


def show_loads(c: Cursor, kind: JobKind) -> ShowLoads:
    """After SHOW LOAD / SHOW EXPORT."""
    if kind == "LOAD" and c.word() in ("WARNINGS", "PROFILE"):
        raise UnsupportedStatement(f"SHOW LOAD {c.word()} is not supported")
    db = c.identifier("a database name") if c.accept_any(("FROM", "IN")) else None
    label, like, state = _job_filter(c)
    if c.accept("ORDER", "BY"):
        raise UnsupportedStatement(f"SHOW {kind} … ORDER BY is not supported (jobs come oldest first)")
    limit = c.integer("a row count") if c.accept("LIMIT") else None
    c.expect_end()
    return ShowLoads(kind, db, label, like, state, limit)


def cancel(c: Cursor) -> CancelLoads:
    """Everything after CANCEL: LOAD or EXPORT."""
    kind: JobKind
    if c.accept("LOAD"):
        kind = "LOAD"
    elif c.accept("EXPORT"):
        kind = "EXPORT"
    else:
        raise UnsupportedStatement(f"CANCEL {c.word() or ''} is not supported".strip())
    db = c.identifier("a database name") if c.accept_any(("FROM", "IN")) else None
    label, like, state = _job_filter(c)
    if label is None and like is None and state is None:
        raise c.error(f"CANCEL {kind} needs WHERE LABEL = \"…\", LABEL LIKE \"…\" or STATE = \"…\"")
    c.expect_end()
    return CancelLoads(kind, db, label, like, state)

