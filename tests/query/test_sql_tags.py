"""Tags (ALTER TABLE … CREATE TAG / DROP TAG, SHOW TAGS, FOR TAG AS OF): a tag keeps one snapshot of a
table readable through later writes, deletes, compactions and the recycler, with or without time
travel; dropping it lets the recycler delete what only it kept."""

from __future__ import annotations

import time

import pymysql
import pytest

from tests.query.recycling_kit import Recycling
from tests.query.sqlkit import fails, rows, run, sorted_rows

pytestmark = pytest.mark.integration
_TAIL = "DUPLICATE KEY(k) DISTRIBUTED BY HASH(k) BUCKETS 1"
_TIME_TRAVEL = 'PROPERTIES ("enable_time_travel" = "true", "time_travel_retention_days" = "1")'


def _newest_tag_commit(conn: pymysql.connections.Connection, table: str) -> int:
    return int(rows(conn, f"SHOW TAGS ON {table}")[-1][1])


@pytest.mark.parametrize("properties", ["", _TIME_TRAVEL], ids=["plain", "time_travel"])
def test_tags_read_their_snapshot_through_writes_compaction_and_recycling(
        conn: pymysql.connections.Connection, db: str, recycling: Recycling, properties: str) -> None:
    run(conn, f"CREATE TABLE t (k INT, v INT) {_TAIL} {properties}")
    expected: dict[str, list[tuple[int, int]]] = {}
    state: set[tuple[int, int]] = set()

    def write(values: list[tuple[int, int]]) -> None:
        run(conn, "INSERT INTO t VALUES " + ", ".join(f"({k}, {v})" for k, v in values))
        state.update(values)

    def tag(name: str, clause: str = "") -> None:
        run(conn, f"ALTER TABLE t CREATE TAG {name}{clause}")
        expected[name] = sorted(state)

    write([(1, 10), (2, 20)])
    tag("first")
    write([(3, 30)])
    write([(4, 40)])
    tag("second")
    run(conn, "DELETE FROM t WHERE k = 1")
    state.discard((1, 10))
    tag("after_delete")
    number = _newest_tag_commit(conn, "t")
    write([(5, 50)])
    tag("by_version", f" AS OF VERSION {number}")
    expected["by_version"] = expected["after_delete"]
    run(conn, "ADMIN COMPACT TABLE t WHERE type='BASE'")
    write([(6, 60)])
    run(conn, "DELETE FROM t WHERE k >= 3 AND k <= 4")
    state -= {(3, 30), (4, 40)}
    run(conn, "ADMIN COMPACT TABLE t WHERE type='BASE'")
    time.sleep(1.2)  # beyond the recycler's one-second retention
    recycling.recycle(db, "t")
    tag("last")
    for name, wanted in expected.items():
        assert sorted_rows(conn, f"SELECT * FROM t FOR TAG AS OF '{name}'") == wanted, name
    assert sorted_rows(conn, "SELECT * FROM t") == sorted(state)
    # A tag reads as a table in joins and subqueries too, next to the latest state.
    assert rows(conn, "SELECT count(*) FROM t FOR TAG AS OF 'first' a JOIN t b ON a.k = b.k") == [(1,)]
    names = [r[0] for r in rows(conn, "SHOW TAGS ON t")]
    assert names == ["first", "second", "after_delete", "by_version", "last"]


