"""CREATE TABLE … CLONE: a new table whose first commit is its source's snapshot (now, at an instant, a
commit or a tag), sharing the source's files. Both then evolve on their own; the recycler deletes a
shared file only once no table holds it."""

from __future__ import annotations

import time

import pymysql
import pytest

from tests.query.recycling_kit import Recycling
from tests.query.sqlkit import columns, fails, rows, run, scalar, sorted_rows

pytestmark = pytest.mark.integration
_UNIQUE = "UNIQUE KEY(k) DISTRIBUTED BY HASH(k) BUCKETS 2"
_DUPLICATE = "DUPLICATE KEY(k) DISTRIBUTED BY HASH(k) BUCKETS 1"
_TIME_TRAVEL = 'PROPERTIES ("enable_time_travel" = "true", "time_travel_retention_days" = "1")'


def _now(conn: pymysql.connections.Connection) -> str:
    time.sleep(0.01)
    instant = str(scalar(conn, "SELECT CAST(NOW(3) AS CHAR)"))
    time.sleep(0.01)
    return instant


def test_a_clone_reads_its_source_snapshot_now_at_an_instant_a_version_and_a_tag(
        conn: pymysql.connections.Connection, db: str) -> None:
    run(conn, f"CREATE TABLE t (k INT, v INT) {_UNIQUE} {_TIME_TRAVEL}")
    run(conn, "INSERT INTO t VALUES (1, 10), (2, 20)")
    first = [(1, 10), (2, 20)]
    instant = _now(conn)
    run(conn, "INSERT INTO t VALUES (1, 11), (3, 30)")  # commit 2
    second = [(1, 11), (2, 20), (3, 30)]
    run(conn, "ALTER TABLE t CREATE TAG two")
    run(conn, "DELETE FROM t WHERE k = 2")
    run(conn, 'ALTER TABLE t ADD COLUMN w INT DEFAULT "0"')
    run(conn, "INSERT INTO t VALUES (4, 40, 4)")
    latest = [(1, 11, 0), (3, 30, 0), (4, 40, 4)]
    clones = {
        "c_now": ("", latest),
        "c_instant": (f" AS OF '{instant}'", first),
        "c_for_time": (f" FOR TIME AS OF '{instant}'", first),
        "c_version": (" FOR VERSION AS OF 2", second),
        "c_tag": (" TAG 'two'", second),
        "c_for_tag": (" FOR TAG AS OF 'two'", second),
    }
    for name, (clause, wanted) in clones.items():
        run(conn, f"CREATE TABLE {name} CLONE t{clause}")
        assert sorted_rows(conn, f"SELECT * FROM {name}") == wanted, name
    # The schema is the one in force at the snapshot.
    assert columns(conn, "SELECT * FROM c_version") == ["k", "v"]
    assert columns(conn, "SELECT * FROM c_now") == ["k", "v", "w"]
    # Writes to either side do not show on the other.
    run(conn, "INSERT INTO c_now VALUES (9, 90, 9)")
    run(conn, "UPDATE c_version SET v = 33 WHERE k = 3")
    run(conn, "DELETE FROM t WHERE k = 1")
    assert sorted_rows(conn, "SELECT * FROM t") == [(3, 30, 0), (4, 40, 4)]
    assert sorted_rows(conn, "SELECT * FROM c_now") == [*latest, (9, 90, 9)]
    assert sorted_rows(conn, "SELECT * FROM c_version") == [(1, 11), (2, 20), (3, 33)]
    # The clone's history starts at its creation: its first commit is the snapshot.
    assert rows(conn, "SHOW TIME TRAVEL ON c_version")[0][6] == "clone"
    assert sorted_rows(conn, "SELECT * FROM c_version FOR VERSION AS OF 1") == second
    fails(conn, f"SELECT * FROM c_instant FOR TIME AS OF '{instant}'", 1210, "before table 'c_instant' existed")


def test_a_clone_of_a_partitioned_table_with_a_delete_and_a_clone_of_a_clone(
        conn: pymysql.connections.Connection, db: str) -> None:
    run(conn, "CREATE TABLE t (k INT, v INT) DUPLICATE KEY(k) PARTITION BY RANGE(k) (PARTITION p1 VALUES LESS "
              f"THAN (10), PARTITION p2 VALUES LESS THAN (20)) DISTRIBUTED BY HASH(k) BUCKETS 2 {_TIME_TRAVEL}")
    run(conn, "INSERT INTO t VALUES (1, 1), (2, 2), (11, 11), (12, 12)")
    run(conn, "DELETE FROM t WHERE v = 2")
    run(conn, f"CREATE TABLE {db}.c CLONE {db}.t")
    run(conn, "CREATE TABLE cc CLONE c")
    for name in ("c", "cc"):
        assert sorted_rows(conn, f"SELECT * FROM {name}") == [(1, 1), (11, 11), (12, 12)]
        assert sorted_rows(conn, f"SELECT * FROM {name} PARTITION (p2)") == [(11, 11), (12, 12)]
    run(conn, "INSERT INTO cc VALUES (2, 2)")  # the delete applies only to rows written before it
    assert sorted_rows(conn, "SELECT * FROM cc PARTITION (p1)") == [(1, 1), (2, 2)]
    assert sorted_rows(conn, "SELECT * FROM c PARTITION (p1)") == [(1, 1)]


