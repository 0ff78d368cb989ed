"""Automatic compaction: every tablet whose live rowsets pile up is compacted (scored as Doris
does, by rowset count: cumulative first, base when the pile above the base grows large). A tablet is
scored when an event touched it since the last pass (streams.dirty_tablets), never every tablet of
the catalog at every pass."""

from __future__ import annotations

import logging
import threading
from collections.abc import Callable

import duckdb

from projections.compaction import Compactor, due
from projections.proposer import CommandFailed, CommandTimeout
from schemas.envelope import EventEnvelope
from streams.dirty_tablets import DirtyTablets

log = logging.getLogger(__name__)


class CompactionAgent:
    def __init__(self, compactor: Compactor, owns: Callable[[int], bool] = lambda _table_id: True) -> None:
        self.compactor = compactor
        self.owns = owns  # whether this worker holds the table's share of the work (streams.ownership)
        self.duck = duckdb.connect()
        self.compactions = 0
        self.conflicts = 0
        # A tablet's score changes only with its table's events: a pass looks at the tablets they touched.
        self.dirty = DirtyTablets()
        # Set by a pass that committed a compaction, so the next pass comes at once instead of after the
        # interval: a compaction merges at most MAX_INPUTS rowsets, and writers committing faster than
        # one compaction per interval merges (hundreds of single-row INSERTs a second) would otherwise
        # pile thousands of rowsets that every read and every cover walk then steps through.
        self.wake = threading.Event()

    def on_event(self, envelope: EventEnvelope) -> None:
        """Follower listener: marks the tablets the event may have made due."""
        self.dirty.on_event(envelope.payload)

    def rescan(self) -> None:
        """This worker's share changed: the next pass looks at every tablet it now holds."""
        self.dirty.rescan()

    def sweep(self) -> int:
        """One pass over the tablets marked since the last; returns how many compactions were committed."""
        projection = self.compactor.projection
        done = 0
        with projection.lock:
            tables = {t.table_id: t for t in projection.tables.values()
                      if t.dropped_ts_ms is None and t.properties.get("disable_auto_compaction") != "true"
                      and self.owns(t.table_id)}
            tablets = self.dirty.take(tables)
        for i, (table_id, partition_id, bucket) in enumerate(tablets):
            table = tables[table_id]
            partition = table.partitions[partition_id]
            try:
                with projection.lock:
                    kind = due(projection, table, partition, bucket)
                if kind is not None and self.compactor.compact(self.duck, table, partition, bucket, kind) is not None:
                    done += 1
                    # Scored again by the next pass, which `wake` brings at once: marked here rather than
                    # left to its CompactionCommitted, which the follower may hand over after that pass began.
                    self.dirty.mark(table_id, {partition_id})
            except (CommandFailed, CommandTimeout) as exc:
                # The tablet changed under us (a load, a restore, a schema change); next pass.
                self.conflicts += 1
                self.dirty.mark(table_id, {partition_id})
                log.info("compaction of %s p%d b%d deferred: %s", table.name, partition_id, bucket, exc)
            except BaseException:
                # A failed pass (a store down) leaves this tablet and the rest for the next one.
                for key in tablets[i:]:
                    self.dirty.mark(key[0], {key[1]})
                raise
        self.compactions += done
        if done:
            self.wake.set()
        return done
