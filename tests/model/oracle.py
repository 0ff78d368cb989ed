"""A plain in-memory model of a Doris table, the oracle Strata's answers are checked against.

It knows nothing of rowsets, versions or files: rows go in, rows come out, by the keys model's rules.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass, field
from typing import Any

Row = dict[str, Any]


@dataclass
class OracleColumn:
    name: str
    aggregation: str | None = None  # AGGREGATE tables: SUM, MAX, REPLACE
    default: int | None = None


@dataclass
class OracleTable:
    keys_model: str
    columns: list[OracleColumn]  # columns[0] is the key `k`
    rows: list[Row] = field(default_factory=list)

    @property
    def names(self) -> list[str]:
        return [c.name for c in self.columns]

    def insert(self, batch: list[Row]) -> None:
        for row in batch:
            full = {c.name: row.get(c.name, c.default) for c in self.columns}
            if self.keys_model == "DUPLICATE":
                self.rows.append(full)
                continue
            existing = next((r for r in self.rows if r["k"] == full["k"]), None)
            if existing is None:
                self.rows.append(full)
            elif self.keys_model == "UNIQUE":
                existing.update(full)
            else:
                for c in self.columns[1:]:
                    existing[c.name] = _fold(c.aggregation, existing[c.name], full[c.name])

    def delete(self, predicate: Callable[[Row], bool]) -> None:
        self.rows = [r for r in self.rows if not predicate(r)]

    def update(self, column: str, fn: Callable[[Any], Any], predicate: Callable[[Row], bool]) -> None:
        for r in self.rows:
            if predicate(r):
                r[column] = fn(r[column])

    def add_column(self, column: OracleColumn) -> None:
        self.columns.append(column)
        for r in self.rows:
            r[column.name] = column.default

    def drop_column(self, name: str) -> None:
        self.columns = [c for c in self.columns if c.name != name]
        for r in self.rows:
            r.pop(name, None)

    def truncate(self) -> None:
        self.rows = []

    def overwrite(self, batch: list[Row], covered: Callable[[Row], bool] = lambda r: True) -> None:
        """INSERT OVERWRITE: the rows `covered` selects (the partitions replaced) give way to `batch`."""
        self.delete(covered)
        self.insert(batch)

    def result(self) -> list[tuple[Any, ...]]:
        return sorted((tuple(r[n] for n in self.names) for r in self.rows), key=_sort_key)


def _fold(aggregation: str | None, old: Any, new: Any) -> Any:
    if aggregation == "SUM":
        return new if old is None else old if new is None else old + new
    if aggregation == "MAX":
        return new if old is None else old if new is None else max(old, new)
    return new  # REPLACE


def _sort_key(row: tuple[Any, ...]) -> tuple[tuple[int, Any], ...]:
    return tuple((0, 0) if v is None else (1, v) for v in row)


def sort_rows(rows: list[tuple[Any, ...]]) -> list[tuple[Any, ...]]:
    return sorted((tuple(int(v) if isinstance(v, int | float) and not isinstance(v, bool) else v for v in r)
                   for r in rows), key=_sort_key)
