"""Partition bounds as Doris reads them: each value normalized to its column's type (dates also in
the compact 'YYYYMMDD' spelling), and a batch `FROM (a) TO (b) INTERVAL n [unit]` expanded into the
range partitions Doris creates for it, with the names Doris gives them.

The expansion follows Doris' MultiPartitionDesc (fe/fe-core/.../analysis/MultiPartitionDesc.java):
names `p_<begin>_<end>` for integers, `p_yyyyMMdd` (DAY), `p_yyyyMMddHH` (HOUR), `p_yyyy_ww` (WEEK,
weeks from Monday, week 1 holding January 1st), `p_yyyyMM` (MONTH), `p_yyyy` (YEAR). After the first
partition, WEEK/MONTH/YEAR partitions start on a Monday / the 1st / January 1st; every unit but DAY
ends the last partition at TO, DAY partitions all keep the full interval (as Doris does).
"""

from __future__ import annotations

import re
from datetime import date, datetime, timedelta

from query.context import SqlFailure
from query.parser import statements as st
from schemas.errors import ErrorCode

# Doris' Config.max_multi_partition_num.
MAX_BATCH_PARTITIONS = 4096
PREFIX = "p_"
_DATE_OUT = "%Y-%m-%d"
_DATETIME_OUT = "%Y-%m-%d %H:%M:%S"
# The spellings Doris reads for each unit's FROM/TO values, by length (MultiPartitionDesc.dateFormat).
_BATCH_FORMATS = {
    "HOUR": {10: "%Y%m%d%H", 13: "%Y-%m-%d %H", 19: _DATETIME_OUT},
    "DAY": {8: "%Y%m%d", 10: _DATE_OUT, 19: _DATETIME_OUT},
    "WEEK": {8: "%Y%m%d", 10: _DATE_OUT, 19: _DATETIME_OUT},
    "MONTH": {6: "%Y%m", 7: "%Y-%m", 10: _DATE_OUT, 19: _DATETIME_OUT},
    "YEAR": {4: "%Y", 8: "%Y%m%d", 10: _DATE_OUT, 19: _DATETIME_OUT},
}
# Spellings of a DATE / DATETIME value in a bound (year 0 included, which Python's datetime lacks):
# 'YYYY-MM-DD[ HH:MM:SS[.ffffff]]' and the compact 'YYYYMMDD[HHMMSS]'.
_VALUE = re.compile(r"(\d{4})-(\d{1,2})-(\d{1,2})(?:[ T](\d{1,2}):(\d{1,2}):(\d{1,2})(?:\.0*)?)?"
                    r"|(\d{4})(\d{2})(\d{2})(?:(\d{2})(\d{2})(\d{2}))?")


def _base(column_type: str) -> str:
    base = column_type.split("(")[0].strip().upper()
    return {"DATEV2": "DATE", "DATETIMEV2": "DATETIME"}.get(base, base)


def _date_parts(text: str) -> tuple[int, ...] | None:
    """(year, month, day, hour, minute, second) of a date or datetime spelling, None if it is none."""
    found = _VALUE.fullmatch(text.strip())
    if found is None:
        return None
    groups = [g for g in found.groups() if g is not None]
    parts = tuple(int(g) for g in groups) + (0,) * (6 - len(groups))
    try:
        # Checks month, day (leap years included) and time; year 0 is checked as the leap year 2000.
        datetime(parts[0] or 2000, parts[1], parts[2], parts[3], parts[4], parts[5])
    except ValueError:
        return None
    return parts


def normalized_value(value: str | None, column_type: str, partition: str) -> str | None:
    """A bound value as the column's type prints it: DATE 'YYYY-MM-DD', DATETIME 'YYYY-MM-DD HH:MM:SS'
    (from any spelling Doris reads, '20221001' included); other types unchanged."""
    base = _base(column_type)
    if value is None or value == "MAXVALUE" or base not in ("DATE", "DATETIME"):
        return value
    parts = _date_parts(value)
    if parts is None or (base == "DATE" and any(parts[3:])):
        raise SqlFailure(ErrorCode.WRONG_ARGUMENTS, f"Invalid {base} value '{value}' in partition {partition}")
    year, month, day, hour, minute, second = parts
    text = f"{year:04d}-{month:02d}-{day:02d}"
    return text if base == "DATE" else f"{text} {hour:02d}:{minute:02d}:{second:02d}"


