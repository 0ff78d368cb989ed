"""The fold of INSERT OVERWRITE and REPLACE WITH TABLE without Kafka: the masks an overwrite leaves
(covers before and after it, what turns stale) and which table a name denoted at each instant."""

from __future__ import annotations

from pathlib import Path

from projections.names import name_holder_at, name_taken_ts_ms
from projections.projection import Projection
from projections.snapshot import cover_tablet, resolve
from schemas import events as ev
from schemas.envelope import EventEnvelope, wrap_event
from schemas.model import Column, Distribution, Partition, Rowset, TableSchema

TOPIC = "strata.events"


def _rowset(rowset_id: str, table_id: int, start: int, end: int) -> Rowset:
    return Rowset(rowset_id=rowset_id, partition_id=table_id, bucket=0, num_rows=1, size_bytes=1, path="p",
                  schema_version=1, checksum="x", start_version=start, end_version=end, visible_ts_ms=0)


def _created(table_id: int, name: str) -> ev.TableCreated:
    schema = TableSchema(schema_version=1, columns=(Column(unique_id=1, name="k", type="INT", is_key=True),))
    return ev.TableCreated(db_id=1, table_id=table_id, name=name, keys_model="DUPLICATE", table_schema=schema,
                           partition_kind="UNPARTITIONED",
                           partitions=(Partition(partition_id=table_id, name=name, buckets=1),),
                           distribution=Distribution(columns=("k",)), next_column_id=2,
                           properties={"enable_time_travel": "true"})


def _load(table_id: int, version: int, rowset_id: str) -> ev.RowsetsCommitted:
    return ev.RowsetsCommitted(table_id=table_id, commit_number=version, label=rowset_id,
                               partition_versions={table_id: version},
                               rowsets=(_rowset(rowset_id, table_id, version, version),), num_rows=1)


def _fold(path: Path, events: list[tuple[int, ev.Event]]) -> Projection:
    projection = Projection(path)
    envelopes: list[EventEnvelope] = [wrap_event(ev.DatabaseCreated(db_id=1, name="d"), table_id=None,
                                                 commit_ts_ms=1, command_id=None)]
    envelopes += [wrap_event(e, table_id=getattr(e, "table_id", None), commit_ts_ms=ts, command_id=None)
                  for ts, e in events]
    for offset, envelope in enumerate(envelopes):
        projection.apply(envelope, TOPIC, 0, offset)
    projection.flush()
    return projection


def _ids(projection: Projection, ts: int | None) -> list[str]:
    return [r.rowset_id for r in resolve(projection, projection.tables[1], ts).rowsets]


def test_overwrite_masks_every_earlier_version_from_later_reads_only(tmp_path: Path) -> None:
    overwrite = ev.TableOverwritten(table_id=1, commit_number=3, label="o", masked_versions={1: 3},
                                    partition_versions={1: 4}, rowsets=(_rowset("new", 1, 4, 4),), num_rows=1)
    projection = _fold(tmp_path / "p", [(10, _created(1, "t")), (20, _load(1, 1, "r1")), (30, _load(1, 2, "r2")),
                                        (40, overwrite), (50, _load(1, 5, "r5"))])
    assert _ids(projection, 30) == ["r1", "r2"]
    assert _ids(projection, 40) == ["new"]
    assert _ids(projection, None) == ["new", "r5"]
    stale = {r.rowset.rowset_id for r in projection.rowset_records(1) if r.stale_ts_ms == 40}
    assert stale == {"r1", "r2"}
    partition = projection.tables[1].partitions[1]
    assert partition.masks == [(0, 3)]
    # A compaction of what the overwrite hid still covers the reads before it.
    assert [r.rowset_id for r in cover_tablet(projection, 1, partition, 0, 2)] == ["r1", "r2"]
    assert projection.commits(1)[-2].kind == "overwrite"


def test_a_name_reads_the_table_that_held_it_at_each_instant(tmp_path: Path) -> None:
    # a (1) and b (2); swap at 100: a is table 2, b table 1; no-swap at 200: a is table 1 again, 2 dropped.
    projection = _fold(tmp_path / "p", [
        (10, _created(1, "a")), (11, _created(2, "b")),
        (100, ev.TableReplaced(table_id=1, with_table_id=2, swap=True)),
        (200, ev.TableReplaced(table_id=2, with_table_id=1, swap=False)),
    ])
    a, dropped = projection.tables[1], projection.tables[2]
    assert (a.name, dropped.name, dropped.dropped_ts_ms) == ("a", "a", 200)
    holders = [name_holder_at(projection, a, t) for t in (50, 99, 100, 150, 199, 200, 300)]
    assert [h.table_id if h is not None else None for h in holders] == [1, 1, 2, 2, 2, 1, 1]
    assert name_taken_ts_ms(a) == 200
    # The swap also gave table 1 the name b from 100 to 200: a read of b then followed the same rule.
    assert [t.ts_ms for t in a.name_takeovers] == [100, 200]
    projection.tables.pop(2)  # purged: the name's past before 200 is gone
    assert name_holder_at(projection, a, 150) is None
    assert name_holder_at(projection, a, 250) is a
