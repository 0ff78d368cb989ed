"""storage.set_values: BITMAP/HLL values as sorted distinct UBIGINT lists, the union Aggregate Key
merges and compactions fold them with, and the conversion a load applies to a set column."""

from __future__ import annotations

import duckdb

from storage.rowset_sql import converted_sql, duck_type
from storage.set_values import SET_DUCK_TYPE, union_sql


def _union(values: str) -> object:
    return duckdb.connect().execute(f"SELECT {union_sql('v')} FROM (VALUES {values}) t(v)").fetchall()[0][0]


def test_union_is_a_sorted_distinct_set_skipping_nulls() -> None:
    assert _union("([3, 1]::UBIGINT[]), (NULL), ([2, 3]::UBIGINT[]), ([]::UBIGINT[])") == [1, 2, 3]
    assert _union("([]::UBIGINT[]), (NULL)") == []
    assert _union("(NULL::UBIGINT[]), (NULL)") is None  # NULL only while every value is NULL


def test_bitmap_and_hll_columns_are_ubigint_lists_kept_sorted_on_load() -> None:
    assert duck_type("BITMAP") == duck_type("HLL") == SET_DUCK_TYPE
    loaded = converted_sql("CAST([5, 1, 5] AS UBIGINT[])", "BITMAP")
    assert duckdb.connect().execute(f"SELECT {loaded}").fetchall() == [([1, 5],)]
