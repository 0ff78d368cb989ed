"""The change feed through the SQL port (`t@incr(...)`) and the Python API (`open_table_changes`,
`ChangeFollower`): inserts, deletes, Unique Key update images, Aggregate Key updates, commit-number
and timestamp ranges, empty ranges, argument errors, tables without time travel, schema changes, and
a follower resuming from a saved cursor."""

from __future__ import annotations

import time
from datetime import UTC, datetime
from typing import Any

import pymysql

from query.change_feed import open_table_changes
from schemas.config import load_settings
from tests.query.sqlkit import columns, fails, rows, run, sorted_rows

TT = 'PROPERTIES ("enable_time_travel" = "true")'
WRONG_ARGUMENTS = 1210
NOT_SUPPORTED = 1235


def instant() -> str:
    """Now in the session's zone (UTC), strictly between the commits before and after it."""
    time.sleep(0.005)
    moment = datetime.now(tz=UTC).strftime("%Y-%m-%d %H:%M:%S.%f")
    time.sleep(0.005)
    return moment


def feed(conn: pymysql.connections.Connection, cols: str, args: str, table: str = "t") -> list[tuple[Any, ...]]:
    return sorted_rows(conn, f"SELECT {cols}, _change_type, _commit_version FROM {table}@incr({args})")


def test_duplicate_inserts_and_deletes_count_duplicates(conn: pymysql.connections.Connection, db: str) -> None:
    run(conn, f"CREATE TABLE t (k INT, v VARCHAR(10)) DUPLICATE KEY(k) DISTRIBUTED BY HASH(k) BUCKETS 2 {TT}")
    run(conn, "INSERT INTO t VALUES (1, 'a'), (1, 'a'), (2, 'b')")
    run(conn, "INSERT INTO t VALUES (1, 'a')")
    run(conn, "DELETE FROM t WHERE k = 1")
    assert feed(conn, "k, v", "'startVersion'='0'") == sorted([
        (1, "a", "insert", 1), (1, "a", "insert", 1), (2, "b", "insert", 1),
        (1, "a", "insert", 2),
        (1, "a", "delete", 3), (1, "a", "delete", 3), (1, "a", "delete", 3)])
    assert columns(conn, "SELECT * FROM t@incr('startVersion'='0')") == [
        "k", "v", "_change_type", "_commit_version", "_commit_timestamp"]


def test_unique_updates_give_pre_and_post_images(conn: pymysql.connections.Connection, db: str) -> None:
    run(conn, f"CREATE TABLE t (k INT, v VARCHAR(10)) UNIQUE KEY(k) DISTRIBUTED BY HASH(k) BUCKETS 2 {TT}")
    run(conn, "INSERT INTO t VALUES (1, 'a'), (2, 'b')")
    run(conn, "UPDATE t SET v = 'B' WHERE k = 2")
    run(conn, "DELETE FROM t WHERE k = 1")
    run(conn, "INSERT INTO t VALUES (3, 'c'), (2, 'BB'), (4, 'd')")
    run(conn, "INSERT INTO t VALUES (4, 'd')")  # same value again: no change at all
    assert feed(conn, "k, v", "'startVersion'='0'") == sorted([
        (1, "a", "insert", 1), (2, "b", "insert", 1),
        (2, "b", "update_preimage", 2), (2, "B", "update_postimage", 2),
        (1, "a", "delete", 3),
        (3, "c", "insert", 4), (4, "d", "insert", 4), (2, "B", "update_preimage", 4),
        (2, "BB", "update_postimage", 4)])
    # The view's own order: commit, then key, a pre-image right before its post-image.
    assert rows(conn, "SELECT k, _change_type FROM t@incr('startVersion'='3')") == [
        (2, "update_preimage"), (2, "update_postimage"), (3, "insert"), (4, "insert")]


