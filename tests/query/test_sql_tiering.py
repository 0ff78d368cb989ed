"""Tiered storage end to end through the SQL port: cooldown to the stack's MinIO, SSD → HDD, work
on cooled partitions, time travel across tiers, MinIO faults, the file cache and remote garbage."""

from __future__ import annotations

import io
import os
import signal
import tempfile
import time
import urllib.request
import uuid
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from datetime import UTC, datetime, timedelta
from pathlib import Path

import pytest
from minio import Minio

from infra.cli import parse_until, table_at
from infra.layout import Layout
from infra.supervisor import running_pid
from projections.remote import RemoteStores
from projections.replay import replay
from projections.replica import Replica
from schemas.config import Settings, load_settings
from storage.tiers import LocalTiers
from streams.recycler import Recycler
from tests.query.sqlkit import Conn, fails, rows, run, sorted_rows

pytestmark = pytest.mark.integration


@pytest.fixture(scope="module")
def minio(config: Settings) -> Minio:
    return Minio(config.minio_endpoint, config.minio_root_user, config.minio_root_password.get_secret_value(),
                 secure=False)


@pytest.fixture
def resource(conn: Conn, config: Settings, minio: Minio) -> Iterator[tuple[str, str]]:
    """A resource on the stack's MinIO (a fresh bucket, root path `cold/<name>`): (name, bucket)."""
    name = f"res_{uuid.uuid4().hex[:8]}"
    bucket = f"tier-{uuid.uuid4().hex[:10]}"
    minio.make_bucket(bucket)
    run(conn, f'CREATE RESOURCE "{name}" PROPERTIES ("type"="s3", "s3.endpoint"="http://{config.minio_endpoint}", '
              f'"s3.region"="us-east-1", "s3.bucket"="{bucket}", "s3.root.path"="cold/{name}", '
              f'"s3.access_key"="{config.minio_root_user}", '
              f'"s3.secret_key"="{config.minio_root_password.get_secret_value()}", "use_path_style"="true")')
    yield name, bucket


def _policy(conn: Conn, resource: str, ttl: str = "1") -> str:
    name = f"pol_{uuid.uuid4().hex[:8]}"
    run(conn, f'CREATE STORAGE POLICY {name} PROPERTIES ("storage_resource"="{resource}", "cooldown_ttl"="{ttl}")')
    return name


def wait_for(check: Callable[[], bool], timeout: float = 30.0, what: str = "condition") -> None:
    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline:
        if check():
            return
        time.sleep(0.25)
    raise AssertionError(f"timed out after {timeout:.0f} s waiting for {what}")


def tiers(conn: Conn, db: str, table: str, state: str = "visible") -> dict[str, int]:
    return dict(rows(conn, f"SELECT TIER, COUNT(*) FROM information_schema.rowsets WHERE TABLE_SCHEMA = '{db}' "
                           f"AND TABLE_NAME = '{table}' AND STATE = '{state}' GROUP BY TIER"))


def wait_cooled(conn: Conn, db: str, table: str, resource: str, timeout: float = 30.0) -> None:
    wait_for(lambda: set(tiers(conn, db, table)) == {f"remote:{resource}"}, timeout, f"{table} to cool down")


def _local_files(config: Settings, db_conn: Conn, db: str, table: str) -> list[Path]:
    ids = [r[0] for r in rows(db_conn, f"SELECT ROWSET_ID FROM information_schema.rowsets WHERE TABLE_SCHEMA = "
                                       f"'{db}' AND TABLE_NAME = '{table}'")]
    return [p for root in (config.ssd_dir, config.hdd_dir) for p in root.rglob("*.parquet")
            if p.name.split(".")[0] in ids]


def _objects(minio: Minio, bucket: str) -> list[str]:
    return sorted(o.object_name or "" for o in minio.list_objects(bucket, recursive=True))


