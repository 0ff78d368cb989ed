"""Parsing CREATE / ALTER / DROP VIEW and SHOW CREATE VIEW: the query is kept as written, with where
it starts, so the engine can store it with its table names qualified."""

from __future__ import annotations

import pytest

from query.parser import (
    AlterView,
    CreateView,
    DropView,
    ShowCreateView,
    UnsupportedStatement,
    ViewColumnDef,
    parse_statement,
)
from query.parser.statements import QualifiedName


def test_create_view_keeps_its_query_text() -> None:
    sql = "CREATE OR REPLACE VIEW db.v (a COMMENT \"first\", b) COMMENT 'c' AS SELECT k, v FROM t WHERE k > 1;"
    s = parse_statement(sql)
    assert isinstance(s, CreateView)
    assert (s.view, s.columns, s.comment, s.or_replace, s.if_not_exists) == (
        QualifiedName("v", "db"), (ViewColumnDef("a", "first"), ViewColumnDef("b")), "c", True, False)
    assert s.text == "SELECT k, v FROM t WHERE k > 1" and sql[s.text_start:].startswith(s.text)
    s = parse_statement("create view if not exists v as (with t1 as (select * from t) select * from t1)")
    assert isinstance(s, CreateView) and s.if_not_exists and s.text.startswith("(with t1")


def test_alter_drop_and_show_create_view() -> None:
    s = parse_statement("ALTER VIEW v (x) AS SELECT 1")
    assert isinstance(s, AlterView) and s.columns == (ViewColumnDef("x"),) and s.text == "SELECT 1"
    assert parse_statement("DROP VIEW IF EXISTS db.v") == DropView(QualifiedName("v", "db"), True)
    assert parse_statement("SHOW CREATE VIEW v") == ShowCreateView(QualifiedName("v"))


def test_or_replace_with_if_not_exists_is_refused_as_in_doris() -> None:
    with pytest.raises(UnsupportedStatement, match=r"\[OR REPLACE\] and \[IF NOT EXISTS\] cannot used"):
        parse_statement("CREATE OR REPLACE VIEW IF NOT EXISTS v AS SELECT 1")
