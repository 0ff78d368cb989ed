"""Conditional functions against Doris' answers: the examples of
https://doris.apache.org/docs/sql-manual/sql-functions/scalar-functions/conditional-functions/<name>."""

from __future__ import annotations

from tests.query.functionkit import check
from tests.query.sqlkit import Conn


def test_conditional(conn: Conn) -> None:
    check(conn, [
        ("if(1 > 2, 'a', 'b')", "b"), ("if(NULL, 'a', 'b')", "b"),  # if
        ("ifnull(1, 0)", "1"), ("ifnull(NULL, 10)", "10"),  # ifnull
        ("nvl(NULL, 10)", "10"),  # nvl
        ("coalesce(NULL, '1111', '0000')", "1111"),  # coalesce
        ("nullif(1, 1)", None), ("nullif(1, 0)", "1"),  # nullif
        ("case when 1 = 2 then 'a' when 1 = 1 then 'b' end", "b"),  # case
        ("case 2 when 1 then 'one' else 'other' end", "other"),
    ])
