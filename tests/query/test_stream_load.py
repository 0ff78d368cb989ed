"""Stream Load over HTTP as Doris answers it: CSV and JSON loads with Doris' headers, the reply's
fields, labels, filtered rows and their ErrorURL, grants, and time travel before a load."""

from __future__ import annotations

import gzip
import time
from datetime import UTC, datetime
from pathlib import Path

import pymysql

from tests.query.sqlkit import rows, run, sorted_rows
from tests.query.stream_load_kit import curl_load, fetch, other_server

DUP = "DUPLICATE KEY(k) DISTRIBUTED BY HASH(k) BUCKETS 2"
TT = 'PROPERTIES ("enable_time_travel" = "true")'


def _file(tmp_path: Path, text: str | bytes, name: str = "data.csv") -> Path:
    path = tmp_path / name
    path.write_bytes(text.encode() if isinstance(text, str) else text)
    return path


def test_csv_load_answers_doris_reply(conn: pymysql.connections.Connection, db: str, tmp_path: Path) -> None:
    run(conn, f"CREATE TABLE t (k INT, v VARCHAR(20), n INT) {DUP}")
    reply = curl_load(_file(tmp_path, "1,a,10\n2,b,20\n3,\\N,30\n"), db, "t",
                      {"column_separator": ",", "label": "first", "Expect": "100-continue"})
    assert reply["Status"] == "Success", reply
    assert reply["Label"] == "first" and reply["TwoPhaseCommit"] == "false" and reply["Message"] == "OK"
    assert (reply["NumberTotalRows"], reply["NumberLoadedRows"], reply["NumberFilteredRows"],
            reply["NumberUnselectedRows"]) == (3, 3, 0, 0)
    assert reply["LoadBytes"] == len("1,a,10\n2,b,20\n3,\\N,30\n") and reply["TxnId"] > 0
    assert "ErrorURL" not in reply
    assert sorted_rows(conn, "SELECT * FROM t") == [(1, "a", 10), (2, "b", 20), (3, None, 30)]


def test_a_reused_label_answers_label_already_exists(conn: pymysql.connections.Connection, db: str,
                                                     tmp_path: Path) -> None:
    run(conn, f"CREATE TABLE t (k INT, v VARCHAR(20)) {DUP}")
    data = _file(tmp_path, "1\ta\n")
    first = curl_load(data, db, "t", {"label": "once"})
    assert first["Status"] == "Success"
    again = curl_load(data, db, "t", {"label": "once"})
    assert again["Status"] == "Label Already Exists" and again["ExistingJobStatus"] == "FINISHED", again
    assert again["NumberLoadedRows"] == 0
    assert rows(conn, "SELECT count(*) FROM t") == [(1,)]


def test_filtered_rows_within_and_beyond_max_filter_ratio(conn: pymysql.connections.Connection, db: str,
                                                          tmp_path: Path) -> None:
    run(conn, f"CREATE TABLE t (k INT, v VARCHAR(5), n INT NOT NULL) {DUP}")
    data = _file(tmp_path, "1,a,1\n2,toolongvalue,2\n3,c\n4,d,4\n")
    refused = curl_load(data, db, "t", {"column_separator": ",", "strict_mode": "true"})
    assert refused["Status"] == "Fail" and "too many filtered rows" in refused["Message"], refused
    assert refused["NumberFilteredRows"] == 2 and refused["NumberLoadedRows"] == 0
    assert rows(conn, "SELECT count(*) FROM t") == [(0,)]  # a failed load loads nothing
    log = fetch(refused["ErrorURL"])
    assert "src line [2,toolongvalue,2]" in log and "src line [3,c]" in log and "Data too long" in log
    loaded = curl_load(data, db, "t", {"column_separator": ",", "max_filter_ratio": "0.5"})
    assert loaded["Status"] == "Success" and loaded["NumberLoadedRows"] == 2 and loaded["NumberFilteredRows"] == 2
    assert "ErrorURL" in loaded
    assert sorted_rows(conn, "SELECT k FROM t") == [(1,), (4,)]


