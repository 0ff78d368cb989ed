"""System-versioned reads, `t FOR SYSTEM_TIME ALL | BETWEEN … AND … | FROM … TO …` (MariaDB's syntax):
every version of every row with the commit instants it was valid in, on all three keys models."""

from __future__ import annotations

from datetime import datetime
from typing import Any

import pymysql

from tests.query.sqlkit import columns, fails, rows, run

TT = 'PROPERTIES ("enable_time_travel" = "true")'
WRONG_ARGUMENTS = 1210
NOT_SUPPORTED = 1235


def commit_times(conn: pymysql.connections.Connection, table: str) -> list[datetime]:
    """The instant of each commit, oldest first (the session is in UTC, as `_valid_from` is)."""
    return [datetime.strptime(r[5], "%Y-%m-%d %H:%M:%S.%f") for r in rows(conn, f"SHOW TIME TRAVEL ON {table}")]


def versions(conn: pymysql.connections.Connection, sql: str) -> list[tuple[Any, ...]]:
    return sorted(rows(conn, sql), key=lambda r: tuple((v is None, str(v)) for v in r))


def text(moment: datetime) -> str:
    return moment.strftime("%Y-%m-%d %H:%M:%S.%f")[:-3]


def test_unique_key_versions(conn: pymysql.connections.Connection, db: str) -> None:
    run(conn, f"CREATE TABLE t (k INT, v VARCHAR(10)) UNIQUE KEY(k) DISTRIBUTED BY HASH(k) BUCKETS 2 {TT}")
    run(conn, "INSERT INTO t VALUES (1, 'a'), (2, 'b')")
    run(conn, "UPDATE t SET v = 'B' WHERE k = 2")
    run(conn, "DELETE FROM t WHERE k = 1")
    run(conn, "INSERT INTO t VALUES (3, 'c')")
    c1, c2, c3, c4 = commit_times(conn, "t")
    assert columns(conn, "SELECT * FROM t FOR SYSTEM_TIME ALL") == ["k", "v", "_valid_from", "_valid_to"]
    assert versions(conn, "SELECT * FROM t FOR SYSTEM_TIME ALL") == [
        (1, "a", c1, c3), (2, "B", c2, None), (2, "b", c1, c2), (3, "c", c4, None)]
    # BETWEEN includes its end, FROM … TO does not; a version valid anywhere in the range is in.
    assert versions(conn, f"SELECT k, v FROM t FOR SYSTEM_TIME BETWEEN '{text(c2)}' AND '{text(c4)}'") == [
        (1, "a"), (2, "B"), (3, "c")]
    assert versions(conn, f"SELECT k, v FROM t FOR SYSTEM_TIME FROM '{text(c2)}' TO '{text(c4)}'") == [
        (1, "a"), (2, "B")]
    assert versions(conn, f"SELECT k, v FROM t FOR SYSTEM_TIME FROM '{text(c3)}' TO '{text(c4)}'") == [(2, "B")]
    # Composes like any table: filters, aggregates, a join with the table as it is now.
    assert rows(conn, "SELECT count(*) FROM t FOR SYSTEM_TIME ALL h JOIN t ON h.k = t.k WHERE h._valid_to IS NOT NULL"
                ) == [(1,)]
    assert rows(conn, "SELECT k, count(*) FROM t FOR SYSTEM_TIME ALL GROUP BY k ORDER BY k") == [(1, 1), (2, 2), (3, 1)]


def test_duplicate_key_repeated_rows_are_versions_each(conn: pymysql.connections.Connection, db: str) -> None:
    run(conn, f"CREATE TABLE t (k INT, v INT) DUPLICATE KEY(k) DISTRIBUTED BY HASH(k) BUCKETS 1 {TT}")
    run(conn, "INSERT INTO t VALUES (1, 1), (1, 1)")
    run(conn, "INSERT INTO t VALUES (1, 1)")
    run(conn, "DELETE FROM t WHERE k = 1")
    run(conn, "INSERT INTO t VALUES (1, 1)")
    c1, c2, c3, c4 = commit_times(conn, "t")
    assert versions(conn, "SELECT * FROM t FOR SYSTEM_TIME ALL") == [
        (1, 1, c1, c3), (1, 1, c1, c3), (1, 1, c2, c3), (1, 1, c4, None)]


def test_aggregate_key_versions_are_aggregated_rows(conn: pymysql.connections.Connection, db: str) -> None:
    run(conn, f"CREATE TABLE t (k INT, s BIGINT SUM) AGGREGATE KEY(k) DISTRIBUTED BY HASH(k) BUCKETS 1 {TT}")
    run(conn, "INSERT INTO t VALUES (1, 10)")
    run(conn, "INSERT INTO t VALUES (1, 5), (2, 1)")
    run(conn, "ADMIN COMPACT TABLE t WHERE type = 'BASE'")  # changes no version
    c1, c2 = commit_times(conn, "t")[:2]
    assert versions(conn, "SELECT * FROM t FOR SYSTEM_TIME ALL") == [(1, 10, c1, c2), (1, 15, c2, None),
                                                                   (2, 1, c2, None)]


