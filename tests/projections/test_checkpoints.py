"""Projection checkpoints (integration, real stack: Kafka and MinIO): a replica restored from the newest
checkpoint and caught up with the log's tail holds the bytes a replay from offset 0 builds; a corrupt,
missing or malformed checkpoint is logged and replaced by a full replay; a writer killed -9 mid-upload
leaves the previous checkpoint the one restored."""

from __future__ import annotations

import logging
import os
import signal
import subprocess
import sys
import tarfile
import textwrap
import uuid
from concurrent.futures import Future
from pathlib import Path

import pymysql
import pytest

from projections import checkpoints
from projections.checkpoints import MANIFEST, CheckpointWriter, checkpoint_store
from projections.follower import EventFollower
from projections.projection import Projection
from projections.replay import checksum, replay
from projections.replica import Replica
from schemas.config import Settings
from storage.object_store import file_digests
from tests.query.sqlkit import run

REPO = Path(__file__).resolve().parents[2]


@pytest.fixture
def own(config: Settings) -> Settings:
    """The settings with a bucket of this test's own, so no other checkpoint is restored."""
    return config.model_copy(update={"projection_snapshot_bucket": f"t-ckpt-{uuid.uuid4().hex[:12]}"})


def insert(conn: pymysql.connections.Connection, first: int, count: int) -> None:
    for i in range(first, first + count):
        run(conn, f"INSERT INTO t VALUES ({i}, {i * 10})")


@pytest.fixture
def table(conn: pymysql.connections.Connection, db: str) -> pymysql.connections.Connection:
    run(conn, 'CREATE TABLE t (k INT, v INT) DUPLICATE KEY(k) DISTRIBUTED BY HASH(k) BUCKETS 2 '
              'PROPERTIES ("disable_auto_compaction" = "true")')
    insert(conn, 0, 5)
    return conn


def restored_equals_replay(config: Settings, tmp_path: Path, name: str,
                           restoring: Future[checkpoints.Manifest | None] | None = None) -> Replica:
    """Opens a replica at an empty directory, stops it once caught up, and checks its bytes against a
    replay from offset 0 of the same log (nothing writes in between: compaction is off)."""
    replica = Replica.open(config, tmp_path / name, name, catch_up_timeout=120, restoring=restoring)
    replica.close()
    restored_sum, restored_offsets = checksum(tmp_path / name)
    full = replay(config, tmp_path / f"{name}-full")
    assert full.checksum == restored_sum
    assert checksum(full.path)[1] == restored_offsets
    return replica


def upload_from(config: Settings, at: Path) -> checkpoints.Manifest:
    """A checkpoint of a fresh replay of the log, as the worker would upload one of its replica."""
    replay(config, at)
    projection = Projection(at)
    try:
        manifest = CheckpointWriter(config, projection).upload()
    finally:
        projection.close()
    assert manifest is not None
    return manifest


def test_restored_checkpoint_plus_tail_equals_full_replay(own: Settings, table: pymysql.connections.Connection,
                                                          tmp_path: Path) -> None:
    first = upload_from(own, tmp_path / "source")
    insert(table, 5, 5)  # the tail: after the checkpoint
    replica = restored_equals_replay(own, tmp_path, "restored")
    assert replica.restored is not None and replica.restored.key == first.key
    assert replica.restored.offsets == first.offsets


def test_a_restore_begun_before_the_replica_opens_is_the_one_it_uses(
        own: Settings, table: pymysql.connections.Connection, tmp_path: Path) -> None:
    """`checkpoints.prefetch`, as `query.start` runs it while the server's modules load: the replica
    waits for that restore, keeps its manifest (so a checkpoint past the log's end is still caught)
    and folds the tail on top of it."""
    first = upload_from(own, tmp_path / "source")
    insert(table, 5, 3)
    restoring = checkpoints.prefetch(own, tmp_path / "early")
    replica = restored_equals_replay(own, tmp_path, "early", restoring)
    assert restoring.done() and replica.restored is not None and replica.restored.key == first.key


def test_writer_skips_an_unchanged_projection_and_keeps_one_previous(
        own: Settings, table: pymysql.connections.Connection, tmp_path: Path) -> None:
    at = tmp_path / "source"
    replay(own, at)
    projection = Projection(at)
    try:
        writer = CheckpointWriter(own, projection)
        keys = []
        for round_ in range(3):
            manifest = writer.upload()
            assert manifest is not None
            keys.append(manifest.key)
            assert writer.upload() is None  # nothing folded since
            insert(table, 100 + round_, 1)
            follower = EventFollower(projection, own, name=f"src-{uuid.uuid4().hex[:6]}")
            follower.catch_up(timeout=60)
            follower.stop()
    finally:
        projection.close()
    stored = sorted(o.path for o in checkpoint_store(own).objects(checkpoints.FOLDER) if o.path.endswith(".tar"))
    assert stored == sorted(keys[-2:])


