"""A plain CSV body loaded by one DuckDB statement (query.stream_load.scan) answers exactly as the
chunked path does: each body is loaded twice, as it is (scan) and gzipped (a compressed body
takes the chunked path), and the replies, the error logs and the tables' rows must be the same."""

from __future__ import annotations

import gzip
from datetime import date, datetime, timedelta
from decimal import Decimal
from pathlib import Path
from typing import Any

import duckdb
import pyarrow as pa
import pyarrow.parquet as pq
import pymysql
import pytest

from projections.projection import Projection
from projections.state import TableState
from query.spool import spool_dir
from query.stream_load import scan
from query.stream_load.readers import _as_text
from query.stream_load.request import StreamLoadRequest
from schemas import events as ev
from schemas.envelope import wrap_event
from schemas.model import Column, Distribution, LoadColumn, Partition, TableSchema
from tests.query.sqlkit import run, sorted_rows
from tests.query.stream_load_kit import curl_2pc, curl_load, fetch

DUP = "DUPLICATE KEY(k) DISTRIBUTED BY HASH(k) BUCKETS 2"
_COUNTS = ("Status", "Message", "NumberTotalRows", "NumberLoadedRows", "NumberFilteredRows", "NumberUnselectedRows")


def _both(conn: pymysql.connections.Connection, db: str, tmp_path: Path, ddl: str, body: bytes,
          headers: dict[str, str]) -> dict[str, Any]:
    """Loads `body` into a table made by `ddl` (named {t}) as it is and gzipped; asserts both agree."""
    answers = []
    for name, compressed in (("scanned", False), ("chunked", True)):
        run(conn, ddl.format(t=name))
        path = tmp_path / f"{name}.csv"
        path.write_bytes(gzip.compress(body) if compressed else body)
        reply = curl_load(path, db, name, {**headers, **({"compress_type": "gz"} if compressed else {})})
        log = fetch(reply["ErrorURL"]).replace(f"'{name}'", "'{t}'") if "ErrorURL" in reply else None
        answers.append(({k: reply.get(k) for k in _COUNTS}, log, sorted_rows(conn, f"SELECT * FROM {name}")))
    assert answers[0] == answers[1]
    return answers[0][0]


def test_good_rows_nulls_empty_fields_and_blank_lines(conn: pymysql.connections.Connection, db: str,
                                                      tmp_path: Path) -> None:
    body = b"1\ta\t10\t2024-01-02 03:04:05\n\n2\t\\N\t\t20240102\n3\t\t30\t\\N\n\n"
    reply = _both(conn, db, tmp_path, f"CREATE TABLE {{t}} (k INT, v VARCHAR(20), n INT, d DATETIME) {DUP}",
                  body, {})
    assert reply["NumberLoadedRows"] == 3 and reply["NumberTotalRows"] == 3


def test_wrong_field_counts_bad_utf8_and_checks(conn: pymysql.connections.Connection, db: str,
                                                tmp_path: Path) -> None:
    body = (b"1,a,1\n2,toolongvalue,2\n3,c\n4,d,4,extra\n5,\xff\xfe,5\n6,f,notanumber\n7,g,\\N\n8,h,8")
    ddl = f"CREATE TABLE {{t}} (k INT, v VARCHAR(5), n INT NOT NULL) {DUP}"
    for strict in ("true", "false"):
        reply = _both(conn, db, tmp_path, ddl, body, {"column_separator": ",", "strict_mode": strict,
                                                      "max_filter_ratio": "0.9"})
        assert reply["Status"] == "Success" and reply["NumberFilteredRows"] >= 4, reply
        run(conn, "DROP TABLE scanned")
        run(conn, "DROP TABLE chunked")
    refused = _both(conn, db, tmp_path, ddl, body, {"column_separator": ","})
    assert refused["Status"] == "Fail"


