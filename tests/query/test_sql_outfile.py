"""SELECT … INTO OUTFILE "s3://…" through the SQL server, against the stack's MinIO: Doris' answer
row, formats, file naming and splitting, FOR TIME AS OF snapshots, and the refusals (local files,
unknown properties, bad sizes)."""

from __future__ import annotations

import io
import time

import pyarrow as pa
import pyarrow.compute as pc
import pyarrow.csv as pacsv
import pyarrow.parquet as pq

from tests.query.s3_kit import S3User, get, keys, listed, put
from tests.query.sqlkit import Conn, columns, fails, rows, run
from tests.query.stream_load_kit import other_server

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


def test_a_result_larger_than_the_transfer_cap_is_written_file_by_file(conn: Conn, db: str, bucket: str,
                                                                       s3_user: S3User) -> None:
    """The result is never held whole: a server allowed 1 MB per transfer writes a ~25 MB result at
    a snapshot, in files of at most max_file_size, every row readable back."""
    run(conn, "CREATE TABLE big (k BIGINT, pad VARCHAR(100)) DUPLICATE KEY(k) DISTRIBUTED BY HASH(k) BUCKETS 2 "
              "PROPERTIES ('enable_time_travel' = 'true')")
    run(conn, "INSERT INTO big SELECT range, concat(md5(CAST(range AS VARCHAR)), md5(CAST(-range AS VARCHAR))) "
              "FROM range(300000)")
    time.sleep(1.1)
    before = rows(conn, "SELECT DATE_FORMAT(NOW(), '%Y-%m-%d %H:%i:%s')")[0][0]
    time.sleep(1.1)
    run(conn, "INSERT INTO big VALUES (-1, 'late')")
    expected = rows(conn, f"SELECT count(*), sum(k), count(DISTINCT pad) FROM big FOR TIME AS OF '{before}'")
    assert expected[0][0] == 300000
    with other_server({"STRATA_S3_TRANSFER_MAX_BYTES": str(1 << 20)}) as small:
        writer = small.connect(db)
        try:
            answers = {fmt: rows(writer, f"SELECT * FROM big FOR TIME AS OF '{before}' INTO OUTFILE "
                                         f'"s3://{bucket}/{fmt}/part_" FORMAT AS {fmt} PROPERTIES ({keys(s3_user)}, '
                                         '"max_file_size" = "5MB")')
                       for fmt in ("csv", "parquet")}
        finally:
            writer.close()
    for fmt, [(files, total, size, url)] in answers.items():
        names = listed(bucket, f"{fmt}/")
        assert total == 300000 and files > 1 and names == [f"{_key(url, bucket)}{n}.{fmt}" for n in range(files)]
        bodies = [get(bucket, name) for name in names]
        assert sum(len(b) for b in bodies) == size and all(len(b) <= 5 << 20 for b in bodies), [len(b) for b in bodies]
        if fmt == "parquet":
            read = pa.concat_tables([pq.read_table(io.BytesIO(b)) for b in bodies])
        else:
            read = pacsv.read_csv(io.BytesIO(b"".join(bodies)),
                                  read_options=pacsv.ReadOptions(column_names=["k", "pad"]),
                                  parse_options=pacsv.ParseOptions(delimiter="\t"))
        assert [(read.num_rows, pc.sum(read["k"]).as_py(), pc.count_distinct(read["pad"]).as_py())] == expected
