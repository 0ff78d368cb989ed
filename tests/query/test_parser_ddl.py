"""Databases, SHOW, CREATE / ALTER / DROP TABLE."""

from __future__ import annotations

import pytest

from query.parser import (
    AddColumn,
    AddColumns,
    AddPartition,
    AlterTable,
    AsOfTag,
    AsOfTime,
    AsOfVersion,
    ColumnDef,
    ColumnPosition,
    ColumnType,
    CreateDatabase,
    CreateTable,
    CreateTableAs,
    CreateTableClone,
    CreateTableLike,
    DefaultMarker,
    Describe,
    Distribution,
    DropColumn,
    DropDatabase,
    DropPartition,
    DropTable,
    ModifyColumn,
    ModifyPartition,
    PartitionDef,
    QualifiedName,
    RecoverDatabase,
    RecoverTable,
    RenameColumn,
    RenameTable,
    ReplaceWithTable,
    SetTableProperties,
    ShowColumns,
    ShowCreateDatabase,
    ShowCreateTable,
    ShowDatabases,
    ShowIndex,
    ShowPartitions,
    ShowTables,
    ShowTableStatus,
    SqlSyntaxError,
    Statement,
    UnsupportedStatement,
    Use,
    parse_statement,
    table_refs,
)

T = QualifiedName("t")


@pytest.mark.parametrize(
    ("sql", "expected"),
    [
        ("CREATE DATABASE IF NOT EXISTS d", CreateDatabase("d", if_not_exists=True)),
        ("create database `my db`", CreateDatabase("my db")),
        ("DROP DATABASE IF EXISTS d FORCE", DropDatabase("d", if_exists=True, force=True)),
        ("DROP DATABASE d", DropDatabase("d")),
        ("SHOW DATABASES", ShowDatabases()),
        ("USE d;", Use("d")),
        ("SHOW TABLES", ShowTables()),
        ("SHOW FULL TABLES FROM d LIKE 'p%'", ShowTables("d", "p%", full=True)),
        ("SHOW CREATE TABLE db.t", ShowCreateTable(QualifiedName("t", db="db"))),
        ("SHOW PARTITIONS FROM t", ShowPartitions(T)),
        ("DESC t", Describe(T)),
        ("DESCRIBE `db`.`t`", Describe(QualifiedName("t", db="db"))),
        ("SHOW COLUMNS FROM t", ShowColumns(T)),
        ("SHOW FULL COLUMNS FROM t FROM db", ShowColumns(QualifiedName("t", db="db"), full=True)),
        ("SHOW FULL FIELDS IN `t` IN `db` LIKE '%'", ShowColumns(QualifiedName("t", db="db"), full=True, like="%")),
        ("SHOW INDEX FROM t", ShowIndex(T)),
        ("SHOW KEYS IN t FROM db", ShowIndex(QualifiedName("t", db="db"))),
        ("SHOW TABLE STATUS FROM d LIKE 'a%'", ShowTableStatus("d", like="a%")),
        ("SHOW CREATE DATABASE d", ShowCreateDatabase("d")),
        ("SHOW CREATE SCHEMA IF NOT EXISTS d", ShowCreateDatabase("d")),
        ("DROP TABLE IF EXISTS db.t FORCE", DropTable(QualifiedName("t", db="db"), True, True)),
        ("DROP TABLE t", DropTable(T)),
        ("RECOVER TABLE db.t", RecoverTable(QualifiedName("t", db="db"))),
        ("RECOVER DATABASE d", RecoverDatabase("d")),
        ("CREATE TABLE t2 LIKE db.t", CreateTableLike(QualifiedName("t2"), QualifiedName("t", db="db"))),
        ("CREATE TABLE t2 CLONE db.t", CreateTableClone(QualifiedName("t2"), QualifiedName("t", db="db"))),
        ("CREATE TABLE IF NOT EXISTS d2.t2 CLONE t AS OF '2024-01-01 00:00:00'",
         CreateTableClone(QualifiedName("t2", db="d2"), T, AsOfTime("2024-01-01 00:00:00"), True)),
        ("CREATE TABLE t2 CLONE t FOR TIME AS OF '2024-01-01'", CreateTableClone(QualifiedName("t2"), T,
                                                                                 AsOfTime("2024-01-01"))),
        ("CREATE TABLE t2 CLONE t FOR SYSTEM_TIME AS OF '2024-01-01'",
         CreateTableClone(QualifiedName("t2"), T, AsOfTime("2024-01-01"))),
        ("CREATE TABLE t2 CLONE t FOR VERSION AS OF 3", CreateTableClone(QualifiedName("t2"), T, AsOfVersion(3))),
        ("CREATE TABLE t2 CLONE t TAG 'v1'", CreateTableClone(QualifiedName("t2"), T, AsOfTag("v1"))),
        ("CREATE TABLE t2 CLONE t FOR TAG AS OF 'v1'", CreateTableClone(QualifiedName("t2"), T, AsOfTag("v1"))),
    ],
)
def test_simple_statements(sql: str, expected: Statement) -> None:
    assert parse_statement(sql) == expected


