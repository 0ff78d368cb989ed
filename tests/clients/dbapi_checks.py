"""The matrix checks for the Python DB-API drivers: PyMySQL, mysqlclient (MySQLdb) and
mysql-connector-python, pure and C extension. Each check opens its own connection as the module's user,
does what an application does with that driver, and asserts exactly what MySQL would give it.

mysql-connector-python's C extension must be imported before Python's `ssl` module: its wheel ships an
OpenSSL newer than Debian's under the same soname, and once `ssl` (which pytest loads) has mapped the
system one, `import _mysql_connector` fails. So test_dbapi.py runs the C-extension checks in one fresh
interpreter: ``python -m tests.clients.dbapi_checks <json login> <check>…`` (the same functions, in the
order given), which prints one JSON object: each check's failure text, or null when it passed.
"""

from __future__ import annotations

if __name__ == "__main__":  # before anything imports ssl (see the module doc)
    import _mysql_connector  # type: ignore[import-not-found]  # noqa: F401

import json
import sys
import time
import traceback
from collections.abc import Callable
from typing import Any

from tests.clients.matrix import (
    COLUMNS,
    PREPARED_ROWS,
    PREPARED_TEXT,
    ROWS,
    SYNTAX_ERROR,
    TIME_TRAVEL_GAP_AFTER_S,
    TIME_TRAVEL_GAP_S,
    TYPE_CODES,
    UNKNOWN_TABLE,
    Login,
    Tables,
    prepared_params,
)

DRIVERS = ["pymysql", "mysqlclient", "connector-pure", "connector-c"]
# Drivers with server-side prepared statements (COM_STMT_PREPARE/EXECUTE); the others interpolate.
SERVER_PREPARES = {"connector-pure", "connector-c"}
# Drivers whose exceptions carry the SQLSTATE (PyMySQL and MySQLdb drop it).
REPORTS_SQLSTATE = {"connector-pure", "connector-c"}


def connect(driver: str, login: Login) -> Any:
    if driver == "pymysql":
        import pymysql
        return pymysql.connect(host=login.host, port=login.port, user=login.user, password=login.password,
                               database=login.database, autocommit=True, charset="utf8mb4")
    if driver == "mysqlclient":
        import MySQLdb
        return MySQLdb.connect(host=login.host, port=login.port, user=login.user, password=login.password,
                               database=login.database, autocommit=True, charset="utf8mb4")
    if driver in ("connector-pure", "connector-c"):
        import mysql.connector
        conn = mysql.connector.connect(host=login.host, port=login.port, user=login.user, password=login.password,
                                       database=login.database, autocommit=True, use_pure=driver == "connector-pure")
        expected = "CMySQLConnection" if driver == "connector-c" else "MySQLConnection"
        same(type(conn).__name__, expected, f"{driver}: the connection class")
        return conn
    raise ValueError(f"unknown driver {driver!r}")


def same(got: Any, expected: Any, what: str) -> None:
    """assert got == expected, saying both: these checks also run outside pytest's assertion rewriting."""
    if got != expected:
        raise AssertionError(f"{what}:\n  got      {got!r}\n  expected {expected!r}")


def _rows(cur: Any) -> list[tuple[Any, ...]]:
    return [tuple(r) for r in cur.fetchall()]


def _cursor(conn: Any, driver: str, prepared: bool = False) -> Any:
    if prepared and driver in SERVER_PREPARES:
        return conn.cursor(prepared=True)
    return conn.cursor()


def check_connect(conn: Any, driver: str, tables: Tables, login: Login) -> None:
    cur = conn.cursor()
    cur.execute("SELECT DATABASE(), 1")
    same(_rows(cur), [(login.database, 1)], "SELECT DATABASE(), 1")


def check_ddl(conn: Any, driver: str, tables: Tables, login: Login) -> None:
    cur = conn.cursor()
    cur.execute(tables.create_dup())
    cur.execute(tables.create_uniq())
    cur.execute("SHOW TABLES")
    names = {r[0] for r in cur.fetchall()}
    same({tables.dup, tables.uniq} & names, {tables.dup, tables.uniq}, "SHOW TABLES after CREATE TABLE")


def check_insert(conn: Any, driver: str, tables: Tables, login: Login) -> None:
    cur = conn.cursor()
    cur.execute(tables.insert_rows())
    same(cur.rowcount, 2, "rows inserted")


def check_select_types(conn: Any, driver: str, tables: Tables, login: Login) -> None:
    cur = conn.cursor()
    cur.execute(tables.select_rows())
    same(_rows(cur), ROWS, tables.select_rows())


