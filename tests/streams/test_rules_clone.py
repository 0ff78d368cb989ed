"""CREATE TABLE … CLONE in the sequencer, the fold and the recycler (no Kafka): the clone's rowsets get
new ids and name the source's files; the projection folds each file's holders; a shared file is
deleted only by whichever release leaves none, the orphan sweep keeps every held file, and shared
files are never moved."""

from __future__ import annotations

import os
from pathlib import Path

import pytest

from projections.cooldown import SHARED_RECHECK_MS, TabletPlan, plan_tablet
from projections.projection import Projection
from schemas import commands as cmd
from schemas import events as ev
from schemas.errors import ErrorCode
from schemas.model import RowsetMove
from storage.paths import rowset_path
from storage.tiers import LocalTiers
from streams.recycler import Recycler
from tests.streams.ruleskit import FIXTURE_TABLE, fold, rejected, rowset


def _loaded(state: Projection) -> int:
    """Two loads into p1's bucket 0 of the fixture's table (at 2000 and 2001); returns p1's id."""
    p1 = min(state.tables[FIXTURE_TABLE].partitions)
    for n, label in enumerate(("a", "b")):
        fold(state, cmd.CommitRowsets(table_id=FIXTURE_TABLE, label=label, rowsets=(rowset(p1, f"r{n}"),),
                                      num_rows=1), 2000 + n)
    return p1


def _clone(state: Projection, ts: int, source_ts_ms: int | None = None, name: str = "c") -> ev.TableCloned:
    event = fold(state, cmd.CloneTable(db="d", name=name, source_table_id=FIXTURE_TABLE, source_ts_ms=source_ts_ms),
                 ts)
    assert isinstance(event, ev.TableCloned)
    return event


def _compact(state: Projection, table_id: int, partition_id: int, inputs: tuple[str, ...], out: str,
             ts: int) -> None:
    output = rowset(partition_id, out).model_copy(update={"path": rowset_path(table_id, partition_id, 0, out)})
    fold(state, cmd.CommitCompaction(table_id=table_id, partition_id=partition_id, bucket=0, kind="base",
                                     input_rowset_ids=inputs, output=output, start_version=1, end_version=2), ts)


def test_a_clone_names_the_source_files_under_new_ids(state: Projection) -> None:
    p1 = _loaded(state)
    event = _clone(state, 3000)
    assert event.source_table_id == FIXTURE_TABLE and event.source_ts_ms == 3000
    clone = state.tables[event.table_id]
    assert [p.name for p in clone.partitions.values()] == ["p1", "p2"] and p1 not in clone.partitions
    assert clone.commit_number == 1 and clone.created_ts_ms == 3000
    records = list(state.rowset_records(event.table_id))
    assert {r.rowset.path for r in records} == {rowset_path(FIXTURE_TABLE, p1, 0, f"r{n}") for n in range(2)}
    assert all(r.rowset.rowset_id not in ("r0", "r1") and r.rowset.shared_file is not None for r in records)
    assert sorted(state.file_holders("r0")) == sorted(["r0", records[0].rowset.rowset_id])
    # An instant names the snapshot then: the first load only.
    earlier = _clone(state, 3001, source_ts_ms=2000, name="c0")
    assert [r.shared_file.rowset_id for r in earlier.rowsets if r.shared_file] == ["r0"]
    # A clone of a clone names the first file still.
    fold(state, cmd.CloneTable(db="d", name="cc", source_table_id=event.table_id), 3002)
    assert len(state.file_holders("r0")) == 4


def test_holders_are_released_by_recycling_and_purging(state: Projection) -> None:
    p1 = _loaded(state)
    clone_id = _clone(state, 3000).table_id
    clone_p1 = min(state.tables[clone_id].partitions)
    copies = tuple(r.rowset.rowset_id for r in state.rowset_records(clone_id))
    _compact(state, FIXTURE_TABLE, p1, ("r0", "r1"), "merged", 4000)
    fold(state, cmd.RecycleRowsets(table_id=FIXTURE_TABLE, rowset_ids=("r0", "r1")), 5000)
    assert state.file_holders("r0") == [copies[0]]
    _compact(state, clone_id, clone_p1, copies, "cmerged", 6000)
    fold(state, cmd.DropTable(table_id=clone_id, force=True), 7000)
    assert state.file_holders("r0") == [] and state.file_holders("cmerged") == []
    assert state.file_holders("merged") == ["merged"]


def test_a_clone_of_a_snapshot_already_recycled_is_refused(state: Projection) -> None:
    p1 = _loaded(state)
    _compact(state, FIXTURE_TABLE, p1, ("r0", "r1"), "merged", 4000)
    fold(state, cmd.RecycleRowsets(table_id=FIXTURE_TABLE, rowset_ids=("r0", "r1")), 5000)
    rejected(state, cmd.CloneTable(db="d", name="c", source_table_id=FIXTURE_TABLE, source_ts_ms=2001), 5001,
             ErrorCode.WRONG_ARGUMENTS, "no longer keeps")
    rejected(state, cmd.CloneTable(db="d", name="t", source_table_id=FIXTURE_TABLE), 5001,
             ErrorCode.TABLE_EXISTS_ERROR, "already exists")


