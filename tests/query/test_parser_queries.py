"""Queries, time travel in table references, and DML."""

from __future__ import annotations

import pytest
from sqlglot import exp

from query.parser import (
    DIALECT,
    AsOfTime,
    AsOfVersion,
    Delete,
    Insert,
    QualifiedName,
    Query,
    SqlSyntaxError,
    TruncateTable,
    Update,
    parse_statement,
    table_refs,
)


def query(sql: str) -> exp.Expr:
    stmt = parse_statement(sql)
    assert isinstance(stmt, Query)
    return stmt.expr


def test_select_with_joins_aggregates_order_limit() -> None:
    tree = query(
        "select a.k, count(*) c from db.t a join u on a.k = u.k where a.v > 1 "
        "group by a.k having count(*) > 2 order by c desc limit 10"
    )
    assert isinstance(tree, exp.Select)
    assert tree.args["limit"].expression.name == "10"
    assert [(r.db, r.name, r.as_of) for r in table_refs(tree)] == [("db", "t", None), (None, "u", None)]


def test_union_and_parenthesised_query() -> None:
    assert isinstance(query("(select 1) union all (select 2)"), exp.Union)


@pytest.mark.parametrize(
    ("clause", "expected"),
    [
        ("FOR TIME AS OF '2024-01-01 10:00:00'", AsOfTime("2024-01-01 10:00:00")),
        ("FOR SYSTEM_TIME AS OF '2024-01-01'", AsOfTime("2024-01-01")),
        ("FOR SYSTEM_TIME AS OF TIMESTAMP '2024-01-01'", AsOfTime("2024-01-01")),
        ("FOR TIMESTAMP AS OF '2024-01-01'", AsOfTime("2024-01-01")),
        ("for version as of 42", AsOfVersion(42)),
    ],
)
def test_time_travel_spellings(clause: str, expected: object) -> None:
    (ref,) = table_refs(query(f"SELECT * FROM t {clause}"))
    assert ref.name == "t" and ref.as_of == expected


def test_time_travel_before_and_after_alias() -> None:
    before, after = table_refs(
        query("SELECT * FROM t FOR TIME AS OF '2024-01-01' AS a JOIN t AS b FOR VERSION AS OF 7 ON a.k = b.k")
    )
    assert before.as_of == AsOfTime("2024-01-01") and before.node.alias == "a"
    assert after.as_of == AsOfVersion(7) and after.node.alias == "b"


def test_self_join_at_two_times_is_distinguishable_and_round_trips() -> None:
    sql = (
        "SELECT t1.k FROM db.orders FOR TIME AS OF '2024-01-01' t1 "
        "JOIN db.orders FOR TIME AS OF '2024-02-01' t2 ON t1.k = t2.k"
    )
    refs = table_refs(query(sql))
    assert [(r.db, r.name) for r in refs] == [("db", "orders"), ("db", "orders")]
    assert [r.as_of for r in refs] == [AsOfTime("2024-01-01"), AsOfTime("2024-02-01")]
    assert refs[0] != refs[1] and len(set(refs)) == 2
    # Regenerated SQL parses back to the same references.
    again = table_refs(query(refs[0].node.root().sql(dialect=DIALECT)))
    assert [(r.db, r.name, r.as_of) for r in again] == [(r.db, r.name, r.as_of) for r in refs]


def test_ctes_and_subqueries() -> None:
    tree = query(
        "WITH recent AS (SELECT * FROM events FOR VERSION AS OF 3) "
        "SELECT * FROM recent WHERE id IN (SELECT id FROM users FOR TIME AS OF '2024-01-01') "
        "AND EXISTS (SELECT 1 FROM (SELECT * FROM audit) x)"
    )
    refs = table_refs(tree)
    assert [(r.name, r.as_of) for r in refs] == [
        ("events", AsOfVersion(3)),
        ("users", AsOfTime("2024-01-01")),
        ("audit", None),
    ]


