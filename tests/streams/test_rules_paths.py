"""Paths in commands are ids, never text (issue #15): the sequencer rejects a commit, a compaction
output or a move whose rowset path is absolute, climbs with `..`, or is not exactly the path built
from the rowset's ids — the recycler and the readers act on what the log names."""

from __future__ import annotations

import pytest

from projections.projection import Projection
from schemas import commands as cmd
from schemas.errors import ErrorCode
from schemas.model import NewRowset, RowsetMove
from storage.paths import rowset_path
from streams.rules import Rules
from tests.streams.ruleskit import fold, rejected, rowset

TABLE = 1  # the fixture's table
BAD = [
    ("/etc/passwd", "must be relative to its tier root"),
    ("/tmp/t1/p1/b0/r1.parquet", "must be relative to its tier root"),
    ("t1/p1/b0/../../../../etc/passwd", "must not contain '..'"),
    ("../ssd/t1/p1/b0/r1.parquet", "must not contain '..'"),
    ("t2/p1/b0/r1.parquet", "is not 't1/"),  # another table's file
    ("t1/p1/b0/other.parquet", "the path built from the rowset's ids"),
]


def _rejected(state: Projection, command: cmd.Command, fragment: str) -> None:
    rejected(state, command, 3000, ErrorCode.WRONG_ARGUMENTS, fragment)


@pytest.mark.parametrize(("path", "fragment"), BAD)
def test_a_commit_naming_any_other_path_is_rejected(state: Projection, path: str, fragment: str) -> None:
    pid = min(state.tables[TABLE].partitions)
    _rejected(state, cmd.CommitRowsets(table_id=TABLE, label="l", num_rows=1,
                                       rowsets=(rowset(pid, "r1", path=path),)), fragment)
    assert state.tables[TABLE].commit_number == 0


def test_a_rowset_id_that_is_not_alphanumeric_is_rejected(state: Projection) -> None:
    pid = min(state.tables[TABLE].partitions)
    rowset = NewRowset(rowset_id="../x", partition_id=pid, bucket=0, num_rows=1, size_bytes=1,
                       path="t1/p1/b0/../x.parquet", schema_version=1, checksum="c")
    _rejected(state, cmd.CommitRowsets(table_id=TABLE, label="l", num_rows=1, rowsets=(rowset,)),
              "must be alphanumeric")


@pytest.mark.parametrize(("path", "fragment"), BAD)
def test_a_compaction_output_naming_any_other_path_is_rejected(state: Projection, path: str,
                                                               fragment: str) -> None:
    pid = min(state.tables[TABLE].partitions)
    for i in (1, 2):
        fold(state, cmd.CommitRowsets(table_id=TABLE, label=f"l{i}", num_rows=1, rowsets=(rowset(pid, f"r{i}"),)),
               2000 + i)
    good = cmd.CommitCompaction(table_id=TABLE, partition_id=pid, bucket=0, kind="cumulative",
                                input_rowset_ids=("r1", "r2"), output=rowset(pid, "c1"), start_version=1,
                                end_version=2)
    assert Rules(state).decide(good, 3000).event.TYPE == "CompactionCommitted"
    _rejected(state, good.model_copy(update={"output": rowset(pid, "c1", path=path)}), fragment)
    elsewhere = good.model_copy(update={"output": rowset(pid, "c1").model_copy(update={"bucket": 1})})
    _rejected(state, elsewhere, "not in the tablet it compacts")


@pytest.mark.parametrize(("path", "fragment"), BAD)
def test_a_move_naming_any_other_path_is_rejected(state: Projection, path: str, fragment: str) -> None:
    pid = min(state.tables[TABLE].partitions)
    fold(state, cmd.CommitRowsets(table_id=TABLE, label="l", num_rows=1, rowsets=(rowset(pid, "r1"),)), 2000)
    good = RowsetMove(rowset_id="r1", from_tier="ssd", to_tier="hdd", path=rowset_path(TABLE, pid, 0, "r1"))
    assert Rules(state).decide(cmd.MoveRowsets(table_id=TABLE, moves=(good,)), 3000).event.TYPE == "RowsetsMoved"
    bad = good.model_copy(update={"path": path})
    _rejected(state, cmd.MoveRowsets(table_id=TABLE, moves=(bad,)), fragment)
