"""Which commands the log has already answered, and how: the sequencer decides each `command_id`
once (DESIGN §15). A command seen again — a duplicate a producer retry or a forger put on
`strata.commands`, or a replay after a rewind — is recognised here and not decided a second time;
whoever waits for it learns the first outcome, which is already on `strata.events`.

Part of the fold, so it is a pure function of the log like the rest of a projection: one record per
answered command, `k/<command_id>`, plus an age index `kt/<commit ts>/<command_id>` that bounds it.
A command can only come back while it is still on `strata.commands`, whose retention is 7 days
(infra/topics.py); records older than that plus a day of slack are forgotten at each flush,
measured against the newest commit time folded (not the wall clock), so the disk they take is
about a week of commands, whatever the log's length.
"""

from __future__ import annotations

from pydantic import BaseModel

from projections import keys
from projections.state import record_bytes
from projections.store import ProjectionStore
from schemas import events as ev
from schemas.envelope import EventEnvelope

DECIDED = b"k/"
# strata.commands' retention.ms (7 days) plus a day, so a command read on its last day still
# finds its record even if the sequencer was behind.
MEMORY_MS = 8 * 24 * 3600 * 1000


class Outcome(BaseModel):
    """The first answer the log gave a command."""

    event_id: str
    type: str
    commit_ts_ms: int
    code: int = 0
    reason: str = ""

    @property
    def rejected(self) -> bool:
        return self.type == ev.CommandRejected.TYPE


def _key(command_id: str) -> bytes:
    return DECIDED + command_id.encode()


def _age_key(ts_ms: int, command_id: str) -> bytes:
    return keys.DECIDED_AGE + f"{ts_ms:015d}/".encode() + command_id.encode()


def outcome(store: ProjectionStore, command_id: str) -> Outcome | None:
    raw = store.get(_key(command_id))
    return Outcome.model_validate_json(raw) if raw else None


def remember(store: ProjectionStore, envelope: EventEnvelope) -> None:
    """Records the event's command as answered; the first answer wins (a forged second event with
    the same command_id does not rewrite history)."""
    if envelope.command_id is None:
        return
    key = _key(envelope.command_id)
    if store.get(key) is not None:
        return
    payload = envelope.payload
    code, reason = (payload.code, payload.reason) if isinstance(payload, ev.CommandRejected) else (0, "")
    record = Outcome(event_id=envelope.event_id, type=envelope.type, commit_ts_ms=envelope.commit_ts_ms,
                     code=code, reason=reason)
    store.put(key, record_bytes(record))
    store.put(_age_key(envelope.commit_ts_ms, envelope.command_id), b"")


def forget_before(store: ProjectionStore, newest_ts_ms: int) -> int:
    """Drops the records of commands answered more than MEMORY_MS before `newest_ts_ms`; returns
    how many. Run at flush with the newest commit time folded so far, so the result does not
    depend on how the log was cut into batches."""
    horizon = _age_key(max(0, newest_ts_ms - MEMORY_MS), "")
    dropped = 0
    # Bounded by the horizon: a batch's pending records, all newer, are not even listed.
    for key, _ in store.scan(keys.DECIDED_AGE, before=horizon):
        command_id = key[len(keys.DECIDED_AGE) + 16:]
        store.delete(key)
        store.delete(DECIDED + command_id)
        dropped += 1
    return dropped
