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
    # AGGREGATE tables: SUM, MAX, REPLACE, or BITMAP_UNION / HLL_UNION (a BITMAP / HLL column written
    # through to_bitmap / hll_hash of an integer, held as the set of members / of values counted)
    aggregation: str | None = None
    default: int | None = None


# Keys of a row dict that are not columns: a Unique Key row's sequence value and its delete sign.
SEQUENCE = "__sequence"
DELETE_SIGN = "__delete"


@dataclass
class OracleTable:
    keys_model: str
    columns: list[OracleColumn]  # columns[0] is the key `k`
    rows: list[Row] = field(default_factory=list)
    # Unique Key with a sequence column: each row carries SEQUENCE; per key the highest value wins (NULL
    # lowest, a tie to the later write), and a deleted key keeps the value it was deleted at, which a
    # later write must reach to bring the key back.
    sequenced: bool = False
    tombstones: dict[Any, Any] = field(default_factory=dict)

    @property
    def names(self) -> list[str]:
        return [c.name for c in self.columns]

    def insert(self, batch: list[Row]) -> None:
        for row in batch:
            full = {c.name: _stored(c.aggregation, row.get(c.name, c.default)) for c in self.columns}
            if self.keys_model == "DUPLICATE":
                self.rows.append(full)
                continue
            existing = next((r for r in self.rows if r["k"] == full["k"]), None)
            if self.keys_model == "UNIQUE":
                self._upsert(full, existing, row.get(SEQUENCE), bool(row.get(DELETE_SIGN)))
            elif existing is None:
                self.rows.append(full)
            else:
                for c in self.columns[1:]:
                    existing[c.name] = _fold(c.aggregation, existing[c.name], full[c.name])

    def _upsert(self, full: Row, existing: Row | None, sequence: Any, delete: bool) -> None:
        key = full["k"]
        if self.sequenced:
            stored = existing[SEQUENCE] if existing is not None else self.tombstones.get(key, _NONE)
            if stored is not _NONE and _lower(sequence, stored):
                return  # a lower sequence value than the key's stored row: the write loses
            full[SEQUENCE] = sequence
        if existing is not None:
            self.rows.remove(existing)
        self.tombstones.pop(key, None)
        if not delete:
            self.rows.append(full)
        elif self.sequenced:
            self.tombstones[key] = sequence

    def partial_insert(self, batch: list[Row], named: list[str]) -> None:
        """A partial update: each row takes the columns it does not name (and its sequence value, unless
        given) from the key's row as stored before the statement; a new key takes defaults."""
        before = {r["k"]: dict(r) for r in self.rows}
        whole = []
        for row in batch:
            stored = before.get(row["k"])
            base = stored if stored is not None else {c.name: c.default for c in self.columns}
            full = {**base, **{n: row.get(n) for n in named}}
            full[SEQUENCE] = row[SEQUENCE] if SEQUENCE in row else (stored or {}).get(SEQUENCE)
            full[DELETE_SIGN] = row.get(DELETE_SIGN)
            whole.append(full)
        self.insert(whole)

    def delete(self, predicate: Callable[[Row], bool], *, remember: bool = True) -> None:
        """DELETE: on a sequenced Unique Key table each deleted key remembers its row's sequence value;
        without `remember` (a dropped partition) the rows are gone, tombstones and all."""
        if self.sequenced and remember:
            self.tombstones.update({r["k"]: r[SEQUENCE] for r in self.rows if predicate(r)})
        if not remember:
            self.tombstones = {k: v for k, v in self.tombstones.items() if not predicate({"k": k})}
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
        self.tombstones = {}

    def overwrite(self, batch: list[Row], covered: Callable[[Row], bool] = lambda r: True) -> None:
        """INSERT OVERWRITE: the rows `covered` selects (the partitions replaced) give way to `batch`."""
        self.delete(covered)
        self.insert(batch)

    def result(self) -> list[tuple[Any, ...]]:
        return sorted((tuple(_shown(c.aggregation, r[c.name]) for c in self.columns) for r in self.rows),
                      key=_sort_key)


_NONE = object()


def _lower(new: Any, stored: Any) -> bool:
    """Whether sequence value `new` ranks below `stored` (NULL below any value)."""
    if new is None:
        return stored is not None
    return stored is not None and new < stored


def _stored(aggregation: str | None, value: Any) -> Any:
    """A written value as the table holds it: to_bitmap(v) has member v (NULL for a negative or NULL v),
    hll_hash(v) counts v (an empty HLL for NULL)."""
    if aggregation == "BITMAP_UNION":
        return None if value is None or value < 0 else frozenset({value})
    if aggregation == "HLL_UNION":
        return frozenset() if value is None else frozenset({value})
    return value


def _shown(aggregation: str | None, value: Any) -> Any:
    """A held value as the machines read it: bitmap_to_string of a BITMAP, hll_cardinality of an HLL."""
    if aggregation == "BITMAP_UNION":
        return None if value is None else ",".join(str(m) for m in sorted(value))
    if aggregation == "HLL_UNION":
        return 0 if value is None else len(value)
    return value


def _fold(aggregation: str | None, old: Any, new: Any) -> Any:
    if aggregation in ("BITMAP_UNION", "HLL_UNION"):  # a union; NULL only while every value is NULL
        return new if old is None else old if new is None else old | new
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
