"""Doris' functions in DuckDB's terms: the one place a Doris function name is mapped.

Every statement that reaches DuckDB passes through `to_duckdb` after its session values are
substituted (query.reads.bind_tables, query.dml). Each call the user wrote carries its written name
(the parser records it, `NAME_KEY`); a name in the registry below keeps sqlglot's node or is
rewritten by its family's entry (query.functions.registry); any other name is an error 1105 naming
it, never DuckDB's function of the same name answering with its own semantics. Calls sqlglot makes
itself ([1, 2] literals, operators) carry no written name and stay as they are.

Families, one module each: strings, dates, numbers, conditional, arrays, maps, json, aggregates,
bitmaps, hll, windows, syntax (CAST … and the session's values). `python -m query.functions` prints
the list the README shows.
"""

from __future__ import annotations

from functools import cache

from sqlglot import exp

from query.functions import (
    aggregates,
    arrays,
    bitmaps,
    conditional,
    dates,
    hll,
    json,
    maps,
    numbers,
    strings,
    syntax,
    windows,
)
from query.functions.registry import UNKNOWN_ERROR, Call, Function, FunctionError, Zone
from query.parser.dialect import NAME_KEY

FAMILIES = (strings, dates, numbers, conditional, arrays, maps, json, aggregates, bitmaps, hll, windows, syntax)


def _registry() -> dict[str, Function]:
    found: dict[str, Function] = {}
    for family in FAMILIES:
        for entry in family.FUNCTIONS:
            if entry.name in found:
                raise AssertionError(f"function '{entry.name}' is registered twice")
            found[entry.name] = entry
    return found


FUNCTIONS: dict[str, Function] = _registry()


@cache
def positional_names() -> frozenset[str]:
    """Upper-case names the parser reads as plain calls (their entries rewrite the call as written)."""
    return frozenset(f.name.upper() for f in FUNCTIONS.values() if f.rewrite is not None and f.positional)


def _translate(node: exp.Func, name: str, zone: Zone) -> exp.Expr:
    entry = FUNCTIONS.get(name)
    if entry is None:
        raise FunctionError(UNKNOWN_ERROR, f"Can not found function '{name}'")
    if entry.rewrite is None or (entry.positional and not isinstance(node, exp.Anonymous)):
        return node
    call = Call(name, list(node.expressions) if isinstance(node, exp.Anonymous) else [], node, zone)
    entry.check_arity(call)
    return entry.rewrite(call)


# Table functions other modules bind after this layer: S3(…) is fetched by Strata (query.s3_source).
_BOUND_ELSEWHERE = frozenset({"s3"})


def to_duckdb(expr: exp.Expr, zone: Zone) -> exp.Expr:
    """`expr` (changed in place, and returned) with every Doris function call in DuckDB's terms."""
    holder = exp.Paren(this=expr)  # so the root itself can be replaced
    # Children before parents: a rewrite pastes arguments that are already DuckDB's.
    calls = [n for n in expr.walk(bfs=False) if isinstance(n, exp.Func) and NAME_KEY in n.meta
             and not (isinstance(n.parent, exp.Table) and str(n.meta[NAME_KEY]).lower() in _BOUND_ELSEWHERE)]
    for node in reversed(calls):
        new = _translate(node, node.meta[NAME_KEY], zone)
        if new is not node:
            node.replace(new)
    return holder.this


def aggregates_in(expr: exp.Expr) -> bool:
    """Whether `expr` calls an aggregate: sqlglot's, or one of the aggregate family read as a plain call."""
    return any(isinstance(node, exp.AggFunc) or (isinstance(node, exp.Func) and (entry := FUNCTIONS.get(
        node.meta.get(NAME_KEY, ""))) is not None and (entry.family == aggregates.F or entry.aggregate))
        for node in expr.walk())


def supported() -> dict[str, list[Function]]:
    """The registry by family, for the README."""
    out: dict[str, list[Function]] = {}
    for entry in FUNCTIONS.values():
        out.setdefault(entry.family, []).append(entry)
    return out
