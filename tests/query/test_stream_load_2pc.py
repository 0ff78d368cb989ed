"""Stream Load two-phase commit: a prepared load is invisible until committed, an abort or its
deadline drops it, each transaction finishes once (a retried commit never loads twice), and a
load prepared through a SQL server that was killed can still be committed through another."""

from __future__ import annotations

import os
import signal
import time
from pathlib import Path

import pymysql

from tests.query.sqlkit import rows, run, sorted_rows
from tests.query.stream_load_kit import curl_2pc, curl_load, free_port, start_sql_server

DUP = "DUPLICATE KEY(k) DISTRIBUTED BY HASH(k) BUCKETS 2"


def _file(tmp_path: Path, text: str) -> Path:
    path = tmp_path / "data.csv"
    path.write_text(text)
    return path


def _prepare(tmp_path: Path, db: str, text: str, **headers: str) -> dict:
    reply = curl_load(_file(tmp_path, text), db, "t", {"two_phase_commit": "true", **headers})
    assert reply["Status"] == "Success" and reply["TwoPhaseCommit"] == "true", reply
    return reply


def test_commit_makes_prepared_rows_visible_once(conn: pymysql.connections.Connection, db: str,
                                                 tmp_path: Path) -> None:
    run(conn, f"CREATE TABLE t (k INT, v INT) {DUP}")
    reply = _prepare(tmp_path, db, "1\t10\n2\t20\n", label="two_phase")
    assert rows(conn, "SELECT count(*) FROM t") == [(0,)]  # prepared: written, not visible
    again = curl_load(_file(tmp_path, "9\t9\n"), db, "t", {"label": "two_phase"})
    assert again["Status"] == "Label Already Exists" and again["ExistingJobStatus"] == "RUNNING", again
    committed = curl_2pc(db, "commit", txn_id=reply["TxnId"])
    assert committed == {"status": "Success", "msg": f"transaction [{reply['TxnId']}] commit successfully."}
    assert sorted_rows(conn, "SELECT * FROM t") == [(1, 10), (2, 20)]
    retried = curl_2pc(db, "commit", txn_id=reply["TxnId"])
    assert retried["status"] != "Success" and "already visible" in retried["msg"]
    assert curl_2pc(db, "abort", txn_id=reply["TxnId"])["status"] != "Success"
    assert rows(conn, "SELECT count(*) FROM t") == [(2,)]
    used = curl_load(_file(tmp_path, "9\t9\n"), db, "t", {"label": "two_phase"})
    assert used["Status"] == "Label Already Exists" and used["ExistingJobStatus"] == "FINISHED"


def test_abort_drops_the_rows_and_frees_the_label(conn: pymysql.connections.Connection, db: str,
                                                  tmp_path: Path) -> None:
    run(conn, f"CREATE TABLE t (k INT, v INT) {DUP}")
    reply = _prepare(tmp_path, db, "1\t10\n", label="dropped")
    aborted = curl_2pc(db, "abort", label="dropped")
    assert aborted == {"status": "Success", "msg": f"transaction [{reply['TxnId']}] abort successfully."}
    late = curl_2pc(db, "commit", txn_id=reply["TxnId"])
    assert late["status"] != "Success" and "aborted" in late["msg"]
    assert rows(conn, "SELECT count(*) FROM t") == [(0,)]
    reused = curl_load(_file(tmp_path, "3\t30\n"), db, "t", {"label": "dropped"})
    assert reused["Status"] == "Success", reused
    assert sorted_rows(conn, "SELECT * FROM t") == [(3, 30)]


def test_a_prepared_load_past_its_timeout_aborts(conn: pymysql.connections.Connection, db: str,
                                                 tmp_path: Path) -> None:
    run(conn, f"CREATE TABLE t (k INT, v INT) {DUP}")
    reply = _prepare(tmp_path, db, "1\t10\n", timeout="1")
    time.sleep(5)  # the deadline passes; every SQL server sweeps expired loads every 2 s
    late = curl_2pc(db, "commit", txn_id=reply["TxnId"])
    assert late["status"] != "Success" and "timeout" in late["msg"], late
    assert rows(conn, "SELECT count(*) FROM t") == [(0,)]


def test_commit_after_the_preparing_server_was_killed(conn: pymysql.connections.Connection, db: str,
                                                      tmp_path: Path) -> None:
    run(conn, f"CREATE TABLE t (k INT, v INT) {DUP}")
    http_port = free_port()
    proc = start_sql_server(free_port(), http_port)
    try:
        reply = curl_load(_file(tmp_path, "1\t10\n2\t20\n"), db, "t", {"two_phase_commit": "true"},
                          base=f"http://127.0.0.1:{http_port}")
        assert reply["Status"] == "Success", reply
    finally:
        os.kill(proc.pid, signal.SIGKILL)
        proc.wait(timeout=20)
    assert rows(conn, "SELECT count(*) FROM t") == [(0,)]
    assert curl_2pc(db, "commit", txn_id=reply["TxnId"])["status"] == "Success"
    assert curl_2pc(db, "commit", txn_id=reply["TxnId"])["status"] != "Success"
    assert sorted_rows(conn, "SELECT * FROM t") == [(1, 10), (2, 20)]