AGG_TABLE = """
CREATE TABLE IF NOT EXISTS example_db.agg (
    k1 INT KEY NOT NULL COMMENT "key one",
    k2 LARGEINT,
    v1 VARCHAR(2048) REPLACE,
    v2 SMALLINT SUM DEFAULT "10",
    v3 DATETIMEV2(3) MAX DEFAULT CURRENT_TIMESTAMP,
    v4 DECIMAL(10, 2) REPLACE_IF_NOT_NULL NULL DEFAULT NULL,
    v5 integer MIN DEFAULT -1
) ENGINE=OLAP
AGGREGATE KEY(k1, k2)
COMMENT 'an aggregate table'
PARTITION BY RANGE(k1) (
    PARTITION p1 VALUES LESS THAN ("10"),
    PARTITION p2 VALUES [("10"), ("20")),
    PARTITION p3 VALUES LESS THAN MAXVALUE
)
DISTRIBUTED BY HASH(k1, k2) BUCKETS 8
PROPERTIES ("Replication_Num" = "1", "storage_policy" = "cold_policy")
"""


def test_create_aggregate_table() -> None:
    stmt = parse_statement(AGG_TABLE)
    assert isinstance(stmt, CreateTable)
    assert stmt.table == QualifiedName("agg", db="example_db") and stmt.if_not_exists
    assert stmt.engine == "OLAP" and stmt.comment == "an aggregate table"
    assert stmt.keys_model == "AGGREGATE" and stmt.key_columns == ("k1", "k2")
    assert stmt.columns[0] == ColumnDef(
        "k1", ColumnType("INT"), nullable=False, comment="key one", is_key=True
    )
    assert stmt.columns[1] == ColumnDef("k2", ColumnType("LARGEINT"))
    assert stmt.columns[2] == ColumnDef("v1", ColumnType("VARCHAR", (2048,)), agg="REPLACE")
    assert stmt.columns[3] == ColumnDef("v2", ColumnType("SMALLINT"), agg="SUM", default="10")
    v3, v4, v5 = stmt.columns[4:]
    assert v3.type == ColumnType("DATETIME", (3,)) and v3.default is DefaultMarker.CURRENT_TIMESTAMP
    assert str(v4.type) == "DECIMAL(10,2)" and v4.agg == "REPLACE_IF_NOT_NULL" and v4.nullable
    assert v4.default is DefaultMarker.NULL
    assert v5.type == ColumnType("INT") and v5.default == "-1" and v5.agg == "MIN"
    assert stmt.partition is not None
    assert stmt.partition.kind == "RANGE" and stmt.partition.columns == ("k1",)
    assert stmt.partition.partitions == (
        PartitionDef("p1", "LESS_THAN", (("10",),)),
        PartitionDef("p2", "FIXED_RANGE", (("10",), ("20",))),
        PartitionDef("p3", "LESS_THAN", ()),
    )
    assert stmt.partition.partitions[2].is_maxvalue
    assert stmt.distribution == Distribution("HASH", ("k1", "k2"), 8)
    assert stmt.properties == {"replication_num": "1", "storage_policy": "cold_policy"}
    assert list(stmt.properties) == ["replication_num", "storage_policy"]


