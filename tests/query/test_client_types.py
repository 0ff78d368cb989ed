"""Every value type through the real Python MySQL clients, as parameters and as result values,
with the cursor description's type codes checked against MySQL's: PyMySQL and mysqlclient (text
protocol, parameters interpolated by the client), mysql-connector-python `cursor(prepared=True)`
pure Python and with its C extension (libmysqlclient: COM_STMT_PREPARE/EXECUTE, binary
parameters and binary result rows).

The C extension vendors an OpenSSL newer than this machine's; it loads only into a process that
has not loaded Python's `ssl` yet, and this one has (PyMySQL), so its round trip runs in a child
process (`python -m tests.query.test_client_types HOST PORT DB`) that imports it first."""

from __future__ import annotations

import datetime as dt
import os
import pickle
import subprocess
import sys
from decimal import Decimal
from pathlib import Path
from typing import Any

import mysql.connector
import MySQLdb
import pymysql
import pytest

pytestmark = pytest.mark.usefixtures("server")

# MySQL's type codes (include/field_types.h), as the clients report them in cursor.description.
LONG, DOUBLE, NULL, LONGLONG, DATE, TIME, DATETIME = 3, 5, 6, 8, 10, 11, 12
NEWDECIMAL, VAR_STRING = 246, 253

COLUMNS = "id BIGINT, big LARGEINT, amount DECIMAL(20,6), at0 DATETIME, at3 DATETIME(3), at6 DATETIME(6), " \
          "day DATE, name VARCHAR(50), score DOUBLE, nothing INT"
NAMES = "id, big, amount, at0, at3, at6, day, name, score, nothing"
# LARGEINT has no MySQL integer type: sent as DECIMAL(39,0), as MySQL sends SUM(BIGINT).
CODES = [LONGLONG, NEWDECIMAL, NEWDECIMAL, DATETIME, DATETIME, DATETIME, DATE, VAR_STRING, DOUBLE, LONG]
TEXT = "Zoë ☃ 日本 😀"
UNSIGNED_MAX = 2**64 - 1


def row(key: int, big: int, score: float = -2.5e-300) -> tuple[Any, ...]:
    return (key, big, Decimal("-12345.678901"), dt.datetime(2026, 12, 2, 11, 33, 2),
            dt.datetime(2026, 12, 2, 11, 33, 2, 804000), dt.datetime(2026, 12, 2, 11, 33, 2, 804755),
            dt.date(2020, 2, 29), TEXT, score, None)


def read_back(values: tuple[Any, ...]) -> tuple[Any, ...]:
    """What a client reads back for `row(...)`: LARGEINT as a Decimal."""
    return (values[0], Decimal(values[1]), *values[2:])


def table(conn: pymysql.connections.Connection) -> None:
    with conn.cursor() as cur:
        cur.execute(f"CREATE TABLE kinds ({COLUMNS}) DUPLICATE KEY(id) DISTRIBUTED BY HASH(id) BUCKETS 1")


def codes(description: Any) -> list[int]:
    return [int(d[1]) for d in description]


def check_text_client(conn: Any) -> None:
    """PyMySQL and mysqlclient: the client renders `%s` parameters as SQL literals."""
    cur = conn.cursor()
    for key, big in [(1, UNSIGNED_MAX), (2, -(2**63)), (3, 2**63 - 1)]:
        cur.execute(f"INSERT INTO kinds ({NAMES}) VALUES ({', '.join(['%s'] * 10)})", row(key, big))
    cur.execute(f"SELECT {NAMES} FROM kinds ORDER BY id")
    assert codes(cur.description) == CODES
    assert [tuple(r) for r in cur.fetchall()] == [read_back(row(1, UNSIGNED_MAX)), read_back(row(2, -(2**63))),
                                                  read_back(row(3, 2**63 - 1))]
    cur.execute("SELECT id, at6 FROM kinds WHERE amount = %s AND at3 = %s AND day = %s AND name = %s AND id = %s",
                (Decimal("-12345.678901"), dt.datetime(2026, 12, 2, 11, 33, 2, 804000), dt.date(2020, 2, 29), TEXT, 1))
    assert [tuple(r) for r in cur.fetchall()] == [(1, dt.datetime(2026, 12, 2, 11, 33, 2, 804755))]
    cur.execute("SELECT CAST('10:01:02' AS TIME) AS t, -9223372036854775808 AS lo, 9223372036854775807 AS hi, "
                "NULL AS n, CAST(1.5 AS DOUBLE) AS d FROM kinds WHERE id = 1")
    assert codes(cur.description) == [TIME, LONGLONG, LONGLONG, NULL, DOUBLE]
    assert [tuple(r) for r in cur.fetchall()] == [(dt.timedelta(hours=10, minutes=1, seconds=2), -(2**63),
                                                   2**63 - 1, None, 1.5)]
    cur.execute(f"SELECT {NAMES} FROM kinds WHERE false")
    assert codes(cur.description) == CODES and list(cur.fetchall()) == []
    cur.close()


