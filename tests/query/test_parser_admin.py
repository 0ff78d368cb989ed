"""Time travel, tiered storage, routine load and session statements."""

from __future__ import annotations

import pytest
from sqlglot import exp

from query.parser import (
    AdminCompact,
    AlterResource,
    AlterStoragePolicy,
    AlterTable,
    AsOfTime,
    AsOfVersion,
    CreateResource,
    CreateRoutineLoad,
    CreateStoragePolicy,
    CreateTable,
    DropResource,
    DropStoragePolicy,
    LoadColumn,
    Passthrough,
    QualifiedName,
    RestoreTable,
    RoutineLoadControl,
    SetNames,
    SetTableProperties,
    SetVariables,
    ShowDynamicPartitionTables,
    ShowProcesslist,
    ShowResources,
    ShowRoutineLoad,
    ShowServerInfo,
    ShowStoragePolicy,
    ShowTimeTravel,
    Statement,
    parse_statement,
)

T = QualifiedName("t")


@pytest.mark.parametrize(
    ("sql", "expected"),
    [
        ("SHOW TIME TRAVEL ON db.t", ShowTimeTravel(QualifiedName("t", db="db"))),
        (
            "RESTORE TABLE t TO TIME AS OF '2024-01-01 00:00:00'",
            RestoreTable(T, AsOfTime("2024-01-01 00:00:00")),
        ),
        ("RESTORE TABLE t TO VERSION AS OF 12", RestoreTable(T, AsOfVersion(12))),
        ("ADMIN COMPACT TABLE t WHERE TYPE = 'BASE'", AdminCompact(T, "BASE")),
        ("ADMIN COMPACT TABLE t PARTITION p1 WHERE type = 'cumulative'", AdminCompact(T, "CUMULATIVE", "p1")),
        (
            'CREATE RESOURCE IF NOT EXISTS "remote_s3" PROPERTIES ("type" = "s3", "s3.endpoint" = "http://m:9000")',
            CreateResource("remote_s3", {"type": "s3", "s3.endpoint": "http://m:9000"}, True),
        ),
        (
            'ALTER RESOURCE "remote_s3" PROPERTIES ("s3.region" = "r")',
            AlterResource("remote_s3", {"s3.region": "r"}),
        ),
        ('DROP RESOURCE IF EXISTS "remote_s3"', DropResource("remote_s3", True)),
        ('SHOW RESOURCES WHERE NAME = "remote_s3"', ShowResources(name="remote_s3")),
        ("SHOW RESOURCES LIKE 'remote%'", ShowResources(like="remote%")),
        ("SHOW RESOURCES", ShowResources()),
        (
            "CREATE STORAGE POLICY IF NOT EXISTS cold "
            'PROPERTIES ("storage_resource" = "s3", "cooldown_ttl" = "1d")',
            CreateStoragePolicy("cold", {"storage_resource": "s3", "cooldown_ttl": "1d"}, True),
        ),
        (
            'ALTER STORAGE POLICY cold PROPERTIES ("cooldown_ttl" = "2d")',
            AlterStoragePolicy("cold", {"cooldown_ttl": "2d"}),
        ),
        ("DROP STORAGE POLICY IF EXISTS cold", DropStoragePolicy("cold", True)),
        ("SHOW STORAGE POLICY", ShowStoragePolicy()),
        ("SHOW STORAGE POLICY USING", ShowStoragePolicy(using=True)),
        ("SHOW STORAGE POLICY USING FOR cold", ShowStoragePolicy(using=True, policy="cold")),
        ("PAUSE ROUTINE LOAD FOR job1", RoutineLoadControl("PAUSE", QualifiedName("job1"))),
        ("RESUME ROUTINE LOAD FOR db.job1", RoutineLoadControl("RESUME", QualifiedName("job1", db="db"))),
        ("RESUME ALL ROUTINE LOAD", RoutineLoadControl("RESUME", None)),
        ("STOP ROUTINE LOAD FOR job1", RoutineLoadControl("STOP", QualifiedName("job1"))),
        ("SHOW ROUTINE LOAD", ShowRoutineLoad()),
        ("SHOW ROUTINE LOAD FOR job1", ShowRoutineLoad(QualifiedName("job1"))),
        ("SHOW ALL ROUTINE LOAD", ShowRoutineLoad(all=True)),
        ("SET NAMES utf8mb4", SetNames("utf8mb4")),
        ("SET NAMES 'utf8mb4' COLLATE 'utf8mb4_general_ci'", SetNames("utf8mb4", "utf8mb4_general_ci")),
        ("SHOW VARIABLES LIKE 'lower_case%'", ShowServerInfo("VARIABLES", like="lower_case%")),
        ("SHOW GLOBAL VARIABLES", ShowServerInfo("VARIABLES", scope="GLOBAL")),
        ("SHOW FULL PROCESSLIST", ShowProcesslist(full=True)),
        ("SHOW PROCESSLIST", ShowProcesslist()),
        ("SHOW WARNINGS", ShowServerInfo("WARNINGS")),
        ("SHOW ENGINES", ShowServerInfo("ENGINES")),
        ("SHOW STATUS", ShowServerInfo("STATUS")),
        ("SHOW CHARSET", ShowServerInfo("CHARSET")),
        ("SHOW CHARACTER SET", ShowServerInfo("CHARSET")),
        ("SHOW COLLATION LIKE 'utf8%'", ShowServerInfo("COLLATION", like="utf8%")),
        ("COMMIT", Passthrough("COMMIT", "COMMIT")),
        ("SHOW DYNAMIC PARTITION TABLES", ShowDynamicPartitionTables()),
        ("show dynamic partition tables from shop", ShowDynamicPartitionTables("shop")),
        ("SHOW DYNAMIC PARTITION TABLES IN `my db`;", ShowDynamicPartitionTables("my db")),
    ],
)
def test_statement_fields(sql: str, expected: Statement) -> None:
    assert parse_statement(sql) == expected


