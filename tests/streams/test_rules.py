"""The sequencer's decisions, against a projection folded in memory (no Kafka)."""

from __future__ import annotations

from pathlib import Path

import pytest

from projections.projection import Projection
from schemas import commands as cmd
from schemas import events as ev
from schemas.envelope import wrap_event
from schemas.errors import ErrorCode
from schemas.model import Column, Distribution, NewRowset
from storage.paths import rowset_path
from streams.rules import Rejected, Rules


@pytest.fixture()
def state(tmp_path: Path) -> Projection:
    projection = Projection(tmp_path / "seq")
    rules = Rules(projection)
    ts = 1000
    for command in (cmd.CreateDatabase(name="d"),
                    cmd.CreateTable(db="d", name="t", keys_model="DUPLICATE",
                                    columns=(Column(unique_id=1, name="k", type="INT", is_key=True),),
                                    partition_kind="RANGE", partition_columns=("k",),
                                    partitions=(cmd.NewPartition(name="p1", buckets=2),
                                                cmd.NewPartition(name="p2", buckets=2)),
                                    distribution=Distribution(columns=("k",), buckets=2))):
        decision = rules.decide(command, ts)
        projection.apply(wrap_event(decision.event, table_id=decision.table_id, commit_ts_ms=ts, command_id=None),
                         "strata.events", 0, ts - 1000)
        ts += 1
    projection.flush()
    return projection


def _rowset(partition_id: int, rid: str, *, path: str | None = None) -> NewRowset:
    # The fixture's table is the log's first: id 1. The sequencer accepts only id-built paths.
    return NewRowset(rowset_id=rid, partition_id=partition_id, bucket=0, num_rows=1, size_bytes=1,
                     path=rowset_path(1, partition_id, 0, rid) if path is None else path, schema_version=1,
                     checksum="c")


def _apply(state: Projection, command: cmd.Command, ts: int) -> ev.Event:
    decision = Rules(state).decide(command, ts)
    state.apply(wrap_event(decision.event, table_id=decision.table_id, commit_ts_ms=ts, command_id=None),
                "strata.events", 0, -1)
    state.flush()
    return decision.event


def test_versions_are_per_partition_and_contiguous(state: Projection) -> None:
    table_id = next(iter(state.tables))
    p1, p2 = sorted(state.tables[table_id].partitions)
    first = _apply(state, cmd.CommitRowsets(table_id=table_id, label="a", rowsets=(_rowset(p1, "r1"),), num_rows=1),
                   2000)
    second = _apply(state, cmd.CommitRowsets(table_id=table_id, label="b",
                                             rowsets=(_rowset(p1, "r2"), _rowset(p2, "r3")), num_rows=2), 2001)
    assert isinstance(first, ev.RowsetsCommitted) and first.partition_versions == {p1: 1}
    assert isinstance(second, ev.RowsetsCommitted) and second.partition_versions == {p1: 2, p2: 1}
    assert second.commit_number == 2
    assert {r.start_version for r in second.rowsets} == {2, 1}


def test_a_used_label_is_rejected_with_the_first_outcome(state: Projection) -> None:
    table_id = next(iter(state.tables))
    pid = min(state.tables[table_id].partitions)
    _apply(state, cmd.CommitRowsets(table_id=table_id, label="once", rowsets=(_rowset(pid, "r1"),), num_rows=1),
           2000)
    with pytest.raises(Rejected) as rejected:
        Rules(state).decide(cmd.CommitRowsets(table_id=table_id, label="once", rowsets=(_rowset(pid, "r9"),),
                                              num_rows=1), 2001)
    assert rejected.value.code == ErrorCode.LABEL_ALREADY_EXISTS
    assert "commit 1" in rejected.value.reason


def test_a_load_into_a_dropped_partition_is_rejected(state: Projection) -> None:
    table_id = next(iter(state.tables))
    pid = min(state.tables[table_id].partitions)
    _apply(state, cmd.DropPartition(table_id=table_id, partition_name="p1"), 2000)
    with pytest.raises(Rejected, match="dropped"):
        Rules(state).decide(cmd.CommitRowsets(table_id=table_id, label="x", rowsets=(_rowset(pid, "r1"),),
                                              num_rows=1), 2001)


def test_a_schema_change_on_a_stale_base_is_a_conflict(state: Projection) -> None:
    table_id = next(iter(state.tables))
    columns = state.tables[table_id].schema_now.columns
    change = cmd.ChangeSchema(table_id=table_id, base_schema_version=1, columns=columns, next_column_id=2,
                              description="x")
    _apply(state, change, 2000)
    with pytest.raises(Rejected) as rejected:
        Rules(state).decide(change, 2001)
    assert rejected.value.code == ErrorCode.CONFLICT


def test_duplicate_names_are_rejected(state: Projection) -> None:
    rules = Rules(state)
    with pytest.raises(Rejected) as rejected:
        rules.decide(cmd.CreateDatabase(name="D"), 2000)
    assert rejected.value.code == ErrorCode.DB_CREATE_EXISTS
    with pytest.raises(Rejected) as rejected:
        rules.decide(cmd.CreateTable(db="d", name="T", keys_model="DUPLICATE", columns=(), partitions=(),
                                     distribution=Distribution()), 2000)
    assert rejected.value.code == ErrorCode.TABLE_EXISTS_ERROR