def test_compaction_on_both_sides_then_recycling_keeps_both_readable(
        conn: pymysql.connections.Connection, db: str, recycling: Recycling) -> None:
    run(conn, f"CREATE TABLE t (k INT, v INT) {_UNIQUE} {_TIME_TRAVEL}")
    for n in range(3):
        run(conn, f"INSERT INTO t VALUES ({n}, {n}), ({n + 10}, {n})")
    run(conn, "CREATE TABLE c CLONE t")
    shared = recycling.files(db, "t")
    assert recycling.files(db, "c") == shared  # zero copy: the clone names the source's files
    run(conn, "INSERT INTO t VALUES (0, 100)")
    run(conn, "INSERT INTO c VALUES (1, 200)")
    before = {"t": sorted_rows(conn, "SELECT * FROM t"), "c": sorted_rows(conn, "SELECT * FROM c")}
    run(conn, "ADMIN COMPACT TABLE t WHERE type='BASE'")
    time.sleep(1.2)  # beyond the recycler's one-second retention
    assert recycling.recycle(db, "t") > 0
    assert all(path.exists() for path in shared)  # the clone still reads them
    assert sorted_rows(conn, "SELECT * FROM c") == before["c"]
    run(conn, "ADMIN COMPACT TABLE c WHERE type='BASE'")
    time.sleep(1.2)
    assert recycling.recycle(db, "c") > 0
    assert not any(path.exists() for path in shared)  # the last holder released them
    for name, wanted in before.items():
        assert sorted_rows(conn, f"SELECT * FROM {name}") == wanted, name


def test_dropping_the_source_keeps_the_clone_and_dropping_both_leaks_nothing(
        conn: pymysql.connections.Connection, db: str, recycling: Recycling) -> None:
    run(conn, f"CREATE TABLE t (k INT, v INT) {_DUPLICATE} {_TIME_TRAVEL}")
    run(conn, "INSERT INTO t VALUES (1, 1)")
    run(conn, "INSERT INTO t VALUES (2, 2)")
    run(conn, "CREATE TABLE c CLONE t")
    shared = recycling.files(db, "t")
    run(conn, "DROP TABLE t")
    time.sleep(1.2)  # past the dropped table's recovery window (its one-second retention)
    recycling.purge(db, "t")
    assert all(path.exists() for path in shared)
    assert sorted_rows(conn, "SELECT * FROM c") == [(1, 1), (2, 2)]
    run(conn, "INSERT INTO c VALUES (3, 3)")
    run(conn, "ADMIN COMPACT TABLE c WHERE type='BASE'")
    assert sorted_rows(conn, "SELECT * FROM c") == [(1, 1), (2, 2), (3, 3)]
    every = shared | recycling.files(db, "c")
    run(conn, "DROP TABLE c")
    time.sleep(1.2)
    recycling.purge(db, "c")
    assert not any(path.exists() for path in every)
    # Nor is anything of theirs left in the data directories.
    assert not any(path.parent.exists() and any(path.parent.iterdir()) for path in every)


def test_clone_privileges(conn: pymysql.connections.Connection, db: str,
                          reader: tuple[pymysql.connections.Connection, str, str]) -> None:
    me, name, _ = reader
    run(conn, "INSERT INTO open VALUES (1)")
    fails(me, "CREATE TABLE c CLONE open", 1142, "CREATE_PRIV")
    run(conn, f"GRANT CREATE_PRIV ON {db}.* TO '{name}'")
    fails(me, "CREATE TABLE c CLONE closed", 1142, "SELECT_PRIV")
    run(me, "CREATE TABLE c CLONE open")
    assert rows(conn, "SELECT * FROM c") == [(1,)]