def test_a_tag_names_a_snapshot_in_ctas_insert_select_and_change_feed_bounds(
        conn: pymysql.connections.Connection, db: str) -> None:
    run(conn, f"CREATE TABLE t (k INT, v INT) UNIQUE KEY(k) DISTRIBUTED BY HASH(k) BUCKETS 1 {_TIME_TRAVEL}")
    run(conn, "INSERT INTO t VALUES (1, 10), (2, 20)")
    run(conn, "ALTER TABLE t CREATE TAG a")
    run(conn, "INSERT INTO t VALUES (1, 11), (3, 30)")
    run(conn, "ALTER TABLE t CREATE TAG b")
    run(conn, "DELETE FROM t WHERE k = 2")
    run(conn, "CREATE TABLE c AS SELECT * FROM t FOR TAG AS OF 'a'")
    assert sorted_rows(conn, "SELECT * FROM c") == [(1, 10), (2, 20)]
    run(conn, "INSERT INTO c SELECT k + 10, v FROM t FOR TAG AS OF 'b'")
    assert sorted_rows(conn, "SELECT * FROM c") == [(1, 10), (2, 20), (11, 11), (12, 20), (13, 30)]
    # @incr bounds: a tag stands for the commit it keeps.
    feed = "SELECT k, v, _change_type FROM t@incr({})"
    assert sorted_rows(conn, feed.format("'startTag' = 'a', 'endTag' = 'b'")) == [
        (1, 10, "update_preimage"), (1, 11, "update_postimage"), (3, 30, "insert")]
    assert sorted_rows(conn, feed.format("'startTag' = 'b'")) == [(2, 20, "delete")]
    assert sorted_rows(conn, feed.format("'startTag' = 'a', 'endTag' = 'a'")) == []
    fails(conn, feed.format("'startTag' = 'nope'"), 1210, "no tag 'nope'")
    fails(conn, feed.format("'startTag' = 'a', 'startVersion' = '1'"), 1210, "one start")
    fails(conn, feed.format("'startTag' = ''"), 1210, "empty")


def test_a_tag_keeps_files_of_a_table_without_time_travel_until_dropped(
        conn: pymysql.connections.Connection, db: str, recycling: Recycling) -> None:
    run(conn, f"CREATE TABLE t (k INT, v INT) {_TAIL}")
    run(conn, "INSERT INTO t VALUES (1, 10)")
    run(conn, "INSERT INTO t VALUES (2, 20)")
    run(conn, "ALTER TABLE t CREATE TAG keep")
    tagged = recycling.files(db, "t")
    run(conn, "INSERT INTO t VALUES (3, 30)")
    run(conn, "ADMIN COMPACT TABLE t WHERE type='BASE'")
    assert recycling.recycle(db, "t") == 1  # the third load's rowset: the tag never read it
    assert all(path.exists() for path in tagged)
    assert sorted_rows(conn, "SELECT * FROM t FOR TAG AS OF 'keep'") == [(1, 10), (2, 20)]
    # The table has no time travel: the instant itself is not readable, only the tag.
    fails(conn, "SELECT * FROM t FOR TIME AS OF '2020-01-01 00:00:00'", 1235, "no time travel")
    run(conn, "ALTER TABLE t DROP TAG keep")
    fails(conn, "SELECT * FROM t FOR TAG AS OF 'keep'", 1210, "no tag 'keep'")
    assert recycling.recycle(db, "t") == 2
    assert not recycling.files(db, "t") & tagged
    assert not any(path.exists() for path in tagged)
    assert sorted_rows(conn, "SELECT * FROM t") == [(1, 10), (2, 20), (3, 30)]
    # Its past is gone now: a new tag cannot name it.
    fails(conn, "ALTER TABLE t CREATE TAG late AS OF VERSION 2", 1210, "no longer keeps")


def test_tag_errors(conn: pymysql.connections.Connection, db: str) -> None:
    run(conn, f"CREATE TABLE t (k INT) {_TAIL}")
    fails(conn, "ALTER TABLE t CREATE TAG empty", 1210, "no commit")
    run(conn, "INSERT INTO t VALUES (1)")
    run(conn, "ALTER TABLE t CREATE TAG a")
    fails(conn, "ALTER TABLE t CREATE TAG A", 1105, "already exists")
    fails(conn, "SELECT * FROM t FOR TAG AS OF 'nope'", 1210, "no tag 'nope'")
    fails(conn, "ALTER TABLE t DROP TAG nope", 1210, "does not exist")
    fails(conn, "ALTER TABLE t CREATE TAG b AS OF VERSION 9", 1210, "no commit 9")
    fails(conn, "ALTER TABLE t CREATE TAG b AS OF '2999-01-01 00:00:00'", 1210, "future")
    fails(conn, 'ALTER TABLE t CREATE TAG b PROPERTIES ("retention_days" = "x")', 1210, "retention_days")
    fails(conn, 'ALTER TABLE t CREATE TAG b PROPERTIES ("color" = "red")', 1210, "unknown tag property")
    run(conn, "CREATE VIEW v AS SELECT * FROM t")
    fails(conn, "ALTER TABLE v CREATE TAG a", 1347, "is not TABLE")
    fails(conn, "SELECT * FROM v FOR TAG AS OF 'a'", 1235, "is a view")
    fails(conn, "SELECT * FROM t FOR TAG AS OF a", 1064)
    # The tag reads the same under another case of its name.
    assert rows(conn, "SELECT * FROM t FOR TAG AS OF 'A'") == [(1,)]


