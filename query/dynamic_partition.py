"""SHOW DYNAMIC PARTITION TABLES: the dynamic partition settings of a database's tables, in Doris' shape.

The properties are checked where they are set (query/table_definition.py); the partitions
themselves are created and dropped by the worker's scheduler.
"""

from __future__ import annotations

from datetime import datetime

from projections.dynamic_partitions import PREFIX, DynamicPartitionError, DynamicPartitionSpec, parse_spec
from projections.state import TableState
from query.context import Context, Rows, SessionState
from query.parser import statements as st
from query.reads import session_zone

COLUMNS = ["TableName", "Enable", "TimeUnit", "Start", "End", "Prefix", "Buckets", "ReplicationNum", "StartOf",
           "LastUpdateTime", "LastSchedulerTime", "State", "LastCreatePartitionMsg", "LastDropPartitionMsg",
           "ReservedHistoryPeriods"]
_WEEKDAYS = ("MONDAY", "TUESDAY", "WEDNESDAY", "THURSDAY", "FRIDAY", "SATURDAY", "SUNDAY")
# The commits the scheduler (or a user) leaves when it adds or drops a partition.
_PARTITION_COMMITS = ("add_partition", "drop_partition")


def ordinal(n: int) -> str:
    """1st, 2nd, 3rd, 4th, …, 11th, 12th, 13th, 21st (Doris' Util.ordinal)."""
    suffix = "th" if 10 <= n % 100 <= 20 else {1: "st", 2: "nd", 3: "rd"}.get(n % 10, "th")
    return f"{n}{suffix}"


def start_of(spec: DynamicPartitionSpec) -> str:
    if spec.time_unit == "WEEK":
        return _WEEKDAYS[spec.start_day_of_week - 1]
    if spec.time_unit == "MONTH":
        return f"{ordinal(spec.start_day_of_month)} of month"
    return "NONE"


def _last_partition_change(ctx: Context, session: SessionState, table: TableState) -> str | None:
    stamps = [c.ts_ms for c in ctx.projection.commits(table.table_id) if c.kind in _PARTITION_COMMITS]
    if not stamps:
        return None
    return datetime.fromtimestamp(max(stamps) / 1000, tz=session_zone(session)).strftime("%Y-%m-%d %H:%M:%S")


def show_dynamic_partition_tables(ctx: Context, session: SessionState, s: st.ShowDynamicPartitionTables) -> Rows:
    db_id, _ = ctx.database_id(session, s.db)
    rows = []
    for table in ctx.projection.tables_of(db_id):
        if not any(key.startswith(PREFIX) for key in table.properties):
            continue
        changed = _last_partition_change(ctx, session, table)
        try:
            spec = parse_spec(table.properties)
        except DynamicPartitionError as exc:
            # Checked when set, so only properties written before a rule existed get here.
            props = table.properties
            rows.append((table.name, props.get(PREFIX + "enable", "true"), props.get(PREFIX + "time_unit", ""),
                         props.get(PREFIX + "start", ""), props.get(PREFIX + "end", ""),
                         props.get(PREFIX + "prefix", "p"), props.get(PREFIX + "buckets", ""), "1", "NONE",
                         changed, changed, "ERROR", str(exc), "", "NULL"))
            continue
        if spec is None:
            continue
        rows.append((table.name, "true" if spec.enable else "false", spec.time_unit, str(spec.start), str(spec.end),
                     spec.prefix, str(spec.buckets or table.distribution.buckets), "1", start_of(spec), changed,
                     changed, "NORMAL", "", "", "NULL"))
    return Rows(COLUMNS, rows)
