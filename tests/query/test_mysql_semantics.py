"""query.mysql_semantics: MySQL's SELECT rules rewritten for DuckDB (no stack needed)."""

from __future__ import annotations

import pytest

from query.context import SqlFailure
from query.mysql_semantics import rewrite
from query.parser import Query, parse_statement


def _duck(sql: str) -> str:
    statement = parse_statement(sql)
    assert isinstance(statement, Query)
    return rewrite(statement.expr).sql(dialect="duckdb")


def test_having_without_group_by_filters_by_aliases() -> None:
    assert _duck("SELECT a AS x, CASE WHEN b = 1 THEN 'one' END AS b FROM t WHERE a > 0 HAVING b = 'one' AND x > 2") \
        == ("SELECT a AS x, CASE WHEN b = 1 THEN 'one' END AS b FROM t WHERE a > 0 AND "
            "((CASE WHEN b = 1 THEN 'one' END) = 'one' AND (a) > 2)")
    assert _duck("SELECT a FROM t HAVING a > 1") == "SELECT a FROM t WHERE a > 1"


def test_aggregating_having_is_left_alone() -> None:
    assert _duck("SELECT k, COUNT(*) AS c FROM t GROUP BY k HAVING c > 1") == \
        "SELECT k, COUNT(*) AS c FROM t GROUP BY k HAVING c > 1"
    assert _duck("SELECT COUNT(*) AS c FROM t HAVING c > 1") == "SELECT COUNT(*) AS c FROM t HAVING c > 1"
    assert _duck("SELECT a FROM t HAVING MAX(a) > 1") == "SELECT a FROM t HAVING MAX(a) > 1"


def test_doris_aggregates_keep_having_an_aggregate_filter() -> None:
    assert _duck("SELECT collect_list(a) AS c FROM t HAVING size(c) > 0") == \
        "SELECT COLLECT_LIST(a) AS c FROM t HAVING SIZE(c) > 0"


def test_subqueries_are_rewritten_too() -> None:
    assert _duck("SELECT * FROM (SELECT a AS x FROM t HAVING x = 1) s") == \
        "SELECT * FROM (SELECT a AS x FROM t WHERE (a) = 1) AS s"


def test_mysql_collations() -> None:
    assert _duck("SELECT a FROM t WHERE a COLLATE utf8mb4_0900_bin = 'NO' AND b COLLATE 'utf8mb4_bin' LIKE 'x%'") == \
        "SELECT a FROM t WHERE a = 'NO' AND b LIKE 'x%'"
    assert _duck("SELECT a FROM t WHERE a COLLATE utf8mb4_general_ci = 'no'") == \
        "SELECT a FROM t WHERE a COLLATE NOCASE = 'no'"
    with pytest.raises(SqlFailure) as refused:
        _duck("SELECT a COLLATE klingon_ai FROM t")
    assert refused.value.code == 1273 and "klingon_ai" in refused.value.message
