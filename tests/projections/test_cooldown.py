"""Cooldown planning without Kafka: which rowsets of a tablet are due, gap-free, and SSD → HDD."""

from __future__ import annotations

from pathlib import Path

from projections.cooldown import local_target, plan_tablet, utc_ms
from projections.projection import Projection
from projections.state import PartitionState
from schemas import events as ev
from schemas.envelope import wrap_event
from schemas.model import Column, Distribution, Partition, Rowset, TableSchema

SECOND = 1000


def _projection(tmp_path: Path, properties: dict[str, str], *, ttl_s: int = 60) -> Projection:
    projection = Projection(tmp_path / "p")
    schema = TableSchema(schema_version=1, columns=(Column(unique_id=1, name="k", type="INT", is_key=True),))
    events = [
        ev.DatabaseCreated(db_id=1, name="d"),
        ev.ResourceCreated(name="r", resource_type="s3", properties={"type": "s3"}),
        ev.StoragePolicyCreated(name="pol", properties={"storage_resource": "r", "cooldown_ttl": str(ttl_s)}),
        ev.TableCreated(db_id=1, table_id=1, name="t", keys_model="DUPLICATE", table_schema=schema,
                        partition_kind="UNPARTITIONED", partitions=(Partition(partition_id=1, name="t", buckets=1),),
                        distribution=Distribution(columns=("k",)), properties=properties, next_column_id=2),
    ]
    for offset, event in enumerate(events):
        projection.apply(wrap_event(event, table_id=None, commit_ts_ms=0, command_id=None), "e", 0, offset)
    projection.flush()
    return projection


def _commit(projection: Projection, version: int, ts_ms: int, tier: str = "ssd") -> Rowset:
    rowset = Rowset(rowset_id=f"r{version}", partition_id=1, bucket=0, num_rows=1, size_bytes=1, path=f"r{version}",
                    tier=tier, schema_version=1, checksum="x", start_version=version, end_version=version,
                    visible_ts_ms=ts_ms)
    event = ev.RowsetsCommitted(table_id=1, commit_number=version, label=f"l{version}",
                                partition_versions={1: version}, rowsets=(rowset,), num_rows=1)
    projection.apply(wrap_event(event, table_id=1, commit_ts_ms=ts_ms, command_id=None), "e", 0, 100 + version)
    projection.flush()
    return rowset


def _partition(projection: Projection) -> PartitionState:
    return projection.tables[1].partitions[1]


def test_a_tablet_cools_gap_free_from_its_lowest_version(tmp_path: Path) -> None:
    projection = _projection(tmp_path, {"storage_policy": "pol"}, ttl_s=60)
    _commit(projection, 1, 0)
    _commit(projection, 2, 100 * SECOND)
    _commit(projection, 3, 10 * SECOND)  # old enough itself, but above a rowset that is not due yet
    table = projection.tables[1]
    plan = plan_tablet(projection, table, _partition(projection), 0, now_ms=61 * SECOND)
    assert [(m.rowset.rowset_id, m.to_tier) for m in plan.moves] == [("r1", "remote:r")]
    assert plan.next_due_ms == 160 * SECOND
    later = plan_tablet(projection, table, _partition(projection), 0, now_ms=160 * SECOND)
    assert [m.rowset.rowset_id for m in later.moves] == ["r1", "r2", "r3"]
    assert later.next_due_ms is None


def test_already_cooled_rowsets_are_skipped_and_without_a_policy_nothing_cools(tmp_path: Path) -> None:
    projection = _projection(tmp_path, {"storage_policy": "pol"}, ttl_s=1)
    _commit(projection, 1, 0, tier="remote:r")
    _commit(projection, 2, 0)
    table = projection.tables[1]
    plan = plan_tablet(projection, table, _partition(projection), 0, now_ms=5 * SECOND)
    assert [m.rowset.rowset_id for m in plan.moves] == ["r2"]
    bare = _projection(tmp_path / "bare", {})
    _commit(bare, 1, 0)
    assert plan_tablet(bare, bare.tables[1], _partition(bare), 0, now_ms=10**12).moves == []


