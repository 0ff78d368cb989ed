"""Broker Load from S3 (LOAD LABEL … WITH S3) through the SQL server, against the stack's MinIO: the
asynchronous job and SHOW LOAD, column lists, SET and WHERE, several files and tables, labels,
CANCEL LOAD, failures shown in ErrorMsg, secrets kept out, and time travel before the load."""

from __future__ import annotations

import json
import time
from typing import Any

import pyarrow as pa
import pymysql

from tests.query.s3_kit import S3User, finished_job, keys, put, put_parquet
from tests.query.sqlkit import Conn, fails, rows, run
from tests.query.stream_load_kit import fetch

# Doris' 5001 'label already used' travels as 1105 with 'errCode = 5001' in the message.
WRONG_ARGUMENTS, NOT_SUPPORTED, LABEL_EXISTS = 1210, 1235, 1105
QUALITY = "type:ETL_QUALITY_UNSATISFIED; msg:quality not good enough to cancel"


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
    put(bucket, "bad.csv", b"1,ok,1\n2,x\n")
    _load(conn, "bad", f'DATA INFILE("s3://{bucket}/bad.csv") INTO TABLE t COLUMNS TERMINATED BY ","', s3_user)
    job = _job(conn, "bad")
    # max_filter_ratio 0 (the default): one filtered row is too many, as in Doris.
    assert job["State"] == "CANCELLED" and job["ErrorMsg"] == QUALITY, job
    assert job["EtlInfo"] == "unselected.rows=0; dpp.abnorm.ALL=1; dpp.norm.ALL=1"
    assert "src line [2,x]" in fetch(job["URL"])
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
    fails(conn, f"LOAD LABEL r1 ({data}) WITH S3 ({keys(s3_user, 'aws')}) PROPERTIES (\"max_filter_ratio\" = \"2\")",
          WRONG_ARGUMENTS, "max_filter_ratio")
    fails(conn, f"LOAD LABEL r1 ({data}) WITH S3 ({keys(s3_user, 'aws')}) PROPERTIES (\"strict_mode\" = \"maybe\")",
          WRONG_ARGUMENTS, "strict_mode")
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


def test_max_filter_ratio_and_strict_mode(conn: Conn, db: str, bucket: str, s3_user: S3User) -> None:
    """Rows that do not parse or fit are filtered: within max_filter_ratio the job finishes with them
    counted in EtlInfo and listed at URL; beyond it the job is cancelled and loads nothing."""
    run(conn, "CREATE TABLE t (k INT, v VARCHAR(5), n INT NOT NULL) DUPLICATE KEY(k) DISTRIBUTED BY HASH(k) "
              "BUCKETS 2")
    good = b"".join(b"%d,v,%d\n" % (i, i) for i in range(8))
    put(bucket, "f.csv", good + b"8,toolongvalue,8\n9,short\n")
    data = f'DATA INFILE("s3://{bucket}/f.csv") INTO TABLE t COLUMNS TERMINATED BY ","'
    _load(conn, "over", data, s3_user, '"max_filter_ratio" = "0.1"')
    job = _job(conn, "over")
    assert job["State"] == "CANCELLED" and job["ErrorMsg"] == QUALITY, job
    assert job["EtlInfo"] == "unselected.rows=0; dpp.abnorm.ALL=2; dpp.norm.ALL=8"
    log = fetch(job["URL"])
    assert "src line [8,toolongvalue,8]" in log and "src line [9,short]" in log and "Data too long" in log
    assert rows(conn, "SELECT count(*) FROM t") == [(0,)]
    _load(conn, "within", data, s3_user, '"max_filter_ratio" = "0.2"')
    job = _job(conn, "within")
    assert job["State"] == "FINISHED", job
    assert job["EtlInfo"] == "unselected.rows=0; dpp.abnorm.ALL=2; dpp.norm.ALL=8"
    assert "max_filter_ratio:0.2" in job["TaskInfo"] and "src line [9,short]" in fetch(job["URL"])
    assert json.loads(job["JobDetails"])["ScannedRows"] == 10
    assert rows(conn, "SELECT count(*), sum(k) FROM t") == [(8, 28)]
    # strict_mode: a value that does not convert is a filtered row, not a NULL.
    put(bucket, "s.csv", b"20,a,1\n21,b,x\n")
    run(conn, "CREATE TABLE s (k INT, v VARCHAR(5), n INT) DUPLICATE KEY(k) DISTRIBUTED BY HASH(k) BUCKETS 1")
    into_s = f'DATA INFILE("s3://{bucket}/s.csv") INTO TABLE s COLUMNS TERMINATED BY ","'
    _load(conn, "strict", into_s, s3_user, '"strict_mode" = "true", "max_filter_ratio" = "0.5"')
    assert _job(conn, "strict")["EtlInfo"] == "unselected.rows=0; dpp.abnorm.ALL=1; dpp.norm.ALL=1"
    _load(conn, "lenient", into_s, s3_user)
    assert _job(conn, "lenient")["State"] == "FINISHED"
    assert rows(conn, "SELECT k, n FROM s ORDER BY k, n") == [(20, 1), (20, 1), (21, None)]


