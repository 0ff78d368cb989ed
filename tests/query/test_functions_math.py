"""Math functions against Doris' answers: the examples of
https://doris.apache.org/docs/sql-manual/sql-functions/scalar-functions/numeric-functions/<name>."""

from __future__ import annotations

from tests.query.functionkit import check
from tests.query.sqlkit import Conn


def test_math(conn: Conn) -> None:
    check(conn, [
        ("pmod(13, 5)", "3"), ("pmod(-13, 5)", "2"),  # pmod
        ("truncate(124.3867, 2)", "124.38"), ("truncate(124.3867, 0)", "124"),  # truncate
        ("truncate(-124.3867, -2)", "-100"),
        ("conv(15, 10, 2)", "1111"), ("conv('ff', 16, 10)", "255"), ("conv(230, 10, 16)", "E6"),  # conv
        ("bin(10)", "1010"),  # bin
        ("log(10, 100)", "2.0"), ("ln(1)", "0.0"),  # log, ln
        ("round(3.4)", "3"), ("round(3.5)", "4"), ("round(-3.4)", "-3"), ("round(-3.5)", "-4"),  # round
        ("round(2.675, 2)", "2.68"),  # half up on decimals
        ("mod(7, 3)", "1"), ("abs(-2)", "2"), ("sign(-3)", "-1"), ("pow(2, 3)", "8.0"),
    ])
