"""The fold without Kafka: events applied directly, then the version index, cover and checksum."""

from __future__ import annotations

from pathlib import Path

from projections import keys
from projections.projection import Projection
from projections.snapshot import cover_tablet, resolve
from projections.state import PartitionState, RowsetRecord
from schemas import events as ev
from schemas.envelope import EventEnvelope, wrap_event
from schemas.model import Column, Distribution, Partition, Rowset, TableSchema

TOPIC = "strata.events"


def _rowset(rowset_id: str, start: int, end: int, bucket: int = 0) -> Rowset:
    return Rowset(rowset_id=rowset_id, partition_id=1, bucket=bucket, num_rows=1, size_bytes=1, path="p",
                  schema_version=1, checksum="x", start_version=start, end_version=end, visible_ts_ms=0)


def _cover_of(tmp_path: Path, rowsets: list[Rowset], version: int) -> list[Rowset]:
    """The cover walk over a tablet holding exactly `rowsets` (stale or not: the walk ignores it)."""
    projection = Projection(tmp_path / f"cover-{len(list(tmp_path.iterdir()))}")
    for rowset in rowsets:
        projection._put_rowset(1, RowsetRecord(rowset=rowset))
    projection.flush()
    partition = PartitionState(partition=Partition(partition_id=1, name="t", buckets=1), version=version,
                               created_ts_ms=0)
    try:
        return cover_tablet(projection, 1, partition, 0, version)
    finally:
        projection.close()


def test_cover_takes_the_widest_rowsets_that_end_by_the_version(tmp_path: Path) -> None:
    a, b, c, d = _rowset("a", 1, 1), _rowset("b", 2, 2), _rowset("c", 3, 3), _rowset("ab", 1, 2)
    abc = _rowset("abc", 1, 3)

    def cover(rowsets: list[Rowset], version: int) -> list[Rowset]:
        return _cover_of(tmp_path, rowsets, version)

    assert cover([a, b, c], 3) == [a, b, c]
    assert cover([a, b, c, d], 3) == [d, c]
    assert cover([a, b, c, d, abc], 3) == [abc]
    assert cover([a, b, c, d, abc], 2) == [d]      # abc ends after 2: never usable for version 2
    assert cover([a, b, c, d, abc], 1) == [a]
    assert cover([a, c], 3) == [a, c]              # version 2 wrote nothing to this tablet


def _events() -> list[EventEnvelope]:
    schema = TableSchema(schema_version=1, columns=(Column(unique_id=1, name="k", type="INT", is_key=True),))
    created = ev.TableCreated(db_id=1, table_id=1, name="t", keys_model="DUPLICATE", table_schema=schema,
                              partition_kind="UNPARTITIONED", partitions=(Partition(partition_id=1, name="t",
                                                                                    buckets=1),),
                              distribution=Distribution(columns=("k",)), next_column_id=2)
    out = [wrap_event(ev.DatabaseCreated(db_id=1, name="d"), table_id=None, commit_ts_ms=1000, command_id=None),
           wrap_event(created, table_id=1, commit_ts_ms=1001, command_id=None)]
    for v in range(1, 6):
        out.append(wrap_event(ev.RowsetsCommitted(table_id=1, commit_number=v, label=f"l{v}",
                                                  partition_versions={1: v}, rowsets=(_rowset(f"r{v}", v, v),),
                                                  num_rows=1),
                              table_id=1, commit_ts_ms=2000 + 10 * v, command_id=None))
    return out


def _fold(path: Path, events: list[EventEnvelope]) -> Projection:
    projection = Projection(path)
    for offset, envelope in enumerate(events):
        projection.apply(envelope, TOPIC, 0, offset)
    projection.flush()
    return projection


def test_version_index_answers_each_instant_in_one_seek(tmp_path: Path) -> None:
    projection = _fold(tmp_path / "p", _events())
    assert projection.version_at(1, 1, 1999) == 0
    assert projection.version_at(1, 1, 2010) == 1       # inclusive: the commit at T is visible
    assert projection.version_at(1, 1, 2035) == 3
    assert projection.version_at(1, 1, 10**12) == 5
    table = projection.tables[1]
    assert [r.rowset_id for r in resolve(projection, table, 2035).rowsets] == ["r1", "r2", "r3"]
    assert len(resolve(projection, table).rowsets) == 5
    assert projection.label(1, "l3") is not None and projection.label(1, "nope") is None