def test_clone_errors_and_if_not_exists(conn: pymysql.connections.Connection, db: str) -> None:
    run(conn, f"CREATE TABLE t (k INT) {_DUPLICATE} {_TIME_TRAVEL}")
    run(conn, f"CREATE TABLE plain (k INT) {_DUPLICATE}")
    run(conn, "INSERT INTO t VALUES (1)")
    run(conn, "INSERT INTO plain VALUES (1)")
    run(conn, "CREATE TABLE c CLONE t")
    fails(conn, "CREATE TABLE c CLONE t", 1050, "already exists")
    run(conn, "INSERT INTO t VALUES (2)")
    run(conn, "CREATE TABLE IF NOT EXISTS c CLONE t")
    assert rows(conn, "SELECT * FROM c") == [(1,)]  # left as it was
    fails(conn, "CREATE TABLE d CLONE nope", 1146, "nope")
    fails(conn, "CREATE TABLE d CLONE t TAG 'nope'", 1210, "no tag 'nope'")
    fails(conn, "CREATE TABLE d CLONE t AS OF 'yesterday'", 1525, "not a valid timestamp")
    fails(conn, "CREATE TABLE d CLONE t AS OF '2999-01-01 00:00:00'", 1210, "future")
    fails(conn, "CREATE TABLE d CLONE t AS OF '2000-01-01 00:00:00'", 1210, "before table 't' existed")
    fails(conn, "CREATE TABLE d CLONE t FOR VERSION AS OF 9", 1210, "no commit 9")
    fails(conn, "CREATE TABLE d CLONE plain FOR VERSION AS OF 1", 1235, "no time travel")
    fails(conn, "CREATE TABLE d CLONE t AS OF", 1064)
    assert [r[0] for r in rows(conn, "SHOW TABLES")] == ["c", "plain", "t"]
    run(conn, "CREATE TABLE d CLONE plain")  # the latest state needs no time travel
    assert rows(conn, "SELECT * FROM d") == [(1,)]


def test_restore_and_time_travel_on_both_sides(conn: pymysql.connections.Connection, db: str) -> None:
    run(conn, f"CREATE TABLE t (k INT, v INT) {_UNIQUE} {_TIME_TRAVEL}")
    run(conn, "INSERT INTO t VALUES (1, 1), (2, 2)")
    before_clone = _now(conn)
    run(conn, "CREATE TABLE c CLONE t")
    cloned = _now(conn)
    run(conn, "INSERT INTO t VALUES (1, 10)")
    run(conn, "INSERT INTO c VALUES (2, 20), (3, 30)")
    run(conn, "ADMIN COMPACT TABLE t WHERE type='BASE'")
    run(conn, "ADMIN COMPACT TABLE c WHERE type='BASE'")
    # Each side's past reads as before its own writes and compactions.
    assert sorted_rows(conn, f"SELECT * FROM t FOR TIME AS OF '{before_clone}'") == [(1, 1), (2, 2)]
    assert sorted_rows(conn, f"SELECT * FROM c FOR TIME AS OF '{cloned}'") == [(1, 1), (2, 2)]
    run(conn, f"RESTORE TABLE c TO TIME AS OF '{cloned}'")
    assert sorted_rows(conn, "SELECT * FROM c") == [(1, 1), (2, 2)]
    assert sorted_rows(conn, "SELECT * FROM t") == [(1, 10), (2, 2)]
    run(conn, f"RESTORE TABLE t TO TIME AS OF '{before_clone}'")
    run(conn, "INSERT INTO c VALUES (4, 4)")
    assert sorted_rows(conn, "SELECT * FROM t") == [(1, 1), (2, 2)]
    assert sorted_rows(conn, "SELECT * FROM c") == [(1, 1), (2, 2), (4, 4)]


def test_every_write_path_on_one_side_leaves_the_other_alone(conn: pymysql.connections.Connection,
                                                             db: str) -> None:
    run(conn, "CREATE TABLE t (k INT, v INT) DUPLICATE KEY(k) PARTITION BY RANGE(k) (PARTITION p1 VALUES LESS "
              f"THAN (10), PARTITION p2 VALUES LESS THAN (20)) DISTRIBUTED BY HASH(k) BUCKETS 1 {_TIME_TRAVEL}")
    run(conn, "INSERT INTO t VALUES (1, 1), (11, 11)")
    run(conn, "CREATE TABLE c CLONE t")
    run(conn, "INSERT OVERWRITE TABLE c PARTITION (p1) VALUES (2, 2)")
    run(conn, "ALTER TABLE c DROP PARTITION p2")
    run(conn, 'ALTER TABLE c ADD COLUMN w INT DEFAULT "5"')
    run(conn, "ALTER TABLE c RENAME c2")
    assert sorted_rows(conn, "SELECT * FROM c2") == [(2, 2, 5)]
    assert sorted_rows(conn, "SELECT * FROM t") == [(1, 1), (11, 11)]
    run(conn, "TRUNCATE TABLE t")
    run(conn, "ALTER TABLE t ADD PARTITION p3 VALUES LESS THAN (30)")
    run(conn, "INSERT INTO t VALUES (21, 21)")
    assert sorted_rows(conn, "SELECT * FROM t") == [(21, 21)]
    assert sorted_rows(conn, "SELECT * FROM c2") == [(2, 2, 5)]
    assert [r[1] for r in rows(conn, "SHOW PARTITIONS FROM c2")] == ["p1"]
