"""Helpers for the SQL integration tests (tests/query/test_sql_*.py): run statements through
pymysql against the stack `infra/test` started, and check errors the way a client sees them."""

from __future__ import annotations

import os
from collections.abc import Sequence
from typing import Any, TypeAlias

import pymysql
import pytest

Row = tuple[Any, ...]
# An alias, not a variable: the tests annotate their fixtures with it.
Conn: TypeAlias = pymysql.connections.Connection


def connect(database: str | None = None) -> pymysql.connections.Connection:
    # No default port: without infra/test's environment a default would reach somebody else's stack.
    port = int(os.environ["STRATA_SQL_PORT"])
    return pymysql.connect(host="127.0.0.1", port=port, user="root", database=database, autocommit=True,
                           connect_timeout=10, read_timeout=60)


def run(conn: pymysql.connections.Connection, sql: str) -> int:
    """Executes a statement; returns the affected-rows count the server sent."""
    with conn.cursor() as cur:
        return int(cur.execute(sql))


def rows(conn: pymysql.connections.Connection, sql: str) -> list[Row]:
    with conn.cursor() as cur:
        cur.execute(sql)
        return [tuple(r) for r in cur.fetchall()]


def columns(conn: pymysql.connections.Connection, sql: str) -> list[str]:
    with conn.cursor() as cur:
        cur.execute(sql)
        return [d[0] for d in cur.description or ()]


def scalar(conn: pymysql.connections.Connection, sql: str) -> Any:
    found = rows(conn, sql)
    assert len(found) == 1 and len(found[0]) == 1, found
    return found[0][0]


def fails(conn: pymysql.connections.Connection, sql: str, code: int, *fragments: str) -> str:
    """Asserts `sql` fails with MySQL error `code` and a message naming every fragment
    (case-insensitive), then that the same connection still answers. Returns the message."""
    with pytest.raises(pymysql.MySQLError) as caught:
        run(conn, sql)
    err_code, message = caught.value.args[0], str(caught.value.args[1])
    assert err_code == code, f"{sql!r}: expected error {code}, got {err_code}: {message}"
    for fragment in fragments:
        assert fragment.lower() in message.lower(), f"{sql!r}: {fragment!r} not in {message!r}"
    assert rows(conn, "SELECT 1") == [(1,)], "the connection is unusable after an error"
    return message


def label_used(exc: pymysql.MySQLError) -> bool:
    """Whether `exc` is Doris' "label already used": error 1105 with `errCode = 5001` in the message,
    as Doris sends it (its own code 5001 is not a MySQL error number)."""
    return exc.args[0] == 1105 and "errCode = 5001" in str(exc.args[1])


def sorted_rows(conn: pymysql.connections.Connection, sql: str) -> list[Row]:
    """Rows in a stable order for comparing (NULLs first)."""
    return sorted(rows(conn, sql), key=lambda r: tuple((v is not None, v) for v in r))


def show_create(conn: pymysql.connections.Connection, table: str) -> str:
    found = rows(conn, f"SHOW CREATE TABLE {table}")
    assert len(found) == 1 and found[0][0] == table.split(".")[-1], found
    return str(found[0][1])


def values(items: Sequence[Row]) -> str:
    """`(1, 'a'), (2, NULL)` for an INSERT."""
    def literal(v: Any) -> str:
        if v is None:
            return "NULL"
        if isinstance(v, str):
            return "'" + v.replace("'", "''") + "'"
        return str(v)
    return ", ".join("(" + ", ".join(literal(v) for v in item) + ")" for item in items)
