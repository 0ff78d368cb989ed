"""A compaction pass that committed a compaction wakes the next pass at once (`CompactionAgent.wake`):
writers that commit faster than one compaction per interval merges would otherwise pile rowsets up. A
pass with nothing to compact leaves the agent to its interval."""

from __future__ import annotations

from pathlib import Path
from typing import Any

from projections.compaction import CUMULATIVE_TRIGGER
from projections.projection import Projection
from schemas import events as ev
from schemas.envelope import EventEnvelope, wrap_event
from schemas.model import Column, Distribution, Partition, Rowset, TableSchema
from streams.compaction_agent import CompactionAgent

TOPIC = "strata.events"


def _log(commits: int) -> list[EventEnvelope]:
    schema = TableSchema(schema_version=1, columns=(Column(unique_id=1, name="k", type="INT", is_key=True),))
    created = ev.TableCreated(db_id=1, table_id=1, name="t", keys_model="DUPLICATE", table_schema=schema,
                              partition_kind="UNPARTITIONED",
                              partitions=(Partition(partition_id=1, name="t", buckets=1),),
                              distribution=Distribution(columns=("k",)), next_column_id=2)
    events = [wrap_event(ev.DatabaseCreated(db_id=1, name="d"), table_id=None, commit_ts_ms=1000, command_id=None),
              wrap_event(created, table_id=1, commit_ts_ms=1001, command_id=None)]
    for v in range(1, commits + 1):
        rowset = Rowset(rowset_id=f"r{v}", partition_id=1, bucket=0, num_rows=1, size_bytes=1, path="p",
                        schema_version=1, checksum="x", start_version=v, end_version=v, visible_ts_ms=0)
        commit = ev.RowsetsCommitted(table_id=1, commit_number=v, label=f"l{v}", partition_versions={1: v},
                                     rowsets=(rowset,), num_rows=1)
        events.append(wrap_event(commit,
                                 table_id=1, commit_ts_ms=2000 + v, command_id=None))
    return events


class _Compactor:
    """The agent's view of a compactor: its projection, and `compact`, which here only counts."""

    def __init__(self, projection: Projection) -> None:
        self.projection = projection
        self.calls: list[tuple[int, int, int, str]] = []

    def compact(self, _cursor: Any, table: Any, partition: Any, bucket: int, kind: str) -> object:
        self.calls.append((table.table_id, partition.partition.partition_id, bucket, kind))
        return object()  # a committed compaction


def _agent(path: Path, commits: int) -> tuple[CompactionAgent, _Compactor]:
    projection = Projection(path)
    for offset, envelope in enumerate(_log(commits)):
        projection.apply(envelope, TOPIC, 0, offset)
    projection.flush()
    compactor = _Compactor(projection)
    return CompactionAgent(compactor), compactor  # type: ignore[arg-type]


def test_a_pass_that_compacted_wakes_the_next(tmp_path: Path) -> None:
    agent, compactor = _agent(tmp_path / "p", CUMULATIVE_TRIGGER + 1)
    try:
        assert not agent.wake.is_set()
        assert agent.sweep() == 1 and compactor.calls == [(1, 1, 0, "cumulative")]
        assert agent.wake.is_set()
        # The pass it wakes scores the tablet again, whether or not the follower has marked it yet.
        assert agent.sweep() == 1 and len(compactor.calls) == 2
    finally:
        compactor.projection.close()


def test_a_pass_with_nothing_due_leaves_the_interval(tmp_path: Path) -> None:
    agent, compactor = _agent(tmp_path / "p", CUMULATIVE_TRIGGER - 1)
    try:
        assert agent.sweep() == 0 and compactor.calls == []
        assert not agent.wake.is_set()
        assert agent.sweep() == 0 and not agent.wake.is_set()  # nothing marked since: nothing scored
    finally:
        compactor.projection.close()
