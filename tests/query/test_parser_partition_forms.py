"""Parsing Doris' partition forms: batches, NULL and DEFAULT list partitions, AUTO PARTITION, and the
spellings of a partition selection in FROM."""

from __future__ import annotations

import pytest
from sqlglot import exp

from query.parser import (
    AutoPartition,
    BatchRange,
    CreateTable,
    PartitionDef,
    Query,
    SqlSyntaxError,
    UnsupportedStatement,
    parse_statement,
)

_TAIL = "DISTRIBUTED BY HASH(k) BUCKETS 1"


def _spec(partition_clause: str) -> tuple[object, ...]:
    stmt = parse_statement(f"CREATE TABLE t (k DATE NOT NULL, v INT) DUPLICATE KEY(k) {partition_clause} {_TAIL}")
    assert isinstance(stmt, CreateTable) and stmt.partition is not None
    return stmt.partition.partitions


def test_batches_mix_with_partitions() -> None:
    parts = _spec('PARTITION BY RANGE(k) (FROM ("2023-04-16") TO ("2023-04-20") INTERVAL 1 DAY, '
                  'PARTITION p VALUES [("2023-05-01"), ("2023-06-01")), FROM (1) TO (100) INTERVAL 10)')
    assert parts[0] == BatchRange("2023-04-16", "2023-04-20", 1, "DAY")
    assert isinstance(parts[1], PartitionDef) and parts[1].kind == "FIXED_RANGE"
    assert parts[2] == BatchRange("1", "100", 10, None)
    with pytest.raises(SqlSyntaxError, match="after the interval"):
        _spec('PARTITION BY RANGE(k) (FROM (1) TO (100) INTERVAL 10 FORTNIGHT)')


def test_list_null_values_and_default_partition() -> None:
    parts = _spec('PARTITION BY LIST(k) (PARTITION p_null VALUES IN ((NULL)), PARTITION p2 VALUES IN (NULL, "2"), '
                  'PARTITION p_default)')
    assert parts == (PartitionDef("p_null", "IN", ((None,),)), PartitionDef("p2", "IN", ((None,), ("2",))),
                     PartitionDef("p_default", "DEFAULT", ()))
    with pytest.raises(SqlSyntaxError, match="does not match PARTITION BY RANGE"):
        _spec("PARTITION BY RANGE(k) (PARTITION p_default)")


def test_auto_partition_clauses() -> None:
    stmt = parse_statement(f"CREATE TABLE t (k DATE NOT NULL) AUTO PARTITION BY RANGE (date_trunc(`k`, 'Month')) () "
                           f"{_TAIL}")
    assert isinstance(stmt, CreateTable) and stmt.partition is not None
    assert (stmt.partition.columns, stmt.partition.auto) == (("k",), AutoPartition("month"))
    stmt = parse_statement(f"CREATE TABLE t (k INT NOT NULL) AUTO PARTITION BY LIST (k) () {_TAIL}")
    assert isinstance(stmt, CreateTable) and stmt.partition is not None
    assert stmt.partition.auto == AutoPartition(None)
    with pytest.raises(SqlSyntaxError, match="date_trunc"):
        parse_statement(f"CREATE TABLE t (k INT NOT NULL) AUTO PARTITION BY RANGE (k) () {_TAIL}")


@pytest.mark.parametrize(("sql", "names"), [
    ("SELECT * FROM t PARTITION p1", ("p1",)),
    ("SELECT * FROM t PARTITION p1 AS x", ("p1",)),
    ("SELECT * FROM t PARTITIONS (p1, p2) x", ("p1", "p2")),
    ("SELECT * FROM t PARTITION (p1, p2)", ("p1", "p2")),
])
def test_partition_selection_spellings(sql: str, names: tuple[str, ...]) -> None:
    stmt = parse_statement(sql)
    assert isinstance(stmt, Query)
    table = stmt.expr.find(exp.Table)
    assert table is not None and isinstance(table.args.get("partition"), exp.Partition)
    assert tuple(p.name for p in table.args["partition"].expressions) == names


def test_temporary_partitions_are_refused() -> None:
    with pytest.raises(UnsupportedStatement, match="TEMPORARY PARTITION"):
        parse_statement("SELECT * FROM t TEMPORARY PARTITION (p1)")
    with pytest.raises(UnsupportedStatement, match="ADD PARTITIONS"):
        parse_statement("ALTER TABLE t ADD PARTITIONS FROM (1) TO (10) INTERVAL 1")


@pytest.mark.parametrize("sql", [
    "SELECT * FROM t FOR TIME AS OF '2026-01-01 00:00:00' PARTITION (p1) x",  # Doris' own order
    "SELECT * FROM t PARTITION (p1) FOR TIME AS OF '2026-01-01 00:00:00' x",
    "SELECT * FROM t FOR TIME AS OF '2026-01-01 00:00:00' PARTITION p1 AS x",
])
def test_a_partition_selection_after_the_time_travel_clause(sql: str) -> None:
    # sqlglot read `PARTITION (p1)` after the clause as an alias with a column list: every partition was
    # read and the first column renamed p1.
    stmt = parse_statement(sql)
    assert isinstance(stmt, Query)
    table = stmt.expr.find(exp.Table)
    assert table is not None and table.alias == "x" and table.args["version"] is not None
    assert [p.name for p in table.args["partition"].expressions] == ["p1"]
    with pytest.raises(SqlSyntaxError, match="selects partitions once"):
        parse_statement("SELECT * FROM t PARTITION (p1) FOR TIME AS OF '2026-01-01' PARTITION (p2)")
