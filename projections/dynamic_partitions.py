"""Dynamic partitions (Doris): the partitions a time-series table should have at a moment.

A RANGE table on one DATE/DATETIME column with `dynamic_partition.enable` keeps partitions from
`start` units back (older ones are dropped) to `end` units ahead of now, one per time unit, named
`<prefix><time>` as Doris names them. The newest `hot_partition_num` units (and all ahead) are
created on SSD with a `storage_cooldown_time` that many units after their start, older ones on
HDD, as in Doris' example; `dynamic_partition.storage_policy` attaches a policy to each, so it
then cools to the object store like any partition.

Everything here is a pure function of the properties and a moment: the scheduler (streams/)
applies the plan, the SQL server validates the properties with it.
"""

from __future__ import annotations

import calendar
from collections.abc import Iterable
from dataclasses import dataclass, field
from datetime import UTC, datetime, timedelta, tzinfo
from typing import Literal
from zoneinfo import ZoneInfo, ZoneInfoNotFoundError

from schemas.model import PartitionBound

PREFIX = "dynamic_partition."
Unit = Literal["HOUR", "DAY", "WEEK", "MONTH", "YEAR"]
UNITS: tuple[Unit, ...] = ("HOUR", "DAY", "WEEK", "MONTH", "YEAR")
NEVER = -2147483648  # Doris' default `start`: nothing is ever dropped
_BOOLEANS = ("true", "false")
KEYS = ("enable", "time_unit", "time_zone", "start", "end", "prefix", "buckets", "start_day_of_week",
        "start_day_of_month", "create_history_partition", "history_partition_num", "hot_partition_num",
        "storage_policy", "storage_medium",
        # Replica placement of the partitions made: one copy of each rowset in Strata, kept as written.
        "replication_num", "replication_allocation", "reserved_history_periods")
_FORMAT = "%Y-%m-%d %H:%M:%S"


class DynamicPartitionError(ValueError):
    pass


@dataclass(frozen=True)
class DynamicPartitionSpec:
    enable: bool
    time_unit: Unit
    time_zone: str = "UTC"
    start: int = NEVER
    end: int = 0
    prefix: str = "p"
    buckets: int | None = None
    start_day_of_week: int = 1
    start_day_of_month: int = 1
    create_history_partition: bool = False
    history_partition_num: int = -1
    hot_partition_num: int = 0
    storage_policy: str | None = None
    storage_medium: str | None = None

    @property
    def zone(self) -> tzinfo:
        return UTC if self.time_zone.upper() == "UTC" else ZoneInfo(self.time_zone)


def _int(props: dict[str, str], key: str, default: int, low: int, high: int) -> int:
    text = props.get(PREFIX + key)
    if text is None:
        return default
    try:
        value = int(text.strip())
    except ValueError:
        raise DynamicPartitionError(f"{PREFIX}{key} must be an integer, not '{text}'") from None
    if not low <= value <= high:
        raise DynamicPartitionError(f"{PREFIX}{key} must be from {low} to {high}, not {value}")
    return value


def _bool(props: dict[str, str], key: str, default: bool) -> bool:
    text = props.get(PREFIX + key)
    if text is None:
        return default
    if text.lower() not in _BOOLEANS:
        raise DynamicPartitionError(f"{PREFIX}{key} must be true or false, not '{text}'")
    return text.lower() == "true"


