"""AUTO PARTITION (Doris 2.1): the partitions a load creates for rows no partition holds.

RANGE tables partition by `date_trunc(col, unit)`: a value's partition is [trunc(value), trunc(value) +
1 unit), named `p` + its lower bound as yyyyMMddHHmmss (`p20230416000000`, what Doris'
`auto_partition_name('range', unit, value)` gives). LIST tables get one partition per new value,
named `p` + each column's value followed by its length (`pBeijing7`, Doris' "value + length" rule;
characters other than ASCII letters and digits are written as their hex code point). NULL values
create nothing: such rows stay without a partition and the load refuses them.
"""

from __future__ import annotations

from datetime import date, datetime, timedelta
from typing import Any

import pyarrow as pa

from projections.state import PartitionState, TableState
from schemas.model import Column, Partition, PartitionBound

DATE_UNITS = ("year", "quarter", "month", "week", "day")
_STEP = {"week": timedelta(weeks=1), "day": timedelta(days=1), "hour": timedelta(hours=1),
         "minute": timedelta(minutes=1), "second": timedelta(seconds=1)}


class AutoPartitionClash(Exception):
    """A new partition's range would overlap a partition the table already has."""


def _truncated(moment: datetime, unit: str) -> datetime:
    if unit == "year":
        return moment.replace(month=1, day=1, hour=0, minute=0, second=0, microsecond=0)
    if unit == "quarter":
        return moment.replace(month=(moment.month - 1) // 3 * 3 + 1, day=1, hour=0, minute=0, second=0, microsecond=0)
    if unit == "month":
        return moment.replace(day=1, hour=0, minute=0, second=0, microsecond=0)
    if unit == "week":  # weeks start on Monday, as Doris' date_trunc(…, 'week')
        return _truncated(moment, "day") - timedelta(days=moment.weekday())
    if unit == "day":
        return moment.replace(hour=0, minute=0, second=0, microsecond=0)
    if unit == "hour":
        return moment.replace(minute=0, second=0, microsecond=0)
    if unit == "minute":
        return moment.replace(second=0, microsecond=0)
    return moment.replace(microsecond=0)


def _following(lower: datetime, unit: str) -> datetime | None:
    """Where the partition starting at `lower` ends; None past 9999-12-31 (the range is unbounded)."""
    try:
        if unit == "year":
            return lower.replace(year=lower.year + 1)
        if unit in ("quarter", "month"):
            index = lower.year * 12 + lower.month - 1 + (3 if unit == "quarter" else 1)
            return lower.replace(year=index // 12, month=index % 12 + 1)
        return lower + _STEP[unit]
    except (OverflowError, ValueError):
        return None


def _bound_text(moment: datetime, column: Column) -> str:
    return moment.strftime("%Y-%m-%d") if column.type.upper().startswith("DATE") and \
        not column.type.upper().startswith("DATETIME") else moment.strftime("%Y-%m-%d %H:%M:%S")


def _value_text(value: Any) -> str:
    if isinstance(value, datetime):
        return value.strftime("%Y-%m-%d %H:%M:%S")
    if isinstance(value, date):
        return value.isoformat()
    if isinstance(value, bool):
        return "true" if value else "false"
    return str(value)


def _name_part(text: str) -> str:
    encoded = "".join(ch if ch.isascii() and ch.isalnum() else f"{ord(ch):x}" for ch in text)
    return f"{encoded}{len(text)}"


def _ranges_overlap(a: PartitionBound, b: PartitionBound) -> bool:
    # Bounds of one DATE/DATETIME column in one fixed-width spelling compare as text.
    below = a.upper is not None and b.lower is not None and a.upper <= b.lower
    above = b.upper is not None and a.lower is not None and b.upper <= a.lower
    return not (below or above)


def plan(table: TableState, unrouted: pa.Table, next_partition_id: int) -> tuple[Partition, ...]:
    """The partitions to create for `unrouted` (typed rows, file columns, that no partition holds),
    with ids from `next_partition_id` on. Raises AutoPartitionClash when one would overlap a range
    partition the table has."""
    auto = table.auto_partition
    if auto is None or unrouted.num_rows == 0:
        return ()
    columns = [c for c in (table.schema_now.column(n) for n in table.partition_columns) if c is not None]
    wanted: dict[str, PartitionBound] = {}
    if auto.unit is not None:
        column = columns[0]
        for value in unrouted.column(column.file_column).drop_null().unique().to_pylist():
            moment = value if isinstance(value, datetime) else datetime(value.year, value.month, value.day)
            lower = _truncated(moment, auto.unit)
            upper = _following(lower, auto.unit)
            bound = PartitionBound(lower=(_bound_text(lower, column),),
                                   upper=None if upper is None else (_bound_text(upper, column),))
            wanted.setdefault("p" + lower.strftime("%Y%m%d%H%M%S"), bound)
        live = [p for p in table.live_partitions() if not p.partition.bound.is_default]
        for name, bound in wanted.items():
            clash = next((p for p in live if _ranges_overlap(bound, p.partition.bound)), None)
            if clash is not None:
                raise AutoPartitionClash(f"the partition {name} AUTO PARTITION would create for some rows overlaps "
                                         f"partition {clash.name}")
    else:
        keys = unrouted.select([c.file_column for c in columns]).group_by(
            [c.file_column for c in columns]).aggregate([]).to_pylist()
        for key in keys:
            values = tuple(key[c.file_column] for c in columns)
            if any(v is None for v in values):
                continue
            texts = tuple(_value_text(v) for v in values)
            wanted.setdefault("p" + "".join(_name_part(t) for t in texts), PartitionBound(values=(texts,)))
    return tuple(Partition(partition_id=next_partition_id + i, name=name, bound=bound,
                           buckets=table.distribution.buckets)
                 for i, (name, bound) in enumerate(sorted(wanted.items())))


def widened(table: TableState, partitions: tuple[Partition, ...], ts_ms: int) -> TableState:
    """The table as it will be once `partitions` exist (for routing rows into them)."""
    added = {p.partition_id: PartitionState(partition=p, created_ts_ms=ts_ms) for p in partitions}
    return table.model_copy(update={"partitions": {**table.partitions, **added}})
