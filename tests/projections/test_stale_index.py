"""The stale-rowset index (`sx/`): after every event that makes a rowset stale, live again, or forgets
it — compaction, restore, recycle, purge — `stale_records` names exactly the stale rowset records a
scan of every record would find, oldest first, and no index entry outlives its record."""

from __future__ import annotations

from pathlib import Path

from projections import keys
from projections.projection import Projection
from schemas import events as ev
from schemas.envelope import EventEnvelope, wrap_event
from tests.projections.test_fold import TOPIC, _events, _rowset

EVER = 10**15


def _stale_by_scan(projection: Projection, table_id: int) -> list[tuple[str, int]]:
    found = [(r.rowset.rowset_id, r.stale_ts_ms) for r in projection.rowset_records(table_id)
             if r.stale_ts_ms is not None]
    return sorted(found, key=lambda f: (f[1], f[0]))


def _check(projection: Projection, table_id: int = 1) -> list[tuple[str, int]]:
    indexed = [(r.rowset.rowset_id, r.stale_ts_ms) for r in projection.stale_records(table_id, EVER)]
    assert indexed == _stale_by_scan(projection, table_id)
    for _, rowset_key in projection.store.scan(keys.stale_prefix(table_id)):
        assert projection.store.get(rowset_key) is not None, "an index entry outlived its record"
    return [(rowset_id, ts) for rowset_id, ts in indexed if ts is not None]


def _apply(projection: Projection, envelope: EventEnvelope, offset: int) -> None:
    projection.apply(envelope, TOPIC, 0, offset)
    projection.flush()


def _event(payload: ev.Event, ts: int) -> EventEnvelope:
    return wrap_event(payload, table_id=1, commit_ts_ms=ts, command_id=None)


def test_the_stale_index_follows_compaction_restore_recycle_and_purge(tmp_path: Path) -> None:
    projection = Projection(tmp_path / "p")
    events = _events()  # r1 … r5, versions 1 … 5 of one tablet
    for offset, envelope in enumerate(events):
        _apply(projection, envelope, offset)
    offset = len(events)
    assert _check(projection) == []

    compacted = ev.CompactionCommitted(table_id=1, partition_id=1, bucket=0, kind="base",
                                       input_rowset_ids=("r1", "r2", "r3"), output=_rowset("r123", 1, 3))
    _apply(projection, _event(compacted, 3000), offset)
    assert _check(projection) == [("r1", 3000), ("r2", 3000), ("r3", 3000)]
    assert [r.rowset.rowset_id for r in projection.stale_records(1, 2999)] == []
    assert [r.rowset.rowset_id for r in projection.stale_records(1, 3000)] == ["r1", "r2", "r3"]

    # Back to version 2: r1 and r2 are its state again (live), everything newer goes stale now.
    restored = ev.TableRestored(table_id=1, commit_number=7, target_ts_ms=2025, restored_versions={1: 2},
                                partition_versions={1: 6})
    _apply(projection, _event(restored, 3100), offset + 1)
    assert _check(projection) == [("r3", 3000), ("r123", 3100), ("r4", 3100), ("r5", 3100)]

    _apply(projection, _event(ev.RowsetsRecycled(table_id=1, rowset_ids=("r3", "r4")), 3200), offset + 2)
    assert _check(projection) == [("r123", 3100), ("r5", 3100)]

    _apply(projection, _event(ev.TableDropped(table_id=1, force=True), 3300), offset + 3)
    assert list(projection.store.scan(keys.stale_prefix(1))) == []


def test_a_refold_writes_the_same_index(tmp_path: Path) -> None:
    compacted = ev.CompactionCommitted(table_id=1, partition_id=1, bucket=0, kind="base",
                                       input_rowset_ids=("r1", "r2"), output=_rowset("r12", 1, 2))
    events = [*_events(), _event(compacted, 3000)]
    digests = []
    for name in ("a", "b"):
        projection = Projection(tmp_path / name)
        for offset, envelope in enumerate(events):
            projection.apply(envelope, TOPIC, 0, offset)
        projection.flush()
        digests.append(projection.store.checksum())
        assert _check(projection) == [("r1", 3000), ("r2", 3000)]
        projection.close()
    assert digests[0] == digests[1]
