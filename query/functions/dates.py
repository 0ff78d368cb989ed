"""Date and time functions (https://doris.apache.org/docs/sql-manual/sql-functions/scalar-functions/date-time-functions/).

Doris reads a string argument of a date function as a DATETIME; so does every template here
(`CAST(… AS TIMESTAMP)`). Times are naive, on the session's clock: FROM_UNIXTIME and
UNIX_TIMESTAMP convert through the session `time_zone` (`Call.zone`). Formats are MySQL's
(`%Y-%m-%d %H:%i:%s`), turned into DuckDB's strftime form by `strftime_format`.
"""

from __future__ import annotations

import re
from datetime import timedelta, timezone
from functools import partial
from zoneinfo import ZoneInfo, ZoneInfoNotFoundError

from sqlglot import exp

from query.functions.registry import NOT_SUPPORTED_YET, UNKNOWN_ERROR, Call, Function, FunctionError, Zone, fn, render

F = "date"

# MySQL/Doris format specifier → DuckDB strftime's (https://dev.mysql.com/doc/refman/8.0/en/date-and-time-functions.html#function_date-format).
_SPECIFIERS = {
    "a": "%a", "b": "%b", "c": "%-m", "d": "%d", "e": "%-d", "f": "%f", "H": "%H", "h": "%I", "I": "%I",
    "i": "%M", "j": "%j", "k": "%-H", "l": "%-I", "M": "%B", "m": "%m", "p": "%p", "r": "%I:%M:%S %p",
    "S": "%S", "s": "%S", "T": "%H:%M:%S", "U": "%U", "v": "%V", "W": "%A", "w": "%w",
    "x": "%G", "Y": "%Y", "y": "%y", "%": "%%",
}
_TIME_SPECIFIERS = set("fHhIiklpSsrT")
# Specifiers strftime has no form for, as DuckDB SQL over the time `{0}` (DATE_FORMAT only).
_SUNDAY = "(CAST({0} AS DATE) - CAST(STRFTIME({0}, '%w') AS INTEGER))"  # the Sunday its week starts on
_COMPUTED = {
    "D": ("CAST(DAY({0}) AS VARCHAR) || CASE WHEN DAY({0}) IN (11, 12, 13) THEN 'th' WHEN DAY({0}) % 10 = 1 "
          "THEN 'st' WHEN DAY({0}) % 10 = 2 THEN 'nd' WHEN DAY({0}) % 10 = 3 THEN 'rd' ELSE 'th' END"),
    # WEEK(d, 1): Monday first, week 1 the first with four days of the year, 0 before it.
    "u": ("LPAD(CAST(CASE WHEN ISOYEAR({0}) < YEAR({0}) THEN 0 WHEN ISOYEAR({0}) > YEAR({0}) "
          "THEN WEEK({0} - INTERVAL 7 DAY) + 1 ELSE WEEK({0}) END AS VARCHAR), 2, '0')"),
    # WEEK(d, 2) and its year: Sunday first, a week belongs to the year its Sunday is in.
    "V": f"STRFTIME({_SUNDAY}, '%U')",
    "X": f"CAST(YEAR({_SUNDAY}) AS VARCHAR)",
}


def mysql_format(form: exp.Expr, what: str) -> str:
    if not (isinstance(form, exp.Literal) and form.is_string):
        raise FunctionError(NOT_SUPPORTED_YET, f"{what}: the format must be a string literal")
    return form.this


def strftime_format(text: str, what: str) -> str:
    out, i = [], 0
    while i < len(text):
        ch = text[i]
        if ch == "%" and i + 1 < len(text):
            spec = text[i + 1]
            if spec not in _SPECIFIERS:
                raise FunctionError(NOT_SUPPORTED_YET, f"{what}: format specifier %{spec} is not supported")
            out.append(_SPECIFIERS[spec])
            i += 2
        else:
            out.append("%%" if ch == "%" else ch)
            i += 1
    return "".join(out)


def _has_time(text: str) -> bool:
    return any(text[i] == "%" and i + 1 < len(text) and text[i + 1] in _TIME_SPECIFIERS for i in range(len(text)))


def _string(text: str) -> exp.Expr:
    return exp.Literal.string(text)


def _offset_seconds(zone: Zone) -> int:
    offset = zone.utcoffset(None)
    return int(offset.total_seconds()) if offset is not None else 0


def wall_clock(zone: Zone, instant: exp.Expr) -> exp.Expr:
    """A TIMESTAMP WITH TIME ZONE as the naive time the session's clock shows."""
    if isinstance(zone, ZoneInfo):
        return render("TIMEZONE({1}, {0})", [instant, _string(zone.key)])
    offset = _offset_seconds(zone)
    return render(f"TIMEZONE('UTC', {{0}}) + INTERVAL ({offset}) SECOND", [instant])


