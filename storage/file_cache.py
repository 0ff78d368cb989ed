"""A local LRU cache of remote rowset files, with a size cap and hit/miss/eviction counters.

Each process has its own cache folder. A file in use by a running statement is pinned and never
evicted under it; the cap may be exceeded while pins hold more than it, and is restored as they go.
A cache survives restarts: files found at start are taken in, oldest first.
"""

from __future__ import annotations

import logging
import threading
from collections import OrderedDict
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path

log = logging.getLogger(__name__)


@dataclass
class CacheStats:
    hits: int = 0
    misses: int = 0
    bytes_downloaded: int = 0
    evictions: int = 0
    bytes_evicted: int = 0


class FileCache:
    def __init__(self, root: Path, cap_bytes: int) -> None:
        self.root = root
        self.cap_bytes = cap_bytes
        self.stats = CacheStats()
        self._lock = threading.Lock()
        self._sizes: OrderedDict[str, int] = OrderedDict()  # key → bytes, least recently used first
        self._pins: dict[str, int] = {}
        self._fetching: dict[str, threading.Lock] = {}
        self._adopt()

    def _adopt(self) -> None:
        if not self.root.exists():
            return
        found = []
        for path in self.root.rglob("*"):
            if not path.is_file():
                continue
            if path.name.startswith("."):  # an interrupted download
                path.unlink(missing_ok=True)
                continue
            stat = path.stat()
            found.append((stat.st_atime, str(path.relative_to(self.root)), stat.st_size))
        for _, key, size in sorted(found):
            self._sizes[key] = size

    @property
    def bytes_cached(self) -> int:
        with self._lock:
            return sum(self._sizes.values())

    def __contains__(self, key: str) -> bool:
        with self._lock:
            return key in self._sizes

    def fetch(self, key: str, download: Callable[[Path], None], *, pin: bool = False) -> Path:
        """The local path of `key`, calling `download(dest)` first when it is not cached."""
        path = self.root / key
        with self._lock:
            if key in self._sizes:
                self._sizes.move_to_end(key)
                self.stats.hits += 1
                if pin:
                    self._pins[key] = self._pins.get(key, 0) + 1
                return path
            gate = self._fetching.setdefault(key, threading.Lock())
        with gate:  # one download per key, however many statements want it
            with self._lock:
                cached = key in self._sizes
            if not cached:
                path.parent.mkdir(parents=True, exist_ok=True)
                try:
                    download(path)
                finally:
                    with self._lock:
                        self._fetching.pop(key, None)
                size = path.stat().st_size
            with self._lock:
                if cached:
                    self.stats.hits += 1
                    self._sizes.move_to_end(key)
                else:
                    self.stats.misses += 1
                    self.stats.bytes_downloaded += size
                    self._sizes[key] = size
                if pin:
                    self._pins[key] = self._pins.get(key, 0) + 1
                self._evict_locked()
        return path

    def unpin(self, key: str) -> None:
        with self._lock:
            left = self._pins.get(key, 0) - 1
            if left > 0:
                self._pins[key] = left
            else:
                self._pins.pop(key, None)
            self._evict_locked()

    def discard(self, key: str) -> None:
        """Forgets a file (its rowset is gone); a pinned file stays until its statement ends."""
        with self._lock:
            if key in self._sizes and key not in self._pins:
                self._sizes.pop(key)
                (self.root / key).unlink(missing_ok=True)

    def clear(self) -> int:
        """Drops every unpinned file (Doris' `file_cache?op=clear`); returns how many went."""
        with self._lock:
            gone = [key for key in self._sizes if key not in self._pins]
            for key in gone:
                self._sizes.pop(key)
                (self.root / key).unlink(missing_ok=True)
            return len(gone)

    def _evict_locked(self) -> None:
        total = sum(self._sizes.values())
        for key in list(self._sizes):
            if total <= self.cap_bytes:
                return
            if key in self._pins:
                continue
            size = self._sizes.pop(key)
            (self.root / key).unlink(missing_ok=True)
            total -= size
            self.stats.evictions += 1
            self.stats.bytes_evicted += size