def test_a_refold_gives_the_same_bytes_and_survives_reopening(tmp_path: Path) -> None:
    events = _events()
    first = _fold(tmp_path / "a", events)
    second = _fold(tmp_path / "b", events)
    assert first.store.checksum() == second.store.checksum()
    digest = first.store.checksum()
    first.close()
    reopened = Projection(tmp_path / "a")
    assert reopened.store.checksum() == digest
    assert reopened.offsets() == {(TOPIC, 0): len(events)}
    assert reopened.tables[1].commit_number == 5


def test_a_fold_reads_its_own_pending_writes_and_only_flush_persists_them(tmp_path: Path) -> None:
    projection = _fold(tmp_path / "p", _events()[:3])
    projection.apply(_events()[3], TOPIC, 0, 3)
    assert [r.rowset.rowset_id for r in projection.rowset_records(1)] == ["r1", "r2"]
    assert projection.version_at(1, 1, 10**12) == 2
    projection.store.discard()
    assert [r.rowset.rowset_id for r in projection.rowset_records(1)] == ["r1"]
    assert projection.version_at(1, 1, 10**12) == 1


def test_overlay_merges_puts_and_deletes_in_key_order(tmp_path: Path) -> None:
    from projections.store import ProjectionStore

    store = ProjectionStore(tmp_path / "s")
    for key in (b"a/1", b"a/3", b"a/5"):
        store.put(key, key)
    store.commit({})
    store.put(b"a/2", b"new")
    store.delete(b"a/3")
    store.put(b"a/5", b"changed")
    store.put(b"a/9", b"last")
    assert list(store.scan(b"a/")) == [(b"a/1", b"a/1"), (b"a/2", b"new"), (b"a/5", b"changed"), (b"a/9", b"last")]
    assert store.seek_for_prev(b"a/4", b"a/") == (b"a/2", b"new")
    assert store.seek_for_prev(b"a/3", b"a/") == (b"a/2", b"new")
    store.delete(b"a/2")
    assert store.seek_for_prev(b"a/4", b"a/") == (b"a/1", b"a/1")
    assert store.seek_for_prev(b"a/0", b"a/") is None


def test_overlay_stays_in_key_order_across_reads_between_writes(tmp_path: Path) -> None:
    """The pending keys are ordered incrementally (only those added since the last read are sorted):
    every read between writes sees them all in key order, deletes and rewrites included."""
    from projections.store import ProjectionStore

    store = ProjectionStore(tmp_path / "s")
    for key in (b"b/10", b"b/30"):
        store.put(key, b"c")
    store.commit({})
    expected = {b"b/10": b"c", b"b/30": b"c"}
    for step, key in enumerate((b"b/20", b"b/05", b"b/40", b"b/25", b"b/10", b"b/30", b"b/20", b"a/1", b"c/1")):
        if step % 3 == 2:
            store.delete(key)
            expected.pop(key, None)
        else:
            store.put(key, b"p%d" % step)
            expected[key] = b"p%d" % step
        in_b = sorted((k, v) for k, v in expected.items() if k.startswith(b"b/"))
        assert list(store.scan(b"b/")) == in_b
        below = [(k, v) for k, v in in_b if k <= b"b/26"]
        assert store.seek_for_prev(b"b/26", b"b/") == (below[-1] if below else None)
    store.commit({})
    assert list(store.scan(b"b/")) == sorted((k, v) for k, v in expected.items() if k.startswith(b"b/"))


