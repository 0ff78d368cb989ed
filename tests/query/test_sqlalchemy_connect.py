"""SQLAlchemy 2 (PyMySQL driver) and pandas connect and query like on MySQL or Doris (issue 16):
the 5.7.99 version makes SQLAlchemy read @@tx_isolation, which must have a value."""

from __future__ import annotations

import os
from collections.abc import Iterator
from datetime import datetime

import pandas
import pymysql
import pytest
import sqlalchemy
from sqlalchemy import text

from tests.query.sqlkit import run


@pytest.fixture
def engine(conn: pymysql.connections.Connection, db: str) -> Iterator[sqlalchemy.Engine]:
    run(conn, "CREATE TABLE orders (id INT, status VARCHAR(20), amount DECIMAL(10,2)) DUPLICATE KEY(id) "
              "DISTRIBUTED BY HASH(id) BUCKETS 2")
    run(conn, "INSERT INTO orders VALUES (1, 'pending', 100.50), (2, 'shipped', 20.00), (3, 'pending', 7.25)")
    created = sqlalchemy.create_engine(f"mysql+pymysql://root:@127.0.0.1:{os.environ['STRATA_SQL_PORT']}/{db}")
    yield created
    created.dispose()


def test_connect_and_select(engine: sqlalchemy.Engine, db: str) -> None:
    with engine.connect() as connection:
        assert engine.dialect.server_version_info == (5, 7, 99)
        assert connection.get_isolation_level() == "REPEATABLE READ"
        found = connection.execute(text("SELECT DATABASE() AS db, 1 + 1 AS two, NOW(6) AS now")).one()
        assert found.db == db and found.two == 2 and isinstance(found.now, datetime)
        pending = connection.execute(text("SELECT id FROM orders WHERE status = :s ORDER BY id"), {"s": "pending"})
        assert [r.id for r in pending] == [1, 3]


def test_pandas_read_sql(engine: sqlalchemy.Engine) -> None:
    with engine.connect() as connection:
        frame = pandas.read_sql(text("SELECT status, count(*), sum(amount) AS total FROM orders GROUP BY status "
                                     "ORDER BY status"), connection)
    assert list(frame.columns) == ["status", "count(*)", "total"]
    assert frame["status"].tolist() == ["pending", "shipped"]
    assert frame["count(*)"].tolist() == [2, 1]
    assert [float(v) for v in frame["total"]] == [107.75, 20.0]


def test_pandas_read_sql_without_from(engine: sqlalchemy.Engine) -> None:
    frame = pandas.read_sql("SELECT concat_ws('|', 'a', NULL, 'c') AS joined, VERSION(), @@autocommit", engine)
    assert frame.to_dict("records") == [{"joined": "a|c", "VERSION()": "5.7.99", "@@autocommit": 1}]


def test_isolation_level_can_be_set(engine: sqlalchemy.Engine) -> None:
    with engine.connect().execution_options(isolation_level="READ COMMITTED") as connection:
        assert connection.get_isolation_level() == "READ COMMITTED"
        assert connection.execute(text("SELECT count(*) FROM orders")).scalar() == 3


def test_pydoris_dialect(engine: sqlalchemy.Engine, db: str) -> None:
    """pydoris, the Doris SQLAlchemy dialect Superset uses, connects and reflects."""
    doris = sqlalchemy.create_engine(f"doris://root:@127.0.0.1:{os.environ['STRATA_SQL_PORT']}/{db}")
    try:
        with doris.connect() as connection:
            assert doris.dialect.server_version_info == (5, 7, 99)
            assert connection.execute(text("SELECT count(*) FROM orders WHERE status = 'pending'")).scalar() == 2
            inspector = sqlalchemy.inspect(connection)
            assert inspector.get_table_names() == ["orders"]
            assert [c["name"] for c in inspector.get_columns("orders")] == ["id", "status", "amount"]
    finally:
        doris.dispose()


def test_inspect_tells_views_from_tables(conn: pymysql.connections.Connection, engine: sqlalchemy.Engine,
                                         db: str) -> None:
    run(conn, "CREATE VIEW pending AS SELECT id, amount FROM orders WHERE status = 'pending'")
    inspector = sqlalchemy.inspect(engine)
    assert inspector.get_table_names() == ["orders"]
    assert inspector.get_view_names() == ["pending"]
    assert [c["name"] for c in inspector.get_columns("pending")] == ["id", "amount"]
    assert f"`internal`.`{db}`.`orders`" in inspector.get_view_definition("pending")
    with engine.connect() as connection:
        assert [r.id for r in connection.execute(text("SELECT id FROM pending ORDER BY id"))] == [1, 3]
