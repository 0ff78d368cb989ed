"""CREATE/DROP/RECOVER TABLE, properties, SHOW TABLES / CREATE TABLE / PARTITIONS, DESC."""

from __future__ import annotations

import pymysql
import pytest

from tests.query.sqlkit import columns, fails, rows, run, show_create, sorted_rows

AGGREGATE = """CREATE TABLE agg (
  d DATE NOT NULL, k INT NOT NULL,
  s BIGINT SUM DEFAULT "0", mn INT MIN, mx INT MAX, r VARCHAR(20) REPLACE, rn VARCHAR(20) REPLACE_IF_NOT_NULL
) AGGREGATE KEY(d, k) COMMENT "sales by day"
PARTITION BY RANGE(d) (PARTITION p2023 VALUES LESS THAN ("2024-01-01"),
                       PARTITION p2024 VALUES LESS THAN ("2025-01-01"))
DISTRIBUTED BY HASH(k) BUCKETS 4
PROPERTIES ("enable_time_travel" = "true", "time_travel_retention_days" = "3", "storage_medium" = "hdd")"""

UNIQUE_LIST = """CREATE TABLE uniq (city VARCHAR(10) NOT NULL, id INT NOT NULL, v INT) UNIQUE KEY(city, id)
PARTITION BY LIST(city) (PARTITION p_east VALUES IN ("ny", "bos"), PARTITION p_west VALUES IN ("sf"))
DISTRIBUTED BY HASH(id) BUCKETS 3 PROPERTIES ("replication_num" = "1")"""

DUPLICATE_RANGE = """CREATE TABLE dup (k INT, v VARCHAR(8)) DUPLICATE KEY(k)
PARTITION BY RANGE(k) (PARTITION p_low VALUES LESS THAN ("10"), PARTITION p_high VALUES LESS THAN MAXVALUE)
DISTRIBUTED BY HASH(k) BUCKETS 2"""

# The seed document's (004, time travel) own SHOW CREATE TABLE output, from a Doris 3.x with a storage
# vault: its storage-only properties are accepted, kept and printed back (query.table_definition).
SEED_V5 = """CREATE TABLE `tt_travel_v5` (
  `id` int NULL,
  `status` varchar(20) NULL,
  `amount` decimal(10,2) NULL
) ENGINE=OLAP
DUPLICATE KEY(`id`)
DISTRIBUTED BY HASH(`id`) BUCKETS 3
PROPERTIES (
"file_cache_ttl_seconds" = "0",
"is_being_synced" = "false",
"storage_medium" = "hdd",
"storage_format" = "V2",
"inverted_index_storage_format" = "V3",
"light_schema_change" = "true",
"storage_vault_id" = "1",
"storage_vault_name" = "dr_s3_vault",
"disable_auto_compaction" = "false",
"group_commit_interval_ms" = "10000",
"group_commit_data_bytes" = "134217728",
"enable_time_travel" = "true",
"time_travel_retention_days" = "7"
);"""


def test_show_create_table_keeps_properties(conn: pymysql.connections.Connection, db: str) -> None:
    run(conn, AGGREGATE)
    text = show_create(conn, "agg")
    for fragment in ("CREATE TABLE `agg` (", "`s` bigint SUM NULL DEFAULT \"0\"",
                     "`rn` varchar(20) REPLACE_IF_NOT_NULL",
                     "`d` date NOT NULL", ") ENGINE=OLAP", "AGGREGATE KEY(`d`, `k`)", "COMMENT 'sales by day'",
                     "PARTITION BY RANGE(`d`)", 'PARTITION p2024 VALUES [("2024-01-01"), ("2025-01-01"))',
                     "DISTRIBUTED BY HASH(`k`) BUCKETS 4", '"enable_time_travel" = "true"',
                     '"time_travel_retention_days" = "3"', '"storage_medium" = "hdd"'):
        assert fragment in text, (fragment, text)
    run(conn, UNIQUE_LIST)
    text = show_create(conn, "uniq")
    for fragment in ("UNIQUE KEY(`city`, `id`)", "PARTITION BY LIST(`city`)", '"replication_num" = "1"',
                     'PARTITION p_east VALUES IN (("ny"), ("bos"))', "DISTRIBUTED BY HASH(`id`) BUCKETS 3"):
        assert fragment in text, (fragment, text)
    run(conn, "CREATE TABLE plain (k INT, v INT) DISTRIBUTED BY RANDOM BUCKETS 2")
    assert "DUPLICATE KEY(`k`, `v`)" in show_create(conn, "plain")
    assert "DISTRIBUTED BY RANDOM BUCKETS 2" in show_create(conn, f"{db}.plain")


