"""How far back a table's history reaches: the one rule the SQL errors, SHOW TIME TRAVEL and the
recycler share."""

from __future__ import annotations

from projections.state import TableState
from schemas.model import Rowset


def retention_ms(table: TableState, day_s: float) -> int:
    """How far back reads of `table` may go; 0 for tables without time travel."""
    if not table.time_travel:
        return 0
    return int(int(table.properties.get("time_travel_retention_days", "7")) * day_s * 1000)


def earliest_instant_ms(table: TableState, now_ms: int, day_s: float) -> int | None:
    """The earliest instant a time-travel read of `table` can name now; None without time travel.

    History starts when time travel was enabled, reaches back at most the retention, and never
    before what the recycler already removed: neither the version index it trimmed nor a snapshot
    missing a rowset it deleted. A tag caps the trim at its instant but not the deletion of rowsets
    it does not read, so after such a recycle the index reaches further back than whole snapshots do
    (the tag itself still reads: query.tags resolves it apart from this window)."""
    if not table.time_travel or table.time_travel_since_ts_ms is None:
        return None
    return max(table.time_travel_since_ts_ms, table.created_ts_ms, now_ms - retention_ms(table, day_s),
               whole_since_ms(table))


def tag_instants_ms(table: TableState, now_ms: int) -> list[int]:
    """The instants of `table`'s live tags: snapshots whose rowsets must outlive any retention."""
    return sorted({tag.ts_ms for tag in table.tags.values() if tag.live_at(now_ms)})


def needed_by_tags(rowset: Rowset, stale_ts_ms: int | None, instants: list[int]) -> bool:
    """Whether a snapshot at one of `instants` reads `rowset`: it was visible then and not yet
    replaced (compacted, hidden by a restore, or its partition dropped)."""
    return any(rowset.visible_ts_ms <= t and (stale_ts_ms is None or t < stale_ts_ms) for t in instants)


def capped_horizon_ms(table: TableState, horizon_ms: int | None, now_ms: int) -> int | None:
    """A recycle's version-index horizon, never past the oldest live tag: the trim keeps the last
    entry at or before the horizon, so every tag at or after it still resolves."""
    instants = tag_instants_ms(table, now_ms)
    if horizon_ms is None or not instants:
        return horizon_ms
    return min(horizon_ms, instants[0])


def whole_since_ms(table: TableState) -> int:
    """The earliest instant whose snapshot is still whole, so a tag may name it: nothing the recycler
    deleted was visible then, and the version index still resolves it."""
    return max(table.recycled_through_ts_ms or 0, table.history_horizon_ts_ms or 0)
