"""Batches folded with drafts kept across events (`projections.batches`) give the bytes, catalog and
counts of folding every event alone — also when an event in the middle cannot be applied, halfway
through a table the batch's earlier events changed."""

from __future__ import annotations

from pathlib import Path

from projections.batches import Record, fold_batch
from projections.projection import Projection
from schemas import events as ev
from schemas.envelope import EventEnvelope, wrap_event
from schemas.model import Column, Distribution, Partition, Rowset, TableSchema

TOPIC = "strata.events"


def _rowset(rowset_id: str, partition_id: int, version: int) -> Rowset:
    return Rowset(rowset_id=rowset_id, partition_id=partition_id, bucket=0, num_rows=1, size_bytes=1, path="p",
                  schema_version=1, checksum="x", start_version=version, end_version=version, visible_ts_ms=0)


def _commit(table_id: int, versions: dict[int, int], ts: int, rowsets: tuple[Rowset, ...]) -> EventEnvelope:
    label = f"l{ts}"
    return wrap_event(ev.RowsetsCommitted(table_id=table_id, commit_number=0, label=label, partition_versions=versions,
                                          rowsets=rowsets, num_rows=len(rowsets)),
                      table_id=table_id, commit_ts_ms=ts, command_id=f"c{ts}")


def _created(table_id: int, name: str, ts: int) -> EventEnvelope:
    schema = TableSchema(schema_version=1, columns=(Column(unique_id=1, name="k", type="INT", is_key=True),))
    created = ev.TableCreated(db_id=1, table_id=table_id, name=name, keys_model="DUPLICATE", table_schema=schema,
                              partition_kind="RANGE", partitions=(Partition(partition_id=table_id * 10, name="p1",
                                                                            buckets=1),
                                                                  Partition(partition_id=table_id * 10 + 1,
                                                                            name="p2", buckets=1)),
                              distribution=Distribution(columns=("k",)), next_column_id=2)
    return wrap_event(created, table_id=table_id, commit_ts_ms=ts, command_id=f"c{ts}")


def _log() -> list[EventEnvelope]:
    """Commits to two tables, a catalog change between them, and one commit that fails halfway: its
    first partition exists (its version is bumped in the draft) and its second does not."""
    events = [wrap_event(ev.DatabaseCreated(db_id=1, name="d"), table_id=None, commit_ts_ms=1000, command_id="c1000"),
              _created(1, "a", 1001), _created(2, "b", 1002)]
    ts = 2000
    for v in range(1, 4):
        ts += 1
        events.append(_commit(1, {10: v}, ts, (_rowset(f"a{v}", 10, v),)))
    ts += 1
    events.append(_commit(1, {11: 1, 99: 1}, ts, (_rowset("bad", 11, 1),)))  # partition 99: none
    ts += 1
    events.append(wrap_event(ev.TablePropertiesChanged(table_id=1, changes={"comment_x": "y"}), table_id=1,
                             commit_ts_ms=ts, command_id=f"c{ts}"))
    for v in range(4, 7):
        ts += 1
        events.append(_commit(1, {10: v}, ts, (_rowset(f"a{v}", 10, v),)))
        ts += 1
        events.append(_commit(2, {20: v - 3}, ts, (_rowset(f"b{v}", 20, v - 3),)))
    ts += 1
    events.append(wrap_event(ev.DeleteCommitted(table_id=2, commit_number=0, partition_versions={20: 4},
                                                        predicate="k = 1"),
                             table_id=2, commit_ts_ms=ts, command_id=f"c{ts}"))
    return events


def _records(events: list[EventEnvelope]) -> list[Record]:
    return [(TOPIC, 0, offset, envelope) for offset, envelope in enumerate(events)]


def _fold_alone(path: Path, events: list[EventEnvelope]) -> tuple[Projection, int]:
    """Every event applied alone, a failing one skipped: the fold as it was defined before batches."""
    projection = Projection(path)
    skipped = 0
    for offset, envelope in enumerate(events):
        try:
            projection.apply(envelope, TOPIC, 0, offset)
        except Exception:  # noqa: BLE001 - the event the log cannot apply
            skipped += 1
            projection.advance(TOPIC, 0, offset)
    projection.flush()
    return projection, skipped


