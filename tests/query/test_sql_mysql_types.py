"""DDL as MySQL tools send it: MySQL's type spellings mapped to Doris types, a table without a key
clause keyed like Doris keys it, and pandas `to_sql` (through SQLAlchemy) creating a table."""

from __future__ import annotations

import datetime as dt
import os

import pandas as pd
import pymysql
import pytest
import sqlalchemy as sa

from tests.query.sqlkit import fails, rows, run


def test_mysql_type_spellings(conn: pymysql.connections.Connection, db: str) -> None:
    run(conn, "CREATE TABLE t (id BIGINT, small TINYINT(1), f24 FLOAT(24), f53 FLOAT(53), r REAL, n NUMERIC(10,2), "
              "tt TINYTEXT, mt MEDIUMTEXT, lt LONGTEXT, b BOOL, d DATETIME)")
    found = rows(conn, "DESC t")
    assert [(r[0], r[1]) for r in found] == [
        ("id", "bigint"), ("small", "tinyint"), ("f24", "float"), ("f53", "double"), ("r", "double"),
        ("n", "decimal(10,2)"), ("tt", "text"), ("mt", "text"), ("lt", "text"), ("b", "boolean"),
        ("d", "datetime")]
    fails(conn, "CREATE TABLE bad (f FLOAT(54))", 1064, "FLOAT precision 54")


def test_default_key_is_doris_short_key(conn: pymysql.connections.Connection, db: str) -> None:
    # Doris: at most 3 leading columns, stopping before a type that cannot be a short key (FLOAT,
    # DOUBLE, STRING) and after a VARCHAR.
    run(conn, "CREATE TABLE a (i INT, j BIGINT, f DOUBLE, k INT)")
    run(conn, "CREATE TABLE b (v VARCHAR(10), i INT)")
    run(conn, "CREATE TABLE c (i INT, j INT, k INT, l INT)")
    keys = {t: [r[0] for r in rows(conn, f"DESC {t}") if r[3] == "true"] for t in ("a", "b", "c")}
    assert keys == {"a": ["i", "j"], "b": ["v"], "c": ["i", "j", "k"]}
    assert "DUPLICATE KEY(`i`, `j`)" in rows(conn, "SHOW CREATE TABLE a")[0][1]
    fails(conn, "CREATE TABLE d (f DOUBLE, i INT)", 1210, "first column could not be DOUBLE")


def test_pandas_to_sql_creates_and_reads_back(db: str) -> None:
    engine = sa.create_engine(f"mysql+pymysql://root:@127.0.0.1:{os.environ['STRATA_SQL_PORT']}/{db}")
    frame = pd.DataFrame({"i": [1, 2], "f": [1.5, None], "s": ["a", "é"],
                          "d": [dt.datetime(2024, 1, 2, 3, 4, 5), dt.datetime(2024, 1, 3)], "b": [True, False]})
    try:
        with engine.connect() as connection:
            # index=False: pandas indexes its index column with CREATE INDEX, which Strata refuses.
            assert frame.to_sql("frame", connection, index=False) == 2
            connection.commit()
            back = pd.read_sql("SELECT * FROM frame ORDER BY i", connection)
            types = {r[0]: r[1] for r in connection.exec_driver_sql("DESC frame").fetchall()}
            with pytest.raises(sa.exc.DBAPIError) as refused:
                frame.to_sql("indexed", connection)
            connection.rollback()
    finally:
        engine.dispose()
    assert types == {"i": "bigint", "f": "double", "s": "text", "d": "datetime", "b": "boolean"}
    assert back["i"].tolist() == [1, 2] and back["s"].tolist() == ["a", "é"]
    assert back["f"].iloc[0] == 1.5 and pd.isna(back["f"].iloc[1])
    assert back["d"].tolist() == [pd.Timestamp("2024-01-02 03:04:05"), pd.Timestamp("2024-01-03")]
    assert [bool(v) for v in back["b"]] == [True, False]
    code, message = refused.value.orig.args if refused.value.orig is not None else (None, "")
    assert code == 1235 and "CREATE INDEX is not supported" in message and "index=False" in message, message
