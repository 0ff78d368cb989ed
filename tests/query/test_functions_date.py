"""Date and time functions against Doris' answers: the examples of
https://doris.apache.org/docs/sql-manual/sql-functions/scalar-functions/date-time-functions/<name>
(run in the docs' time zone, Asia/Shanghai) and of MySQL's manual for the format specifiers
(https://dev.mysql.com/doc/refman/8.0/en/date-and-time-functions.html#function_date-format)."""

from __future__ import annotations

import datetime as dt

import duckdb
from sqlglot import exp

from query.functions.dates import _week_rule, _week_sql
from tests.query.functionkit import check
from tests.query.sqlkit import Conn, fails, run


def test_unix_time_in_the_session_zone(conn: Conn) -> None:
    run(conn, "SET time_zone = '+08:00'")  # Asia/Shanghai, the docs' zone (no daylight saving time)
    check(conn, [
        ("from_unixtime(1196440219)", "2007-12-01 00:30:19"),  # from-unixtime
        ("from_unixtime(1196440219, '%Y-%m-%d')", "2007-12-01"),
        ("from_unixtime(1196440219, '%Y-%m-%d %H:%i:%s')", "2007-12-01 00:30:19"),
        ("unix_timestamp('2007-11-30 10:30:19')", "1196389819"),  # unix-timestamp
        ("unix_timestamp('2007-11-30 10:30-19', '%Y-%m-%d %H:%i-%s')", "1196389819"),
    ])
    run(conn, "SET time_zone = 'UTC'")
    check(conn, [("from_unixtime(1704067200)", "2024-01-01 00:00:00")])


def test_the_format_applies_with_a_from_clause_too(conn: Conn) -> None:
    from tests.query.sqlkit import rows
    assert rows(conn, "SELECT from_unixtime(1704067200, '%Y-%m-%d') FROM (SELECT 1) t") == [("2024-01-01",)]


def test_parsing_and_formatting(conn: Conn) -> None:
    check(conn, [
        ("str_to_date('2014-12-21 12:34:56', '%Y-%m-%d %H:%i:%s')", "2014-12-21 12:34:56"),  # str-to-date
        ("str_to_date('2024-01-02', '%Y-%m-%d')", "2024-01-02"),
        ("str_to_date('not a date', '%Y-%m-%d')", None),
        ("date_format('2009-10-04 22:23:00', '%W %M %Y')", "Sunday October 2009"),  # date-format
        ("date_format('2007-10-04 22:23:00', '%H:%i:%s')", "22:23:00"),
        ("date_format('2006-06-01', '%d')", "01"),
        ("date_format('1900-10-04 22:23:00', '%D %y %a %d %m %b %j')", "4th 00 Thu 04 10 Oct 277"),
        ("date_format('1997-10-04 22:23:00', '%H %k %I %r %T %S %w')", "22 22 10 10:23:00 PM 22:23:00 00 6"),
        ("date_format('1999-01-01', '%X %V')", "1998 52"),
        ("date_format('2024-12-30', '%u')", "53"), ("date_format(NULL, '%Y')", None),
        ("date_format('2009-10-04 22:23:00', '%e %c %k %l %p %r %T %j %y')",
         "4 10 22 10 PM 10:23:00 PM 22:23:00 277 09"),
    ])


