"""SELECT … INTO OUTFILE "s3://…" through the SQL server, against the stack's MinIO: Doris' answer
row, formats, file naming and splitting, FOR TIME AS OF snapshots, and the refusals (local files,
unknown properties, bad sizes)."""

from __future__ import annotations

import io
import time

import pyarrow.parquet as pq

from tests.query.s3_kit import S3User, get, keys, listed, put
from tests.query.sqlkit import Conn, columns, fails, rows, run

WRONG_ARGUMENTS, NOT_SUPPORTED = 1210, 1235


def _table(conn: Conn) -> None:
    run(conn, "CREATE TABLE t (k INT, v VARCHAR(10)) DUPLICATE KEY(k) DISTRIBUTED BY HASH(k) BUCKETS 2 "
              "PROPERTIES ('enable_time_travel' = 'true')")
    run(conn, "INSERT INTO t VALUES (1, 'a'), (2, NULL)")


def _key(url: str, bucket: str) -> str:
    return url.removeprefix(f"s3://{bucket}/")


def test_csv_outfile_answers_doris_row(conn: Conn, db: str, bucket: str, s3_user: S3User) -> None:
    _table(conn)
    sql = (f'SELECT k, v FROM t ORDER BY k INTO OUTFILE "s3://{bucket}/out/result_" FORMAT AS CSV '
           f'PROPERTIES ({keys(s3_user)}, "column_separator" = ",")')
    assert columns(conn, sql) == ["FileNumber", "TotalRows", "FileSize", "URL"]
    [(files, total, size, url)] = rows(conn, sql)
    assert (files, total) == (1, 2) and url.startswith(f"s3://{bucket}/out/result_") and url.endswith("_")
    body = get(bucket, _key(url, bucket) + "0.csv")
    assert body == b"1,a\n2,\\N\n" and size == len(body)


def test_parquet_and_csv_with_names(conn: Conn, db: str, bucket: str, s3_user: S3User) -> None:
    _table(conn)
    [(_, _, _, url)] = rows(conn, f'SELECT k AS id, v FROM t INTO OUTFILE "s3://{bucket}/p/x_" FORMAT AS PARQUET '
                                  f'PROPERTIES ({keys(s3_user)})')
    data = pq.read_table(io.BytesIO(get(bucket, _key(url, bucket) + "0.parquet")))
    assert data.column_names == ["id", "v"] and sorted(data.column("id").to_pylist()) == [1, 2]
    # What OUTFILE wrote, S3() reads back.
    assert rows(conn, f'SELECT id, v FROM S3("uri" = "{url}*", "format" = "parquet", {keys(s3_user)}) '
                      "ORDER BY id") == [(1, "a"), (2, None)]
    [(_, _, _, url)] = rows(conn, f'SELECT k FROM t WHERE k = 1 INTO OUTFILE "s3://{bucket}/n/x_" '
                                  f'FORMAT AS CSV_WITH_NAMES PROPERTIES ({keys(s3_user)})')
    assert get(bucket, _key(url, bucket) + "0.csv") == b"k\n1\n"


def test_outfile_reads_a_snapshot(conn: Conn, db: str, bucket: str, s3_user: S3User) -> None:
    _table(conn)
    time.sleep(1.1)
    before = rows(conn, "SELECT DATE_FORMAT(NOW(), '%Y-%m-%d %H:%i:%s')")[0][0]
    time.sleep(1.1)
    run(conn, "INSERT INTO t VALUES (3, 'c')")
    [(_, total, _, url)] = rows(conn, f"SELECT k FROM t FOR TIME AS OF '{before}' ORDER BY k INTO OUTFILE "
                                      f'"s3://{bucket}/tt/x_" PROPERTIES ({keys(s3_user)})')
    assert total == 2 and get(bucket, _key(url, bucket) + "0.csv") == b"1\n2\n"


def test_large_results_split_by_max_file_size(conn: Conn, db: str, bucket: str, s3_user: S3User) -> None:
    run(conn, "CREATE TABLE big (k BIGINT, pad VARCHAR(100)) DUPLICATE KEY(k) DISTRIBUTED BY HASH(k) BUCKETS 1")
    run(conn, "INSERT INTO big SELECT range, repeat('x', 60) FROM range(200000)")
    [(files, total, size, url)] = rows(conn, f'SELECT * FROM big INTO OUTFILE "s3://{bucket}/big/part_" '
                                             f'PROPERTIES ({keys(s3_user)}, "max_file_size" = "5MB")')
    assert total == 200000 and files == 3 and size > 10 << 20
    assert listed(bucket, "big/") == [f"{_key(url, bucket)}{n}.csv" for n in range(3)]


def test_delete_existing_files_and_success_file(conn: Conn, db: str, bucket: str, s3_user: S3User) -> None:
    _table(conn)
    put(bucket, "d/old.csv", b"stale")
    [(_, _, _, url)] = rows(conn, f'SELECT k FROM t INTO OUTFILE "s3://{bucket}/d/x_" PROPERTIES ({keys(s3_user)}, '
                                  '"delete_existing_files" = "true", "success_file_name" = "SUCCESS")')
    assert listed(bucket, "d/") == sorted([f"{_key(url, bucket)}0.csv", "d/SUCCESS"])


def test_refusals(conn: Conn, db: str, bucket: str, s3_user: S3User) -> None:
    _table(conn)
    props = f"PROPERTIES ({keys(s3_user)})"
    fails(conn, f'SELECT * FROM t INTO OUTFILE "file:///tmp/x_" {props}', NOT_SUPPORTED, "file://", "local files")
    fails(conn, 'SELECT * FROM t INTO OUTFILE "/tmp/x_"', WRONG_ARGUMENTS, "not an s3://")
    fails(conn, f'SELECT * FROM t INTO OUTFILE "hdfs://nn/x_" {props}', NOT_SUPPORTED, "hdfs://")
    fails(conn, f'SELECT * FROM t INTO OUTFILE "s3://{bucket}/x_" FORMAT AS ORC {props}', NOT_SUPPORTED, "orc")
    fails(conn, f'SELECT * FROM t INTO OUTFILE "s3://{bucket}/x_" PROPERTIES ({keys(s3_user)}, "colour" = "red")',
          NOT_SUPPORTED, "colour")
    fails(conn, f'SELECT * FROM t INTO OUTFILE "s3://{bucket}/x_" PROPERTIES ({keys(s3_user)}, '
                '"max_file_size" = "1MB")', WRONG_ARGUMENTS, "max_file_size")
    message = fails(conn, f'SELECT * FROM t INTO OUTFILE "s3://{bucket}/x_" PROPERTIES '
                          f'({keys(s3_user).replace(s3_user[1], "nope")})', 1105, "refused")
    assert s3_user[1] not in message
    assert listed(bucket) == []
