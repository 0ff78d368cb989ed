"""The sequencer's tag rules: CREATE TAG fills in the latest commit and the decision's instant, names
only snapshots still whole, and a recycle that would delete a rowset a live tag reads is refused, even
when the recycler planned it before the tag existed (no Kafka)."""

from __future__ import annotations

from projections.projection import Projection
from schemas import commands as cmd
from schemas import events as ev
from schemas.errors import ErrorCode
from tests.streams.ruleskit import FIXTURE_TABLE, fold, rejected, rowset


def _compacted(state: Projection) -> None:
    """Two loads into p1's bucket 0 (at 2000, 2001), then a base compaction of both (at 3000)."""
    p1 = min(state.tables[FIXTURE_TABLE].partitions)
    for n, label in enumerate(("a", "b")):
        fold(state, cmd.CommitRowsets(table_id=FIXTURE_TABLE, label=label, rowsets=(rowset(p1, f"r{n}"),),
                                      num_rows=1), 2000 + n)
    out = rowset(p1, "merged")
    fold(state, cmd.CommitCompaction(table_id=FIXTURE_TABLE, partition_id=p1, bucket=0, kind="base",
                                     input_rowset_ids=("r0", "r1"), output=out, start_version=1, end_version=2),
         3000)


def test_create_tag_defaults_to_the_latest_commit_at_the_decision(state: Projection) -> None:
    _compacted(state)
    event = fold(state, cmd.CreateTag(table_id=FIXTURE_TABLE, name="Latest"), 4000)
    assert isinstance(event, ev.TagCreated) and (event.commit_number, event.ts_ms) == (2, 4000)
    assert event.expires_ts_ms is None
    by_version = fold(state, cmd.CreateTag(table_id=FIXTURE_TABLE, name="one", commit_number=1,
                                           retention_ms=500), 4001)
    assert isinstance(by_version, ev.TagCreated) and (by_version.ts_ms, by_version.expires_ts_ms) == (2000, 4501)
    assert set(state.tables[FIXTURE_TABLE].tags) == {"latest", "one"}
    rejected(state, cmd.CreateTag(table_id=FIXTURE_TABLE, name="LATEST"), 4002, ErrorCode.UNKNOWN_ERROR,
             "already exists")
    rejected(state, cmd.CreateTag(table_id=FIXTURE_TABLE, name="x", commit_number=7), 4002,
             ErrorCode.WRONG_ARGUMENTS, "no commit 7")


def test_a_recycle_planned_before_a_tag_is_refused(state: Projection) -> None:
    _compacted(state)
    fold(state, cmd.CreateTag(table_id=FIXTURE_TABLE, name="first", commit_number=1), 4000)
    recycle = cmd.RecycleRowsets(table_id=FIXTURE_TABLE, rowset_ids=("r0", "r1"), horizon_ts_ms=3500)
    rejected(state, recycle, 4001, ErrorCode.CONFLICT, "r0", "read by a tag")
    # r1 was loaded after the tag's instant: the tag never reads it. The horizon stops at the tag.
    event = fold(state, cmd.RecycleRowsets(table_id=FIXTURE_TABLE, rowset_ids=("r1",), horizon_ts_ms=3500), 4001)
    assert isinstance(event, ev.RowsetsRecycled) and event.horizon_ts_ms == 2000
    assert state.tables[FIXTURE_TABLE].recycled_through_ts_ms == 3000
    # Once a later commit makes it history, commit 2's snapshot (which read r1) can no longer be tagged;
    # as the latest commit it could (the table as it was then is the table now: the merged rowset).
    p1 = min(state.tables[FIXTURE_TABLE].partitions)
    fold(state, cmd.CommitRowsets(table_id=FIXTURE_TABLE, label="c", rowsets=(rowset(p1, "r2"),), num_rows=1),
         4002)
    rejected(state, cmd.CreateTag(table_id=FIXTURE_TABLE, name="second", commit_number=2), 4002,
             ErrorCode.WRONG_ARGUMENTS, "no longer keeps")
    # Dropping the tag frees r0.
    fold(state, cmd.DropTag(table_id=FIXTURE_TABLE, name="FIRST"), 4003)
    assert not state.tables[FIXTURE_TABLE].tags
    fold(state, cmd.RecycleRowsets(table_id=FIXTURE_TABLE, rowset_ids=("r0",)), 4004)
    rejected(state, cmd.DropTag(table_id=FIXTURE_TABLE, name="first"), 4005, ErrorCode.WRONG_ARGUMENTS,
             "does not exist")


def test_an_expired_tag_keeps_nothing(state: Projection) -> None:
    _compacted(state)
    fold(state, cmd.CreateTag(table_id=FIXTURE_TABLE, name="brief", commit_number=1, retention_ms=100), 4000)
    rejected(state, cmd.RecycleRowsets(table_id=FIXTURE_TABLE, rowset_ids=("r0",)), 4099, ErrorCode.CONFLICT)
    fold(state, cmd.RecycleRowsets(table_id=FIXTURE_TABLE, rowset_ids=("r0",)), 4100)
    # Its name is free again: a new tag of that name replaces it.
    fold(state, cmd.CreateTag(table_id=FIXTURE_TABLE, name="Brief"), 4101)
    assert state.tables[FIXTURE_TABLE].tags["brief"].ts_ms == 4101
