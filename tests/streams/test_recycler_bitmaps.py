"""The recycler and delete bitmap files: the orphan sweep removes a bitmap file no DeleteBitmapsCommitted
names once it is an hour old (a refused or crashed computation, a table dropped FORCE), never a named
one nor a young one (its command may be on its way), whatever the configured grace."""

from __future__ import annotations

import os
import time
from pathlib import Path

from projections.projection import Projection
from storage.delete_bitmaps import bitmap_path
from storage.tiers import LocalTiers
from streams.recycler import BITMAP_ORPHAN_GRACE_S, Recycler
from tests.projections.test_merge_on_write import Tablet, _table


def test_only_old_unnamed_bitmap_files_go(tmp_path: Path) -> None:
    projection = Projection(tmp_path / "projection")
    tiers = LocalTiers({"ssd": tmp_path / "ssd", "hdd": tmp_path / "hdd"})
    tablet = Tablet(projection, _table(projection, "t"))
    version = tablet.load()
    tablet.bitmap(version, tablet.own(version))
    record = projection.delete_bitmaps(tablet.table_id, tablet.pid, 0, version)[0]
    named = record.tablets[0].path
    assert named is not None
    files = {name: tiers.root("ssd") / path for name, path in (
        ("named", named), ("orphan", bitmap_path(tablet.table_id, tablet.pid, 0, version)),
        ("young", bitmap_path(tablet.table_id, tablet.pid, 0, version)),
        ("dropped", bitmap_path(tablet.table_id + 50, tablet.pid, 0, 1)))}
    old = time.time() - BITMAP_ORPHAN_GRACE_S - 60
    for name, path in files.items():
        path.parent.mkdir(parents=True, exist_ok=True)
        path.write_bytes(b"bitmap")
        if name != "young":
            os.utime(path, (old, old))
    recycler = Recycler(projection=projection, proposer=None, tiers=tiers, stores=None,  # type: ignore[arg-type]
                        grace_s=0, day_s=1)
    recycler.remove_orphans()
    assert {name for name, path in files.items() if path.exists()} == {"named", "young"}
