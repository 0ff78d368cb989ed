"""storage.rowset_sql's temporal rules: a DATETIME(p) value is rounded half up to p digits where it is
written, and read as the DuckDB timestamp that states its precision."""

from __future__ import annotations

from datetime import datetime

import duckdb
import pytest

from storage.rowset_sql import datetime_precision, read_type, rounded_sql


@pytest.mark.parametrize(("doris_type", "written", "stored"), [
    ("DATETIME", "2021-01-01 23:10:01.111111", datetime(2021, 1, 1, 23, 10, 1)),
    ("DATETIME", "2021-01-01 23:10:01.5", datetime(2021, 1, 1, 23, 10, 2)),
    ("DATETIME", "2021-12-31 23:59:59.999999", datetime(2022, 1, 1)),  # the carry reaches the year
    ("DATETIME", "1969-12-31 23:59:59.4", datetime(1969, 12, 31, 23, 59, 59)),  # before the epoch too
    ("DATETIME", "1969-12-31 23:59:59.5", datetime(1970, 1, 1)),
    ("DATETIMEV2(0)", "2021-01-01 00:00:00.7", datetime(2021, 1, 1, 0, 0, 1)),
    ("DATETIME(1)", "2021-01-02 23:10:04.151111", datetime(2021, 1, 2, 23, 10, 4, 200000)),
    ("DATETIME(3)", "2021-01-02 23:10:04.111111", datetime(2021, 1, 2, 23, 10, 4, 111000)),
    ("DATETIME(3)", "2021-01-02 23:10:04.1115", datetime(2021, 1, 2, 23, 10, 4, 112000)),
    ("DATETIME(5)", "2021-01-02 23:10:04.123455", datetime(2021, 1, 2, 23, 10, 4, 123460)),
    ("DATETIME(6)", "2021-01-02 23:10:04.123456", datetime(2021, 1, 2, 23, 10, 4, 123456)),
])
def test_a_datetime_is_stored_rounded_to_its_precision(doris_type: str, written: str, stored: datetime) -> None:
    value = duckdb.connect().execute(f"SELECT {rounded_sql(f'TIMESTAMP {written!r}', doris_type)}").fetchall()
    assert value == [(stored,)]


def test_other_types_and_nulls_pass_unchanged() -> None:
    assert rounded_sql("x", "INT") == "x" and rounded_sql("x", "DATETIME(6)") == "x"
    null = rounded_sql("CAST(NULL AS TIMESTAMP)", "DATETIME")
    assert duckdb.connect().execute(f"SELECT {null}").fetchall() == [(None,)]


def test_precision_and_read_type() -> None:
    assert [datetime_precision(t) for t in ("DATETIME", "DATETIME(3)", "datetimev2(6)", "DATE", "VARCHAR(3)")] == [
        0, 3, 6, None, None]
    assert [read_type(t) for t in ("DATETIME", "DATETIME(1)", "DATETIME(3)", "DATETIME(4)", "DATE", "INT")] == [
        "TIMESTAMP_S", "TIMESTAMP_MS", "TIMESTAMP_MS", "TIMESTAMP", "DATE", "INTEGER"]
