"""The projection's name lookups go through an index (projections.catalog_names) instead of a walk over
the whole catalog. They must answer exactly what the walk answered, after any history of DDL, and a
run of commits must not rebuild the index. No Kafka needed: events are applied directly."""

from __future__ import annotations

import random
from collections.abc import Iterator
from pathlib import Path

import pytest

from projections import catalog_names
from projections.projection import Projection
from projections.state import DatabaseState, TableState, ViewState
from schemas import events as ev
from schemas.model import Column, Distribution, Partition, TableSchema, ViewColumn
from tests.projections.test_copy_on_write import Folder
from tests.projections.test_fold import _rowset

NAMES = ("t", "T2", "orders", "v")


# -- the walk the index replaced, kept here as the reference ----------------------------------------
def walk_database(p: Projection, name: str, include_dropped: bool) -> DatabaseState | None:
    found = [d for d in p.databases.values()
             if d.name.lower() == name.lower() and (include_dropped or d.dropped_ts_ms is None)]
    return max(found, key=lambda d: d.db_id) if found else None


def walk_table(p: Projection, db_id: int, name: str, dropped: bool) -> TableState | None:
    found = [t for t in p.tables.values()
             if t.db_id == db_id and t.name.lower() == name.lower() and ((t.dropped_ts_ms is not None) == dropped)]
    return max(found, key=lambda t: t.table_id) if found else None


def walk_view(p: Projection, db_id: int, name: str) -> ViewState | None:
    return next((v for v in p.views.values() if v.db_id == db_id and v.name.lower() == name.lower()), None)


def _same_answers(p: Projection) -> None:
    db_names = {d.name for d in p.databases.values()} | {"nope", "D1"}
    db_ids = set(p.databases) | {999}
    for name in db_names:
        for include_dropped in (False, True):
            assert p.database_by_name(name, include_dropped=include_dropped) is \
                walk_database(p, name, include_dropped), (name, include_dropped)
    for db_id in db_ids:
        for name in NAMES + tuple(n.upper() for n in NAMES):
            for dropped in (False, True):
                assert p.table_by_name(db_id, name, dropped=dropped) is walk_table(p, db_id, name, dropped)
            assert p.view_by_name(db_id, name) is walk_view(p, db_id, name)
        assert p.tables_of(db_id) == sorted((t for t in p.tables.values()
                                             if t.db_id == db_id and t.dropped_ts_ms is None), key=lambda t: t.name)
        assert p.views_of(db_id) == sorted((v for v in p.views.values() if v.db_id == db_id), key=lambda v: v.name)


def _table(db_id: int, table_id: int, name: str) -> ev.TableCreated:
    schema = TableSchema(schema_version=1, columns=(Column(unique_id=1, name="k", type="INT", is_key=True),))
    return ev.TableCreated(db_id=db_id, table_id=table_id, name=name, keys_model="DUPLICATE", table_schema=schema,
                           partition_kind="UNPARTITIONED",
                           partitions=(Partition(partition_id=1000 + table_id, name=name, buckets=1),),
                           distribution=Distribution(columns=("k",)), next_column_id=2)


@pytest.fixture
def folder(tmp_path: Path) -> Iterator[Folder]:
    projection = Projection(tmp_path / "p")
    yield Folder(projection, 0)
    projection.close()


