"""storage.rowset_writer: files sorted by the table's key in row groups of ROW_GROUP_ROWS with statistics,
whether written in one part or several; the rows, their types and `__seq` unchanged; no temp file left."""

from __future__ import annotations

from pathlib import Path

import pyarrow as pa
import pyarrow.parquet as pq
import pytest

from storage import rowset_writer
from storage.rowset_writer import ROW_GROUP_ROWS, RowsetStream, group_rows, write_rowset


def _part(start: int, rows: int) -> pa.Table:
    """Rows whose key (c1) comes in a scrambled order; c2 a decimal, c3 a nullable string."""
    keys = [(i * 7919) % 1_000_003 for i in range(start, start + rows)]
    prices = [None if i % 5 == 0 else i for i in range(start, start + rows)]
    return pa.table({"c1": pa.array(keys, pa.int64()), "c2": pa.array(prices, pa.decimal128(12, 2)),
                     "c3": pa.array([f"v{i}" if i % 3 else None for i in range(start, start + rows)], pa.string()),
                     "__seq": pa.array(range(start, start + rows), pa.int64())})


def _row_group_ranges(path: Path) -> list[tuple[int, int]]:
    meta = pq.ParquetFile(path).metadata
    ranges = []
    for i in range(meta.num_row_groups):
        stats = meta.row_group(i).column(0).statistics
        assert stats is not None and stats.has_min_max
        ranges.append((stats.min, stats.max))
    return ranges


def _check_sorted_file(path: Path, expected: pa.Table) -> None:
    found = pq.read_table(path)
    assert found.schema.names == expected.schema.names and found.schema.types == expected.schema.types
    assert found["c1"].to_pylist() == sorted(expected["c1"].to_pylist())
    # The same rows, each with its own __seq (rows of one key merge in __seq order, never file order).
    assert sorted(found.to_pylist(), key=lambda r: r["__seq"]) == expected.to_pylist()
    ranges = _row_group_ranges(path)
    assert all(hi < next_lo for (_, hi), (next_lo, _) in zip(ranges, ranges[1:], strict=False))
    meta = pq.ParquetFile(path).metadata
    assert all(meta.row_group(i).num_rows <= ROW_GROUP_ROWS for i in range(meta.num_row_groups))
    assert [p.name for p in path.parent.iterdir()] == [path.name]  # no temp, spool or spill left