def parse_spec(props: dict[str, str]) -> DynamicPartitionSpec | None:
    """The table's dynamic partition settings (None: it has none); raises DynamicPartitionError
    naming the first property that is wrong."""
    given = {k[len(PREFIX):] for k in props if k.startswith(PREFIX)}
    if not given:
        return None
    unknown = sorted(given - set(KEYS))
    if unknown:
        raise DynamicPartitionError(f"Unknown dynamic partition property '{PREFIX}{unknown[0]}'")
    unit = props.get(PREFIX + "time_unit", "").upper()
    if unit not in UNITS:
        raise DynamicPartitionError(f"{PREFIX}time_unit must be one of {', '.join(UNITS)}"
                                    + (f", not '{props[PREFIX + 'time_unit']}'" if PREFIX + "time_unit" in props
                                       else " and is required"))
    zone = props.get(PREFIX + "time_zone", "UTC")
    try:
        if zone.upper() != "UTC":
            ZoneInfo(zone)
    except (ZoneInfoNotFoundError, ValueError):
        raise DynamicPartitionError(f"{PREFIX}time_zone '{zone}' is not a known time zone") from None
    if PREFIX + "end" not in props:
        raise DynamicPartitionError(f"{PREFIX}end is required")
    prefix = props.get(PREFIX + "prefix", "p")
    if not prefix or not (prefix[0].isalpha() or prefix[0] == "_") or not all(c.isalnum() or c == "_" for c in prefix):
        raise DynamicPartitionError(f"{PREFIX}prefix '{prefix}' must start with a letter and hold only letters, "
                                    "digits and _")
    medium = props.get(PREFIX + "storage_medium")
    if medium is not None and medium.upper() not in ("SSD", "HDD"):
        raise DynamicPartitionError(f"{PREFIX}storage_medium must be SSD or HDD, not '{medium}'")
    spec = DynamicPartitionSpec(
        enable=_bool(props, "enable", True), time_unit=unit, time_zone=zone,  # type: ignore[arg-type]
        start=_int(props, "start", NEVER, NEVER, -1), end=_int(props, "end", 0, 1, 500), prefix=prefix,
        buckets=_int(props, "buckets", 0, 1, 1024) or None,
        start_day_of_week=_int(props, "start_day_of_week", 1, 1, 7),
        start_day_of_month=_int(props, "start_day_of_month", 1, 1, 28),
        create_history_partition=_bool(props, "create_history_partition", False),
        history_partition_num=_int(props, "history_partition_num", -1, -1, 100_000),
        hot_partition_num=_int(props, "hot_partition_num", 0, 0, 10_000),
        storage_policy=props.get(PREFIX + "storage_policy") or None,
        storage_medium=medium.upper() if medium else None)
    if spec.hot_partition_num and spec.storage_medium == "HDD":
        raise DynamicPartitionError(f"{PREFIX}hot_partition_num puts the newest partitions on SSD; it can not be "
                                    f"combined with {PREFIX}storage_medium HDD")
    return spec


def check_table(spec: DynamicPartitionSpec, partition_kind: str, column_types: list[str]) -> None:
    """Dynamic partitions need a RANGE table on one DATE or DATETIME column (DATETIME for HOUR)."""
    if partition_kind != "RANGE" or len(column_types) != 1:
        raise DynamicPartitionError("dynamic partitions need a table partitioned BY RANGE on one column")
    base = column_types[0].split("(")[0].upper()
    if base not in ("DATE", "DATEV2", "DATETIME", "DATETIMEV2"):
        raise DynamicPartitionError(f"dynamic partitions need a DATE or DATETIME partition column, not {base}")
    if spec.time_unit == "HOUR" and not base.startswith("DATETIME"):
        raise DynamicPartitionError("time_unit HOUR needs a DATETIME partition column")


# -- time arithmetic ---------------------------------------------------------------------------------
def unit_start(moment: datetime, spec: DynamicPartitionSpec) -> datetime:
    """The start of the unit `moment` (in the spec's zone) falls in."""
    moment = moment.replace(minute=0, second=0, microsecond=0)
    if spec.time_unit == "HOUR":
        return moment
    day = moment.replace(hour=0)
    if spec.time_unit == "DAY":
        return day
    if spec.time_unit == "WEEK":
        return day - timedelta(days=(day.isoweekday() - spec.start_day_of_week) % 7)
    if spec.time_unit == "MONTH":
        first = day.replace(day=spec.start_day_of_month)
        return first if first <= day else _add_months(first, -1)
    return day.replace(month=1, day=1)


