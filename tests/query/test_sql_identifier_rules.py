"""Doris' naming rules for what a statement creates (query.identifiers): a 10,000-character name
or one with a NUL byte is refused with Doris' error naming the rule, and a legal name — up to the
length limit, in any script — still works."""

from __future__ import annotations

import pytest
from pymysql.connections import Connection as Conn

from tests.query.sqlkit import fails, rows, run

pytestmark = pytest.mark.integration
TABLE_TAIL = "DUPLICATE KEY(k) DISTRIBUTED BY HASH(k) BUCKETS 1"


def test_huge_and_nul_identifiers_are_refused(conn: Conn, db: str) -> None:
    huge = "a" * 10_000
    message = fails(conn, f"CREATE DATABASE `{huge}`", 1102, "Incorrect database name", "10000 characters")
    assert len(message) < 1000, "the error must not echo a 10,000-character name"
    fails(conn, f"CREATE TABLE `{huge}` (k INT) {TABLE_TAIL}", 1105, "errCode = 5089", "table_name_length_limit")
    fails(conn, f"CREATE TABLE t (k INT, `{huge}` INT) {TABLE_TAIL}", 1166, "Incorrect column name")
    fails(conn, "CREATE DATABASE `d\x00x`", 1102, "d\\x00x")
    fails(conn, f"CREATE TABLE `t\x00x` (k INT) {TABLE_TAIL}", 1103, "Incorrect table name", "regex")
    fails(conn, f"CREATE TABLE t (k INT, `v\x00` INT) {TABLE_TAIL}", 1166, "Incorrect column name")
    fails(conn, f"CREATE TABLE `../etc` (k INT) {TABLE_TAIL}", 1103, "Incorrect table name")
    fails(conn, f"CREATE TABLE `1abc` (k INT) {TABLE_TAIL}", 1103, "Incorrect table name")
    fails(conn, "CREATE TABLE t (k INT) DUPLICATE KEY(k) PARTITION BY RANGE(k) (PARTITION `p x` VALUES LESS "
                "THAN ('10')) DISTRIBUTED BY HASH(k) BUCKETS 1", 1567, "Incorrect partition name")
    fails(conn, "CREATE STORAGE POLICY `pol\x00` PROPERTIES ('storage_resource' = 'r', 'cooldown_ttl' = '1d')",
          1105, "errCode = 5063", "Incorrect storage policy name")
    fails(conn, f"CREATE RESOURCE \"{huge}\" PROPERTIES ('type' = 's3')", 1105, "errCode = 5063",
          "Incorrect resource name")
    fails(conn, "CREATE ROUTINE LOAD `job/x` ON t FROM KAFKA ('kafka_topic' = 'x')", 1105, "errCode = 5063",
          "Incorrect routine load name")
    assert rows(conn, "SHOW TABLES") == [], "nothing refused was created"


def test_legal_names_still_work(conn: Conn, db: str) -> None:
    longest = "t" + "x" * 63
    run(conn, f"CREATE TABLE {longest} (k INT, `v-1` INT, `@c.d` INT) {TABLE_TAIL}")
    run(conn, "CREATE TABLE `表_1` (k INT, `列` INT) " + TABLE_TAIL)
    run(conn, f"ALTER TABLE {longest} ADD COLUMN w INT")
    fails(conn, f"ALTER TABLE {longest} ADD COLUMN `w\x00` INT", 1166, "Incorrect column name")
    fails(conn, f"ALTER TABLE {longest} RENAME {longest}x", 1105, "errCode = 5089", "table_name_length_limit")
    run(conn, f"INSERT INTO {longest} VALUES (1, 2, 3, 4)")
    assert rows(conn, f"SELECT k, `v-1`, `@c.d`, w FROM {longest}") == [(1, 2, 3, 4)]
    assert sorted(r[0] for r in rows(conn, "SHOW TABLES")) == sorted([longest, "表_1"])