@pytest.mark.parametrize("rows", [ROW_GROUP_ROWS * 2 + 10, 1000])  # written by DuckDB; by pyarrow
def test_one_part_is_sorted_in_row_groups(tmp_path: Path, rows: int) -> None:
    data = _part(0, rows)
    written = write_rowset(tmp_path, 1, 2, 0, data, sort_key=["c1"])
    assert written.num_rows == data.num_rows
    _check_sorted_file(tmp_path / written.path, data)
    assert len(_row_group_ranges(tmp_path / written.path)) == -(-rows // ROW_GROUP_ROWS)


def _wide(start: int, rows: int) -> pa.Table:
    return pa.table({"c1": pa.array(range(start, start + rows), pa.int64()),
                     "c2": pa.array([f"{i:0200d}" for i in range(start, start + rows)], pa.string()),
                     "__seq": pa.array(range(start, start + rows), pa.int64())})


def test_row_groups_of_wide_rows_hold_fewer_rows() -> None:
    assert group_rows(_part(0, 1000)) == ROW_GROUP_ROWS  # ~40 bytes a row
    wide = _wide(0, 1000)  # ~220 bytes a row
    assert group_rows(wide) == rowset_writer._ROW_GROUP_BYTES // (wide.nbytes // wide.num_rows) < ROW_GROUP_ROWS
    huge = pa.table({"c1": pa.array(["x" * 4000] * 10)})
    assert group_rows(huge) == rowset_writer._MIN_GROUP_ROWS
    assert group_rows(_part(0, 0)) == ROW_GROUP_ROWS


@pytest.mark.parametrize("how", ["whole", "parts in order", "parts out of order"])
def test_a_file_of_wide_rows_is_written_in_groups_of_group_rows(tmp_path: Path, monkeypatch: pytest.MonkeyPatch,
                                                                 how: str) -> None:
    # Smaller bounds, so that a few MB of rows make several groups; the paths are the ones of any file.
    monkeypatch.setattr(rowset_writer, "_ROW_GROUP_BYTES", 2 << 20)
    monkeypatch.setattr(rowset_writer, "_MIN_GROUP_ROWS", 1000)
    data = _wide(0, 25_000)
    per_group = group_rows(data.slice(0, 8000))
    assert 1000 < per_group < 25_000 // 2
    if how == "whole":
        written = write_rowset(tmp_path, 1, 2, 0, data, sort_key=["c1"])
    else:
        stream = RowsetStream(tmp_path, 1, 2, 0, sort_key=["c1"])
        chunks = [data.slice(i, 8000) for i in range(0, 25_000, 8000)]
        for chunk in chunks if how == "parts in order" else reversed(chunks):
            stream.append(chunk)
        written = stream.finish()
    meta = pq.ParquetFile(tmp_path / written.path).metadata
    sizes = [meta.row_group(i).num_rows for i in range(meta.num_row_groups)]
    assert sizes == [per_group] * (25_000 // per_group) + [25_000 % per_group]
    assert pq.read_table(tmp_path / written.path)["c1"].to_pylist() == list(range(25_000))


@pytest.mark.parametrize("parts", [2, 4])
def test_parts_are_sorted_as_a_whole(tmp_path: Path, parts: int) -> None:
    stream = RowsetStream(tmp_path, 1, 2, 0, sort_key=["c1"])
    chunks = [_part(i * 50_000, 50_000) for i in range(parts)]
    for chunk in chunks:
        stream.append(chunk)
    written = stream.finish()
    assert written.num_rows == 50_000 * parts
    _check_sorted_file(tmp_path / written.path, pa.concat_tables(chunks))


def test_unsorted_without_a_key_keeps_the_order(tmp_path: Path) -> None:
    data = _part(0, 1000)
    written = write_rowset(tmp_path, 1, 2, 0, data)
    assert pq.read_table(tmp_path / written.path).equals(data)


def test_abandon_leaves_nothing(tmp_path: Path) -> None:
    stream = RowsetStream(tmp_path, 1, 2, 0, sort_key=["c1"])
    stream.append(_part(0, 100))
    stream.append(_part(100, 100))
    stream.abandon()
    assert list(stream.final.parent.iterdir()) == []


def _ordered_part(start: int, rows: int) -> pa.Table:
    """Rows of increasing keys from `start` (a load of ids or event times in order)."""
    part = _part(start, rows)
    return part.set_column(0, "c1", pa.array(range(start, start + rows), pa.int64()))


@pytest.mark.parametrize("rows", [ROW_GROUP_ROWS * 2 + 10, 1000])
def test_parts_in_key_order_are_written_as_they_come(tmp_path: Path, rows: int) -> None:
    """No sort is needed (the stream says so) and the file is as sorted as a sorted one."""
    stream = RowsetStream(tmp_path, 1, 2, 0, sort_key=["c1"])
    chunks = [_ordered_part(i * rows, rows) for i in range(3)]
    for chunk in chunks:
        stream.append(chunk)
    assert stream.in_key_order
    written = stream.finish()
    _check_sorted_file(tmp_path / written.path, pa.concat_tables(chunks))


@pytest.mark.parametrize("second", [
    pytest.param(lambda: _ordered_part(500, 1000), id="overlapping the first"),
    pytest.param(lambda: _ordered_part(5000, 1000).take(list(range(999, -1, -1))), id="descending"),
    pytest.param(lambda: _ordered_part(5000, 1000).set_column(
        0, "c1", pa.array([None] + list(range(5001, 6000)), pa.int64())), id="a NULL key"),
])
def test_parts_out_of_key_order_are_sorted(tmp_path: Path, second: object) -> None:
    stream = RowsetStream(tmp_path, 1, 2, 0, sort_key=["c1"])
    chunks = [_ordered_part(0, 1000), second()]  # type: ignore[operator]
    for chunk in chunks:
        stream.append(chunk)
    assert not stream.in_key_order
    found = pq.read_table(tmp_path / stream.finish().path)
    assert found["c1"].to_pylist() == sorted(pa.concat_tables(chunks)["c1"].to_pylist(),
                                             key=lambda k: (k is None, k))


def test_a_key_of_several_columns_in_order_with_ties(tmp_path: Path) -> None:
    """Order is lexicographic over the key's columns; equal keys may repeat across parts."""
    def part(a: list[int], b: list[str]) -> pa.Table:
        return pa.table({"a": pa.array(a, pa.int64()), "b": pa.array(b, pa.string()),
                         "__seq": pa.array(range(len(a)), pa.int64())})

    stream = RowsetStream(tmp_path, 1, 2, 0, sort_key=["a", "b"])
    stream.append(part([1, 1, 2], ["x", "y", "a"]))
    stream.append(part([2, 3], ["a", "a"]))
    assert stream.in_key_order
    stream.append(part([3], ["0"]))  # (3, "0") sorts before (3, "a")
    assert not stream.in_key_order
    found = pq.read_table(tmp_path / stream.finish().path)
    assert list(zip(found["a"].to_pylist(), found["b"].to_pylist(), strict=True)) == [
        (1, "x"), (1, "y"), (2, "a"), (2, "a"), (3, "0"), (3, "a")]


@pytest.mark.parametrize("rows", [ROW_GROUP_ROWS + 7, 1000])
def test_order_broken_after_parts_written_in_order(tmp_path: Path, rows: int) -> None:
    """The parts written while in order are sorted with the rest; no temp file is left."""
    stream = RowsetStream(tmp_path, 1, 2, 0, sort_key=["c1"])
    chunks = [_ordered_part(0, rows), _ordered_part(rows, rows), _ordered_part(rows // 2, rows)]
    for chunk in chunks:
        stream.append(chunk)
    assert not stream.in_key_order
    found = pq.read_table(tmp_path / stream.finish().path)
    assert found["c1"].to_pylist() == sorted(pa.concat_tables(chunks)["c1"].to_pylist())
    assert sorted(found["__seq"].to_pylist()) == sorted(pa.concat_tables(chunks)["__seq"].to_pylist())
    assert [p.name for p in stream.final.parent.iterdir()] == [stream.final.name]


def test_abandon_after_the_order_broke_leaves_nothing(tmp_path: Path) -> None:
    stream = RowsetStream(tmp_path, 1, 2, 0, sort_key=["c1"])
    for part in (_ordered_part(0, 100), _ordered_part(100, 100), _ordered_part(50, 100)):
        stream.append(part)
    stream.abandon()
    assert list(stream.final.parent.iterdir()) == []


def test_only_files_out_of_order_need_the_sort(tmp_path: Path) -> None:
    """`needs_sort` (a DuckDB sort holding memory, run one file at a time by a load) only when
    `finish` sorts: small parts are sorted in memory, parts in order not at all."""
    small = RowsetStream(tmp_path, 1, 2, 0, sort_key=["c1"])
    small.append(_part(0, 1000))
    in_order = RowsetStream(tmp_path, 1, 2, 1, sort_key=["c1"])
    for part in (_ordered_part(0, 1000), _ordered_part(1000, 1000)):
        in_order.append(part)
    broken = RowsetStream(tmp_path, 1, 2, 2, sort_key=["c1"])
    for part in (_ordered_part(1000, 1000), _ordered_part(0, 1000)):
        broken.append(part)
    big = RowsetStream(tmp_path, 1, 2, 3, sort_key=["c1"])
    big.append(_part(0, 150_000))
    assert [s.needs_sort for s in (small, in_order, broken, big)] == [False, False, True, True]
    for stream in (small, in_order, broken, big):
        found = pq.read_table(tmp_path / stream.finish().path)
        assert found["c1"].to_pylist() == sorted(found["c1"].to_pylist())


def _codecs(path: Path) -> set[str]:
    meta = pq.ParquetFile(path).metadata
    return {meta.row_group(g).column(c).compression
            for g in range(meta.num_row_groups) for c in range(meta.num_columns)}


@pytest.mark.parametrize("codec", ["lz4", "zstd"])
@pytest.mark.parametrize("way", ["small", "sorted_by_duckdb", "parts_in_order", "parts_out_of_order"])
def test_every_way_of_writing_uses_the_codec_asked(tmp_path: Path, codec: str, way: str) -> None:
    """A table's "compression" reaches each path a file takes: pyarrow's sort of a small part, DuckDB's
    sort of a large one or of spooled parts, parts written as they come."""
    if way == "small":
        written = write_rowset(tmp_path, 1, 2, 0, _part(0, 1000), sort_key=["c1"], codec=codec)
    elif way == "sorted_by_duckdb":
        written = write_rowset(tmp_path, 1, 2, 0, _part(0, ROW_GROUP_ROWS * 2), sort_key=["c1"], codec=codec)
    else:
        stream = RowsetStream(tmp_path, 1, 2, 0, sort_key=["c1"], codec=codec)
        ordered = pa.table({"c1": pa.array(range(3000), pa.int64()), "__seq": pa.array(range(3000), pa.int64())})
        chunks = [ordered.slice(0, 1000), ordered.slice(1000, 1000), ordered.slice(2000)]
        if way == "parts_out_of_order":
            chunks.reverse()
        for chunk in chunks:
            stream.append(chunk)
        written = stream.finish()
        assert pq.read_table(tmp_path / written.path)["c1"].to_pylist() == list(range(3000))
    assert _codecs(tmp_path / written.path) == {codec.upper()}


def _write_each_way(tmp_path: Path, way: str, part: pa.Table) -> Path:
    """`part` (keyed by c1) written the way named: pyarrow's sort of it whole, DuckDB's sort of it whole
    (it is large), its halves as they come (in key order), its halves the other way round (spooled and
    sorted by DuckDB)."""
    if way in ("small", "sorted_by_duckdb"):
        return tmp_path / write_rowset(tmp_path, 1, 2, 0, part, sort_key=["c1"]).path
    ordered = part.sort_by("c1")
    halves = [ordered.slice(0, ordered.num_rows // 2), ordered.slice(ordered.num_rows // 2)]
    stream = RowsetStream(tmp_path, 1, 2, 0, sort_key=["c1"])
    for half in halves if way == "parts_in_order" else halves[::-1]:
        stream.append(half)
    return tmp_path / stream.finish().path


@pytest.mark.parametrize("way", ["small", "sorted_by_duckdb", "parts_in_order", "parts_out_of_order"])
def test_every_way_of_writing_makes_the_same_layout(tmp_path: Path, way: str) -> None:
    """Whichever path a file takes: a page index on every column (DuckDB skips the pages a filter's range
    misses), dictionaries on text columns only, delta encoding on the integer-valued columns of many
    values, and the parts' own Arrow types (DuckDB's sort hands back
    a large_string as a string)."""
    rows = 1000 if way == "small" else ROW_GROUP_ROWS * 2 + 10
    part = _part(0, rows)
    part = part.append_column("c4", part["c3"].cast(pa.large_string()))
    path = _write_each_way(tmp_path, way, part)
    file = pq.ParquetFile(path)
    assert file.schema_arrow.equals(part.schema, check_metadata=False)
    meta = file.metadata
    for g in range(meta.num_row_groups):
        for c in range(meta.num_columns):
            column = meta.row_group(g).column(c)
            assert column.has_column_index and column.has_offset_index, (g, column.path_in_schema)
            dictionary = "RLE_DICTIONARY" in column.encodings or "PLAIN_DICTIONARY" in column.encodings
            assert dictionary == (column.path_in_schema in ("c3", "c4")), (g, column.path_in_schema, column.encodings)
            # Keys, prices and __seq spread over their rows: delta-encoded, whichever rows came first.
            delta = "DELTA_BINARY_PACKED" in column.encodings
            assert delta == (column.path_in_schema in ("c1", "c2", "__seq")), (g, column.path_in_schema)
    assert sorted(pq.read_table(path).to_pylist(), key=lambda r: r["__seq"]) == part.to_pylist()


@pytest.mark.parametrize("codec", ["lz4", "zstd"])
@pytest.mark.parametrize("rows", [1, 50, 200_000])
def test_a_file_of_one_part_is_the_same_file_in_memory_or_not(tmp_path: Path, rows: int, codec: str,
                                                             monkeypatch: pytest.MonkeyPatch) -> None:
    """A small part is encoded in memory (`_IN_MEMORY_BYTES`), a large one through the file writer:
    the same bytes either way, the checksum theirs, nothing left but the file."""
    from storage import rowset_writer
    from storage.rowset_writer import file_sha256

    part = _part(0, rows)
    written = [write_rowset(tmp_path / "a", 1, 1, 0, part, sort_key=("c1",), codec=codec)]
    monkeypatch.setattr(rowset_writer, "_IN_MEMORY_BYTES", 0 if rows < 100 else 1 << 40)
    written.append(write_rowset(tmp_path / "b", 1, 1, 0, part, sort_key=("c1",), codec=codec))
    files = [tmp_path / root / w.path for root, w in zip(("a", "b"), written, strict=True)]
    assert files[0].read_bytes() == files[1].read_bytes()
    for file, w in zip(files, written, strict=True):
        assert w.checksum == file_sha256(file) and w.size_bytes == file.stat().st_size
        assert pq.read_table(file).sort_by("__seq").equals(part) and _codecs(file) == {codec.upper()}
    assert sorted(p.name for p in tmp_path.rglob("*") if p.is_file()) == sorted(f.name for f in files)


def _delta_encoded(path: Path) -> set[str]:
    meta = pq.ParquetFile(path).metadata
    return {meta.row_group(g).column(c).path_in_schema for g in range(meta.num_row_groups)
            for c in range(meta.num_columns) if "DELTA_BINARY_PACKED" in meta.row_group(g).column(c).encodings}


@pytest.mark.parametrize("rows", [1, 7, 1000, ROW_GROUP_ROWS * 2 + 10])
def test_integer_valued_columns_of_many_values_are_delta_encoded(tmp_path: Path, rows: int) -> None:
    """Integers, dates, times, timestamps and DECIMALs of up to 18 digits whose values spread over at least
    an eighth of a row group's rows are delta-encoded; narrower ones, a one-row file's, floats, text and
    38-digit DECIMALs (not stored as integers) are not. DuckDB reads every row and filters them the same."""
    import datetime as dt
    from decimal import Decimal

    import duckdb

    i = list(range(rows))
    data = pa.table({
        "k": pa.array([(j * 7919) % 1_000_003 for j in i], pa.int64()),
        "few": pa.array([j % 4 for j in i], pa.int32()),
        "day": pa.array([dt.date(2020, 1, 1) + dt.timedelta(days=j) for j in i], pa.date32()),
        "same_day": pa.array([dt.date(2020, 1, 1)] * rows, pa.date32()),
        "at": pa.array([dt.datetime(2026, 1, 1) + dt.timedelta(seconds=j) for j in i], pa.timestamp("us")),
        "clock": pa.array([dt.time(0, 0, j % 60, j) for j in i], pa.time64("us")),
        "price": pa.array([None if j % 5 == 0 else Decimal(j) / 100 for j in i], pa.decimal128(12, 2)),
        "huge": pa.array([Decimal(j) * 10**30 for j in i], pa.decimal128(38, 0)),
        "ratio": pa.array([j / 3 for j in i], pa.float64()),
        "text": pa.array([f"v{j}" for j in i], pa.string()),
        "__seq": pa.array(i, pa.int64()),
    })
    path = tmp_path / write_rowset(tmp_path, 1, 2, 0, data, sort_key=["k"]).path
    wide = {"k", "day", "at", "clock", "price", "__seq"}
    # `few` spreads over 3: wide only next to a file of at most 3 × 8 rows; `same_day` over nothing.
    wide |= {"few"} if rows <= 24 else set()
    assert _delta_encoded(path) == (wide if rows > 1 else set())
    con = duckdb.connect()
    source = f"read_parquet('{path}')"
    assert con.sql(f"SELECT * FROM {source} ORDER BY __seq").to_arrow_table().to_pylist() == data.to_pylist()
    probe = data["k"][rows // 2].as_py()
    assert con.execute(f"SELECT __seq FROM {source} WHERE k = {probe}").fetchall() == [(rows // 2,)]
    assert con.execute(f"SELECT count(*), sum(price) FROM {source} WHERE day >= DATE '2020-01-03'").fetchone() == \
        (max(rows - 2, 0), sum((Decimal(j) / 100 for j in i[2:] if j % 5), Decimal(0)) if rows > 2 else None)