@contextmanager
def minio_paused(config: Settings) -> Iterator[None]:
    """MinIO stopped (SIGSTOP): connections hang until the clients time out; resumed afterwards."""
    pid = running_pid(Layout(config).pid_file("minio"))
    assert pid is not None, "MinIO is not running"
    os.kill(pid, signal.SIGSTOP)
    try:
        yield
    finally:
        os.kill(pid, signal.SIGCONT)


def test_a_table_cools_to_minio_and_keeps_working(conn: Conn, db: str, resource: tuple[str, str],
                                                  config: Settings, minio: Minio) -> None:
    name, bucket = resource
    policy = _policy(conn, name)
    run(conn, f'CREATE TABLE t (k INT, v INT) DUPLICATE KEY(k) DISTRIBUTED BY HASH(k) BUCKETS 2 '
              f'PROPERTIES ("storage_policy"="{policy}")')
    run(conn, "INSERT INTO t VALUES (1, 10), (2, 20), (3, 30)")
    run(conn, "INSERT INTO t VALUES (4, 40)")
    before = sorted_rows(conn, "SELECT * FROM t")
    wait_cooled(conn, db, "t", name)
    # One object per rowset, under the resource's root path, named by the rowset's own path.
    objects = _objects(minio, bucket)
    ids = [r[0] for r in rows(conn, f"SELECT ROWSET_ID FROM information_schema.rowsets WHERE TABLE_SCHEMA = '{db}' "
                                    "AND TABLE_NAME = 't'")]
    assert len(objects) == len(ids) and all(o.startswith(f"cold/{name}/t") for o in objects)
    assert {o.rsplit("/", 1)[1].split(".")[0] for o in objects} == set(ids)
    wait_for(lambda: _local_files(config, conn, db, "t") == [], 15, "the local copies to go")
    assert sorted_rows(conn, "SELECT * FROM t") == before
    # Loads land hot and cool later; deletes and schema change work on the cooled partition.
    run(conn, "INSERT INTO t VALUES (5, 50)")
    assert "ssd" in tiers(conn, db, "t") or set(tiers(conn, db, "t")) == {f"remote:{name}"}
    run(conn, "DELETE FROM t WHERE k = 1")
    run(conn, "ALTER TABLE t ADD COLUMN w INT DEFAULT \"7\"")
    expected = [(2, 20, 7), (3, 30, 7), (4, 40, 7), (5, 50, 7)]
    assert sorted_rows(conn, "SELECT * FROM t") == expected
    wait_cooled(conn, db, "t", name)
    # Compaction reads the cooled inputs and writes its output to their tier.
    run(conn, "ADMIN COMPACT TABLE t WHERE type = 'BASE'")
    assert set(tiers(conn, db, "t")) == {f"remote:{name}"}
    assert sorted_rows(conn, "SELECT * FROM t") == expected
    show = rows(conn, "SHOW PARTITIONS FROM t")
    assert show and f"remote:{name}" in show[0]


def test_unique_and_aggregate_tables_update_cooled_data(conn: Conn, db: str, resource: tuple[str, str]) -> None:
    name, _ = resource
    policy = _policy(conn, name)
    run(conn, f'CREATE TABLE u (k INT, v INT) UNIQUE KEY(k) DISTRIBUTED BY HASH(k) BUCKETS 1 '
              f'PROPERTIES ("storage_policy"="{policy}")')
    run(conn, f'CREATE TABLE a (k INT, v INT SUM) AGGREGATE KEY(k) DISTRIBUTED BY HASH(k) BUCKETS 1 '
              f'PROPERTIES ("storage_policy"="{policy}")')
    run(conn, "INSERT INTO u VALUES (1, 1), (2, 2)")
    run(conn, "INSERT INTO a VALUES (1, 1), (2, 2)")
    wait_cooled(conn, db, "u", name)
    wait_cooled(conn, db, "a", name)
    run(conn, "UPDATE u SET v = v + 10 WHERE k = 1")
    run(conn, "DELETE FROM u WHERE k = 2")
    run(conn, "INSERT INTO a VALUES (1, 5)")
    assert sorted_rows(conn, "SELECT * FROM u") == [(1, 11)]
    assert sorted_rows(conn, "SELECT * FROM a") == [(1, 6), (2, 2)]
    wait_cooled(conn, db, "u", name)
    assert sorted_rows(conn, "SELECT * FROM u") == [(1, 11)]


