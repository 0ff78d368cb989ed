"""query.superseded_positions: the positions a set of delete bitmaps marks, read once from the files
into a table of the database and then named by every read — the same rows as reading the files
(storage.delete_bitmaps.superseded_sql), one load per (bitmaps, file map), a budget that drops the
least recently used set, and a table dropped only once no running statement names it."""

from __future__ import annotations

from collections.abc import Callable
from pathlib import Path

import duckdb
import pyarrow as pa
import pytest

from query.superseded_positions import SupersededPositions
from storage.delete_bitmaps import NOTHING_SUPERSEDED, bitmap_path, superseded_sql, write_bitmap
from storage.sandbox import sandboxed_connection


def _bitmap(root: Path, version: int, pairs: list[tuple[str, int]]) -> str:
    rel = bitmap_path(3, 1, 0, version)
    write_bitmap(root, rel, pa.table({"rowset_id": [r for r, _ in pairs], "row": [n for _, n in pairs]}))
    return str(root / rel)


def _rows(cur: duckdb.DuckDBPyConnection, sql: str) -> list[tuple[object, ...]]:
    return sorted(cur.execute(sql).fetchall())


class Statement:
    """A running statement's holds (as storage.locator.RowsetLocator's), ended by `end`."""

    def __init__(self) -> None:
        self.releases: list[Callable[[], None]] = []

    def hold(self, release: Callable[[], None]) -> bool:
        self.releases.append(release)
        return True

    def end(self) -> None:
        for release in self.releases:
            release()
        self.releases.clear()


def _no_statement(release: Callable[[], None]) -> bool:
    return False


def _tables(duck: duckdb.DuckDBPyConnection) -> set[str]:
    return {name for (name,) in duck.cursor().execute(
        "SELECT table_name FROM duckdb_tables() WHERE table_name LIKE '__strata_superseded_%'").fetchall()}


def test_positions_from_the_table_are_those_of_the_files(tmp_path: Path) -> None:
    duck = sandboxed_connection([tmp_path])
    bitmaps = [_bitmap(tmp_path, 2, [("a", 0), ("a", 5), ("b", 1)]), _bitmap(tmp_path, 3, [("b", 0), ("c", 9)])]
    files = {"a": 0, "b": 1}  # rowset c is not read (a compaction output replaced it): its pairs are left out
    cache = SupersededPositions(duck.cursor)
    expected = _rows(duck.cursor(), superseded_sql(bitmaps, files))
    assert expected == [(0, 0), (0, 5), (1, 0), (1, 1)]
    for _ in range(3):
        cur, statement = duck.cursor(), Statement()  # each read its own cursor, as each statement has
        sql = cache.sql(cur, bitmaps, files, statement.hold)
        assert "read_parquet" not in sql
        assert _rows(cur, sql) == expected
        statement.end()
    assert cache.loads == 1
    assert cache.cached_rows == 4
    assert len(_tables(duck)) == 1
    # Another file map (another snapshot's cover) is another entry: its own positions, its own load.
    cur = duck.cursor()
    assert _rows(cur, cache.sql(cur, bitmaps, {"b": 0, "c": 1}, Statement().hold)) == [(0, 0), (0, 1), (1, 9)]
    assert cache.loads == 2


def test_an_evicted_table_stays_until_its_last_reader_ends(tmp_path: Path) -> None:
    duck = sandboxed_connection([tmp_path])
    first = [_bitmap(tmp_path, 2, [("a", i) for i in range(6)])]
    second = [_bitmap(tmp_path, 3, [("a", i) for i in range(10, 16)])]
    cache = SupersededPositions(duck.cursor, budget_rows=8)
    reading, statement = duck.cursor(), Statement()
    sql = cache.sql(reading, first, {"a": 0}, statement.hold)
    later = Statement()
    cache.sql(duck.cursor(), second, {"a": 0}, later.hold)  # past the budget: the first set leaves the cache
    assert cache.cached_rows == 6
    assert len(_tables(duck)) == 2  # the first is still read by `statement`
    assert _rows(reading, sql) == [(0, i) for i in range(6)]
    statement.end()
    assert len(_tables(duck)) == 1  # dropped with its last reader
    with pytest.raises(duckdb.CatalogException):
        reading.execute(sql)
    again = duck.cursor()
    assert _rows(again, cache.sql(again, first, {"a": 0}, Statement().hold)) == [(0, i) for i in range(6)]
    assert cache.loads == 3


def test_a_set_larger_than_the_budget_is_read_for_its_statement_only(tmp_path: Path) -> None:
    duck = sandboxed_connection([tmp_path])
    bitmaps = [_bitmap(tmp_path, 2, [("a", i) for i in range(20)])]
    cache = SupersededPositions(duck.cursor, budget_rows=8)
    for _ in range(2):
        cur, statement = duck.cursor(), Statement()
        assert len(_rows(cur, cache.sql(cur, bitmaps, {"a": 0}, statement.hold))) == 20
        statement.end()
        assert _tables(duck) == set()
    assert cache.loads == 2 and cache.cached_rows == 0


def test_outside_a_statement_the_files_are_read(tmp_path: Path) -> None:
    duck = sandboxed_connection([tmp_path])
    bitmaps = [_bitmap(tmp_path, 2, [("a", 3), ("a", 1)])]
    cache = SupersededPositions(duck.cursor)
    cur = duck.cursor()
    sql = cache.sql(cur, bitmaps, {"a": 0}, _no_statement)
    assert sql == superseded_sql(bitmaps, {"a": 0})  # no table it names can be dropped under it
    assert _rows(cur, sql) == [(0, 1), (0, 3)]
    # Loaded all the same: a statement that comes later names the kept table.
    statement = Statement()
    assert "read_parquet" not in cache.sql(cur, bitmaps, {"a": 0}, statement.hold)
    assert cache.loads == 1


def test_no_bitmap_or_no_file_marks_nothing(tmp_path: Path) -> None:
    duck = sandboxed_connection([tmp_path])
    cur = duck.cursor()
    cache = SupersededPositions(duck.cursor)
    assert cache.sql(cur, [], {"a": 0}, Statement().hold) == NOTHING_SUPERSEDED
    assert cache.sql(cur, [_bitmap(tmp_path, 2, [("a", 1)])], {}, Statement().hold) == NOTHING_SUPERSEDED
    assert cache.loads == 0
