"""Client matrix, Python DB-API drivers: PyMySQL, mysqlclient (libmysqlclient), mysql-connector-python
pure and with its C extension. One test per check and driver (``test_check[prepared-mysqlclient]``); the
checks are in dbapi_checks.py. They run in order: DDL creates the tables the later checks read."""

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
XFAIL: dict[tuple[str, str | None], str] = {}


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


@pytest.mark.parametrize("check", dbapi_checks.CHECKS)
def test_check(check: str, driver: str, login: Login, request: pytest.FixtureRequest) -> None:
    """One check with one driver (ids `<check>-<driver>`); pytest runs every driver's `ddl` before any
    driver's `insert`, in the order of dbapi_checks.CHECKS."""
    _run(check, driver, login, request)
