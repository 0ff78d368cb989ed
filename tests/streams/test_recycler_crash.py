"""Crash test for the recycler: a recycler process dies right after its `RowsetsRecycled` event is
in the log and before it deleted a single file. Every instant inside the window still reads what
it did, trimmed instants are refused, and the next sweep removes the files left dangling."""

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

# Runs one sweep with a one-second retention day; the first file deletion kills the process.
_DYING_RECYCLER = textwrap.dedent("""
    import os, pathlib, tempfile
    from projections.remote import RemoteStores
    from projections.replica import Replica
    from schemas.config import load_settings
    from storage.tiers import LocalTiers
    from streams.recycler import Recycler

    config = load_settings()
    replica = Replica.open(config, pathlib.Path(tempfile.mkdtemp()), "dying-recycler")
    db = replica.projection.database_by_name("crash_test")
    table = replica.projection.table_by_name(db.db_id, "recycled")
    pathlib.Path.unlink = lambda self, missing_ok=False: os._exit(137)
    Recycler(replica.projection, replica.proposer, LocalTiers.from_config(config),
             RemoteStores(replica.projection, config),
             grace_s=0.0, day_s=1.0).recycle_table(table)
    os._exit(0)
""")


def _now() -> str:
    time.sleep(0.003)
    moment = datetime.now(tz=UTC).strftime("%Y-%m-%d %H:%M:%S.%f")
    time.sleep(0.003)
    return moment


def test_a_recycler_killed_between_event_and_deletion_leaves_nothing_dangling() -> None:
    config = load_settings()
    conn = pymysql.connect(host="127.0.0.1", port=int(os.environ["STRATA_SQL_PORT"]), user="root", autocommit=True)
    cur = conn.cursor()
    cur.execute("CREATE DATABASE IF NOT EXISTS crash_test")
    cur.execute("USE crash_test")
    cur.execute("DROP TABLE IF EXISTS recycled FORCE")
    cur.execute('CREATE TABLE recycled (k INT) DUPLICATE KEY(k) DISTRIBUTED BY HASH(k) BUCKETS 1 PROPERTIES ('
                '"enable_time_travel" = "true", "time_travel_retention_days" = "1", '
                '"disable_auto_compaction" = "true")')
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

    died = subprocess.run([sys.executable, "-c", _DYING_RECYCLER], cwd=REPO_ROOT, env=os.environ.copy(),
                          capture_output=True, timeout=120)
    assert died.returncode == 137, died.stderr.decode()[-2000:]

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

    replica = Replica.open(config, Path(tempfile.mkdtemp()), "recycler-after-crash")
    try:
        sweeper = Recycler(replica.projection, replica.proposer, LocalTiers.from_config(config),
                           RemoteStores(replica.projection, config), grace_s=0.0,
                           day_s=1.0)
        sweeper.remove_orphans()
    finally:
        replica.close()
    assert not any(p.exists() for p in dangling)
    assert sweeper.removed_orphans >= 6
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
        recycler.purge_if_expired(table)
        recycler.remove_orphans()
    finally:
        replica.close()
    with pytest.raises(pymysql.MySQLError) as refused:
        cur.execute("RECOVER TABLE dropped")
    assert refused.value.args[0] == 1146
    assert not any(p.exists() for p in files)