def instant(zone: Zone, clock: exp.Expr) -> exp.Expr:
    """A naive time of the session's clock as a TIMESTAMP WITH TIME ZONE."""
    if isinstance(zone, ZoneInfo):
        return render("TIMEZONE({1}, CAST({0} AS TIMESTAMP))", [clock, _string(zone.key)])
    offset = _offset_seconds(zone)
    return render(f"TIMEZONE('UTC', CAST({{0}} AS TIMESTAMP) - INTERVAL ({offset}) SECOND)", [clock])


def _from_unixtime(call: Call) -> exp.Expr:
    """A DATETIME (whole seconds, as Doris) on the session's clock; with a format, that time formatted."""
    moment = render("CAST({0} AS TIMESTAMP_S)", [wall_clock(call.zone, render("TO_TIMESTAMP({0})", call.args[:1]))])
    if len(call.args) == 1:
        return moment
    form = strftime_format(mysql_format(call.args[1], call.name), call.name)
    return render("STRFTIME({0}, {1})", [moment, _string(form)])


def _unix_timestamp(call: Call) -> exp.Expr:
    if not call.args:
        return render("CAST(EPOCH(CURRENT_TIMESTAMP) AS BIGINT)", [])
    clock = call.args[0]
    if len(call.args) == 2:
        form = strftime_format(mysql_format(call.args[1], call.name), call.name)
        clock = render("TRY_STRPTIME(CAST({0} AS VARCHAR), {1})", [clock, _string(form)])
    return render("CAST(FLOOR(EPOCH({0})) AS BIGINT)", [instant(call.zone, clock)])


def _str_to_date(call: Call) -> exp.Expr:
    text = mysql_format(call.args[1], call.name)
    form = _string(strftime_format(text, call.name))
    parsed = render("TRY_STRPTIME(CAST({0} AS VARCHAR), {1})", [call.args[0], form])
    # Doris answers a DATE when the format has no time part, a DATETIME otherwise.
    return render("CAST({0} AS TIMESTAMP)" if _has_time(text) else "CAST({0} AS DATE)", [parsed])


def _date_format(call: Call) -> exp.Expr:
    """STRFTIME of the runs strftime can write, joined with the specifiers it cannot (`_COMPUTED`)."""
    text = mysql_format(call.args[1], call.name)
    pieces, run, i = [], "", 0
    while i < len(text):
        if text[i] == "%" and i + 1 < len(text) and text[i + 1] in _COMPUTED:
            if run:
                pieces.append(f"STRFTIME({{0}}, '{strftime_format(run, call.name).replace(chr(39), chr(39) * 2)}')")
            pieces.append(f"({_COMPUTED[text[i + 1]]})")
            run, i = "", i + 2
        else:
            step = 2 if text[i] == "%" else 1
            run, i = run + text[i:i + step], i + step
    if run or not pieces:
        pieces.append(f"STRFTIME({{0}}, '{strftime_format(run, call.name).replace(chr(39), chr(39) * 2)}')")
    return render(" || ".join(pieces), [render("CAST({0} AS TIMESTAMP)", call.args[:1])])


_UNITS = {"YEAR", "QUARTER", "MONTH", "WEEK", "DAY", "HOUR", "MINUTE", "SECOND", "MICROSECOND", "MILLISECOND"}


def _unit(arg: exp.Expr, what: str) -> str:
    name = (arg.this if isinstance(arg, exp.Literal) else arg.name).upper()
    if name not in _UNITS:
        raise FunctionError(NOT_SUPPORTED_YET, f"{what}: unknown unit '{name}'")
    return name


def _timestampdiff(call: Call) -> exp.Expr:
    unit = _unit(call.args[0], call.name)
    return render(f"DATESUB('{unit.lower()}', CAST({{1}} AS TIMESTAMP), CAST({{2}} AS TIMESTAMP))", call.args)


_FRACTION = re.compile(r"\d:\d{1,2}\.(\d+)")
_DAY_UNITS = {"YEAR", "QUARTER", "MONTH", "WEEK", "DAY"}
_SHIFT_UNITS = _DAY_UNITS | {"HOUR", "MINUTE", "SECOND", "MILLISECOND", "MICROSECOND"}


