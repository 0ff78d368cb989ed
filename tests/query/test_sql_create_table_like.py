"""CREATE TABLE … LIKE through the SQL port: the new table has the source's columns, keys,
partitions, distribution and properties, and none of its rows.

`test_doris_decimal_suite` follows Doris' regression suite
regression-test/suites/ddl_p0/test_create_table_like.groovy (DESC of both tables equal, an INSERT
into the copy reads back)."""

from __future__ import annotations

from decimal import Decimal

import pymysql

from tests.query.sqlkit import fails, rows, run, show_create

TABLE_EXISTS = 1050
NO_SUCH_TABLE = 1146


def test_doris_decimal_suite(conn: pymysql.connections.Connection, db: str) -> None:
    run(conn, "CREATE TABLE decimal_test (`name` VARCHAR(10) COMMENT \"1m size\", id SMALLINT COMMENT "
              "\"[-32768, 32767]\", timestamp1 DECIMAL(10, 0) NULL COMMENT \"c1\", timestamp2 DECIMAL(10, 1) NULL "
              "COMMENT \"c2\", timestamp3 DECIMALV3(10, 0) NULL COMMENT \"c3\", timestamp4 DECIMALV3(10, 1) NULL "
              "COMMENT \"c4\") DISTRIBUTED BY HASH(id) BUCKETS 1 PROPERTIES ('replication_num' = '1')")
    run(conn, "CREATE TABLE decimal_test_like LIKE decimal_test")
    assert rows(conn, "DESC decimal_test_like") == rows(conn, "DESC decimal_test")
    run(conn, "INSERT INTO decimal_test_like (`name`, id, timestamp1, timestamp2, timestamp3, timestamp4) "
              "VALUES ('test1', 1, 1234567891, 123456789, 1234567891, 123456789)")
    assert rows(conn, "SELECT * FROM decimal_test_like") == [
        ("test1", 1, Decimal("1234567891"), Decimal("123456789.0"), Decimal("1234567891"), Decimal("123456789.0"))]
    assert rows(conn, "SELECT count(*) FROM decimal_test") == [(0,)]


def test_copies_keys_partitions_distribution_and_properties(conn: pymysql.connections.Connection, db: str) -> None:
    run(conn, "CREATE TABLE src (dt DATE, k INT, v BIGINT SUM DEFAULT \"0\") AGGREGATE KEY(dt, k) "
              "COMMENT 'the source' PARTITION BY RANGE(dt) (PARTITION p1 VALUES LESS THAN (\"2026-01-01\"), "
              "PARTITION p2 VALUES LESS THAN (\"2027-01-01\")) DISTRIBUTED BY HASH(k) BUCKETS 3 "
              "PROPERTIES (\"enable_time_travel\" = \"true\", \"time_travel_retention_days\" = \"3\")")
    run(conn, "ALTER TABLE src ADD PARTITION p3 VALUES LESS THAN (\"2028-01-01\")")
    run(conn, "ALTER TABLE src DROP PARTITION p1")
    run(conn, "INSERT INTO src VALUES ('2026-05-01', 1, 5)")
    run(conn, "CREATE TABLE copy LIKE src")
    assert show_create(conn, "copy").replace("`copy`", "`src`") == show_create(conn, "src")
    assert [r[1] for r in rows(conn, "SHOW PARTITIONS FROM copy")] == ["p2", "p3"]
    assert rows(conn, "SELECT count(*) FROM copy") == [(0,)]
    run(conn, "INSERT INTO copy VALUES ('2026-05-01', 1, 5), ('2026-05-01', 1, 6)")
    assert rows(conn, "SELECT k, v FROM copy") == [(1, 11)]
    assert rows(conn, "SHOW TIME TRAVEL ON copy")[0][3] == 3


def test_if_not_exists_other_database_and_errors(conn: pymysql.connections.Connection, db: str) -> None:
    run(conn, "CREATE TABLE s (k INT) UNIQUE KEY(k) DISTRIBUTED BY HASH(k) BUCKETS 1")
    run(conn, "CREATE TABLE c LIKE s")
    fails(conn, "CREATE TABLE c LIKE s", TABLE_EXISTS, "c")
    run(conn, "CREATE TABLE IF NOT EXISTS c LIKE s")
    fails(conn, "CREATE TABLE c2 LIKE nope", NO_SUCH_TABLE, "nope")
    other = f"{db}_other"
    run(conn, f"CREATE DATABASE {other}")
    try:
        run(conn, f"CREATE TABLE {other}.c LIKE {db}.s")
        assert "UNIQUE KEY(`k`)" in show_create(conn, f"{other}.c")
    finally:
        run(conn, f"DROP DATABASE {other} FORCE")
