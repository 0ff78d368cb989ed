"""The positions merge-on-write reads subtract, kept in DuckDB tables per set of delete bitmaps.

A merge-on-write Unique Key read drops the (`__file`, `__row`) positions its delete bitmaps mark
(`storage.delete_bitmaps.superseded_sql`). Read from the bitmap files, that is a Parquet scan of
every marked position and a join of each with the read's file map on every query: most of what a
point lookup on such a table costs. Yet a bitmap file is written once under a unique name and never
changed, and the file map (rowset id → index in the read's file list) is fixed by the snapshot's
cover, so one (bitmaps, file map) pair always yields the same positions, whatever instant the read
is at: they are read once into a table of the server's DuckDB database, and each later read with the
same pair names that table. Time travel reads are exact as before: another instant's snapshot names
other bitmaps or another file map, hence another entry.

A table of the database, not an Arrow table registered on each statement's cursor: registering is a
statement of its own (a view made, bound and committed), 1.5 ms of a 10 ms point lookup when the
machine's caches are cold, and DuckDB joins its own tables faster than an Arrow scan.

The cache holds at most `budget_rows` positions (least recently used out first). A statement whose SQL
names a table holds it (`RowsetLocator.hold`) until the statement, or its streamed result, ends: a
table evicted meanwhile is dropped when its last reader lets go. A set larger than the budget is read
into a table for the one statement that needs it. A caller outside any statement gets SQL that reads
the bitmap files, as without the cache.
"""

from __future__ import annotations

import functools
import itertools
import logging
import threading
from collections import OrderedDict
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass

import duckdb

from storage.delete_bitmaps import NOTHING_SUPERSEDED, superseded_sql

# About 12 bytes a position (int32 file, int64 row): 4M positions ≈ 48 MB.
DEFAULT_BUDGET_ROWS = 4_000_000
_Key = tuple[tuple[str, ...], tuple[tuple[str, int], ...]]
_names = itertools.count(1)
log = logging.getLogger(__name__)

PositionsSql = Callable[[Sequence[str], Mapping[str, int]], str]
# Holds something for the running statement: the release is called when the statement ends; False when
# no statement runs on this thread (`storage.locator.RowsetLocator.hold`).
Hold = Callable[[Callable[[], None]], bool]


@dataclass
class _Positions:
    table: str  # the DuckDB table holding them
    rows: int
    readers: int = 0  # running statements whose SQL names the table
    evicted: bool = False  # out of the cache: dropped once `readers` is 0


class SupersededPositions:
    """Superseded positions per (bitmap files, file map), shared by every read of one server.
    `cursor` makes a connection to the database the reads run on (for dropping evicted tables)."""

    def __init__(self, cursor: Callable[[], duckdb.DuckDBPyConnection],
                 budget_rows: int = DEFAULT_BUDGET_ROWS) -> None:
        self.budget_rows = budget_rows
        self._cursor = cursor
        self._kept: OrderedDict[_Key, _Positions] = OrderedDict()
        self._rows = 0
        self._lock = threading.Lock()
        self.loads = 0  # how many times positions were read from bitmap files (tests watch it)

    def for_cursor(self, cur: duckdb.DuckDBPyConnection, hold: Hold) -> PositionsSql:
        """`superseded_sql` for a statement run on `cur`, which holds the tables its SQL names (`hold`)."""
        return lambda locations, file_index: self.sql(cur, locations, file_index, hold)

    def sql(self, cur: duckdb.DuckDBPyConnection, locations: Sequence[str], file_index: Mapping[str, int],
            hold: Hold) -> str:
        """SQL of the positions the bitmap files at `locations` mark in the files `file_index` maps, as
        `superseded_sql` gives them, read from the database's table when an earlier read loaded them."""
        if not locations or not file_index:
            return NOTHING_SUPERSEDED
        key: _Key = (tuple(locations), tuple(file_index.items()))
        with self._lock:
            found = self._kept.get(key)
            if found is not None:
                self._kept.move_to_end(key)
                held = self._held(found, hold)
        if found is None:
            found, held = self._load(cur, key, locations, file_index, hold)
        if not held:
            return superseded_sql(locations, file_index)
        return f"SELECT __file, __row FROM {found.table}"

    def _held(self, positions: _Positions, hold: Hold) -> bool:
        """Counts the running statement as a reader of `positions` (under `_lock`)."""
        if not hold(functools.partial(self._release, positions)):
            return False
        positions.readers += 1
        return True

    def _load(self, cur: duckdb.DuckDBPyConnection, key: _Key, locations: Sequence[str],
              file_index: Mapping[str, int], hold: Hold) -> tuple[_Positions, bool]:
        """The positions read into a new table, and whether the running statement holds it."""
        table = f"__strata_superseded_{next(_names)}"
        # Unsorted: DuckDB pushes no filter into this side of the anti-join, and keeps an in-memory
        # table uncompressed, so an order would cost the load and save nothing.
        created = cur.execute(f"CREATE TABLE {table} AS SELECT __file, __row FROM "
                              f"({superseded_sql(locations, file_index)})").fetchone()
        positions = _Positions(table, int(created[0]) if created else 0)
        dropped: list[_Positions] = []
        with self._lock:
            self.loads += 1
            held = self._held(positions, hold)
            if positions.rows > self.budget_rows or key in self._kept:
                # Not kept (another statement loaded the same set meanwhile): this statement's alone.
                positions.evicted = True
                dropped.extend(self._unread(positions))
            else:
                self._kept[key] = positions
                self._rows += positions.rows
                while self._rows > self.budget_rows:
                    _, out = self._kept.popitem(last=False)
                    self._rows -= out.rows
                    out.evicted = True
                    dropped.extend(self._unread(out))
        self._drop(dropped)
        return positions, held

    def _release(self, positions: _Positions) -> None:
        with self._lock:
            positions.readers -= 1
            dropped = self._unread(positions)
        self._drop(dropped)

    @staticmethod
    def _unread(positions: _Positions) -> list[_Positions]:
        """[positions] if its table is to be dropped now (evicted, no reader left), else []."""
        return [positions] if positions.evicted and positions.readers == 0 else []

    def _drop(self, dropped: list[_Positions]) -> None:
        if not dropped:
            return
        cur = self._cursor()
        try:
            for positions in dropped:
                cur.execute(f"DROP TABLE IF EXISTS {positions.table}")
        except duckdb.Error:
            # Called where a statement ends, so other releases follow: the table stays (memory, not answers).
            log.exception("dropping superseded positions' table failed")
        finally:
            cur.close()

    @property
    def cached_rows(self) -> int:
        with self._lock:
            return self._rows
