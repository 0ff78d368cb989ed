"""The example outside consumer follows a table's commits on the real log."""

from __future__ import annotations

import json
import os
import subprocess
import sys
import uuid

import pytest

from schemas.config import REPO_ROOT, load_settings
from tests.query.sqlkit import connect, run

pytestmark = pytest.mark.integration


def test_example_consumer_prints_each_commit_of_the_table() -> None:
    if "STRATA_SQL_PORT" not in os.environ:
        pytest.fail("STRATA_SQL_PORT is not set; run the tests through infra/test")
    db = f"ec_{uuid.uuid4().hex[:8]}"
    conn = connect()
    try:
        run(conn, f"CREATE DATABASE {db}")
        run(conn, f"USE {db}")
        run(conn, "CREATE TABLE t (k INT, v INT) UNIQUE KEY(k) DISTRIBUTED BY HASH(k) BUCKETS 1")
        run(conn, "CREATE TABLE other (k INT) DUPLICATE KEY(k) DISTRIBUTED BY HASH(k) BUCKETS 1")
        run(conn, "INSERT INTO t VALUES (1, 1), (2, 2)")
        run(conn, "INSERT INTO other VALUES (9)")
        run(conn, "UPDATE t SET v = 5 WHERE k = 1")
        run(conn, "TRUNCATE TABLE t")
    finally:
        conn.close()
    s = load_settings()
    command = [sys.executable, "-m", "schemas.example_consumer", "--db", db, "--table", "t", "--idle-timeout", "3"]
    # Without credentials the broker does not let it read the log, and it says so.
    refused = subprocess.run([*command, "--bootstrap", s.kafka_bootstrap], cwd=REPO_ROOT, capture_output=True,
                             text=True, timeout=120)
    assert refused.returncode == 1 and "authorization failed" in refused.stderr.lower(), refused.stderr
    assert refused.stdout == ""
    # With the Strata principal's (what an integration's own principal would be allowed) it does.
    proc = subprocess.run([*command, "--bootstrap", f"{s.kafka_host}:{s.kafka_sasl_listener_port}",
                           "--property", "security.protocol=SASL_PLAINTEXT",
                           "--property", "sasl.mechanism=SCRAM-SHA-512",
                           "--property", f"sasl.username={s.kafka_sasl_listener_user}",
                           "--password-file", str(s.kafka_password_file)],
                          cwd=REPO_ROOT, capture_output=True, text=True, timeout=120)
    assert proc.returncode == 0, proc.stderr
    commits = [json.loads(line) for line in proc.stdout.splitlines()]
    assert [(c["commit_number"], c["kind"], c["rows"]) for c in commits] == [
        (1, "insert", 2), (2, "update", 1), (3, "truncate", 0)]
    assert all(c["at"].endswith("+00:00") for c in commits)


def test_follower_follows_the_name_across_replace_and_overwrite() -> None:
    """The name moves to the other table id at ALTER TABLE … REPLACE WITH TABLE; INSERT OVERWRITE is a
    commit of the table it names (no stack: envelopes as the log holds them)."""
    from schemas.example_consumer import TableFollower

    follower = TableFollower("d", "a")

    def commit(kind: str, payload: dict[str, object]) -> dict[str, object] | None:
        return follower.commit({"type": kind, "payload": payload, "commit_ts_ms": 0})

    commit("DatabaseCreated", {"db_id": 1, "name": "d"})
    commit("TableCreated", {"db_id": 1, "table_id": 10, "name": "a"})
    commit("TableCreated", {"db_id": 1, "table_id": 11, "name": "b"})
    overwrite = {"commit_number": 1, "num_rows": 2, "partition_versions": {"1": 3}}
    assert commit("TableOverwritten", {"table_id": 10, **overwrite})["kind"] == "overwrite"  # type: ignore[index]
    commit("TableReplaced", {"table_id": 10, "with_table_id": 11, "swap": True})
    assert commit("TableOverwritten", {"table_id": 10, **overwrite}) is None  # 10 is b now
    assert commit("TableOverwritten", {"table_id": 11, **overwrite}) is not None
    commit("TableReplaced", {"table_id": 11, "with_table_id": 10, "swap": False})  # a REPLACE WITH b: a is 10 again
    assert follower.table_id == 10
    commit("TableCreated", {"db_id": 1, "table_id": 12, "name": "c"})
    commit("TableReplaced", {"table_id": 12, "with_table_id": 10, "swap": False})  # c REPLACE WITH a: no a left
    assert follower.table_id is None