def test_merge_types(conn: Conn, db: str, bucket: str, s3_user: S3User) -> None:
    """APPEND, DELETE (every row deletes its key) and MERGE … DELETE ON on a Unique Key table, as a
    Stream Load's merge_type does; time travel before them answers as before."""
    run(conn, "CREATE TABLE u (k INT, v VARCHAR(10)) UNIQUE KEY(k) DISTRIBUTED BY HASH(k) BUCKETS 2 "
              "PROPERTIES ('enable_time_travel' = 'true')")
    put(bucket, "u1.csv", b"1,a\n2,b\n3,c\n4,d\n")
    _load(conn, "u1", f'APPEND DATA INFILE("s3://{bucket}/u1.csv") INTO TABLE u COLUMNS TERMINATED BY ","',
          s3_user)
    assert _job(conn, "u1")["State"] == "FINISHED"
    time.sleep(1.1)
    before = rows(conn, "SELECT DATE_FORMAT(NOW(), '%Y-%m-%d %H:%i:%s')")[0][0]
    time.sleep(1.1)
    put(bucket, "del.csv", b"1\n")
    _load(conn, "u2", f'DELETE DATA INFILE("s3://{bucket}/del.csv") INTO TABLE u (k)', s3_user)
    assert _job(conn, "u2")["State"] == "FINISHED"
    assert rows(conn, "SELECT k FROM u ORDER BY k") == [(2,), (3,), (4,)]
    put(bucket, "m.csv", b"2,B,0\n3,C,1\n5,e,0\n")
    _load(conn, "u3", f'MERGE DATA INFILE("s3://{bucket}/m.csv") INTO TABLE u COLUMNS TERMINATED BY "," '
                      "(k, v, del) WHERE k > 0 DELETE ON del = 1", s3_user)
    job = _job(conn, "u3")
    assert job["State"] == "FINISHED", job
    assert rows(conn, "SELECT k, v FROM u ORDER BY k") == [(2, "B"), (4, "d"), (5, "e")]
    assert rows(conn, f"SELECT k FROM u FOR TIME AS OF '{before}' ORDER BY k") == [(1,), (2,), (3,), (4,)]
    run(conn, "ADMIN COMPACT TABLE u WHERE TYPE = 'BASE'")
    assert rows(conn, f"SELECT k FROM u FOR TIME AS OF '{before}' ORDER BY k") == [(1,), (2,), (3,), (4,)]
    # Doris' rules: MERGE needs DELETE ON, DELETE ON only with MERGE, merge types only on Unique Key tables.
    _table(conn)
    with_s3 = f"WITH S3 ({keys(s3_user, 'aws')})"
    fails(conn, f'LOAD LABEL r (MERGE DATA INFILE("s3://{bucket}/m.csv") INTO TABLE u (k, v, del)) {with_s3}',
          WRONG_ARGUMENTS, "delete condition")
    fails(conn, f'LOAD LABEL r (DATA INFILE("s3://{bucket}/m.csv") INTO TABLE u (k, v, del) DELETE ON del = 1) '
                f"{with_s3}", WRONG_ARGUMENTS, "MERGE")
    fails(conn, f'LOAD LABEL r (DELETE DATA INFILE("s3://{bucket}/m.csv") INTO TABLE t) {with_s3}',
          WRONG_ARGUMENTS, "UNIQUE KEY")
