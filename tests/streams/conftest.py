"""The `state` fixture of the sequencer-rule tests: a projection folded in memory (no Kafka) holding
database `d` and its RANGE table `t` (id 1) with partitions p1 and p2 of two buckets each; and `config`,
the settings of the stack `infra/test` runs, for the tests that need it."""

from __future__ import annotations

import os
from pathlib import Path

import pytest

from projections.projection import Projection
from schemas import commands as cmd
from schemas.config import Settings, load_settings
from schemas.envelope import wrap_event
from schemas.model import Column, Distribution
from streams.rules import Rules


@pytest.fixture(scope="module")
def config() -> Settings:
    if "STRATA_SQL_PORT" not in os.environ:
        pytest.fail("STRATA_SQL_PORT is not set; run the tests through infra/test")
    return load_settings()


@pytest.fixture()
def state(tmp_path: Path) -> Projection:
    projection = Projection(tmp_path / "seq")
    rules = Rules(projection)
    ts = 1000
    for command in (cmd.CreateDatabase(name="d"),
                    cmd.CreateTable(db="d", name="t", keys_model="DUPLICATE",
                                    columns=(Column(unique_id=1, name="k", type="INT", is_key=True),),
                                    partition_kind="RANGE", partition_columns=("k",),
                                    partitions=(cmd.NewPartition(name="p1", buckets=2),
                                                cmd.NewPartition(name="p2", buckets=2)),
                                    distribution=Distribution(columns=("k",), buckets=2))):
        decision = rules.decide(command, ts)
        projection.apply(wrap_event(decision.event, table_id=decision.table_id, commit_ts_ms=ts, command_id=None),
                         "strata.events", 0, ts - 1000)
        ts += 1
    projection.flush()
    return projection
