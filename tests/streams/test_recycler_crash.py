"""Crash test for the recycler: a recycler process dies right after its `RowsetsRecycled` event is
in the log and before it deleted a single file. Every instant inside the window still reads what
it did, trimmed instants are refused, and the next sweep removes the files left dangling. Files a
clone shares with its source survive a recycler killed at any deletion, and go with the last holder.
A dropped table's purge deletes its files itself, with no orphan sweep; killed after the purge's
event, it leaves them to the orphan sweep."""

from __future__ import annotations

import os
import subprocess
import sys
import tempfile
import textwrap
import time
from datetime import UTC, datetime
from pathlib import Path

import pymysql
import pytest

from projections.remote import RemoteStores
from projections.replica import Replica
from schemas.config import REPO_ROOT, load_settings
from storage.tiers import LocalTiers
from streams.recycler import Recycler

pytestmark = pytest.mark.integration

# Runs one sweep of crash_test.<argv[1]> with a one-second retention day (or, with argv[3] "purge",
# the purge of that dropped table); file deletion number argv[2] (1: the first) kills the process,
# the deletions before it done.
_DYING_RECYCLER = textwrap.dedent("""
    import os, pathlib, sys, tempfile
    from projections.remote import RemoteStores
    from projections.replica import Replica
    from schemas.config import load_settings
    from storage.tiers import LocalTiers
    from streams.recycler import Recycler

    config = load_settings()
    replica = Replica.open(config, pathlib.Path(tempfile.mkdtemp()), "dying-recycler")
    db = replica.projection.database_by_name("crash_test")
    purge = sys.argv[3:] == ["purge"]
    table = replica.projection.table_by_name(db.db_id, sys.argv[1], dropped=purge)
    unlink, left = pathlib.Path.unlink, [int(sys.argv[2])]

    def dying_unlink(self, missing_ok=False):
        left[0] -= 1
        if left[0] == 0:
            os._exit(137)
        unlink(self, missing_ok=missing_ok)

    pathlib.Path.unlink = dying_unlink
    recycler = Recycler(replica.projection, replica.proposer, LocalTiers.from_config(config),
                        RemoteStores(replica.projection, config), grace_s=0.0, day_s=1.0)
    recycler.purge_if_expired(table) if purge else recycler.recycle_table(table)
    os._exit(0)
""")


def _recycle_dying(table: str, at_deletion: int, *, purge: bool = False) -> int:
    """Runs the dying recycler on crash_test.`table` (its purge: `purge`); returns its exit code (137: killed)."""
    died = subprocess.run([sys.executable, "-c", _DYING_RECYCLER, table, str(at_deletion), *(["purge"] * purge)],
                          cwd=REPO_ROOT,
                          env=os.environ.copy(), capture_output=True, timeout=120)
    assert died.returncode in (0, 137), died.stderr.decode()[-2000:]
    return died.returncode


def _sweep_orphans() -> int:
    """One orphan sweep with no grace, on a fresh replica; returns how many files it removed."""
    config = load_settings()
    replica = Replica.open(config, Path(tempfile.mkdtemp()), "recycler-after-crash")
    try:
        sweeper = Recycler(replica.projection, replica.proposer, LocalTiers.from_config(config),
                           RemoteStores(replica.projection, config), grace_s=0.0, day_s=1.0)
        sweeper.remove_orphans()
    finally:
        replica.close()
    return sweeper.removed_orphans


def _fresh_table(name: str) -> pymysql.cursors.Cursor:
    """crash_test.`name` made anew (time travel for one retention day, no automatic compaction); a
    cursor on crash_test."""
    conn = pymysql.connect(host="127.0.0.1", port=int(os.environ["STRATA_SQL_PORT"]), user="root", autocommit=True)
    cur = conn.cursor()
    cur.execute("CREATE DATABASE IF NOT EXISTS crash_test")
    cur.execute("USE crash_test")
    cur.execute(f"DROP TABLE IF EXISTS {name} FORCE")
    cur.execute(f'CREATE TABLE {name} (k INT) DUPLICATE KEY(k) DISTRIBUTED BY HASH(k) BUCKETS 1 PROPERTIES ('
                '"enable_time_travel" = "true", "time_travel_retention_days" = "1", '
                '"disable_auto_compaction" = "true")')
    return cur


