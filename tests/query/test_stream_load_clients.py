"""Stream Load from Python clients as published on PyPI (pydoris' DorisClient, doris-stream-load),
and the body formats beyond plain CSV: Parquet, and CSV compressed with bz2 and lz4."""

from __future__ import annotations

import bz2
import json
import subprocess
import sys
import textwrap
from pathlib import Path

import pyarrow as pa
import pyarrow.parquet as pq
import pymysql
from pydoris.doris_client import DorisClient

from schemas.config import load_settings
from tests.query.sqlkit import run, sorted_rows
from tests.query.stream_load_kit import curl_load

DUP = "DUPLICATE KEY(k) DISTRIBUTED BY HASH(k) BUCKETS 2"


def test_pydoris_doris_client_loads_csv_and_json(conn: pymysql.connections.Connection, db: str) -> None:
    run(conn, f"CREATE TABLE t (k INT, v VARCHAR(10)) {DUP}")
    client = DorisClient("127.0.0.1", str(load_settings().http_port), "root", "")
    client.options.set_csv_format(",")
    client.options.set_label("pydoris_csv")
    assert client.write(db, "t", "1,a\n2,b")
    assert not client.write(db, "t", "1,a\n2,b")  # the label is used: Status is "Label Already Exists"
    json_client = DorisClient("127.0.0.1", str(load_settings().http_port), "root", "")
    json_client.options.set_json_format()
    assert json_client.write(db, "t", '{"k": 3, "v": "c"}\n{"k": 4, "v": "d"}')
    assert sorted_rows(conn, "SELECT * FROM t") == [(1, "a"), (2, "b"), (3, "c"), (4, "d")]


def test_doris_stream_load_package(conn: pymysql.connections.Connection, db: str) -> None:
    """doris-stream-load speaks HTTP/1.0 (it switches http.client for the whole process on import), so
    it runs in a process of its own; its URL ends in `_stream_load/`."""
    run(conn, f"CREATE TABLE t (k INT, v VARCHAR(10)) {DUP}")
    script = textwrap.dedent(f"""
        import json
        from doris_stream_load import stream_load
        loader = stream_load("127.0.0.1", "root", "", {load_settings().http_port}, "{db}", "t", ",")
        print(json.dumps(loader.sendData(["1,x", "2,y"])))
    """)
    done = subprocess.run([sys.executable, "-c", script], capture_output=True, text=True, timeout=120, check=True)
    reply = json.loads(done.stdout)
    assert reply["Status"] == "Success" and reply["NumberLoadedRows"] == 2, reply
    assert sorted_rows(conn, "SELECT * FROM t") == [(1, "x"), (2, "y")]


def test_parquet_load_matches_columns_by_name(conn: pymysql.connections.Connection, db: str,
                                              tmp_path: Path) -> None:
    run(conn, f"CREATE TABLE t (k INT, v VARCHAR(10), at DATETIME, ok BOOLEAN, d DECIMAL(10, 2)) {DUP}")
    path = tmp_path / "data.parquet"
    pq.write_table(pa.table({"v": ["a", None], "k": pa.array([1, 2], pa.int64()),
                             "at": pa.array([1_700_000_000_000_000, 0], pa.timestamp("us")),
                             "ok": [True, False], "d": pa.array([1.5, 2.25], pa.float64())}), path)
    reply = curl_load(path, db, "t", {"format": "parquet"})
    assert reply["Status"] == "Success" and reply["NumberLoadedRows"] == 2, reply
    got = sorted_rows(conn, "SELECT k, v, CAST(at AS CHAR), ok, CAST(d AS CHAR) FROM t")
    assert got == [(1, "a", "2023-11-14 22:13:20", 1, "1.50"), (2, None, "1970-01-01 00:00:00", 0, "2.25")]
    mapped = curl_load(path, db, "t", {"format": "parquet", "columns": "k, v, kk = k + 10",
                                       "where": "k = 1"})
    assert mapped["Status"] == "Fail"  # kk is no column of t: refused before anything loads
    assert "kk" in mapped["Message"]


def test_compressed_csv_bz2_and_lz4(conn: pymysql.connections.Connection, db: str, tmp_path: Path) -> None:
    run(conn, f"CREATE TABLE t (k INT, v VARCHAR(10)) {DUP}")
    packed = tmp_path / "data.csv.bz2"
    packed.write_bytes(bz2.compress(b"1,a\n2,b\n"))
    assert curl_load(packed, db, "t", {"column_separator": ",", "compress_type": "bz2"})["Status"] == "Success"
    lz4 = tmp_path / "data.csv.lz4"
    sink = pa.BufferOutputStream()
    with pa.CompressedOutputStream(sink, "lz4") as out:
        out.write(b"3,c\n")
    lz4.write_bytes(sink.getvalue().to_pybytes())
    reply = curl_load(lz4, db, "t", {"column_separator": ",", "compress_type": "lz4"})
    assert reply["Status"] == "Success", reply
    assert sorted_rows(conn, "SELECT * FROM t") == [(1, "a"), (2, "b"), (3, "c")]
