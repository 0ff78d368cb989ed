"""The recycler's orphan sweep keeps the files of a load still prepared (two-phase Stream Load):
the log names them, and a commit may yet make them visible. Once aborted, they are orphans."""

from __future__ import annotations

import os
from pathlib import Path

from projections.projection import Projection
from schemas import events as ev
from schemas.envelope import wrap_event
from schemas.model import NewRowset
from storage.paths import rowset_path
from storage.tiers import LocalTiers
from streams.recycler import Recycler

TABLE, PARTITION = 7, 3


def _fold(projection: Projection, event: ev.Event, offset: int) -> None:
    projection.apply(wrap_event(event, table_id=TABLE, commit_ts_ms=1000 + offset, command_id=None),
                     "strata.events", 0, offset)
    projection.flush()


def test_prepared_files_stay_until_the_load_aborts(tmp_path: Path) -> None:
    tiers = LocalTiers({"ssd": tmp_path / "ssd"})
    projection = Projection(tmp_path / "projection")
    recycler = Recycler(projection=projection, proposer=None, tiers=tiers, stores=None,  # type: ignore[arg-type]
                        grace_s=0, day_s=1)
    path = rowset_path(TABLE, PARTITION, 0, "r1")
    target = tiers.locate("ssd", path)
    target.parent.mkdir(parents=True)
    target.write_text("prepared rows")
    os.utime(target, (1, 1))  # long past any grace
    rowset = NewRowset(rowset_id="r1", partition_id=PARTITION, bucket=0, num_rows=1, size_bytes=1, path=path,
                       schema_version=1, checksum="c")
    _fold(projection, ev.LoadPrepared(table_id=TABLE, txn_id=1, label="l", rowsets=(rowset,), num_rows=1,
                                      deadline_ts_ms=5000), 0)
    recycler.remove_orphans()
    assert target.exists() and recycler.removed_orphans == 0
    _fold(projection, ev.LoadAborted(table_id=TABLE, txn_id=1, label="l", reason="user abort"), 1)
    recycler.remove_orphans()
    assert not target.exists() and recycler.removed_orphans == 1