def test_create_duplicate_table_list_partitions_random_distribution() -> None:
    stmt = parse_statement(
        "create table t (city text, n bigint, j jsonb, b bool, d datev2, c char(3)) duplicate key(city) "
        "partition by list(city) (partition p_a values in ('a', 'b'), partition p_c values in (('c'))) "
        "distributed by random buckets auto"
    )
    assert isinstance(stmt, CreateTable)
    assert [str(c.type) for c in stmt.columns] == ["STRING", "BIGINT", "JSON", "BOOLEAN", "DATE", "CHAR(3)"]
    assert stmt.keys_model == "DUPLICATE" and stmt.engine is None
    assert stmt.partition is not None and stmt.partition.kind == "LIST"
    assert [p.values for p in stmt.partition.partitions if isinstance(p, PartitionDef)] == [
        (("a",), ("b",)), (("c",),)]
    assert stmt.distribution == Distribution("RANDOM", (), None)


def test_create_unique_table_minimal() -> None:
    stmt = parse_statement("CREATE TABLE t (id BIGINT, v STRING) UNIQUE KEY(id) DISTRIBUTED BY HASH(id)")
    assert isinstance(stmt, CreateTable)
    assert stmt.keys_model == "UNIQUE" and stmt.distribution == Distribution("HASH", ("id",), None)
    assert stmt.partition is None and stmt.properties == {}


def test_ctas_with_time_travel() -> None:
    stmt = parse_statement(
        'CREATE TABLE snap PROPERTIES ("replication_num" = "1") AS SELECT * FROM t FOR VERSION AS OF 3'
    )
    assert isinstance(stmt, CreateTableAs)
    assert stmt.table == QualifiedName("snap") and stmt.properties == {"replication_num": "1"}
    assert [r.as_of for r in table_refs(stmt.query.expr)] == [AsOfVersion(3)]


@pytest.mark.parametrize(
    ("sql", "message"),
    [
        ("CREATE TABLE t (q QUANTILE_STATE QUANTILE_UNION) AGGREGATE KEY(q)",
         "column type QUANTILE_STATE is not supported"),
        ("CREATE TABLE t (k INT, b BIGINT QUANTILE_UNION)", "aggregation type QUANTILE_UNION is not supported"),
        ("CREATE TABLE t (k INT) ENGINE=MYSQL", "ENGINE=MYSQL is not supported"),
        ("CREATE TABLE t (k INT, INDEX i (k) USING INVERTED)", "INDEX definitions are not supported"),
    ],
)
def test_create_table_unsupported(sql: str, message: str) -> None:
    with pytest.raises(UnsupportedStatement, match=message):
        parse_statement(sql)


@pytest.mark.parametrize("sql", ["CREATE TABLE t2 CLONE", "CREATE TABLE t2 CLONE t AS OF",
                                 "CREATE TABLE t2 CLONE t TAG v1", "CREATE TABLE t2 CLONE t FOR VERSION AS OF 'x'",
                                 "CREATE TABLE t2 CLONE t FOR TAG 'v1'", "CREATE TABLE t2 CLONE t extra"])
def test_create_table_clone_syntax_errors(sql: str) -> None:
    with pytest.raises(SqlSyntaxError):
        parse_statement(sql)


def alter(sql: str) -> AlterTable:
    stmt = parse_statement(sql)
    assert isinstance(stmt, AlterTable)
    return stmt


def test_alter_column_actions() -> None:
    stmt = alter(
        'ALTER TABLE db.t ADD COLUMN c INT DEFAULT "0" AFTER b, DROP COLUMN d, '
        "MODIFY COLUMN e BIGINT NOT NULL FIRST, RENAME COLUMN f g"
    )
    assert stmt.table == QualifiedName("t", db="db")
    assert stmt.actions == (
        AddColumn(ColumnDef("c", ColumnType("INT"), default="0"), ColumnPosition(after="b")),
        DropColumn("d"),
        ModifyColumn(ColumnDef("e", ColumnType("BIGINT"), nullable=False), ColumnPosition(first=True)),
        RenameColumn("f", "g"),
    )


