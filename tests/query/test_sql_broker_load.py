"""Broker Load from S3 (LOAD LABEL … WITH S3) through the SQL server, against the stack's MinIO: the
asynchronous job and SHOW LOAD, column lists, SET and WHERE, several files and tables, labels,
CANCEL LOAD, failures shown in ErrorMsg, secrets kept out, and time travel before the load."""

from __future__ import annotations

import time
from typing import Any

import pyarrow as pa
import pymysql

from tests.query.s3_kit import S3User, finished_job, keys, put, put_parquet
from tests.query.sqlkit import Conn, fails, rows, run

# Doris' 5001 'label already used' travels as 1105 with 'errCode = 5001' in the message.
WRONG_ARGUMENTS, NOT_SUPPORTED, LABEL_EXISTS = 1210, 1235, 1105


def _load(conn: Conn, label: str, data: str, user: S3User, properties: str = "") -> None:
    run(conn, f"LOAD LABEL {label} ({data}) WITH S3 ({keys(user, 'aws')})"
              + (f" PROPERTIES ({properties})" if properties else ""))


def _job(conn: Conn, label: str, timeout_s: float = 60) -> dict[str, Any]:
    return finished_job(conn, "LOAD", label, timeout_s)


def _table(conn: Conn, name: str = "t") -> None:
    run(conn, f"CREATE TABLE {name} (k INT, v VARCHAR(10), n INT) DUPLICATE KEY(k) DISTRIBUTED BY HASH(k) BUCKETS 2 "
              "PROPERTIES ('enable_time_travel' = 'true')")


def test_csv_load_with_columns_set_and_where(conn: Conn, db: str, bucket: str, s3_user: S3User) -> None:
    _table(conn)
    run(conn, "INSERT INTO t VALUES (100, 'old', 0)")
    time.sleep(1.1)
    before = rows(conn, "SELECT DATE_FORMAT(NOW(), '%Y-%m-%d %H:%i:%s')")[0][0]
    time.sleep(1.1)
    put(bucket, "in/a.csv", b"1,x,10\n2,y,20\n3,z,30\n")
    put(bucket, "in/b.csv", b"4,w,40\n")
    _load(conn, "l1", f'DATA INFILE("s3://{bucket}/in/*.csv") INTO TABLE t COLUMNS TERMINATED BY "," '
                      '(k, v, raw) SET (n = raw * 2) WHERE k <> 2', s3_user, '"timeout" = "600"')
    job = _job(conn, "l1")
    assert job["State"] == "FINISHED", job["ErrorMsg"]
    assert job["Label"] == "l1" and job["Type"] == "BROKER" and job["ErrorMsg"] in (None, "NULL")
    assert job["EtlInfo"] == "unselected.rows=1; dpp.abnorm.ALL=0; dpp.norm.ALL=3"
    assert "timeout(s):600" in job["TaskInfo"] and job["Progress"] == "ETL:100%; LOAD:100%"
    assert rows(conn, "SELECT k, v, n FROM t ORDER BY k") == [(1, "x", 20), (3, "z", 60), (4, "w", 80), (100, "old", 0)]
    # Time travel before the load answers as before, also after compaction.
    assert rows(conn, f"SELECT k FROM t FOR TIME AS OF '{before}'") == [(100,)]
    run(conn, "ADMIN COMPACT TABLE t WHERE TYPE = 'BASE'")
    assert rows(conn, f"SELECT k FROM t FOR TIME AS OF '{before}'") == [(100,)]
    assert rows(conn, "SELECT count(*) FROM t") == [(4,)]
    # The label is the load's: the job and the table both know it.
    fails(conn, f'LOAD LABEL l1 (DATA INFILE("s3://{bucket}/in/a.csv") INTO TABLE t COLUMNS TERMINATED BY ",") '
                f"WITH S3 ({keys(s3_user, 'aws')})", LABEL_EXISTS, "5001", "l1")
    fails(conn, "INSERT INTO t WITH LABEL l1 VALUES (9, 'q', 9)", LABEL_EXISTS, "5001", "l1")


def test_parquet_into_two_tables(conn: Conn, db: str, bucket: str, s3_user: S3User) -> None:
    _table(conn, "a")
    _table(conn, "b")
    put_parquet(bucket, "p/one.parquet", pa.table({"k": [1, 2], "v": ["p", "q"], "extra": [0, 0]}))
    put(bucket, "p/two.json", b'{"k": 7, "v": "j", "n": 70}\n')
    _load(conn, f"{db}.l2", f'DATA INFILE("s3://{bucket}/p/one.parquet") INTO TABLE a FORMAT AS "parquet", '
                            f'DATA INFILE("s3://{bucket}/p/two.json") INTO TABLE b FORMAT AS "json"', s3_user)
    assert _job(conn, "l2")["State"] == "FINISHED"
    assert rows(conn, "SELECT k, v, n FROM a ORDER BY k") == [(1, "p", None), (2, "q", None)]
    assert rows(conn, "SELECT k, v, n FROM b") == [(7, "j", 70)]


