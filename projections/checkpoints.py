"""Projection checkpoints in the object store: a fast start for a process with an empty state dir.

A checkpoint is a RocksDB checkpoint of one projection, tarred, together with the log position it
holds. The position is part of the projection itself (the tracking offsets are written in the same
batch as the changes they produced, projections.store), so the copy and its position always agree:
a process that restores it and follows `strata.events` from those offsets folds every later event
exactly once, and ends with the bytes a replay from offset 0 builds.

Layout in the bucket (the stack's MinIO, `projection_snapshot_bucket`), one folder per projection
format so a process never restores a layout it would misread::

    projections/f<FORMAT_VERSION>/<events position, 20 digits>-<id>.tar   the checkpoints
    projections/f<FORMAT_VERSION>/latest.json                             names the newest one

The tar goes up first, the manifest after it, each in one PUT, which S3 makes visible whole or not
at all: a writer killed mid-upload leaves the manifest naming the previous checkpoint, which is
only deleted once a newer manifest is in place. A checkpoint that is missing, unreadable, of
another format, or whose sha256 or position disagrees with its manifest is not used: the process
logs why and replays the log from offset 0, as it would without checkpoints.
"""

from __future__ import annotations

import hashlib
import json
import logging
import os
import shutil
import tarfile
import tempfile
import threading
import time
import uuid
from concurrent.futures import Future
from dataclasses import dataclass
from pathlib import Path
from typing import BinaryIO

from projections.projection import FORMAT_KEY, FORMAT_VERSION, Projection
from projections.store import ProjectionStore
from schemas.config import Settings
from storage.object_store import ObjectStore, ResourceError, S3Location, file_digests

log = logging.getLogger(__name__)

FOLDER = f"projections/f{FORMAT_VERSION.decode()}/"
MANIFEST = FOLDER + "latest.json"
# Checkpoints kept besides the newest: the one a process may be downloading while a newer lands.
KEEP_PREVIOUS = 1
_MANIFEST_LIMIT = 1 << 20
_READ_CHUNK = 1 << 20


class CheckpointUnusable(Exception):
    """A checkpoint that must not be restored; the message says why (never a secret)."""


@dataclass(frozen=True)
class Manifest:
    key: str
    sha256: str
    size: int
    offsets: dict[tuple[str, int], int]
    created_ms: int

    def to_json(self) -> bytes:
        return json.dumps({"object": self.key, "sha256": self.sha256, "size": self.size, "created_ms": self.created_ms,
                           "offsets": {f"{t}/{p}": o for (t, p), o in sorted(self.offsets.items())}},
                          sort_keys=True).encode()

    @classmethod
    def from_json(cls, raw: bytes) -> Manifest:
        try:
            body = json.loads(raw)
            offsets = {}
            for name, offset in body["offsets"].items():
                topic, _, partition = name.rpartition("/")
                offsets[(topic, int(partition))] = int(offset)
            key = str(body["object"])
            if not key.startswith(FOLDER) or ".." in key:
                raise ValueError(f"object {key!r} lies outside {FOLDER}")
            return cls(key=key, sha256=str(body["sha256"]), size=int(body["size"]), offsets=offsets,
                       created_ms=int(body["created_ms"]))
        except (ValueError, KeyError, TypeError, AttributeError) as exc:
            raise CheckpointUnusable(f"manifest {MANIFEST} is malformed: {exc}") from None


def checkpoint_store(config: Settings) -> ObjectStore:
    """The stack's MinIO, as Strata's own principal, at the checkpoint bucket."""
    location = S3Location(endpoint=config.minio_endpoint, secure=False, region="us-east-1",
                          bucket=config.projection_snapshot_bucket, root_path="",
                          access_key=config.minio_root_user,
                          secret_key=config.minio_root_password.get_secret_value())
    return ObjectStore("projection-checkpoints", location, connect_timeout_s=config.s3_connect_timeout_s,
                       read_timeout_s=max(config.s3_read_timeout_s, 120.0))


def _position(offsets: dict[tuple[str, int], int]) -> int:
    return sum(offsets.values())


