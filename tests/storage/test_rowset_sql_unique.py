"""storage.rowset_sql's Unique Key merge with a sequence column: per key the highest sequence value wins
(NULL lowest, a tie to the newer version), in readers and in compaction alike; show_hidden keeps the rows
a delete sign hides; a base compaction keeps delete signs of a sequenced table; rows carry their file and
row number (`positions`) whatever the scans' grouping."""

from __future__ import annotations

from datetime import datetime
from pathlib import Path

import duckdb
import pyarrow as pa
import pyarrow.parquet as pq
import pytest

from schemas.model import Column
from storage.rowset_sql import (
    DeleteRule,
    MergeSpec,
    RowsetFile,
    compacted_rows_sql,
    table_rows_sql,
    visible_rows_sql,
)

K = Column(unique_id=1, name="k", type="INT", is_key=True)
V = Column(unique_id=2, name="v", type="VARCHAR(8)")
S = Column(unique_id=3, name="s", type="INT")
SPEC = MergeSpec(keys_model="UNIQUE", columns=(K, V, S), delete_sign=True, sequence=S)


def _rowset(tmp_path: Path, version: int, rows: list[tuple[int, str, int | None, bool]]) -> RowsetFile:
    path = tmp_path / f"v{version}.parquet"
    pq.write_table(pa.table({"c1": pa.array([r[0] for r in rows], pa.int32()), "c2": [r[1] for r in rows],
                             "c3": pa.array([r[2] for r in rows], pa.int32()), "__seq": list(range(len(rows))),
                             "__delete_sign": [r[3] for r in rows]}), path)
    return RowsetFile(str(path), 1, version, version, frozenset({1, 2, 3}))


def _history(tmp_path: Path) -> list[RowsetFile]:
    return [_rowset(tmp_path, 1, [(1, "a", 5, False), (2, "b", 5, False), (3, "c", None, False),
                                  (4, "d", 1, False)]),
            _rowset(tmp_path, 2, [(1, "older", 3, False), (2, "tie", 5, False), (3, "null", None, False),
                                  (4, "gone", 2, True)]),
            _rowset(tmp_path, 3, [(4, "low", 1, False), (5, "x", 9, False), (5, "y", 2, False)])]


def test_highest_sequence_value_wins(tmp_path: Path) -> None:
    found = duckdb.connect().execute(f"SELECT * FROM ({table_rows_sql(SPEC, _history(tmp_path), [])}) "
                                     "ORDER BY k").fetchall()
    # 4: deleted at 2, and a later load of a lower value does not bring it back.
    assert found == [(1, "a", 5), (2, "tie", 5), (3, "null", None), (5, "x", 9)]


def test_show_hidden_keeps_the_deleted_key(tmp_path: Path) -> None:
    shown = MergeSpec(keys_model="UNIQUE", columns=(K, V, S), delete_sign=True, sequence=S, show_hidden=True)
    found = duckdb.connect().execute(f"SELECT * FROM ({table_rows_sql(shown, _history(tmp_path), [])}) "
                                     "WHERE k = 4").fetchall()
    assert found == [(4, "gone", 2, 1, 2)]


def test_compaction_merges_the_same_way(tmp_path: Path) -> None:
    files = _history(tmp_path)
    cur = duckdb.connect()
    merged = tmp_path / "merged.parquet"
    cur.execute(f"COPY ({compacted_rows_sql(SPEC, files, [], base=True)}) TO '{merged}' (FORMAT parquet)")
    assert cur.execute(f"SELECT c1 FROM '{merged}' WHERE __delete_sign").fetchall() == [(4,)]
    compacted = RowsetFile(str(merged), 1, 1, 3, frozenset({1, 2, 3}))
    later = _rowset(tmp_path, 4, [(4, "again", 1, False), (1, "up", 6, False)])
    found = cur.execute(f"SELECT * FROM ({table_rows_sql(SPEC, [compacted, later], [])}) ORDER BY k").fetchall()
    assert found == [(1, "up", 6), (2, "tie", 5), (3, "null", None), (5, "x", 9)]


def test_many_versions_of_a_tablet_merge_as_few_do(tmp_path: Path) -> None:
    """Past _CONSTANT_VERSION_SCANS versions one scan maps files to versions by name; the merge and the
    delete predicates see each row's version all the same."""
    plain = MergeSpec(keys_model="UNIQUE", columns=(K, V, S), delete_sign=True)
    # Version n writes keys 0 … n-1 with value 'v<n>': key k's newest row is version 12's; key 11 is deleted
    # by a sign in version 12, key 0's rows below version 6 by a delete predicate (its row is version 12's).
    files = [_rowset(tmp_path, n, [(k, f"v{n}", None, n == 12 and k == 11) for k in range(n)]) for n in range(1, 13)]
    deletes = [DeleteRule(1, 6, "c1 = 0")]
    sql = table_rows_sql(plain, files, deletes)
    assert "filename = true" in sql  # the mapped scan is the one under test
    found = duckdb.connect().execute(f"SELECT k, v FROM ({sql}) ORDER BY k").fetchall()
    assert found == [(k, "v12") for k in range(11)]
    few = table_rows_sql(plain, files[-3:], [])
    assert "filename" not in few
    assert duckdb.connect().execute(f"SELECT count(*) FROM ({few})").fetchall() == [(11,)]