def test_scan_before_a_bound_stops_there_in_both_layers(tmp_path: Path) -> None:
    """`scan(prefix, before=…)` (how `decided.forget_before` finds the expired records): committed
    and pending entries below the bound, pending deletes applied, nothing at or past it."""
    from projections.store import ProjectionStore

    store = ProjectionStore(tmp_path / "s")
    for key in (b"kt/1", b"kt/4", b"kt/7"):
        store.put(key, b"c")
    store.commit({})
    store.put(b"kt/2", b"p")
    store.put(b"kt/5", b"p")
    store.delete(b"kt/4")
    assert list(store.scan(b"kt/", before=b"kt/5")) == [(b"kt/1", b"c"), (b"kt/2", b"p")]
    assert list(store.scan(b"kt/", before=b"kt/0")) == []
    assert [k for k, _ in store.scan(b"kt/", before=b"kt/9")] == [b"kt/1", b"kt/2", b"kt/5", b"kt/7"]


def test_a_scratch_store_is_written_without_the_log_and_kept_at_close(tmp_path: Path) -> None:
    """A replay's scratch projection skips RocksDB's write-ahead log; `close` flushes its memtable,
    so what it committed is all there when it is opened again."""
    from projections.store import ProjectionStore

    store = ProjectionStore(tmp_path / "s", scratch=True)
    for n in range(1000):
        store.put(b"r/%04d" % n, b"v%d" % n)
    store.commit({("strata.events", 0): 1000})
    logged = ProjectionStore(tmp_path / "logged")
    logged.put(b"r/0000", b"v0")
    logged.commit({})

    def wal_bytes(path: Path) -> int:
        return sum(f.stat().st_size for f in path.glob("*.log"))

    assert wal_bytes(tmp_path / "s") == 0 and wal_bytes(tmp_path / "logged") > 0
    logged.close()
    store.close()
    reopened = ProjectionStore(tmp_path / "s", read_only=True)
    try:
        assert len(list(reopened.scan(b"r/"))) == 1000 and reopened.offsets() == {("strata.events", 0): 1000}
    finally:
        reopened.close()


def test_unmask_follows_restores_of_restored_states() -> None:
    from projections.state import unmask

    # v1 load, v2 truncate, v3 truncate, v4 RESTORE to v1, v5 RESTORE to v2 (as seen before v4).
    masks = [(1, 4), (2, 5)]
    assert unmask(6, masks, 6) == (6, 6, 5)
    assert unmask(5, masks, 5) == (2, 2, 0)       # back to v2 as it was: v2's truncate is visible
    assert unmask(4, masks, 4) == (1, 1, 0)       # the state of restore v4 is v1
    assert unmask(3, masks, 3) == (3, 3, 0)       # before any restore nothing is hidden


def test_trimming_history_keeps_the_entry_answering_the_horizon_and_every_later_one(tmp_path: Path) -> None:
    # The recycler's pass carries the retention horizon; the fold trims the version index up to it, listing
    # only what lies at or before it (the one kept by the last trim, the ones passed since).
    projection = _fold(tmp_path / "p", _events())  # versions 1…5 committed at 2010, 2020, …, 2050
    prefix = keys.version_prefix(1, 1)

    def instants() -> list[int]:
        return [int(key[len(prefix):]) for key, _ in projection.store.scan(prefix)]

    def recycle(horizon: int, ts: int, offset: int) -> None:
        event = ev.RowsetsRecycled(table_id=1, rowset_ids=(), horizon_ts_ms=horizon)
        projection.apply(wrap_event(event, table_id=1, commit_ts_ms=ts, command_id=None), TOPIC, 0, offset)

    try:
        assert instants() == [2010, 2020, 2030, 2040, 2050]
        recycle(2035, 3000, 100)
        assert instants() == [2030, 2040, 2050]  # the 2030 entry still answers 2035
        assert [projection.version_at(1, 1, t) for t in (2035, 2040, 2049, 2060)] == [3, 4, 4, 5]
        projection.flush()
        recycle(2020, 3100, 101)  # an older horizon trims nothing
        assert instants() == [2030, 2040, 2050]
        recycle(2050, 3200, 102)  # on a commit's instant: that commit's entry answers from there on
        projection.flush()
        assert instants() == [2050]
        assert projection.version_at(1, 1, 2050) == 5 and projection.tables[1].history_horizon_ts_ms == 2050
    finally:
        projection.close()
