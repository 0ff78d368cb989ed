"""The sequencer's decisions, against a projection folded in memory (no Kafka)."""

from __future__ import annotations

import pytest

from projections.projection import Projection
from schemas import commands as cmd
from schemas import events as ev
from schemas.errors import ErrorCode
from schemas.model import Distribution
from streams.rules import Rejected, Rules
from tests.streams.ruleskit import fold, rowset


def test_versions_are_per_partition_and_contiguous(state: Projection) -> None:
    table_id = next(iter(state.tables))
    p1, p2 = sorted(state.tables[table_id].partitions)
    first = fold(state, cmd.CommitRowsets(table_id=table_id, label="a", rowsets=(rowset(p1, "r1"),), num_rows=1),
                   2000)
    second = fold(state, cmd.CommitRowsets(table_id=table_id, label="b",
                                             rowsets=(rowset(p1, "r2"), rowset(p2, "r3")), num_rows=2), 2001)
    assert isinstance(first, ev.RowsetsCommitted) and first.partition_versions == {p1: 1}
    assert isinstance(second, ev.RowsetsCommitted) and second.partition_versions == {p1: 2, p2: 1}
    assert second.commit_number == 2
    assert {r.start_version for r in second.rowsets} == {2, 1}


def test_a_used_label_is_rejected_with_the_first_outcome(state: Projection) -> None:
    table_id = next(iter(state.tables))
    pid = min(state.tables[table_id].partitions)
    fold(state, cmd.CommitRowsets(table_id=table_id, label="once", rowsets=(rowset(pid, "r1"),), num_rows=1),
           2000)
    with pytest.raises(Rejected) as rejected:
        Rules(state).decide(cmd.CommitRowsets(table_id=table_id, label="once", rowsets=(rowset(pid, "r9"),),
                                              num_rows=1), 2001)
    assert rejected.value.code == ErrorCode.LABEL_ALREADY_EXISTS
    assert "commit 1" in rejected.value.reason


def test_a_load_into_a_dropped_partition_is_rejected(state: Projection) -> None:
    table_id = next(iter(state.tables))
    pid = min(state.tables[table_id].partitions)
    fold(state, cmd.DropPartition(table_id=table_id, partition_name="p1"), 2000)
    with pytest.raises(Rejected, match="dropped"):
        Rules(state).decide(cmd.CommitRowsets(table_id=table_id, label="x", rowsets=(rowset(pid, "r1"),),
                                              num_rows=1), 2001)


def test_a_schema_change_on_a_stale_base_is_a_conflict(state: Projection) -> None:
    table_id = next(iter(state.tables))
    columns = state.tables[table_id].schema_now.columns
    change = cmd.ChangeSchema(table_id=table_id, base_schema_version=1, columns=columns, next_column_id=2,
                              description="x")
    fold(state, change, 2000)
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
