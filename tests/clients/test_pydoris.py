"""Client matrix, pydoris: the Apache Doris SQLAlchemy dialect (`doris://`, on mysqlclient) that Superset
and other BI tools use, connecting and reflecting as they do (SHOW FULL TABLES, SHOW COLUMNS), plus a
query, a time-travel read and an error through it."""

from __future__ import annotations

import time
from collections.abc import Iterator

import pytest
import sqlalchemy
from sqlalchemy import Engine, create_engine, inspect, text

from tests.clients.matrix import ROWS, TIME_TRAVEL_GAP_AFTER_S, TIME_TRAVEL_GAP_S, UNKNOWN_TABLE, Login, Tables

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
    with engine.connect() as conn:
        assert conn.execute(text("SELECT DATABASE()")).scalar_one() == login.database


def test_ddl_and_insert(engine: Engine) -> None:
    with engine.begin() as conn:
        conn.execute(text(TABLES.create_dup()))
        conn.execute(text(TABLES.create_uniq()))
        assert conn.execute(text(TABLES.insert_rows())).rowcount == 2


def test_select_types(engine: Engine) -> None:
    with engine.connect() as conn:
        assert [tuple(r) for r in conn.execute(text(TABLES.select_rows()))] == ROWS


def test_time_travel(engine: Engine) -> None:
    with engine.connect() as conn:
        conn.execute(text(f"INSERT INTO {TABLES.uniq} VALUES (1, 'before')"))
        time.sleep(TIME_TRAVEL_GAP_S)
        instant = str(conn.execute(text("SELECT NOW(6)")).scalar_one())
        time.sleep(TIME_TRAVEL_GAP_AFTER_S)
        conn.execute(text(f"INSERT INTO {TABLES.uniq} VALUES (1, 'after')"))
        assert [tuple(r) for r in conn.execute(text(TABLES.time_travel(instant)))] == [(1, "before")]


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
    sql, code, _ = UNKNOWN_TABLE
    with engine.connect() as conn:
        with pytest.raises(sqlalchemy.exc.DBAPIError) as caught:
            conn.execute(text(sql))
        assert caught.value.orig is not None and caught.value.orig.args[0] == code, caught.value
