"""What user SQL may call: the statement side of the executor sandbox (`storage.sandbox` is the
DuckDB side).

Every expression a user wrote reaches DuckDB (queries, INSERT … SELECT, DELETE and UPDATE
predicates, CREATE TABLE AS, routine-load COLUMNS and WHERE). DuckDB knows table functions that read
files or URLs (`read_text`, `read_csv`, `read_parquet`, `glob`, `parquet_metadata` …), run SQL given
as a string (`query`, `query_table`, `json_execute_serialized_sql`), or show its settings and catalog
(`current_setting`, `duckdb_settings()`, `duckdb_views()` …). None of them is a Doris function and
none respects grants, so each is refused here, before anything runs, with an error naming it.

A table in FROM is therefore one of: a Strata table (the engine replaces it by a view of its
snapshot after the grant check), a CTE in scope, one of the few generator functions below, or
Doris' S3() table function, which Strata's own client reads (query.s3_source) before DuckDB runs.
"""

from __future__ import annotations

import dataclasses
from collections.abc import Iterator
from typing import Any

from sqlglot import exp

from query.context import SqlFailure
from query.parser import statements as st
from schemas.errors import ErrorCode

# Table functions that only generate values (no file, network, settings or SQL-in-a-string).
ALLOWED_TABLE_FUNCTIONS = frozenset({"range", "generate_series", "unnest"})
# Doris' S3() table function, which Strata's object store client serves (query.s3_source).
STRATA_S3_FUNCTION = "s3"
# Scalar or table functions refused wherever they appear, by exact name or by prefix.
_REFUSED_NAMES = frozenset({"glob", "query", "query_table", "current_setting", "getenv", "which_secret",
                            "json_execute_serialized_sql", "sniff_csv", "load_extension", "install_extension",
                            "st_read", "st_read_meta", "read_text", "read_blob"})
_REFUSED_PREFIXES = ("read_", "duckdb_", "pragma_", "parquet_", "iceberg_", "delta_", "sqlite_", "postgres_",
                     "mysql_", "excel_", "httpfs_", "s3_")


class SandboxViolation(SqlFailure):
    """A statement names something the sandbox refuses; the message says what and why."""

    def __init__(self, message: str) -> None:
        # 1227 (42000) ER_SPECIFIC_ACCESS_DENIED_ERROR: no grant can allow it.
        super().__init__(ErrorCode.SPECIFIC_ACCESS_DENIED, message)


def function_name(node: exp.Func) -> str:
    """The name DuckDB would be asked to call, lower-cased."""
    if isinstance(node, exp.Anonymous):
        return str(node.name).lower()
    return node.sql_name().lower()


def _refused(name: str) -> bool:
    return name in _REFUSED_NAMES or name.startswith(_REFUSED_PREFIXES)


def check_expression(expr: exp.Expr) -> None:
    """Raises SandboxViolation when `expr` reads through a table function or calls a refused function."""
    for table in expr.find_all(exp.Table):
        source = table.this
        if isinstance(source, exp.Identifier) or source is None:
            continue
        name = function_name(source) if isinstance(source, exp.Func) else type(source).__name__.lower()
        if name == STRATA_S3_FUNCTION:
            continue  # Strata's own: query.s3_source fetches its objects and DuckDB sees only their rows
        if name not in ALLOWED_TABLE_FUNCTIONS or _refused(name):
            raise SandboxViolation(f"table function '{name}' is not allowed: a statement reads only Strata tables "
                                   "(functions that read files, URLs or settings, or run SQL text, are refused)")
    for func in expr.find_all(exp.Func):
        name = function_name(func)
        if _refused(name):
            raise SandboxViolation(f"function '{name}' is not allowed: it reads files, URLs or server settings, or "
                                   "runs SQL text, outside what your grants cover")


def expressions(statement: st.Statement) -> Iterator[exp.Expr]:
    """Every sqlglot expression held by a parsed statement, however deeply nested in its fields."""

    def walk(value: Any) -> Iterator[exp.Expr]:
        if isinstance(value, exp.Expr):
            yield value
        elif dataclasses.is_dataclass(value) and not isinstance(value, type):
            for field in dataclasses.fields(value):
                yield from walk(getattr(value, field.name))
        elif isinstance(value, tuple | list):
            for item in value:
                yield from walk(item)
        elif isinstance(value, dict):
            for item in value.values():
                yield from walk(item)

    return walk(statement)


def permits(statement: st.Statement) -> bool:
    """Whether `check_statement` would let `statement` through."""
    try:
        check_statement(statement)
    except SandboxViolation:
        return False
    return True


def check_statement(statement: st.Statement) -> None:
    """Refuses `statement` if any expression in it calls what the sandbox does not allow."""
    for expr in expressions(statement):
        check_expression(expr)