def check_result_metadata(conn: Any, driver: str, tables: Tables, login: Login) -> None:
    cur = conn.cursor()
    cur.execute(tables.select_empty())
    same(_rows(cur), [], tables.select_empty())
    same([(d[0], d[1]) for d in cur.description], list(zip(COLUMNS, TYPE_CODES, strict=True)),
         "column names and MySQL type codes of an empty result")


def check_now6(conn: Any, driver: str, tables: Tables, login: Login) -> None:
    """NOW(6) is a DATETIME with microseconds, with and without FROM (time-travel users take instants so)."""
    cur = conn.cursor()
    values = []
    for sql in ("SELECT NOW(6)", f"SELECT NOW(6) FROM {tables.dup} WHERE id = 1"):
        cur.execute(sql)
        value = cur.fetchall()[0][0]
        same((type(value).__name__, cur.description[0][1]), ("datetime", 12),
             f"{sql} ({value!r}): Python type, type code")
        values.append(value)
    if not any(v.microsecond for v in values):
        raise AssertionError(f"NOW(6) came without a fraction: {values}")


def check_time_travel(conn: Any, driver: str, tables: Tables, login: Login) -> None:
    cur = conn.cursor()
    cur.execute(f"INSERT INTO {tables.uniq} VALUES (1, 'before')")
    time.sleep(TIME_TRAVEL_GAP_S)
    cur.execute("SELECT NOW(6)")
    instant = str(cur.fetchall()[0][0])
    time.sleep(TIME_TRAVEL_GAP_AFTER_S)
    cur.execute(f"INSERT INTO {tables.uniq} VALUES (1, 'after')")
    cur.execute(tables.time_travel(instant))
    same(_rows(cur), [(1, "before")], tables.time_travel(instant))
    cur.execute(f"SELECT id, v FROM {tables.uniq}")
    same(_rows(cur), [(1, "after")], "the latest state")


def check_prepared(conn: Any, driver: str, tables: Tables, login: Login) -> None:
    """Every parameter type (int, big int, Decimal, date, datetime with fraction, non-ASCII text with a
    quote and a `?`, float, bool, NULL) through the driver's prepared statements where it has them."""
    cur = _cursor(conn, driver, prepared=True)
    for params in prepared_params():
        cur.execute(tables.prepared_insert(), params)
    cur.execute(tables.prepared_select(), (3, PREPARED_TEXT))
    same(_rows(cur), PREPARED_ROWS, "rows written and read back through prepared statements")


def _error(conn: Any, driver: str, sql: str, code: int, sqlstate: str) -> None:
    cur = conn.cursor()
    try:
        cur.execute(sql)
        cur.fetchall()
    except Exception as exc:  # each driver has its own Error class; its code is what counts
        got_code = getattr(exc, "errno", None) or exc.args[0]
        got_state = getattr(exc, "sqlstate", None) if driver in REPORTS_SQLSTATE else sqlstate
        same((got_code, got_state), (code, sqlstate), f"{sql!r} failed with {exc!r}: code, SQLSTATE")
    else:
        raise AssertionError(f"{sql!r} did not fail")
    cur = conn.cursor()
    cur.execute("SELECT 1")
    same(_rows(cur), [(1,)], "SELECT 1 after the error")


def check_error_unknown_table(conn: Any, driver: str, tables: Tables, login: Login) -> None:
    _error(conn, driver, *UNKNOWN_TABLE)


def check_error_syntax(conn: Any, driver: str, tables: Tables, login: Login) -> None:
    _error(conn, driver, *SYNTAX_ERROR)


CHECKS: dict[str, Callable[[Any, str, Tables, Login], None]] = {
    name.removeprefix("check_"): fn for name, fn in dict(globals()).items() if name.startswith("check_")
}


def run(check: str, driver: str, login: Login) -> None:
    """Runs one check on a new connection as `login`; the tables are named after the driver."""
    conn = connect(driver, login)
    try:
        CHECKS[check](conn, driver, Tables(driver.replace("-", "_")), login)
    finally:
        conn.close()


def run_each(checks: list[str], driver: str, login: Login) -> dict[str, str | None]:
    """Runs every check in order; for each, None when it passed or its failure as text."""
    outcomes: dict[str, str | None] = {}
    for check in checks:
        try:
            run(check, driver, login)
            outcomes[check] = None
        except Exception:  # the failure, whatever the driver raised, is the check's outcome
            outcomes[check] = traceback.format_exc(limit=-3)
    return outcomes


if __name__ == "__main__":
    print(json.dumps(run_each(sys.argv[2:], "connector-c", Login(**json.loads(sys.argv[1])))))