def test_lookups_answer_what_the_walk_answered_through_a_random_ddl_history(folder: Folder) -> None:
    """Databases created and dropped (and created again under the same name), tables created, renamed,
    dropped, recovered, replaced with and without swap and purged, views created and dropped, names in
    any case: after every event, every lookup answers the very object the walk over the catalog found."""
    rng = random.Random(20)
    p = folder.projection
    next_id = 1
    live_dbs: list[int] = []
    for _ in range(400):
        tables = [t for t in p.tables.values() if t.db_id in live_dbs]
        live = [t for t in tables if t.dropped_ts_ms is None]
        dropped = [t for t in tables if t.dropped_ts_ms is not None]
        views = list(p.views.values())
        choice = rng.random()
        next_id += 1
        if not live_dbs or choice < 0.06:
            folder.apply(ev.DatabaseCreated(db_id=next_id, name=rng.choice(("d1", "d2", "D1"))), table_id=None)
            live_dbs.append(next_id)
        elif choice < 0.09 and len(live_dbs) > 1:
            db_id = live_dbs.pop(rng.randrange(len(live_dbs)))
            folder.apply(ev.DatabaseDropped(db_id=db_id, name=p.databases[db_id].name), table_id=None)
        elif choice < 0.40 or not live:
            folder.apply(_table(rng.choice(live_dbs), next_id, rng.choice(NAMES)), table_id=next_id)
        elif choice < 0.50:
            t = rng.choice(live)
            folder.apply(ev.TableRenamed(table_id=t.table_id, name=rng.choice(NAMES)), table_id=t.table_id)
        elif choice < 0.60:
            t = rng.choice(live)
            folder.apply(ev.TableDropped(table_id=t.table_id, force=rng.random() < 0.3), table_id=t.table_id)
        elif choice < 0.68 and dropped:
            t = rng.choice(dropped)
            folder.apply(ev.TableRecovered(table_id=t.table_id), table_id=t.table_id)
        elif choice < 0.78 and len(live) > 1:
            a, b = rng.sample(live, 2)
            folder.apply(ev.TableReplaced(table_id=a.table_id, with_table_id=b.table_id, swap=rng.random() < 0.5),
                         table_id=a.table_id)
        elif choice < 0.88:
            column = ViewColumn(name="1", type="TINYINT", source="1")
            folder.apply(ev.ViewCreated(db_id=rng.choice(live_dbs), view_id=next_id, name=rng.choice(NAMES),
                                        definition="SELECT 1", columns=(column,)), table_id=None)
        elif views:
            folder.apply(ev.ViewDropped(view_id=rng.choice(views).view_id), table_id=None)
        _same_answers(p)
    assert len(p.tables) > 50 and any(t.dropped_ts_ms is not None for t in p.tables.values()) and p.views


def test_commits_do_not_rebuild_the_index(folder: Folder, monkeypatch: pytest.MonkeyPatch) -> None:
    """A run of commits (data-only events: the catalog's names stay) costs a lookup no walk of the
    catalog; the next DDL event does rebuild it, and the lookup sees the change."""
    folder.apply(ev.DatabaseCreated(db_id=1, name="d"), table_id=None)
    folder.apply(_table(1, 2, "t"), table_id=2)
    builds: list[catalog_names.Stamp] = []
    original = catalog_names.CatalogNames.of.__func__  # type: ignore[attr-defined]

    def counted(cls: type[catalog_names.CatalogNames], stamp: catalog_names.Stamp, *args: object) -> object:
        builds.append(stamp)
        return original(cls, stamp, *args)

    monkeypatch.setattr(catalog_names.CatalogNames, "of", classmethod(counted))
    p = folder.projection
    assert p.table_by_name(1, "t") is p.tables[2]
    for version in range(2, 30):
        folder.apply(ev.RowsetsCommitted(table_id=2, commit_number=version, label=f"l{version}",
                                         partition_versions={1002: version},
                                         rowsets=(_rowset(f"r{version}", version, version),), num_rows=1),
                     table_id=2)
        found = p.table_by_name(1, "T")
        assert found is p.tables[2] and found.partitions[1002].version == version  # the table as it is now
    assert len(builds) == 1
    folder.apply(ev.TableRenamed(table_id=2, name="u"), table_id=2)
    assert p.table_by_name(1, "t") is None and p.table_by_name(1, "u") is p.tables[2]
    assert len(builds) == 2


def test_an_index_a_fold_outdated_while_it_was_built_is_not_kept(folder: Folder,
                                                                  monkeypatch: pytest.MonkeyPatch) -> None:
    """A rename folded while a lookup builds the index (after it read the stamp): the index it stored
    carries the old stamp, so the next lookup rebuilds it and finds the new name."""
    folder.apply(ev.DatabaseCreated(db_id=1, name="d"), table_id=None)
    folder.apply(_table(1, 2, "t"), table_id=2)
    original = catalog_names.CatalogNames.of.__func__  # type: ignore[attr-defined]
    raced: list[bool] = []

    def racing(cls: type[catalog_names.CatalogNames], stamp: catalog_names.Stamp, *args: object) -> object:
        built = original(cls, stamp, *args)
        if not raced:
            raced.append(True)
            folder.apply(ev.TableRenamed(table_id=2, name="u"), table_id=2)  # lands after the walk
        return built

    monkeypatch.setattr(catalog_names.CatalogNames, "of", classmethod(racing))
    p = folder.projection
    assert p.table_by_name(1, "t") is None  # the live table no longer has the name the index listed
    assert p.table_by_name(1, "u") is p.tables[2]
