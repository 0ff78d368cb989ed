"""The shape of one Doris function's entry and the ways an entry turns a call into DuckDB's terms.

An entry either keeps the node sqlglot made of the call (`rewrite` None: sqlglot's DuckDB form of it
is Doris' answer, checked by the family's test) or rewrites it. A rewrite sees the call as written
(`Call.args`, in the user's order: the parser reads a rewritten function as a plain call, see
`query.parser.dialect`) unless the entry says `positional=False`, when it sees sqlglot's node (for
calls with syntax of their own: COUNT(DISTINCT a, b), GROUP_CONCAT(… ORDER BY … SEPARATOR …)).

Templates are DuckDB SQL with `{0}`, `{1}` … for the arguments, `{*}` for all of them and `{1*}`
for all from the second on; each argument is pasted as a tree, so an argument is evaluated as its
own expression whatever the template around it.
"""

from __future__ import annotations

import re
from collections.abc import Callable, Collection
from dataclasses import dataclass, field
from datetime import timezone, tzinfo

import sqlglot
from sqlglot import exp

from query.context import SqlFailure

Zone = tzinfo | timezone


class FunctionError(SqlFailure):
    """A call the function layer cannot answer as Doris would; `code` is the MySQL error code."""


UNKNOWN_ERROR = 1105  # what Doris answers an unknown function or a wrong argument count with
NOT_SUPPORTED_YET = 1235


@dataclass(frozen=True)
class Call:
    """One call: its Doris name (lower case), its arguments as written, sqlglot's node, the session zone."""

    name: str
    args: list[exp.Expr]
    node: exp.Expr
    zone: Zone


Rewrite = Callable[[Call], exp.Expr]


@dataclass(frozen=True)
class Function:
    name: str  # Doris' name, lower case
    family: str
    example: str  # a call with literal arguments: documentation and the executor-level test's input
    rewrite: Rewrite | None = None
    positional: bool = True
    arities: Collection[int] | None = field(default=None)  # None: any count the rewrite accepts
    aggregate: bool = False  # an aggregate outside the aggregate family (BITMAP_UNION, HLL_UNION_AGG …)

    def check_arity(self, call: Call) -> None:
        if self.arities is not None and len(call.args) not in self.arities:
            raise FunctionError(UNKNOWN_ERROR, f"Can not found function '{self.name}' which has {len(call.args)} "
                                               f"arity (it takes {' or '.join(map(str, sorted(self.arities)))})")


_PLACEHOLDER = re.compile(r"\{(\d+)(\*?)\}|\{\*\}")


def _arg(i: int) -> str:
    return f"__strata_arg_{i}"


def render(text: str, args: list[exp.Expr]) -> exp.Expr:
    """`text` (DuckDB SQL with placeholders) with the arguments pasted in."""
    def placeholder(match: re.Match[str]) -> str:
        if match.group(0) == "{*}":
            return ", ".join(_arg(i) for i in range(len(args)))
        first = int(match.group(1))
        if match.group(2):
            return ", ".join(_arg(i) for i in range(first, len(args)))
        return _arg(first)

    tree = sqlglot.parse_one(_PLACEHOLDER.sub(placeholder, text), read="duckdb")
    by_name = {_arg(i): a for i, a in enumerate(args)}

    def paste(node: exp.Expr) -> exp.Expr:
        if isinstance(node, exp.Column) and not node.table and node.name in by_name:
            return by_name[node.name].copy()
        return node

    return tree.transform(paste)


def template(text: str) -> Rewrite:
    return lambda call: render(text, call.args)


def by_arity(**texts: str) -> Rewrite:
    """One template per argument count: `by_arity(a1="…", a2="…")`."""
    def rewrite(call: Call) -> exp.Expr:
        return render(texts[f"a{len(call.args)}"], call.args)
    return rewrite


def arities_of(**texts: str) -> frozenset[int]:
    return frozenset(int(k[1:]) for k in texts)


def fn(name: str, family: str, example: str, text: str | None = None, *, arities: Collection[int] | None = None,
       rewrite: Rewrite | None = None, positional: bool = True, aggregate: bool = False,
       **per_arity: str) -> Function:
    """An entry: with `text` a template, with `a1=`, `a2=` … one template per argument count, with
    `rewrite` Python, with none of them sqlglot's own node."""
    if per_arity:
        return Function(name, family, example, by_arity(**per_arity), positional, arities_of(**per_arity), aggregate)
    if text is not None:
        count = arities if arities is not None else _template_arity(text)
        return Function(name, family, example, template(text), positional, count, aggregate)
    return Function(name, family, example, rewrite, positional if rewrite is not None else False, arities, aggregate)


def _template_arity(text: str) -> frozenset[int] | None:
    if "*" in text:
        return None
    found = [int(m.group(1)) for m in _PLACEHOLDER.finditer(text)]
    return frozenset({max(found) + 1 if found else 0})
