"""EXPORT TABLE … TO "s3://…" WITH S3 (…) through the SQL server, against the stack's MinIO: the
asynchronous job and SHOW EXPORT, partitions, WHERE, columns, formats, the snapshot it reads
(FOR TIME AS OF, or the moment of the statement), CANCEL EXPORT and the refusals."""

from __future__ import annotations

import io
import json
import time
from typing import Any

import pyarrow as pa
import pyarrow.compute as pc
import pyarrow.parquet as pq

from tests.query.s3_kit import S3User, finished_job, get, keys, listed
from tests.query.sqlkit import Conn, columns, fails, rows, run
from tests.query.stream_load_kit import other_server

WRONG_ARGUMENTS, NOT_SUPPORTED = 1210, 1235


def _job(conn: Conn, label: str, timeout_s: float = 60) -> dict[str, Any]:
    return finished_job(conn, "EXPORT", label, timeout_s)


def _table(conn: Conn) -> None:
    run(conn, "CREATE TABLE t (k INT, v VARCHAR(10)) DUPLICATE KEY(k) PARTITION BY RANGE(k) "
              "(PARTITION p1 VALUES LESS THAN (10), PARTITION p2 VALUES LESS THAN (100)) "
              "DISTRIBUTED BY HASH(k) BUCKETS 1 PROPERTIES ('enable_time_travel' = 'true')")
    run(conn, "INSERT INTO t VALUES (1, 'a'), (2, 'b'), (50, 'c')")


def _files(bucket: str, job: dict[str, Any]) -> list[bytes]:
    [[info]] = json.loads(job["OutfileInfo"])
    prefix = info["url"].removeprefix(f"s3://{bucket}/")
    return [get(bucket, key) for key in listed(bucket, prefix)]


def test_export_csv_with_partition_where_and_columns(conn: Conn, db: str, bucket: str, s3_user: S3User) -> None:
    _table(conn)
    run(conn, f'EXPORT TABLE t PARTITION (p1) WHERE k > 1 TO "s3://{bucket}/exp/" PROPERTIES ("label" = "e1", '
              f'"column_separator" = ",", "columns" = "v,k") WITH S3 ({keys(s3_user)})')
    job = _job(conn, "e1")
    assert job["State"] == "FINISHED" and job["Progress"] == "100%", job["ErrorMsg"]
    assert job["Path"] == f"s3://{bucket}/exp/"
    [[info]] = json.loads(job["OutfileInfo"])
    assert info["fileNumber"] == "1" and info["totalRows"] == "1"
    assert _files(bucket, job) == [b"b,2\n"]


def test_export_reads_a_snapshot(conn: Conn, db: str, bucket: str, s3_user: S3User) -> None:
    _table(conn)
    time.sleep(1.1)
    before = rows(conn, "SELECT DATE_FORMAT(NOW(), '%Y-%m-%d %H:%i:%s')")[0][0]
    time.sleep(1.1)
    run(conn, "ALTER TABLE t CREATE TAG close")
    run(conn, "INSERT INTO t VALUES (3, 'late')")
    for label, clause in (("e2", f"FOR TIME AS OF '{before}'"), ("e2_tag", "FOR TAG AS OF 'close'")):
        run(conn, f"EXPORT TABLE t {clause} TO \"s3://{bucket}/{label}/\" PROPERTIES (\"label\" = \"{label}\", "
                  f'"format" = "parquet") WITH S3 ({keys(s3_user)})')
        job = _job(conn, label)
        assert job["State"] == "FINISHED", job["ErrorMsg"]
        assert json.loads(job["TaskInfo"])["snapshot"] is not None
        [body] = _files(bucket, job)
        data = pq.read_table(io.BytesIO(body))
        assert sorted(data.column("k").to_pylist()) == [1, 2, 50], label