def test_columns_with_expressions_and_where(conn: pymysql.connections.Connection, db: str, tmp_path: Path) -> None:
    run(conn, f"CREATE TABLE t (k INT, v INT) {DUP}")
    reply = curl_load(_file(tmp_path, "1,5\n2,6\n3,7\n"), db, "t",
                      {"column_separator": ",", "columns": "k, tmp, v = tmp * 2", "where": "k > 1"})
    assert reply["Status"] == "Success" and reply["NumberUnselectedRows"] == 1 and reply["NumberLoadedRows"] == 2
    assert sorted_rows(conn, "SELECT * FROM t") == [(2, 12), (3, 14)]


def test_csv_enclose_skip_lines_separators_and_gzip(conn: pymysql.connections.Connection, db: str,
                                                    tmp_path: Path) -> None:
    run(conn, f"CREATE TABLE t (k INT, v VARCHAR(30)) {DUP}")
    text = 'k|v\n1|"a|b"\n2|"say ""hi"""\n'
    reply = curl_load(_file(tmp_path, gzip.compress(text.encode()), "d.csv.gz"), db, "t",
                      {"column_separator": "|", "enclose": '"', "skip_lines": "1", "compress_type": "gz"})
    assert reply["Status"] == "Success", reply
    assert sorted_rows(conn, "SELECT * FROM t") == [(1, "a|b"), (2, 'say "hi"')]
    multi = curl_load(_file(tmp_path, "3@@c##4@@d##"), db, "t", {"column_separator": "@@", "line_delimiter": "##"})
    assert multi["Status"] == "Success" and multi["NumberLoadedRows"] == 2, multi
    hexsep = curl_load(_file(tmp_path, '5\x01"e"\n'), db, "t", {"column_separator": "\\x01",
                                                                "trim_double_quotes": "true"})
    assert hexsep["Status"] == "Success", hexsep
    assert sorted_rows(conn, "SELECT * FROM t WHERE k > 2") == [(3, "c"), (4, "d"), (5, "e")]


def test_json_loads(conn: pymysql.connections.Connection, db: str, tmp_path: Path) -> None:
    run(conn, f"CREATE TABLE t (k INT, v VARCHAR(20)) {DUP}")
    array = curl_load(_file(tmp_path, '[{"k": 1, "v": "a"}, {"k": 2, "v": "b"}]', "a.json"), db, "t",
                      {"format": "json", "strip_outer_array": "true"})
    assert array["Status"] == "Success" and array["NumberLoadedRows"] == 2, array
    lines = curl_load(_file(tmp_path, '{"k": 3, "v": "c"}\n{"k": 4, "v": "d"}\n', "l.json"), db, "t",
                      {"format": "json", "read_json_by_line": "true"})
    assert lines["Status"] == "Success" and lines["NumberLoadedRows"] == 2, lines
    rooted = curl_load(_file(tmp_path, '{"data": {"id": 5, "name": "e"}}', "r.json"), db, "t",
                       {"format": "json", "json_root": "$.data", "jsonpaths": '["$.id", "$.name"]',
                        "columns": "k, v"})
    assert rooted["Status"] == "Success", rooted
    assert sorted_rows(conn, "SELECT * FROM t") == [(1, "a"), (2, "b"), (3, "c"), (4, "d"), (5, "e")]


def test_load_privilege_is_the_sql_grant(conn: pymysql.connections.Connection, db: str, tmp_path: Path,
                                         user: tuple[str, str]) -> None:
    name, password = user
    run(conn, f"CREATE TABLE t (k INT) {DUP}")
    data = _file(tmp_path, "1\n")
    assert curl_load(data, db, "t", user=name, password="wrong").get("status") == "FAILED"
    assert curl_load(data, db, "t", user=name, password=password).get("status") == "FAILED"
    run(conn, f"GRANT LOAD_PRIV ON {db}.t TO '{name}'@'%'")
    assert curl_load(data, db, "t", user=name, password=password)["Status"] == "Success"
    assert rows(conn, "SELECT count(*) FROM t") == [(1,)]


