"""query.information_schema.scope_of: what a query's WHERE and names let the builder skip (no stack)."""

from __future__ import annotations

from sqlglot import exp

from query.information_schema import Scope, scope_of
from query.parser import Query, parse_statement


def _scope(sql: str, alias: str | None = None) -> Scope:
    """The scope of the query's information_schema table (the one aliased `alias`)."""
    statement = parse_statement(sql)
    assert isinstance(statement, Query)
    reference = next(t for t in statement.expr.find_all(exp.Table) if t.db.lower() == "information_schema"
                     and alias in (None, t.alias))
    return scope_of(reference)


def test_exact_conjuncts_narrow_the_rows() -> None:
    scope = _scope("SELECT TABLE_NAME FROM information_schema.tables WHERE TABLE_SCHEMA = 'd' AND "
                   "TABLE_NAME IN ('a', 'b') AND TABLE_NAME = 'a'")
    assert scope.values == {"TABLE_SCHEMA": frozenset({"d"}), "TABLE_NAME": frozenset({"a"})}
    assert scope.allows("TABLE_SCHEMA", "d") and not scope.allows("TABLE_SCHEMA", "e")


def test_either_side_and_its_own_qualifier_count() -> None:
    scope = _scope("SELECT it.TABLE_NAME FROM information_schema.tables it WHERE 'd' = it.TABLE_SCHEMA AND "
                   "tables.TABLE_NAME = 'x'")
    assert scope.values == {"TABLE_SCHEMA": frozenset({"d"})}  # `tables.` is not this reference's name here
    assert _scope("SELECT 1 FROM information_schema.tables WHERE tables.TABLE_NAME = 'x'").values == {
        "TABLE_NAME": frozenset({"x"})}


def test_like_patterns_narrow_as_duckdb_matches_them() -> None:
    scope = _scope("SELECT TABLE_NAME FROM information_schema.tables WHERE TABLE_NAME LIKE 'a_c%' AND "
                   "TABLE_NAME LIKE '%z' AND TABLE_SCHEMA LIKE 'd.b'")
    assert scope.values == {}
    assert scope.allows("TABLE_NAME", "abcxyz") and scope.allows("TABLE_NAME", "a.cz")
    assert not scope.allows("TABLE_NAME", "abcxy")  # every pattern must match
    assert not scope.allows("TABLE_NAME", "ABCz")  # case-sensitive, as DuckDB's LIKE
    assert scope.allows("TABLE_SCHEMA", "d.b") and not scope.allows("TABLE_SCHEMA", "dxb")  # `.` is no wildcard
    # A backslash (an escape in MySQL, none in DuckDB) or an ESCAPE clause: not mirrored, not pushed.
    for sql in ("SELECT 1 FROM information_schema.tables WHERE TABLE_NAME LIKE 'a\\_b'",
                "SELECT 1 FROM information_schema.tables WHERE TABLE_NAME LIKE 'a!_b' ESCAPE '!'",
                "SELECT 1 FROM information_schema.tables WHERE TABLE_NAME NOT LIKE 'a%'",
                "SELECT 1 FROM information_schema.tables WHERE TABLE_NAME ILIKE 'a%'",
                "SELECT 1 FROM information_schema.tables WHERE NOT (TABLE_NAME LIKE 'a%')"):
        assert _scope(sql).allows("TABLE_NAME", "zzz"), sql


def test_anything_else_narrows_nothing() -> None:
    for sql in ("SELECT TABLE_NAME FROM information_schema.tables WHERE TABLE_SCHEMA = 'd' OR TABLE_NAME = 'x'",
                "SELECT TABLE_NAME FROM information_schema.tables WHERE TABLE_SCHEMA NOT LIKE 'd%'",
                "SELECT t.TABLE_NAME FROM information_schema.tables t JOIN information_schema.columns c "
                "USING (TABLE_SCHEMA, TABLE_NAME) WHERE t.TABLE_SCHEMA = 'd'",
                "SELECT * FROM (SELECT TABLE_NAME FROM information_schema.tables) x WHERE TABLE_NAME = 'a'",
                "SELECT TABLE_NAME FROM information_schema.tables WHERE TABLE_NAME = NULL",
                "SELECT TABLE_NAME FROM information_schema.tables WHERE TABLE_NAME IN ('a', NULL)",
                "SELECT TABLE_NAME FROM information_schema.tables WHERE TABLE_NAME = 1",
                "SELECT TABLE_NAME FROM information_schema.tables WHERE NOT TABLE_NAME = 'a'",
                "SELECT TABLE_NAME FROM information_schema.tables WHERE UPPER(TABLE_NAME) = 'A'",
                "SELECT TABLE_NAME FROM information_schema.tables WHERE TABLE_NAME = TABLE_SCHEMA"):
        assert _scope(sql).values == {}, sql
    # A condition on the enclosing query's table does not narrow the subquery's.
    correlated = ("SELECT t.TABLE_NAME, (SELECT COUNT(*) FROM information_schema.columns c WHERE "
                  "t.TABLE_NAME = 'a') FROM information_schema.tables t")
    assert _scope(correlated, "c").values == {} and _scope(correlated, "t").values == {}


def test_sizes_are_needed_only_when_named() -> None:
    assert not _scope("SELECT TABLE_NAME FROM information_schema.tables WHERE TABLE_SCHEMA = 'd'").needs(
        "TABLE_ROWS", "DATA_LENGTH")
    assert not _scope("SELECT COUNT(*) FROM information_schema.tables").needs("TABLE_ROWS")
    assert _scope("SELECT TABLE_NAME, DATA_LENGTH FROM information_schema.tables").needs("TABLE_ROWS", "DATA_LENGTH")
    assert _scope("SELECT * FROM information_schema.tables").needs("TABLE_ROWS")
    assert _scope("SELECT t.* FROM information_schema.tables t").needs("TABLE_ROWS")
    assert _scope("SELECT TABLE_NAME FROM information_schema.tables ORDER BY table_rows").needs("TABLE_ROWS")