@pytest.mark.parametrize("ddl", [AGGREGATE, UNIQUE_LIST, DUPLICATE_RANGE, SEED_V5])
def test_show_create_table_parses_back(conn: pymysql.connections.Connection, db: str, ddl: str) -> None:
    """SHOW CREATE TABLE is a statement: run under another name it makes the same table, and the
    open ends of ranges (LESS THAN, MAXVALUE) still route rows."""
    run(conn, ddl)
    name = ddl.split()[2].strip("`")
    text = show_create(conn, name)
    if name == "tt_travel_v5":
        for kept in ('"storage_vault_name" = "dr_s3_vault"', '"storage_vault_id" = "1"', '"storage_format" = "V2"',
                     '"enable_time_travel" = "true"'):
            assert kept in text, (kept, text)
    run(conn, text.replace(f"CREATE TABLE `{name}`", "CREATE TABLE `copy`"))
    assert show_create(conn, "copy") == text.replace(f"CREATE TABLE `{name}`", "CREATE TABLE `copy`")
    if name == "dup":
        assert run(conn, "INSERT INTO copy VALUES (-5, 'low'), (5, 'low'), (2000000000, 'high')") == 3
        parts = {r[1]: r[-1] for r in rows(conn, "SHOW PARTITIONS FROM copy")}
        assert parts == {"p_low": 2, "p_high": 1}
    if name == "agg":
        assert run(conn, "INSERT INTO copy (d, k, s) VALUES ('1999-05-01', 1, 1)") == 1


def test_desc(conn: pymysql.connections.Connection, db: str) -> None:
    run(conn, AGGREGATE)
    assert columns(conn, "DESC agg") == ["Field", "Type", "Null", "Key", "Default", "Extra"]
    assert rows(conn, "DESC agg") == [
        ("d", "date", "No", "true", None, ""), ("k", "int", "No", "true", None, ""),
        ("s", "bigint", "Yes", "false", "0", "SUM"), ("mn", "int", "Yes", "false", None, "MIN"),
        ("mx", "int", "Yes", "false", None, "MAX"), ("r", "varchar(20)", "Yes", "false", None, "REPLACE"),
        ("rn", "varchar(20)", "Yes", "false", None, "REPLACE_IF_NOT_NULL")]
    assert rows(conn, f"DESCRIBE {db}.agg") == rows(conn, "DESC agg")
    fails(conn, "DESC nope", 1146, "nope")


def test_show_tables(conn: pymysql.connections.Connection, db: str, other: pymysql.connections.Connection) -> None:
    for name in ("orders", "order_items", "users"):
        run(conn, f"CREATE TABLE {name} (k INT) DISTRIBUTED BY HASH(k) BUCKETS 1")
    assert rows(other, "SHOW TABLES") == [("order_items",), ("orders",), ("users",)]
    assert columns(other, "SHOW TABLES") == [f"Tables_in_{db}"]
    assert rows(other, "SHOW TABLES LIKE 'order%'") == [("order_items",), ("orders",)]
    assert rows(other, "SHOW TABLES LIKE 'user_'") == [("users",)]
    assert rows(other, f"SHOW FULL TABLES FROM {db} LIKE 'users'") == [("users", "BASE TABLE")]


def test_show_partitions(conn: pymysql.connections.Connection, db: str) -> None:
    run(conn, DUPLICATE_RANGE)
    run(conn, UNIQUE_LIST)
    run(conn, "INSERT INTO dup VALUES (1, 'a'), (2, 'b'), (50, 'c')")
    found = rows(conn, "SHOW PARTITIONS FROM dup")
    cols = columns(conn, "SHOW PARTITIONS FROM dup")
    assert cols[:3] == ["PartitionId", "PartitionName", "VisibleVersion"] and "Buckets" in cols
    by_name = {r[1]: dict(zip(cols, r, strict=True)) for r in found}
    assert list(by_name) == ["p_low", "p_high"]
    assert by_name["p_low"]["VisibleVersion"] == 1 and by_name["p_low"]["RowCount"] == 2
    assert by_name["p_low"]["Buckets"] == 2 and by_name["p_low"]["PartitionKey"] == "k"
    assert by_name["p_low"]["Range"] == "[types: [INT]; keys: [-2147483648]; ..types: [INT]; keys: [10]; )"
    assert by_name["p_high"]["Range"] == "[types: [INT]; keys: [10]; ..types: [INT]; keys: [MAXVALUE]; )"
    listed = {r[1]: dict(zip(cols, r, strict=True)) for r in rows(conn, "SHOW PARTITIONS FROM uniq")}
    assert listed["p_east"]["Range"] == "[types: [VARCHAR]; keys: [ny]; , types: [VARCHAR]; keys: [bos]; ]"
    assert listed["p_west"]["VisibleVersion"] == 0
    fails(conn, "SHOW PARTITIONS FROM nope", 1146, "nope")


