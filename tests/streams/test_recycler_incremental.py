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
from tests.projections.test_copy_on_write import Folder, _table_created
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


def test_a_pass_looks_only_at_tables_with_something_stale_or_dropped(tmp_path: Path) -> None:
    """The first pass looks at every table; later ones at the tables whose stale-rowset index was
    written since (a compaction), those a pass left with stale rowsets (not due, refused), and the
    dropped ones (for their purge): a table with nothing stale costs a pass nothing."""
    projection = Projection(tmp_path / "p")
    folder = Folder(projection, -1)
    for envelope in _events():  # database 1, table 1 with r1 … r5
        folder.apply(envelope.payload, table_id=envelope.table_id)
    for table_id in (2, 3, 4):
        folder.apply(_table_created(table_id), table_id=table_id)
    projection.flush()
    recycler = Recycler(projection=projection, proposer=None, tiers=LocalTiers({"ssd": tmp_path / "ssd"}),  # type: ignore[arg-type]
                        stores=None, grace_s=0, day_s=1)  # type: ignore[arg-type]
    recycler._last_orphan_sweep = time.time() + 3600  # no orphan sweep: this test is about tables
    looked: list[int] = []
    purged: list[int] = []
    recycler.recycle_table = lambda table: looked.append(table.table_id) or 0  # type: ignore[method-assign]
    recycler.purge_if_expired = lambda table: purged.append(table.table_id)  # type: ignore[method-assign]

    def sweep() -> tuple[list[int], list[int]]:
        looked.clear()
        purged.clear()
        recycler.sweep()
        return sorted(looked), sorted(purged)

    assert sweep() == ([1, 2, 3, 4], [])  # the first pass: every table
    assert sweep() == ([], [])  # nothing stale anywhere
    inputs = tuple(r.rowset.rowset_id for r in projection.rowset_records(1) if r.rowset.end_version <= 2)
    folder.apply(ev.CompactionCommitted(table_id=1, partition_id=1, bucket=0, kind="cumulative",
                                        input_rowset_ids=inputs, output=_rowset("c12", 1, 2)))
    assert sweep() == ([1], [])  # its stale index was written
    assert sweep() == ([1], []), "a table left with stale rowsets (the stub recycled none) is looked at again"
    folder.apply(ev.TableDropped(table_id=3), table_id=3)
    assert sweep() == ([1], [3]) and recycler.tables_looked_at == 1
    folder.apply(ev.RowsetsRecycled(table_id=1, rowset_ids=inputs), table_id=1)
    assert sweep() == ([1], [3])  # found clean this time
    assert sweep() == ([], [3])
    folder.apply(ev.TableRecovered(table_id=3), table_id=3)
    assert sweep() == ([], [])  # recovered with nothing stale
    assert recycler.tables_looked_at == 0
    projection.close()
