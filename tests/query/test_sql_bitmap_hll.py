"""BITMAP and HLL columns through the SQL port: Doris 2.1's table rules, loads through to_bitmap /
hll_hash (INSERT and Stream Load), the Aggregate Key union on read and in compaction, time travel,
NULL as the shown value of the column itself, and the bitmap/hll functions on table data.

Expected rows of the join cases are Doris' regression suite's
(regression-test/data/query_p0/sql_functions/bitmap_functions/test_bitmap_function.out)."""

from __future__ import annotations

from pathlib import Path

import pymysql
import pytest

from tests.query.s3_kit import S3User, keys
from tests.query.sqlkit import fails, rows, run, scalar
from tests.query.stream_load_kit import curl_load
from tests.query.test_sql_time_travel import TT, instant

_BUCKETS = "DISTRIBUTED BY HASH(dt) BUCKETS 2"


def _agg_table(conn: pymysql.connections.Connection, name: str = "pv", extra: str = "") -> None:
    run(conn, f"CREATE TABLE {name} (dt INT NULL, page VARCHAR(10) NULL, uv BITMAP BITMAP_UNION NULL, "
              f"h HLL HLL_UNION NULL, n BIGINT SUM NULL) AGGREGATE KEY(dt, page) {_BUCKETS} {extra}")


def _sets(conn: pymysql.connections.Connection, table: str, at: str = "") -> list[tuple[object, ...]]:
    return rows(conn, f"SELECT dt, page, bitmap_to_string(uv), bitmap_count(uv), hll_cardinality(h), n "
                      f"FROM {table} {at} ORDER BY dt, page")


def test_aggregate_key_folds_bitmap_and_hll(conn: pymysql.connections.Connection, db: str) -> None:
    _agg_table(conn)
    run(conn, "INSERT INTO pv VALUES (1, 'a', to_bitmap(11), hll_hash('x'), 1), "
              "(1, 'a', to_bitmap(12), hll_hash('y'), 1), (2, 'b', bitmap_from_string('2,1,2'), hll_hash('x'), 1)")
    run(conn, "INSERT INTO pv SELECT 1, 'a', to_bitmap(11), hll_hash('x'), 1")
    run(conn, "INSERT INTO pv VALUES (2, 'b', NULL, NULL, 1), (3, 'c', bitmap_empty(), hll_empty(), 1)")
    assert _sets(conn, "pv") == [(1, "a", "11,12", 2, 2, 3), (2, "b", "1,2", 2, 1, 2), (3, "c", "", 0, 0, 1)]
    # The column itself shows NULL, as Doris sends BITMAP/HLL values to a MySQL client.
    assert rows(conn, "SELECT dt, uv, h FROM pv ORDER BY dt") == [(1, None, None), (2, None, None), (3, None, None)]
    assert rows(conn, "SELECT bitmap_to_string(bitmap_union(uv)), bitmap_union_count(uv), hll_union_agg(h), "
                      "hll_cardinality(hll_union(h)), hll_cardinality(hll_raw_agg(h)) FROM pv") == [
        ("1,2,11,12", 4, 2, 2, 2)]
    assert rows(conn, "SELECT page, bitmap_union_count(uv) FROM pv GROUP BY page ORDER BY page") == [
        ("a", 2), ("b", 2), ("c", 0)]
    assert scalar(conn, "SELECT intersect_count(uv, dt, 1, 2) FROM pv") == 0
    assert scalar(conn, "SELECT bitmap_to_string(bitmap_intersect(uv)) FROM pv WHERE dt < 3") == ""


def test_compaction_and_time_travel_keep_every_instant(conn: pymysql.connections.Connection, db: str) -> None:
    _agg_table(conn, extra=TT)
    run(conn, "INSERT INTO pv VALUES (1, 'a', to_bitmap(1), hll_hash(1), 1)")
    run(conn, "INSERT INTO pv VALUES (1, 'a', to_bitmap(2), hll_hash(2), 1), (2, 'b', to_bitmap(5), NULL, 1)")
    first = instant()
    run(conn, "INSERT INTO pv VALUES (1, 'a', bitmap_from_string('2,3'), hll_hash(3), 1)")
    run(conn, "INSERT INTO pv VALUES (2, 'b', NULL, hll_hash('b'), 1)")
    second = instant()
    then = [(1, "a", "1,2", 2, 2, 2), (2, "b", "5", 1, 0, 1)]
    now = [(1, "a", "1,2,3", 3, 3, 3), (2, "b", "5", 1, 1, 2)]
    assert _sets(conn, "pv", f"FOR TIME AS OF '{first}'") == then
    assert _sets(conn, "pv") == now
    assert run(conn, "ADMIN COMPACT TABLE pv WHERE TYPE = 'CUMULATIVE'") >= 0
    assert _sets(conn, "pv", f"FOR TIME AS OF '{first}'") == then
    assert run(conn, "ADMIN COMPACT TABLE pv WHERE TYPE = 'BASE'") >= 1
    assert _sets(conn, "pv", f"FOR TIME AS OF '{first}'") == then
    assert _sets(conn, "pv", f"FOR TIME AS OF '{second}'") == now
    run(conn, "INSERT INTO pv VALUES (1, 'a', to_bitmap(4), hll_hash(4), 1)")
    assert _sets(conn, "pv")[0] == (1, "a", "1,2,3,4", 4, 4, 4)
    assert _sets(conn, "pv", f"FOR TIME AS OF '{second}'") == now


