"""The sequencer's checks of resources, storage policies and the tables naming them — the races
the SQL handlers cannot close (a DROP between a handler's check and its command, a rowset cooled
meanwhile) — against a projection folded in memory (no Kafka)."""

from __future__ import annotations

from pathlib import Path

import pytest

from projections.projection import Projection
from schemas import commands as cmd
from schemas import events as ev
from schemas.errors import ErrorCode
from schemas.model import Column, Distribution, NewRowset, RowsetMove
from storage.paths import rowset_path
from streams.rules import Rejected, Rules
from tests.streams.ruleskit import fold, rejected

_TS = iter(range(1000, 10**6))


def _apply(state: Projection, command: cmd.Command) -> ev.Event:
    return fold(state, command, next(_TS))


def _rejected(state: Projection, command: cmd.Command, *fragments: str) -> None:
    rejected(state, command, next(_TS), ErrorCode.WRONG_ARGUMENTS, *fragments)


def _table(name: str, properties: dict[str, str] | None = None,
           partition_properties: dict[str, str] | None = None) -> cmd.CreateTable:
    return cmd.CreateTable(db="d", name=name, keys_model="DUPLICATE",
                           columns=(Column(unique_id=1, name="k", type="INT", is_key=True),),
                           partition_kind="RANGE", partition_columns=("k",),
                           partitions=(cmd.NewPartition(name="p1", buckets=1),
                                       cmd.NewPartition(name="p2", buckets=1, properties=partition_properties or {})),
                           distribution=Distribution(columns=("k",), buckets=1), properties=properties or {})


@pytest.fixture()
def state(tmp_path: Path) -> Projection:
    projection = Projection(tmp_path / "seq")
    _apply(projection, cmd.CreateDatabase(name="d"))
    for name in ("r1", "r2"):
        _apply(projection, cmd.CreateResource(name=name, resource_type="s3", properties={"type": "s3"}))
    _apply(projection, cmd.CreateStoragePolicy(name="pol", properties={"storage_resource": "r1",
                                                                       "cooldown_ttl": "60"}))
    return projection


def test_tables_and_partitions_may_name_only_existing_policies(state: Projection) -> None:
    _rejected(state, _table("t", {"storage_policy": "gone"}), "Storage policy 'gone' does not exist")
    _rejected(state, _table("t", partition_properties={"storage_policy": "gone"}), "'gone'")
    _apply(state, _table("t", {"storage_policy": "pol"}))
    table_id = next(iter(state.tables))
    _rejected(state, cmd.AlterTableProperties(table_id=table_id, changes={"storage_policy": "gone"}), "'gone'")
    p1 = min(state.tables[table_id].partitions)
    _rejected(state, cmd.ModifyPartitions(table_id=table_id, partition_ids=(p1,),
                                          changes={"storage_policy": "gone"}), "'gone'")
    _apply(state, cmd.AlterTableProperties(table_id=table_id, changes={"storage_policy": None}))
    assert "storage_policy" not in state.tables[table_id].properties


def test_policies_need_their_resource_and_resources_their_policies_gone(state: Projection) -> None:
    _rejected(state, cmd.CreateStoragePolicy(name="p2", properties={"storage_resource": "gone", "cooldown_ttl": "1"}),
              "Storage resource 'gone' does not exist")
    _rejected(state, cmd.AlterStoragePolicy(name="pol", properties={"storage_resource": "gone", "cooldown_ttl": "1"}),
              "'gone'")
    _rejected(state, cmd.DropResource(name="r1"), "used by storage policy pol")


def test_a_policy_named_by_a_partition_only_cannot_be_dropped(state: Projection) -> None:
    _apply(state, _table("t", partition_properties={"storage_policy": "pol"}))
    _rejected(state, cmd.DropStoragePolicy(name="pol"), "used by table t")
    _apply(state, cmd.DropTable(table_id=next(iter(state.tables)), force=True))
    _apply(state, cmd.DropStoragePolicy(name="pol"))
    assert "pol" not in state.named["storage_policy"]


def test_a_policy_dynamic_partitions_give_their_partitions_is_checked_and_kept(state: Projection) -> None:
    _rejected(state, _table("t", {"dynamic_partition.storage_policy": "gone"}), "'gone'")
    _apply(state, _table("t", {"dynamic_partition.storage_policy": "pol"}))
    _rejected(state, cmd.DropStoragePolicy(name="pol"), "used by table t")


