"""The positions merge-on-write reads subtract, kept in memory per set of delete bitmaps.

A merge-on-write Unique Key read drops the (`__file`, `__row`) positions its delete bitmaps mark
(`storage.delete_bitmaps.superseded_sql`). Read from the bitmap files, that is a Parquet scan of
every marked position and a join of each with the read's file map on every query: most of what a
point lookup on such a table costs. Yet a bitmap file is written once under a unique name and never
changed, and the file map (rowset id → index in the read's file list) is fixed by the snapshot's
cover, so one (bitmaps, file map) pair always yields the same positions, whatever instant the read
is at: they are read once into an Arrow table, and each later read with the same pair registers
that table on its own DuckDB cursor (registration is per cursor and zero-copy; a table dropped from
the cache stays alive for the cursors that registered it). Time travel reads are exact as before:
another instant's snapshot names other bitmaps or another file map, hence another entry.

The cache holds at most `budget_rows` positions (least recently used out first); a set larger than
that is read from its files every time, as without the cache.
"""

from __future__ import annotations

import itertools
import threading
from collections import OrderedDict
from collections.abc import Callable, Mapping, Sequence

import duckdb
import pyarrow as pa

from storage.delete_bitmaps import NOTHING_SUPERSEDED, superseded_sql

# About 12 bytes a position (int32 file, int64 row): 4M positions ≈ 48 MB.
DEFAULT_BUDGET_ROWS = 4_000_000
_Key = tuple[tuple[str, ...], tuple[tuple[str, int], ...]]
_names = itertools.count(1)

PositionsSql = Callable[[Sequence[str], Mapping[str, int]], str]


class SupersededPositions:
    """Superseded positions per (bitmap files, file map), shared by every read of one server."""

    def __init__(self, budget_rows: int = DEFAULT_BUDGET_ROWS) -> None:
        self.budget_rows = budget_rows
        self._tables: OrderedDict[_Key, pa.Table] = OrderedDict()
        self._rows = 0
        self._lock = threading.Lock()
        self.loads = 0  # how many times positions were read from bitmap files (tests watch it)

    def for_cursor(self, cur: duckdb.DuckDBPyConnection) -> PositionsSql:
        """`superseded_sql` for reads run on `cur`: the positions' SQL names a table registered on it."""
        return lambda locations, file_index: self.sql(cur, locations, file_index)

    def sql(self, cur: duckdb.DuckDBPyConnection, locations: Sequence[str], file_index: Mapping[str, int]) -> str:
        """SQL of the positions the bitmap files at `locations` mark in the files `file_index` maps, as
        `superseded_sql` gives them, read from memory when an earlier read loaded them."""
        if not locations or not file_index:
            return NOTHING_SUPERSEDED
        key: _Key = (tuple(locations), tuple(file_index.items()))
        with self._lock:
            table = self._tables.get(key)
            if table is not None:
                self._tables.move_to_end(key)
        if table is None:
            # Sorted, so a filter DuckDB derives from the other side of the anti-join skips whole chunks.
            table = cur.sql(f"SELECT __file, __row FROM ({superseded_sql(locations, file_index)}) "
                            "ORDER BY __file, __row").to_arrow_table()
            self._keep(key, table)
        name = f"__strata_superseded_{next(_names)}"
        cur.register(name, table)
        return f"SELECT __file, __row FROM {name}"

    def _keep(self, key: _Key, table: pa.Table) -> None:
        with self._lock:
            self.loads += 1
            if table.num_rows > self.budget_rows or key in self._tables:
                return
            self._tables[key] = table
            self._rows += table.num_rows
            while self._rows > self.budget_rows:
                _, dropped = self._tables.popitem(last=False)
                self._rows -= dropped.num_rows

    @property
    def cached_rows(self) -> int:
        with self._lock:
            return self._rows