def test_time_travel_across_tiers_returns_the_same_rows(conn: Conn, db: str, resource: tuple[str, str]) -> None:
    name, _ = resource
    run(conn, 'CREATE TABLE h (k INT, v INT) UNIQUE KEY(k) DISTRIBUTED BY HASH(k) BUCKETS 1 '
              'PROPERTIES ("enable_time_travel"="true", "disable_auto_compaction"="true")')
    instants = []
    for i in range(4):
        run(conn, f"INSERT INTO h VALUES ({i}, {i}), (0, {100 + i})")
        time.sleep(0.02)
        instants.append(datetime.now(tz=UTC).strftime("%Y-%m-%d %H:%M:%S.%f"))
    past = {t: sorted_rows(conn, f"SELECT * FROM h FOR TIME AS OF '{t}'") for t in instants}
    run(conn, "ADMIN COMPACT TABLE h WHERE type = 'BASE'")  # the inputs go stale, kept for time travel
    policy = _policy(conn, name)
    run(conn, f'ALTER TABLE h SET ("storage_policy"="{policy}")')
    wait_cooled(conn, db, "h", name)
    wait_for(lambda: set(tiers(conn, db, "h", "stale")) == {f"remote:{name}"}, 20, "the stale rowsets to cool")
    for t, expected in past.items():
        assert sorted_rows(conn, f"SELECT * FROM h FOR TIME AS OF '{t}'") == expected
    # A replay to an instant before the cooldown still finds the rowsets, now on MinIO.
    scratch = Path(tempfile.mkdtemp(prefix="replay-cold-")) / "p"
    replay(load_settings(), scratch, until_ms=parse_until(instants[1]))
    data = table_at(load_settings(), scratch, db, "h")
    assert sorted(zip(data.column("k").to_pylist(), data.column("v").to_pylist(), strict=True)) == past[instants[1]]


def test_ssd_data_moves_to_hdd_at_its_cooldown_time(conn: Conn, db: str, config: Settings) -> None:
    when = (datetime.now(UTC) + timedelta(seconds=3)).strftime("%Y-%m-%d %H:%M:%S")
    run(conn, "SET time_zone = '+00:00'")
    run(conn, f'CREATE TABLE s (k INT) DUPLICATE KEY(k) DISTRIBUTED BY HASH(k) BUCKETS 1 '
              f'PROPERTIES ("storage_medium"="SSD", "storage_cooldown_time"="{when}")')
    run(conn, 'CREATE TABLE d (k INT) DUPLICATE KEY(k) DISTRIBUTED BY HASH(k) BUCKETS 1 '
              'PROPERTIES ("storage_medium"="HDD")')
    run(conn, "INSERT INTO s VALUES (1)")
    run(conn, "INSERT INTO d VALUES (1)")
    assert tiers(conn, db, "s") == {"ssd": 1} and tiers(conn, db, "d") == {"hdd": 1}
    wait_for(lambda: tiers(conn, db, "s") == {"hdd": 1}, 20, "s to move to HDD")
    files = _local_files(config, conn, db, "s")
    wait_for(lambda: all(config.hdd_dir in p.parents for p in _local_files(config, conn, db, "s")), 15,
             "the SSD copy to go")
    assert files
    run(conn, "INSERT INTO s VALUES (2)")  # past its cooldown time, new data lands on HDD
    assert tiers(conn, db, "s") == {"hdd": 2}
    assert sorted_rows(conn, "SELECT * FROM s") == [(1,), (2,)]
    assert "HDD" in rows(conn, "SHOW PARTITIONS FROM d")[0]


