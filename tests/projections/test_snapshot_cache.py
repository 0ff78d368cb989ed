"""Snapshots reused while nothing is folded (projections.snapshot_cache): the same snapshot as
`resolve` gives, resolved once while the projection stands still, and resolved again after any event
— a commit, a compaction (data-only: the catalog is unchanged, the cover is not) or an abandoned batch."""

from __future__ import annotations

from pathlib import Path

from projections.projection import Projection
from projections.snapshot import resolve
from projections.snapshot_cache import SnapshotCache
from schemas import events as ev
from schemas.envelope import wrap_event
from tests.projections.test_fold import TOPIC, _events, _fold, _rowset


def _ids(snapshot: object) -> list[str]:
    return [r.rowset_id for r in snapshot.rowsets]  # type: ignore[attr-defined]


def _apply(projection: Projection, payload: ev.Event, offset: int, ts: int) -> None:
    projection.apply(wrap_event(payload, table_id=1, commit_ts_ms=ts, command_id=None), TOPIC, 0, offset)


def test_a_snapshot_is_reused_until_an_event_is_folded(tmp_path: Path) -> None:
    events = _events()
    projection = _fold(tmp_path / "p", events)
    try:
        cache = SnapshotCache(projection)
        table = projection.tables[1]
        first = cache.resolve(table)
        assert _ids(first) == _ids(resolve(projection, table)) == ["r1", "r2", "r3", "r4", "r5"]
        assert cache.resolve(table) is first and cache.resolved == 1
        at = cache.resolve(table, 2025)  # an instant: kept apart from the latest
        assert _ids(at) == ["r1", "r2"] and cache.resolve(table, 2025) is at and cache.resolved == 2

        # A compaction changes neither the catalog's names nor the table's version, only the cover.
        output = _rowset("r15", 1, 5)
        _apply(projection, ev.CompactionCommitted(table_id=1, partition_id=1, bucket=0, kind="cumulative",
                                                  input_rowset_ids=("r1", "r2", "r3", "r4", "r5"), output=output),
               len(events), 3000)
        assert _ids(cache.resolve(table)) == ["r15"] == _ids(resolve(projection, table))
        assert cache.resolved == 3

        # A commit: the new rowset is in the next read's snapshot.
        _apply(projection, ev.RowsetsCommitted(table_id=1, commit_number=6, label="l6", partition_versions={1: 6},
                                               rowsets=(_rowset("r6", 6, 6),), num_rows=1), len(events) + 1, 3100)
        assert _ids(cache.resolve(projection.tables[1])) == ["r15", "r6"]

        # An abandoned batch reads the store back as flushed: the commit folded since the flush is gone.
        projection.abandon()
        assert _ids(cache.resolve(projection.tables[1])) == _ids(resolve(projection, projection.tables[1]))
    finally:
        projection.close()


def test_the_cache_keeps_at_most_its_entries(tmp_path: Path) -> None:
    projection = _fold(tmp_path / "p", _events())
    try:
        cache = SnapshotCache(projection, entries=2)
        table = projection.tables[1]
        for ts in (2015, 2025, 2035):
            cache.resolve(table, ts)
        cache.resolve(table, 2035)
        assert cache.resolved == 3  # the newest two kept
        cache.resolve(table, 2015)
        assert cache.resolved == 4  # the oldest went first
    finally:
        projection.close()


def test_the_cache_keeps_at_most_its_rowsets(tmp_path: Path) -> None:
    projection = _fold(tmp_path / "p", _events())
    try:
        table = projection.tables[1]
        cache = SnapshotCache(projection, rowsets=4)
        cache.resolve(table)  # five rowsets: more than the whole budget, never kept
        cache.resolve(table)
        assert cache.resolved == 2
        cache.resolve(table, 2025)  # two rowsets
        cache.resolve(table, 2035)  # three: the older one goes to make room
        cache.resolve(table, 2035)
        assert cache.resolved == 4
        cache.resolve(table, 2025)
        assert cache.resolved == 5
    finally:
        projection.close()
