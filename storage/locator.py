"""Where a rowset's bytes can be read from right now: its local tier's file, or — for a cooled
rowset — a copy in this process's file cache, fetched from its resource on a miss.

Statements run inside `statement()`: every cached file they locate stays pinned (not evictable)
until the statement ends, since DuckDB opens files lazily while the query runs.
"""

from __future__ import annotations

import threading
from collections.abc import Callable, Iterator, Sequence
from concurrent.futures import ThreadPoolExecutor
from contextlib import contextmanager

from schemas.model import Rowset
from storage.file_cache import FileCache
from storage.object_store import ObjectStore
from storage.tiers import LocalTiers, resource_of

# Parallel downloads when a statement needs several cold rowsets at once.
FETCH_THREADS = 8


class RowsetLocator:
    def __init__(self, tiers: LocalTiers, stores: Callable[[str], ObjectStore], cache: FileCache) -> None:
        self.tiers = tiers
        self.stores = stores
        self.cache = cache
        self._local = threading.local()
        self._pool = ThreadPoolExecutor(FETCH_THREADS, thread_name_prefix="rowset-fetch")

    @contextmanager
    def statement(self) -> Iterator[None]:
        """Pins every cached file located inside the block until it ends (blocks may nest)."""
        outer = getattr(self._local, "pins", None)
        self._local.pins = [] if outer is None else outer
        try:
            yield
        finally:
            if outer is None:
                for key in self._local.pins:
                    self.cache.unpin(key)
                self._local.pins = None

    def _pinning(self) -> list[str] | None:
        return getattr(self._local, "pins", None)

    def locate(self, rowset: Rowset) -> str:
        return self._locate(rowset, self._pinning())

    def _locate(self, rowset: Rowset, pins: list[str] | None) -> str:
        resource = resource_of(rowset.tier)
        if resource is None:
            return str(self.tiers.locate(rowset.tier, rowset.path))
        store = self.stores(resource)
        key = f"{resource}/{rowset.path}"
        path = self.cache.fetch(key, lambda dest: store.download(rowset.path, dest), pin=pins is not None)
        if pins is not None:
            pins.append(key)
        return str(path)

    def locate_many(self, rowsets: Sequence[Rowset]) -> dict[str, str]:
        """Paths by rowset id; cold rowsets missing from the cache are fetched in parallel."""
        pins = self._pinning()
        remote = [r for r in rowsets if resource_of(r.tier) is not None]
        found = {r.rowset_id: self._locate(r, pins) for r in rowsets if resource_of(r.tier) is None}
        if len(remote) <= 1:
            found.update({r.rowset_id: self._locate(r, pins) for r in remote})
            return found
        futures = {r.rowset_id: self._pool.submit(self._locate, r, None) for r in remote}
        errors = []
        for rowset_id, future in futures.items():
            try:
                found[rowset_id] = future.result()
            except Exception as exc:  # noqa: BLE001 - the first failure is raised below, after all finished
                errors.append(exc)
        if errors:
            raise errors[0]
        if pins is not None:  # pin in this thread's statement (the fetch threads have none)
            for r in remote:
                found[r.rowset_id] = self._locate(r, pins)
        return found