def shift(moment: exp.Expr, amount: exp.Expr, unit: str, what: str, *, back: bool = False) -> exp.Expr:
    """`moment` moved by `amount` `unit`s, of `moment`'s own type as Doris keeps it (a DATE stays a DATE
    for units of a day or more; storage.sandbox's typed macros choose)."""
    if unit not in _SHIFT_UNITS:
        raise FunctionError(NOT_SUPPORTED_YET, f"{what}: unit '{unit}' is not supported")
    macro = "doris_date_add" if unit in _DAY_UNITS else "doris_time_add"
    if isinstance(moment, exp.Literal) and moment.is_string:
        # A literal is a DATETIME of the digits it writes, as Doris reads it: '2023-10-31' + 1 day is
        # '2023-11-01 00:00:00', and '… 10:00:00.5' keeps its fraction.
        fraction = _FRACTION.search(moment.this)
        digits = len(fraction.group(1)) if fraction else 0
        moment = exp.cast(moment, "TIMESTAMP_S" if digits == 0 else "TIMESTAMP_MS" if digits <= 3 else "TIMESTAMP",
                          dialect="duckdb")
    count = "CAST({1} AS BIGINT)" + (" * 3" if unit == "QUARTER" else "")
    interval_unit = "MONTH" if unit == "QUARTER" else unit
    return render(f"{macro}({{0}}, INTERVAL ({'-' if back else ''}{count}) {interval_unit})", [moment, amount])


def _timestampadd(call: Call) -> exp.Expr:
    return shift(call.args[2], call.args[1], _unit(call.args[0], call.name), call.name)


def _date_add(call: Call) -> exp.Expr:
    """DATE_ADD / ADDDATE (and with `back`, DATE_SUB / SUBDATE): `INTERVAL n UNIT`, or a number of days."""
    moment, by = call.args
    back = call.name in ("date_sub", "subdate")
    if isinstance(by, exp.Interval):
        return shift(moment, by.this, by.unit.name.upper() if by.unit is not None else "DAY", call.name, back=back)
    return shift(moment, by, "DAY", call.name, back=back)


def _date_trunc(call: Call) -> exp.Expr:
    """Doris 2.1 writes date_trunc(datetime, unit); later versions accept the unit first too."""
    first, second = call.args
    unit_first = isinstance(first, exp.Literal) and first.is_string and first.this.upper() in _UNITS
    moment, unit = (second, first) if unit_first else (first, second)
    return render(f"DATE_TRUNC('{_unit(unit, call.name).lower()}', CAST({{0}} AS TIMESTAMP))", [moment])


_OFFSET = re.compile(r"([+-])(\d{1,2}):(\d{2})")


def _literal_zone(arg: exp.Expr) -> Zone | None:
    """A zone written as a literal ('Asia/Shanghai', '+08:00'), or None for any other argument."""
    if not (isinstance(arg, exp.Literal) and arg.is_string):
        return None
    offset = _OFFSET.fullmatch(arg.this.strip())
    if offset:
        sign, hours, minutes = offset.groups()
        delta = timedelta(hours=int(hours), minutes=int(minutes))
        return timezone(-delta if sign == "-" else delta)
    try:
        return ZoneInfo(arg.this.strip())
    except (ZoneInfoNotFoundError, ValueError):
        raise FunctionError(UNKNOWN_ERROR, f"{arg.this!r} is not a time zone") from None


def _convert_tz(call: Call) -> exp.Expr:
    """The wall-clock time in zone `to` of a time on zone `from`'s clock; DuckDB knows zone names, not
    offsets, so an offset written as a literal is applied as arithmetic."""
    moment, source, target = call.args
    source_zone, target_zone = _literal_zone(source), _literal_zone(target)
    at = (instant(source_zone, moment) if source_zone is not None
          else render("TIMEZONE({1}, CAST({0} AS TIMESTAMP))", [moment, source]))
    return wall_clock(target_zone, at) if target_zone is not None else render("TIMEZONE({1}, {0})", [at, target])


def _week_rule(mode_arg: exp.Expr | None, name: str) -> tuple[bool, bool, bool]:
    """MySQL's week mode (0-7) as (Monday first, weeks numbered 1-53 across years, week 1 is the
    first with a first-day rather than the first with four days): MySQL's `week_mode`."""
    if mode_arg is None:
        mode = 0
    elif isinstance(mode_arg, exp.Literal) and not mode_arg.is_string and mode_arg.this.isdigit():
        mode = int(mode_arg.this)
    else:
        raise FunctionError(NOT_SUPPORTED_YET, f"{name}: the mode must be a whole number literal (0 to 7)")
    flags = mode & 7
    if not flags & 1:
        flags ^= 4
    return bool(flags & 1), bool(flags & 2), bool(flags & 4)