def test_aggregate_changed_rows_are_updates(conn: pymysql.connections.Connection, db: str) -> None:
    run(conn, f"CREATE TABLE t (k INT, s BIGINT SUM, m INT MAX) AGGREGATE KEY(k) DISTRIBUTED BY HASH(k) BUCKETS 2 {TT}")
    run(conn, "INSERT INTO t VALUES (1, 10, 1), (2, 5, 5)")
    run(conn, "INSERT INTO t VALUES (1, 7, 0), (3, 1, 1)")
    run(conn, "INSERT INTO t VALUES (2, 0, 4)")  # changes neither SUM nor MAX of key 2
    assert feed(conn, "k, s, m", "'startVersion'='1'") == sorted([
        (1, 10, 1, "update_preimage", 2), (1, 17, 1, "update_postimage", 2), (3, 1, 1, "insert", 2)])
    run(conn, "DELETE FROM t WHERE k = 3")
    assert feed(conn, "k, s, m", "'startVersion'='3'") == [(3, 1, 1, "delete", 4)]


def test_commit_number_ranges_are_start_exclusive_end_inclusive(conn: pymysql.connections.Connection,
                                                                db: str) -> None:
    run(conn, f"CREATE TABLE t (k INT, v INT) UNIQUE KEY(k) DISTRIBUTED BY HASH(k) BUCKETS 1 {TT}")
    for i in range(1, 5):
        run(conn, f"INSERT INTO t VALUES ({i}, {i})")
    assert feed(conn, "k", "'startVersion'='1', 'endVersion'='3'") == [(2, "insert", 2), (3, "insert", 3)]
    assert feed(conn, "k", "'startVersion'='3'") == [(4, "insert", 4)]
    assert feed(conn, "k", "'startVersion'='4'") == []
    assert feed(conn, "k", "'startVersion'='2', 'endVersion'='2'") == []
    assert columns(conn, "SELECT * FROM t@incr('startVersion'='4')") == [
        "k", "v", "_change_type", "_commit_version", "_commit_timestamp"]
    # Composes like any table: aggregates, joins with the current table.
    assert rows(conn, "SELECT count(*) FROM t@incr('startVersion'='0') c JOIN t ON c.k = t.k WHERE c.k > 1") == [(3,)]


def test_timestamp_ranges(conn: pymysql.connections.Connection, db: str) -> None:
    run(conn, f"CREATE TABLE t (k INT, v INT) DUPLICATE KEY(k) DISTRIBUTED BY HASH(k) BUCKETS 1 {TT}")
    before = instant()
    run(conn, "INSERT INTO t VALUES (1, 1)")
    t1 = instant()
    run(conn, "INSERT INTO t VALUES (2, 2)")
    t2 = instant()
    run(conn, "INSERT INTO t VALUES (3, 3)")
    assert feed(conn, "k", f"'startTimestamp'='{before}'") == [(1, "insert", 1), (2, "insert", 2), (3, "insert", 3)]
    assert feed(conn, "k", f"'startTimestamp'='{t1}', 'endTimestamp'='{t2}'") == [(2, "insert", 2)]
    assert feed(conn, "k", f"'startTimestamp'='{t1}', 'endTimestamp'='{t1}'") == []
    assert feed(conn, "k", f"'startVersion'='1', 'endTimestamp'='{t2}'") == [(2, "insert", 2)]
    [(stamp,)] = rows(conn, f"SELECT _commit_timestamp FROM t@incr('startTimestamp'='{t1}', 'endTimestamp'='{t2}')")
    assert t1 < stamp.strftime("%Y-%m-%d %H:%M:%S.%f") <= t2
    # Instants are in the session time zone.
    run(conn, "SET time_zone = '+02:00'")
    shifted = datetime.strptime(t1, "%Y-%m-%d %H:%M:%S.%f").replace(hour=(int(t1[11:13]) + 2) % 24)
    if shifted.hour >= 2:  # the same day: shifting the text by two hours names the same instant
        local = shifted.strftime("%Y-%m-%d %H:%M:%S.%f")
        assert feed(conn, "k", f"'startTimestamp'='{local}', 'endVersion'='2'") == [(2, "insert", 2)]