def test_arithmetic_and_differences(conn: Conn) -> None:
    check(conn, [
        ("hours_add('2020-02-02 02:02:02', 1)", "2020-02-02 03:02:02"),  # hours-add
        ("minutes_add('2020-02-02', 1)", "2020-02-02 00:01:00"),  # minutes-add
        ("days_sub('2020-02-02 02:02:02', 1)", "2020-02-01 02:02:02"),  # days-sub
        ("months_add('2020-01-31 02:02:02', 1)", "2020-02-29 02:02:02"),  # months-add
        ("days_diff('2020-12-25 22:00:00', '2020-12-24 22:00:00')", "1"),  # days-diff
        ("days_diff('2020-12-25 22:00:00', '2020-12-24 22:00:01')", "0"),
        ("months_diff('2020-12-25', '2020-10-25')", "2"),  # months-diff
        ("hours_diff('2020-12-25 22:00:00', '2020-12-25 21:00:00')", "1"),  # hours-diff
        ("timestampdiff(MONTH, '2003-02-01', '2003-05-01')", "3"),  # timestampdiff
        ("timestampdiff(YEAR, '2002-05-01', '2001-01-01')", "-1"),
        ("timestampdiff(MINUTE, '2003-02-01', '2003-05-01 12:05:55')", "128885"),
        ("timestampadd(MINUTE, 1, '2019-01-02')", "2019-01-02 00:01:00"),  # timestampadd
        ("timestampadd(WEEK, 1, '2019-01-02')", "2019-01-09 00:00:00"),
        ("datediff('2007-12-31 23:59:59', '2007-12-30')", "1"),  # datediff
        ("datediff('2010-11-30 23:59:59', '2010-12-31')", "-31"),
        ("date_trunc('2010-12-02 19:28:30', 'day')", "2010-12-02 00:00:00"),  # date-trunc
        ("date_trunc('2010-12-02 19:28:30', 'month')", "2010-12-01 00:00:00"),
        ("date_trunc('hour', '2010-12-02 19:28:30')", "2010-12-02 19:00:00"),
    ])


def test_calendar(conn: Conn) -> None:
    check(conn, [
        ("convert_tz('2019-08-01 13:21:03', 'Asia/Shanghai', 'America/Los_Angeles')", "2019-07-31 22:21:03"),
        ("convert_tz('2019-08-01 13:21:03', '+08:00', '+00:00')", "2019-08-01 05:21:03"),
        ("week('2020-01-01')", "0"),  # week
        # MySQL's manual (function_week, function_yearweek): the eight modes.
        ("week('2008-02-20')", "7"), ("week('2008-02-20', 0)", "7"), ("week('2008-02-20', 1)", "8"),
        ("week('2008-12-31', 1)", "53"), ("week('2000-01-01', 0)", "0"), ("week('2000-01-01', 2)", "52"),
        ("yearweek('1987-01-01')", "198652"), ("week('2024-12-30', 3)", "1"), ("week('2024-12-30', 1)", "53"),
        ("yearweek('2024-12-30', 3)", "202501"), ("week('2023-01-01', 5)", "0"), ("week('2023-01-01', 7)", "52"),
        ("yearweek('2021-01-01')", "202052"), ("yearweek('2020-07-01')", "202026"),  # yearweek
        ("last_day('2000-02-03')", "2000-02-29"),  # last-day
        ("makedate(2021, 1)", "2021-01-01"), ("makedate(2021, 100)", "2021-04-10"),  # makedate
        ("sec_to_time(59738)", "16:35:38"),  # sec-to-time
        ("dayofweek('2019-06-25')", "3"),  # dayofweek: Sunday is 1
        ("dayname('2007-02-03 00:00:00')", "Saturday"), ("monthname('2008-02-03 00:00:00')", "February"),
        ("to_days('2007-10-07')", "733321"), ("from_days(730669)", "2000-07-03"),
        ("quarter('2025-05-01')", "2"), ("weekofyear('2008-02-20 00:00:00')", "8"),
    ])