def test_minio_down_during_cooldown_keeps_data_hot_then_cooldown_resumes(
        conn: Conn, db: str, resource: tuple[str, str], config: Settings) -> None:
    name, _ = resource
    policy = _policy(conn, name)
    run(conn, f'CREATE TABLE f (k INT) DUPLICATE KEY(k) DISTRIBUTED BY HASH(k) BUCKETS 1 '
              f'PROPERTIES ("storage_policy"="{policy}")')
    with minio_paused(config):
        run(conn, "INSERT INTO f VALUES (1), (2)")
        time.sleep(6)  # well past the 1 s ttl: uploads time out and back off
        assert tiers(conn, db, "f") == {"ssd": 1}
        assert sorted_rows(conn, "SELECT * FROM f") == [(1,), (2,)]
    wait_cooled(conn, db, "f", name, timeout=60)
    assert sorted_rows(conn, "SELECT * FROM f") == [(1,), (2,)]


def test_cold_reads_with_minio_down_fail_naming_the_resource_unless_cached(
        conn: Conn, db: str, resource: tuple[str, str], config: Settings) -> None:
    name, _ = resource
    policy = _policy(conn, name)
    for table in ("warm", "cold"):
        run(conn, f'CREATE TABLE {table} (k INT) DUPLICATE KEY(k) DISTRIBUTED BY HASH(k) BUCKETS 1 '
                  f'PROPERTIES ("storage_policy"="{policy}")')
        run(conn, f"INSERT INTO {table} VALUES (1)")
    wait_cooled(conn, db, "warm", name)
    wait_cooled(conn, db, "cold", name)
    wait_for(lambda: _local_files(config, conn, db, "cold") == [], 15, "the local copies to go")
    assert sorted_rows(conn, "SELECT * FROM warm") == [(1,)]  # now in the SQL server's file cache
    with minio_paused(config):
        assert sorted_rows(conn, "SELECT * FROM warm") == [(1,)]
        fails(conn, "SELECT * FROM cold", 1105, f"resource '{name}'", "did not answer")
    assert sorted_rows(conn, "SELECT * FROM cold") == [(1,)]
    metrics = urllib.request.urlopen(f"http://127.0.0.1:{config.http_port}/metrics", timeout=10).read().decode()
    hits = [line for line in metrics.splitlines() if line.startswith("strata_file_cache_hits ")]
    assert hits and float(hits[0].split()[1]) >= 1
    assert "strata_file_cache_evictions" in metrics and "strata_file_cache_misses" in metrics


def test_remote_orphans_and_a_purged_tables_objects_are_removed(
        conn: Conn, db: str, resource: tuple[str, str], config: Settings, minio: Minio) -> None:
    name, bucket = resource
    policy = _policy(conn, name)
    run(conn, f'CREATE TABLE g (k INT) DUPLICATE KEY(k) DISTRIBUTED BY HASH(k) BUCKETS 1 '
              f'PROPERTIES ("storage_policy"="{policy}")')
    run(conn, "INSERT INTO g VALUES (1)")
    wait_cooled(conn, db, "g", name)
    named = _objects(minio, bucket)
    stray = f"cold/{name}/t999999/p1/b0/{uuid.uuid4().hex}.parquet"
    foreign = f"cold/{name}/notes/readme.txt"  # not Strata's: never touched
    for key in (stray, foreign):
        minio.put_object(bucket, key, io.BytesIO(b"x"), 1)
    # A local copy a crash left behind after its rowset cooled (old enough to count as an orphan).
    left = config.ssd_dir / named[0].removeprefix(f"cold/{name}/")
    left.parent.mkdir(parents=True, exist_ok=True)
    left.write_bytes(b"stale copy")
    os.utime(left, (time.time() - 3600, time.time() - 3600))
    replica = Replica.open(config, Path(tempfile.mkdtemp(prefix="tier-gc-")), f"tier-gc-{uuid.uuid4().hex[:6]}")
    try:
        # Only this test's resource: with no grace, another test's upload in flight would count too.
        recycler = Recycler(replica.projection, replica.proposer, LocalTiers.from_config(config),
                            RemoteStores(replica.projection, config), grace_s=0.0, day_s=1.0, recovery_window_s=0.0)
        recycler.remove_remote_orphans([name])
        assert _objects(minio, bucket) == sorted([*named, foreign])
        assert recycler.removed_remote_orphans == 1
        recycler.grace_s = 600.0  # local files: only ones older than this (in-flight writes are fresh)
        recycler.remove_orphans()
        assert not left.exists()
        run(conn, "DROP TABLE g FORCE")
        replica.follower.wait_for_now(30)
        recycler.grace_s = 0.0
        recycler.remove_remote_orphans([name])
        assert _objects(minio, bucket) == [foreign]
    finally:
        replica.close()