@pytest.mark.parametrize("versions", [1, 3, 12])
def test_positions_name_each_rows_file_and_row(tmp_path: Path, versions: int) -> None:
    """Merge-on-write reads subtract delete bitmaps by (`__file`, `__row`): every grouping of the scans —
    several files of one version (buckets), a scan per version, one scan mapped by name past
    _CONSTANT_VERSION_SCANS, compacted files — gives each row its file's index and its row number there."""
    files: list[RowsetFile] = []
    expected = []
    buckets = [tmp_path / "b0", tmp_path / "b1"]
    for folder in buckets:
        folder.mkdir()
    for n in range(1, versions + 1):
        for bucket, folder in enumerate(buckets):
            rows: list[tuple[int, str, int | None, bool]] = [(k, f"v{n}b{bucket}r{k}", None, False) for k in range(3)]
            files.append(_rowset(folder, n, rows))
            expected += [(len(files) - 1, i, value) for i, (_, value, _, _) in enumerate(rows)]
    for bucket in range(2):
        path = tmp_path / f"compacted{bucket}.parquet"
        values = [f"c{bucket}r{i}" for i in range(4)]
        pq.write_table(pa.table({"c1": pa.array(range(4), pa.int32()), "c2": values,
                                 "c3": pa.array([None] * 4, pa.int32()), "__seq": range(4), "__version": [1] * 4,
                                 "__delete_sign": [False] * 4}), path)
        files.insert(0, RowsetFile(str(path), 1, 0, 1, frozenset({1, 2, 3})))
        expected = [(f + 1, r, v) for f, r, v in expected] + [(0, i, v) for i, v in enumerate(values)]
    sql = visible_rows_sql(SPEC, files, [], positions=True)
    assert sql is not None
    found = duckdb.connect().execute(f"SELECT __file, __row, c2 FROM ({sql}) ORDER BY ALL").fetchall()
    assert found == sorted(expected)


def test_an_unmerged_read_selects_the_columns_in_its_scans(tmp_path: Path) -> None:
    """Merging skipped (skip_storage_engine_merge) and no delete: each scan names the user's columns
    itself — every row version but those a delete sign hides, in the read types, a column the older
    files predate at its DEFAULT — the rows selected from the visible rows would be."""
    files = _history(tmp_path)
    added = Column(unique_id=4, name="d", type="DATETIME(3)", default="2020-01-02 03:04:05.678")
    newer = tmp_path / "v4.parquet"
    pq.write_table(pa.table({"c1": pa.array([6], pa.int32()), "c2": ["n"], "c3": pa.array([1], pa.int32()),
                             "c4": pa.array([None], pa.timestamp("us")), "__seq": [0], "__delete_sign": [False]}),
                   newer)
    files.append(RowsetFile(str(newer), 1, 4, 4, frozenset({1, 2, 3, 4})))
    unmerged = MergeSpec(keys_model="UNIQUE", columns=(K, V, added), delete_sign=True, sequence=S, merge=False)
    sql = table_rows_sql(unmerged, files, [])
    assert "SELECT * FROM" not in sql and sql.count("read_parquet") == 2  # the two column sets
    cur = duckdb.connect()
    found = cur.execute(f"SELECT * FROM ({sql}) ORDER BY k, v").fetchall()
    default = datetime(2020, 1, 2, 3, 4, 5, 678000)
    # key 4's row "gone" carries a delete sign; everything else, every version, is there
    assert found == [(1, "a", default), (1, "older", default), (2, "b", default), (2, "tie", default),
                     (3, "c", default), (3, "null", default), (4, "d", default), (4, "low", default),
                     (5, "x", default), (5, "y", default), (6, "n", None)]
    assert cur.execute(f"DESCRIBE SELECT * FROM ({sql})").fetchall()[2][1] == "TIMESTAMP_MS"
    # with a delete predicate the rows go through the visible-rows stage, with the same columns
    deleted = table_rows_sql(unmerged, files, [DeleteRule(1, 3, "c1 = 1")])
    assert "SELECT * FROM" in deleted
    assert cur.execute(f"SELECT * FROM ({deleted}) ORDER BY k, v").fetchall() == found[2:]
