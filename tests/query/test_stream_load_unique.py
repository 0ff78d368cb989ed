"""Stream Load into Unique Key tables: merge_type APPEND / DELETE / MERGE (the delete sign INSERT
uses), function_column.sequence_col, partial_columns; and group commit."""

from __future__ import annotations

from pathlib import Path

import pymysql

from tests.query.sqlkit import rows, run, sorted_rows
from tests.query.stream_load_kit import curl_load

UNIQUE = "UNIQUE KEY(k) DISTRIBUTED BY HASH(k) BUCKETS 2"


def _file(tmp_path: Path, text: str) -> Path:
    path = tmp_path / "data.csv"
    path.write_text(text)
    return path


def test_merge_and_delete_loads(conn: pymysql.connections.Connection, db: str, tmp_path: Path) -> None:
    run(conn, f"CREATE TABLE u (k INT, v VARCHAR(10)) {UNIQUE}")
    run(conn, "INSERT INTO u VALUES (1, 'a'), (2, 'b'), (3, 'c'), (4, 'd')")
    merged = curl_load(_file(tmp_path, "1,x,1\n2,y,0\n5,e,0\n"), db, "u",
                       {"column_separator": ",", "columns": "k, v, del", "merge_type": "MERGE", "delete": "del = 1"})
    assert merged["Status"] == "Success" and merged["NumberLoadedRows"] == 3, merged
    assert sorted_rows(conn, "SELECT * FROM u") == [(2, "y"), (3, "c"), (4, "d"), (5, "e")]
    deleted = curl_load(_file(tmp_path, "3\n4\n"), db, "u", {"columns": "k", "merge_type": "DELETE"})
    assert deleted["Status"] == "Success", deleted
    assert sorted_rows(conn, "SELECT * FROM u") == [(2, "y"), (5, "e")]
    appended = curl_load(_file(tmp_path, "3\tagain\n"), db, "u", {"merge_type": "APPEND"})
    assert appended["Status"] == "Success"
    assert sorted_rows(conn, "SELECT * FROM u") == [(2, "y"), (3, "again"), (5, "e")]


def test_sequence_col_orders_rows(conn: pymysql.connections.Connection, db: str, tmp_path: Path) -> None:
    run(conn, f"CREATE TABLE s (k INT, v VARCHAR(10), s INT) {UNIQUE} "
              "PROPERTIES ('function_column.sequence_type' = 'int')")
    headers = {"column_separator": ",", "columns": "k, v, s", "function_column.sequence_col": "s"}
    assert curl_load(_file(tmp_path, "1,a,5\n1,b,3\n2,c,1\n"), db, "s", headers)["Status"] == "Success"
    assert curl_load(_file(tmp_path, "1,old,4\n2,new,2\n"), db, "s", headers)["Status"] == "Success"
    assert sorted_rows(conn, "SELECT * FROM s") == [(1, "a", 5), (2, "new", 2)]
    missing = curl_load(_file(tmp_path, "1,z,9\n"), db, "s", {"column_separator": ",", "columns": "k, v, s"})
    assert missing["Status"] == "Fail" and "sequence column" in missing["Message"]


def test_partial_columns_keep_stored_values(conn: pymysql.connections.Connection, db: str, tmp_path: Path) -> None:
    run(conn, f"CREATE TABLE p (k INT, a VARCHAR(10), b INT) {UNIQUE}")
    run(conn, "INSERT INTO p VALUES (1, 'one', 10), (2, 'two', 20)")
    reply = curl_load(_file(tmp_path, "1,11\n3,33\n"), db, "p",
                      {"column_separator": ",", "columns": "k, b", "partial_columns": "true"})
    assert reply["Status"] == "Success", reply
    assert sorted_rows(conn, "SELECT * FROM p") == [(1, "one", 11), (2, "two", 20), (3, None, 33)]


def test_group_commit_load(conn: pymysql.connections.Connection, db: str, tmp_path: Path) -> None:
    run(conn, "CREATE TABLE g (k INT, v INT) DUPLICATE KEY(k) DISTRIBUTED BY HASH(k) BUCKETS 1 "
              "PROPERTIES ('group_commit_interval_ms' = '200')")
    reply = curl_load(_file(tmp_path, "1\t1\n2\t2\n"), db, "g", {"group_commit": "sync_mode"})
    assert reply["Status"] == "Success" and reply["Label"].startswith("group_commit_") and reply["GroupCommit"], reply
    assert rows(conn, "SELECT count(*) FROM g") == [(2,)]
    refused = curl_load(_file(tmp_path, "3\t3\n"), db, "g", {"group_commit": "sync_mode", "label": "x"})
    assert refused["Status"] == "Fail"