def test_duplicate_and_unique_tables_take_bitmap_and_hll(conn: pymysql.connections.Connection, db: str) -> None:
    run(conn, "CREATE TABLE d (k INT, b BITMAP, h HLL) DUPLICATE KEY(k) DISTRIBUTED BY HASH(k) BUCKETS 1")
    run(conn, "INSERT INTO d VALUES (1, to_bitmap(3), hll_hash(1)), (1, to_bitmap(4), hll_hash(NULL))")
    assert rows(conn, "SELECT k, bitmap_to_string(b), hll_cardinality(h) FROM d ORDER BY bitmap_min(b)") == [
        (1, "3", 1), (1, "4", 0)]
    run(conn, "CREATE TABLE u (k INT, b BITMAP) UNIQUE KEY(k) DISTRIBUTED BY HASH(k) BUCKETS 1")
    run(conn, "INSERT INTO u VALUES (1, to_bitmap(3))")
    run(conn, "INSERT INTO u VALUES (1, bitmap_from_string('4,5'))")
    assert rows(conn, "SELECT k, bitmap_to_string(b) FROM u") == [(1, "4,5")]
    assert rows(conn, "DESC u") == [("k", "int", "Yes", "true", None, ""), ("b", "bitmap", "Yes", "false", None, "")]


@pytest.mark.parametrize(("ddl", "code", "fragment"), [
    ("CREATE TABLE e (b BITMAP, k INT) DUPLICATE KEY(b) DISTRIBUTED BY HASH(k) BUCKETS 1", 1210, "Key column 'b'"),
    ("CREATE TABLE e (k INT, b BITMAP SUM) AGGREGATE KEY(k) DISTRIBUTED BY HASH(k) BUCKETS 1", 1210, "BITMAP_UNION"),
    ("CREATE TABLE e (k INT, h HLL BITMAP_UNION) AGGREGATE KEY(k) DISTRIBUTED BY HASH(k) BUCKETS 1", 1210,
     "HLL_UNION"),
    ("CREATE TABLE e (k INT, b INT BITMAP_UNION) AGGREGATE KEY(k) DISTRIBUTED BY HASH(k) BUCKETS 1", 1210,
     "needs a BITMAP column"),
    ("CREATE TABLE e (k INT, b BITMAP BITMAP_UNION DEFAULT '1') AGGREGATE KEY(k) DISTRIBUTED BY HASH(k) BUCKETS 1",
     1235, "DEFAULT"),
    ("CREATE TABLE e (k INT, b BITMAP) DUPLICATE KEY(k) DISTRIBUTED BY HASH(b) BUCKETS 1", 1210,
     "distribution column"),
    ("CREATE TABLE e (k INT, q QUANTILE_STATE QUANTILE_UNION) AGGREGATE KEY(k) DISTRIBUTED BY HASH(k) BUCKETS 1",
     1235, "QUANTILE_STATE"),
])
def test_what_doris_refuses_is_refused(conn: pymysql.connections.Connection, db: str, ddl: str, code: int,
                                       fragment: str) -> None:
    fails(conn, ddl, code, fragment)


def test_a_scalar_is_no_bitmap(conn: pymysql.connections.Connection, db: str) -> None:
    _agg_table(conn)
    fails(conn, "INSERT INTO pv VALUES (1, 'a', 5, hll_hash(1), 1)", 1366, "uv")
    run(conn, "ALTER TABLE pv ADD COLUMN b2 BITMAP BITMAP_UNION")
    fails(conn, "ALTER TABLE pv ADD COLUMN b3 BITMAP SUM", 1210, "BITMAP_UNION")
    run(conn, "INSERT INTO pv (dt, page, b2) VALUES (1, 'a', to_bitmap(7))")
    assert rows(conn, "SELECT bitmap_to_string(uv), bitmap_to_string(b2) FROM pv") == [(None, "7")]


