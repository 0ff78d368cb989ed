"""projections.merge_on_write and the sequencer's rule for delete bitmaps, on a projection folded in
memory: a tablet is read merge-on-write only when every commit above its base compaction has its
bitmap and each bitmap provably applies to the cover (else merge-on-read, the same rows); the
sequencer takes only sound bitmaps of merge-on-write tables, once per version."""

from __future__ import annotations

from pathlib import Path

import pytest

from projections.projection import Projection
from projections.snapshot import resolve
from projections.superseded import stale_bitmaps
from schemas import commands as cmd
from schemas.errors import ErrorCode
from schemas.model import BitmapTarget, Column, Distribution, TabletBitmap
from storage.delete_bitmaps import bitmap_path
from tests.streams.ruleskit import fold, rejected, rowset

K = Column(unique_id=1, name="k", type="INT", is_key=True)
V = Column(unique_id=2, name="v", type="INT")


@pytest.fixture()
def state(tmp_path: Path) -> Projection:
    return Projection(tmp_path / "p")


def _table(state: Projection, name: str, *, properties: dict[str, str] | None = None, keys_model: str = "UNIQUE",
           sequenced: bool = False) -> int:
    if not state.databases:
        fold(state, cmd.CreateDatabase(name="d"), 1000)
    columns = (K, V, *([Column(unique_id=3, name="__DORIS_SEQUENCE_COL__", type="INT")] if sequenced else []))
    props = dict(properties or {})
    if sequenced:
        props["function_column.sequence_type"] = "int"
    event = fold(state, cmd.CreateTable(db="d", name=name, keys_model=keys_model, columns=columns,  # type: ignore[arg-type]
                                        partitions=(cmd.NewPartition(name=name, buckets=1),),
                                        distribution=Distribution(columns=("k",), buckets=1), properties=props), 1001)
    return event.table_id  # type: ignore[attr-defined,no-any-return]


class Tablet:
    """The one tablet of a table made by `_table`, driven through the rules as the writers drive it."""

    def __init__(self, state: Projection, table_id: int) -> None:
        self.state, self.table_id = state, table_id
        self.pid = min(state.tables[table_id].partitions)
        self.ts = 2000
        self.rowsets: dict[int, str] = {}  # version → rowset id

    def tick(self) -> int:
        self.ts += 1
        return self.ts

    def load(self) -> int:
        version = self.state.tables[self.table_id].partitions[self.pid].version + 1
        rid = f"r{self.table_id}x{version}"
        new = rowset(self.pid, rid).model_copy(update={"path": f"t{self.table_id}/p{self.pid}/b0/{rid}.parquet"})
        fold(self.state, cmd.CommitRowsets(table_id=self.table_id, label=rid, rowsets=(new,), num_rows=1), self.tick())
        self.rowsets[version] = rid
        return version

    def bitmap(self, version: int, *targets: tuple[str, int, int]) -> None:
        marked = tuple(BitmapTarget(rowset_id=r, start_version=s, end_version=e) for r, s, e in targets)
        path = bitmap_path(self.table_id, self.pid, 0, version) if marked else None
        fold(self.state, cmd.CommitDeleteBitmaps(
            table_id=self.table_id, partition_id=self.pid, version=version,
            tablets=(TabletBitmap(bucket=0, path=path, rows=len(marked), targets=marked),)), self.tick())

    def compact(self, first: int, last: int, kind: str) -> str:
        rid = f"c{self.table_id}x{first}x{last}"
        output = rowset(self.pid, rid).model_copy(update={"path": f"t{self.table_id}/p{self.pid}/b0/{rid}.parquet"})
        inputs = tuple(r.rowset_id for r in resolve(self.state, self.state.tables[self.table_id]).rowsets
                       if first <= r.start_version and r.end_version <= last)
        fold(self.state, cmd.CommitCompaction(table_id=self.table_id, partition_id=self.pid, bucket=0, kind=kind,  # type: ignore[arg-type]
                                              input_rowset_ids=inputs, output=output, start_version=first,
                                              end_version=last), self.tick())
        return rid

    def plan(self, ts_ms: int | None = None) -> tuple[str, ...] | None:
        """The bitmap files a read subtracts (None: the tablet is merged on read)."""
        snapshot = resolve(self.state, self.state.tables[self.table_id], ts_ms)
        return snapshot.partitions[0].bitmaps.get(0)

    def own(self, version: int) -> tuple[str, int, int]:
        return self.rowsets[version], version, version


def test_every_commit_needs_its_bitmap(state: Projection) -> None:
    tablet = Tablet(state, _table(state, "t"))
    first = tablet.load()
    second = tablet.load()
    tablet.bitmap(first)
    assert tablet.plan() is None  # version 2 has no bitmap yet: merged on read
    tablet.bitmap(second, tablet.own(first))
    plan = tablet.plan()
    assert plan is not None and len(plan) == 1
    # Time travel: the instant after the first commit needs only its bitmap (which has no rows).
    assert tablet.plan(2001) == ()


def test_a_base_compaction_bakes_the_bitmaps_below_it(state: Projection) -> None:
    tablet = Tablet(state, _table(state, "t"))
    for _ in range(3):
        version = tablet.load()
        tablet.bitmap(version, *([tablet.own(version - 1)] if version > 1 else []))
    tablet.compact(1, 3, "base")
    assert tablet.plan() == ()  # every bitmap is of a version the base output merged
    version = tablet.load()
    tablet.bitmap(version)
    assert tablet.plan() == ()


