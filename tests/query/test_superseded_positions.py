"""query.superseded_positions: the positions a set of delete bitmaps marks, read once from the files
and then from memory — the same rows as reading the files (storage.delete_bitmaps.superseded_sql),
one load per (bitmaps, file map), a budget that drops the least recently used set."""

from __future__ import annotations

from pathlib import Path

import duckdb
import pyarrow as pa

from query.superseded_positions import SupersededPositions
from storage.delete_bitmaps import NOTHING_SUPERSEDED, bitmap_path, superseded_sql, write_bitmap
from storage.sandbox import sandboxed_connection


def _bitmap(root: Path, version: int, pairs: list[tuple[str, int]]) -> str:
    rel = bitmap_path(3, 1, 0, version)
    write_bitmap(root, rel, pa.table({"rowset_id": [r for r, _ in pairs], "row": [n for _, n in pairs]}))
    return str(root / rel)


def _rows(cur: duckdb.DuckDBPyConnection, sql: str) -> list[tuple[object, ...]]:
    return sorted(cur.execute(sql).fetchall())


def test_positions_from_memory_are_those_of_the_files(tmp_path: Path) -> None:
    duck = sandboxed_connection([tmp_path])
    bitmaps = [_bitmap(tmp_path, 2, [("a", 0), ("a", 5), ("b", 1)]), _bitmap(tmp_path, 3, [("b", 0), ("c", 9)])]
    files = {"a": 0, "b": 1}  # rowset c is not read (a compaction output replaced it): its pairs are left out
    cache = SupersededPositions()
    expected = _rows(duck.cursor(), superseded_sql(bitmaps, files))
    assert expected == [(0, 0), (0, 5), (1, 0), (1, 1)]
    for _ in range(3):
        cur = duck.cursor()  # each read its own cursor, as each statement has
        assert _rows(cur, cache.sql(cur, bitmaps, files)) == expected
    assert cache.loads == 1
    assert cache.cached_rows == 4
    # Another file map (another snapshot's cover) is another entry: its own positions, its own load.
    cur = duck.cursor()
    assert _rows(cur, cache.sql(cur, bitmaps, {"b": 0, "c": 1})) == [(0, 0), (0, 1), (1, 9)]
    assert cache.loads == 2


def test_a_read_of_a_table_kept_past_its_eviction_still_answers(tmp_path: Path) -> None:
    duck = sandboxed_connection([tmp_path])
    first = [_bitmap(tmp_path, 2, [("a", i) for i in range(6)])]
    second = [_bitmap(tmp_path, 3, [("a", i) for i in range(10, 16)])]
    cache = SupersededPositions(budget_rows=8)
    reading = duck.cursor()
    sql = cache.sql(reading, first, {"a": 0})
    later = duck.cursor()
    cache.sql(later, second, {"a": 0})  # past the budget: the first set leaves the cache
    assert cache.cached_rows == 6
    assert _rows(reading, sql) == [(0, i) for i in range(6)]  # registered on its cursor, so still there
    again = duck.cursor()
    assert _rows(again, cache.sql(again, first, {"a": 0})) == [(0, i) for i in range(6)]
    assert cache.loads == 3


def test_a_set_larger_than_the_budget_is_read_but_not_kept(tmp_path: Path) -> None:
    duck = sandboxed_connection([tmp_path])
    bitmaps = [_bitmap(tmp_path, 2, [("a", i) for i in range(20)])]
    cache = SupersededPositions(budget_rows=8)
    for _ in range(2):
        cur = duck.cursor()
        assert len(_rows(cur, cache.sql(cur, bitmaps, {"a": 0}))) == 20
    assert cache.loads == 2 and cache.cached_rows == 0


def test_no_bitmap_or_no_file_marks_nothing(tmp_path: Path) -> None:
    cur = sandboxed_connection([tmp_path]).cursor()
    cache = SupersededPositions()
    assert cache.sql(cur, [], {"a": 0}) == NOTHING_SUPERSEDED
    assert cache.sql(cur, [_bitmap(tmp_path, 2, [("a", 1)])], {}) == NOTHING_SUPERSEDED
    assert cache.loads == 0
