"""Version-keeping compaction outputs in the cover walk and the fold: a read at a version inside such a
rowset's range takes it (read through that version) instead of the inputs it replaced, so any instant is
covered by as few rowsets as the latest state; its inputs are recycled after the grace alone, without
marking any instant's snapshot as no longer whole; a RESTORE to a version inside it reads it through the
restored version."""

from __future__ import annotations

from pathlib import Path

from projections import keys
from projections.projection import Projection
from projections.snapshot import cover_tablet, keeps_versions_possible
from schemas import events as ev
from schemas.envelope import EventEnvelope, wrap_event
from schemas.model import Rowset, RowsetMove
from tests.projections.test_fold import TOPIC, _events, _rowset


def _keeping(rowset_id: str, start: int, end: int) -> Rowset:
    return _rowset(rowset_id, start, end).model_copy(update={"keeps_versions": True})


def _event(payload: ev.Event, ts: int) -> EventEnvelope:
    return wrap_event(payload, table_id=1, commit_ts_ms=ts, command_id=None)


def _fold(path: Path, extra: list[ev.Event]) -> Projection:
    """r1 … r5 (versions 1 … 5 of one tablet), then `extra`, one commit instant each."""
    projection = Projection(path)
    envelopes = [*_events(), *(_event(e, 3000 + 100 * i) for i, e in enumerate(extra))]
    for offset, envelope in enumerate(envelopes):
        projection.apply(envelope, TOPIC, 0, offset)
    projection.flush()
    return projection


def _compacted(inputs: tuple[str, ...], output: Rowset) -> ev.CompactionCommitted:
    return ev.CompactionCommitted(table_id=1, partition_id=1, bucket=0, kind="cumulative", input_rowset_ids=inputs,
                                  output=output)


def _cover(projection: Projection, version: int) -> list[tuple[str, int | None]]:
    partition = projection.tables[1].partitions[1]
    return [(r.rowset_id, r.read_through) for r in cover_tablet(projection, 1, partition, 0, version)]


def test_an_instant_inside_a_version_keeping_rowset_reads_it_through_that_version(tmp_path: Path) -> None:
    projection = _fold(tmp_path / "p", [_compacted(("r1", "r2", "r3", "r4"), _keeping("k14", 1, 4))])
    try:
        assert _cover(projection, 5) == [("k14", None), ("r5", None)]
        assert _cover(projection, 4) == [("k14", None)]
        # Inside the range: the output alone, read through the version — not the four stale inputs.
        assert _cover(projection, 2) == [("k14", 2)]
        assert _cover(projection, 1) == [("k14", 1)]
    finally:
        projection.close()


def test_nested_outputs_the_widest_wins_and_inputs_recycle_without_trimming_history(tmp_path: Path) -> None:
    projection = _fold(tmp_path / "p", [
        _compacted(("r1", "r2"), _keeping("k12", 1, 2)),
        _compacted(("k12", "r3", "r4", "r5"), _keeping("k15", 1, 5)),
    ])
    try:
        assert _cover(projection, 1) == [("k15", 1)]
        assert _cover(projection, 3) == [("k15", 3)]
        stale = [r.rowset.rowset_id for r in projection.stale_records(1, 10**15, by_keeping=True)]
        assert sorted(stale) == ["k12", "r1", "r2", "r3", "r4", "r5"]
        assert list(projection.stale_records(1, 10**15)) == []  # none waits for the retention
        recycled = ev.RowsetsRecycled(table_id=1, rowset_ids=("r1", "r2", "k12", "r3", "r4", "r5"))
        projection.apply(_event(recycled, 4000), TOPIC, 0, 100)
        projection.flush()
        # Every instant is still whole: the output answers each one the inputs did.
        assert projection.tables[1].recycled_through_ts_ms is None
        assert _cover(projection, 2) == [("k15", 2)]
        assert list(projection.store.scan(keys.keeping_prefix(1, 1, 0))) != []
        assert list(projection.store.scan(keys.keeping_stale_prefix(1))) == []
    finally:
        projection.close()


