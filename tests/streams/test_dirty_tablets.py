"""streams.dirty_tablets: marks merge (partitions add up, a table-wide mark covers them, a rescan
covers every table), a pass takes them whole, and only live tables' live partitions are named."""

from __future__ import annotations

from projections.state import PartitionState, SchemaAt, TableState
from schemas import events as ev
from schemas.model import Column, Distribution, Partition, Rowset, TableSchema
from streams.dirty_tablets import DirtyTablets


def _table(table_id: int, partitions: int, dropped: int | None = None) -> TableState:
    schema = TableSchema(schema_version=1, columns=(Column(unique_id=1, name="k", type="INT", is_key=True),))
    states = {p: PartitionState(partition=Partition(partition_id=p, name=f"p{p}", buckets=2), created_ts_ms=0,
                                dropped_ts_ms=dropped if p == dropped else None) for p in range(1, partitions + 1)}
    return TableState(table_id=table_id, db_id=1, name=f"t{table_id}", keys_model="DUPLICATE",
                      partition_kind="RANGE", partition_columns=("k",), distribution=Distribution(columns=("k",)),
                      schemas=[SchemaAt(ts_ms=0, table_schema=schema)], partitions=states, created_ts_ms=0,
                      last_commit_ts_ms=0, next_column_id=2)


def _output() -> Rowset:
    return Rowset(rowset_id="c", partition_id=2, bucket=0, num_rows=1, size_bytes=1, path="t1/p2/b0/c.parquet",
                  schema_version=1, checksum="x", start_version=1, end_version=2, visible_ts_ms=0)


TABLES = {1: _table(1, 3, dropped=3), 2: _table(2, 1)}


def _keys(table_id: int, *partitions: int) -> list[tuple[int, int, int]]:
    return [(table_id, p, b) for p in partitions for b in range(2)]


def test_marks_merge_and_are_taken_whole() -> None:
    dirty = DirtyTablets()
    assert dirty.take(TABLES) == _keys(1, 1, 2) + _keys(2, 1)  # at first: every live tablet
    assert dirty.take(TABLES) == []
    dirty.mark(1, {1})
    dirty.mark(1, {3})  # a dropped partition: nothing to look at
    dirty.mark(9, None)  # a table not live (or not this worker's): nothing either
    assert dirty.take(TABLES) == _keys(1, 1)
    dirty.mark(1, {2})
    dirty.mark(1, None)
    dirty.mark(1, {1})
    assert dirty.take(TABLES) == _keys(1, 1, 2)
    dirty.mark(2, {1})
    dirty.rescan()
    dirty.mark(2, {1})
    assert dirty.take(TABLES) == _keys(1, 1, 2) + _keys(2, 1)


def test_events_mark_what_they_touched() -> None:
    dirty = DirtyTablets()
    dirty.take(TABLES)
    assert not dirty.on_event(ev.DatabaseCreated(db_id=2, name="d"))
    assert dirty.on_event(ev.CompactionCommitted(table_id=1, partition_id=2, bucket=0, kind="base",
                                                   input_rowset_ids=("a",), output=_output()))
    assert dirty.take(TABLES) == _keys(1, 2)
    assert dirty.on_event(ev.TablePropertiesChanged(table_id=2, changes={"storage_medium": "HDD"}))
    assert dirty.take(TABLES) == _keys(2, 1)
    assert dirty.on_event(ev.StoragePolicyDropped(name="cold"))
    assert dirty.take(TABLES) == _keys(1, 1, 2) + _keys(2, 1)
