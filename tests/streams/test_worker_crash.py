"""Crash test: `kill -9` the worker (and with it the sequencer) in the middle of a stream of loads.

Afterwards every acknowledged statement is visible exactly once, and no statement is half-visible:
each load writes three rows of one key, so a key has 0 or 3 rows — never 1, 2 or 6.
"""

from __future__ import annotations

import os
import signal
import subprocess
import threading
import time

import pymysql
import pytest

from infra.layout import Layout
from infra.supervisor import running_pid
from schemas.config import REPO_ROOT, load_settings
from tests.query.sqlkit import label_used

pytestmark = pytest.mark.integration
LOADS = 60


def _connect() -> pymysql.connections.Connection:
    return pymysql.connect(host="127.0.0.1", port=int(os.environ["STRATA_SQL_PORT"]), user="root",
                           autocommit=True, database="crash_test")


def test_kill_9_of_the_worker_mid_load_loses_and_duplicates_nothing() -> None:
    setup = pymysql.connect(host="127.0.0.1", port=int(os.environ["STRATA_SQL_PORT"]), user="root", autocommit=True)
    with setup.cursor() as cur:
        cur.execute("CREATE DATABASE IF NOT EXISTS crash_test")
        cur.execute("DROP TABLE IF EXISTS crash_test.loads FORCE")
        cur.execute("CREATE TABLE crash_test.loads (k INT, n INT) DUPLICATE KEY(k) DISTRIBUTED BY HASH(k) BUCKETS 2")
    acknowledged: list[int] = []
    failed: list[int] = []

    def load() -> None:
        conn = _connect()
        with conn.cursor() as cur:
            for i in range(LOADS):
                try:
                    cur.execute(f"INSERT INTO loads WITH LABEL crash_{i} VALUES ({i}, 1), ({i}, 2), ({i}, 3)")
                    acknowledged.append(i)
                except pymysql.MySQLError:
                    failed.append(i)

    loader = threading.Thread(target=load)
    loader.start()
    while len(acknowledged) < 15 and loader.is_alive():
        time.sleep(0.01)
    layout = Layout(load_settings())
    pid = running_pid(layout.pid_file("worker"))
    assert pid is not None, "the worker is not running"
    os.kill(pid, signal.SIGKILL)
    killed_at = len(acknowledged)
    subprocess.run([str(REPO_ROOT / "infra" / "up"), "--detach"], check=True, capture_output=True, timeout=180)
    loader.join(timeout=300)
    assert not loader.is_alive()
    assert killed_at < LOADS, "the kill came after the last load; the test proved nothing"

    # A statement whose answer was lost may still have committed: retrying it with its label must
    # either be refused as a used label or load it now — never load it twice.
    with _connect().cursor() as cur:
        for i in failed:
            try:
                cur.execute(f"INSERT INTO loads WITH LABEL crash_{i} VALUES ({i}, 1), ({i}, 2), ({i}, 3)")
            except pymysql.MySQLError as exc:
                assert label_used(exc), exc
        cur.execute("SELECT k, count(*), sum(n) FROM loads GROUP BY k ORDER BY k")
        counts = {k: (c, s) for k, c, s in cur.fetchall()}
    assert all(counts.get(i) == (3, 6) for i in acknowledged), {i: counts.get(i) for i in acknowledged}
    assert set(counts) == set(range(LOADS))
    assert all(v == (3, 6) for v in counts.values())


def test_kill_9_of_the_worker_during_compactions_keeps_every_instant() -> None:
    """The compaction agent merges as loads arrive; killing the worker (agent and sequencer) twice
    must leave every recorded instant reading what it read when recorded."""
    from datetime import UTC, datetime

    conn = pymysql.connect(host="127.0.0.1", port=int(os.environ["STRATA_SQL_PORT"]), user="root", autocommit=True)
    cur = conn.cursor()
    cur.execute("CREATE DATABASE IF NOT EXISTS crash_test")
    cur.execute("USE crash_test")
    cur.execute("DROP TABLE IF EXISTS tt_loads FORCE")
    cur.execute('CREATE TABLE tt_loads (k INT) DUPLICATE KEY(k) DISTRIBUTED BY HASH(k) BUCKETS 1 '
                'PROPERTIES ("enable_time_travel" = "true")')
    layout = Layout(load_settings())
    instants: list[tuple[str, int]] = []
    for i in range(1, 41):
        cur.execute(f"INSERT INTO tt_loads VALUES ({i})")
        time.sleep(0.003)
        instants.append((datetime.now(tz=UTC).strftime("%Y-%m-%d %H:%M:%S.%f"), i))
        time.sleep(0.003)
        if i in (12, 27):
            time.sleep(2.5)  # let the agent start merging the pile, then kill it mid-flight
            pid = running_pid(layout.pid_file("worker"))
            assert pid is not None
            os.kill(pid, signal.SIGKILL)
            subprocess.run([str(REPO_ROOT / "infra" / "up"), "--detach"], check=True, capture_output=True,
                           timeout=180)
    cur.execute("ADMIN COMPACT TABLE tt_loads WHERE TYPE = 'BASE'")
    cur.execute("SELECT STATE, count(*) FROM information_schema.rowsets WHERE TABLE_NAME = 'tt_loads' "
                "AND TABLE_SCHEMA = 'crash_test' GROUP BY STATE")
    assert dict(cur.fetchall()).get("stale", 0) > 0, "no compaction happened; the test proved nothing"
    for moment, n in instants:
        cur.execute(f"SELECT count(*), sum(k) FROM tt_loads FOR TIME AS OF '{moment}'")
        assert cur.fetchone() == (n, n * (n + 1) // 2), moment
