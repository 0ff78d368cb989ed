"""Which table a name denoted at an instant, across ALTER TABLE … REPLACE WITH TABLE.

A REPLACE moves a name to another table id at one commit (`TableReplaced`); each table keeps the
list of names it took over that way (`TableState.name_takeovers`). A read of a name at an
instant before the table took it reads the table that held the name then — and that table's own
takeovers before that moment are followed in turn. A RENAME carries a table's whole past with it.
"""

from __future__ import annotations

from projections.projection import Projection
from projections.state import TableState


def name_holder_at(projection: Projection, table: TableState, ts_ms: int) -> TableState | None:
    """The table that held `table`'s name at `ts_ms` (`table` itself when it already held it);
    None when that table's history is gone (dropped for good)."""
    holder, before = table, None
    while True:
        taken = [t for t in holder.name_takeovers if before is None or t.ts_ms < before]
        if not taken or ts_ms >= taken[-1].ts_ms:
            return holder
        # Only the takeovers before this one concern the previous holder's past: with swap, it
        # took the other name at this same instant.
        before = taken[-1].ts_ms
        previous = projection.tables.get(taken[-1].previous_table_id)
        if previous is None:
            return None
        holder = previous


def name_taken_ts_ms(table: TableState) -> int | None:
    """When the table last took its name by REPLACE (None: never); its commits before then were
    made under another name."""
    return table.name_takeovers[-1].ts_ms if table.name_takeovers else None