def test_show_tags_and_retention(conn: pymysql.connections.Connection, db: str) -> None:
    run(conn, f"CREATE TABLE t (k INT) {_TAIL}")
    run(conn, "INSERT INTO t VALUES (1)")
    run(conn, "INSERT INTO t VALUES (2)")
    run(conn, "ALTER TABLE t CREATE TAG forever")
    run(conn, 'ALTER TABLE t CREATE TAG brief AS OF VERSION 1 PROPERTIES ("retention_days" = "3")')
    cur = conn.cursor()
    cur.execute("SHOW TAGS ON t")
    assert [d[0] for d in cur.description] == ["Name", "CommitNumber", "CommitTime", "CreatedTime",
                                               "RetentionDays", "ExpiresAt"]
    shown = cur.fetchall()
    assert [(r[0], r[1], r[4]) for r in shown] == [("forever", 2, None), ("brief", 1, 3)]
    assert shown[0][5] is None and shown[1][5] > shown[1][3]
    assert rows(conn, "SELECT * FROM t FOR TAG AS OF 'brief'") == [(1,)]
    run(conn, "ALTER TABLE t DROP TAG brief")
    assert [r[0] for r in rows(conn, "SHOW TAGS ON t")] == ["forever"]


def test_tag_privileges(conn: pymysql.connections.Connection, db: str,
                        reader: tuple[pymysql.connections.Connection, str, str]) -> None:
    me, _, _ = reader
    run(conn, "INSERT INTO open VALUES (1)")
    run(conn, "INSERT INTO closed VALUES (1)")
    run(conn, "ALTER TABLE open CREATE TAG a")
    run(conn, "ALTER TABLE closed CREATE TAG a")
    assert rows(me, "SELECT * FROM open FOR TAG AS OF 'a'") == [(1,)]
    assert rows(me, "SHOW TAGS ON open")[0][0] == "a"
    fails(me, "SELECT * FROM closed FOR TAG AS OF 'a'", 1142, "SELECT_PRIV")
    fails(me, "ALTER TABLE open CREATE TAG b", 1142, "ALTER_PRIV")
    fails(me, "ALTER TABLE open DROP TAG a", 1142, "ALTER_PRIV")
    assert [r[0] for r in rows(conn, "SHOW TAGS ON open")] == ["a"]


@pytest.mark.parametrize("properties", ["", _TIME_TRAVEL], ids=["plain", "time_travel"])
def test_a_tag_as_of_an_instant(conn: pymysql.connections.Connection, db: str, recycling: Recycling,
                                properties: str) -> None:
    run(conn, f"CREATE TABLE t (k INT) {_TAIL} {properties}")
    run(conn, "INSERT INTO t VALUES (1)")
    time.sleep(0.01)
    instant = str(rows(conn, "SELECT CAST(NOW(3) AS CHAR)")[0][0])
    time.sleep(0.01)
    run(conn, "INSERT INTO t VALUES (2)")
    run(conn, f"ALTER TABLE t CREATE TAG then AS OF '{instant}'")
    assert rows(conn, "SHOW TAGS ON t")[0][1] == 1
    run(conn, "ADMIN COMPACT TABLE t WHERE type='BASE'")
    time.sleep(1.2)  # beyond the recycler's one-second retention
    recycling.recycle(db, "t")
    assert rows(conn, "SELECT * FROM t FOR TAG AS OF 'then'") == [(1,)]
    if properties:
        # With time travel the compaction kept every row's version: its output still answers the instant
        # (and the later snapshot), the recycled inputs were read by no snapshot, so a new tag may name it.
        run(conn, f"ALTER TABLE t CREATE TAG again AS OF '{instant}'")
        assert rows(conn, "SELECT * FROM t FOR TAG AS OF 'again'") == [(1,)]
        return
    # A new tag cannot name it now: the recycler deleted a rowset of a later snapshot, and what a new tag
    # may name starts after what was deleted (projections.retention.whole_since_ms).
    fails(conn, f"ALTER TABLE t CREATE TAG again AS OF '{instant}'", 1210)
