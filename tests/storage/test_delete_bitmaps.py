"""storage.delete_bitmaps: a merge-on-write read (rows minus the positions each commit's bitmap marks)
returns exactly what the merge-on-read window returns, for random histories of upserts, delete signs,
duplicate keys inside one load and sequence columns; and bitmap paths are built from ids only."""

from __future__ import annotations

import random
from pathlib import Path

import duckdb
import pyarrow as pa
import pyarrow.parquet as pq
import pytest

from schemas.model import Column
from storage.delete_bitmaps import (
    bitmap_path,
    bitmap_path_problem,
    superseded_rows_sql,
    superseded_sql,
    write_bitmap,
)
from storage.paths import UnsafePath
from storage.rowset_sql import DeleteRule, MergeSpec, RowsetFile, compacted_rows_sql, table_rows_sql

K = Column(unique_id=1, name="k", type="INT", is_key=True)
V = Column(unique_id=2, name="v", type="INT")
S = Column(unique_id=3, name="s", type="INT")


def _spec(sequenced: bool, *, show_hidden: bool = False) -> MergeSpec:
    return MergeSpec(keys_model="UNIQUE", columns=(K, V, S), delete_sign=True, sequence=S if sequenced else None,
                     show_hidden=show_hidden)


def _rowset(tmp_path: Path, version: int, rows: list[tuple[int, int, int | None, bool]]) -> RowsetFile:
    path = tmp_path / f"r{version}.parquet"
    pq.write_table(pa.table({"c1": pa.array([r[0] for r in rows], pa.int32()),
                             "c2": pa.array([r[1] for r in rows], pa.int32()),
                             "c3": pa.array([r[2] for r in rows], pa.int32()), "__seq": list(range(len(rows))),
                             "__delete_sign": [r[3] for r in rows]}), path)
    return RowsetFile(str(path), 1, version, version, frozenset({1, 2, 3}))


def _mark(cur: duckdb.DuckDBPyConnection, tmp_path: Path, spec: MergeSpec, cover: list[RowsetFile],
          new: RowsetFile, ids: dict[str, str], version: int, deletes: list[DeleteRule]) -> str:
    """The bitmap of the commit of `new` against `cover`, written as the agent writes it."""
    files = [*cover, new]
    found = cur.execute(superseded_rows_sql(spec, files, deletes)).fetchall()
    pairs = pa.table({"rowset_id": [ids[files[f].location] for f, _ in found], "row": [r for _, r in found]})
    rel = bitmap_path(9, 1, 0, version)
    write_bitmap(tmp_path, rel, pairs)
    return str(tmp_path / rel)


def _read(cur: duckdb.DuckDBPyConnection, spec: MergeSpec, files: list[RowsetFile], ids: dict[str, str],
          bitmaps: list[str] | None, deletes: list[DeleteRule]) -> list[tuple[object, ...]]:
    superseded = None if bitmaps is None else superseded_sql(bitmaps, {ids[f.location]: i
                                                                       for i, f in enumerate(files)})
    return sorted(cur.execute(table_rows_sql(spec, files, deletes, superseded=superseded)).fetchall(),
                  key=repr)


@pytest.mark.parametrize("sequenced", [False, True])
@pytest.mark.parametrize("seed", range(6))
def test_merge_on_write_reads_what_merge_on_read_reads(tmp_path: Path, seed: int, sequenced: bool) -> None:
    rng = random.Random(seed)
    cur = duckdb.connect()
    spec = _spec(sequenced)
    shown = _spec(sequenced, show_hidden=True)
    cover: list[RowsetFile] = []
    ids: dict[str, str] = {}
    bitmaps: list[tuple[int, str]] = []
    deletes: list[DeleteRule] = []
    for version in range(1, 13):
        if version == 7:  # a TRUNCATE: every row below it is gone
            deletes.append(DeleteRule(1, version, None))
            continue
        rows = [(rng.randrange(12), rng.randrange(100), rng.choice([None, *range(5)]), rng.random() < 0.2)
                for _ in range(rng.randrange(1, 9))]
        new = _rowset(tmp_path, version, rows)
        ids[new.location] = f"rs{version}"
        bitmaps.append((version, _mark(cur, tmp_path, spec, cover, new, ids, version, deletes)))
        cover.append(new)
        if version == 9:
            # A base compaction of everything so far (merge-on-read merge): bitmaps below its end are
            # baked into it, those above it still name rows of it or of later rowsets.
            merged = tmp_path / "base.parquet"
            cur.execute(f"COPY ({compacted_rows_sql(spec, cover, deletes, base=True)}) TO '{merged}' "
                        "(FORMAT parquet)")
            cover = [RowsetFile(str(merged), 1, 1, version, frozenset({1, 2, 3}))]
            ids[cover[0].location] = "base"
        if version == 11 and not sequenced:
            # A cumulative compaction above the base: on a table without a sequence column each key's
            # winner inside the run outranks every row below it, so the run's bitmaps are baked too.
            merged = tmp_path / "cumulative.parquet"
            cur.execute(f"COPY ({compacted_rows_sql(spec, cover[1:], deletes, base=False)}) TO '{merged}' "
                        "(FORMAT parquet)")
            cover = [cover[0], RowsetFile(str(merged), 1, 10, version, frozenset({1, 2, 3}))]
            ids[cover[1].location] = "cumulative"
        applied = [path for _, path in bitmaps]
        for read_spec in (spec, shown):
            assert _read(cur, read_spec, cover, ids, applied, deletes) == \
                _read(cur, read_spec, cover, ids, None, deletes), (version, read_spec.show_hidden)


def test_a_late_lower_sequence_value_is_itself_superseded(tmp_path: Path) -> None:
    cur = duckdb.connect()
    spec = _spec(True)
    first = _rowset(tmp_path, 1, [(1, 10, 5, False)])
    late = _rowset(tmp_path, 2, [(1, 20, 3, False), (2, 30, None, False), (2, 31, None, False)])
    ids = {first.location: "a", late.location: "b"}
    found = cur.execute(superseded_rows_sql(spec, [first, late], [])).fetchall()
    assert sorted(found) == [(1, 0), (1, 1)]  # the late row of key 1, and the earlier row of key 2
    bitmap = _mark(cur, tmp_path, spec, [first], late, ids, 2, [])
    assert _read(cur, spec, [first, late], ids, [bitmap], []) == [(1, 10, 5), (2, 31, None)]


def test_bitmap_paths_are_built_from_ids() -> None:
    path = bitmap_path(3, 4, 5, 6)
    assert bitmap_path_problem(path, 3, 4, 5, 6) is None
    assert bitmap_path_problem(path, 3, 4, 5, 7) is not None
    for forged in ("../t3/p4/b5/v6_" + "0" * 32 + ".bitmap", "/etc/passwd", "t3/p4/b5/x.parquet"):
        assert bitmap_path_problem(forged, 3, 4, 5, 6) is not None
    with pytest.raises(UnsafePath):
        from storage.delete_bitmaps import checked_bitmap_path
        checked_bitmap_path("t3/p4/b5/../../x", 3, 4, 5, 6)
