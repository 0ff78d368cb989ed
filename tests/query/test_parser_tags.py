"""Tags in the parser: ALTER TABLE … CREATE TAG / DROP TAG, SHOW TAGS, and `FOR TAG AS OF 'name'` as a
table reference's clause (no stack needed)."""

from __future__ import annotations

import pytest

from query.parser import (
    AsOfTag,
    AsOfTime,
    AsOfVersion,
    CreateTag,
    DropTag,
    QualifiedName,
    Query,
    ShowTags,
    SqlSyntaxError,
    parse_statement,
    table_refs,
)


def test_create_tag_forms() -> None:
    assert parse_statement("ALTER TABLE d.t CREATE TAG v1") == CreateTag(QualifiedName("t", "d"), "v1")
    assert parse_statement("ALTER TABLE t CREATE TAG v1 AS OF VERSION 3") == \
        CreateTag(QualifiedName("t"), "v1", AsOfVersion(3))
    assert parse_statement("ALTER TABLE t CREATE TAG `v 1` AS OF '2024-01-02 03:04:05' "
                           'PROPERTIES ("Retention_Days" = "2")') == \
        CreateTag(QualifiedName("t"), "v 1", AsOfTime("2024-01-02 03:04:05"), {"retention_days": "2"})


def test_drop_and_show_tags() -> None:
    assert parse_statement("ALTER TABLE t DROP TAG v1") == DropTag(QualifiedName("t"), "v1")
    assert parse_statement("SHOW TAGS ON d.t") == ShowTags(QualifiedName("t", "d"))


@pytest.mark.parametrize("sql", ["ALTER TABLE t CREATE TAG", "ALTER TABLE t CREATE TAG a AS OF VERSION x",
                                 "ALTER TABLE t DROP TAG a, DROP TAG b", "SELECT * FROM t FOR TAG AS OF a"])
def test_malformed_tag_statements(sql: str) -> None:
    with pytest.raises(SqlSyntaxError):
        parse_statement(sql)


def test_for_tag_as_of_is_a_table_clause() -> None:
    query = parse_statement("SELECT * FROM t FOR TAG AS OF 'v1' a JOIN t b ON a.k = b.k")
    assert isinstance(query, Query)
    assert [ref.as_of for ref in table_refs(query.expr)] == [AsOfTag("v1"), None]
