"""One RocksDB database per projection, written in batches that carry the log offset they reach.

The tracking position (the next `strata.events` offset to apply, per Kafka partition) is stored in
the same `WriteBatch` as the changes it produced, so after a crash the state and the position it
claims always agree (the eventsourcing "tracking record" idea).
"""

from __future__ import annotations

import hashlib
from bisect import bisect_left, bisect_right
from collections.abc import Iterator
from itertools import islice
from pathlib import Path

from rocksdict import AccessType, BlockBasedOptions, Checkpoint, Options, Rdict, WriteBatch, WriteOptions

OFFSET_PREFIX = b"o/"
# Bits per key of the whole-key bloom filters. The fold looks up keys that mostly do not exist yet
# (`decided.remember` asks for every command); a filter answers such a miss without reading the
# index and data blocks of every level-0 file and without a walk down the memtable's skiplist.
_BLOOM_BITS_PER_KEY = 10
# Share of the memtable given to its own bloom filter (RocksDB's memtable_prefix_bloom_size_ratio).
_MEMTABLE_BLOOM_RATIO = 0.05


def _options() -> Options:
    options = Options(raw_mode=True)
    options.create_if_missing(True)
    table = BlockBasedOptions()
    table.set_bloom_filter(_BLOOM_BITS_PER_KEY, False)
    options.set_block_based_table_factory(table)
    options.set_memtable_prefix_bloom_ratio(_MEMTABLE_BLOOM_RATIO)
    options.set_memtable_whole_key_filtering(True)
    return options