def _week_sql(monday_first: bool, whole_years: bool, first_day_rule: bool) -> tuple[str, str]:
    """(week, year it belongs to) of the date `{0}` under a week rule, as DuckDB SQL.

    Week 1 of year y starts on its first first-day (Sunday or Monday) or, under the four-day rule, on
    the first-day of the week holding January 1st when that week has four days of y (ISO's rule).
    Before it: week 0, or with `whole_years` the last week of y-1; with `whole_years`, days from the
    start of week 1 of y+1 on are week 1 of y+1."""
    day = "CAST(CAST({0} AS TIMESTAMP) AS DATE)"
    dow = "(ISODOW({j}) - 1)" if monday_first else "DAYOFWEEK({j})"  # days since the week's first day

    def start(year: str) -> str:
        j = f"MAKE_DATE(CAST({year} AS INTEGER), 1, 1)"
        lag = dow.format(j=j)
        shift = f"(7 - {lag}) % 7" if first_day_rule else f"CASE WHEN {lag} < 4 THEN -{lag} ELSE 7 - {lag} END"
        return f"({j} + CAST({shift} AS INTEGER))"

    def number(since: str) -> str:
        return f"(DATE_DIFF('day', {since}, {day}) // 7 + 1)"

    this, before, after = start(f"YEAR({day})"), start(f"YEAR({day}) - 1"), start(f"YEAR({day}) + 1")
    if not whole_years:
        return f"CASE WHEN {day} < {this} THEN 0 ELSE {number(this)} END", f"YEAR({day})"
    week = f"CASE WHEN {day} < {this} THEN {number(before)} WHEN {day} >= {after} THEN 1 ELSE {number(this)} END"
    year = (f"CASE WHEN {day} < {this} THEN YEAR({day}) - 1 WHEN {day} >= {after} THEN YEAR({day}) + 1 "
            f"ELSE YEAR({day}) END")
    return week, year


def _week(call: Call) -> exp.Expr:
    """WEEK(d[, mode]): MySQL's eight week modes (https://dev.mysql.com/doc/refman/8.0/en/date-and-time-functions.html#function_week)."""
    week, _ = _week_sql(*_week_rule(call.args[1] if len(call.args) > 1 else None, call.name))
    return render(f"CAST({week} AS INTEGER)", call.args[:1])


def _yearweek(call: Call) -> exp.Expr:
    """YEARWEEK(d[, mode]): the year the week belongs to and its number, weeks never 0 (MySQL)."""
    monday_first, _, first_day_rule = _week_rule(call.args[1] if len(call.args) > 1 else None, call.name)
    week, year = _week_sql(monday_first, True, first_day_rule)
    return render(f"CAST(({year}) * 100 + {week} AS INTEGER)", call.args[:1])


_TS = "CAST({0} AS TIMESTAMP)"
_PLURAL_UNITS = {"year": "YEAR", "month": "MONTH", "week": "WEEK", "day": "DAY", "hour": "HOUR", "minute": "MINUTE",
                 "second": "SECOND"}


def _unit_shift(call: Call, unit: str, back: bool = False) -> exp.Expr:
    return shift(call.args[0], call.args[1], unit, call.name, back=back)


def _unit_family() -> list[Function]:
    """years_add … seconds_add, _sub and _diff: Doris' shorthands of DATE_ADD, DATE_SUB and TIMESTAMPDIFF;
    _diff counts whole units from the second argument to the first."""
    out = []
    for word, unit in _PLURAL_UNITS.items():
        out += [
            fn(f"{word}s_add", F, f"{word}s_add('2024-01-31 10:00:00', 1)",
               rewrite=partial(_unit_shift, unit=unit), arities={2}),
            fn(f"{word}s_sub", F, f"{word}s_sub('2024-03-31 10:00:00', 1)",
               rewrite=partial(_unit_shift, unit=unit, back=True), arities={2}),
            fn(f"{word}s_diff", F, f"{word}s_diff('2024-03-31 10:00:00', '2023-01-01 11:00:00')",
               f"DATESUB('{word}', CAST({{1}} AS TIMESTAMP), {_TS})"),
        ]
    return out