def test_a_partition_policy_overrides_the_table_one(tmp_path: Path) -> None:
    projection = _projection(tmp_path, {})
    projection.apply(wrap_event(ev.PartitionPropertiesChanged(table_id=1, partition_ids=(1,),
                                                              changes={"storage_policy": "pol"}),
                                table_id=1, commit_ts_ms=0, command_id=None), "e", 0, 50)
    _commit(projection, 1, 0)
    plan = plan_tablet(projection, projection.tables[1], _partition(projection), 0, now_ms=61 * SECOND)
    assert [m.to_tier for m in plan.moves] == ["remote:r"]


def test_ssd_data_moves_to_hdd_once_its_cooldown_time_passed(tmp_path: Path) -> None:
    when = "2026-01-01 00:00:00"
    projection = _projection(tmp_path, {"storage_medium": "ssd", "storage_cooldown_time": when})
    _commit(projection, 1, 0)
    table = projection.tables[1]
    before = plan_tablet(projection, table, _partition(projection), 0, now_ms=utc_ms(when) - 1)
    assert before.moves == [] and before.next_due_ms == utc_ms(when)
    after = plan_tablet(projection, table, _partition(projection), 0, now_ms=utc_ms(when))
    assert [(m.rowset.rowset_id, m.to_tier) for m in after.moves] == [("r1", "hdd")]
    hdd = _projection(tmp_path / "hdd", {"storage_medium": "hdd"})
    _commit(hdd, 1, 0)
    assert [m.to_tier for m in plan_tablet(hdd, hdd.tables[1], _partition(hdd), 0, now_ms=0).moves] == ["hdd"]


def test_ssd_data_without_a_cooldown_time_moves_after_the_default(tmp_path: Path) -> None:
    """storage_cooldown_seconds (Doris' storage_cooldown_second) counts from the partition's creation."""
    projection = _projection(tmp_path, {})
    _commit(projection, 1, 0)
    table, partition = projection.tables[1], _partition(projection)
    due = partition.created_ts_ms + 3600 * SECOND
    assert plan_tablet(projection, table, partition, 0, now_ms=due * 10).moves == []  # no default: never
    before = plan_tablet(projection, table, partition, 0, now_ms=due - 1, default_cooldown_s=3600)
    assert before.moves == [] and before.next_due_ms == due
    after = plan_tablet(projection, table, partition, 0, now_ms=due, default_cooldown_s=3600)
    assert [(m.rowset.rowset_id, m.to_tier) for m in after.moves] == [("r1", "hdd")]
    assert local_target(table, partition, due, 3600) == "hdd" and local_target(table, partition, due - 1, 3600) == "ssd"


def test_stale_rowsets_go_cold_at_once_and_a_compaction_output_keeps_its_inputs_write_time(tmp_path: Path) -> None:
    projection = _projection(tmp_path, {"storage_policy": "pol"}, ttl_s=60)
    _commit(projection, 1, 0)
    _commit(projection, 2, 30 * SECOND)
    output = Rowset(rowset_id="r12", partition_id=1, bucket=0, num_rows=2, size_bytes=2, path="r12",
                    schema_version=1, checksum="x", start_version=1, end_version=2, visible_ts_ms=40 * SECOND,
                    newest_write_ts_ms=30 * SECOND)
    compacted = ev.CompactionCommitted(table_id=1, partition_id=1, bucket=0, kind="base",
                                       input_rowset_ids=("r1", "r2"), output=output)
    projection.apply(wrap_event(compacted, table_id=1, commit_ts_ms=40 * SECOND, command_id=None), "e", 0, 200)
    projection.flush()
    plan = plan_tablet(projection, projection.tables[1], _partition(projection), 0, now_ms=41 * SECOND)
    assert sorted(m.rowset.rowset_id for m in plan.moves) == ["r1", "r2"]  # stale: only past reads need them
    assert plan.next_due_ms == 90 * SECOND  # the output is due 60 s after its newest row, not its commit
