"""Client matrix, Python DB-API drivers: PyMySQL, mysqlclient (libmysqlclient), mysql-connector-python
pure and with its C extension. One test per check and driver (``test_prepared[mysqlclient]``); the checks
are in dbapi_checks.py. They run in order: DDL creates the tables the later checks read."""

from __future__ import annotations

import json
import os
import subprocess
import sys
from dataclasses import asdict

import pytest

from schemas.config import REPO_ROOT
from tests.clients import dbapi_checks
from tests.clients.matrix import Login

pytestmark = pytest.mark.integration

# What fails today (conftest.py: strict xfail, remove an entry when its check passes).
_AUTOCOMMIT_ON = "mysql-connector-python (pure) sends SET autocommit = ON on connect: 1064 syntax error"
_RESULT_TYPES = "result metadata is guessed from values: an empty result types every column NULL (6)"
_NOW6 = "NOW(6) is sent as a string (254) without its fraction; with FROM it is 1105"
_SQLSTATE = "an unknown table is 1146 with SQLSTATE HY000, not 42S02"
# What each check gets besides; for connector-pure found by connecting without autocommit=True.
_BEYOND_CONNECT = {"result_metadata": _RESULT_TYPES, "now6": _NOW6, "error_unknown_table": _SQLSTATE}
XFAIL: dict[tuple[str, str | None], str] = {
    **{(f"test_{check}", "connector-pure"): _AUTOCOMMIT_ON + (f"; then: {_BEYOND_CONNECT[check]}"
                                                              if check in _BEYOND_CONNECT else "")
       for check in ("connect", "ddl", "insert", "select_types", "result_metadata", "now6", "time_travel",
                     "prepared", "error_unknown_table", "error_syntax")},
    **{("test_result_metadata", driver): _RESULT_TYPES for driver in ("pymysql", "mysqlclient", "connector-c")},
    **{("test_now6", driver): _NOW6 for driver in ("pymysql", "mysqlclient", "connector-c")},
    ("test_prepared", "connector-c"): "DATETIME(3)/(6) values read back in binary rows (prepared SELECT) lose "
                                      "their fraction in libmysqlclient: the columns' decimals are not sent (the "
                                      "value is stored right; the pure driver reads it right)",
    ("test_error_unknown_table", "connector-c"): _SQLSTATE,
}


@pytest.fixture(params=dbapi_checks.DRIVERS)
def driver(request: pytest.FixtureRequest) -> str:
    return str(request.param)


@pytest.fixture(scope="module")
def c_extension(login: Login) -> dict[str, str | None]:
    """Every check run with the C extension, in one fresh interpreter that loads it before `ssl` (see
    dbapi_checks' doc): check name to its failure text, or None when it passed."""
    proc = subprocess.run([sys.executable, "-m", "tests.clients.dbapi_checks", json.dumps(asdict(login)),
                           *dbapi_checks.CHECKS], cwd=REPO_ROOT, env={**os.environ, "PYTHONPATH": str(REPO_ROOT)},
                          capture_output=True, text=True, timeout=300)
    assert proc.returncode == 0, f"the C-extension run failed:\n{proc.stderr[-3000:]}"
    outcomes: dict[str, str | None] = json.loads(proc.stdout.strip().splitlines()[-1])
    return outcomes


def _run(check: str, driver: str, login: Login, request: pytest.FixtureRequest) -> None:
    if driver != "connector-c":
        dbapi_checks.run(check, driver, login)
        return
    failure = request.getfixturevalue("c_extension")[check]
    if failure is not None:
        raise AssertionError(f"{check} with the C extension failed:\n{failure}")


def test_connect(driver: str, login: Login, request: pytest.FixtureRequest) -> None:
    _run("connect", driver, login, request)


def test_ddl(driver: str, login: Login, request: pytest.FixtureRequest) -> None:
    _run("ddl", driver, login, request)


def test_insert(driver: str, login: Login, request: pytest.FixtureRequest) -> None:
    _run("insert", driver, login, request)


def test_select_types(driver: str, login: Login, request: pytest.FixtureRequest) -> None:
    _run("select_types", driver, login, request)


def test_result_metadata(driver: str, login: Login, request: pytest.FixtureRequest) -> None:
    _run("result_metadata", driver, login, request)


def test_now6(driver: str, login: Login, request: pytest.FixtureRequest) -> None:
    _run("now6", driver, login, request)


def test_time_travel(driver: str, login: Login, request: pytest.FixtureRequest) -> None:
    _run("time_travel", driver, login, request)


def test_prepared(driver: str, login: Login, request: pytest.FixtureRequest) -> None:
    _run("prepared", driver, login, request)


def test_error_unknown_table(driver: str, login: Login, request: pytest.FixtureRequest) -> None:
    _run("error_unknown_table", driver, login, request)


def test_error_syntax(driver: str, login: Login, request: pytest.FixtureRequest) -> None:
    _run("error_syntax", driver, login, request)


def test_every_check_has_a_test() -> None:
    """A check added to dbapi_checks.py without a test here would never run."""
    tests = {name.removeprefix("test_") for name in globals() if name.startswith("test_")}
    assert set(dbapi_checks.CHECKS) <= tests, set(dbapi_checks.CHECKS) - tests