def test_alter_replaces_the_property_set_and_counts_versions(state: Projection) -> None:
    _apply(state, cmd.AlterStoragePolicy(name="pol", properties={"storage_resource": "r1",
                                                                 "cooldown_datetime": "2030-01-01 00:00:00"}))
    policy = state.named["storage_policy"]["pol"]
    assert policy["properties"] == {"storage_resource": "r1", "cooldown_datetime": "2030-01-01 00:00:00"}
    assert policy["version"] == 1
    _apply(state, cmd.AlterResource(name="r1", properties={"s3.root.path": "x"}))
    assert state.named["resource"]["r1"]["properties"] == {"type": "s3", "s3.root.path": "x"}, "resources merge"


def test_the_resource_is_fixed_once_a_governed_partition_has_cooled_data(state: Projection) -> None:
    _apply(state, _table("t", partition_properties={"storage_policy": "pol"}))
    table = next(iter(state.tables.values()))
    p1, p2 = sorted(table.partitions)
    for pid, rid in ((p1, "a"), (p2, "b")):
        _apply(state, cmd.CommitRowsets(table_id=table.table_id, label=rid, num_rows=1, rowsets=(NewRowset(
            rowset_id=rid, partition_id=pid, bucket=0, num_rows=1, size_bytes=1,
            path=rowset_path(table.table_id, pid, 0, rid), schema_version=1,
            checksum="c"),)))
    to_r2 = cmd.AlterStoragePolicy(name="pol", properties={"storage_resource": "r2", "cooldown_ttl": "60"})
    # Data cooled in a partition the policy does not govern (p1 has none) does not count.
    _apply(state, cmd.MoveRowsets(table_id=table.table_id, moves=(
        RowsetMove(rowset_id="a", from_tier="ssd", to_tier="remote:r1",
                   path=rowset_path(table.table_id, p1, 0, "a")),)))
    assert Rules(state).decide(to_r2, next(_TS)).event == ev.StoragePolicyAltered(name="pol",
                                                                                  properties=to_r2.properties)
    _apply(state, cmd.MoveRowsets(table_id=table.table_id, moves=(
        RowsetMove(rowset_id="b", from_tier="ssd", to_tier="remote:r1",
                   path=rowset_path(table.table_id, p2, 0, "b")),)))
    _rejected(state, to_r2, "storage_resource can not be changed", "table t")
    _apply(state, cmd.AlterStoragePolicy(name="pol", properties={"storage_resource": "r1", "cooldown_ttl": "5"}))


def test_moves_are_checked_and_a_resource_holding_cooled_rowsets_cannot_be_dropped(state: Projection) -> None:
    _apply(state, _table("t"))
    table = next(iter(state.tables.values()))
    p1 = min(table.partitions)
    _apply(state, cmd.CommitRowsets(table_id=table.table_id, label="l", num_rows=1, rowsets=(NewRowset(
        rowset_id="a", partition_id=p1, bucket=0, num_rows=1, size_bytes=1,
        path=rowset_path(table.table_id, p1, 0, "a"), schema_version=1, checksum="c"),)))

    def move(rowset_id: str = "a", source: str = "ssd", to: str = "remote:r2") -> cmd.MoveRowsets:
        return cmd.MoveRowsets(table_id=table.table_id, moves=(
            RowsetMove(rowset_id=rowset_id, from_tier=source, to_tier=to,
                       path=rowset_path(table.table_id, p1, 0, "a")),))

    _rejected(state, move(to="remote:nope"), "Resource 'nope' does not exist")
    _rejected(state, move(to="tape"), "unknown tier 'tape'")
    with pytest.raises(Rejected, match="no longer exists"):
        Rules(state).decide(move(rowset_id="zz"), next(_TS))
    with pytest.raises(Rejected, match="is on ssd now, not hdd"):
        Rules(state).decide(move(source="hdd"), next(_TS))
    event = _apply(state, move())
    record = state.rowset_record("a")
    assert isinstance(event, ev.RowsetsMoved) and record is not None and record.rowset.tier == "remote:r2"
    with pytest.raises(Rejected, match="is on remote:r2 now"):  # the same move twice
        Rules(state).decide(move(), next(_TS))
    _rejected(state, cmd.DropResource(name="r2"), "still holds cooled data of table t")
