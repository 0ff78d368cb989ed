"""A recycler pass costs what became garbage, not the catalog: the stale rowsets it recycles are read
through the projection's stale-rowset index (the same ones a scan of every record finds, tags
respected), and the orphan sweeps — every file of every tier — run at the first pass and then only
every ORPHAN_SWEEP_EVERY_S."""

from __future__ import annotations

import random
import time
from pathlib import Path

from projections.projection import Projection
from projections.retention import needed_by_tags
from schemas import events as ev
from schemas.envelope import wrap_event
from storage.paths import rowset_path
from storage.tiers import LocalTiers
from streams.recycler import ORPHAN_SWEEP_EVERY_S, Recycler, due_rowsets
from tests.projections.test_fold import TOPIC, _events, _rowset


def _compacted_table(path: Path, seed: int) -> Projection:
    """Table 1's r1 … r5, then compactions at random instants that leave a random part of them stale."""
    projection = Projection(path)
    events = _events()
    for offset, envelope in enumerate(events):
        projection.apply(envelope, TOPIC, 0, offset)
    rng = random.Random(seed)
    ts, offset = 3000, len(events)
    for low, high in ((1, 2), (3, 4), (1, 4), (1, 5)):
        if rng.random() < 0.3:
            continue
        inputs = tuple(r.rowset.rowset_id for r in projection.rowset_records(1)
                       if r.stale_ts_ms is None and low <= r.rowset.start_version and r.rowset.end_version <= high)
        ts += rng.randint(1, 50)
        compacted = ev.CompactionCommitted(table_id=1, partition_id=1, bucket=0, kind="base",
                                           input_rowset_ids=inputs, output=_rowset(f"c{low}{high}", low, high))
        projection.apply(wrap_event(compacted, table_id=1, commit_ts_ms=ts, command_id=None), TOPIC, 0, offset)
        offset += 1
    projection.flush()
    return projection


def test_the_indexed_pass_finds_what_a_scan_of_every_record_finds(tmp_path: Path) -> None:
    for seed in range(8):
        projection = _compacted_table(tmp_path / f"p{seed}", seed)
        table = projection.tables[1]
        stale = [r for r in projection.rowset_records(1) if r.stale_ts_ms is not None]
        instants = sorted({r.stale_ts_ms for r in stale if r.stale_ts_ms is not None} | {0, 2999, 10**13})
        for horizon in instants:
            for tagged in ([], [2005], [2045, 3010]):
                by_scan = sorted(r.rowset.rowset_id for r in stale
                                 if r.stale_ts_ms is not None and r.stale_ts_ms <= horizon
                                 and not needed_by_tags(r.rowset, r.stale_ts_ms, tagged))
                assert sorted(r.rowset_id for r in due_rowsets(projection, table, horizon, tagged)) == by_scan
        projection.close()


def test_orphans_are_swept_at_the_first_pass_then_only_every_interval(tmp_path: Path) -> None:
    tiers = LocalTiers({"ssd": tmp_path / "ssd", "hdd": tmp_path / "hdd"})
    now = [time.time() + 1]  # every file written below is older than the (zero) grace
    # No table and no resource: a pass proposes nothing and reaches no store.
    recycler = Recycler(projection=Projection(tmp_path / "projection"), proposer=None, tiers=tiers,  # type: ignore[arg-type]
                        stores=None, grace_s=0, day_s=1, clock=lambda: now[0])  # type: ignore[arg-type]

    def orphan(rowset_id: str) -> Path:
        found = tiers.locate("ssd", rowset_path(9, 1, 0, rowset_id))
        found.parent.mkdir(parents=True, exist_ok=True)
        found.write_text("left by a crash")
        return found

    first = orphan("a1")
    recycler.sweep()
    assert not first.exists() and recycler.removed_orphans == 1
    second = orphan("a2")
    now[0] += ORPHAN_SWEEP_EVERY_S - 1
    recycler.sweep()
    assert second.exists(), "a pass between two orphan sweeps walks no tier"
    now[0] += 1
    recycler.sweep()
    assert not second.exists() and recycler.removed_orphans == 2
