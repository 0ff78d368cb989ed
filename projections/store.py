"""One RocksDB database per projection, written in batches that carry the log offset they reach.

The tracking position (the next `strata.events` offset to apply, per Kafka partition) is stored in
the same `WriteBatch` as the changes it produced, so after a crash the state and the position it
claims always agree (the eventsourcing "tracking record" idea).
"""

from __future__ import annotations

import hashlib
from collections.abc import Iterator
from pathlib import Path

from rocksdict import AccessType, Options, Rdict, WriteBatch

OFFSET_PREFIX = b"o/"


class ProjectionStore:
    def __init__(self, path: Path, *, read_only: bool = False) -> None:
        path.mkdir(parents=True, exist_ok=True)
        options = Options(raw_mode=True)
        options.create_if_missing(True)
        access = AccessType.read_only() if read_only else AccessType.read_write()
        self.path = path
        self._db = Rdict(str(path), options, access_type=access)
        self._pending: dict[bytes, bytes | None] = {}

    # -- writes (buffered until `commit`) ------------------------------------------------------
    def put(self, key: bytes, value: bytes) -> None:
        self._pending[key] = value

    def delete(self, key: bytes) -> None:
        self._pending[key] = None

    def commit(self, offsets: dict[tuple[str, int], int]) -> None:
        """Atomically writes the pending changes together with the offsets they reach."""
        batch = WriteBatch(raw_mode=True)
        for key, value in self._pending.items():
            if value is None:
                batch.delete(key)
            else:
                batch.put(key, value)
        for (topic, partition), offset in offsets.items():
            batch.put(OFFSET_PREFIX + f"{topic}/{partition}".encode(), str(offset).encode())
        self._db.write(batch)
        self._pending.clear()

    def discard(self) -> None:
        self._pending.clear()

    # -- reads (see pending writes first, so a fold can read what it just wrote) ------------------
    def get(self, key: bytes) -> bytes | None:
        if key in self._pending:
            return self._pending[key]
        value = self._db.get(key)
        return value if value is None else bytes(value)

    def scan(self, prefix: bytes) -> Iterator[tuple[bytes, bytes]]:
        """Committed entries whose key starts with `prefix`, in key order."""
        it = self._db.iter()
        it.seek(prefix)
        while it.valid():
            key = bytes(it.key())
            if not key.startswith(prefix):
                break
            yield key, bytes(it.value())
            it.next()

    def seek_for_prev(self, key: bytes, prefix: bytes) -> tuple[bytes, bytes] | None:
        """The committed entry with the greatest key ≤ `key` that still starts with `prefix`."""
        it = self._db.iter()
        it.seek_for_prev(key)
        if it.valid():
            found = bytes(it.key())
            if found.startswith(prefix):
                return found, bytes(it.value())
        return None

    def offsets(self) -> dict[tuple[str, int], int]:
        result = {}
        for key, value in self.scan(OFFSET_PREFIX):
            topic, _, partition = key[len(OFFSET_PREFIX):].decode().rpartition("/")
            result[(topic, int(partition))] = int(value)
        return result

    def checksum(self) -> str:
        """A digest of every committed key and value, offsets included."""
        digest = hashlib.sha256()
        for key, value in self._db.items():
            for part in (bytes(key), bytes(value)):  # type: ignore[arg-type]  # raw mode: always bytes
                digest.update(len(part).to_bytes(4, "big") + part)
        return digest.hexdigest()

    def close(self) -> None:
        self._db.close()