def test_pymysql(conn: pymysql.connections.Connection, db: str) -> None:
    table(conn)
    check_text_client(conn)


def test_mysqlclient(conn: pymysql.connections.Connection, db: str) -> None:
    table(conn)
    client = MySQLdb.connect(host="127.0.0.1", port=int(os.environ["STRATA_SQL_PORT"]), user="root", password="",
                             database=db, charset="utf8mb4")
    try:
        check_text_client(client)
    finally:
        client.close()


def test_instants_in_the_session_time_zone(conn: pymysql.connections.Connection, db: str) -> None:
    """now() is an instant (TIMESTAMP WITH TIME ZONE in the executor): sent as a naive DATETIME in
    the session's time_zone, never with an offset (Connector/J failed on `+00:00`)."""
    table(conn)
    with conn.cursor() as cur:
        cur.execute("INSERT INTO kinds (id) VALUES (1)")
        for zone, hours in [("+00:00", 0.0), ("+08:00", 8.0), ("-05:30", -5.5), ("UTC", 0.0)]:
            cur.execute(f"SET time_zone = '{zone}'")
            cur.execute("SELECT now() AS n FROM kinds")
            assert codes(cur.description) == [DATETIME]
            [(value,)] = cur.fetchall()
            expected = dt.datetime.now(dt.UTC).replace(tzinfo=None) + dt.timedelta(hours=hours)
            assert isinstance(value, dt.datetime) and value.tzinfo is None
            assert abs(value - expected) < dt.timedelta(minutes=2), (zone, value, expected)


OTHER_TYPES = ("SELECT [1, 2] AS a, CAST('{\"k\":1}' AS JSON) AS j, CAST('ab' AS VARBINARY) AS b, true AS t, "
               "CAST(-1 AS TINYINT) AS ti, CAST(-2 AS SMALLINT) AS si, CAST(1.5 AS FLOAT) AS f FROM kinds WHERE id = ")
# Doris ARRAY as text, JSON, BLOB, BOOLEAN as TINYINT(1), TINYINT, SMALLINT, FLOAT.
OTHER_CODES = [254, 245, 252, 1, 1, 2, 4]
OTHER_VALUES = ("[1, 2]", '{"k":1}', b"ab", 1, -1, -2, 1.5)


def test_other_types_in_text_and_binary_rows(conn: pymysql.connections.Connection, db: str) -> None:
    table(conn)
    with conn.cursor() as cur:
        cur.execute("INSERT INTO kinds (id) VALUES (1)")
        cur.execute(OTHER_TYPES + "1")
        assert codes(cur.description) == OTHER_CODES
        assert [tuple(r) for r in cur.fetchall()] == [OTHER_VALUES]
    client = mysql.connector.connect(host="127.0.0.1", port=int(os.environ["STRATA_SQL_PORT"]), user="root",
                                     database=db, use_pure=True, connection_timeout=10)
    try:
        cur = client.cursor(prepared=True)
        cur.execute(OTHER_TYPES + "?", (1,))
        assert codes(cur.description) == OTHER_CODES
        assert [tuple(r) for r in cur.fetchall()] == [OTHER_VALUES]
    finally:
        client.close()