def test_time_travel_before_a_stream_load_is_unchanged(conn: pymysql.connections.Connection, db: str,
                                                       tmp_path: Path) -> None:
    run(conn, f"CREATE TABLE t (k INT, v VARCHAR(10)) UNIQUE KEY(k) DISTRIBUTED BY HASH(k) BUCKETS 2 {TT}")
    run(conn, "INSERT INTO t VALUES (1, 'a'), (2, 'b')")
    time.sleep(0.005)
    before = datetime.now(tz=UTC).strftime("%Y-%m-%d %H:%M:%S.%f")
    time.sleep(0.005)
    reply = curl_load(_file(tmp_path, "1,z\n3,c\n"), db, "t", {"column_separator": ","})
    assert reply["Status"] == "Success"
    assert sorted_rows(conn, "SELECT * FROM t") == [(1, "z"), (2, "b"), (3, "c")]
    query = f"SELECT * FROM t FOR TIME AS OF '{before}' ORDER BY k"
    assert rows(conn, query) == [(1, "a"), (2, "b")]
    run(conn, "ADMIN COMPACT TABLE t WHERE TYPE = 'BASE'")
    assert rows(conn, query) == [(1, "a"), (2, "b")]


def test_unknown_table_and_bad_headers_fail_plainly(conn: pymysql.connections.Connection, db: str,
                                                    tmp_path: Path) -> None:
    run(conn, f"CREATE TABLE t (k INT) {DUP}")
    data = _file(tmp_path, "1\n")
    assert "Unknown table" in curl_load(data, db, "nope")["Message"]
    bad = curl_load(data, db, "t", {"format": "avro"})
    assert bad["Status"] == "Fail" and "format must be one of" in bad["Message"], bad
    not_orc = curl_load(data, db, "t", {"format": "orc"})
    assert not_orc["Status"] == "Fail" and "not an ORC file" in not_orc["Message"], not_orc
    assert curl_load(data, db, "t", {"merge_type": "DELETE"})["Status"] == "Fail"  # a Duplicate Key table
    assert rows(conn, "SELECT count(*) FROM t") == [(0,)]


def test_the_error_log_holds_the_rejected_rows_of_every_chunk_in_order(conn: pymysql.connections.Connection,
                                                                        db: str, tmp_path: Path) -> None:
    """Rejected rows are written to the ErrorURL's file as each chunk is checked (none held to the end)."""
    run(conn, f"CREATE TABLE t (k INT, v VARCHAR(8)) {DUP}")
    count = 50_000
    data = _file(tmp_path, "".join(f"{i},v\n" if i % 500 else f"x{i},v\n" for i in range(count)))
    with other_server({"STRATA_STREAM_LOAD_CHUNK_BYTES": str(8 << 10)}) as small:
        reply = curl_load(data, db, "t", {"column_separator": ",", "strict_mode": "true", "max_filter_ratio": "0.1"},
                          base=small.base)
        logged = fetch(reply["ErrorURL"]).splitlines()
    assert reply["Status"] == "Success" and reply["NumberFilteredRows"] == count // 500, reply
    assert [line[line.index("[") + 1:line.index("]")] for line in logged] == [f"x{i},v" for i in range(0, count, 500)]
    assert rows(conn, "SELECT count(*) FROM t") == [(count - count // 500,)]


def test_csv_with_names_skips_its_header_and_orc_loads_by_name(conn: pymysql.connections.Connection, db: str,
                                                               tmp_path: Path) -> None:
    """As Doris' Stream Load: `csv_with_names` skips one header line and `csv_with_names_and_types` two
    (whatever skip_lines says), fields in order; ORC columns match the table's by name."""
    import pyarrow as pa
    from pyarrow import orc
    run(conn, f"CREATE TABLE t (k INT, v VARCHAR(8)) {DUP}")
    named = curl_load(_file(tmp_path, "v,k\n1,a\n2,b\n"), db, "t",
                      {"column_separator": ",", "format": "csv_with_names", "skip_lines": "5"})
    typed = curl_load(_file(tmp_path, "k,v\nINT,STRING\n3,c\n", "typed.csv"), db, "t",
                      {"column_separator": ",", "format": "csv_with_names_and_types"})
    orc.write_table(pa.table({"v": ["d", "e"], "k": [4, 5], "extra": [0.5, 1.5]}), str(tmp_path / "rows.orc"))
    stripes = curl_load(tmp_path / "rows.orc", db, "t", {"format": "orc"})
    for reply in (named, typed, stripes):
        assert reply["Status"] == "Success", reply
    assert (named["NumberLoadedRows"], typed["NumberLoadedRows"], stripes["NumberLoadedRows"]) == (2, 1, 2)
    assert sorted_rows(conn, "SELECT * FROM t") == [(1, "a"), (2, "b"), (3, "c"), (4, "d"), (5, "e")]
