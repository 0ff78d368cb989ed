"""Time travel through the SQL port: the design document's scenario on all three keys models
(the answer at T is the same before and after ADMIN COMPACT), SHOW TIME TRAVEL, RESTORE TABLE,
the schema in force at T, and every error with its code and a message that helps."""

from __future__ import annotations

import time
from datetime import UTC, datetime, timedelta

import pymysql

from tests.query.sqlkit import fails, rows, run, sorted_rows

TT = 'PROPERTIES ("enable_time_travel" = "true")'


def instant() -> str:
    """Now, in the session's zone (UTC), with the commits before it safely in the past."""
    time.sleep(0.005)
    moment = datetime.now(tz=UTC).strftime("%Y-%m-%d %H:%M:%S.%f")
    time.sleep(0.005)
    return moment


def states(conn: pymysql.connections.Connection, db: str, table: str) -> dict[str, int]:
    return dict(rows(conn, f"SELECT STATE, count(*) FROM information_schema.rowsets WHERE TABLE_NAME = '{table}' "
                           f"AND TABLE_SCHEMA = '{db}' GROUP BY STATE"))


def test_duplicate_scenario_survives_compaction(conn: pymysql.connections.Connection, db: str) -> None:
    run(conn, f"CREATE TABLE orders (id INT, status VARCHAR(20), amount DECIMAL(10,2)) DUPLICATE KEY(id) "
              f"DISTRIBUTED BY HASH(id) BUCKETS 3 {TT}")
    run(conn, "INSERT INTO orders VALUES (1, 'pending', 100.00), (2, 'pending', 200.00)")
    t = instant()
    for i in range(3, 9):
        run(conn, f"INSERT INTO orders VALUES ({i}, 'delivered', {i}00.00)")
    query = f"SELECT id, status FROM orders FOR TIME AS OF '{t}' ORDER BY id"
    before = rows(conn, query)
    assert before == [(1, "pending"), (2, "pending")]
    assert run(conn, "ADMIN COMPACT TABLE orders WHERE TYPE = 'BASE'") >= 1
    assert states(conn, db, "orders").get("stale", 0) >= 2
    assert rows(conn, query) == before
    assert rows(conn, "SELECT count(*) FROM orders") == [(8,)]


def test_unique_rows_updated_and_deleted_after_t(conn: pymysql.connections.Connection, db: str) -> None:
    run(conn, f"CREATE TABLE u (k INT, v VARCHAR(10)) UNIQUE KEY(k) DISTRIBUTED BY HASH(k) BUCKETS 2 {TT}")
    run(conn, "INSERT INTO u VALUES (1, 'a'), (2, 'b'), (3, 'c')")
    t = instant()
    run(conn, "UPDATE u SET v = 'B' WHERE k = 2")
    run(conn, "DELETE FROM u WHERE k = 3")
    run(conn, "INSERT INTO u VALUES (4, 'd')")
    run(conn, "ADMIN COMPACT TABLE u WHERE TYPE = 'BASE'")
    assert rows(conn, f"SELECT * FROM u FOR TIME AS OF '{t}' ORDER BY k") == [(1, "a"), (2, "b"), (3, "c")]
    assert rows(conn, "SELECT * FROM u ORDER BY k") == [(1, "a"), (2, "B"), (4, "d")]


def test_aggregate_sums_that_grew_after_t(conn: pymysql.connections.Connection, db: str) -> None:
    run(conn, f"CREATE TABLE a (k INT, s BIGINT SUM, m INT MAX) AGGREGATE KEY(k) DISTRIBUTED BY HASH(k) BUCKETS 2 {TT}")
    run(conn, "INSERT INTO a VALUES (1, 10, 1), (2, 20, 2)")
    t = instant()
    run(conn, "INSERT INTO a VALUES (1, 5, 9), (2, 5, 0)")
    run(conn, "INSERT INTO a VALUES (1, 1, 3)")
    run(conn, "ADMIN COMPACT TABLE a WHERE TYPE = 'CUMULATIVE'")
    assert rows(conn, f"SELECT * FROM a FOR TIME AS OF '{t}' ORDER BY k") == [(1, 10, 1), (2, 20, 2)]
    assert rows(conn, "SELECT * FROM a ORDER BY k") == [(1, 16, 9), (2, 25, 2)]


def test_schema_in_force_at_t(conn: pymysql.connections.Connection, db: str) -> None:
    run(conn, f"CREATE TABLE s (k INT, gone INT, v INT) DUPLICATE KEY(k) DISTRIBUTED BY HASH(k) BUCKETS 1 {TT}")
    run(conn, "INSERT INTO s VALUES (1, 11, 100)")
    t = instant()
    run(conn, "ALTER TABLE s DROP COLUMN gone")
    run(conn, "ALTER TABLE s ADD COLUMN added INT DEFAULT \"7\"")
    run(conn, "INSERT INTO s VALUES (2, 200, 8)")
    run(conn, "ADMIN COMPACT TABLE s WHERE TYPE = 'BASE'")
    cur = conn.cursor()
    cur.execute(f"SELECT * FROM s FOR TIME AS OF '{t}'")
    assert [d[0] for d in cur.description] == ["k", "gone", "v"]
    assert list(cur.fetchall()) == [(1, 11, 100)]
    assert sorted_rows(conn, "SELECT * FROM s") == [(1, 100, 7), (2, 200, 8)]