@pytest.mark.parametrize("damage", ["garbage archive", "truncated archive", "malformed manifest", "foreign entry"])
def test_a_bad_checkpoint_falls_back_to_a_full_replay(own: Settings, table: pymysql.connections.Connection,
                                                     tmp_path: Path, caplog: pytest.LogCaptureFixture,
                                                     damage: str) -> None:
    manifest = upload_from(own, tmp_path / "source")
    store = checkpoint_store(own)
    if damage == "garbage archive":
        # Same size, other bytes: only the sha256 tells.
        store.put_bytes(manifest.key, os.urandom(manifest.size))
    elif damage == "truncated archive":
        store.put_bytes(manifest.key, store.read_bytes(manifest.key, 1 << 30)[: manifest.size // 2])
    elif damage == "malformed manifest":
        store.put_bytes(MANIFEST, b'{"object": "../elsewhere.tar"}')
    else:
        archive = tmp_path / "evil.tar"
        (tmp_path / "evil").write_text("x")
        with tarfile.open(archive, "w") as tar:
            tar.add(tmp_path / "evil", arcname="../escaped")
        sha, etag = file_digests(archive)
        store.upload(archive, manifest.key, sha, etag)
        store.put_bytes(MANIFEST, checkpoints.Manifest(key=manifest.key, sha256=sha, size=archive.stat().st_size,
                                                       offsets=manifest.offsets, created_ms=1).to_json())
    insert(table, 5, 2)
    with caplog.at_level(logging.WARNING, logger="projections.checkpoints"):
        replica = restored_equals_replay(own, tmp_path, "fallback")
    assert replica.restored is None
    assert any("checkpoint not used" in r.getMessage() for r in caplog.records)
    assert own.minio_root_password.get_secret_value() not in caplog.text
    assert not (tmp_path / "escaped").exists() and not (tmp_path.parent / "escaped").exists()


def test_no_checkpoint_is_a_plain_full_replay(own: Settings, table: pymysql.connections.Connection,
                                              tmp_path: Path) -> None:
    replica = restored_equals_replay(own, tmp_path, "none")
    assert replica.restored is None


_KILLED_WRITER = textwrap.dedent("""
    import sys, time
    from pathlib import Path
    from projections.checkpoints import CheckpointWriter
    from projections.projection import Projection
    from schemas.config import settings
    from storage.object_store import ObjectStore

    config = settings().model_copy(update={"projection_snapshot_bucket": sys.argv[1]})
    real = ObjectStore.upload
    def upload(*args, **kwargs):
        print("uploading", flush=True)
        real(*args, **kwargs)
        print("archived", flush=True)
        time.sleep(600)  # killed here at the latest: the archive is up, the manifest not yet
    ObjectStore.upload = upload
    CheckpointWriter(config, Projection(Path(sys.argv[2]))).upload()
""")


@pytest.mark.parametrize("stage", ["uploading", "archived"])
def test_a_writer_killed_mid_upload_leaves_the_previous_checkpoint(own: Settings, table: pymysql.connections.Connection,
                                                                  tmp_path: Path, stage: str) -> None:
    first = upload_from(own, tmp_path / "source")
    insert(table, 5, 3)
    second = tmp_path / "second"
    replay(own, second)
    proc = subprocess.Popen([sys.executable, "-c", _KILLED_WRITER, own.projection_snapshot_bucket, str(second)],
                            cwd=REPO, env=os.environ.copy(), stdout=subprocess.PIPE, text=True)
    assert proc.stdout is not None
    while (line := proc.stdout.readline().strip()) != stage:
        assert line, f"the writer ended before {stage!r}"
    os.kill(proc.pid, signal.SIGKILL)  # "uploading": mid-PUT of the archive; "archived": before the manifest
    proc.wait(timeout=10)
    replica = restored_equals_replay(own, tmp_path, "after-kill")
    assert replica.restored is not None and replica.restored.key == first.key


_KILLED_RESTORE = textwrap.dedent("""
    import sys, time
    from pathlib import Path
    from projections import checkpoints
    from schemas.config import settings

    config = settings().model_copy(update={"projection_snapshot_bucket": sys.argv[1]})
    real = checkpoints._untar
    def untar(*args, **kwargs):
        real(*args, **kwargs)
        print("extracted", flush=True)
        time.sleep(600)  # killed here: the staging folder is full, the projection not yet replaced
    checkpoints._untar = untar
    checkpoints.restore(config, Path(sys.argv[2]))
""")


def test_a_restore_killed_midway_leaves_nothing_the_next_restore_keeps(
        own: Settings, table: pymysql.connections.Connection, tmp_path: Path) -> None:
    """A server killed during its early restore leaves its staging folder; the next restore into the
    same projection removes it (its process is gone) and restores. A staging folder of a live process
    (a restore under way) is left alone."""
    first = upload_from(own, tmp_path / "source")
    target = tmp_path / "sql-1"
    proc = subprocess.Popen([sys.executable, "-c", _KILLED_RESTORE, own.projection_snapshot_bucket, str(target)],
                            cwd=REPO, env=os.environ.copy(), stdout=subprocess.PIPE, text=True)
    assert proc.stdout is not None
    assert proc.stdout.readline().strip() == "extracted"
    os.kill(proc.pid, signal.SIGKILL)
    proc.wait(timeout=10)
    (abandoned,) = tmp_path.glob(".sql-1.restore-*")
    assert abandoned.name.startswith(f".sql-1.restore-{proc.pid}-") and any(abandoned.iterdir())
    under_way = tmp_path / f".sql-1.restore-{os.getpid()}-0000"
    under_way.mkdir()
    manifest = checkpoints.restore(own, target)
    assert manifest is not None and manifest.key == first.key
    assert not abandoned.exists() and under_way.exists()
    assert sorted(p.name for p in tmp_path.glob(".sql-1.restore-*")) == [under_way.name]