def test_bad_arguments(conn: pymysql.connections.Connection, db: str) -> None:
    run(conn, f"CREATE TABLE t (k INT) DUPLICATE KEY(k) DISTRIBUTED BY HASH(k) BUCKETS 1 {TT}")
    run(conn, "INSERT INTO t VALUES (1)")
    run(conn, "INSERT INTO t VALUES (2)")
    fails(conn, "SELECT * FROM t@incr('beginTime'='1')", WRONG_ARGUMENTS, "unknown", "beginTime", "startTimestamp")
    fails(conn, "SELECT * FROM t@incr('endVersion'='1')", WRONG_ARGUMENTS, "needs a start")
    fails(conn, "SELECT * FROM t@incr('startVersion'='one')", WRONG_ARGUMENTS, "startVersion", "commit number")
    fails(conn, "SELECT * FROM t@incr('startVersion'='1', 'endVersion'='9')", WRONG_ARGUMENTS, "no commit 9", "2")
    fails(conn, "SELECT * FROM t@incr('startVersion'='2', 'endVersion'='1')", WRONG_ARGUMENTS, "before")
    fails(conn, "SELECT * FROM t@incr('startTimestamp'='yesterday')", WRONG_ARGUMENTS, "startTimestamp",
          "not a valid timestamp")
    fails(conn, "SELECT * FROM t@incr('startVersion'='0', 'endTimestamp'='2999-01-01 00:00:00')", WRONG_ARGUMENTS,
          "endTimestamp", "future")
    fails(conn, "SELECT * FROM t@incr('startVersion'='0', 'startTimestamp'='2026-01-01')", WRONG_ARGUMENTS,
          "one start")
    fails(conn, "SELECT * FROM nope@incr('startVersion'='0')", 1146, "nope")
    fails(conn, "SELECT * FROM t@incr('startVersion' '0')", 1064)


def test_table_without_time_travel_is_refused(conn: pymysql.connections.Connection, db: str) -> None:
    run(conn, "CREATE TABLE t (k INT) DUPLICATE KEY(k) DISTRIBUTED BY HASH(k) BUCKETS 1")
    run(conn, "INSERT INTO t VALUES (1)")
    fails(conn, "SELECT * FROM t@incr('startVersion'='0')", NOT_SUPPORTED, "time travel", "enable_time_travel")
    assert rows(conn, "SELECT * FROM t") == [(1,)]


def test_schema_change_inside_the_range_uses_the_end_columns(conn: pymysql.connections.Connection,
                                                             db: str) -> None:
    run(conn, f"CREATE TABLE t (k INT, v INT) UNIQUE KEY(k) DISTRIBUTED BY HASH(k) BUCKETS 1 {TT}")
    run(conn, "INSERT INTO t VALUES (1, 1)")
    run(conn, "ALTER TABLE t ADD COLUMN w INT DEFAULT \"7\"")
    run(conn, "INSERT INTO t VALUES (2, 2, 20)")
    run(conn, "UPDATE t SET w = 8 WHERE k = 1")
    run(conn, "ALTER TABLE t ADD COLUMN n INT")
    # Commits 2 and 5 are schema changes: no row was added or removed by them. Columns a commit's
    # schema lacked read as their default, as they do for the same rows in the table itself.
    assert feed(conn, "k, v, w, n", "'startVersion'='0'") == sorted([
        (1, 1, 7, None, "insert", 1), (2, 2, 20, None, "insert", 3),
        (1, 1, 7, None, "update_preimage", 4), (1, 1, 8, None, "update_postimage", 4)],
        key=lambda r: tuple((v is not None, v) for v in r))
    assert feed(conn, "k", "'startVersion'='4'") == []


def test_compaction_changes_nothing_in_the_feed(conn: pymysql.connections.Connection, db: str) -> None:
    run(conn, f"CREATE TABLE t (k INT, v INT) UNIQUE KEY(k) DISTRIBUTED BY HASH(k) BUCKETS 1 {TT}")
    for i in range(1, 6):
        run(conn, f"INSERT INTO t VALUES ({i % 3}, {i})")
    query = "'startVersion'='0'"
    before = feed(conn, "k, v", query)
    assert len(before) == 3 + 2 * 2
    run(conn, "ADMIN COMPACT TABLE t WHERE TYPE = 'BASE'")
    assert feed(conn, "k, v", query) == before