def test_week_modes_against_independent_calendars() -> None:
    """Every day of twelve years: mode 0 is strftime's %U, 5 is %W, 3 is ISO 8601, 1 is ISO's week
    inside the year (0 before it, 53 after), 2 and 7 are 0 and 5 with week 0 the last of the year before."""
    first = dt.date(1999, 12, 1)
    days = [first + dt.timedelta(days=n) for n in range(365 * 12)]
    con = duckdb.connect()

    def weeks(mode: int, part: int = 0) -> dict[dt.date, int]:
        sql = _week_sql(*_week_rule(exp.Literal.number(mode), "week"))[part].replace("{0}", "d")
        found = con.execute(f"SELECT d, {sql} FROM (SELECT CAST(range AS DATE) AS d FROM "
                            f"range(DATE '{first}', DATE '{days[-1]}', INTERVAL 1 DAY))").fetchall()
        return {d: int(w) for d, w in found}

    by_mode = {m: weeks(m) for m in range(8)}
    iso_years = weeks(3, 1)
    for day in days[:-1]:
        iso_year, iso_week, _ = day.isocalendar()
        assert by_mode[0][day] == int(day.strftime("%U")), day
        assert by_mode[5][day] == int(day.strftime("%W")), day
        assert (by_mode[3][day], iso_years[day]) == (iso_week, iso_year), day
        assert by_mode[1][day] == (iso_week if iso_year == day.year else 0 if iso_year < day.year else 53), day
        for wrapped, base in ((2, 0), (7, 5)):
            before = by_mode[base].get(dt.date(day.year - 1, 12, 31))
            if before is not None:
                assert by_mode[wrapped][day] == (by_mode[base][day] or before), day


def test_a_week_mode_that_is_not_a_literal_is_refused(conn: Conn) -> None:
    fails(conn, "SELECT week('2024-01-01', 1 + 1)", 1235, "mode")


def test_arithmetic_keeps_the_argument_type(conn: Conn, db: str) -> None:
    """Doris' DATE plus days is a DATE, a DATETIME(p) plus any unit a DATETIME(p), a DATE plus hours a
    DATETIME, and a string a DATETIME of the digits it writes: type and fraction digits on the wire."""
    run(conn, "CREATE TABLE t (k INT, d DATE, d0 DATETIME, d3 DATETIME(3)) DUPLICATE KEY(k) "
              "DISTRIBUTED BY HASH(k) BUCKETS 1")
    run(conn, "INSERT INTO t VALUES (1, '2024-01-31', '2024-01-31 10:00:00', '2024-01-31 10:00:00.123')")
    date, datetime = 10, 12  # MySQL column type codes
    cases = [
        ("days_add(d, 1)", dt.date(2024, 2, 1), date, 0),
        ("date_add(d, INTERVAL 1 MONTH)", dt.date(2024, 2, 29), date, 0),
        ("adddate(d, 2)", dt.date(2024, 2, 2), date, 0),
        ("date_sub(d, INTERVAL 1 QUARTER)", dt.date(2023, 10, 31), date, 0),
        ("weeks_sub(d, 1)", dt.date(2024, 1, 24), date, 0),
        ("hours_add(d, 1)", dt.datetime(2024, 1, 31, 1), datetime, 0),
        ("timestampadd(MINUTE, 5, d0)", dt.datetime(2024, 1, 31, 10, 5), datetime, 0),
        ("date_sub(d0, INTERVAL 1 DAY)", dt.datetime(2024, 1, 30, 10), datetime, 0),
        ("seconds_add(d3, 1)", dt.datetime(2024, 1, 31, 10, 0, 1, 123000), datetime, 3),
        ("years_add(d3, 1)", dt.datetime(2025, 1, 31, 10, 0, 0, 123000), datetime, 3),
        # A string was read as a DATE here once: '… 10:00:00' plus an hour gave 01:00.
        ("date_add('2024-01-01 10:00:00', INTERVAL 1 HOUR)", dt.datetime(2024, 1, 1, 11), datetime, 0),
        ("days_add('2023-10-31', 1)", dt.datetime(2023, 11, 1), datetime, 0),
        ("hours_add('2024-01-01 10:00:00.5', 1)", dt.datetime(2024, 1, 1, 11, 0, 0, 500000), datetime, 3),
    ]
    with conn.cursor() as cur:
        for expression, value, type_code, digits in cases:
            cur.execute(f"SELECT {expression} FROM t")
            assert cur.fetchall() == ((value,),), expression
            assert (cur.description[0][1], cur.description[0][5]) == (type_code, digits), expression
    fails(conn, "SELECT date_add(d, INTERVAL '1 2' DAY_HOUR) FROM t", 1235, "DAY_HOUR")
