"""Client matrix, SQLAlchemy 2 (mysql+pymysql) and pandas on it: an engine as applications and notebooks
make one, Core text statements with bound parameters, the inspector's reflection, and pandas `read_sql` /
`to_sql` (which creates its table from the frame's dtypes)."""

from __future__ import annotations

from collections.abc import Iterator

import pandas as pd
import pytest
import sqlalchemy
from sqlalchemy import Engine, create_engine, inspect, text

from tests.clients import engine_checks
from tests.clients.matrix import (
    COLUMNS,
    PREPARED_ROWS,
    PREPARED_TEXT,
    ROWS,
    SYNTAX_ERROR,
    UNKNOWN_TABLE,
    Login,
    Tables,
    prepared_params,
)

pytestmark = pytest.mark.integration

TABLES = Tables("sa")
XFAIL: dict[tuple[str, str | None], str] = {}


@pytest.fixture(scope="module")
def engine(login: Login) -> Iterator[Engine]:
    url = sqlalchemy.URL.create("mysql+pymysql", username=login.user, password=login.password, host=login.host,
                                port=login.port, database=login.database, query={"charset": "utf8mb4"})
    made = create_engine(url)
    yield made
    made.dispose()


def test_connect(engine: Engine, login: Login) -> None:
    engine_checks.connects(engine, login)


def test_ddl(engine: Engine) -> None:
    with engine.begin() as conn:
        conn.execute(text(TABLES.create_dup()))
        conn.execute(text(TABLES.create_uniq()))


def test_insert(engine: Engine) -> None:
    with engine.begin() as conn:
        assert conn.execute(text(TABLES.insert_rows())).rowcount == 2


def test_select_types(engine: Engine) -> None:
    engine_checks.selects_every_type(engine, TABLES)


def test_time_travel(engine: Engine) -> None:
    engine_checks.travels_in_time(engine, TABLES)


def test_prepared(engine: Engine) -> None:
    """Bound parameters of every type, as an executemany (SQLAlchemy's pymysql dialect binds them in the
    client: pymysql has no server-side prepares)."""
    insert = text(f"INSERT INTO {TABLES.dup} ({', '.join(COLUMNS)}) VALUES ({', '.join(':' + c for c in COLUMNS)})")
    with engine.begin() as conn:
        conn.execute(insert, [dict(zip(COLUMNS, params, strict=True)) for params in prepared_params()])
    select = text(f"SELECT * FROM {TABLES.dup} WHERE id >= :id AND (txt = :txt OR txt IS NULL) ORDER BY id")
    with engine.connect() as conn:
        assert [tuple(r) for r in conn.execute(select, {"id": 3, "txt": PREPARED_TEXT})] == PREPARED_ROWS


def test_inspect_table_names(engine: Engine) -> None:
    assert {TABLES.dup, TABLES.uniq} <= set(inspect(engine).get_table_names())


def test_inspect_columns(engine: Engine) -> None:
    columns = inspect(engine).get_columns(TABLES.dup)
    assert [(c["name"], c["type"].compile(dialect=engine.dialect), c["nullable"]) for c in columns] == [
        ("id", "INTEGER", True), ("big", "BIGINT", True), ("amount", "DECIMAL(10, 2)", True), ("d", "DATE", True),
        ("dt0", "DATETIME", True), ("dt3", "DATETIME(3)", True), ("dt6", "DATETIME(6)", True),
        ("txt", "VARCHAR(64)", True), ("dbl", "DOUBLE", True), ("flag", "BOOL", True)]


def test_inspect_pk_constraint(engine: Engine) -> None:
    """As with Doris: a Unique Key table's key is not a PRIMARY KEY in SHOW CREATE TABLE, so SQLAlchemy's
    MySQL dialect reflects none; the call must work and say so."""
    assert inspect(engine).get_pk_constraint(TABLES.uniq)["constrained_columns"] == []


def test_pandas_read_sql(engine: Engine) -> None:
    frame = pd.read_sql(f"SELECT * FROM {TABLES.dup} WHERE id = 1", engine)
    assert list(frame.columns) == COLUMNS
    # read_sql's coerce_float (default True) turns DECIMAL's Decimal into a float, with MySQL too.
    assert frame.to_dict("records") == [{**dict(zip(COLUMNS, ROWS[0], strict=True)), "amount": 12345.67}]
    assert [frame[c].dtype.kind for c in ("id", "big", "dt0", "dt6", "dbl")] == ["i", "i", "M", "M", "f"]


def test_pandas_to_sql(engine: Engine) -> None:
    """to_sql creates the table from the dtypes (BIGINT, FLOAT(53), TEXT, DATETIME, BOOL), then inserts."""
    frame = pd.DataFrame({"i": [1, 2], "f": [0.5, None], "s": ["Zürich ☃", None],
                          "t": pd.to_datetime(["2026-12-01 10:00:01", None]), "b": [True, False]})
    assert frame.to_sql("sa_frame", engine, index=False) == 2
    back = pd.read_sql("SELECT * FROM sa_frame ORDER BY i", engine)
    assert list(back.columns) == ["i", "f", "s", "t", "b"]
    assert back.astype(object).where(back.notna(), None).values.tolist() == [
        [1, 0.5, "Zürich ☃", pd.Timestamp("2026-12-01 10:00:01"), 1], [2, None, None, None, 0]]


def test_error_unknown_table(engine: Engine) -> None:
    engine_checks.fails_with(engine, UNKNOWN_TABLE[0], UNKNOWN_TABLE[1])


def test_error_syntax(engine: Engine) -> None:
    engine_checks.fails_with(engine, SYNTAX_ERROR[0], SYNTAX_ERROR[1])
