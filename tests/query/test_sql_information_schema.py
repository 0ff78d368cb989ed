"""information_schema.tables / columns / rowsets through pymysql."""

from __future__ import annotations

import pymysql

from tests.query.sqlkit import columns, fails, rows, run, values


def test_tables_and_columns(conn: pymysql.connections.Connection, db: str,
                            other: pymysql.connections.Connection) -> None:
    run(conn, 'CREATE TABLE d (k INT NOT NULL, v VARCHAR(7) DEFAULT "x") DUPLICATE KEY(k) COMMENT "dup t" '
              "DISTRIBUTED BY HASH(k) BUCKETS 2")
    run(conn, "CREATE TABLE a (k INT, s BIGINT SUM) AGGREGATE KEY(k) DISTRIBUTED BY HASH(k) BUCKETS 2")
    run(conn, "INSERT INTO d VALUES (1, 'a'), (2, 'b')")
    found = rows(other, f"SELECT TABLE_NAME, TABLE_TYPE, TABLE_ROWS, TABLE_COMMENT FROM information_schema.tables "
                        f"WHERE TABLE_SCHEMA = '{db}' ORDER BY TABLE_NAME")
    assert found == [("a", "BASE TABLE", 0, ""), ("d", "BASE TABLE", 2, "dup t")]
    cols = rows(other, f"SELECT TABLE_NAME, COLUMN_NAME, ORDINAL_POSITION, COLUMN_DEFAULT, IS_NULLABLE, DATA_TYPE, "
                       f"COLUMN_TYPE, COLUMN_KEY FROM information_schema.columns WHERE TABLE_SCHEMA = '{db}' "
                       f"ORDER BY TABLE_NAME, ORDINAL_POSITION")
    assert cols == [("a", "k", 1, None, "YES", "int", "int", "AGG"), ("a", "s", 2, None, "YES", "bigint", "bigint", ""),
                    ("d", "k", 1, None, "NO", "int", "int", "DUP"),
                    ("d", "v", 2, "x", "YES", "varchar", "varchar(7)", "")]
    run(conn, "ALTER TABLE d ADD COLUMN n INT")
    run(conn, "DROP TABLE a")
    assert rows(other, f"SELECT TABLE_NAME FROM information_schema.tables WHERE TABLE_SCHEMA = '{db}'") == [("d",)]
    assert rows(other, f"SELECT max(ORDINAL_POSITION) FROM information_schema.columns WHERE TABLE_SCHEMA = '{db}' "
                       "AND TABLE_NAME = 'd'") == [(3,)]
    assert (db,) in rows(other, "SELECT SCHEMA_NAME FROM information_schema.schemata")
    fails(other, "SELECT * FROM information_schema.no_such_view", 1146, "no_such_view")


def test_rowsets(conn: pymysql.connections.Connection, db: str) -> None:
    run(conn, """CREATE TABLE r (k INT, v INT) DUPLICATE KEY(k)
                 PARTITION BY RANGE(k) (PARTITION p1 VALUES LESS THAN ("10"), PARTITION p2 VALUES LESS THAN ("20"))
                 DISTRIBUTED BY HASH(k) BUCKETS 3""")
    run(conn, f"INSERT INTO r VALUES {values([(k, k) for k in range(20)])}")
    run(conn, "INSERT INTO r VALUES (15, 15)")
    query = (f"SELECT * FROM information_schema.rowsets WHERE TABLE_SCHEMA = '{db}' AND TABLE_NAME = 'r' "
             "ORDER BY PARTITION_NAME, START_VERSION, TABLET_ID")
    names = columns(conn, query)
    for doris in ("BACKEND_ID", "ROWSET_ID", "TABLET_ID", "ROWSET_NUM_ROWS", "TXN_ID", "NUM_SEGMENTS",
                  "START_VERSION", "END_VERSION", "INDEX_DISK_SIZE", "DATA_DISK_SIZE", "CREATION_TIME",
                  "NEWEST_WRITE_TIMESTAMP", "TABLE_NAME", "PARTITION_NAME", "STATE", "TIER"):
        assert doris in names, doris
    found = [dict(zip(names, r, strict=True)) for r in rows(conn, query)]
    assert sum(r["ROWSET_NUM_ROWS"] for r in found) == 21
    assert {r["PARTITION_NAME"] for r in found} == {"p1", "p2"}
    assert {r["STATE"] for r in found} == {"visible"} and {r["TIER"] for r in found} == {"ssd"}
    assert len({r["TABLET_ID"] for r in found if r["PARTITION_NAME"] == "p1"}) == 3  # 10 keys over 3 buckets
    second = [r for r in found if r["START_VERSION"] == 2]
    assert len(second) == 1 and second[0]["PARTITION_NAME"] == "p2" and second[0]["END_VERSION"] == 2
    assert all(r["DATA_DISK_SIZE"] > 0 and r["CREATION_TIME"] is not None for r in found)


def test_use_information_schema(conn: pymysql.connections.Connection, db: str) -> None:
    run(conn, "CREATE TABLE t (k INT) DISTRIBUTED BY HASH(k) BUCKETS 1")
    run(conn, "USE information_schema")
    assert ("rowsets",) in rows(conn, "SHOW TABLES") and ("tables",) in rows(conn, "SHOW TABLES")
    assert rows(conn, "SHOW FULL TABLES LIKE 'col%'") == [("columns", "SYSTEM VIEW")]
    assert rows(conn, f"SELECT TABLE_NAME FROM tables WHERE TABLE_SCHEMA = '{db}'") == [("t",)]
    assert rows(conn, f"SELECT count(*) FROM {db}.t") == [(0,)]
