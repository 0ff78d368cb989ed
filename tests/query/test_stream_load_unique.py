"""Stream Load into Unique Key tables: merge_type APPEND / DELETE / MERGE (the delete sign INSERT
uses), function_column.sequence_col, partial_columns; and group commit. A body loaded in many small
chunks into Unique and Aggregate Key tables gives what it gives loaded in one, in one commit; a body
that must be read whole (partial_columns) is refused beyond STRATA_LOAD_WHOLE_MAX_BYTES."""

from __future__ import annotations

from pathlib import Path

import pymysql

from tests.query.sqlkit import rows, run, sorted_rows
from tests.query.stream_load_kit import curl_load, other_server

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


def _merge_body(count: int) -> tuple[str, dict[int, tuple[str, int]]]:
    """Rows `k,v,sq,del` with keys repeating far apart (in other chunks), and what a sequenced MERGE
    load of them leaves: per key the row of the highest sq (the later one on a tie) unless it deletes."""
    lines: list[str] = []
    best: dict[int, tuple[str, int, int]] = {}
    for i in range(count):
        k, sq, sign = i * 7 % 97, i * 13 % 23, int(i % 11 == 0)
        lines.append(f"{k},v{i},{sq},{sign}\n")
        if k not in best or sq >= best[k][1]:
            best[k] = (f"v{i}", sq, sign)
    return "".join(lines), {k: (v, sq) for k, (v, sq, sign) in best.items() if not sign}


def test_chunked_unique_and_aggregate_loads_equal_whole_ones(conn: pymysql.connections.Connection, db: str,
                                                             tmp_path: Path) -> None:
    text, expected = _merge_body(3000)
    body = _file(tmp_path, text)
    merge = {"column_separator": ",", "columns": "k, v, sq, del", "merge_type": "MERGE", "delete": "del = 1",
             "function_column.sequence_col": "sq"}
    last = {"column_separator": ",", "columns": "k, v, sq, del"}
    aggregate = {"column_separator": ",", "columns": "k, v, sq, del, total = sq, top = sq, latest = v"}
    for name in ("whole", "chunked"):
        travel = "'enable_time_travel' = 'true'"
        run(conn, f"CREATE TABLE s_{name} (k INT, v VARCHAR(10), sq INT) {UNIQUE} "
                  f"PROPERTIES ('function_column.sequence_type' = 'int', {travel})")
        run(conn, f"CREATE TABLE u_{name} (k INT, v VARCHAR(10), sq INT) {UNIQUE} PROPERTIES ({travel})")
        run(conn, f"CREATE TABLE a_{name} (k INT, total BIGINT SUM, top INT MAX, latest VARCHAR(10) REPLACE) "
                  f"AGGREGATE KEY(k) DISTRIBUTED BY HASH(k) BUCKETS 2 PROPERTIES ({travel})")
    # The stack's server reads this ~40 kB body in one chunk (8 MB); the other in ~150 chunks of 256 bytes.
    with other_server({"STRATA_STREAM_LOAD_CHUNK_BYTES": "256"}) as small:
        for name, base in (("whole", None), ("chunked", small.base)):
            for table, headers in (("s", merge), ("u", last), ("a", aggregate)):
                reply = curl_load(body, db, f"{table}_{name}", headers, base=base)
                assert reply["Status"] == "Success" and reply["NumberLoadedRows"] == 3000, reply
    assert sorted_rows(conn, "SELECT k, v, sq FROM s_chunked") == sorted((k, v, sq) for k, (v, sq) in expected.items())
    last_rows = {i * 7 % 97: (f"v{i}", i * 13 % 23) for i in range(3000)}
    assert sorted_rows(conn, "SELECT k, v, sq FROM u_chunked") == sorted((k, *r) for k, r in last_rows.items())
    sums: dict[int, list[int]] = {}
    for i in range(3000):
        sums.setdefault(i * 7 % 97, []).append(i * 13 % 23)
    assert sorted_rows(conn, "SELECT k, total, top, latest FROM a_chunked") == \
        sorted((k, sum(v), max(v), last_rows[k][0]) for k, v in sums.items())
    for table in ("s", "u", "a"):
        assert sorted_rows(conn, f"SELECT * FROM {table}_chunked") == sorted_rows(conn, f"SELECT * FROM {table}_whole")
        # One commit: version 1 (the load) is already the table as it is.
        assert rows(conn, f"SELECT count(*) FROM {table}_chunked FOR VERSION AS OF 1") == \
            rows(conn, f"SELECT count(*) FROM {table}_chunked")
    # Compaction merges the one commit's chunks as the read did.
    run(conn, "ADMIN COMPACT TABLE s_chunked WHERE TYPE = 'BASE'")
    assert sorted_rows(conn, "SELECT k, v, sq FROM s_chunked") == sorted((k, v, sq) for k, (v, sq) in expected.items())


def test_a_body_read_whole_is_bounded(conn: pymysql.connections.Connection, db: str, tmp_path: Path) -> None:
    run(conn, f"CREATE TABLE p (k INT, a VARCHAR(10), b INT) {UNIQUE}")
    body = _file(tmp_path, "".join(f"{k},{k}\n" for k in range(100)))
    with other_server({"STRATA_LOAD_WHOLE_MAX_BYTES": "100"}) as small:
        partial = curl_load(body, db, "p", {"column_separator": ",", "columns": "k, b", "partial_columns": "true"},
                            base=small.base)
        chunked = curl_load(body, db, "p", {"column_separator": ",", "columns": "k, b"}, base=small.base)
    assert partial["Status"] == "Fail" and "STRATA_LOAD_WHOLE_MAX_BYTES" in partial["Message"] \
        and "partial_columns" in partial["Message"], partial
    assert chunked["Status"] == "Success" and chunked["NumberLoadedRows"] == 100, chunked
