"""Delete bitmaps of merge-on-write Unique Key tables, computed as commits reach the log.

Each commit of such a table (any writer: INSERT, UPDATE/DELETE, Stream Load and its two-phase commit,
Broker Load, group commit, routine load) is queued by the follower listener; a pass computes the
bitmaps of every queued partition version against the cover just below it (projections.superseded) and
proposes them. Reads merge on read whatever lacks a bitmap (projections.merge_on_write), so a bitmap
that comes late, or never (a worker that died with commits queued), costs speed, never an answer.

A compaction can commit while versions above it had their bitmaps computed against its inputs: the
sequencer refuses such a bitmap not yet committed (it is computed again, once, against the new cover),
and the bitmaps committed already are computed again against the compaction's output and replace
theirs (until then the tablet is read merge-on-read).
"""

from __future__ import annotations

import logging
import threading
from collections import deque
from collections.abc import Callable
from dataclasses import dataclass

import duckdb

from projections.merge_on_write import BITMAP_TIER, enabled
from projections.projection import Projection
from projections.proposer import CommandFailed, CommandTimeout, Proposer
from projections.state import DeleteBitmapRecord
from projections.superseded import bitmaps_command, stale_bitmaps
from schemas.envelope import EventEnvelope
from schemas.errors import ErrorCode
from schemas.events import CompactionCommitted, RowsetsCommitted
from schemas.model import Rowset, TabletBitmap
from storage.locator import RowsetLocator

log = logging.getLogger(__name__)
# How often a version's bitmaps are computed again when compactions keep replacing the rowsets they name
# before they reach the log (each tablet's compaction commits on its own).
MAX_TRIES = 5


@dataclass(frozen=True)
class _Version:
    """A partition version whose bitmaps to compute (`replacing`: again, for the tablets of `rowsets`)."""

    table_id: int
    partition_id: int
    version: int
    rowsets: tuple[Rowset, ...]
    replacing: DeleteBitmapRecord | None = None
    tries: int = 0


@dataclass(frozen=True)
class _Compacted:
    """A compaction of a tablet: the bitmaps above its end that named its inputs are computed again."""

    table_id: int
    partition_id: int
    bucket: int
    end_version: int


class DeleteBitmapAgent:
    def __init__(self, projection: Projection, proposer: Proposer, locator: RowsetLocator,
                 owns: Callable[[int], bool] = lambda _table_id: True) -> None:
        self.projection, self.proposer, self.locator, self.owns = projection, proposer, locator, owns
        self.duck = duckdb.connect()
        self.wake = threading.Event()
        self.committed = 0
        self.failed = 0
        self._queue: deque[_Version | _Compacted] = deque()  # in log order

    def on_event(self, envelope: EventEnvelope) -> None:
        """Follower listener: queues each partition version a commit of a merge-on-write table made, and
        each compaction of one."""
        event = envelope.payload
        if not isinstance(event, RowsetsCommitted | CompactionCommitted):
            return
        table = self.projection.tables.get(event.table_id)
        if table is None or not enabled(table) or not self.owns(event.table_id):
            return
        if isinstance(event, CompactionCommitted):
            self._queue.append(_Compacted(event.table_id, event.partition_id, event.bucket, event.output.end_version))
        else:
            for partition_id, version in event.partition_versions.items():
                rowsets = tuple(r for r in event.rowsets if r.partition_id == partition_id)
                self._queue.append(_Version(event.table_id, partition_id, version, rowsets))
        self.wake.set()

    def sweep(self) -> int:
        """Computes and proposes the bitmaps of everything queued; returns how many were committed."""
        done = 0
        while self._queue:
            item = self._queue.popleft()
            if isinstance(item, _Compacted):
                with self.projection.lock:
                    stale = stale_bitmaps(self.projection, item.table_id, item.partition_id, item.end_version)
                self._queue.extendleft(reversed([_Version(item.table_id, item.partition_id, record.version,
                                                          written, replacing=record) for record, written in stale]))
                continue
            done += self._commit(item)
        self.committed += done
        return done

    def _commit(self, item: _Version) -> int:
        command = None
        try:
            with self.locator.statement():
                command = bitmaps_command(self.duck, self.projection, self.locator, item.table_id, item.partition_id,
                                          item.version, item.rowsets, replacing=item.replacing)
            if command is None:
                return 0
            self.proposer.propose(command, table_id=item.table_id)
            return 1
        except (CommandFailed, CommandTimeout) as exc:
            # Refused: a compaction replaced rowsets it names (computed once more against the new cover),
            # or another worker was first, or the table changed. Reads merge on read meanwhile.
            # A refused command's files are named by nothing (a timed-out one may be decided yet).
            if isinstance(exc, CommandFailed) and command is not None:
                # Only the files this computation wrote: a replacement keeps other tablets' committed ones.
                computed = {r.bucket for r in item.rowsets}
                self._remove(tuple(t for t in command.tablets if t.bucket in computed))
                if exc.code == ErrorCode.CONFLICT and item.tries < MAX_TRIES and item.replacing is None and \
                        "not a live rowset" in exc.reason:
                    self._queue.appendleft(_Version(item.table_id, item.partition_id, item.version, item.rowsets,
                                                    tries=item.tries + 1))
            self.failed += 1
            log.info("delete bitmaps of table %d p%d v%d not committed: %s", item.table_id, item.partition_id,
                     item.version, exc)
        except Exception:  # noqa: BLE001 - one version's failure (files gone, a store down) is not the rest's
            self.failed += 1
            log.exception("delete bitmaps of table %d p%d v%d failed", item.table_id, item.partition_id, item.version)
        return 0

    def _remove(self, tablets: tuple[TabletBitmap, ...]) -> None:
        root = self.locator.tiers.root(BITMAP_TIER)
        for tablet in tablets:
            if tablet.path is not None:
                (root / tablet.path).unlink(missing_ok=True)
