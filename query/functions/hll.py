"""HLL functions (https://doris.apache.org/docs/sql-manual/sql-functions/aggregate-functions/hll-union-agg/).

An HLL is the sorted set of the 64-bit hashes of the values it counts (storage.set_values): Doris'
HyperLogLog estimates, Strata counts exactly, which is within any of its error bounds. HLL_HASH hashes
a value's text, as Doris does (HLL_HASH(1) and HLL_HASH('1') are one value); HLL_HASH(NULL) is an
empty HLL, and HLL_CARDINALITY of NULL is 0."""

from __future__ import annotations

from query.functions.registry import Function, fn
from storage.set_values import SET_DUCK_TYPE, union_sql

F = "hll"
EMPTY = f"CAST([] AS {SET_DUCK_TYPE})"
_COUNT = f"COALESCE(LEN({union_sql('{0}')}), 0)"

FUNCTIONS: list[Function] = [
    fn("hll_hash", F, "hll_cardinality(hll_hash('a'))",
       f"CASE WHEN {{0}} IS NULL THEN {EMPTY} ELSE [HASH(CAST({{0}} AS VARCHAR))] END"),
    fn("hll_empty", F, "hll_cardinality(hll_empty())", EMPTY),
    fn("hll_cardinality", F, "hll_cardinality(hll_hash('a'))", "COALESCE(LEN({0}), 0)"),
    # Aggregates.
    fn("hll_union", F, "hll_cardinality(hll_union(hll_hash('a')))", union_sql("{0}"), aggregate=True),
    fn("hll_raw_agg", F, "hll_cardinality(hll_raw_agg(hll_hash('a')))", union_sql("{0}"), aggregate=True),
    fn("hll_union_agg", F, "hll_union_agg(hll_hash('a'))", _COUNT, aggregate=True),
]
