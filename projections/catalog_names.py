"""The catalog's names (and its dropped tables), indexed: a statement resolves `db.table` with a few
dict lookups instead of a walk over every database, table and view the projection holds (dropped
ones too, until purged), which cost every statement time proportional to the catalog; the recycler
finds the dropped tables without one.

The index is derived from the projection's in-memory catalog and stamped with what it was built
from: `Projection.catalog_generation` (bumped after every event that may change a name, a database
or whether something is dropped: every kind outside `_DATA_ONLY_EVENTS`) and the identity and size
of the three dicts. A lookup that finds the stamp moved rebuilds the index, so commits, which leave
the generation alone, never do. The stamp is read before the dicts are walked: an index a concurrent
fold outdated is stored under the stamp it was read with and rebuilt at the next lookup, the argument
the generation's other caches rest on. And the projection's lookups read each candidate from the
live dicts and check its name there, so an index entry never answers with a state it no longer has.
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass
from typing import TypeVar

from projections.state import DatabaseState, TableState, ViewState

Stamp = tuple[int, ...]
K = TypeVar("K")


@dataclass(frozen=True)
class CatalogNames:
    """Ids by lowered name, in the dicts' order (so "the first view named x" is the walk's first)."""

    stamp: Stamp
    databases: dict[str, tuple[int, ...]]
    tables: dict[tuple[int, str], tuple[int, ...]]  # (db_id, name) → table ids, dropped ones included
    tables_of: dict[int, tuple[int, ...]]  # db_id → table ids
    views: dict[tuple[int, str], tuple[int, ...]]
    views_of: dict[int, tuple[int, ...]]
    dropped: tuple[int, ...]  # the dropped tables' ids (dropping one is a catalog change too)

    @classmethod
    def of(cls, stamp: Stamp, databases: Mapping[int, DatabaseState], tables: Mapping[int, TableState],
           views: Mapping[int, ViewState]) -> CatalogNames:
        by_db_name: dict[str, list[int]] = {}
        for db in databases.values():
            by_db_name.setdefault(db.name.lower(), []).append(db.db_id)
        by_table_name: dict[tuple[int, str], list[int]] = {}
        tables_of: dict[int, list[int]] = {}
        for table in tables.values():
            by_table_name.setdefault((table.db_id, table.name.lower()), []).append(table.table_id)
            tables_of.setdefault(table.db_id, []).append(table.table_id)
        by_view_name: dict[tuple[int, str], list[int]] = {}
        views_of: dict[int, list[int]] = {}
        for view in views.values():
            by_view_name.setdefault((view.db_id, view.name.lower()), []).append(view.view_id)
            views_of.setdefault(view.db_id, []).append(view.view_id)
        dropped = tuple(t.table_id for t in tables.values() if t.dropped_ts_ms is not None)
        return cls(stamp, _frozen(by_db_name), _frozen(by_table_name), _frozen(tables_of), _frozen(by_view_name),
                   _frozen(views_of), dropped)


def _frozen(lists: dict[K, list[int]]) -> dict[K, tuple[int, ...]]:
    return {key: tuple(ids) for key, ids in lists.items()}
