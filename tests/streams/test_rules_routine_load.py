"""The sequencer's routine load decisions (no Kafka): a batch commits only where the job's last one
ended, error rows past max_error_number pause the job in the same fold, and state changes follow
Doris' transitions."""

from __future__ import annotations

import pytest

from projections.projection import Projection
from schemas import commands as cmd
from schemas import events as ev
from schemas.errors import ErrorCode
from schemas.model import LoadProgress, RoutineLoadSpec
from streams.rules import Rejected, Rules
from tests.streams.ruleskit import fold, rowset

SPEC = RoutineLoadSpec(broker_list="b", topic="src", start_offsets={0: -2, 1: 10}, max_error_number=2,
                       max_batch_rows=10)


def _job(state: Projection) -> tuple[int, str]:
    table_id = next(iter(state.tables))
    event = fold(state, cmd.ChangeRoutineLoad(db="d", job="J", state="RUNNING", table_id=table_id, spec=SPEC), 1500)
    assert isinstance(event, ev.RoutineLoadChanged) and event.job_id == 1
    return table_id, next(iter(state.routine_loads))


def _batch(state: Projection, table_id: int, key: str, start: dict[int, int], end: dict[int, int], *,
           errors: int = 0, rows: int = 1, label: str = "") -> ev.Event:
    partition = min(state.tables[table_id].partitions)
    load = LoadProgress(job=key, topic="src", start_offsets=start, end_offsets=end, error_rows=errors,
                        last_error="bad" if errors else "")
    rowset_id = "".join(ch for ch in f"r{label or start}" if ch.isalnum())  # rowset ids are alphanumeric
    rowsets = (rowset(partition, rowset_id),) if rows else ()
    return fold(state, cmd.CommitRowsets(table_id=table_id, label=label or f"l{start}", rowsets=rowsets,
                                           num_rows=rows, load=load), 2000)


def test_a_batch_commits_only_where_the_last_one_ended(state: Projection) -> None:
    table_id, key = _job(state)
    assert isinstance(_batch(state, table_id, key, {0: -2, 1: 10}, {0: 5, 1: 12}), ev.RowsetsCommitted)
    assert state.routine_loads[key].progress == {0: 5, 1: 12} and state.routine_loads[key].loaded_rows == 1
    with pytest.raises(Rejected) as replayed:  # the same records again (a zombie, a retry after a crash)
        _batch(state, table_id, key, {0: 0}, {0: 5}, label="again")
    assert replayed.value.code == ErrorCode.CONFLICT and "ended at 5" in replayed.value.reason
    with pytest.raises(Rejected):
        _batch(state, table_id, key, {2: 0}, {2: 1}, label="other")  # not one of the job's partitions
    # A batch whose records were all bad commits no rows but still moves the offsets.
    progressed = _batch(state, table_id, key, {0: 5}, {0: 6}, errors=1, rows=0)
    assert isinstance(progressed, ev.RoutineLoadProgressed)
    job = state.routine_loads[key]
    assert job.progress == {0: 6, 1: 12} and job.error_rows == 1 and job.state == "RUNNING"
    assert state.tables[table_id].commit_number == 1, "an empty batch is no commit of the table"


def test_too_many_error_rows_in_a_window_pause_the_job(state: Projection) -> None:
    table_id, key = _job(state)
    _batch(state, table_id, key, {0: -2}, {0: 3}, errors=2, label="a")
    assert state.routine_loads[key].state == "RUNNING"
    _batch(state, table_id, key, {0: 3}, {0: 4}, errors=1, label="b")
    job = state.routine_loads[key]
    assert job.state == "PAUSED" and "max_error_number is 2" in job.reason and "bad" in job.reason


def test_state_changes_follow_the_allowed_transitions(state: Projection) -> None:
    table_id, key = _job(state)
    rules = Rules(state)
    with pytest.raises(Rejected, match="already exists"):
        rules.decide(cmd.ChangeRoutineLoad(db="d", job="j", state="RUNNING", table_id=table_id, spec=SPEC), 1)
    with pytest.raises(Rejected, match="can only be changed to RUNNING from PAUSED"):
        rules.decide(cmd.ChangeRoutineLoad(db="d", job="J", state="RUNNING", table_id=table_id,
                                           from_states=("PAUSED",)), 1)
    fold(state, cmd.ChangeRoutineLoad(db="d", job="J", state="STOPPED", table_id=table_id), 3000)
    with pytest.raises(Rejected, match="STOPPED"):
        _batch(state, table_id, key, {0: -2}, {0: 1}, label="late")
    with pytest.raises(Rejected, match="does not exist"):
        rules.decide(cmd.ChangeRoutineLoad(db="d", job="nobody", state="PAUSED", table_id=table_id), 1)
    # A stopped job's name can be used again.
    event = fold(state, cmd.ChangeRoutineLoad(db="d", job="J", state="RUNNING", table_id=table_id, spec=SPEC), 4000)
    assert isinstance(event, ev.RoutineLoadChanged) and event.job_id == 2


def test_a_job_stops_with_its_table(state: Projection) -> None:
    table_id, key = _job(state)
    fold(state, cmd.DropTable(table_id=table_id), 5000)
    assert state.routine_loads[key].state == "STOPPED" and "dropped" in state.routine_loads[key].reason