def test_a_clone_shares_cooled_files_and_shared_files_stay_where_they_are(
        conn: Conn, db: str, resource: tuple[str, str], config: Settings, minio: Minio) -> None:
    """A clone of a cooled table reads its source's objects, which outlive the source; a file a clone
    shares is not cooled (both tables' records name it where it is) until compaction has replaced it on
    the sharing side."""
    name, bucket = resource
    policy = _policy(conn, name)
    tail = f'DUPLICATE KEY(k) DISTRIBUTED BY HASH(k) BUCKETS 1 PROPERTIES ("storage_policy"="{policy}")'
    run(conn, f"CREATE TABLE cold (k INT) {tail}")
    run(conn, "INSERT INTO cold VALUES (1)")
    wait_cooled(conn, db, "cold", name)
    run(conn, "CREATE TABLE cold_clone CLONE cold")
    assert set(tiers(conn, db, "cold_clone")) == {f"remote:{name}"}
    run(conn, "INSERT INTO cold VALUES (2)")
    assert sorted_rows(conn, "SELECT * FROM cold_clone") == [(1,)]
    shared = _objects(minio, bucket)
    wait_cooled(conn, db, "cold", name)
    run(conn, "DROP TABLE cold FORCE")
    replica = Replica.open(config, Path(tempfile.mkdtemp(prefix="tier-gc-")), f"tier-gc-{uuid.uuid4().hex[:6]}")
    try:
        recycler = Recycler(replica.projection, replica.proposer, LocalTiers.from_config(config),
                            RemoteStores(replica.projection, config), grace_s=0.0, day_s=1.0)
        replica.follower.wait_for_now(30)
        recycler.remove_remote_orphans([name])  # the source's own second object goes, the shared one stays
        assert _objects(minio, bucket) == shared
        assert sorted_rows(conn, "SELECT * FROM cold_clone") == [(1,)]
        run(conn, "DROP TABLE cold_clone FORCE")
        replica.follower.wait_for_now(30)
        recycler.remove_remote_orphans([name])
        assert _objects(minio, bucket) == []
    finally:
        replica.close()
    run(conn, "CREATE TABLE hot (k INT) DUPLICATE KEY(k) DISTRIBUTED BY HASH(k) BUCKETS 1")
    run(conn, "INSERT INTO hot VALUES (1)")
    run(conn, "CREATE TABLE hot_clone CLONE hot")
    run(conn, f'ALTER TABLE hot SET ("storage_policy"="{policy}")')
    time.sleep(3)  # well past the policy's one-second cooldown
    assert tiers(conn, db, "hot") == {"ssd": 1} and tiers(conn, db, "hot_clone") == {"ssd": 1}
    run(conn, "INSERT INTO hot VALUES (2)")
    run(conn, "ADMIN COMPACT TABLE hot WHERE type = 'BASE'")  # its own file now: it cools
    wait_cooled(conn, db, "hot", name)
    assert tiers(conn, db, "hot_clone") == {"ssd": 1}
    assert sorted_rows(conn, "SELECT * FROM hot") == [(1,), (2,)]
    assert sorted_rows(conn, "SELECT * FROM hot_clone") == [(1,)]
