"""The checks the two SQLAlchemy clients of the matrix share (SQLAlchemy's `mysql+pymysql` and pydoris'
`doris://`): each takes the client's engine and the tables its module made."""

from __future__ import annotations

import time

import pytest
import sqlalchemy
from sqlalchemy import Engine, text

from tests.clients.matrix import ROWS, TIME_TRAVEL_GAP_AFTER_S, TIME_TRAVEL_GAP_S, Login, Tables


def connects(engine: Engine, login: Login) -> None:
    with engine.connect() as conn:
        assert conn.execute(text("SELECT DATABASE()")).scalar_one() == login.database


def selects_every_type(engine: Engine, tables: Tables) -> None:
    with engine.connect() as conn:
        assert [tuple(r) for r in conn.execute(text(tables.select_rows()))] == ROWS


def travels_in_time(engine: Engine, tables: Tables) -> None:
    """A read at a NOW(6) instant taken between two writes of one key sees the first write."""
    with engine.connect() as conn:
        conn.execute(text(f"INSERT INTO {tables.uniq} VALUES (1, 'before')"))
        time.sleep(TIME_TRAVEL_GAP_S)
        instant = str(conn.execute(text("SELECT NOW(6)")).scalar_one())
        time.sleep(TIME_TRAVEL_GAP_AFTER_S)
        conn.execute(text(f"INSERT INTO {tables.uniq} VALUES (1, 'after')"))
        assert [tuple(r) for r in conn.execute(text(tables.time_travel(instant)))] == [(1, "before")]
        assert [tuple(r) for r in conn.execute(text(f"SELECT id, v FROM {tables.uniq}"))] == [(1, "after")]


def fails_with(engine: Engine, sql: str, code: int) -> None:
    """`sql` fails with MySQL error `code`, and the connection goes on working."""
    with engine.connect() as conn:
        with pytest.raises(sqlalchemy.exc.DBAPIError) as caught:
            conn.execute(text(sql))
        assert caught.value.orig is not None and caught.value.orig.args[0] == code, caught.value
        conn.rollback()  # SQLAlchemy 2: a failed statement leaves its transaction to be rolled back
        assert conn.execute(text("SELECT 1")).scalar_one() == 1