def test_alter_add_columns_list() -> None:
    assert alter("ALTER TABLE t ADD COLUMN (x INT, y VARCHAR(10) SUM)").actions == (
        AddColumns((ColumnDef("x", ColumnType("INT")), ColumnDef("y", ColumnType("VARCHAR", (10,)), "SUM"))),
    )


def test_alter_partitions() -> None:
    assert alter(
        'ALTER TABLE t ADD PARTITION p4 VALUES LESS THAN ("40") DISTRIBUTED BY HASH(k1) BUCKETS 4'
    ).actions == (
        AddPartition(PartitionDef("p4", "LESS_THAN", (("40",),)), False, Distribution("HASH", ("k1",), 4)),
    )
    assert alter('ALTER TABLE t ADD PARTITION IF NOT EXISTS p5 VALUES IN ("z")').actions == (
        AddPartition(PartitionDef("p5", "IN", (("z",),)), True),
    )
    assert alter("ALTER TABLE t DROP PARTITION IF EXISTS p1").actions == (DropPartition("p1", True),)


@pytest.mark.parametrize(
    ("target", "names", "all_partitions"),
    [("(p1, p2)", ("p1", "p2"), False), ("(*)", (), True), ("p1", ("p1",), False)],
)
def test_alter_modify_partition(target: str, names: tuple[str, ...], all_partitions: bool) -> None:
    stmt = alter(f'ALTER TABLE t MODIFY PARTITION {target} SET ("storage_policy" = "cold")')
    assert stmt.actions == (ModifyPartition(names, {"storage_policy": "cold"}, all_partitions),)


def test_alter_set_and_rename() -> None:
    assert alter('ALTER TABLE t SET ("Storage_Policy" = "p", "x" = "1")').actions == (
        SetTableProperties({"storage_policy": "p", "x": "1"}),
    )
    assert alter("ALTER TABLE t RENAME t_new").actions == (RenameTable("t_new"),)


@pytest.mark.parametrize(("sql", "expected"), [
    ("ALTER TABLE t REPLACE WITH TABLE u", ReplaceWithTable("u")),
    ("ALTER TABLE t REPLACE WITH TABLE u PROPERTIES('swap' = 'true')", ReplaceWithTable("u")),
    ("ALTER TABLE x REPLACE WITH TABLE x__dbt_tmp PROPERTIES('swap'='False')", ReplaceWithTable("x__dbt_tmp", False)),
    ('ALTER TABLE t REPLACE WITH TABLE u PROPERTIES ("swap" = "false") FORCE', ReplaceWithTable("u", False, True)),
])
def test_alter_replace_with_table(sql: str, expected: ReplaceWithTable) -> None:
    assert alter(sql).actions == (expected,)


@pytest.mark.parametrize("sql", ["ALTER TABLE t REPLACE WITH TABLE u PROPERTIES ('swap' = 'yes')",
                                 "ALTER TABLE t REPLACE WITH TABLE u PROPERTIES ('force' = 'true')"])
def test_alter_replace_with_table_bad_properties(sql: str) -> None:
    with pytest.raises(SqlSyntaxError):
        parse_statement(sql)


def test_show_where_filters_parse_as_conditions() -> None:
    tables = parse_statement("SHOW FULL TABLES FROM d WHERE Table_type = 'BASE TABLE'")
    assert isinstance(tables, ShowTables) and tables.db == "d" and tables.full and tables.like is None
    assert tables.where is not None and tables.where.sql() == "Table_type = 'BASE TABLE'"
    index = parse_statement("SHOW INDEXES FROM t WHERE Key_name = 'PRIMARY'")
    assert isinstance(index, ShowIndex) and index.where is not None
    status = parse_statement("SHOW TABLE STATUS WHERE Rows > 0")
    assert isinstance(status, ShowTableStatus) and status.where is not None and status.like is None