def test_skip_lines_separators_column_order_and_partitions(conn: pymysql.connections.Connection, db: str,
                                                           tmp_path: Path) -> None:
    body = "\n".join(["header", "", *(f"{i}|#x{i}|#{i * 10}|#{2020 + i % 6}-01-01" for i in range(40))]).encode()
    ddl = ("CREATE TABLE {t} (k INT, v VARCHAR(10), n INT, d DATE) DUPLICATE KEY(k) PARTITION BY RANGE(d) "
           "(PARTITION p1 VALUES LESS THAN ('2022-01-01'), PARTITION p2 VALUES LESS THAN ('2024-01-01')) "
           "DISTRIBUTED BY HASH(k) BUCKETS 3")
    reply = _both(conn, db, tmp_path, ddl, body, {"column_separator": "|#", "skip_lines": "2",
                                                  "columns": "k, v, n, d", "max_filter_ratio": "0.5"})
    assert reply["NumberLoadedRows"] == 28 and reply["NumberFilteredRows"] == 12, reply
    run(conn, "DROP TABLE scanned")
    run(conn, "DROP TABLE chunked")
    reordered = _both(conn, db, tmp_path, ddl, body, {"column_separator": "|#", "skip_lines": "2",
                                                      "columns": "n, v, k, d", "partitions": "p1",
                                                      "max_filter_ratio": "1"})
    assert reordered["NumberLoadedRows"] == 14, reordered


def test_unique_key_last_row_wins_and_delete(conn: pymysql.connections.Connection, db: str,
                                             tmp_path: Path) -> None:
    body = "".join(f"{i % 50}\x01v{i}\n" for i in range(1000)).encode()
    ddl = "CREATE TABLE {t} (k INT, v VARCHAR(10)) UNIQUE KEY(k) DISTRIBUTED BY HASH(k) BUCKETS 2"
    _both(conn, db, tmp_path, ddl, body, {"column_separator": "\\x01"})
    assert sorted_rows(conn, "SELECT * FROM scanned WHERE k = 7") == [(7, "v957")]
    deleted = "".join(f"{i}\x01x\n" for i in range(0, 50, 2)).encode()
    for name in ("scanned", "chunked"):
        path = tmp_path / "delete.csv"
        path.write_bytes(deleted)
        reply = curl_load(path, db, name, {"column_separator": "\\x01", "merge_type": "DELETE"})
        assert reply["Status"] == "Success", reply
    assert sorted_rows(conn, "SELECT * FROM scanned") == sorted_rows(conn, "SELECT * FROM chunked")
    assert len(sorted_rows(conn, "SELECT * FROM scanned")) == 25


@pytest.fixture(scope="module")
def table(tmp_path_factory: pytest.TempPathFactory) -> TableState:
    """A table of two INT columns a and b, as the fold makes it."""
    projection = Projection(tmp_path_factory.mktemp("projection"))
    columns = (Column(unique_id=1, name="a", type="INT", is_key=True), Column(unique_id=2, name="b", type="INT"))
    created = ev.TableCreated(db_id=1, table_id=1, name="t", keys_model="DUPLICATE",
                              table_schema=TableSchema(schema_version=1, columns=columns),
                              partition_kind="UNPARTITIONED",
                              partitions=(Partition(partition_id=1, name="t", buckets=1),),
                              distribution=Distribution(columns=("a",)), next_column_id=3)
    for offset, event in enumerate([ev.DatabaseCreated(db_id=1, name="d"), created]):
        projection.apply(wrap_event(event, table_id=None, commit_ts_ms=0, command_id=None), "e", 0, offset)
    projection.flush()
    made = projection.tables[1]
    projection.close()
    return made


@pytest.mark.parametrize(("headers", "body", "usable"), [
    ({}, b"1\t2\n", True),
    ({"column_separator": "||"}, b"1||2\n", False),  # may overlap itself
    ({"column_separator": "@#"}, b"1@#2\n", True),
    ({}, b"1\t2\r\n", False),  # a carriage return
    ({}, b"\xef\xbb\xbf1\t2\n", False),  # a byte order mark
    ({"enclose": '"'}, b"1\t2\n", False),
    ({"trim_double_quotes": True}, b"1\t2\n", False),
    ({"compress_type": "gzip"}, b"1\t2\n", False),
    ({"where_sql": "a > 1"}, b"1\t2\n", False),
    ({"columns": (LoadColumn(name="a"), LoadColumn(name="b", expr="a", expr_sql='"a"'))}, b"1\n", False),
])
def test_which_bodies_are_scanned(table: TableState, tmp_path: Path, headers: dict[str, Any], body: bytes,
                                  usable: bool) -> None:
    folder = spool_dir(tmp_path)
    path = folder / "x.body"
    path.write_bytes(body)
    request = StreamLoadRequest(label="l", **headers)
    assert scan.usable(table, request, path, tmp_path) is usable
    elsewhere = tmp_path / "x.csv"
    elsewhere.write_bytes(body)
    assert scan.usable(table, request, elsewhere, tmp_path) is False


