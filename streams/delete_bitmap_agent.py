"""Delete bitmaps of merge-on-write Unique Key tables, computed as commits reach the log.

Each commit of such a table (any writer: INSERT, UPDATE/DELETE, Stream Load and its two-phase commit,
Broker Load, group commit, routine load) is queued by the follower listener; a pass computes the
bitmaps of every queued partition version against the cover just below it (projections.superseded) and
proposes them. Reads merge on read whatever lacks a bitmap (projections.merge_on_write), so a bitmap
that comes late, or never (a worker that died with commits queued), costs speed, never an answer.
"""

from __future__ import annotations

import logging
import threading
from collections import deque
from collections.abc import Callable

import duckdb

from projections.merge_on_write import BITMAP_TIER, enabled
from projections.projection import Projection
from projections.proposer import CommandFailed, CommandTimeout, Proposer
from projections.superseded import bitmaps_command
from schemas.envelope import EventEnvelope
from schemas.events import RowsetsCommitted
from schemas.model import Rowset, TabletBitmap
from storage.locator import RowsetLocator

log = logging.getLogger(__name__)


class DeleteBitmapAgent:
    def __init__(self, projection: Projection, proposer: Proposer, locator: RowsetLocator,
                 owns: Callable[[int], bool] = lambda _table_id: True) -> None:
        self.projection, self.proposer, self.locator, self.owns = projection, proposer, locator, owns
        self.duck = duckdb.connect()
        self.wake = threading.Event()
        self.committed = 0
        self.failed = 0
        # (table id, partition id, version, the partition's rowsets of that commit), in log order.
        self._queue: deque[tuple[int, int, int, tuple[Rowset, ...]]] = deque()

    def on_event(self, envelope: EventEnvelope) -> None:
        """Follower listener: queues each partition version a commit of a merge-on-write table made."""
        event = envelope.payload
        if not isinstance(event, RowsetsCommitted):
            return
        table = self.projection.tables.get(event.table_id)
        if table is None or not enabled(table) or not self.owns(event.table_id):
            return
        for partition_id, version in event.partition_versions.items():
            rowsets = tuple(r for r in event.rowsets if r.partition_id == partition_id)
            self._queue.append((event.table_id, partition_id, version, rowsets))
        self.wake.set()

    def sweep(self) -> int:
        """Computes and proposes the bitmaps of everything queued; returns how many were committed."""
        done = 0
        while self._queue:
            table_id, partition_id, version, rowsets = self._queue.popleft()
            command = None
            try:
                with self.locator.statement():
                    command = bitmaps_command(self.duck, self.projection, self.locator, table_id, partition_id,
                                              version, rowsets)
                if command is not None:
                    self.proposer.propose(command, table_id=table_id)
                    done += 1
            except (CommandFailed, CommandTimeout) as exc:
                # Refused (the table changed, another worker was first): reads merge on read meanwhile.
                # A refused command's files are named by nothing (a timed-out one may be decided yet).
                if isinstance(exc, CommandFailed) and command is not None:
                    self._remove(command.tablets)
                self.failed += 1
                log.info("delete bitmaps of table %d p%d v%d not committed: %s", table_id, partition_id, version, exc)
            except Exception:  # noqa: BLE001 - one version's failure (files gone, a store down) is not the rest's
                self.failed += 1
                log.exception("delete bitmaps of table %d p%d v%d failed", table_id, partition_id, version)
        self.committed += done
        return done

    def _remove(self, tablets: tuple[TabletBitmap, ...]) -> None:
        root = self.locator.tiers.root(BITMAP_TIER)
        for tablet in tablets:
            if tablet.path is not None:
                (root / tablet.path).unlink(missing_ok=True)