def test_cte_name_shadowing_only_applies_in_scope() -> None:
    refs = table_refs(
        query("SELECT * FROM (WITH c AS (SELECT * FROM base) SELECT * FROM c) s JOIN c ON 1 = 1")
    )
    assert [r.name for r in refs] == ["base", "c"]


def test_select_session_variable() -> None:
    tree = query("SELECT @@version_comment LIMIT 1")
    assert isinstance(tree, exp.Select) and isinstance(tree.selects[0], exp.SessionParameter)


def test_insert_values_with_label_and_columns() -> None:
    stmt = parse_statement("INSERT INTO db.t WITH LABEL load_1 (c1, c2) VALUES (1, 'a'), (2, 'b')")
    assert isinstance(stmt, Insert)
    assert stmt.table == QualifiedName("t", db="db")
    assert stmt.columns == ("c1", "c2") and stmt.label == "load_1"
    assert isinstance(stmt.query, exp.Values) and len(stmt.query.expressions) == 2


def test_insert_select_with_time_travel() -> None:
    stmt = parse_statement("INSERT INTO t SELECT * FROM s FOR VERSION AS OF 5")
    assert isinstance(stmt, Insert) and stmt.columns is None and stmt.label is None
    assert [r.as_of for r in table_refs(stmt.query)] == [AsOfVersion(5)]


@pytest.mark.parametrize(("sql", "partitions", "detect"), [
    ("INSERT OVERWRITE TABLE t SELECT * FROM s", (), False),
    ("INSERT OVERWRITE t VALUES (1)", (), False),
    ("INSERT OVERWRITE TABLE t PARTITION (p1, p2) WITH LABEL l (a) SELECT 1", ("p1", "p2"), False),
    ("INSERT OVERWRITE TABLE t PARTITION(*) VALUES (1)", (), True),
])
def test_insert_overwrite(sql: str, partitions: tuple[str, ...], detect: bool) -> None:
    stmt = parse_statement(sql)
    assert isinstance(stmt, Insert) and stmt.overwrite and stmt.table == QualifiedName("t")
    assert (stmt.partitions, stmt.detect_partitions) == (partitions, detect)
    assert not parse_statement("INSERT INTO t VALUES (1)").overwrite  # type: ignore[attr-defined]


@pytest.mark.parametrize("sql", ["INSERT INTO t PARTITION (*) VALUES (1)",
                                 "INSERT OVERWRITE TABLE t PARTITION (*, p1) VALUES (1)"])
def test_partition_star_only_alone_in_insert_overwrite(sql: str) -> None:
    with pytest.raises(SqlSyntaxError, match=r"PARTITION \(\*\)"):
        parse_statement(sql)


def test_insert_with_cte_named_label_is_not_a_label() -> None:
    stmt = parse_statement("INSERT INTO t WITH label AS (SELECT 1 AS x) SELECT x FROM label")
    assert isinstance(stmt, Insert) and stmt.label is None
    assert table_refs(stmt.query) == []


def test_delete_with_partition() -> None:
    stmt = parse_statement("DELETE FROM db.t PARTITION p1 WHERE k = 1 AND v IN (SELECT v FROM u)")
    assert isinstance(stmt, Delete)
    assert stmt.table == QualifiedName("t", db="db") and stmt.partitions == ("p1",)
    assert isinstance(stmt.where, exp.And)


def test_update() -> None:
    stmt = parse_statement("UPDATE t SET a = a + 1, b = 'x' WHERE c > 2")
    assert isinstance(stmt, Update)
    assert [name for name, _ in stmt.assignments] == ["a", "b"]
    assert stmt.assignments[1][1] == exp.Literal.string("x")
    assert isinstance(stmt.where, exp.GT)


def test_truncate() -> None:
    assert parse_statement("TRUNCATE TABLE t PARTITION (p1, p2)") == TruncateTable(
        QualifiedName("t"), ("p1", "p2")
    )
    assert parse_statement("truncate table `db`.`t`") == TruncateTable(QualifiedName("t", db="db"))
