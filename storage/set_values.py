"""Doris' BITMAP and HLL values as DuckDB holds them: a sorted list of distinct UBIGINTs.

A BITMAP is its set of unsigned 64-bit members; an HLL is the set of the 64-bit hashes of the values
it counts (Doris' HLL is exact this way while small, its explicit mode; Strata keeps it exact at any
size, which is within any HyperLogLog error bound). One representation serves rowset files (a
Parquet list of uint64), the Aggregate Key merge (BITMAP_UNION / HLL_UNION, also in compaction) and
the functions of both families, so a union is the same SQL everywhere. Doris has no unsigned types,
so no other Strata value is ever a UBIGINT list: the wire layer can tell these columns apart by type.
"""

from __future__ import annotations

SET_DUCK_TYPE = "UBIGINT[]"
SET_TYPES = frozenset({"BITMAP", "HLL"})


def sorted_set_sql(values: str) -> str:
    """`values` (a UBIGINT list, maybe with repeats) as a set value: sorted, distinct, no NULLs."""
    return f"LIST_SORT(LIST_DISTINCT({values}))"


def union_sql(value: str) -> str:
    """The aggregate union of the set values `value` of a group; NULL where every one is NULL."""
    return sorted_set_sql(f"FLATTEN(LIST({value}) FILTER (WHERE {value} IS NOT NULL))")
