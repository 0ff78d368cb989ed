"""Where a rowset's bytes can be read from right now: its local tier's file, or — for a cooled
rowset — a copy in this process's file cache, fetched from its resource on a miss.

Statements run inside `statement()`: every cached file they locate stays pinned (not evictable)
until the statement ends, since DuckDB opens files lazily while the query runs. Other things a
statement's SQL names may be held the same way (`hold`).
"""

from __future__ import annotations

import functools
import threading
from collections.abc import Callable, Iterator, Sequence
from concurrent.futures import ThreadPoolExecutor
from contextlib import contextmanager

from schemas.model import Rowset
from storage.file_cache import FileCache
from storage.object_store import ObjectStore
from storage.paths import check_rowset_path
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
        """Pins every cached file located inside the block, and keeps what it `hold`s, until it ends (blocks
        may nest)."""
        outer = getattr(self._local, "pins", None)
        self._local.pins = [] if outer is None else outer
        try:
            yield
        finally:
            if outer is None:
                for release in self._local.pins:
                    release()
                self._local.pins = None

    def hold(self, release: Callable[[], None]) -> bool:
        """`release` called when the running statement ends (or, if its result streams, when the taker of
        `take_pins` lets go): for what its SQL names that must outlive the binding. False, and nothing
        held, when no statement runs on this thread."""
        pins = self._pinning()
        if pins is None:
            return False
        pins.append(release)
        return True

    def take_pins(self) -> Callable[[], None]:
        """Hands the pins the running statement holds so far to the caller, which must call the
        returned release once done: a result streamed to the client is read after its statement
        returns, and its files must stay cached until then."""
        pins = self._pinning()
        if pins is None:
            return lambda: None
        taken = list(pins)
        pins.clear()

        def release() -> None:
            for each in taken:
                each()
        return release

    def _pinning(self) -> list[Callable[[], None]] | None:
        return getattr(self._local, "pins", None)

    def _fetch(self, resource: str, rowset: Rowset, pin: bool) -> str:
        _checked(rowset)
        store = self.stores(resource)
        return str(self.cache.fetch(f"{resource}/{rowset.path}", lambda dest: store.download(rowset.path, dest),
                                    pin=pin))

    def locate_many(self, rowsets: Sequence[Rowset]) -> dict[str, str]:
        """Paths by rowset id; cold rowsets missing from the cache are fetched in parallel."""
        pins = self._pinning()
        found: dict[str, str] = {}
        fetches = {}
        for rowset in rowsets:
            resource = resource_of(rowset.tier)
            if resource is None:
                found[rowset.rowset_id] = str(self.tiers.read_path(rowset.tier, _checked(rowset)))
            else:
                # Pinned by the fetch itself; the key is handed to this thread's statement to unpin.
                fetches[rowset.rowset_id] = (self._pool.submit(self._fetch, resource, rowset, pins is not None),
                                             f"{resource}/{rowset.path}")
        errors = []
        for rowset_id, (future, key) in fetches.items():
            try:
                found[rowset_id] = future.result()
            except Exception as exc:  # noqa: BLE001 - the first failure is raised below, after all finished
                errors.append(exc)
                continue
            if pins is not None:
                pins.append(functools.partial(self.cache.unpin, key))
        if errors:
            raise errors[0]
        return found


def _checked(rowset: Rowset) -> str:
    """The rowset's path, if it is the one built from its ids (UnsafePath otherwise): the path comes
    from an event, and a forged one must not make a query read any other file or object."""
    file_of = rowset.shared_file or rowset  # a clone's rowset reads its source's file, at that one's path
    return check_rowset_path(rowset.path, file_of.partition_id, rowset.bucket, file_of.rowset_id)
