"""One lock per tablet, shared by the agents of a process that rewrite or move its rowsets
(compaction, cooldown), so they never work on the same rowsets at once."""

from __future__ import annotations

import threading
from collections import defaultdict

TabletKey = tuple[int, int, int]  # table id, partition id, bucket


class TabletLocks:
    def __init__(self) -> None:
        self._guard = threading.Lock()
        self._locks: defaultdict[TabletKey, threading.Lock] = defaultdict(threading.Lock)

    def __call__(self, table_id: int, partition_id: int, bucket: int) -> threading.Lock:
        with self._guard:
            return self._locks[(table_id, partition_id, bucket)]