FUNCTIONS: list[Function] = [
    fn("from_unixtime", F, "from_unixtime(1704067200, '%Y-%m-%d %H:%i:%s')", rewrite=_from_unixtime, arities={1, 2}),
    fn("unix_timestamp", F, "unix_timestamp('2024-01-01 00:00:00')", rewrite=_unix_timestamp, arities={0, 1, 2}),
    fn("str_to_date", F, "str_to_date('2024-01-02', '%Y-%m-%d')", rewrite=_str_to_date, arities={2}),
    fn("date_format", F, "date_format('2024-01-02 13:04:05', '%W %M %e %Y %r %j')", rewrite=_date_format,
       arities={2}),
    fn("timestampdiff", F, "timestampdiff(MONTH, '2024-01-31', '2024-03-30')", rewrite=_timestampdiff,
       arities={3}),
    fn("timestampadd", F, "timestampadd(DAY, 3, '2024-01-02 00:00:00')", rewrite=_timestampadd, arities={3}),
    fn("datediff", F, "datediff('2024-01-05 23:00:00', '2024-01-02 01:00:00')",
       "DATE_DIFF('day', CAST(CAST({1} AS TIMESTAMP) AS DATE), CAST(CAST({0} AS TIMESTAMP) AS DATE))"),
    fn("date_trunc", F, "date_trunc('2024-05-15 10:11:12', 'month')", rewrite=_date_trunc, arities={2}),
    fn("convert_tz", F, "convert_tz('2024-01-05 10:11:12', 'UTC', 'Asia/Shanghai')", rewrite=_convert_tz,
       arities={3}),
    fn("week", F, "week('2024-01-07')", rewrite=_week, arities={1, 2}),
    fn("yearweek", F, "yearweek('2024-01-05')", rewrite=_yearweek, arities={1, 2}),
    fn("weekofyear", F, "weekofyear('2024-01-02')", f"WEEKOFYEAR({_TS})"),
    fn("last_day", F, "last_day('2024-02-05')", f"LAST_DAY({_TS})"),
    fn("makedate", F, "makedate(2024, 60)",
       "CASE WHEN {1} > 0 THEN CAST(MAKE_DATE({0}, 1, 1) + TO_DAYS(CAST({1} AS INTEGER) - 1) AS DATE) END"),
    fn("sec_to_time", F, "sec_to_time(59738)", "TIME '00:00:00' + TO_SECONDS(CAST({0} AS BIGINT))"),
    fn("time_to_sec", F, "time_to_sec('01:01:01')", "CAST(EPOCH(CAST({0} AS TIME)) AS BIGINT)"),
    fn("from_days", F, "from_days(739252)", "CAST(DATE '0000-01-01' + TO_DAYS(CAST({0} AS INTEGER)) AS DATE)"),
    fn("to_days", F, "to_days('2024-01-02')", f"DATE_DIFF('day', DATE '0000-01-01', CAST({_TS} AS DATE))"),
    fn("year", F, "year('2024-01-02')", f"YEAR({_TS})"),
    fn("quarter", F, "quarter('2024-05-02')", f"QUARTER({_TS})"),
    fn("month", F, "month('2024-01-02')", f"MONTH({_TS})"),
    fn("day", F, "day('2024-01-02')", f"DAY({_TS})"),
    fn("dayofmonth", F, "dayofmonth('2024-01-02')", f"DAY({_TS})"),
    fn("dayofweek", F, "dayofweek('2024-01-02')", f"DAYOFWEEK({_TS}) + 1"),
    fn("dayofyear", F, "dayofyear('2024-02-02')", f"DAYOFYEAR({_TS})"),
    fn("hour", F, "hour('2024-01-02 10:11:12')", f"HOUR({_TS})"),
    fn("minute", F, "minute('2024-01-02 10:11:12')", f"MINUTE({_TS})"),
    fn("second", F, "second('2024-01-02 10:11:12')", f"SECOND({_TS})"),
    fn("dayname", F, "dayname('2024-01-02')", f"DAYNAME({_TS})"),
    fn("monthname", F, "monthname('2024-01-02')", f"MONTHNAME({_TS})"),
    fn("to_date", F, "to_date('2024-01-02 10:11:12')", f"CAST({_TS} AS DATE)"),
    fn("date", F, "date('2024-01-02 10:11:12')", f"CAST({_TS} AS DATE)"),
    fn("date_add", F, "date_add('2024-01-02 00:00:00', INTERVAL 1 DAY)", rewrite=_date_add, arities={2}),
    fn("adddate", F, "adddate('2024-01-02 00:00:00', INTERVAL 1 DAY)", rewrite=_date_add, arities={2}),
    fn("date_sub", F, "date_sub('2024-01-02 00:00:00', INTERVAL 1 DAY)", rewrite=_date_add, arities={2}),
    fn("subdate", F, "subdate('2024-01-02 00:00:00', INTERVAL 1 DAY)", rewrite=_date_add, arities={2}),
    fn("extract", F, "extract(year FROM CAST('2024-01-02 00:00:00' AS DATETIME))"),
    *_unit_family(),
]
