"""query.information_schema.scope_of: what a query's WHERE and names let the builder skip (no stack)."""

from __future__ import annotations

from sqlglot import exp

from query.information_schema import Scope, scope_of
from query.parser import Query, parse_statement


def _scope(sql: str) -> Scope:
    statement = parse_statement(sql)
    assert isinstance(statement, Query)
    reference = next(t for t in statement.expr.find_all(exp.Table) if t.db.lower() == "information_schema")
    return scope_of(reference)


def test_exact_conjuncts_narrow_the_rows() -> None:
    scope = _scope("SELECT TABLE_NAME FROM information_schema.tables WHERE TABLE_SCHEMA = 'd' AND "
                   "TABLE_NAME IN ('a', 'b') AND TABLE_NAME = 'a'")
    assert scope.values == {"TABLE_SCHEMA": frozenset({"d"}), "TABLE_NAME": frozenset({"a"})}
    assert scope.allows("TABLE_SCHEMA", "d") and not scope.allows("TABLE_SCHEMA", "e")


def test_anything_else_narrows_nothing() -> None:
    for sql in ("SELECT TABLE_NAME FROM information_schema.tables WHERE TABLE_SCHEMA = 'd' OR TABLE_NAME = 'x'",
                "SELECT TABLE_NAME FROM information_schema.tables WHERE TABLE_SCHEMA LIKE 'd%'",
                "SELECT t.TABLE_NAME FROM information_schema.tables t JOIN information_schema.columns c "
                "USING (TABLE_SCHEMA, TABLE_NAME) WHERE t.TABLE_SCHEMA = 'd'",
                "SELECT * FROM (SELECT TABLE_NAME FROM information_schema.tables) x WHERE TABLE_NAME = 'a'"):
        assert _scope(sql).values == {}, sql


def test_sizes_are_needed_only_when_named() -> None:
    assert not _scope("SELECT TABLE_NAME FROM information_schema.tables WHERE TABLE_SCHEMA = 'd'").needs(
        "TABLE_ROWS", "DATA_LENGTH")
    assert not _scope("SELECT COUNT(*) FROM information_schema.tables").needs("TABLE_ROWS")
    assert _scope("SELECT TABLE_NAME, DATA_LENGTH FROM information_schema.tables").needs("TABLE_ROWS", "DATA_LENGTH")
    assert _scope("SELECT * FROM information_schema.tables").needs("TABLE_ROWS")
    assert _scope("SELECT t.* FROM information_schema.tables t").needs("TABLE_ROWS")
    assert _scope("SELECT TABLE_NAME FROM information_schema.tables ORDER BY table_rows").needs("TABLE_ROWS")
