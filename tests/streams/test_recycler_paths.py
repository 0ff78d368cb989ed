"""The recycler (which may run as root) and the readers act only on id-built paths inside the tier
roots (issue #15): a rowset whose path the log names otherwise — absolute, with `..`, another
rowset's, or through a symlink leading out — is refused with a log line and its target left alone.
A forged event reaches the fold without passing the sequencer's rules, so this is the last gate."""

from __future__ import annotations

import logging
from pathlib import Path

import pytest

from projections.projection import Projection
from schemas.model import Rowset
from storage.file_cache import FileCache
from storage.locator import RowsetLocator
from storage.paths import UnsafePath, rowset_path
from storage.tiers import LocalTiers
from streams.recycler import Recycler

TABLE, PARTITION, BUCKET = 7, 3, 0


def _rowset(rowset_id: str, path: str) -> Rowset:
    return Rowset(rowset_id=rowset_id, partition_id=PARTITION, bucket=BUCKET, num_rows=1, size_bytes=1, path=path,
                  tier="ssd", schema_version=1, checksum="c", start_version=1, end_version=1, visible_ts_ms=1)


@pytest.fixture
def tiers(tmp_path: Path) -> LocalTiers:
    return LocalTiers({"ssd": tmp_path / "ssd", "hdd": tmp_path / "hdd"})


@pytest.fixture
def recycler(tmp_path: Path, tiers: LocalTiers) -> Recycler:
    projection = Projection(tmp_path / "projection")
    # Only the deletion gate runs here: no command is proposed, no resource is reached.
    return Recycler(projection=projection, proposer=None, tiers=tiers, stores=None,  # type: ignore[arg-type]
                    grace_s=0, day_s=1)


def _victims(tmp_path: Path) -> list[Path]:
    victims = [tmp_path / "victim.txt", tmp_path / "hdd-secret.parquet"]
    for victim in victims:
        victim.write_text("precious")
    return victims


@pytest.mark.parametrize("forged", ["{victim}", "../victim.txt", "t7/p3/b0/../../../../victim.txt",
                                    "t7/p3/b0/aaaa.parquet", "t8/p3/b0/r1.parquet"])
def test_the_recycler_refuses_any_path_not_built_from_ids(tmp_path: Path, tiers: LocalTiers, recycler: Recycler,
                                                          forged: str, caplog: pytest.LogCaptureFixture) -> None:
    victim = _victims(tmp_path)[0]
    other = tiers.root("ssd") / "t7/p3/b0/aaaa.parquet"  # another rowset's file, inside the root
    other.parent.mkdir(parents=True)
    other.write_text("another rowset")
    with caplog.at_level(logging.ERROR, logger="streams.recycler"):
        recycler._remove_rowset(TABLE, _rowset("r1", forged.format(victim=victim)))
    assert victim.read_text() == "precious" and other.read_text() == "another rowset"
    assert recycler.removed_files == 0 and recycler.refused_paths == 1
    assert "refused to delete" in caplog.text


def test_the_recycler_deletes_the_id_built_path(tiers: LocalTiers, recycler: Recycler) -> None:
    path = rowset_path(TABLE, PARTITION, BUCKET, "r1")
    target = tiers.locate("ssd", path)
    target.parent.mkdir(parents=True)
    target.write_text("stale rowset")
    recycler._remove_rowset(TABLE, _rowset("r1", path))
    assert not target.exists() and recycler.removed_files == 1 and recycler.refused_paths == 0


def test_a_symlink_out_of_the_root_is_not_followed(tmp_path: Path, tiers: LocalTiers, recycler: Recycler) -> None:
    victim = _victims(tmp_path)[0]
    table_dir = tiers.root("ssd") / "t7"
    table_dir.parent.mkdir(parents=True)
    (tmp_path / "elsewhere" / "p3" / "b0").mkdir(parents=True)
    table_dir.symlink_to(tmp_path / "elsewhere")  # t7 → outside the root
    outside = tmp_path / "elsewhere" / "p3" / "b0" / "r1.parquet"
    outside.write_text("not a rowset of ours")
    with pytest.raises(UnsafePath, match="resolves outside its tier root"):
        tiers.locate("ssd", rowset_path(TABLE, PARTITION, BUCKET, "r1"))
    recycler._remove_rowset(TABLE, _rowset("r1", rowset_path(TABLE, PARTITION, BUCKET, "r1")))
    assert outside.exists() and victim.exists() and recycler.refused_paths == 1


@pytest.mark.parametrize("forged", ["/etc/passwd", "../victim.txt", "t7/p3/b0/../../../../victim.txt",
                                    "t7/p3/b0/other.parquet", "t7/p4/b0/r1.parquet"])
def test_a_query_never_reads_a_forged_path(tmp_path: Path, tiers: LocalTiers, forged: str) -> None:
    _victims(tmp_path)
    locator = RowsetLocator(tiers, lambda _name: None, FileCache(tmp_path / "cache", 1 << 20))  # type: ignore[arg-type,return-value]
    with pytest.raises(UnsafePath):
        locator.locate_many([_rowset("r1", forged)])
    good = rowset_path(TABLE, PARTITION, BUCKET, "r1")
    assert locator.locate_many([_rowset("r1", good)]) == {"r1": str(tiers.root("ssd") / good)}


@pytest.mark.parametrize("path", ["/etc/passwd", "t7/../../etc/passwd", "../outside.parquet"])
def test_readers_and_deleters_refuse_a_path_out_of_the_root(tiers: LocalTiers, path: str) -> None:
    # Readers take the lexical check only (DuckDB opens nothing outside the roots); deleters resolve too.
    with pytest.raises(UnsafePath):
        tiers.read_path("ssd", path)
    with pytest.raises(UnsafePath):
        tiers.locate("ssd", path)
    assert tiers.read_path("ssd", "t7/p3/b0/abc.parquet") == tiers.root("ssd") / "t7/p3/b0/abc.parquet"