def test_a_restore_inside_a_version_keeping_rowset_reads_it_through_the_restored_version(tmp_path: Path) -> None:
    projection = _fold(tmp_path / "p", [
        _compacted(("r1", "r2", "r3", "r4"), _keeping("k14", 1, 4)),
        ev.TableRestored(table_id=1, commit_number=6, target_ts_ms=2025, restored_versions={1: 2},
                         partition_versions={1: 6}),
    ])
    try:
        assert _cover(projection, 6) == [("k14", 2)]
        assert _cover(projection, 5) == [("k14", None), ("r5", None)]  # before the restore: unchanged
        # The restore made r5 stale; k14 stays live (the restored state reads it).
        records = {r.rowset.rowset_id: r.stale_ts_ms for r in projection.rowset_records(1)}
        assert records["k14"] is None and records["r5"] is not None
        partition = projection.tables[1].partitions[1]
        run = cover_tablet(projection, 1, partition, 0, 6)
        # A compaction across the restore keeps no versions: the range's history is not the run's rows.
        table = projection.tables[1].model_copy(update={"properties": {"enable_time_travel": "true"}})
        assert not keeps_versions_possible(table, partition, run)
        assert keeps_versions_possible(table, projection.tables[1].partitions[1], []) is False
    finally:
        projection.close()


def test_a_walk_sees_version_keeping_rowsets_folded_but_not_yet_flushed(tmp_path: Path) -> None:
    # The sequencer checks a compaction against its projection in the middle of a batch: a version-keeping
    # output folded earlier in that batch is only a pending write, and the walk must still find it — both
    # where it covers an instant inside its range and as the highest end a walk from the top compares with.
    projection = _fold(tmp_path / "p", [])
    try:
        projection.apply(_event(_compacted(("r1", "r2", "r3"), _keeping("k13", 1, 3)), 3000), TOPIC, 0, 50)
        assert projection.store.get(keys.rowset_locator_key("k13")) is not None  # pending, not flushed
        assert _cover(projection, 5) == [("k13", None), ("r4", None), ("r5", None)]
        assert _cover(projection, 2) == [("k13", 2)]
        projection.apply(_event(_compacted(("k13", "r4"), _keeping("k14", 1, 4)), 3100), TOPIC, 0, 51)
        # k13 (stale now) and k14 both end at or above version 3; the widest holding it wins.
        assert _cover(projection, 3) == [("k14", 3)]
        assert _cover(projection, 5) == [("k14", None), ("r5", None)]
        projection.flush()
        assert _cover(projection, 3) == [("k14", 3)]
    finally:
        projection.close()


def test_a_record_read_again_gives_the_same_rowset_and_a_changed_record_its_new_one(tmp_path: Path) -> None:
    # Walks decode rowset records by their bytes once (`snapshot._rowset_of`): a record rewritten with other
    # bytes (cooled to another tier) must be read anew, never answered from what its old bytes decoded to.
    projection = _fold(tmp_path / "p", [])
    try:
        first = cover_tablet(projection, 1, projection.tables[1].partitions[1], 0, 5)
        again = cover_tablet(projection, 1, projection.tables[1].partitions[1], 0, 5)
        assert [r.rowset_id for r in again] == [r.rowset_id for r in first] == ["r1", "r2", "r3", "r4", "r5"]
        r3 = next(r for r in first if r.rowset_id == "r3")
        moved = ev.RowsetsMoved(table_id=1, moves=(RowsetMove(rowset_id="r3", from_tier="ssd", to_tier="hdd",
                                                              path=r3.path),))
        projection.apply(_event(moved, 3000), TOPIC, 0, 50)
        after = cover_tablet(projection, 1, projection.tables[1].partitions[1], 0, 5)
        assert [(r.rowset_id, r.tier) for r in after][1:4] == [("r2", "ssd"), ("r3", "hdd"), ("r4", "ssd")]
    finally:
        projection.close()
