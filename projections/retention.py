"""How far back a table's history reaches: the one rule the SQL errors, SHOW TIME TRAVEL and the
recycler share."""

from __future__ import annotations

from projections.state import TableState


def retention_ms(table: TableState, day_s: float) -> int:
    """How far back reads of `table` may go; 0 for tables without time travel."""
    if not table.time_travel:
        return 0
    return int(int(table.properties.get("time_travel_retention_days", "7")) * day_s * 1000)


def earliest_instant_ms(table: TableState, now_ms: int, day_s: float) -> int | None:
    """The earliest instant a time-travel read of `table` can name now; None without time travel.

    History starts when time travel was enabled, reaches back at most the retention, and never
    before what the recycler already trimmed."""
    if not table.time_travel or table.time_travel_since_ts_ms is None:
        return None
    return max(table.time_travel_since_ts_ms, table.created_ts_ms, now_ms - retention_ms(table, day_s),
               table.history_horizon_ts_ms or 0)
