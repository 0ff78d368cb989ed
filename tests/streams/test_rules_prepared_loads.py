"""Two-phase loads (Stream Load 2PC) in the sequencer: a prepared load takes its label and a
transaction id but no version; commit gives its rowsets one version, once; abort or a deadline
passed drops it and frees the label; everything survives a restart (it is folded from the log)."""

from __future__ import annotations

from pathlib import Path

from projections.projection import Projection
from schemas import commands as cmd
from schemas import events as ev
from schemas.errors import ErrorCode
from tests.streams.ruleskit import FIXTURE_TABLE, fold, rejected, rowset


def _partition(state: Projection) -> int:
    return min(state.tables[FIXTURE_TABLE].partitions)


def _prepare(state: Projection, label: str, ts: int, timeout_ms: int = 10_000) -> ev.LoadPrepared:
    event = fold(state, cmd.PrepareLoad(table_id=FIXTURE_TABLE, label=label, rowsets=(rowset(_partition(state),
                                                                                             f"r{ts}"),),
                                        num_rows=1, timeout_ms=timeout_ms), ts)
    assert isinstance(event, ev.LoadPrepared)
    return event


def test_commit_once_with_a_version(state: Projection, tmp_path: Path) -> None:
    prepared = _prepare(state, "a", 2000)
    assert state.tables[FIXTURE_TABLE].partitions[_partition(state)].version == 0  # invisible: no version
    rejected(state, cmd.CommitRowsets(table_id=FIXTURE_TABLE, label="a", rowsets=(rowset(_partition(state), "x"),),
                                      num_rows=1), 2001, ErrorCode.LABEL_ALREADY_EXISTS, "prepared transaction")
    state.close()
    state = Projection(tmp_path / "seq")  # a restarted sequencer still knows the prepared load
    committed = fold(state, cmd.FinishLoad(table_id=FIXTURE_TABLE, txn_id=prepared.txn_id, operation="commit"), 2002)
    assert isinstance(committed, ev.RowsetsCommitted) and committed.txn_id == prepared.txn_id
    assert committed.label == "a" and committed.partition_versions == {_partition(state): 1}
    rejected(state, cmd.FinishLoad(table_id=FIXTURE_TABLE, txn_id=prepared.txn_id, operation="commit"), 2003,
             ErrorCode.UNKNOWN_ERROR, "already visible")
    assert state.label(FIXTURE_TABLE, "a") is not None and state.prepared_loads() == []


def test_abort_and_deadline_free_the_label(state: Projection) -> None:
    first = _prepare(state, "b", 2000)
    aborted = fold(state, cmd.FinishLoad(table_id=FIXTURE_TABLE, txn_id=first.txn_id, operation="abort"), 2001)
    assert isinstance(aborted, ev.LoadAborted)
    rejected(state, cmd.FinishLoad(table_id=FIXTURE_TABLE, txn_id=first.txn_id, operation="commit"), 2002,
             ErrorCode.UNKNOWN_ERROR, "already aborted")
    second = _prepare(state, "b", 2003, timeout_ms=5)
    assert second.txn_id == first.txn_id + 1
    late = fold(state, cmd.FinishLoad(table_id=FIXTURE_TABLE, txn_id=second.txn_id, operation="commit"), 2009)
    assert isinstance(late, ev.LoadAborted) and "timeout" in late.reason
    assert state.tables[FIXTURE_TABLE].partitions[_partition(state)].version == 0
    rejected(state, cmd.FinishLoad(table_id=FIXTURE_TABLE, txn_id=99, operation="commit"), 2010,
             ErrorCode.UNKNOWN_ERROR, "not found")
