"""Helpers for the sequencer-rule tests (tests/streams/test_rules*.py): decide a command and fold
its event as the sequencer would, build id-path rowsets of the fixture's table, and check refusals."""

from __future__ import annotations

import pytest

from projections.projection import Projection
from schemas import commands as cmd
from schemas import events as ev
from schemas.envelope import wrap_event
from schemas.model import NewRowset
from storage.paths import rowset_path
from streams.rules import Rejected, Rules

FIXTURE_TABLE = 1  # the `state` fixture's table is the log's first (tests/streams/conftest.py)


def fold(state: Projection, command: cmd.Command, ts: int) -> ev.Event:
    """Decides `command` at `ts` and folds its event into `state`; returns the event."""
    decision = Rules(state).decide(command, ts)
    state.apply(wrap_event(decision.event, table_id=decision.table_id, commit_ts_ms=ts, command_id=None),
                "strata.events", 0, -1)
    state.flush()
    return decision.event


def rowset(partition_id: int, rid: str, *, path: str | None = None) -> NewRowset:
    """A one-row rowset of the fixture's table in bucket 0; the sequencer accepts only id-built paths."""
    return NewRowset(rowset_id=rid, partition_id=partition_id, bucket=0, num_rows=1, size_bytes=1,
                     path=rowset_path(FIXTURE_TABLE, partition_id, 0, rid) if path is None else path,
                     schema_version=1, checksum="c")


def rejected(state: Projection, command: cmd.Command, ts: int, code: int, *fragments: str) -> Rejected:
    """Asserts the rules refuse `command` with `code` and a reason naming every fragment."""
    with pytest.raises(Rejected) as caught:
        Rules(state).decide(command, ts)
    assert caught.value.code == code
    for fragment in fragments:
        assert fragment in caught.value.reason, caught.value.reason
    return caught.value