class ProjectionStore:
    def __init__(self, path: Path, *, read_only: bool = False, scratch: bool = False) -> None:
        """`scratch`: a copy rebuilt from scratch if it is lost (`strata replay`), written without the
        write-ahead log — a crash may lose it, so nobody may rely on it before `close` has flushed it."""
        path.mkdir(parents=True, exist_ok=True)
        access = AccessType.read_only() if read_only else AccessType.read_write()
        self.path = path
        self._db = Rdict(str(path), _options(), access_type=access)
        if scratch:
            unlogged = WriteOptions()
            unlogged.disable_wal = True  # type: ignore[method-assign,assignment]  # a property; the stub says method
            self._db.set_write_options(unlogged)
        self.scratch = scratch
        self._pending: dict[bytes, bytes | None] = {}
        # The pending keys in key order as of the last ordered read. Keys leave `_pending` only all
        # at once, so those added since are the dict's last ones (insertion order): a scan or seek
        # sorts only them and merges them in, and a batch of many puts and a few reads (the fold's
        # shape) never sorts its whole write set per read, nor pays for ordering on each put.
        self._ordered: list[bytes] = []

    # -- writes (buffered until `commit`) ------------------------------------------------------
    def put(self, key: bytes, value: bytes) -> None:
        self._pending[key] = value

    def delete(self, key: bytes) -> None:
        self._pending[key] = None

    def commit(self, offsets: dict[tuple[str, int], int]) -> None:
        """Atomically writes the pending changes together with the offsets they reach."""
        batch = WriteBatch(raw_mode=True)
        pending = self._pending
        put, delete = batch.put, batch.delete  # bound once: called for every key of the batch
        # In key order: RocksDB inserts a batch into its memtable (a skiplist) one key after the other,
        # and a key next to the last one is found from there, in cache; keys in hash order cost a walk
        # from the top each, about five times the time of sorting them first.
        for key in self._pending_order():
            value = pending[key]
            if value is None:
                delete(key)
            else:
                put(key, value)
        for (topic, partition), offset in offsets.items():
            batch.put(OFFSET_PREFIX + f"{topic}/{partition}".encode(), str(offset).encode())
        self._db.write(batch)
        self.discard()

    def discard(self) -> None:
        self._pending.clear()
        self._ordered.clear()

    # -- reads: pending writes included, so a fold reads what it wrote earlier in the same batch -----
    def get(self, key: bytes) -> bytes | None:
        if key in self._pending:
            return self._pending[key]
        value = self._db.get(key)
        return value if value is None else bytes(value)

    def _pending_order(self) -> list[bytes]:
        """Every pending key, in key order."""
        filed = len(self._ordered)
        if len(self._pending) > filed:
            newcomers = sorted(islice(self._pending, filed, None))
            # Two sorted runs: Timsort merges them in one linear pass.
            self._ordered.extend(newcomers)
            self._ordered.sort()
        return self._ordered

    def _pending_in(self, prefix: bytes, through: bytes | None = None,
                    before: bytes | None = None) -> list[tuple[bytes, bytes | None]]:
        """Pending entries whose key starts with `prefix` (and is ≤ `through`, < `before`), in key order."""
        order = self._pending_order()
        end = bisect_right(order, through) if through is not None else len(order)
        if before is not None:
            end = min(end, bisect_left(order, before))
        found = []
        for i in range(bisect_left(order, prefix), end):
            key = order[i]
            if not key.startswith(prefix):
                break
            found.append((key, self._pending[key]))
        return found

    def scan(self, prefix: bytes, start: bytes | None = None,
             before: bytes | None = None) -> Iterator[tuple[bytes, bytes]]:
        """Entries whose key starts with `prefix` (from `start` on, and below `before`, when given), in
        key order, pending writes included."""
        pending = self._pending_in(prefix, before=before) if self._pending else []
        if start is not None:
            pending = [entry for entry in pending if entry[0] >= start]
        it = self._db.iter()
        it.seek(max(prefix, start or prefix))
        committed: Iterator[tuple[bytes, bytes]] = self._committed(it, prefix, before)
        yield from _merge(committed, pending)

    @staticmethod
    def _committed(it: object, prefix: bytes, before: bytes | None = None) -> Iterator[tuple[bytes, bytes]]:
        while it.valid():  # type: ignore[attr-defined]
            key = bytes(it.key())  # type: ignore[attr-defined]
            if not key.startswith(prefix) or (before is not None and key >= before):
                return
            yield key, bytes(it.value())  # type: ignore[attr-defined]
            it.next()  # type: ignore[attr-defined]

    def seek_for_prev(self, key: bytes, prefix: bytes) -> tuple[bytes, bytes] | None:
        """The entry with the greatest key ≤ `key` that still starts with `prefix`, pending writes included."""
        it = self._db.iter()
        it.seek_for_prev(key)
        committed = None
        while it.valid():
            found = bytes(it.key())
            if not found.startswith(prefix):
                break
            if found in self._pending and self._pending[found] is None:
                it.prev()
                continue
            committed = (found, self._pending.get(found) or bytes(it.value()))
            break
        if self._pending:
            staged = [(k, v) for k, v in self._pending_in(prefix, key) if v is not None]
            if staged and (committed is None or staged[-1][0] > committed[0]):
                return staged[-1][0], staged[-1][1]  # type: ignore[return-value]
        return committed

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

    def checkpoint(self, dest: Path) -> None:
        """A consistent copy of the committed state (offsets included) at `dest`, which must not
        exist: RocksDB hard-links the immutable files and copies the rest."""
        Checkpoint(self._db).create_checkpoint(str(dest))

    def close(self) -> None:
        if self.scratch:
            self._db.flush()  # what the write-ahead log would have kept is only in the memtable
        self._db.close()


def _merge(committed: Iterator[tuple[bytes, bytes]],
           pending: list[tuple[bytes, bytes | None]]) -> Iterator[tuple[bytes, bytes]]:
    """Committed entries overlaid with pending puts and deletes, in key order."""
    staged = dict(pending)
    order = iter(pending)
    upcoming = next(order, None)
    for key, value in committed:
        while upcoming is not None and upcoming[0] < key:
            if upcoming[1] is not None:
                yield upcoming[0], upcoming[1]
            upcoming = next(order, None)
        if key in staged:
            if upcoming is not None and upcoming[0] == key:
                upcoming = next(order, None)
            if staged[key] is not None:
                yield key, staged[key]  # type: ignore[misc]
            continue
        yield key, value
    while upcoming is not None:
        if upcoming[1] is not None:
            yield upcoming[0], upcoming[1]
        upcoming = next(order, None)