def test_shared_files_are_not_moved(state: Projection) -> None:
    p1 = _loaded(state)
    clone_id = _clone(state, 3000).table_id
    copy = next(r.rowset for r in state.rowset_records(clone_id))
    move = RowsetMove(rowset_id="r0", from_tier="ssd", to_tier="hdd", path=rowset_path(FIXTURE_TABLE, p1, 0, "r0"))
    rejected(state, cmd.MoveRowsets(table_id=FIXTURE_TABLE, moves=(move,)), 3001, ErrorCode.CONFLICT,
             "shares its file")
    own = RowsetMove(rowset_id=copy.rowset_id, from_tier="ssd", to_tier="hdd", path=copy.path)
    rejected(state, cmd.MoveRowsets(table_id=clone_id, moves=(own,)), 3001, ErrorCode.CONFLICT, "shares its file")
    # The source's compaction output is its own file: it moves.
    _compact(state, FIXTURE_TABLE, p1, ("r0", "r1"), "merged", 4000)
    fold(state, cmd.RecycleRowsets(table_id=FIXTURE_TABLE, rowset_ids=("r0", "r1")), 5000)
    moved = RowsetMove(rowset_id="merged", from_tier="ssd", to_tier="hdd",
                       path=rowset_path(FIXTURE_TABLE, p1, 0, "merged"))
    fold(state, cmd.MoveRowsets(table_id=FIXTURE_TABLE, moves=(moved,)), 5001)


@pytest.fixture
def tiers(tmp_path: Path) -> LocalTiers:
    return LocalTiers({"ssd": tmp_path / "ssd", "hdd": tmp_path / "hdd"})


def _files(tiers: LocalTiers, state: Projection, table_id: int) -> dict[str, Path]:
    """Writes an old file for each of the table's own rowsets; by rowset id."""
    found = {}
    for record in state.rowset_records(table_id):
        path = tiers.locate("ssd", record.rowset.path)
        path.parent.mkdir(parents=True, exist_ok=True)
        path.write_text("rows")
        os.utime(path, (1, 1))
        found[record.rowset.rowset_id] = path
    return found


def test_the_recycler_deletes_a_shared_file_on_its_last_release(state: Projection, tiers: LocalTiers) -> None:
    p1 = _loaded(state)
    files = _files(tiers, state, FIXTURE_TABLE)
    clone_id = _clone(state, 3000).table_id
    clone_p1 = min(state.tables[clone_id].partitions)
    copies = {r.rowset.rowset_id: r.rowset for r in state.rowset_records(clone_id)}
    recycler = Recycler(projection=state, proposer=None, tiers=tiers, stores=None,  # type: ignore[arg-type]
                        grace_s=0, day_s=1)
    _compact(state, FIXTURE_TABLE, p1, ("r0", "r1"), "merged", 4000)
    source_rowsets = {rid: state.rowset_record(rid).rowset for rid in ("r0", "r1")}  # type: ignore[union-attr]
    fold(state, cmd.RecycleRowsets(table_id=FIXTURE_TABLE, rowset_ids=("r0", "r1")), 5000)
    for shared in source_rowsets.values():
        recycler._remove_rowset(FIXTURE_TABLE, shared)
    recycler.remove_orphans()
    assert all(path.exists() for path in files.values()) and recycler.removed_orphans == 0
    _compact(state, clone_id, clone_p1, tuple(copies), "cmerged", 6000)
    fold(state, cmd.RecycleRowsets(table_id=clone_id, rowset_ids=tuple(copies)), 7000)
    first, *rest = copies.values()
    recycler._remove_rowset(clone_id, first)  # the clone's record removes the source's file, at its path
    assert not files[first.shared_file.rowset_id].exists() and recycler.refused_paths == 0  # type: ignore[union-attr]
    recycler.remove_orphans()  # and the sweep takes a file no holder is left for
    assert not any(path.exists() for path in files.values())


def test_cooldown_plans_stop_below_a_shared_file_and_look_again_later(state: Projection) -> None:
    p1 = _loaded(state)
    clone_id = _clone(state, 3000).table_id
    now = 10_000_000

    def plan(table_id: int) -> TabletPlan:
        table = state.tables[table_id]
        partition = table.partitions[p1 if table_id == FIXTURE_TABLE else min(table.partitions)]
        return plan_tablet(state, table, partition, 0, now, default_cooldown_s=0.0)

    fold(state, cmd.CommitRowsets(table_id=FIXTURE_TABLE, label="c", rowsets=(rowset(p1, "r2"),), num_rows=1), 3001)
    for table_id in (FIXTURE_TABLE, clone_id):  # r0 is shared: nothing above it moves either (gap-free)
        assert plan(table_id).moves == [] and plan(table_id).next_due_ms == now + SHARED_RECHECK_MS
    _compact(state, clone_id, min(state.tables[clone_id].partitions),
             tuple(r.rowset.rowset_id for r in state.rowset_records(clone_id)), "cmerged", 4000)
    fold(state, cmd.RecycleRowsets(table_id=clone_id, rowset_ids=tuple(
        r.rowset.rowset_id for r in state.rowset_records(clone_id) if r.rowset.shared_file)), 5000)
    assert [m.rowset.rowset_id for m in plan(FIXTURE_TABLE).moves] == ["r0", "r1", "r2"]
    assert [m.rowset.rowset_id for m in plan(clone_id).moves] == ["cmerged"]
