"""information_schema's pushed-down WHERE (query.information_schema.Scope) narrows what is built,
never what a query returns: each query is asked as written and as `SELECT * FROM (SELECT * FROM
information_schema.<t>) everything WHERE …`, where nothing can be pushed (the full build, then
DuckDB's filter), over two databases with a table name in both, a mixed-case name, a view, a
partitioned table and a Unique Key table — by root and by a user who sees only part of them."""

from __future__ import annotations

from typing import Any

import pymysql
import pytest

from tests.query.sqlkit import rows, run

PROPS = 'PROPERTIES ("replication_num" = "1", "disable_auto_compaction" = "true")'
# The views a WHERE on TABLE_SCHEMA / TABLE_NAME narrows.
BY_TABLE = ("tables", "columns", "partitions", "rowsets", "statistics", "key_column_usage", "table_constraints",
            "views")
PREDICATES = (
    "TABLE_SCHEMA = '{db}' AND TABLE_NAME = 't1'",
    "TABLE_NAME = 't1'",
    "TABLE_NAME = 'MixedCase'",
    "TABLE_NAME = 'mixedcase'",
    "TABLE_SCHEMA = '{DB}'",
    "TABLE_NAME IN ('t1', 'MixedCase', 'nope') AND TABLE_SCHEMA IN ('{db}', '{db2}')",
    "TABLE_NAME = 't1' OR TABLE_SCHEMA = '{db2}'",
    "(TABLE_NAME = 'v1' OR TABLE_NAME = 'p') AND TABLE_SCHEMA IN ('{db}', '{db2}')",
    "TABLE_NAME = ''",
    "TABLE_NAME = NULL",
    "TABLE_NAME IN ('t1', NULL)",
    "TABLE_NAME IS NULL",
    "NOT (TABLE_NAME = 't1') AND TABLE_SCHEMA = '{db}'",
    "TABLE_SCHEMA = '{db}' AND TABLE_SCHEMA = '{db2}'",
    "'t1' = TABLE_NAME AND '{db2}' = TABLE_SCHEMA",
    "TABLE_NAME LIKE 't%' AND TABLE_SCHEMA = '{db2}'",
    "TABLE_NAME LIKE 'M%C_s_' AND TABLE_SCHEMA LIKE '{db}%'",
    "TABLE_NAME LIKE 'mixed%'",
    "TABLE_NAME LIKE '%1' AND TABLE_NAME LIKE 't%' AND TABLE_SCHEMA IN ('{db}', '{db2}')",
    "TABLE_NAME NOT LIKE 't%' AND TABLE_SCHEMA = '{db}'",
    "TABLE_NAME LIKE 't\\_1' OR TABLE_NAME LIKE 'v_'",
    "TABLE_SCHEMA = 'information_schema' AND TABLE_NAME = 'rowsets'",
)
OTHER = (
    "SELECT * FROM information_schema.columns WHERE TABLE_SCHEMA = '{db}' AND COLUMN_NAME = 'k'",
    "SELECT * FROM information_schema.columns WHERE COLUMN_NAME IN ('v', 'ROWSET_ID') AND TABLE_NAME <> 'x'",
    "SELECT * FROM information_schema.schemata WHERE SCHEMA_NAME IN ('{db}', '{db2}', 'information_schema')",
    "SELECT * FROM information_schema.schemata WHERE SCHEMA_NAME = '{DB}'",
    # A condition on the enclosing query's table must not narrow the subquery's.
    "SELECT t.TABLE_NAME, (SELECT COUNT(*) FROM information_schema.columns c WHERE t.TABLE_NAME = 't1' AND "
    "c.TABLE_SCHEMA = '{db}') FROM information_schema.tables t WHERE t.TABLE_SCHEMA = '{db}'",
)


def _unpushable(sql: str) -> str:
    """`sql` with each information_schema table read whole first: nothing for the WHERE to narrow."""
    for view in (*BY_TABLE, "schemata"):
        for alias, named in ((" t ", " t "), (" c ", " c "), (" ", " everything ")):
            sql = sql.replace(f"FROM information_schema.{view}{alias}",
                              f"FROM (SELECT * FROM information_schema.{view}){named}")
    return sql