def test_a_bad_row_cancels_the_job_and_loads_nothing(conn: Conn, db: str, bucket: str, s3_user: S3User) -> None:
    _table(conn)
    put(bucket, "bad.csv", b"1,ok,1\nnot-a-number,x,2\n")
    _load(conn, "bad", f'DATA INFILE("s3://{bucket}/bad.csv") INTO TABLE t COLUMNS TERMINATED BY ","', s3_user)
    job = _job(conn, "bad")
    assert job["State"] == "CANCELLED" and job["ErrorMsg"].startswith("type:ETL_RUN_FAIL; msg:"), job
    assert rows(conn, "SELECT count(*) FROM t") == [(0,)]
    fails(conn, 'CANCEL LOAD WHERE LABEL = "bad"', WRONG_ARGUMENTS, "CANCELLED")
    # A cancelled label may be used again (as in Doris).
    put(bucket, "bad.csv", b"1,ok,1\n")
    _load(conn, "bad", f'DATA INFILE("s3://{bucket}/bad.csv") INTO TABLE t COLUMNS TERMINATED BY ","', s3_user)
    assert _job(conn, "bad")["State"] == "FINISHED"
    assert rows(conn, "SELECT k FROM t") == [(1,)]


def test_missing_files_and_wrong_keys_fail_without_the_secret(conn: Conn, db: str, bucket: str,
                                                              s3_user: S3User) -> None:
    _table(conn)
    _load(conn, "nofile", f'DATA INFILE("s3://{bucket}/none/*.csv") INTO TABLE t', s3_user)
    job = _job(conn, "nofile")
    assert job["State"] == "CANCELLED" and "no object matches" in job["ErrorMsg"]
    run(conn, f'LOAD LABEL wrongkey (DATA INFILE("s3://{bucket}/x.csv") INTO TABLE t) WITH S3 '
              f"({keys(s3_user, 'aws').replace(s3_user[1], 'not-it')})")
    job = _job(conn, "wrongkey")
    assert job["State"] == "CANCELLED" and "refused" in job["ErrorMsg"]
    shown = str(rows(conn, "SHOW LOAD"))
    assert s3_user[1] not in shown and "not-it" not in shown


def test_cancel_a_waiting_job(conn: Conn, db: str, bucket: str, s3_user: S3User) -> None:
    """Jobs run one at a time: one queued behind a long load can be cancelled before it starts."""
    _table(conn)
    put(bucket, "big.csv", b"".join(b"%d,v,%d\n" % (i, i) for i in range(300000)))
    put(bucket, "small.csv", b"1,s,1\n")
    _load(conn, "long", f'DATA INFILE("s3://{bucket}/big.csv") INTO TABLE t COLUMNS TERMINATED BY ","', s3_user)
    _load(conn, "queued", f'DATA INFILE("s3://{bucket}/small.csv") INTO TABLE t COLUMNS TERMINATED BY ","',
          s3_user)
    run(conn, 'CANCEL LOAD WHERE LABEL = "queued"')
    assert _job(conn, "long")["State"] == "FINISHED"
    job = _job(conn, "queued")
    assert job["State"] == "CANCELLED" and "cancelled by user" in job["ErrorMsg"]
    assert rows(conn, "SELECT count(*) FROM t") == [(300000,)]
    assert [r[1] for r in rows(conn, 'SHOW LOAD WHERE STATE = "FINISHED"')] == ["long"]
    assert len(rows(conn, 'SHOW LOAD WHERE LABEL LIKE "%u%" LIMIT 5')) == 1


def test_refusals(conn: Conn, db: str, bucket: str, s3_user: S3User) -> None:
    _table(conn)
    data = f'DATA INFILE("s3://{bucket}/x.csv") INTO TABLE t'
    fails(conn, f"LOAD LABEL r1 ({data}) WITH S3 ({keys(s3_user, 'aws')}) PROPERTIES (\"max_filter_ratio\" = \"0.1\")",
          NOT_SUPPORTED, "max_filter_ratio")
    fails(conn, f"LOAD LABEL r1 ({data}) WITH S3 ({keys(s3_user, 'aws')}) PROPERTIES (\"colour\" = \"red\")",
          NOT_SUPPORTED, "colour")
    fails(conn, f'LOAD LABEL r1 (DATA INFILE("file:///etc/passwd") INTO TABLE t) WITH S3 ({keys(s3_user, "aws")})',
          NOT_SUPPORTED, "file://")
    fails(conn, f'LOAD LABEL r1 (DATA INFILE("s3://{bucket}/x.csv") INTO TABLE nope) WITH S3 '
                f'({keys(s3_user, "aws")})', 1146, "nope")
    fails(conn, f"LOAD LABEL r1 ({data} FORMAT AS \"avro\") WITH S3 ({keys(s3_user, 'aws')})", NOT_SUPPORTED, "avro")
    fails(conn, 'CANCEL LOAD WHERE LABEL = "never"', WRONG_ARGUMENTS, "not found")
    assert rows(conn, "SHOW LOAD") == []


def test_a_load_needs_load_priv_on_its_tables(conn: Conn, db: str, bucket: str, s3_user: S3User,
                                              user: tuple[str, str]) -> None:
    _table(conn)
    put(bucket, "u.csv", b"5,u,5\n")
    me = pymysql.connect(host=conn.host, port=conn.port, user=user[0], password=user[1], autocommit=True)
    try:
        statement = (f'LOAD LABEL {db}.lu (DATA INFILE("s3://{bucket}/u.csv") INTO TABLE t COLUMNS TERMINATED BY ",") '
                     f"WITH S3 ({keys(s3_user, 'aws')})")
        fails(me, statement, 1142, "LOAD_PRIV")
        fails(me, f"SHOW LOAD FROM {db}", 1142, "LOAD_PRIV")
        run(conn, f"GRANT LOAD_PRIV ON {db}.* TO '{user[0]}'")
        run(me, statement)
        run(me, f"USE {db}")
        assert _job(me, "lu")["State"] == "FINISHED"
        assert rows(conn, "SELECT k FROM t") == [(5,)]
    finally:
        me.close()
