"""The tiering agent plans again only what an event touched: a load, delete or compaction the
tablets of the partitions it names, another event of a table (a property change) all of that
table's, a policy or resource event every table's; a pass with no event and nothing due plans none.
The planned tablets are those the schedule holds afterwards (each gets the default SSD cooldown as
its next due time), on a real projection folded from events."""

from __future__ import annotations

from collections.abc import Iterator
from pathlib import Path

import pytest

from projections.cooldown import Cooler
from projections.projection import Projection
from projections.tablet_locks import TabletKey, TabletLocks
from schemas import events as ev
from schemas.envelope import EventEnvelope, wrap_event
from schemas.model import Column, Distribution, Partition, Rowset, TableSchema
from storage.tiers import LocalTiers
from streams.tiering_agent import TieringAgent

TOPIC = "strata.events"
NOW_S = 1_000.0
# Far ahead: every planned tablet is scheduled for it, none moves.
DEFAULT_COOLDOWN_S = 10**6


def _table(table_id: int, name: str, first_partition: int) -> ev.TableCreated:
    schema = TableSchema(schema_version=1, columns=(Column(unique_id=1, name="k", type="INT", is_key=True),))
    partitions = tuple(Partition(partition_id=first_partition + i, name=f"p{i}", buckets=2) for i in range(2))
    return ev.TableCreated(db_id=1, table_id=table_id, name=name, keys_model="DUPLICATE", table_schema=schema,
                           partition_kind="RANGE", partition_columns=("k",), partitions=partitions,
                           distribution=Distribution(columns=("k",)), next_column_id=2)


def _envelope(payload: ev.Event, ts: int, table_id: int | None = None) -> EventEnvelope:
    return wrap_event(payload, table_id=table_id, commit_ts_ms=ts, command_id=None)


class Schedule:
    def __init__(self, path: Path) -> None:
        self.projection = Projection(path)
        self.offset = 0
        # Only the planning runs here: nothing is due to move, so no command or store is reached.
        cooler = Cooler(self.projection, None, LocalTiers({"ssd": path / "ssd", "hdd": path / "hdd"}),  # type: ignore[arg-type]
                        None)  # type: ignore[arg-type]
        self.agent = TieringAgent(cooler, TabletLocks(), local_grace_s=0, clock=lambda: NOW_S,
                                  default_cooldown_s=DEFAULT_COOLDOWN_S)

    def fold(self, payload: ev.Event, table_id: int | None = None) -> None:
        envelope = _envelope(payload, 1000 + self.offset, table_id)
        self.projection.apply(envelope, TOPIC, 0, self.offset)
        self.projection.flush()
        self.offset += 1
        self.agent.on_event(envelope)

    def planned(self) -> set[TabletKey]:
        """The tablets the next pass plans."""
        self.agent._due.clear()
        self.agent.sweep()
        return set(self.agent._due)


@pytest.fixture
def schedule(tmp_path: Path) -> Iterator[Schedule]:
    found = Schedule(tmp_path)
    found.fold(ev.DatabaseCreated(db_id=1, name="d"))
    found.fold(_table(1, "a", 10), 1)
    found.fold(_table(2, "b", 20), 2)
    yield found
    found.projection.close()


def _tablets(table_id: int, *partitions: int) -> set[TabletKey]:
    return {(table_id, p, b) for p in partitions for b in range(2)}


def _rowset(rowset_id: str, partition_id: int, version: int) -> Rowset:
    return Rowset(rowset_id=rowset_id, partition_id=partition_id, bucket=1, num_rows=1, size_bytes=1,
                  path=f"t1/p{partition_id}/b1/{rowset_id}.parquet", schema_version=1, checksum="c",
                  start_version=version, end_version=version, visible_ts_ms=0)


def test_a_pass_plans_only_what_events_touched(schedule: Schedule) -> None:
    assert schedule.planned() == _tablets(1, 10, 11) | _tablets(2, 20, 21)  # the first pass: every table
    assert schedule.planned() == set()  # nothing happened, nothing due

    schedule.fold(ev.RowsetsCommitted(table_id=1, commit_number=1, label="l1", partition_versions={11: 1},
                                      rowsets=(_rowset("r1", 11, 1),), num_rows=1), 1)
    assert schedule.planned() == _tablets(1, 11)

    schedule.fold(ev.CompactionCommitted(table_id=1, partition_id=11, bucket=1, kind="base",
                                         input_rowset_ids=("r1",), output=_rowset("r1c", 11, 1)), 1)
    schedule.fold(ev.DeleteCommitted(table_id=2, commit_number=1, partition_versions={20: 1}, predicate=None), 2)
    assert schedule.planned() == _tablets(1, 11) | _tablets(2, 20)

    schedule.fold(ev.TablePropertiesChanged(table_id=2, changes={"storage_cooldown_time": "2099-01-01 00:00:00"}), 2)
    schedule.fold(ev.RowsetsCommitted(table_id=2, commit_number=2, label="l2", partition_versions={21: 1},
                                      rowsets=(), num_rows=0), 2)
    assert schedule.planned() == _tablets(2, 20, 21)  # a property may change any partition's plan

    schedule.fold(ev.StoragePolicyCreated(name="cold", properties={"cooldown_ttl": "1"}))
    assert schedule.planned() == _tablets(1, 10, 11) | _tablets(2, 20, 21)


def test_a_due_time_brings_its_tablet_back_without_an_event(schedule: Schedule) -> None:
    agent = schedule.agent
    agent.sweep()  # every tablet is now scheduled for the default cooldown, far ahead
    scheduled = dict(agent._due)
    agent._due[(1, 10, 0)] = NOW_S * 1000  # this one's time has come: planned again, scheduled again
    agent._due[(2, 20, 1)] = NOW_S * 1000 + 1  # not yet: left alone
    agent.sweep()
    assert agent._due == scheduled | {(2, 20, 1): NOW_S * 1000 + 1}