def expand_batch(batch: st.BatchRange, column_type: str) -> list[st.PartitionDef]:
    """The range partitions of one `FROM … TO … INTERVAL …`, named as Doris names them."""
    if batch.interval <= 0:
        raise SqlFailure(ErrorCode.WRONG_ARGUMENTS, "Multi partition time interval must be larger than zero.")
    if batch.unit is None:
        return _numbers(batch)
    if _base(column_type) not in ("DATE", "DATETIME"):
        raise SqlFailure(ErrorCode.WRONG_ARGUMENTS, f"INTERVAL ... {batch.unit} needs a DATE or DATETIME partition "
                                                    f"column, not {column_type}")
    return _times(batch)


def _checked_count(partitions: list[st.PartitionDef]) -> None:
    if len(partitions) > MAX_BATCH_PARTITIONS:
        raise SqlFailure(ErrorCode.WRONG_ARGUMENTS, "The number of Multi partitions too much, should not exceed:"
                                                    f"{MAX_BATCH_PARTITIONS}")


def _numbers(batch: st.BatchRange) -> list[st.PartitionDef]:
    try:
        begin, end = int(batch.lower), int(batch.upper)
    except ValueError:
        raise SqlFailure(ErrorCode.WRONG_ARGUMENTS, "Batch build partition INTERVAL is number type but From or TO "
                                                    "does not type match.") from None
    if begin >= end:
        raise SqlFailure(ErrorCode.WRONG_ARGUMENTS, "Batch build partition From value should less then TO value.")
    partitions: list[st.PartitionDef] = []
    while begin < end:
        upper = min(begin + batch.interval, end)
        partitions.append(st.PartitionDef(f"{PREFIX}{begin}_{upper}", "FIXED_RANGE", ((str(begin),), (str(upper),))))
        _checked_count(partitions)
        begin = upper
    return partitions


def _moment(text: str, unit: str) -> datetime:
    pattern = _BATCH_FORMATS[unit].get(len(text))
    try:
        if pattern is None:
            raise ValueError(text)
        return datetime.strptime(text, pattern)
    except ValueError:
        raise SqlFailure(ErrorCode.WRONG_ARGUMENTS, "Multi build partition start or end time style is illegal: "
                                                    f"'{text}' for INTERVAL ... {unit}") from None


def _week_of_year(day: date) -> int:
    """Java's WeekFields.of(MONDAY, 1).weekOfYear(): weeks start on Monday, week 1 holds January 1st."""
    return (day.timetuple().tm_yday - 1 + date(day.year, 1, 1).weekday()) // 7 + 1


def _add_months(moment: datetime, months: int) -> datetime:
    index = moment.year * 12 + moment.month - 1 + months
    return moment.replace(year=index // 12, month=index % 12 + 1)


def _next(moment: datetime, unit: str, interval: int) -> tuple[str, datetime]:
    """The name of the partition starting at `moment`, and where the next one starts."""
    if unit == "HOUR":
        return moment.strftime("%Y%m%d%H"), moment + timedelta(hours=interval)
    if unit == "DAY":
        return moment.strftime("%Y%m%d"), moment + timedelta(days=interval)
    if unit == "WEEK":
        monday = moment - timedelta(days=moment.weekday())
        return f"{moment:%Y}_{_week_of_year(moment.date()):02d}", monday + timedelta(weeks=interval)
    if unit == "MONTH":
        return moment.strftime("%Y%m"), _add_months(moment.replace(day=1), interval)
    return moment.strftime("%Y"), moment.replace(month=1, day=1).replace(year=moment.year + interval)


def _times(batch: st.BatchRange) -> list[st.PartitionDef]:
    assert batch.unit is not None
    unit = batch.unit
    start, end = _moment(batch.lower, unit), _moment(batch.upper, unit)
    if start >= end:
        raise SqlFailure(ErrorCode.WRONG_ARGUMENTS, "Multi build partition start time should less than end time.")
    lower_out = _DATETIME_OUT if unit == "HOUR" or len(batch.lower) == 19 else _DATE_OUT
    upper_out = _DATETIME_OUT if unit == "HOUR" or len(batch.upper) == 19 else _DATE_OUT
    partitions: list[st.PartitionDef] = []
    while start < end:
        name, following = _next(start, unit, batch.interval)
        if unit != "DAY" and following > end:
            following = end
        bound = ((start.strftime(lower_out),), (following.strftime(upper_out),))
        partitions.append(st.PartitionDef(PREFIX + name, "FIXED_RANGE", bound))
        _checked_count(partitions)
        start = following
    return partitions