def test_stream_load_maps_columns_through_to_bitmap(conn: pymysql.connections.Connection, db: str,
                                                    tmp_path: Path) -> None:
    _agg_table(conn)
    data = tmp_path / "pv.csv"
    data.write_text("1,a,10\n1,a,11\n1,a,10\n2,b,7\n")
    reply = curl_load(data, db, "pv", {"column_separator": ",",
                                       "columns": "dt, page, v, uv=to_bitmap(v), h=hll_hash(v), n=1"})
    assert reply["Status"] == "Success", reply
    assert _sets(conn, "pv") == [(1, "a", "10,11", 2, 2, 3), (2, "b", "7", 1, 1, 1)]


def test_bitmap_or_over_a_left_join(conn: pymysql.connections.Connection, db: str) -> None:
    """test_bitmap_function.out: sql_bitmap_or8/9/10, sql_bitmap_or_count6, then sql_bitmap_and_count7,
    sql_bitmap_xor_count7 and sql_bitmap_and_not_count3 over its second pair of tables."""
    for name, items in (("test_bitmap1", "(1, to_bitmap(11)), (2, to_bitmap(22)), (3, to_bitmap(33)), "
                                         "(4, to_bitmap(44))"),
                        ("test_bitmap2", "(1, to_bitmap(111)), (2, to_bitmap(222)), (5, to_bitmap(555))")):
        run(conn, f"CREATE TABLE {name} (dt INT(11) NULL, id bitmap BITMAP_UNION NULL) AGGREGATE KEY(dt) "
                  f"{_BUCKETS} PROPERTIES ('replication_num' = '1')")
        run(conn, f"INSERT INTO {name} VALUES {items}")
    join = "FROM test_bitmap1 l LEFT JOIN test_bitmap2 r ON l.dt = r.dt"
    assert rows(conn, f"SELECT l.dt, bitmap_count(bitmap_or(l.id, r.id)) count {join} ORDER BY l.dt, count") == [
        (1, 2), (2, 2), (3, 1), (4, 1)]
    assert rows(conn, f"SELECT l.dt, bitmap_or_count(l.id, r.id) count {join} ORDER BY l.dt, count") == [
        (1, 2), (2, 2), (3, 1), (4, 1)]
    assert rows(conn, f"SELECT l.dt, bitmap_to_string(bitmap_or(l.id, r.id)) count {join} ORDER BY l.dt") == [
        (1, "11,111"), (2, "22,222"), (3, "33"), (4, "44")]
    assert rows(conn, f"SELECT l.dt, bitmap_count(bitmap_or(l.id, r.id)) count {join} WHERE r.id IS NOT NULL "
                      "ORDER BY l.dt, count") == [(1, 2), (2, 2)]
    run(conn, "TRUNCATE TABLE test_bitmap1")
    run(conn, "TRUNCATE TABLE test_bitmap2")
    run(conn, 'INSERT INTO test_bitmap1 VALUES (1, bitmap_from_string("11,111")), (2, bitmap_from_string("22,222")), '
              '(3, bitmap_from_string("33,333")), (4, bitmap_from_string("44,444"))')
    run(conn, 'INSERT INTO test_bitmap2 VALUES (1, bitmap_from_string("11,1111")), '
              '(2, bitmap_from_string("22,2222")), (5, bitmap_from_string("55,5555"))')
    for function, expected in (("bitmap_and_count", [(1, 1), (2, 1), (3, 0), (4, 0)]),
                               ("bitmap_xor_count", [(1, 2), (2, 2), (3, 0), (4, 0)]),
                               ("bitmap_and_not_count", [(1, 1), (2, 1), (3, 0), (4, 0)])):
        assert rows(conn, f"SELECT l.dt, {function}(l.id, r.id) count {join} ORDER BY l.dt, count") == expected


def test_a_set_column_is_not_written_to_a_file(conn: pymysql.connections.Connection, db: str, bucket: str,
                                               s3_user: S3User) -> None:
    _agg_table(conn)
    run(conn, "INSERT INTO pv VALUES (1, 'a', to_bitmap(1), hll_hash(1), 1)")
    fails(conn, f'SELECT dt, uv FROM pv INTO OUTFILE "s3://{bucket}/bm/x_" FORMAT AS CSV PROPERTIES ({keys(s3_user)})',
          1235, "'uv' is a BITMAP or HLL")
    [(files, total, _, _)] = rows(conn, f'SELECT dt, bitmap_to_string(uv) FROM pv INTO OUTFILE "s3://{bucket}/bm/y_" '
                                        f"FORMAT AS CSV PROPERTIES ({keys(s3_user)})")
    assert (files, total) == (1, 1)