def test_a_bitmap_naming_rowsets_a_compaction_replaced_below_its_version_is_not_applied(state: Projection) -> None:
    tablet = Tablet(state, _table(state, "t"))
    for _ in range(2):
        version = tablet.load()
        tablet.bitmap(version)
    late = tablet.load()
    tablet.bitmap(late, tablet.own(1))
    # A compaction of versions 1-2 commits after: version 3's bitmap names version 1's rowset, whose
    # rows the output now holds at other positions.
    output = tablet.compact(1, 2, "base")
    assert tablet.plan() is None
    # Proposed only now, such a bitmap is refused (the worker computes it again against the output) …
    stale = cmd.CommitDeleteBitmaps(table_id=tablet.table_id, partition_id=tablet.pid, version=late, replace=True,
                                    tablets=(TabletBitmap(bucket=0, path=bitmap_path(tablet.table_id, tablet.pid, 0,
                                                                                     late), rows=1, targets=(
                                        BitmapTarget(rowset_id=tablet.rowsets[1], start_version=1, end_version=1),)),))
    rejected(state, stale, 9000, ErrorCode.CONFLICT, "not a live rowset")
    # The worker finds the committed one to compute again, with the tablet's rowset of its version.
    [(record, written)] = stale_bitmaps(state, tablet.table_id, tablet.pid, 2)
    assert (record.version, [r.rowset_id for r in written]) == (late, [tablet.rowsets[late]])
    # … and computed again against the output it replaces the committed one.
    again = stale.model_copy(update={"tablets": (stale.tablets[0].model_copy(update={"targets": (
        BitmapTarget(rowset_id=output, start_version=1, end_version=2),)}),)})
    fold(state, again, 9000)
    assert tablet.plan() is not None
    # A compaction over that version as well has merged the rows it marked.
    tablet.compact(1, late, "base")
    assert tablet.plan() == ()


def test_a_cumulative_compaction_is_exact_without_a_sequence_column_only(state: Projection) -> None:
    for sequenced in (False, True):
        tablet = Tablet(state, _table(state, f"t{int(sequenced)}", sequenced=sequenced))
        for _ in range(4):
            version = tablet.load()
            tablet.bitmap(version, *([tablet.own(1)] if version > 2 else []))
        tablet.compact(3, 4, "cumulative")
        # Bitmaps of versions inside the cumulative output still mark rows of the rowsets below it.
        plan = tablet.plan()
        assert (plan is None) if sequenced else (plan is not None and len(plan) == 2), sequenced


def test_restores_and_delete_predicates_merge_on_read(state: Projection) -> None:
    tablet = Tablet(state, _table(state, "t"))
    version = tablet.load()
    tablet.bitmap(version)
    fold(state, cmd.CommitDelete(table_id=tablet.table_id, partition_ids=(tablet.pid,), predicate="c2 > 1"),
         tablet.tick())
    assert tablet.plan() is None
    other = Tablet(state, _table(state, "u", properties={"enable_time_travel": "true"}))
    version = other.load()
    other.bitmap(version)
    fold(state, cmd.CommitDelete(table_id=other.table_id, partition_ids=(other.pid,), predicate=None,
                                 kind="truncate"), other.tick())
    assert other.plan() == ()  # a TRUNCATE removes whole versions: no winner goes without its rows
    version = other.load()
    other.bitmap(version)
    assert other.plan() == ()
    fold(state, cmd.RestoreTable(table_id=other.table_id, target_ts_ms=other.ts - 2), other.tick())
    assert other.plan() is None


def test_the_sequencer_takes_sound_bitmaps_of_merge_on_write_tables_once(state: Projection) -> None:
    tablet = Tablet(state, _table(state, "t"))
    version = tablet.load()
    tablet.bitmap(version)
    again = cmd.CommitDeleteBitmaps(table_id=tablet.table_id, partition_id=tablet.pid, version=version,
                                    tablets=(TabletBitmap(bucket=0),))
    rejected(state, again, 9000, ErrorCode.CONFLICT, "has its delete bitmaps already")
    ahead = again.model_copy(update={"version": version + 1})
    rejected(state, ahead, 9000, ErrorCode.WRONG_ARGUMENTS, "has no version")
    version = tablet.load()
    for path, fragment in (("../x.bitmap", "not one built from"),
                           (bitmap_path(tablet.table_id, tablet.pid, 0, version + 1), "not one built from")):
        forged = again.model_copy(update={"version": version, "tablets": (
            TabletBitmap(bucket=0, path=path, rows=1, targets=(BitmapTarget(rowset_id="x", start_version=1,
                                                                           end_version=1),)),)})
        rejected(state, forged, 9000, ErrorCode.WRONG_ARGUMENTS, fragment)
    twice = again.model_copy(update={"version": version, "tablets": (TabletBitmap(bucket=0), TabletBitmap(bucket=0))})
    rejected(state, twice, 9000, ErrorCode.WRONG_ARGUMENTS, "bucket twice")
    for name, kwargs in (("mor", {"properties": {"enable_unique_key_merge_on_write": "false"}}),
                         ("dup", {"keys_model": "DUPLICATE"})):
        other = Tablet(state, _table(state, name, **kwargs))  # type: ignore[arg-type]
        other.load()
        command = cmd.CommitDeleteBitmaps(table_id=other.table_id, partition_id=other.pid, version=1,
                                          tablets=(TabletBitmap(bucket=0),))
        rejected(state, command, 9000, ErrorCode.WRONG_ARGUMENTS, "does not keep delete bitmaps")
        assert other.plan() is None