def test_create_routine_load() -> None:
    stmt = parse_statement(
        """CREATE ROUTINE LOAD example_db.job1 ON events
        COLUMNS TERMINATED BY ",",
        COLUMNS(k1, k2, v = k1 * 10),
        WHERE k1 > 100
        PROPERTIES ("desired_concurrent_number" = "3", "format" = "json")
        FROM KAFKA ("kafka_broker_list" = "broker:9092", "kafka_topic" = "events")"""
    )
    assert isinstance(stmt, CreateRoutineLoad)
    assert stmt.job == QualifiedName("job1", db="example_db") and stmt.table == QualifiedName("events")
    assert stmt.column_separator == ","
    assert [c.name for c in stmt.columns] == ["k1", "k2", "v"]
    assert stmt.columns[0] == LoadColumn("k1") and isinstance(stmt.columns[2].expr, exp.Mul)
    assert isinstance(stmt.where, exp.GT)
    assert stmt.properties == {"desired_concurrent_number": "3", "format": "json"}
    assert stmt.source == "KAFKA"
    assert stmt.source_properties == {"kafka_broker_list": "broker:9092", "kafka_topic": "events"}


def test_create_routine_load_clauses_in_any_order() -> None:
    stmt = parse_statement(
        "CREATE ROUTINE LOAD job ON t WHERE a = 1, PARTITION(p1, p2), COLUMNS(a, b) "
        "FROM KAFKA ('kafka_topic' = 'x')"
    )
    assert isinstance(stmt, CreateRoutineLoad)
    assert stmt.partitions == ("p1", "p2") and stmt.properties == {} and stmt.column_separator is None
    assert [c.name for c in stmt.columns] == ["a", "b"] and isinstance(stmt.where, exp.EQ)


def test_set_variables() -> None:
    stmt = parse_statement(
        "SET SESSION sql_mode = 'STRICT', GLOBAL time_zone = '+08:00', @@session.autocommit = 1, "
        "@@global.x = DEFAULT, @v = 5, net_write_timeout = 600"
    )
    assert isinstance(stmt, SetVariables)
    assert [(a.scope, a.name) for a in stmt.assignments] == [
        ("SESSION", "sql_mode"),
        ("GLOBAL", "time_zone"),
        ("SESSION", "autocommit"),
        ("GLOBAL", "x"),
        ("USER", "v"),
        ("SESSION", "net_write_timeout"),
    ]
    assert stmt.assignments[0].value == exp.Literal.string("STRICT")
    assert stmt.assignments[5].value == exp.Literal.number(600)


def test_set_on_and_off_are_words() -> None:
    """MySQL's `SET autocommit = ON` (JDBC pools send it): ON/OFF are words, not expressions."""
    stmt = parse_statement("SET autocommit = ON, @@session.sql_safe_updates = OFF, x = DEFAULT")
    assert isinstance(stmt, SetVariables)
    assert [(a.name, a.value) for a in stmt.assignments] == [
        ("autocommit", exp.var("ON")), ("sql_safe_updates", exp.var("OFF")), ("x", exp.var("DEFAULT"))]


def test_set_transaction_passes_through() -> None:
    sql = "SET SESSION TRANSACTION ISOLATION LEVEL READ COMMITTED"
    assert parse_statement(sql) == Passthrough("SET TRANSACTION", sql)


def test_dynamic_partition_properties_parse_on_an_empty_range_table() -> None:
    stmt = parse_statement(
        "CREATE TABLE t (dt DATE, v INT) DUPLICATE KEY(dt) PARTITION BY RANGE(dt) () "
        'DISTRIBUTED BY HASH(dt) BUCKETS 3 PROPERTIES ("Dynamic_Partition.Enable" = "true", '
        '"dynamic_partition.time_unit" = "DAY", "dynamic_partition.end" = "3")'
    )
    assert isinstance(stmt, CreateTable) and stmt.partition is not None
    assert (stmt.partition.kind, stmt.partition.columns, stmt.partition.partitions) == ("RANGE", ("dt",), ())
    assert stmt.properties == {
        "dynamic_partition.enable": "true",
        "dynamic_partition.time_unit": "DAY",
        "dynamic_partition.end": "3",
    }
    alter = parse_statement('ALTER TABLE t SET ("dynamic_partition.enable" = "false", "dynamic_partition.end" = "5")')
    assert alter == AlterTable(
        T, (SetTableProperties({"dynamic_partition.enable": "false", "dynamic_partition.end": "5"}),)
    )


def test_show_routine_status_and_plugins_parse() -> None:
    assert parse_statement("SHOW PROCEDURE STATUS LIKE 'p%'") == ShowServerInfo("PROCEDURE STATUS", like="p%")
    assert parse_statement("SHOW FUNCTION STATUS") == ShowServerInfo("FUNCTION STATUS")
    assert parse_statement("SHOW PLUGINS") == ShowServerInfo("PLUGINS")