def test_show_and_cancel_export(conn: Conn, db: str, bucket: str, s3_user: S3User) -> None:
    _table(conn)
    run(conn, f'EXPORT TABLE t TO "s3://{bucket}/c/" PROPERTIES ("label" = "e3") WITH S3 ({keys(s3_user)})')
    assert _job(conn, "e3")["State"] == "FINISHED"
    fails(conn, 'CANCEL EXPORT WHERE LABEL = "e3"', WRONG_ARGUMENTS, "FINISHED")
    fails(conn, f'EXPORT TABLE t TO "s3://{bucket}/c/" PROPERTIES ("label" = "e3") WITH S3 ({keys(s3_user)})',
          1105, "5001", "e3")
    assert [r[1] for r in rows(conn, 'SHOW EXPORT WHERE STATE = "FINISHED"')] == ["e3"]
    assert columns(conn, "SHOW EXPORT")[:4] == ["JobId", "Label", "State", "Progress"]


def test_export_refusals(conn: Conn, db: str, bucket: str, s3_user: S3User) -> None:
    _table(conn)
    fails(conn, f'EXPORT TABLE t TO "file:///tmp/x/" WITH S3 ({keys(s3_user)})', NOT_SUPPORTED, "file://")
    fails(conn, f'EXPORT TABLE t TO "s3://{bucket}/x/" PROPERTIES ("format" = "orc") WITH S3 ({keys(s3_user)})',
          NOT_SUPPORTED, "orc")
    fails(conn, f'EXPORT TABLE t TO "s3://{bucket}/x/" PROPERTIES ("colour" = "red") WITH S3 ({keys(s3_user)})',
          NOT_SUPPORTED, "colour")
    fails(conn, f'EXPORT TABLE t PARTITION (nope) TO "s3://{bucket}/x/" WITH S3 ({keys(s3_user)})', 1735, "nope")
    fails(conn, f'EXPORT TABLE t TO "s3://{bucket}/x/" WITH BROKER "b" ({keys(s3_user)})', NOT_SUPPORTED, "BROKER")
    run(conn, f'EXPORT TABLE t TO "s3://{bucket}/x/" PROPERTIES ("label" = "wrong") WITH S3 '
              f"({keys(s3_user).replace(s3_user[1], 'not-it')})")
    job = _job(conn, "wrong")
    assert job["State"] == "CANCELLED" and "refused" in job["ErrorMsg"] and s3_user[1] not in str(job)


def test_an_export_larger_than_the_transfer_cap_is_written_file_by_file(conn: Conn, db: str, bucket: str,
                                                                        s3_user: S3User) -> None:
    """A server allowed 1 MB per transfer exports a table's snapshot of ~20 MB in Parquet files of at
    most max_file_size, every row of the snapshot readable back, none after it."""
    run(conn, "CREATE TABLE big (k BIGINT, pad VARCHAR(100)) DUPLICATE KEY(k) DISTRIBUTED BY HASH(k) BUCKETS 2 "
              "PROPERTIES ('enable_time_travel' = 'true')")
    run(conn, "INSERT INTO big SELECT range, concat(md5(CAST(range AS VARCHAR)), md5(CAST(-range AS VARCHAR))) "
              "FROM range(250000)")
    time.sleep(1.1)
    before = rows(conn, "SELECT DATE_FORMAT(NOW(), '%Y-%m-%d %H:%i:%s')")[0][0]
    time.sleep(1.1)
    run(conn, "INSERT INTO big VALUES (-1, 'late')")
    with other_server({"STRATA_S3_TRANSFER_MAX_BYTES": str(1 << 20)}) as small:
        exporter = small.connect(db)
        try:
            run(exporter, f"EXPORT TABLE big FOR TIME AS OF '{before}' TO \"s3://{bucket}/big/\" PROPERTIES "
                          f'("label" = "e_big", "format" = "parquet", "max_file_size" = "5MB") '
                          f"WITH S3 ({keys(s3_user)})")
            job = finished_job(exporter, "EXPORT", "e_big", timeout_s=300)
        finally:
            exporter.close()
    assert job["State"] == "FINISHED", job["ErrorMsg"]
    [[info]] = json.loads(job["OutfileInfo"])
    bodies = _files(bucket, job)
    assert int(info["fileNumber"]) == len(bodies) > 1 and info["totalRows"] == "250000"
    assert all(len(b) <= 5 << 20 for b in bodies), [len(b) for b in bodies]
    read = pa.concat_tables([pq.read_table(io.BytesIO(b)) for b in bodies])
    assert (read.num_rows, pc.sum(read["k"]).as_py(), pc.count_distinct(read["pad"]).as_py()) == \
        (250000, 250000 * 249999 // 2, 250000)
