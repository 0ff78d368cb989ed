"""One RocksDB database per projection, written in batches that carry the log offset they reach.

The tracking position (the next `strata.events` offset to apply, per Kafka partition) is stored in
the same `WriteBatch` as the changes it produced, so after a crash the state and the position it
claims always agree (the eventsourcing "tracking record" idea).
"""

from __future__ import annotations

import hashlib
from bisect import bisect_left, bisect_right
from collections.abc import Iterator, Mapping
from itertools import islice
from pathlib import Path

from rocksdict import (
    AccessType,
    BlockBasedOptions,
    Checkpoint,
    Options,
    Rdict,
    RdictIter,
    ReadOptions,
    WriteBatch,
    WriteOptions,
)

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
    def __init__(self, path: Path, *, read_only: bool = False, scratch: bool = False,
                 front_trimmed: Mapping[bytes, int] | None = None) -> None:
        """`scratch`: a copy rebuilt from scratch if it is lost (`strata replay`), written without the
        write-ahead log — a crash may lose it, so nobody may rely on it before `close` has flushed it.

        `front_trimmed`: the key families (tag → the length of the prefix a scan of one names) whose
        entries are deleted from the front, as a queue's. A seek steps over the tombstones of every key
        deleted in its way until RocksDB's compaction drops them, so a scan of such a prefix starts at
        its floor — a key no live entry of the prefix is below: the first one the last full scan
        found (it starts at the floor before, so it steps over what was deleted since, not over
        everything ever deleted). A put below a floor lowers it."""
        path.mkdir(parents=True, exist_ok=True)
        access = AccessType.read_only() if read_only else AccessType.read_write()
        self.path = path
        # The options go to the default column family by name too: given only `options`, rocksdict
        # (0.3.29) opens an existing database's column families with the options read back from its
        # OPTIONS file, where the bloom filter does not survive, so every reopened projection lost it.
        self._db = Rdict(str(path), _options(), column_families={"default": _options()}, access_type=access)
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
        # Front-trimmed families by the first two bytes of their tag (unique among the layout's families):
        # the put path tells them from other keys with one lookup.
        trimmed = dict(front_trimmed or {})
        self._families = {tag[:2]: (tag, length) for tag, length in trimmed.items()}
        if len(self._families) != len(trimmed):
            raise ValueError(f"front-trimmed families must differ in their first two bytes: {sorted(trimmed)}")
        self._floors: dict[bytes, bytes] = {}
        # Bumped by every put into a front-trimmed family and by `discard`: a scan learns its prefix's
        # floor only if neither came while it read (see `_raise_floor`).
        self._floor_epoch = 0

    # -- writes (buffered until `commit`) ------------------------------------------------------
    def put(self, key: bytes, value: bytes) -> None:
        self._pending[key] = value
        family = self._families.get(key[:2])
        if family is not None and key.startswith(family[0]):  # inline: a fold puts a few per event
            self._floor_epoch += 1
            prefix = key[:family[1]]
            floor = self._floors.get(prefix)
            if floor is not None and key < floor:
                self._floors[prefix] = key

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
        self._pending.clear()
        self._ordered.clear()

    def discard(self) -> None:
        """Drops the pending changes. The floors go too: a key a pending delete hid from the scan that
        raised a floor is live again."""
        self._pending.clear()
        self._ordered.clear()
        self._floor_epoch += 1  # first: a scan raising a floor meanwhile drops it again
        self._floors.clear()

    # -- floors of the front-trimmed families -------------------------------------------------------
    def _family_prefix(self, prefix: bytes) -> bool:
        """Whether `prefix` is the whole prefix of one index of a front-trimmed family (what its floor is kept by)."""
        family = self._families.get(prefix[:2])
        return family is not None and prefix.startswith(family[0]) and len(prefix) == family[1]

    def _raise_floor(self, prefix: bytes, floor: bytes, epoch: int) -> None:
        """Sets a floor a scan begun at `epoch` found, unless a put or a discard came since. Without a
        lock (the put path is the fold's hottest): a put that came between the check and the set may
        have read the floor before it, so the floor is dropped again if the epoch moved meanwhile —
        a missing floor costs one slow seek, a wrong one would hide entries."""
        if self._floor_epoch != epoch:
            return
        self._floors[prefix] = floor
        if self._floor_epoch != epoch:
            self._floors.pop(prefix, None)

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
        epoch = self._floor_epoch
        floor = self._floors.get(prefix)
        origin = max(prefix, start or prefix, floor or prefix)
        # Whether this scan reads every live entry of the prefix up to where it stops.
        learns = (start is None or (floor is not None and start <= floor)) and self._family_prefix(prefix)
        pending = self._pending_in(prefix, before=before) if self._pending else []
        if origin > prefix:
            pending = [entry for entry in pending if entry[0] >= origin]
        upper = _successor(prefix)
        if before is not None and (upper is None or before < upper):
            upper = before
        it = self._bounded_iter(upper)
        it.seek(origin)
        entries = _merge(self._committed(it), pending)
        if not learns:
            yield from entries
            return
        first = next(entries, None)
        if first is None:  # nothing live in the prefix below `before` (or at all)
            self._raise_floor(prefix, max(before, origin) if before is not None else prefix + b"\xff", epoch)
            return
        self._raise_floor(prefix, first[0], epoch)
        yield first
        yield from entries

    def _bounded_iter(self, upper: bytes | None) -> RdictIter:
        """An iterator that reads nothing at or past `upper`. A seek steps over the tombstones of deleted
        keys until it finds a live one: unbounded, a seek into a prefix with nothing live walks on through
        the deleted keys of the prefixes after it (measured: 2.3–4.2 ms past 50k of them; bounded, 3 µs).
        (rocksdict 0.3.29's `set_iterate_lower_bound` sets the upper bound instead, so `seek_for_prev`,
        which would want one, goes without.)"""
        options = ReadOptions()
        if upper:
            options.set_iterate_upper_bound(upper)
        return self._db.iter(options)

    @staticmethod
    def _committed(it: RdictIter) -> Iterator[tuple[bytes, bytes]]:
        """The entries of a seeked iterator up to its bound (`_bounded_iter`)."""
        while it.valid():
            yield bytes(it.key()), bytes(it.value())
            it.next()

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


def _successor(prefix: bytes) -> bytes | None:
    """The least key above every key that starts with `prefix`; None when there is none (b"", or all 0xff)."""
    head = prefix.rstrip(b"\xff")
    return head[:-1] + bytes([head[-1] + 1]) if head else None


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
