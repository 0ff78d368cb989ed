"""The dynamic partition scheduler: makes each dynamic table's partitions match its plan at the
policy clock's now — partitions ahead are added, those past `start` dropped.

Every change is an ordinary AddPartition / DropPartition command, decided by the sequencer like a
user's ALTER TABLE, so a second scheduler, a retry after a crash or a run interrupted half-way all
converge: a partition that exists (same name) is not added twice, a dropped one is not dropped
twice, and a wanted partition whose range overlaps an existing one is left out, as Doris does. A
drop only hides the partition from the latest snapshot: its rowsets stay for `FOR TIME AS OF`
reads inside retention, until the recycler proves nothing needs them.
"""

from __future__ import annotations

import logging
import threading
from collections.abc import Callable
from datetime import UTC, datetime

from projections.dynamic_partitions import DynamicPartitionError, as_moment, check_table, overlaps, parse_spec, plan
from projections.projection import Projection
from projections.proposer import CommandFailed, CommandTimeout, Proposer
from projections.state import TableState
from schemas import commands as cmd
from schemas import events as ev
from schemas.envelope import EventEnvelope
from schemas.errors import ErrorCode

log = logging.getLogger(__name__)
# The outcomes that mean "already done": another run got there first.
_ALREADY = {ErrorCode.SAME_NAME_PARTITION, ErrorCode.UNKNOWN_PARTITION}


class DynamicPartitionScheduler:
    def __init__(self, projection: Projection, proposer: Proposer, *, clock: Callable[[], float],
                 interval_s: float) -> None:
        self.projection, self.proposer, self.clock, self.interval_s = projection, proposer, clock, interval_s
        self.wake = threading.Event()
        self._last_run: float | None = None
        self.added = 0
        self.dropped = 0
        self.failures = 0

    def on_event(self, envelope: EventEnvelope) -> None:
        """A table created or re-configured gets its partitions now, not at the next interval."""
        if isinstance(envelope.payload, ev.TableCreated | ev.TablePropertiesChanged | ev.PartitionDropped):
            self.wake.set()

    def tick(self) -> int:
        """Runs a pass when woken or when the interval has passed; returns the changes made."""
        now = self.clock()
        if not self.wake.is_set() and self._last_run is not None and now - self._last_run < self.interval_s:
            return 0
        self.wake.clear()
        self._last_run = now
        return self.sweep()

    def sweep(self) -> int:
        changes = 0
        now = datetime.fromtimestamp(self.clock(), UTC)
        for table in list(self.projection.tables.values()):
            if table.dropped_ts_ms is None:
                changes += self._schedule(table, now)
        return changes

    def _schedule(self, table: TableState, now: datetime) -> int:
        try:
            spec = parse_spec(table.properties)
            if spec is None or not spec.enable:
                return 0
            column = table.schema_now.column(table.partition_columns[0]) if table.partition_columns else None
            check_table(spec, table.partition_kind, [column.type] if column else [])
        except DynamicPartitionError as exc:  # validated on the way in; a later schema change can break it
            log.warning("dynamic partitions of table %s skipped: %s", table.name, exc)
            return 0
        assert column is not None
        wanted = plan(spec, now, column.type)
        changes = 0
        live = table.live_partitions()
        names = {p.name.lower() for p in live}
        bounds = [p.partition.bound for p in live]
        for partition in wanted.create:
            if partition.name.lower() in names or overlaps(partition.bound, bounds):
                continue
            new = cmd.NewPartition(name=partition.name, bound=partition.bound, properties=partition.properties,
                                   buckets=spec.buckets or table.distribution.buckets)
            if self._propose(cmd.AddPartition(table_id=table.table_id, partition=new, if_not_exists=True), table):
                self.added += 1
                changes += 1
                bounds.append(partition.bound)
        if wanted.drop_before is not None:
            cutoff = as_moment(wanted.drop_before)
            for existing in live:
                upper = existing.partition.bound.upper
                if upper is None or as_moment(upper[0]) > cutoff:
                    continue
                if self._propose(cmd.DropPartition(table_id=table.table_id, partition_name=existing.name,
                                                   if_exists=True), table):
                    self.dropped += 1
                    changes += 1
        return changes

    def _propose(self, command: cmd.Command, table: TableState) -> bool:
        try:
            self.proposer.propose(command, table_id=table.table_id)
            return True
        except CommandFailed as failed:
            if failed.code not in _ALREADY:
                self.failures += 1
                log.warning("dynamic partitions of table %s: %s refused: %s", table.name, command.TYPE, failed.reason)
            return False
        except CommandTimeout as exc:
            self.failures += 1
            log.warning("dynamic partitions of table %s: %s", table.name, exc)
            return False