def _add_months(moment: datetime, months: int) -> datetime:
    index = moment.year * 12 + moment.month - 1 + months
    year, month = divmod(index, 12)
    return moment.replace(year=year, month=month + 1, day=min(moment.day, calendar.monthrange(year, month + 1)[1]))


def shift(start: datetime, spec: DynamicPartitionSpec, units: int) -> datetime:
    if spec.time_unit == "HOUR":
        return start + timedelta(hours=units)
    if spec.time_unit == "DAY":
        return start + timedelta(days=units)
    if spec.time_unit == "WEEK":
        return start + timedelta(weeks=units)
    if spec.time_unit == "MONTH":
        return _add_months(start, units)
    return _add_months(start, 12 * units)


def partition_name(start: datetime, spec: DynamicPartitionSpec) -> str:
    """Doris' names: p2026120110 (HOUR), p20261201 (DAY), p2026_49 (WEEK), p202612 (MONTH), p2026 (YEAR)."""
    if spec.time_unit == "WEEK":
        year, week, _ = start.isocalendar()
        return f"{spec.prefix}{year}_{week:02d}"
    pattern = {"HOUR": "%Y%m%d%H", "DAY": "%Y%m%d", "MONTH": "%Y%m", "YEAR": "%Y"}[spec.time_unit]
    return spec.prefix + start.strftime(pattern)


def _bound_text(moment: datetime, date_only: bool) -> str:
    return moment.strftime("%Y-%m-%d" if date_only else _FORMAT)


@dataclass(frozen=True)
class WantedPartition:
    name: str
    bound: PartitionBound
    properties: dict[str, str] = field(default_factory=dict)


@dataclass(frozen=True)
class PartitionPlan:
    create: tuple[WantedPartition, ...]
    # Partitions whose whole range ends at or before this bound (the partition column's text) go.
    drop_before: str | None


def plan(spec: DynamicPartitionSpec, now: datetime, column_type: str) -> PartitionPlan:
    """The partitions the table should have at `now`, and where dropping starts."""
    date_only = not column_type.upper().startswith("DATETIME")
    local = now.astimezone(spec.zone)
    today = unit_start(local, spec)
    first = 0
    if spec.create_history_partition:
        history = spec.history_partition_num if spec.history_partition_num > 0 else -spec.start
        first = max(spec.start, -history) if spec.start != NEVER else -history
        first = max(first, -100_000)
    wanted = []
    for offset in range(first, spec.end + 1):
        lower = shift(today, spec, offset)
        upper = shift(today, spec, offset + 1)
        props: dict[str, str] = {}
        if spec.hot_partition_num:
            if offset > -spec.hot_partition_num:
                cooldown = shift(lower, spec, spec.hot_partition_num).astimezone(UTC)
                props = {"storage_medium": "ssd", "storage_cooldown_time": cooldown.strftime(_FORMAT)}
            else:
                props = {"storage_medium": "hdd"}
        elif spec.storage_medium:
            props = {"storage_medium": spec.storage_medium.lower()}
        if spec.storage_policy:
            props["storage_policy"] = spec.storage_policy
        wanted.append(WantedPartition(partition_name(lower, spec),
                                      PartitionBound(lower=(_bound_text(lower, date_only),),
                                                     upper=(_bound_text(upper, date_only),)), props))
    drop_before = None if spec.start == NEVER else _bound_text(shift(today, spec, spec.start), date_only)
    return PartitionPlan(tuple(wanted), drop_before)


def as_moment(text: str) -> datetime:
    """A partition bound's text as a naive moment, comparable across DATE and DATETIME bounds."""
    return datetime.fromisoformat(text.strip())


def overlaps(bound: PartitionBound, others: Iterable[PartitionBound]) -> bool:
    low = as_moment(bound.lower[0]) if bound.lower else datetime.min
    high = as_moment(bound.upper[0]) if bound.upper else datetime.max
    for other in others:
        other_low = as_moment(other.lower[0]) if other.lower else datetime.min
        other_high = as_moment(other.upper[0]) if other.upper else datetime.max
        if low < other_high and other_low < high:
            return True
    return False