def test_create_table_errors(conn: pymysql.connections.Connection, db: str) -> None:
    run(conn, "CREATE TABLE t (k INT, v INT) DISTRIBUTED BY HASH(k) BUCKETS 2")
    fails(conn, "CREATE TABLE t (k INT)", 1050, "'t' already exists")
    run(conn, "CREATE TABLE IF NOT EXISTS t (x INT)")
    assert [r[0] for r in rows(conn, "DESC t")] == ["k", "v"]
    fails(conn, 'CREATE TABLE b1 (k INT) PROPERTIES ("no_such_property" = "1")', 1210, "no_such_property")
    fails(conn, 'CREATE TABLE b2 (k INT) PROPERTIES ("enable_time_travel" = "maybe")', 1210,
          "enable_time_travel", "maybe")
    fails(conn, 'CREATE TABLE b3 (k INT) PROPERTIES ("time_travel_retention_days" = "0")', 1210,
          "time_travel_retention_days")
    fails(conn, "CREATE TABLE b4 (k INT, v INT SUM) DUPLICATE KEY(k)", 1210, "'v'", "aggregation")
    fails(conn, "CREATE TABLE b5 (k INT, v INT) AGGREGATE KEY(k)", 1210, "'v'", "aggregation type")
    fails(conn, "CREATE TABLE b6 (k INT, v INT) UNIQUE KEY(v)", 1210, "prefix")
    fails(conn, "CREATE TABLE b7 (k INT, k INT)", 1060, "'k'")
    fails(conn, "CREATE TABLE b8 (k INT) DISTRIBUTED BY HASH(zz) BUCKETS 2", 1054, "zz")
    fails(conn, 'CREATE TABLE b9 (k INT) PARTITION BY RANGE(zz) (PARTITION p VALUES LESS THAN ("1"))', 1054, "zz")
    fails(conn, "CREATE TABLE b10 (k INT) UNIQUE KEY(k) DISTRIBUTED BY RANDOM BUCKETS 2", 1210, "HASH")
    fails(conn, "CREATE TABLE b11 (k INT) PARTITION BY LIST(k) (PARTITION p VALUES IN (1), PARTITION P "
                "VALUES IN (2))", 1517, "p")
    fails(conn, "CREATE TABLE b12 (k INT, v VERYFANCY)", 1064, "VERYFANCY")
    fails(conn, "CREATE TABLE nodb.t (k INT)", 1049, "nodb")
    assert rows(conn, "SHOW TABLES") == [("t",)]


def test_alter_table_set_properties(conn: pymysql.connections.Connection, db: str,
                                    other: pymysql.connections.Connection) -> None:
    run(conn, UNIQUE_LIST)
    run(conn, 'ALTER TABLE uniq SET ("storage_medium" = "hdd")')
    assert '"storage_medium" = "hdd"' in show_create(other, "uniq")
    run(conn, 'ALTER TABLE uniq SET ("enable_time_travel" = "true")')
    text = show_create(other, "uniq")
    assert '"enable_time_travel" = "true"' in text and '"time_travel_retention_days" = "7"' in text
    fails(conn, 'ALTER TABLE uniq SET ("colour" = "blue")', 1210, "colour")
    fails(conn, 'ALTER TABLE uniq SET ("storage_medium" = "tape")', 1210, "storage_medium", "tape")
    fails(conn, 'ALTER TABLE uniq SET ("replication_num" = "three")', 1210, "replication_num", "three")
    fails(conn, 'ALTER TABLE uniq SET ("time_travel_retention_days" = "365")', 1210, "time_travel_retention_days")
    fails(conn, 'ALTER TABLE nope SET ("storage_medium" = "hdd")', 1146, "nope")
    after = show_create(other, "uniq")
    assert "colour" not in after and "tape" not in after and "365" not in after and after == text


def test_drop_recover_and_force(conn: pymysql.connections.Connection, db: str,
                                other: pymysql.connections.Connection) -> None:
    run(conn, DUPLICATE_RANGE)
    run(conn, "INSERT INTO dup VALUES (1, 'a'), (20, 'b')")
    run(conn, "DROP TABLE dup")
    assert rows(other, "SHOW TABLES") == []
    fails(other, "SELECT * FROM dup", 1146, "dup")
    fails(conn, "DROP TABLE dup", 1146, "dup")
    run(conn, "DROP TABLE IF EXISTS dup")
    run(conn, "RECOVER TABLE dup")
    assert sorted_rows(other, "SELECT * FROM dup") == [(1, "a"), (20, "b")]
    run(conn, "INSERT INTO dup VALUES (3, 'c')")
    assert sorted_rows(other, "SELECT k FROM dup") == [(1,), (3,), (20,)]
    # A table of the same name made after a drop: RECOVER must not overwrite it.
    run(conn, "DROP TABLE dup")
    run(conn, "CREATE TABLE dup (x INT) DISTRIBUTED BY HASH(x) BUCKETS 1")
    fails(conn, "RECOVER TABLE dup", 1050, "dup", "already exists")
    run(conn, "DROP TABLE dup FORCE")
    # FORCE is final; the older, non-forced drop can still come back.
    run(conn, "RECOVER TABLE dup")
    assert sorted_rows(other, "SELECT k FROM dup") == [(1,), (3,), (20,)]
    run(conn, "DROP TABLE dup FORCE")
    fails(conn, "RECOVER TABLE dup", 1146, "dup")
    fails(conn, "RECOVER TABLE never_was", 1146, "never_was")
    run(conn, "CREATE TABLE dup (x INT) DISTRIBUTED BY HASH(x) BUCKETS 1")
    assert rows(other, "SELECT * FROM dup") == []
