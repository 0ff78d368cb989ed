"""Text rows encoded a record batch at a time (query.wire.text_batches) are byte for byte the rows the
row-at-a-time writer makes from the same result fetched as Python tuples: every column type a
result may carry, NULLs in each, batch boundaries (sequence ids continue, wrap at 256)."""

from __future__ import annotations

import datetime as dt
from zoneinfo import ZoneInfo

import duckdb
import numpy as np
import pyarrow as pa
import pytest

from query.streamed_rows import streamable_types
from query.wire import text_batches
from query.wire import values as v
from query.wire.columns import describe
from query.wire.stream import WireStream
from query.wire.text_batches import encode_text_rows, text_values

# Every column kind Strata's tables and queries give, each with a NULL row (every 7th) and edge values.
_COLUMNS = """
    CASE WHEN i % 7 = 0 THEN NULL ELSE (i % 256 - 128)::TINYINT END AS tiny,
    CASE WHEN i % 7 = 1 THEN NULL ELSE (i * 37 - 5000)::SMALLINT END AS small,
    CASE WHEN i % 7 = 2 THEN NULL ELSE (i * 1000003 - 2147483647)::INTEGER END AS int_,
    CASE WHEN i % 7 = 3 THEN NULL ELSE i * -9007199254740993 END AS big,
    CASE WHEN i % 7 = 4 THEN NULL ELSE (i % 256)::UTINYINT END AS utiny,
    CASE WHEN i % 7 = 4 THEN NULL ELSE (i * 18446744073709)::UBIGINT END AS ubig,
    CASE WHEN i % 7 = 5 THEN NULL ELSE i % 2 = 0 END AS flag,
    CASE WHEN i % 7 = 6 THEN NULL ELSE (i * 1.37 - 100)::DECIMAL(10,2) END AS dec2,
    CASE WHEN i % 7 = 0 THEN NULL ELSE (i - 150)::DECIMAL(9,0) END AS dec0,
    CASE WHEN i % 7 = 1 THEN NULL ELSE (i / 10000000000.0)::DECIMAL(18,10) END AS dec_small,
    CASE WHEN i % 7 = 2 THEN NULL ELSE (i * 123456789.123456789)::DECIMAL(38,9) END AS dec_wide,
    CASE WHEN i % 7 = 3 THEN NULL ELSE (i * 1.1 - 17.5)::DOUBLE END AS dbl,
    CASE WHEN i % 7 = 3 THEN NULL ELSE pow(10, i % 40 - 20) * 1.234567890123 END AS dbl_exp,
    CASE WHEN i % 7 = 4 THEN NULL ELSE (i * 1.1)::FLOAT END AS flt,
    CASE WHEN i % 7 = 5 THEN NULL ELSE 'name-' || i || repeat('ë', i % 300) END AS txt,
    CASE WHEN i % 7 = 5 THEN NULL ELSE repeat('x', i * 300) END AS long_txt,
    CASE WHEN i % 7 = 6 THEN NULL ELSE ('v' || i)::VARCHAR(20) END AS vc,
    CASE WHEN i % 7 = 0 THEN NULL ELSE date '0099-01-01' + (i * 997)::INTEGER END AS day,
    CASE WHEN i % 7 = 1 THEN NULL ELSE make_timestamp(1700000000000000 + i * 1234567) END AS ts6,
    CASE WHEN i % 7 = 2 THEN NULL ELSE make_timestamp(i * 86400000123)::TIMESTAMP_MS END AS ts3,
    CASE WHEN i % 7 = 3 THEN NULL ELSE make_timestamp(1700000000000000 + i * 1000000)::TIMESTAMP_S END AS ts0,
    CASE WHEN i % 7 = 4 THEN NULL ELSE make_timestamp(1700000000000000 + i * 1001)::TIMESTAMP_NS END AS tsns,
    CASE WHEN i % 7 = 5 THEN NULL ELSE make_timestamp(1700000000000000 + i * 1234567)::TIMESTAMPTZ END AS tstz,
    CASE WHEN i % 7 = 6 THEN NULL ELSE make_time(i % 24, i % 60, (i % 600) / 10.0) END AS tm,
    CASE WHEN i % 7 = 0 THEN NULL ELSE ('{"k": ' || i || ', "s": "ë"}')::JSON END AS js,
    CASE WHEN i % 7 = 1 THEN NULL ELSE [i, NULL, i + 1] END AS arr,
    CASE WHEN i % 7 = 2 THEN NULL ELSE ['a' || i, NULL] END AS arr_txt,
    CASE WHEN i % 7 = 3 THEN NULL ELSE {'a': i, 'b': 'x' || i, 'd': date '2020-01-01' + i::INTEGER} END AS st,
    CASE WHEN i % 7 = 4 THEN NULL ELSE ('b' || i)::BLOB END AS blb,
    CASE WHEN i % 7 = 5 THEN NULL ELSE gen_random_uuid() END AS uid,
    NULL AS nothing
"""
_QUERY = f"SELECT {_COLUMNS} FROM range(700) AS r(i) ORDER BY i"


@pytest.fixture(scope="module")
def duck() -> duckdb.DuckDBPyConnection:
    con = duckdb.connect()
    con.execute(f"CREATE TABLE t AS {_QUERY}")  # stored, so both reads see the same UUIDs
    return con


