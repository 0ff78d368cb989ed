"""The operator statements and EXPLAIN: what each parses to, and clear refusals of forms Strata lacks."""

from __future__ import annotations

import pytest

from query.parser import (
    AdminShowFrontendConfig,
    AdminShowReplica,
    Explain,
    QualifiedName,
    Query,
    ShowCluster,
    ShowData,
    ShowProc,
    ShowTablet,
    ShowTablets,
    ShowTransaction,
    Statement,
    UnsupportedStatement,
    parse_statement,
)

T = QualifiedName("t")


@pytest.mark.parametrize(("sql", "expected"), [
    ("SHOW BACKENDS", ShowCluster("BACKENDS")),
    ("show frontends;", ShowCluster("FRONTENDS")),
    ("SHOW PROC '/dbs/1'", ShowProc("/dbs/1")),
    ("SHOW DATA", ShowData()),
    ("SHOW DATA FROM shop", ShowData(table=QualifiedName("shop"))),
    ("SHOW DATA FROM shop.t", ShowData(table=QualifiedName("t", "shop"))),
    ("SHOW TABLETS FROM t", ShowTablets(T)),
    ("SHOW TABLET FROM t PARTITION (p1, p2)", ShowTablets(T, ("p1", "p2"))),
    ("SHOW TABLETS FROM t PARTITIONS p1", ShowTablets(T, ("p1",))),
    ("SHOW TABLET 10001", ShowTablet(10001)),
    ("SHOW TRANSACTION WHERE id = 5", ShowTransaction(txn_id=5)),
    ("SHOW TRANSACTION FROM shop WHERE label = 'l1'", ShowTransaction("shop", label="l1")),
    ("ADMIN SHOW REPLICA STATUS FROM t", AdminShowReplica("STATUS", T)),
    ("ADMIN SHOW REPLICA STATUS FROM t PARTITION (p) WHERE STATUS != 'ok'",
     AdminShowReplica("STATUS", T, ("p",), "OK", True)),
    ("ADMIN SHOW REPLICA DISTRIBUTION FROM t", AdminShowReplica("DISTRIBUTION", T)),
    ("ADMIN SHOW FRONTEND CONFIG", AdminShowFrontendConfig()),
    ("ADMIN SHOW FRONTEND CONFIG LIKE 'sql%'", AdminShowFrontendConfig("sql%")),
])
def test_parses(sql: str, expected: Statement) -> None:
    assert parse_statement(sql) == expected


@pytest.mark.parametrize(("sql", "level"), [("EXPLAIN SELECT 1", "NORMAL"),
                                            ("EXPLAIN VERBOSE SELECT * FROM t", "VERBOSE"),
                                            ("explain graph (SELECT 1)", "GRAPH")])
def test_explain(sql: str, level: str) -> None:
    found = parse_statement(sql)
    assert isinstance(found, Explain) and found.level == level and isinstance(found.query, Query)


@pytest.mark.parametrize("sql", ["EXPLAIN INSERT INTO t VALUES (1)", "EXPLAIN SHAPE PLAN SELECT 1",
                                 "EXPLAIN MEMO PLAN SELECT 1", "ADMIN SHOW TABLET STORAGE FORMAT",
                                 "SHOW TRANSACTION WHERE STATUS = 'VISIBLE'", "SHOW TABLETS FROM t ORDER BY Version"])
def test_refused(sql: str) -> None:
    with pytest.raises(UnsupportedStatement):
        parse_statement(sql)


def test_show_data_order_by_is_refused() -> None:
    with pytest.raises(UnsupportedStatement):
        parse_statement("SHOW DATA ORDER BY Size")
    with pytest.raises(UnsupportedStatement):
        parse_statement("SHOW DATA FROM t ORDER BY Size")


def test_alter_system_says_workers_join_by_themselves() -> None:
    with pytest.raises(UnsupportedStatement, match="SHOW BACKENDS"):
        parse_statement('ALTER SYSTEM ADD BACKEND "127.0.0.1:9050"')