def test_a_batch_with_a_failing_event_folds_as_every_event_alone(tmp_path: Path) -> None:
    events = _log()
    alone, skipped_alone = _fold_alone(tmp_path / "alone", events)
    batched = Projection(tmp_path / "batched")
    skipped: list[int] = []
    applied = fold_batch(batched, _records(events), lambda envelope, topic, partition, offset: skipped.append(offset))
    try:
        assert skipped_alone == 1 and skipped == [6]
        assert len(applied) == len(events) - 1 and events[6] not in applied
        assert batched.store.checksum() == alone.store.checksum()
        assert batched.offsets() == alone.offsets() == {(TOPIC, 0): len(events)}
        assert {i: t.model_dump() for i, t in batched.tables.items()} == \
            {i: t.model_dump() for i, t in alone.tables.items()}
        # The failed commit left nothing of itself in the catalog: partition 11 was never bumped.
        assert batched.tables[1].partitions[11].version == 0
        assert batched.tables[1].partitions[10].version == 6 and batched.tables[1].commit_number == 6
    finally:
        alone.close()
        batched.close()


def test_batches_cut_anywhere_give_the_same_bytes(tmp_path: Path) -> None:
    events = [e for i, e in enumerate(_log()) if i != 6]
    alone, _ = _fold_alone(tmp_path / "alone", events)
    records = _records(events)
    try:
        for size in (1, 2, 5, len(records)):
            batched = Projection(tmp_path / f"batched-{size}")
            try:
                for start in range(0, len(records), size):
                    fold_batch(batched, records[start:start + size], lambda *_: None)
                assert batched.store.checksum() == alone.store.checksum(), size
            finally:
                batched.close()
    finally:
        alone.close()


def test_a_batch_never_changes_a_published_table_and_publishes_at_its_end(tmp_path: Path) -> None:
    events = _log()[:6]  # the catalog, then three commits to table a
    projection = Projection(tmp_path / "p")
    try:
        fold_batch(projection, _records(events[:3]), lambda *_: None)
        published = projection.tables[1]
        before = published.model_dump()
        seen: list[object] = []
        with projection.batch():
            for offset, envelope in enumerate(events[3:], start=3):
                projection.apply(envelope, TOPIC, 0, offset)
                seen.append(projection.tables[1])
        assert published.model_dump() == before  # readers holding it see it unchanged
        assert all(table is published for table in seen)  # nothing published mid-batch
        assert projection.tables[1].commit_number == 3 and projection.tables[1].partitions[10].version == 3
    finally:
        projection.close()


def test_abandon_forgets_what_was_folded_since_the_flush(tmp_path: Path) -> None:
    events = _log()[:6]
    projection = Projection(tmp_path / "p")
    try:
        fold_batch(projection, _records(events[:4]), lambda *_: None)
        checksum, generation = projection.store.checksum(), projection.catalog_generation
        with projection.batch():
            for offset, envelope in enumerate(events[4:], start=4):
                projection.apply(envelope, TOPIC, 0, offset)
        projection.abandon()
        assert projection.tables[1].commit_number == 1 and projection.offsets() == {(TOPIC, 0): 4}
        assert projection.command_outcome("c2002") is None
        assert projection.catalog_generation > generation
        projection.flush()
        assert projection.store.checksum() == checksum  # as if the batch had never been folded …
        fold_batch(projection, _records(events)[4:], lambda *_: None)
        alone, _ = _fold_alone(tmp_path / "alone", events)
        try:  # … and folding it again gives what one pass gives
            assert projection.store.checksum() == alone.store.checksum()
        finally:
            alone.close()
    finally:
        projection.close()


def test_after_abandon_a_caller_holding_the_catalog_sees_what_is_folded_next(tmp_path: Path) -> None:
    """The SQL server's login check holds `projection.users`: an abandoned batch must not leave it a stale
    copy while the fold goes on in a new one (every login of a user created after the abandon was
    refused). `tables` and `databases` are copy-on-write: a reader iterating the ones it took keeps them
    whole, and the projection's new ones hold what is folded next."""
    events = _log()[:6]
    projection = Projection(tmp_path / "p")
    try:
        fold_batch(projection, _records(events[:3]), lambda *_: None)
        users, tables, databases = projection.users, projection.tables, projection.databases
        held_tables, held_databases = dict(tables), dict(databases)  # keys: events replace values in place
        with projection.batch():
            for offset, envelope in enumerate(events[3:], start=3):
                projection.apply(envelope, TOPIC, 0, offset)
        projection.abandon()
        created = wrap_event(ev.UserCreated(name="alice", auth_string="*X"), table_id=None, commit_ts_ms=3000,
                             command_id="c3000")
        fold_batch(projection, [(TOPIC, 0, 3, created), *_records(events)[3:]], lambda *_: None)
        assert users is projection.users and "alice" in users
        # Never emptied under a reader (abandon used to clear and refill them in place).
        assert tables is not projection.tables and sorted(tables) == sorted(held_tables) != []
        assert databases is not projection.databases and sorted(databases) == sorted(held_databases) != []
        assert projection.tables[1].commit_number == 3 and 1 in projection.databases
    finally:
        projection.close()
