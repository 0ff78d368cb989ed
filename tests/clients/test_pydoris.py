"""Client matrix, pydoris: the Apache Doris SQLAlchemy dialect (`doris://`, on mysqlclient) that Superset
and other BI tools use, connecting and reflecting as they do (SHOW FULL TABLES, SHOW COLUMNS), plus a
query, a time-travel read and an error through it."""

from __future__ import annotations

from collections.abc import Iterator

import pytest
import sqlalchemy
from sqlalchemy import Engine, create_engine, inspect, text

from tests.clients import engine_checks
from tests.clients.matrix import UNKNOWN_TABLE, Login, Tables

pytestmark = pytest.mark.integration

TABLES = Tables("pd")
XFAIL: dict[tuple[str, str | None], str] = {}


@pytest.fixture(scope="module")
def engine(login: Login) -> Iterator[Engine]:
    url = sqlalchemy.URL.create("doris", username=login.user, password=login.password, host=login.host,
                                port=login.port, database=login.database)
    made = create_engine(url)
    assert type(made.dialect).__module__.startswith("pydoris."), type(made.dialect)
    yield made
    made.dispose()


def test_connect(engine: Engine, login: Login) -> None:
    engine_checks.connects(engine, login)


def test_ddl_and_insert(engine: Engine) -> None:
    with engine.begin() as conn:
        conn.execute(text(TABLES.create_dup()))
        conn.execute(text(TABLES.create_uniq()))
        assert conn.execute(text(TABLES.insert_rows())).rowcount == 2


def test_select_types(engine: Engine) -> None:
    engine_checks.selects_every_type(engine, TABLES)


def test_time_travel(engine: Engine) -> None:
    engine_checks.travels_in_time(engine, TABLES)


def test_inspect_table_names(engine: Engine) -> None:
    assert {TABLES.dup, TABLES.uniq} <= set(inspect(engine).get_table_names())


def test_inspect_columns(engine: Engine) -> None:
    """pydoris reads SHOW COLUMNS, where Doris writes every DATETIME(p) as `datetime`."""
    columns = inspect(engine).get_columns(TABLES.dup)
    assert [(c["name"], c["type"].compile(dialect=engine.dialect)) for c in columns] == [
        ("id", "INTEGER"), ("big", "BIGINT"), ("amount", "DECIMAL(10, 2)"), ("d", "DATE"), ("dt0", "DATETIME"),
        ("dt3", "DATETIME"), ("dt6", "DATETIME"), ("txt", "VARCHAR(64)"), ("dbl", "DOUBLE"), ("flag", "BOOL")]


def test_inspect_pk_constraint(engine: Engine) -> None:
    assert inspect(engine).get_pk_constraint(TABLES.uniq)["constrained_columns"] == []


def test_error_unknown_table(engine: Engine) -> None:
    engine_checks.fails_with(engine, UNKNOWN_TABLE[0], UNKNOWN_TABLE[1])