def _tar(source: Path, dest: Path) -> None:
    with tarfile.open(dest, "w") as tar:
        for item in sorted(source.iterdir()):
            tar.add(item, arcname=item.name, recursive=False)


class _Digesting:
    """A stream read through once: the sha256 and length of every byte it gave."""

    def __init__(self, stream: BinaryIO) -> None:
        self._stream = stream
        self._sha = hashlib.sha256()
        self.size = 0

    def read(self, n: int = -1) -> bytes:
        chunk = self._stream.read(n)
        self._sha.update(chunk)
        self.size += len(chunk)
        return chunk

    def drain(self) -> None:
        """Reads what the consumer left (a tar's end padding), so the digest covers the whole stream."""
        while self.read(_READ_CHUNK):
            pass

    @property
    def sha256(self) -> str:
        return self._sha.hexdigest()


def _untar(stream: _Digesting, dest: Path) -> None:
    """Extracts plain files only, each straight into `dest` (a checkpoint has no subfolders), as the
    archive streams in: one pass over the bytes, no local copy of the archive to write, hash and read
    again. An entry that is not a plain file refuses the archive before it is extracted."""
    dest.mkdir(parents=True)
    with tarfile.open(fileobj=stream, mode="r|", bufsize=_READ_CHUNK,  # type: ignore[call-overload]
                      copybufsize=_READ_CHUNK) as tar:
        for member in tar:
            if not member.isfile() or "/" in member.name or member.name in ("", ".", ".."):
                raise CheckpointUnusable(f"entry {member.name!r} is not a file of a checkpoint")
            tar.extract(member, dest, filter="data")


class CheckpointWriter:
    """Uploads checkpoints of one projection; `upload` does one, skipping it when the projection has
    not moved since the last."""

    def __init__(self, config: Settings, projection: Projection, store: ObjectStore | None = None) -> None:
        self.projection = projection
        self.store = store or checkpoint_store(config)
        self._scratch = config.state_dir / ".checkpoints"
        self._last: dict[tuple[str, int], int] | None = None
        self._bucket_ready = False

    def upload(self) -> Manifest | None:
        """Checkpoints the projection, uploads it, then points the manifest at it; None when the
        projection holds what the last upload held."""
        self._scratch.mkdir(parents=True, exist_ok=True)
        work = Path(tempfile.mkdtemp(prefix="upload-", dir=self._scratch))
        try:
            copy = work / "db"
            # Under the fold's lock: a flush is never half in the copy, and the offsets read are the copy's.
            with self.projection.lock:
                offsets = self.projection.offsets()
                if offsets == self._last:
                    return None
                self.projection.store.checkpoint(copy)
            archive = work / "checkpoint.tar"
            _tar(copy, archive)
            sha, etag = file_digests(archive)
            key = f"{FOLDER}{_position(offsets):020d}-{uuid.uuid4().hex[:12]}.tar"
            if not self._bucket_ready:
                self.store.ensure_bucket()
                self._bucket_ready = True
            self.store.upload(archive, key, sha, etag)
            manifest = Manifest(key=key, sha256=sha, size=archive.stat().st_size, offsets=offsets,
                                created_ms=int(time.time() * 1000))
            self.store.put_bytes(MANIFEST, manifest.to_json())
            self._last = offsets
            self._prune(key)
            log.info("projection checkpoint %s uploaded (%d bytes, events position %d)", key, manifest.size,
                     _position(offsets))
            return manifest
        finally:
            shutil.rmtree(work, ignore_errors=True)

    def _prune(self, newest: str) -> None:
        """Deletes the checkpoints older than the newest and the KEEP_PREVIOUS before it."""
        found = sorted(o.path for o in self.store.objects(FOLDER) if o.path.endswith(".tar"))
        keep = set(found[-(KEEP_PREVIOUS + 1):]) | {newest}
        for path in found:
            if path not in keep:
                self.store.remove(path)


