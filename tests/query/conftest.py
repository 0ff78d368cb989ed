"""Fixtures for the SQL integration tests: a pymysql connection to the stack's SQL server
(STRATA_SQL_PORT, exported by `infra/test`) and a fresh database per test, so tests are
independent. The parser tests in this folder use none of them and need no stack."""

from __future__ import annotations

import os
import uuid
from collections.abc import Iterator

import pymysql
import pytest

from schemas.config import Settings, load_settings
from tests.query.console_kit import browser  # noqa: F401 - a signed-out console client (tests/query/console_kit.py)
from tests.query.recycling_kit import recycling  # noqa: F401 - an in-process recycler (tests/query/recycling_kit.py)
from tests.query.s3_kit import bucket, s3_user  # noqa: F401 - the S3 paths' fixtures (tests/query/s3_kit.py)
from tests.query.sqlkit import connect, run


@pytest.fixture(scope="session")
def config() -> Settings:
    """The stack's settings, as the tests' environment names it."""
    return load_settings()


@pytest.fixture(scope="session")
def server() -> None:
    """Fails (not skips) when the SQL server is down, so a run without the stack cannot go green."""
    if "STRATA_SQL_PORT" not in os.environ:
        pytest.fail("STRATA_SQL_PORT is not set; run the tests through infra/test")
    try:
        connect().close()
    except pymysql.MySQLError as exc:
        pytest.fail(f"the SQL server is not reachable (run the tests through infra/test): {exc}")


@pytest.fixture
def conn(server: None) -> Iterator[pymysql.connections.Connection]:
    connection = connect()
    yield connection
    connection.close()


@pytest.fixture
def db(conn: pymysql.connections.Connection) -> Iterator[str]:
    """A new database, selected on `conn`; dropped (FORCE) afterwards."""
    name = f"t_{uuid.uuid4().hex[:10]}"
    run(conn, f"CREATE DATABASE {name}")
    run(conn, f"USE {name}")
    yield name
    try:
        run(conn, f"DROP DATABASE IF EXISTS {name} FORCE")
    except pymysql.MySQLError:
        pass  # the test broke the connection; the throw-away stack is removed anyway


@pytest.fixture
def other(db: str) -> Iterator[pymysql.connections.Connection]:
    """A second connection on the same database, to check another client sees each effect."""
    connection = connect(db)
    yield connection
    connection.close()


@pytest.fixture
def user(conn: pymysql.connections.Connection) -> Iterator[tuple[str, str]]:
    """A new user with a password of its own and no privileges: (name, password); dropped afterwards."""
    name, password = f"u_{uuid.uuid4().hex[:8]}", f"pw-{uuid.uuid4().hex}"
    run(conn, f"CREATE USER '{name}'@'%' IDENTIFIED BY '{password}'")
    yield name, password
    run(conn, f"DROP USER IF EXISTS '{name}'")


@pytest.fixture
def reader(conn: pymysql.connections.Connection, db: str,
           user: tuple[str, str]) -> Iterator[tuple[pymysql.connections.Connection, str, str]]:
    """`user` logged in to `db`, where it may read table `open` (SELECT_PRIV) and not table `closed`:
    (its connection, its name, its password)."""
    name, password = user
    tail = "DISTRIBUTED BY HASH(k) BUCKETS 1"
    run(conn, f"CREATE TABLE open (k INT) {tail}")
    run(conn, f"CREATE TABLE closed (k INT) {tail}")
    run(conn, f"GRANT SELECT_PRIV ON {db}.open TO '{name}'")
    me = pymysql.connect(host=conn.host, port=conn.port, user=name, password=password, database=db, autocommit=True)
    yield me, name, password
    me.close()
