"""The sequencer's side of routine-load privileges (issue #15, no Kafka): no job reads Strata's own
topics, an ingest topic needs LOAD_PRIV on its table, and every batch commits with the creator's
privileges as they are when it commits."""

from __future__ import annotations

import pytest

from projections.projection import Projection
from schemas import commands as cmd
from schemas.errors import ErrorCode
from schemas.model import LoadProgress, RoutineLoadSpec
from tests.streams.ruleskit import fold, rejected, rowset

TABLE = 1


def _spec(topic: str = "src", user: str = "alice") -> RoutineLoadSpec:
    return RoutineLoadSpec(broker_list="b", topic=topic, start_offsets={0: 0}, user=user)


def _create(state: Projection, spec: RoutineLoadSpec, ts: int = 1500) -> None:
    fold(state, cmd.ChangeRoutineLoad(db="d", job="j", state="RUNNING", table_id=TABLE, spec=spec), ts)


def _refused(state: Projection, command: cmd.Command, code: ErrorCode, fragment: str) -> None:
    rejected(state, command, 3000, code, fragment)


def _batch(start: int) -> cmd.CommitRowsets:
    load = LoadProgress(job="1/j", topic="src", start_offsets={0: start}, end_offsets={0: start + 1})
    return cmd.CommitRowsets(table_id=TABLE, label=f"b{start}", num_rows=1, rowsets=(rowset(1, f"r{start}"),),
                             load=load)


@pytest.fixture
def alice(state: Projection) -> Projection:
    fold(state, cmd.CreateUser(name="alice"), 1100)
    fold(state, cmd.ChangeGrants(name="alice", db="d", table="t", privileges=("LOAD_PRIV",)), 1101)
    return state


@pytest.mark.parametrize("topic", ["strata.events", "strata.commands", "strata.dlq", " STRATA.events"])
def test_strata_topics_are_never_a_source(alice: Projection, topic: str) -> None:
    for user in ("alice", "root"):
        _refused(alice, cmd.ChangeRoutineLoad(db="d", job="j", state="RUNNING", table_id=TABLE,
                                              spec=_spec(topic, user)),
                 ErrorCode.SPECIFIC_ACCESS_DENIED, "one of Strata's own topics")


def test_an_ingest_topic_needs_load_priv_on_its_table(alice: Projection) -> None:
    _refused(alice, cmd.ChangeRoutineLoad(db="d", job="j", state="RUNNING", table_id=TABLE,
                                          spec=_spec("strata.ingest.d.other")),
             ErrorCode.TABLE_ACCESS_DENIED, "needs LOAD_PRIV on d.other")
    _create(alice, _spec("strata.ingest.d.t"))
    assert alice.routine_loads["1/j"].spec.user == "alice"


def test_a_batch_commits_with_the_creators_privileges_at_commit_time(alice: Projection) -> None:
    _create(alice, _spec())
    assert fold(alice, _batch(0), 2000).TYPE == "RowsetsCommitted"
    fold(alice, cmd.ChangeGrants(name="alice", db="d", table="t", privileges=("LOAD_PRIV",), revoke=True), 2001)
    _refused(alice, _batch(1), ErrorCode.TABLE_ACCESS_DENIED, "the job's user 'alice' no longer has LOAD_PRIV on d.t")
    fold(alice, cmd.ChangeGrants(name="alice", db="d", table="*", privileges=("LOAD_PRIV",)), 2002)
    assert fold(alice, _batch(1), 2003).TYPE == "RowsetsCommitted", "a grant on d.* covers d.t"
    fold(alice, cmd.DropUser(name="alice"), 2004)
    _refused(alice, _batch(2), ErrorCode.TABLE_ACCESS_DENIED, "the job's user 'alice' was dropped")


def test_a_job_created_before_the_user_field_loads_as_root(state: Projection) -> None:
    _create(state, RoutineLoadSpec.model_validate({"broker_list": "b", "topic": "src", "start_offsets": {0: 0}}))
    assert state.routine_loads["1/j"].spec.user == "root"
    assert fold(state, _batch(0), 2000).TYPE == "RowsetsCommitted"
