"""Date and time functions against Doris' answers: the examples of
https://doris.apache.org/docs/sql-manual/sql-functions/scalar-functions/date-time-functions/<name>
(run in the docs' time zone, Asia/Shanghai) and of MySQL's manual for the format specifiers
(https://dev.mysql.com/doc/refman/8.0/en/date-and-time-functions.html#function_date-format)."""

from __future__ import annotations

from tests.query.functionkit import check
from tests.query.sqlkit import Conn, run


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
        ("yearweek('2021-01-01')", "202052"), ("yearweek('2020-07-01')", "202026"),  # yearweek
        ("last_day('2000-02-03')", "2000-02-29"),  # last-day
        ("makedate(2021, 1)", "2021-01-01"), ("makedate(2021, 100)", "2021-04-10"),  # makedate
        ("sec_to_time(59738)", "16:35:38"),  # sec-to-time
        ("dayofweek('2019-06-25')", "3"),  # dayofweek: Sunday is 1
        ("dayname('2007-02-03 00:00:00')", "Saturday"), ("monthname('2008-02-03 00:00:00')", "February"),
        ("to_days('2007-10-07')", "733321"), ("from_days(730669)", "2000-07-03"),
        ("quarter('2025-05-01')", "2"), ("weekofyear('2008-02-20 00:00:00')", "8"),
    ])
