"""Automatic compaction: every tablet whose live rowsets pile up is compacted (scored as Doris
does, by rowset count: cumulative first, base when the pile above the base grows large)."""

from __future__ import annotations

import logging
from collections.abc import Callable

import duckdb

from projections.compaction import Compactor, due
from projections.proposer import CommandFailed, CommandTimeout

log = logging.getLogger(__name__)


class CompactionAgent:
    def __init__(self, compactor: Compactor, owns: Callable[[int], bool] = lambda _table_id: True) -> None:
        self.compactor = compactor
        self.owns = owns  # whether this worker holds the table's share of the work (streams.ownership)
        self.duck = duckdb.connect()
        self.compactions = 0
        self.conflicts = 0

    def sweep(self) -> int:
        """One pass over every live tablet; returns how many compactions were committed."""
        projection = self.compactor.projection
        done = 0
        with projection.lock:
            tables = [t for t in projection.tables.values()
                      if t.dropped_ts_ms is None and t.properties.get("disable_auto_compaction") != "true"
                      and self.owns(t.table_id)]
        for table in tables:
            for partition in table.live_partitions():
                for bucket in range(partition.partition.buckets):
                    with projection.lock:
                        kind = due(projection, table, partition, bucket)
                    if kind is None:
                        continue
                    try:
                        if self.compactor.compact(self.duck, table, partition, bucket, kind) is not None:
                            done += 1
                    except (CommandFailed, CommandTimeout) as exc:
                        # The tablet changed under us (a load, a restore, a schema change); next pass.
                        self.conflicts += 1
                        log.info("compaction of %s p%d b%d deferred: %s", table.name, partition.partition_id,
                                 bucket, exc)
                        break
        self.compactions += done
        return done
