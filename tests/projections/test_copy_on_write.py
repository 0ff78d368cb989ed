"""The in-memory catalog is copy-on-write (projections.projection): statements read tables and their
partitions on their own threads while the follower folds, so a published state is never changed.
SHOW PARTITIONS raised "dictionary changed size during iteration" when the fold added partitions
to the dict a reader was iterating. No Kafka needed: events are applied directly."""

from __future__ import annotations

import sys
import threading
import time
from collections.abc import Iterator
from pathlib import Path

import pytest

from projections.projection import Projection
from schemas import events as ev
from schemas.envelope import wrap_event
from schemas.model import Column, Distribution, Partition, TableSchema
from tests.projections.test_fold import TOPIC, _events, _fold, _rowset


class Folder:
    """Applies events to a projection at increasing offsets and commit times."""

    def __init__(self, projection: Projection, offset: int) -> None:
        self.projection = projection
        self.offset = offset
        self.ts = 10_000

    def apply(self, event: ev.Event, table_id: int | None = 1) -> None:
        self.offset += 1
        self.ts += 1
        envelope = wrap_event(event, table_id=table_id, commit_ts_ms=self.ts, command_id=None)
        with self.projection.lock:
            self.projection.apply(envelope, TOPIC, 0, self.offset)


@pytest.fixture
def folder(tmp_path: Path) -> Iterator[Folder]:
    """Database 1 with table 1 (partition 1, five commits), folded."""
    events = _events()
    projection = _fold(tmp_path / "p", events)
    yield Folder(projection, len(events))
    projection.close()


def _partition(pid: int) -> Partition:
    return Partition(partition_id=pid, name=f"p{pid}", buckets=1)


def _table_created(table_id: int) -> ev.TableCreated:
    schema = TableSchema(schema_version=1, columns=(Column(unique_id=1, name="k", type="INT", is_key=True),))
    return ev.TableCreated(db_id=1, table_id=table_id, name=f"t{table_id}", keys_model="DUPLICATE",
                           table_schema=schema, partition_kind="RANGE", partitions=(_partition(10_000 + table_id),),
                           distribution=Distribution(columns=("k",)), next_column_id=2)


def test_readers_iterate_while_partitions_come_and_go(folder: Folder) -> None:
    """One thread adds and drops partitions (and creates tables) while another iterates what
    statements iterate, without the projection's lock: no RuntimeError, and every state a reader
    holds stays whole."""
    projection = folder.projection
    for pid in range(2, 400):  # a wide dict: iterating it takes long enough to be interrupted
        folder.apply(ev.PartitionAdded(table_id=1, partition=_partition(pid)))
    stop = threading.Event()
    errors: list[BaseException] = []
    reads = 0

    def read() -> None:
        nonlocal reads
        try:
            while not stop.is_set():
                table = projection.tables[1]
                count = len(table.partitions)
                names = [p.name for p in table.partitions.values()]  # as SHOW PARTITIONS iterates
                live = table.live_partitions()
                table.partition_by_name("p3")
                assert any(t.name == "t" for t in projection.tables.values())
                projection.table_by_name(1, "t")
                # A held state never changes: the same partitions, all of them live while it said so.
                assert len(names) == len(table.partitions) == count
                assert all(p.dropped_ts_ms is None for p in live)
                reads += 1
        except BaseException as exc:  # noqa: BLE001 - reported by the test's own thread
            errors.append(exc)

    interval = sys.getswitchinterval()
    sys.setswitchinterval(1e-5)  # switch threads as often as the interpreter allows
    reader = threading.Thread(target=read)
    reader.start()
    try:
        deadline = time.monotonic() + 3
        pid, table_id = 400, 2
        while time.monotonic() < deadline and not errors:
            folder.apply(ev.PartitionAdded(table_id=1, partition=_partition(pid)))
            folder.apply(ev.PartitionDropped(table_id=1, partition_id=pid - 200))
            folder.apply(ev.RowsetsCommitted(table_id=1, commit_number=0, label=f"l{pid}", partition_versions={pid: 1},
                                             rowsets=(_rowset(f"r{pid}", 1, 1),), num_rows=1))
            folder.apply(_table_created(table_id), table_id)
            pid, table_id = pid + 1, table_id + 1
    finally:
        stop.set()
        reader.join()
        sys.setswitchinterval(interval)
    assert errors == []
    assert reads > 0 and pid > 400


def test_a_published_table_is_never_changed(folder: Folder) -> None:
    """Every change to a table makes a new state; one a reader holds reads as it did."""
    projection = folder.projection
    folder.apply(ev.PartitionAdded(table_id=1, partition=_partition(2)))
    held = projection.tables[1]
    held_partition = held.partitions[1]
    before = held.model_dump_json()
    schema = TableSchema(schema_version=2, columns=(*held.schema_now.columns,
                                                    Column(unique_id=2, name="v", type="INT")))
    for event in (ev.PartitionAdded(table_id=1, partition=_partition(3)),
                  ev.PartitionDropped(table_id=1, partition_id=2),
                  ev.PartitionPropertiesChanged(table_id=1, partition_ids=(1,), changes={"storage_medium": "HDD"}),
                  ev.TablePropertiesChanged(table_id=1, changes={"enable_time_travel": "true"}),
                  ev.SchemaChanged(table_id=1, table_schema=schema, next_column_id=3, description="ADD COLUMN v"),
                  ev.RowsetsCommitted(table_id=1, commit_number=7, label="l7", partition_versions={1: 6},
                                      rowsets=(_rowset("r6", 6, 6),), num_rows=1),
                  ev.TableRenamed(table_id=1, name="t2"),
                  ev.TableDropped(table_id=1),
                  ev.TableRecovered(table_id=1)):
        folder.apply(event)
    assert held.model_dump_json() == before
    now = projection.tables[1]
    assert now is not held and now.name == "t2" and now.commit_number == held.commit_number + 4
    assert sorted(now.partitions) == [1, 2, 3] and now.partitions[2].dropped_ts_ms is not None
    assert now.partitions[1].version == 6 and held_partition.version == 5
    assert now.partitions[1].partition.properties == {"storage_medium": "HDD"}
    assert [c.name for c in now.schema_now.columns] == ["k", "v"] and now.time_travel and not held.time_travel
    # A partition no event touched is shared, not copied: an event costs the dicts, not every state.
    folder.apply(ev.PartitionAdded(table_id=1, partition=_partition(4)))
    assert projection.tables[1].partitions[3] is now.partitions[3]


def test_a_failing_event_publishes_nothing(folder: Folder) -> None:
    """An event the fold cannot apply (the follower skips it) leaves the table as it was, not half
    changed: partition 1's version is bumped in the draft before partition 99 is found missing."""
    projection = folder.projection
    held = projection.tables[1]
    with pytest.raises(KeyError):
        folder.apply(ev.RowsetsCommitted(table_id=1, commit_number=6, label="bad", partition_versions={1: 6, 99: 6},
                                         rowsets=(), num_rows=0))
    assert projection.tables[1] is held and held.partitions[1].version == 5


def test_databases_are_replaced_too(folder: Folder) -> None:
    projection = folder.projection
    held = projection.databases
    database = held[1]
    folder.apply(ev.DatabaseCreated(db_id=2, name="d2"), None)
    folder.apply(ev.DatabaseDropped(db_id=1, name="d"), None)
    assert sorted(held) == [1] and database.dropped_ts_ms is None  # what a reader held: unchanged
    assert sorted(projection.databases) == [1, 2] and projection.databases[1].dropped_ts_ms is not None
    assert projection.tables[1].dropped_ts_ms is not None