def restore(config: Settings, path: Path, store: ObjectStore | None = None) -> Manifest | None:
    """Fills the empty projection directory `path` from the newest checkpoint; None (logged) when
    there is none or it is unusable, and `path` is then left as it was."""
    _remove_abandoned_restores(path)
    if path.exists() and any(path.iterdir()):
        return None
    store = store or checkpoint_store(config)
    started = time.monotonic()
    # The staging name carries this process' pid, so that a later restore knows a leftover (the restoring
    # process was killed) from a restore under way.
    staging = path.parent / f".{path.name}.restore-{os.getpid()}-{uuid.uuid4().hex[:8]}"
    path.parent.mkdir(parents=True, exist_ok=True)
    try:
        try:
            raw = store.read_bytes(MANIFEST, _MANIFEST_LIMIT)
        except ResourceError as exc:
            if "NoSuchKey" in exc.detail or "NoSuchBucket" in exc.detail:
                log.info("projection %s: no checkpoint in bucket %s; folding the log from offset 0", path.name,
                         store.location.bucket)
                return None
            raise
        manifest = Manifest.from_json(raw)
        with store.reading(manifest.key) as body:
            stream = _Digesting(body)
            try:
                _untar(stream, staging)
                stream.drain()
            except (tarfile.TarError, OSError) as exc:
                raise CheckpointUnusable(f"{manifest.key} is not a readable archive: {exc}") from None
        # Extracted before it is verified, into the staging directory only: it replaces `path` once
        # its bytes are the manifest's, and is removed otherwise.
        if stream.sha256 != manifest.sha256 or stream.size != manifest.size:
            raise CheckpointUnusable(f"{manifest.key} does not match its manifest (sha256 {stream.sha256[:12]}…, "
                                     f"{stream.size} bytes)")
        _check(staging, manifest)
        shutil.rmtree(path, ignore_errors=True)
        staging.rename(path)
        log.info("projection %s restored from checkpoint %s (events position %d, %d bytes) in %.1f s; following "
                 "the log from there", path.name, manifest.key, _position(manifest.offsets), manifest.size,
                 time.monotonic() - started)
        return manifest
    except (CheckpointUnusable, ResourceError, OSError) as exc:
        log.warning("projection %s: checkpoint not used (%s); folding the log from offset 0", path.name, exc)
        return None
    finally:
        shutil.rmtree(staging, ignore_errors=True)


def _remove_abandoned_restores(path: Path) -> None:
    """Removes the staging folders of restores into `path` whose process is gone."""
    for leftover in path.parent.glob(f".{path.name}.restore-*"):
        pid = leftover.name.rsplit(".restore-", 1)[1].split("-", 1)[0]
        if not pid.isdigit() or not _alive(int(pid)):
            log.info("projection %s: removing %s, left by a restore that did not finish", path.name, leftover.name)
            shutil.rmtree(leftover, ignore_errors=True)


def _alive(pid: int) -> bool:
    try:
        os.kill(pid, 0)
    except ProcessLookupError:
        return False
    except PermissionError:  # another user's process: alive
        return True
    return True


def prefetch(config: Settings, path: Path) -> Future[Manifest | None]:
    """`restore(config, path)` on a thread of its own, begun now: a starting process loads its modules
    meanwhile (seconds of CPU, while the restore mostly waits on the network and the disk) and takes
    the result when it opens the projection (`Replica.open(restoring=…)`)."""
    future: Future[Manifest | None] = Future()

    def run() -> None:
        try:
            future.set_result(restore(config, path))
        except BaseException as exc:  # noqa: BLE001 - handed to whoever waits for the result
            future.set_exception(exc)

    threading.Thread(target=run, name=f"restore-{path.name}", daemon=True).start()
    return future


def _check(staging: Path, manifest: Manifest) -> None:
    """The extracted copy opens, is of this format and holds the position its manifest claims."""
    try:
        store = ProjectionStore(staging, read_only=True)
    except Exception as exc:  # noqa: BLE001 - RocksDB reports a damaged copy as a bare exception
        raise CheckpointUnusable(f"{manifest.key} does not open as a RocksDB database: {exc}") from None
    try:
        if store.get(FORMAT_KEY) != FORMAT_VERSION:
            raise CheckpointUnusable(f"{manifest.key} is of another projection format")
        if store.offsets() != manifest.offsets:
            raise CheckpointUnusable(f"{manifest.key} holds another log position than its manifest says")
    finally:
        store.close()