def _answer(conn: pymysql.connections.Connection, sql: str) -> list[tuple[Any, ...]] | str:
    try:
        return sorted(rows(conn, sql), key=repr)
    except pymysql.MySQLError as exc:
        return f"error {exc.args[0]}"


@pytest.fixture
def catalog(conn: pymysql.connections.Connection, db: str) -> Any:
    db2 = f"{db}_b"
    run(conn, f"CREATE DATABASE {db2}")
    tail = f"DISTRIBUTED BY HASH(k) BUCKETS 2 {PROPS}"
    run(conn, f"CREATE TABLE {db}.t1 (k INT, v INT) UNIQUE KEY(k) {tail}")
    run(conn, f"CREATE TABLE {db}.MixedCase (k INT, v INT) DUPLICATE KEY(k) {tail}")
    run(conn, f"CREATE TABLE {db}.p (k INT, v INT) DUPLICATE KEY(k) PARTITION BY RANGE(k) (PARTITION p1 VALUES "
              f"LESS THAN (10), PARTITION p2 VALUES LESS THAN (20)) {tail}")
    run(conn, f"CREATE TABLE {db2}.t1 (k INT, w VARCHAR(10)) DUPLICATE KEY(k) {tail}")
    run(conn, f"CREATE VIEW {db2}.v1 AS SELECT k FROM {db2}.t1")
    for table, values in (("t1", "(1, 1), (2, 2)"), ("MixedCase", "(1, 1)"), ("p", "(1, 1), (15, 2)")):
        run(conn, f"INSERT INTO {db}.{table} VALUES {values}")
        run(conn, f"INSERT INTO {db}.{table} VALUES {values}")
    run(conn, f"INSERT INTO {db2}.t1 VALUES (1, 'a')")
    yield db, db2
    run(conn, f"DROP DATABASE IF EXISTS {db2} FORCE")


def _queries(db: str, db2: str) -> list[str]:
    names = {"db": db, "db2": db2, "DB": db.upper()}
    found = [f"SELECT * FROM information_schema.{view} WHERE {p}".format(**names)
             for view in BY_TABLE for p in PREDICATES]
    return found + [sql.format(**names) for sql in OTHER]


def _same_answers(conn: pymysql.connections.Connection, db: str, db2: str) -> int:
    answered = 0
    for sql in _queries(db, db2):
        pushed, whole = _answer(conn, sql), _answer(conn, _unpushable(sql))
        assert pushed == whole, f"{sql}\n  pushed down: {pushed}\n  full build:  {whole}"
        answered += isinstance(pushed, list) and bool(pushed)
    return answered


def test_pushdown_answers_what_the_full_build_answers(conn: pymysql.connections.Connection, catalog: Any) -> None:
    db, db2 = catalog
    assert _unpushable("SELECT * FROM information_schema.tables WHERE TABLE_NAME = 'x'") == (
        "SELECT * FROM (SELECT * FROM information_schema.tables) everything WHERE TABLE_NAME = 'x'")
    assert _same_answers(conn, db, db2) > 40  # most questions have an answer: the comparison is not vacuous


def test_pushdown_answers_a_user_what_the_full_build_answers(conn: pymysql.connections.Connection, catalog: Any,
                                                             user: tuple[str, str]) -> None:
    db, db2 = catalog
    name, password = user
    run(conn, f"GRANT SELECT_PRIV ON {db}.t1 TO '{name}'")
    run(conn, f"GRANT SELECT_PRIV ON {db2}.* TO '{name}'")
    me = pymysql.connect(host=conn.host, port=conn.port, user=name, password=password, autocommit=True)
    try:
        assert _same_answers(me, db, db2) > 20
        assert rows(me, f"SELECT TABLE_SCHEMA, TABLE_NAME FROM information_schema.tables WHERE TABLE_SCHEMA IN "
                        f"('{db}', '{db2}') AND TABLE_NAME IN ('t1', 'MixedCase', 'p', 'v1') ORDER BY 1, 2") == [
            (db, "t1"), (db2, "t1"), (db2, "v1")]
    finally:
        me.close()
