"""A load's rows written a part at a time (projections.rows.RowsetsWriter): the parts reach their
files in order while the load goes on, one file per partition × bucket, and a part that cannot be
written fails the load at its next step, leaving no file behind; `kept_rows` filters only a batch
that drops some rows."""

from __future__ import annotations

from pathlib import Path

import duckdb
import pyarrow.parquet as pq
import pytest

from projections.rows import RowsetsWriter, prepare_rows
from projections.state import TableState
from storage.tiers import LocalTiers
from tests.projections.test_load_source import _table


def _rows(table: TableState, first: int, count: int):  # noqa: ANN202
    source = f"SELECT i AS a0, 'n' || i AS a1, i / 2 AS a2 FROM range({first}, {first + count}) t(i)"
    return prepare_rows(duckdb.connect(), table, source, table.schema_now.columns)


def _tiers(tmp_path: Path) -> LocalTiers:
    return LocalTiers({"ssd": tmp_path / "ssd", "hdd": tmp_path / "hdd"})


def test_parts_reach_one_file_per_bucket_in_order(tmp_path: Path) -> None:
    table = _table(tmp_path)
    writer = RowsetsWriter(_tiers(tmp_path), table)
    for part in range(5):
        writer.append(_rows(table, part * 1000, 1000))
    written = writer.finish()
    assert sorted(r.bucket for r in written) == [0, 1]
    ids: list[int] = []
    for rowset in written:
        data = pq.read_table(tmp_path / rowset.tier / rowset.path)
        assert data.num_rows == rowset.num_rows
        bucket_ids = data.column("c1").to_pylist()
        assert bucket_ids == sorted(bucket_ids)  # the parts in the order they came
        ids += bucket_ids
    assert sorted(ids) == list(range(5000))
    assert not list(tmp_path.rglob(".*.tmp"))


def test_a_part_that_cannot_be_written_fails_the_load_and_leaves_nothing(tmp_path: Path) -> None:
    table = _table(tmp_path)
    writer = RowsetsWriter(_tiers(tmp_path), table)
    writer.append(_rows(table, 0, 100))
    # Same columns, a type the open files cannot take.
    good = _rows(table, 100, 100)
    bad = good.set_column(good.column_names.index("c1"), "c1", good.column("c2"))  # names into the INT key
    writer.append(bad)
    with pytest.raises(Exception):  # noqa: B017, PT011 - Arrow's own error for the cast it cannot do
        writer.finish()
    writer.abandon()
    assert not [p for p in tmp_path.rglob("*") if p.is_file() and p.suffix in (".parquet", ".tmp")]


def test_kept_rows_returns_a_batch_that_keeps_every_row_as_it_is() -> None:
    import pyarrow as pa

    from projections.rows import kept_rows

    data = pa.table({"a": [1, 2, 3]})
    assert kept_rows(data, pa.array([True, True, True])) is data
    assert kept_rows(data, pa.array([True, False, True])).column("a").to_pylist() == [1, 3]
    assert kept_rows(data, pa.array([False, False, False])).num_rows == 0


@pytest.mark.parametrize("count", [1, 10, 300])
def test_a_part_reaches_the_file_of_each_bucket_whatever_its_size(tmp_path: Path, count: int) -> None:
    """Few rows have their partition × bucket pairs read as Python values, more by Arrow's group_by:
    each row lands in its bucket's file either way."""
    from projections.rows import _tablets

    table = _table(tmp_path)
    data = _rows(table, 0, count)
    expected = sorted({(p, b) for p, b in zip(data["__partition"].to_pylist(), data["__bucket"].to_pylist(),
                                              strict=True)})
    assert sorted(_tablets(data)) == expected
    written = RowsetsWriter(_tiers(tmp_path), table)
    written.append(data, overlap=False)
    rowsets = written.finish()
    assert sorted((r.partition_id, r.bucket) for r in rowsets) == expected
    assert sum(r.num_rows for r in rowsets) == count