def test_follower_resumes_from_a_saved_cursor(conn: pymysql.connections.Connection, db: str) -> None:
    run(conn, f"CREATE TABLE t (k INT, v VARCHAR(10)) UNIQUE KEY(k) DISTRIBUTED BY HASH(k) BUCKETS 2 {TT}")
    run(conn, "INSERT INTO t VALUES (1, 'a'), (2, 'b')")
    run(conn, "UPDATE t SET v = 'B' WHERE k = 2")
    seen: list[tuple[Any, ...]] = []

    def take(batch_rows: list[dict[str, Any]]) -> None:
        seen.extend((r["k"], r["v"], r["_change_type"], r["_commit_version"]) for r in batch_rows)

    with open_table_changes(load_settings(), db, "t") as feed_api:
        follower = feed_api.follow(0, max_commits=1)
        first = follower.poll()
        assert first.cursor == 1 and first.table.column_names[-3:] == ["_change_type", "_commit_version",
                                                                       "_commit_timestamp"]
        take(first.table.to_pylist())
        saved = first.cursor
    # A new process (replica) resumes where the last one stopped.
    run(conn, "DELETE FROM t WHERE k = 1")
    with open_table_changes(load_settings(), db, "t") as feed_api:
        follower = feed_api.follow(saved)
        second = follower.poll()
        take(second.table.to_pylist())
        assert second.cursor == 3
        empty = follower.poll()
        assert empty.table.num_rows == 0 and empty.cursor == 3
        run(conn, "INSERT INTO t VALUES (5, 'e')")
        third = follower.poll()  # the follower catches up with the log before reading
        take(third.table.to_pylist())
        assert third.cursor == 4
        assert feed_api.changes(0).num_rows == len(seen)
    assert sorted(seen) == sorted([
        (1, "a", "insert", 1), (2, "b", "insert", 1),
        (2, "b", "update_preimage", 2), (2, "B", "update_postimage", 2),
        (1, "a", "delete", 3), (5, "e", "insert", 4)])


def test_a_column_dropped_and_restored_changes_the_rows_at_the_drop(conn: pymysql.connections.Connection,
                                                                   db: str) -> None:
    # In the end columns, rows read a column's default while a drop (undone by RESTORE) had it gone: the drop
    # is a change of those rows, so the feed applied to the rows before gives the rows after.
    run(conn, f"CREATE TABLE t (k INT, v INT) UNIQUE KEY(k) DISTRIBUTED BY HASH(k) BUCKETS 1 {TT}")
    run(conn, 'ALTER TABLE t ADD COLUMN c INT DEFAULT "0"')
    run(conn, "INSERT INTO t VALUES (1, 1, 5), (2, 2, 6)")
    run(conn, "ALTER TABLE t DROP COLUMN c")
    run(conn, "DELETE FROM t WHERE k = 1")
    run(conn, "RESTORE TABLE t TO TIME AS OF '" + rows(conn, "SHOW TIME TRAVEL ON t")[1][5] + "'")
    assert sorted_rows(conn, "SELECT * FROM t") == [(1, 1, 5), (2, 2, 6)]
    assert feed(conn, "k, v, c", "'startVersion'='0'") == sorted([
        (1, 1, 5, "insert", 2), (2, 2, 6, "insert", 2),
        (1, 1, 5, "update_preimage", 3), (1, 1, 0, "update_postimage", 3),
        (2, 2, 6, "update_preimage", 3), (2, 2, 0, "update_postimage", 3),
        (1, 1, 0, "delete", 4),
        (1, 1, 5, "insert", 5), (2, 2, 0, "update_preimage", 5), (2, 2, 6, "update_postimage", 5)],
        key=lambda r: tuple((v is not None, v) for v in r))
