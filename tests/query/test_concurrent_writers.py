"""Concurrent writers without group commit (integration): single-row INSERTs from many connections
at once share the commit path — the probes of the log's end, the command producer, the sequencer's
transactions — and each must still be one commit of its own, decided once, with versions contiguous
and every row readable by the connection that wrote it as soon as its INSERT returns."""

from __future__ import annotations

import json
import threading

import pymysql

from tests.query.sqlkit import connect, rows, run, scalar
from tests.threads import in_threads

CONNECTIONS = 8
INSERTS = 6


def test_concurrent_single_row_inserts_are_one_commit_each(conn: pymysql.connections.Connection, db: str) -> None:
    run(conn, "CREATE TABLE t (k BIGINT, v BIGINT) DUPLICATE KEY(k) DISTRIBUTED BY HASH(k) BUCKETS 1 "
              "PROPERTIES ('replication_num' = '1', 'enable_time_travel' = 'true')")
    sessions = [connect(db) for _ in range(CONNECTIONS)]
    unseen: list[str] = []
    start = threading.Barrier(CONNECTIONS)

    def write(i: int) -> None:
        start.wait(30)
        for j in range(INSERTS):
            key = i * 1000 + j
            run(sessions[i], f"INSERT INTO t VALUES ({key}, {j})")
            # Read-your-writes: the row is there for the writer the moment its INSERT returns.
            if scalar(sessions[i], f"SELECT count(*) FROM t WHERE k = {key}") != 1:
                unseen.append(f"connection {i} does not see key {key}")

    failures = in_threads(CONNECTIONS, write, join_s=300)
    for session in sessions:
        session.close()
    assert failures == [] and unseen == []
    total = CONNECTIONS * INSERTS
    assert rows(conn, "SELECT count(*), count(DISTINCT k) FROM t") == [(total, total)]
    commits = [r for r in rows(conn, "SHOW TIME TRAVEL ON t") if r[6] == "load"]
    assert len(commits) == total and all(r[7] == 1 for r in commits)
    # One version per commit, contiguous from 1, in commit order.
    versions = [next(iter(json.loads(r[9]).values())) for r in sorted(commits, key=lambda r: r[4])]
    assert versions == list(range(1, total + 1))