def _files(cur: pymysql.cursors.Cursor, ssd_dir: Path, table: str) -> list[Path]:
    """The files on the SSD tier of crash_test.`table`'s rowsets."""
    cur.execute("SELECT ROWSET_ID FROM information_schema.rowsets WHERE TABLE_SCHEMA = 'crash_test' "
                f"AND TABLE_NAME = '{table}'")
    return [p for (rowset_id,) in cur.fetchall() for p in ssd_dir.rglob(f"{rowset_id}.parquet")]


def _now() -> str:
    time.sleep(0.003)
    moment = datetime.now(tz=UTC).strftime("%Y-%m-%d %H:%M:%S.%f")
    time.sleep(0.003)
    return moment


def test_a_recycler_killed_between_event_and_deletion_leaves_nothing_dangling() -> None:
    config = load_settings()
    cur = _fresh_table("recycled")
    instants = []
    for i in range(1, 7):
        cur.execute(f"INSERT INTO recycled VALUES ({i})")
        instants.append((_now(), i))
    cur.execute("ADMIN COMPACT TABLE recycled WHERE TYPE = 'BASE'")
    cur.execute("SELECT ROWSET_ID FROM information_schema.rowsets WHERE TABLE_SCHEMA = 'crash_test' "
                "AND TABLE_NAME = 'recycled' AND STATE = 'stale'")
    stale = [r[0] for r in cur.fetchall()]
    assert len(stale) == 6
    time.sleep(1.5)  # the stale rowsets are now older than the test recycler's one-second retention

    assert _recycle_dying("recycled", 1) == 137

    cur.execute("SELECT count(*) FROM information_schema.rowsets WHERE TABLE_SCHEMA = 'crash_test' "
                "AND TABLE_NAME = 'recycled' AND STATE = 'stale'")
    assert cur.fetchone() == (0,), "the recycle event was not committed before the crash"
    dangling = [p for rowset_id in stale for p in config.ssd_dir.rglob(f"{rowset_id}.parquet")]
    assert len(dangling) == 6, "the files should still be there: the process died before deleting any"

    for moment, _ in instants:
        with pytest.raises(pymysql.MySQLError) as refused:
            cur.execute(f"SELECT count(*) FROM recycled FOR TIME AS OF '{moment}'")
        assert refused.value.args[0] == 1210 and "earliest instant that works" in refused.value.args[1]
    for moment, n in [(_now(), 6)]:  # inside the window: served from the compacted rowset alone
        cur.execute(f"SELECT count(*), sum(k) FROM recycled FOR TIME AS OF '{moment}'")
        assert cur.fetchone() == (n, n * (n + 1) // 2)

    assert _sweep_orphans() >= 6
    assert not any(p.exists() for p in dangling)
    cur.execute("SELECT count(*) FROM recycled")
    assert cur.fetchone() == (6,)


def test_a_dropped_table_is_recoverable_within_its_window_then_purged() -> None:
    config = load_settings()
    conn = pymysql.connect(host="127.0.0.1", port=int(os.environ["STRATA_SQL_PORT"]), user="root", autocommit=True)
    cur = conn.cursor()
    cur.execute("CREATE DATABASE IF NOT EXISTS crash_test")
    cur.execute("USE crash_test")
    cur.execute("DROP TABLE IF EXISTS dropped FORCE")
    cur.execute('CREATE TABLE dropped (k INT) DUPLICATE KEY(k) DISTRIBUTED BY HASH(k) BUCKETS 1 PROPERTIES ('
                '"enable_time_travel" = "true", "time_travel_retention_days" = "1")')
    cur.execute("INSERT INTO dropped VALUES (1), (2)")
    cur.execute("SELECT ROWSET_ID FROM information_schema.rowsets WHERE TABLE_SCHEMA = 'crash_test' "
                "AND TABLE_NAME = 'dropped'")
    files = [p for (rowset_id,) in cur.fetchall() for p in config.ssd_dir.rglob(f"{rowset_id}.parquet")]
    assert files
    cur.execute("DROP TABLE dropped")
    cur.execute("RECOVER TABLE dropped")
    cur.execute("SELECT count(*) FROM dropped")
    assert cur.fetchone() == (2,)
    cur.execute("DROP TABLE dropped")
    time.sleep(1.2)  # past the one-day retention of the test recycler's one-second days

    replica = Replica.open(config, Path(tempfile.mkdtemp()), "purging-recycler")
    try:
        recycler = Recycler(replica.projection, replica.proposer, LocalTiers.from_config(config),
                            RemoteStores(replica.projection, config), grace_s=0.0,
                            day_s=1.0)
        db = replica.projection.database_by_name("crash_test")
        assert db is not None
        table = replica.projection.table_by_name(db.db_id, "dropped", dropped=True)
        assert table is not None
        recycler.purge_if_expired(table)  # its files go with it: no orphan sweep
        assert recycler.removed_orphans == 0
    finally:
        replica.close()
    with pytest.raises(pymysql.MySQLError) as refused:
        cur.execute("RECOVER TABLE dropped")
    assert refused.value.args[0] == 1146
    assert not any(p.exists() for p in files)


@pytest.mark.parametrize("kill_at", [1, 2, 0], ids=["first_deletion", "second_deletion", "no_kill"])
def test_files_a_clone_shares_survive_a_recycler_killed_at_any_deletion(kill_at: int) -> None:
    config = load_settings()
    conn = pymysql.connect(host="127.0.0.1", port=int(os.environ["STRATA_SQL_PORT"]), user="root", autocommit=True)
    cur = conn.cursor()
    cur.execute("CREATE DATABASE IF NOT EXISTS crash_test")
    cur.execute("USE crash_test")
    for name in ("shared_src", "shared_clone"):
        cur.execute(f"DROP TABLE IF EXISTS {name} FORCE")
    properties = ('PROPERTIES ("enable_time_travel" = "true", "time_travel_retention_days" = "1", '
                  '"disable_auto_compaction" = "true")')
    cur.execute(f"CREATE TABLE shared_src (k INT) DUPLICATE KEY(k) DISTRIBUTED BY HASH(k) BUCKETS 1 {properties}")
    for i in range(1, 4):
        cur.execute(f"INSERT INTO shared_src VALUES ({i})")
    shared = _files(cur, config.ssd_dir, "shared_src")
    assert len(shared) == 3
    cur.execute("CREATE TABLE shared_clone CLONE shared_src")
    for i in range(4, 6):  # the source's own files: the dying recycler deletes these, shared ones never
        cur.execute(f"INSERT INTO shared_src VALUES ({i})")
    cur.execute("ADMIN COMPACT TABLE shared_src WHERE TYPE = 'BASE'")
    time.sleep(1.5)  # the stale rowsets are now older than the test recycler's one-second retention

    # Five stale rowsets, two files the source's own: killed at the first or second deletion, or not at all.
    assert _recycle_dying("shared_src", kill_at) == (137 if kill_at else 0)
    _sweep_orphans()  # takes what the dying recycler left of the source's own files
    assert all(p.exists() for p in shared)
    cur.execute("SELECT count(*), sum(k) FROM shared_clone")
    assert cur.fetchone() == (3, 6)
    cur.execute("SELECT count(*), sum(k) FROM shared_src")
    assert cur.fetchone() == (5, 15)

    # The clone lets go of them too: killed at its first deletion, the files wait for the orphan sweep.
    cur.execute("ADMIN COMPACT TABLE shared_clone WHERE TYPE = 'BASE'")
    time.sleep(1.5)
    assert _recycle_dying("shared_clone", kill_at) == (137 if kill_at else 0)
    _sweep_orphans()
    assert not any(p.exists() for p in shared)
    cur.execute("SELECT count(*), sum(k) FROM shared_clone")
    assert cur.fetchone() == (3, 6)


def test_a_purge_killed_after_its_event_leaves_the_files_to_the_orphan_sweep() -> None:
    config = load_settings()
    cur = _fresh_table("purged")
    for i in range(1, 3):
        cur.execute(f"INSERT INTO purged VALUES ({i})")
    files = _files(cur, config.ssd_dir, "purged")
    assert len(files) == 2
    cur.execute("DROP TABLE purged")
    time.sleep(1.2)  # past the one-day retention of the test recycler's one-second days

    assert _recycle_dying("purged", 2, purge=True) == 137  # the first file deleted, then killed
    with pytest.raises(pymysql.MySQLError) as refused:
        cur.execute("RECOVER TABLE purged")
    assert refused.value.args[0] == 1146, "the purge event was not committed before the crash"
    assert [p.exists() for p in files].count(True) == 1
    assert _sweep_orphans() >= 1
    assert not any(p.exists() for p in files)
