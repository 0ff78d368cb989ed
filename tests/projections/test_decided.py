"""The fold remembers each command's first outcome (what the sequencer's dedupe reads), keeps a
forged second answer from rewriting it, and forgets commands older than strata.commands'
retention plus a day — measured on the log's commit times, so any batching gives the same bytes."""

from __future__ import annotations

from pathlib import Path

from projections.decided import MEMORY_MS
from projections.projection import Projection
from schemas import events as ev
from schemas.envelope import EventEnvelope, wrap_event

DAY_MS = 24 * 3600 * 1000


def _event(command_id: str, ts: int, *, rejected: bool = False) -> EventEnvelope:
    payload: ev.Event = (ev.CommandRejected(command_type="CreateDatabase", code=1007, reason="exists") if rejected
                         else ev.DatabaseCreated(db_id=int(ts // DAY_MS) + 1, name=f"d{ts}"))
    return wrap_event(payload, table_id=None, commit_ts_ms=ts, command_id=command_id)


def _fold(path: Path, events: list[EventEnvelope], batch: int) -> Projection:
    projection = Projection(path)
    for offset, envelope in enumerate(events):
        projection.apply(envelope, "strata.events", 0, offset)
        if (offset + 1) % batch == 0:
            projection.flush()
    projection.flush()
    return projection


def test_the_first_outcome_is_remembered_and_a_second_answer_does_not_replace_it(tmp_path: Path) -> None:
    first, forged = _event("c1", DAY_MS), _event("c1", DAY_MS + 5, rejected=True)
    projection = _fold(tmp_path / "p", [first, forged, _event("c2", DAY_MS + 6, rejected=True)], batch=1)
    found = projection.command_outcome("c1")
    assert found is not None and (found.event_id, found.type, found.rejected) == (first.event_id, "DatabaseCreated",
                                                                                 False)
    rejected = projection.command_outcome("c2")
    assert rejected is not None and rejected.rejected and (rejected.code, rejected.reason) == (1007, "exists")
    assert projection.command_outcome("never") is None


def test_commands_past_the_retention_are_forgotten_whatever_the_batching(tmp_path: Path) -> None:
    events = [_event(f"c{day}", day * DAY_MS) for day in range(1, 13)]
    one = _fold(tmp_path / "one", events, batch=1)
    many = _fold(tmp_path / "many", events, batch=5)
    newest = 12 * DAY_MS
    for projection in (one, many):
        kept = {f"c{day}" for day in range(1, 13) if projection.command_outcome(f"c{day}") is not None}
        assert kept == {f"c{day}" for day in range(1, 13) if day * DAY_MS >= newest - MEMORY_MS}
        assert "c4" in kept and "c3" not in kept
    assert one.store.checksum() == many.store.checksum()
