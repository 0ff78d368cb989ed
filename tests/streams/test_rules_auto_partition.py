"""The sequencer's rules for AUTO PARTITION commits: the partitions a load brings are created with its
rows in one event, once, and a commit whose partition ids were taken meanwhile is a CONFLICT."""

from __future__ import annotations

from projections.projection import Projection
from schemas import commands as cmd
from schemas import events as ev
from schemas.errors import ErrorCode
from schemas.model import AutoPartitioning, Column, Distribution, NewRowset, Partition, PartitionBound
from storage.paths import rowset_path
from tests.streams.ruleskit import FIXTURE_TABLE, fold, rejected, rowset

AUTO_TABLE = 2


def _auto_table(state: Projection) -> None:
    fold(state, cmd.CreateTable(db="d", name="auto", keys_model="DUPLICATE",
                                columns=(Column(unique_id=1, name="c", type="VARCHAR(10)", is_key=True),),
                                partition_kind="LIST", partition_columns=("c",), partitions=(),
                                distribution=Distribution(columns=("c",), buckets=1),
                                auto_partition=AutoPartitioning()), 2000)


def _partition(pid: int, value: str) -> Partition:
    return Partition(partition_id=pid, name=f"p{value}{len(value)}", bound=PartitionBound(values=((value,),)),
                     buckets=1)


def _commit(label: str, rows_into: int, *new: Partition) -> cmd.CommitRowsets:
    rid = f"r{label}"
    rowset_ = NewRowset(rowset_id=rid, partition_id=rows_into, bucket=0, num_rows=1, size_bytes=1,
                        path=rowset_path(AUTO_TABLE, rows_into, 0, rid), schema_version=1, checksum="c")
    return cmd.CommitRowsets(table_id=AUTO_TABLE, label=label, rowsets=(rowset_,), num_rows=1, new_partitions=new)


def test_new_partitions_come_with_their_rows_once(state: Projection) -> None:
    _auto_table(state)
    first = state.next_ids["partition"]
    event = fold(state, _commit("a", first, _partition(first, "x")), 3000)
    assert isinstance(event, ev.RowsetsCommitted) and [p.name for p in event.new_partitions] == ["px1"]
    table = state.tables[AUTO_TABLE]
    assert table.partitions[first].created_ts_ms == 3000 and table.partitions[first].version == 1
    # A racing load proposed the same partition under the same id: it writes into it, creates nothing.
    event = fold(state, _commit("b", first, _partition(first, "x")), 3001)
    assert isinstance(event, ev.RowsetsCommitted) and event.new_partitions == ()
    assert event.partition_versions == {first: 2}
    assert len(state.tables[AUTO_TABLE].live_partitions()) == 1


def test_taken_partition_ids_are_a_conflict(state: Projection) -> None:
    _auto_table(state)
    first = state.next_ids["partition"]
    fold(state, _commit("a", first, _partition(first, "x")), 3000)
    # This writer saw the same next id, for another value: the id is taken now.
    rejected(state, _commit("b", first, _partition(first, "y")), 3001, ErrorCode.CONFLICT, "py1")
    # The name exists under another id (another writer's view was older).
    rejected(state, _commit("c", first + 1, _partition(first + 1, "x")), 3001, ErrorCode.CONFLICT, "px1")


def test_only_auto_tables_take_new_partitions(state: Projection) -> None:
    pid = state.next_ids["partition"]
    command = cmd.CommitRowsets(table_id=FIXTURE_TABLE, label="l", rowsets=(rowset(1, "r1"),), num_rows=1,
                                new_partitions=(_partition(pid, "x"),))
    rejected(state, command, 3000, ErrorCode.WRONG_ARGUMENTS, "does not create partitions")