def test_history_starts_where_it_is_kept(conn: pymysql.connections.Connection, db: str) -> None:
    # Rows from before time travel was enabled have no known start: NULL, like an open end.
    run(conn, "CREATE TABLE t (k INT, v INT) UNIQUE KEY(k) DISTRIBUTED BY HASH(k) BUCKETS 1")
    run(conn, "INSERT INTO t VALUES (1, 1), (2, 2)")
    run(conn, 'ALTER TABLE t SET ("enable_time_travel" = "true")')
    run(conn, "UPDATE t SET v = 20 WHERE k = 2")
    update = commit_times(conn, "t")[-1]
    assert versions(conn, "SELECT * FROM t FOR SYSTEM_TIME ALL") == [
        (1, 1, None, None), (2, 2, None, update), (2, 20, update, None)]
    fails(conn, "SELECT * FROM t FOR SYSTEM_TIME BETWEEN '2001-01-01 00:00:00' AND '2001-01-02 00:00:00'",
          WRONG_ARGUMENTS, "before the history kept")


def test_refusals(conn: pymysql.connections.Connection, db: str) -> None:
    run(conn, "CREATE TABLE plain (k INT) DUPLICATE KEY(k) DISTRIBUTED BY HASH(k) BUCKETS 1")
    fails(conn, "SELECT * FROM plain FOR SYSTEM_TIME ALL", NOT_SUPPORTED, "no time travel")
    run(conn, f"CREATE TABLE t (k INT) DUPLICATE KEY(k) DISTRIBUTED BY HASH(k) BUCKETS 1 {TT}")
    run(conn, "CREATE VIEW w AS SELECT * FROM t")
    fails(conn, "SELECT * FROM w FOR SYSTEM_TIME ALL", NOT_SUPPORTED, "is a view")
    fails(conn, "SELECT * FROM t FOR SYSTEM_TIME BETWEEN '2030-01-02 00:00:00' AND '2030-01-01 00:00:00'",
          WRONG_ARGUMENTS, "ends before it starts")
    fails(conn, "SELECT * FROM t FOR SYSTEM_TIME FROM 'yesterday' TO '2030-01-01'", 1525, "yesterday")
    fails(conn, "SELECT * FROM t FOR SYSTEM_TIME BETWEEN '2030-01-01' TO '2030-01-02'", 1064, "expected AND")
    fails(conn, "SELECT * FROM information_schema.tables FOR SYSTEM_TIME ALL", NOT_SUPPORTED, "no history")


def test_a_view_may_read_history(conn: pymysql.connections.Connection, db: str) -> None:
    run(conn, f"CREATE TABLE t (k INT, v INT) UNIQUE KEY(k) DISTRIBUTED BY HASH(k) BUCKETS 1 {TT}")
    run(conn, "INSERT INTO t VALUES (1, 1)")
    run(conn, "INSERT INTO t VALUES (1, 2)")
    run(conn, "CREATE VIEW changes_of_t AS SELECT k, v, _valid_from FROM t FOR SYSTEM_TIME ALL")
    assert "FOR SYSTEM_TIME ALL" in rows(conn, "SHOW CREATE VIEW changes_of_t")[0][1]
    assert sorted(r[:2] for r in rows(conn, "SELECT * FROM changes_of_t")) == [(1, 1), (1, 2)]


def test_a_column_dropped_and_restored_reads_as_its_default_while_it_was_gone(
        conn: pymysql.connections.Connection, db: str) -> None:
    # RESTORE brings back a column a later commit dropped. Versions are read in today's columns, where rows
    # read the column's default while it was gone: the drop ends the versions holding their own value and
    # starts ones holding the default, which the later delete then ends (not versions that never end).
    run(conn, f"CREATE TABLE t (k INT, v INT) DUPLICATE KEY(k) DISTRIBUTED BY HASH(k) BUCKETS 1 {TT}")
    run(conn, 'ALTER TABLE t ADD COLUMN c INT DEFAULT "0"')
    run(conn, "INSERT INTO t VALUES (1, 1, NULL), (1, 1, NULL)")
    run(conn, "ALTER TABLE t DROP COLUMN c")
    run(conn, "DELETE FROM t WHERE k = 1")
    run(conn, "INSERT INTO t VALUES (1, 1)")
    added, inserted, dropped, deleted, again = commit_times(conn, "t")
    run(conn, f"RESTORE TABLE t TO TIME AS OF '{text(added)}'")
    restored = commit_times(conn, "t")[-1]
    assert rows(conn, "SELECT * FROM t") == []
    assert versions(conn, "SELECT * FROM t FOR SYSTEM_TIME ALL") == [
        (1, 1, 0, dropped, deleted), (1, 1, 0, dropped, deleted), (1, 1, 0, again, restored),
        (1, 1, None, inserted, dropped), (1, 1, None, inserted, dropped)]
    assert rows(conn, f"SELECT count(*) FROM t FOR SYSTEM_TIME FROM '{text(restored)}' TO '2999-01-01'") == [(0,)]
