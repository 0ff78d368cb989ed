"""Fixtures of the client matrix (issue 16): the stack's SQL address, and per test module a fresh
database with a user of its own (password, grants on that database only) that the client logs in as.

Known failures: a module lists the checks that fail today in ``XFAIL``, keyed by (test function name,
parameter id or None), each with the reason. They are marked ``xfail(strict=True)``, so a check that
starts passing fails the run until its entry is removed, and the table stays the list of what is broken.
"""

from __future__ import annotations

import os
import uuid
from collections.abc import Iterator

import pymysql
import pytest

from tests.clients.matrix import Login


def _root(port: int) -> pymysql.connections.Connection:
    return pymysql.connect(host="127.0.0.1", port=port, user="root",
                           password=os.environ.get("STRATA_ROOT_PASSWORD", ""), autocommit=True,
                           connect_timeout=10, read_timeout=60)


@pytest.fixture(scope="session")
def sql_port() -> int:
    """Fails (not skips) when the SQL server is down, so a run without the stack cannot go green."""
    if "STRATA_SQL_PORT" not in os.environ:
        pytest.fail("STRATA_SQL_PORT is not set; run the tests through infra/test")
    port = int(os.environ["STRATA_SQL_PORT"])
    try:
        _root(port).close()
    except pymysql.MySQLError as exc:
        pytest.fail(f"the SQL server is not reachable (run the tests through infra/test): {exc}")
    return port


@pytest.fixture(scope="module")
def login(sql_port: int) -> Iterator[Login]:
    """A new database and a user with a password and the privileges an application has on it."""
    suffix = uuid.uuid4().hex[:8]
    database, user, password = f"clients_{suffix}", f"client_{suffix}", f"pw-{uuid.uuid4().hex}"
    with _root(sql_port) as conn, conn.cursor() as cur:
        cur.execute(f"CREATE DATABASE {database}")
        cur.execute(f"CREATE USER '{user}'@'%' IDENTIFIED BY '{password}'")
        cur.execute(f"GRANT SELECT_PRIV, LOAD_PRIV, ALTER_PRIV, CREATE_PRIV, DROP_PRIV ON {database}.* TO '{user}'@'%'")
    yield Login("127.0.0.1", sql_port, user, password, database)
    with _root(sql_port) as conn, conn.cursor() as cur:
        cur.execute(f"DROP USER IF EXISTS '{user}'@'%'")
        cur.execute(f"DROP DATABASE IF EXISTS {database} FORCE")


@pytest.fixture(autouse=True)
def known_failure(request: pytest.FixtureRequest) -> None:
    """Marks this test xfail(strict=True) when its module's XFAIL table names it (see the module doc)."""
    table: dict[tuple[str, str | None], str] = getattr(request.module, "XFAIL", {})
    callspec = getattr(request.node, "callspec", None)
    reason = table.get((request.node.originalname, callspec.id if callspec else None))
    if reason is not None:
        request.applymarker(pytest.mark.xfail(strict=True, reason=f"issue 16: {reason}"))
