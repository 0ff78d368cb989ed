"""Folding a batch of records read from `strata.events` into a projection, and flushing it.

The batch is applied inside `Projection.batch`, whose drafts outlive their event (a run of commits
to one table copies it once). An event the fold cannot apply is known only when its handler raises,
possibly halfway through a draft that earlier events of the batch share; the batch is then forgotten
(`Projection.abandon`) and folded again one event at a time, where a failing event publishes
nothing and is skipped. Both ways give the same state, byte for byte: the second is how every event
was folded before batches kept drafts, and stays the definition.
"""

from __future__ import annotations

from collections.abc import Callable

from projections.projection import Projection
from schemas.envelope import EventEnvelope

# (topic, partition, offset, the record's event — None for a record that could not be decoded).
Record = tuple[str, int, int, EventEnvelope | None]
# Told of each event the fold could not apply (skipped): the event, topic, partition, offset.
Skipped = Callable[[EventEnvelope, str, int, int], None]


def fold_batch(projection: Projection, records: list[Record], skipped: Skipped) -> list[EventEnvelope]:
    """Applies `records` in order and flushes them with their offsets; returns the events applied.
    An undecodable record, and an event the fold cannot apply, only move the offset past it."""
    try:
        with projection.batch():
            applied = _apply(projection, records, None)
    except Exception:  # noqa: BLE001 - an event the fold cannot apply: folded again, one at a time
        projection.abandon()
        applied = _apply(projection, records, skipped)
    projection.flush()
    return applied


def _apply(projection: Projection, records: list[Record], skipped: Skipped | None) -> list[EventEnvelope]:
    """Without `skipped` (inside `Projection.batch`) the first event that raises ends the pass."""
    applied: list[EventEnvelope] = []
    for topic, partition, offset, envelope in records:
        if envelope is None:
            projection.advance(topic, partition, offset)
            continue
        if skipped is None:
            projection.apply(envelope, topic, partition, offset)
            applied.append(envelope)
            continue
        try:
            projection.apply(envelope, topic, partition, offset)
        except Exception:  # noqa: BLE001 - one event the fold cannot apply must not stop every replica
            skipped(envelope, topic, partition, offset)
            projection.advance(topic, partition, offset)
            continue
        applied.append(envelope)
    return applied
