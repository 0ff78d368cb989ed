"""The sequencer hands out AUTO_INCREMENT values: each once, in order, from the column's start, and
from where the log left off after a restart (the counter is folded from the events)."""

from __future__ import annotations

from pathlib import Path

from projections.projection import Projection
from schemas import commands as cmd
from schemas import events as ev
from schemas.errors import ErrorCode
from schemas.model import Column, Distribution
from tests.streams.ruleskit import FIXTURE_TABLE, fold, rejected


def _auto_table(state: Projection, start: int) -> int:
    event = fold(state, cmd.CreateTable(
        db="d", name="a", keys_model="UNIQUE", partition_kind="UNPARTITIONED",
        columns=(Column(unique_id=1, name="k", type="INT", is_key=True),
                 Column(unique_id=2, name="id", type="BIGINT", nullable=False, auto_increment=start)),
        partitions=(cmd.NewPartition(name="a", buckets=1),), distribution=Distribution(columns=("k",))), 2000)
    assert isinstance(event, ev.TableCreated)
    return event.table_id


def test_values_are_handed_out_once_in_order(state: Projection) -> None:
    table_id = _auto_table(state, 100)
    first = fold(state, cmd.AllocateAutoIncrement(table_id=table_id, count=3), 2001)
    second = fold(state, cmd.AllocateAutoIncrement(table_id=table_id, count=2), 2002)
    assert isinstance(first, ev.AutoIncrementAllocated) and (first.start, first.count) == (100, 3)
    assert isinstance(second, ev.AutoIncrementAllocated) and (second.start, second.count) == (103, 2)


def test_the_counter_survives_a_restart(state: Projection, tmp_path: Path) -> None:
    table_id = _auto_table(state, 1)
    fold(state, cmd.AllocateAutoIncrement(table_id=table_id, count=5), 2001)
    state.close()
    reopened = Projection(tmp_path / "seq")  # the fixture's store, as a restarted sequencer finds it
    after = fold(reopened, cmd.AllocateAutoIncrement(table_id=table_id, count=1), 2002)
    assert isinstance(after, ev.AutoIncrementAllocated) and after.start == 6


def test_a_table_without_the_column_is_refused(state: Projection) -> None:
    rejected(state, cmd.AllocateAutoIncrement(table_id=FIXTURE_TABLE, count=1), 2001, ErrorCode.WRONG_ARGUMENTS,
             "no AUTO_INCREMENT column")