def test_show_time_travel_lists_every_commit(conn: pymysql.connections.Connection, db: str) -> None:
    run(conn, f"CREATE TABLE h (k INT, v INT) UNIQUE KEY(k) DISTRIBUTED BY HASH(k) BUCKETS 1 {TT}")
    run(conn, "INSERT INTO h VALUES (1, 1), (2, 2)")
    run(conn, "DELETE FROM h WHERE k = 1")
    history = rows(conn, "SHOW TIME TRAVEL ON h")
    assert [(r[4], r[6], r[7], r[8]) for r in history] == [(1, "load", 2, 0), (2, "delete", 0, 1)]
    assert all(r[3] == 7 and r[1] is not None and r[11] == 1 for r in history)
    fails(conn, "SHOW TIME TRAVEL ON nope", 1146, "nope")


def test_restore_is_a_new_commit_that_can_itself_be_traveled(conn: pymysql.connections.Connection, db: str) -> None:
    run(conn, f"CREATE TABLE r (k INT, v INT) DUPLICATE KEY(k) DISTRIBUTED BY HASH(k) BUCKETS 2 {TT}")
    run(conn, "INSERT INTO r VALUES (1, 1), (2, 2)")
    t = instant()
    run(conn, "DELETE FROM r WHERE k = 1")
    run(conn, "TRUNCATE TABLE r")
    count_files = f"SELECT count(*) FROM information_schema.rowsets WHERE TABLE_NAME = 'r' AND TABLE_SCHEMA = '{db}'"
    files_before = rows(conn, count_files)
    run(conn, f"RESTORE TABLE r TO TIME AS OF '{t}'")
    assert sorted_rows(conn, "SELECT * FROM r") == [(1, 1), (2, 2)]
    assert rows(conn, count_files) == files_before  # zero-copy: no rowset was written
    after_restore = instant()
    run(conn, "INSERT INTO r VALUES (3, 3)")
    assert sorted_rows(conn, f"SELECT * FROM r FOR TIME AS OF '{after_restore}'") == [(1, 1), (2, 2)]
    run(conn, "RESTORE TABLE r TO VERSION AS OF 3")  # the state after TRUNCATE
    assert rows(conn, "SELECT * FROM r") == []
    assert [r[6] for r in rows(conn, "SHOW TIME TRAVEL ON r")][-3:] == ["restore", "load", "restore"]


def test_errors_name_the_problem(conn: pymysql.connections.Connection, db: str) -> None:
    run(conn, "CREATE TABLE plain (k INT) DUPLICATE KEY(k) DISTRIBUTED BY HASH(k) BUCKETS 1")
    run(conn, "INSERT INTO plain VALUES (1)")
    fails(conn, f"SELECT * FROM plain FOR TIME AS OF '{instant()}'", 1235, "no time travel", "enable_time_travel")
    run(conn, f"CREATE TABLE e (k INT) DUPLICATE KEY(k) DISTRIBUTED BY HASH(k) BUCKETS 1 {TT}")
    fails(conn, f"SELECT * FROM e FOR TIME AS OF '{instant()}'", 1210, "before the first commit")
    run(conn, "INSERT INTO e VALUES (1)")
    fails(conn, "SELECT * FROM e FOR TIME AS OF '2099-01-01 00:00:00'", 1210, "in the future")
    fails(conn, "SELECT * FROM e FOR TIME AS OF '2001-01-01 00:00:00'", 1210, "before table 'e' existed")
    fails(conn, "SELECT * FROM e FOR TIME AS OF 'yesterday'", 1525, "not a valid timestamp")
    fails(conn, "SELECT * FROM e FOR VERSION AS OF 42", 1210, "no commit 42")
    fails(conn, "RESTORE TABLE plain TO TIME AS OF '2026-01-01 00:00:00'", 1235, "no time travel")
    run(conn, "ALTER TABLE plain SET (\"enable_time_travel\" = \"true\")")
    fails(conn, "SELECT * FROM plain FOR VERSION AS OF 1", 1210, "beyond the time-travel window", "earliest")
    assert rows(conn, f"SELECT * FROM plain FOR TIME AS OF '{instant()}'") == [(1,)]
    fails(conn, "ALTER TABLE e SET (\"time_travel_retention_days\" = \"91\")", 1210, "1 to 90")


def test_instants_are_read_in_the_session_time_zone(conn: pymysql.connections.Connection, db: str) -> None:
    run(conn, f"CREATE TABLE z (k INT) DUPLICATE KEY(k) DISTRIBUTED BY HASH(k) BUCKETS 1 {TT}")
    run(conn, "INSERT INTO z VALUES (1)")
    utc = instant()
    run(conn, "INSERT INTO z VALUES (2)")
    shifted = (datetime.strptime(utc, "%Y-%m-%d %H:%M:%S.%f") + timedelta(hours=8)).strftime("%Y-%m-%d %H:%M:%S.%f")
    run(conn, "SET time_zone = '+08:00'")
    assert rows(conn, f"SELECT * FROM z FOR TIME AS OF '{shifted}'") == [(1,)]
    run(conn, "SET time_zone = 'UTC'")
    assert rows(conn, f"SELECT * FROM z FOR TIME AS OF '{utc}'") == [(1,)]