def row_at_a_time(con: duckdb.DuckDBPyConnection, zone: dt.tzinfo, seq: int) -> tuple[bytes, list[str]]:
    cur = con.cursor()
    result = cur.execute("SELECT * FROM t ORDER BY rowid")
    names = [d[0] for d in result.description]
    types = [str(d[1]) for d in result.description]
    rows = result.fetchall()
    stream = WireStream(None, None, 1 << 30)  # type: ignore[arg-type]  # only its buffer is used
    stream.seq.value = seq
    stream.write_text_rows(rows, describe(names, types, rows, zone))
    return bytes(stream._buffer), types


def batch_at_a_time(con: duckdb.DuckDBPyConnection, zone: dt.tzinfo, seq: int, batch_rows: int) -> bytes:
    rel = con.cursor().sql("SELECT * FROM t ORDER BY rowid")
    columns = describe(rel.columns, [str(t) for t in rel.types], [], zone)
    out = bytearray()
    for batch in rel.to_arrow_reader(batch_rows):
        encoded = encode_text_rows(batch, columns, seq)
        assert encoded.rows == batch.num_rows
        out += encoded.data
        seq = encoded.next_seq
    return bytes(out)


@pytest.mark.parametrize("zone", [dt.UTC, ZoneInfo("Asia/Shanghai")])
@pytest.mark.parametrize(("seq", "batch_rows"), [(1, 100_000), (2, 97), (255, 300),
                                                 (3, 7), (254, text_batches.FEW_ROWS)])  # value by value
def test_the_same_bytes_as_row_at_a_time(duck: duckdb.DuckDBPyConnection, zone: dt.tzinfo, seq: int,
                                         batch_rows: int) -> None:
    expected, types = row_at_a_time(duck, zone, seq)
    assert streamable_types(types), types
    assert batch_at_a_time(duck, zone, seq, batch_rows) == expected


@pytest.mark.parametrize("few_rows", [text_batches.FEW_ROWS, 0])  # value by value, vectorised
def test_a_row_of_16_mb_or_more_is_split_into_frames(few_rows: int, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(text_batches, "FEW_ROWS", few_rows)
    con = duckdb.connect()
    con.execute("CREATE TABLE t AS SELECT i, repeat('y', 16777215 + i - 2) AS big FROM range(3) AS r(i)")
    rel = con.sql("SELECT * FROM t ORDER BY i")
    columns = describe(rel.columns, [str(t) for t in rel.types], [], dt.UTC)
    batch = rel.to_arrow_table().to_batches()[0]
    encoded = encode_text_rows(batch, columns, 1)
    frames: list[tuple[int, int]] = []
    data = encoded.data
    while data:
        word = int.from_bytes(data[:4], "little")
        frames.append((word & 0xFFFFFF, word >> 24))
        data = data[4 + (word & 0xFFFFFF):]
    # Payloads 0xFFFFFF - 2 + 4, + 5, + 6 bytes (the 'i' cell, the 4-byte prefix, the text).
    assert frames == [(0xFFFFFF, 1), (4, 2), (0xFFFFFF, 3), (5, 4), (0xFFFFFF, 5), (6, 6)]
    assert encoded.next_seq == 7


def test_types_whose_arrow_form_differs_are_not_streamed() -> None:
    assert not streamable_types(["INTEGER", "INTERVAL"])
    assert not streamable_types(["MAP(INTEGER, INTEGER)"])
    assert not streamable_types(["HUGEINT"])
    assert not streamable_types(["STRUCT(a MAP(VARCHAR, INTEGER))"])
    assert not streamable_types(["BIGINT", "UBIGINT[]"])  # a BITMAP/HLL column, sent as NULL by the fetched path
    assert streamable_types(["BIGINT", "DECIMAL(10,2)", "INTEGER[]", "TIMESTAMP_MS"])


def test_an_empty_batch() -> None:
    columns = describe(["a"], ["BIGINT"], [], dt.UTC)
    batch = pa.record_batch([pa.array([], pa.int64())], names=["a"])
    assert encode_text_rows(batch, columns, 9).data == b""


def test_doubles_are_written_as_python_writes_them() -> None:
    """Arrow's shortest digits in Python's notation (fixed with a decimal for 1e-4 <= |x| < 1e16,
    exponent form outside), over every magnitude and the special values."""
    rng = np.random.default_rng(7)
    doubles = np.concatenate([rng.standard_normal(20_000) * 10.0 ** rng.integers(-30, 30, 20_000),
                              rng.integers(-10**6, 10**6, 5_000).astype(float),
                              rng.integers(-10**6, 10**6, 5_000) / 100,
                              [0.0, -0.0, np.inf, -np.inf, np.nan, 1e16, 1e-4, 9.999999999999999e-05,
                               9999999999999998.0, 2.0**53, 5e-324]])
    array = pa.array([*doubles.tolist(), None])
    column = describe(["d"], ["DOUBLE"], [], dt.UTC)[0]
    expected = [None if x is None else v.text_double(x) for x in array.to_pylist()]
    assert text_values(array, column).to_pylist() == expected