def _parquet_rows() -> pa.Table:
    n = 200
    return pa.table({
        "K": pa.array(range(n), pa.int64()),
        "v": pa.array([None if i % 17 == 0 else ("toolong" if i % 13 == 0 else f"v{i}") for i in range(n)]),
        "d": pa.array([date(2024, 1, 1) + timedelta(days=i) for i in range(n)], pa.date32()),
        "ts": pa.array([datetime(2024, 1, 1, 10) + timedelta(milliseconds=1234 * i) for i in range(n)],
                       pa.timestamp("ms")),
        "tstext": pa.array([datetime(2023, 5, 6, 7) + timedelta(microseconds=987654 * i) for i in range(n)],
                           pa.timestamp("us")),
        "b": pa.array([None if i % 11 == 0 else i % 2 == 0 for i in range(n)]),
        "price": pa.array([Decimal(i * 37 - 3000) / 100 for i in range(n)], pa.decimal128(10, 2)),
        "extra": pa.array([i * 1.5 for i in range(n)]),
    })


def test_parquet_body_as_the_whole_body_path(conn: pymysql.connections.Connection, db: str, tmp_path: Path) -> None:
    """A Parquet body read in chunks (scan) and read whole (a two-phase-commit load) load the same."""
    path = tmp_path / "rows.parquet"
    pq.write_table(_parquet_rows(), path, row_group_size=64)
    answers = []
    for name, two_phase in (("scanned", False), ("whole", True)):
        run(conn, f"CREATE TABLE {name} (k INT, v VARCHAR(5), d DATE, ts DATETIME(3), tstext VARCHAR(40), "
                  f"b BOOLEAN, price DECIMAL(10, 2), note VARCHAR(10)) {DUP}")
        headers = {"format": "parquet", "strict_mode": "true", "max_filter_ratio": "0.5",
                   **({"two_phase_commit": "true"} if two_phase else {})}
        reply = curl_load(path, db, name, headers)
        assert reply["Status"] == "Success", reply
        if two_phase:
            assert curl_2pc(db, "commit", txn_id=reply["TxnId"])["status"] == "Success"
        log = fetch(reply["ErrorURL"]) if "ErrorURL" in reply else None
        answers.append(({k: reply.get(k) for k in _COUNTS if k != "Message"}, log,
                        sorted_rows(conn, f"SELECT * FROM {name}")))
    assert answers[0] == answers[1]
    assert answers[0][0]["NumberFilteredRows"] == 15 and "{'K': 13, 'v': 'toolong'" in (answers[0][1] or "")
    assert sorted_rows(conn, "SELECT tstext FROM scanned WHERE k = 1") == [("2023-05-06 07:00:00.987654",)]


def test_parquet_text_is_arrows_text() -> None:
    """The text DuckDB makes of each Parquet type the scan reads is the chunked path's (Arrow's)."""
    table = _parquet_rows().drop_columns(["extra"]).append_column(
        "ts_s", pa.array([datetime(1999, 12, 31, 23, 59, 59)] * 200, pa.timestamp("s")))
    table = table.append_column("small", pa.array(range(-100, 100), pa.int8()))
    con = duckdb.connect()
    con.register("rows", table)
    for name in table.column_names:
        sql = scan._parquet_text(f'"{name}"', table.schema.field(name).type)
        assert sql is not None, name
        got = con.sql(f"SELECT {sql} AS t FROM rows").to_arrow_table()["t"].to_pylist()
        assert got == _as_text(table.column(name).combine_chunks()).to_pylist(), name
    assert scan._parquet_text('"extra"', pa.float64()) is None
    assert scan._parquet_text('"z"', pa.timestamp("us", tz="UTC")) is None