def prepared_round_trip(conn: Any, big: int, score: float) -> dict[str, Any]:
    """mysql-connector-python's server-side prepared statements: every parameter type bound in the
    binary protocol, results in binary rows. Returns what the client saw, for the caller to check
    (the C extension's run happens in a child process)."""
    seen: dict[str, Any] = {}
    cur = conn.cursor(prepared=True)
    cur.execute(f"INSERT INTO kinds ({NAMES}) VALUES ({', '.join(['?'] * 10)})", row(1, big, score))
    cur.execute(f"SELECT {NAMES} FROM kinds WHERE id = ?", (1,))
    seen["codes"], seen["rows"] = codes(cur.description), [tuple(r) for r in cur.fetchall()]
    cur.execute("SELECT id FROM kinds WHERE amount = ? AND at6 = ? AND at3 = ? AND day = ? AND name = ? "
                "AND score = ? AND big = ? AND nothing IS NULL AND ? IS NULL",
                (Decimal("-12345.678901"), dt.datetime(2026, 12, 2, 11, 33, 2, 804755),
                 dt.datetime(2026, 12, 2, 11, 33, 2, 804000), dt.date(2020, 2, 29), TEXT, score, big, None))
    seen["found"] = [tuple(r) for r in cur.fetchall()]
    cur.execute("SELECT ?, ?, ?, ?, ?, ?, ? FROM kinds WHERE id = 1",
                (Decimal("1.50"), dt.date(2021, 3, 4), dt.datetime(2021, 3, 4, 5, 6, 7), dt.time(10, 1, 2),
                 -(2**63), 0.5, TEXT))
    seen["echo_codes"], seen["echo"] = codes(cur.description), [tuple(r) for r in cur.fetchall()]
    cur.execute(f"SELECT {NAMES} FROM kinds WHERE id = ?", (-1,))
    seen["empty_codes"], seen["empty"] = codes(cur.description), cur.fetchall()
    cur.close()
    return seen


def check_prepared(seen: dict[str, Any], big: int, score: float) -> None:
    assert seen["codes"] == CODES
    assert seen["rows"] == [read_back(row(1, big, score))]
    assert seen["found"] == [(1,)]
    assert seen["echo_codes"] == [NEWDECIMAL, DATE, DATETIME, TIME, LONGLONG, DOUBLE, VAR_STRING]
    assert seen["echo"] == [(Decimal("1.50"), dt.date(2021, 3, 4), dt.datetime(2021, 3, 4, 5, 6, 7),
                             dt.timedelta(hours=10, minutes=1, seconds=2), -(2**63), 0.5, TEXT)]
    assert seen["empty_codes"] == CODES and seen["empty"] == []


def test_connector_pure(conn: pymysql.connections.Connection, db: str) -> None:
    table(conn)
    client = mysql.connector.connect(host="127.0.0.1", port=int(os.environ["STRATA_SQL_PORT"]), user="root",
                                     database=db, use_pure=True, connection_timeout=10)
    try:
        check_prepared(prepared_round_trip(client, UNSIGNED_MAX, -2.5e-300), UNSIGNED_MAX, -2.5e-300)
    finally:
        client.close()


def test_connector_c_extension(conn: pymysql.connections.Connection, db: str) -> None:
    table(conn)
    root = Path(__file__).resolve().parents[2]
    child = subprocess.run([sys.executable, "-c", "import _mysql_connector, runpy; "
                            "runpy.run_module('tests.query.test_client_types', run_name='__main__')",
                            "127.0.0.1", os.environ["STRATA_SQL_PORT"], db],
                           cwd=root, capture_output=True, timeout=60, check=False)
    assert child.returncode == 0, child.stderr.decode()[-2000:]
    # The C extension binds Python ints as signed 64-bit (its largest is 2**63 - 1) and floats as
    # 4-byte FLOATs (-2.5e-300 would arrive as -0.0).
    check_prepared(pickle.loads(child.stdout), 2**63 - 1, -2.5)


def _c_extension_main(host: str, port: str, database: str) -> None:
    from mysql.connector.connection_cext import CMySQLConnection

    client = mysql.connector.connect(host=host, port=int(port), user="root", database=database, use_pure=False,
                                     connection_timeout=10)
    assert isinstance(client, CMySQLConnection)
    try:
        sys.stdout.buffer.write(pickle.dumps(prepared_round_trip(client, 2**63 - 1, -2.5)))
    finally:
        client.close()


if __name__ == "__main__":
    _c_extension_main(*sys.argv[1:4])
