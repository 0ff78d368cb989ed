"""Two worker processes on one stack: they split the slots of `strata.workers`, the leader runs the
sequencer, and when the leader is `kill -9`ed the standby takes every slot and the sequencer over —
writes go on, nothing acknowledged is lost or applied twice, history reads the same.

The second worker ("b") is started by the test on a port of its own and stopped cleanly at the
end, so the stack's worker holds every slot again for the tests after this one."""

from __future__ import annotations

import os
import signal
import subprocess
import time
from datetime import UTC, datetime
from typing import Any

import pymysql
import pytest

from infra.layout import Layout
from infra.supervisor import running_pid
from schemas.config import REPO_ROOT, load_settings
from schemas.topics import WORKER_SLOTS
from tests.query.sqlkit import label_used
from tests.streams.workerkit import free_port, health, slots, start_worker, until

pytestmark = pytest.mark.integration


def _insert(cur: Any, label: str, k: int, timeout: float = 120.0) -> float:
    """A labelled INSERT retried until it answers OK (or says its label was used: it had landed)."""
    t0 = time.monotonic()
    attempt = 0
    while True:
        try:
            cur.execute(f"INSERT INTO ha WITH LABEL {label} VALUES ({k}, {k * 10})")
            return time.monotonic() - t0
        except pymysql.MySQLError as exc:
            if attempt and label_used(exc):
                return time.monotonic() - t0
            if time.monotonic() - t0 > timeout:
                raise
            attempt += 1
            time.sleep(0.5)


def test_the_standby_worker_takes_over_when_the_leader_is_killed() -> None:
    s = load_settings()
    layout = Layout(s)
    port_b = free_port()
    worker_b, log_b = start_worker("b", port_b, s.run_dir / "worker-b-failover.log")
    conn = pymysql.connect(host="127.0.0.1", port=s.sql_port, user="root", autocommit=True)
    cur = conn.cursor()
    try:
        # Both up: the slots split in halves; the lease stays where it was.
        assert until(lambda: len(slots(port_b)) == WORKER_SLOTS // 2 == len(slots(s.worker_port)), 90), \
            (health(s.worker_port), health(port_b))
        assert slots(s.worker_port) | slots(port_b) == set(range(WORKER_SLOTS))
        leaders = [port for port in (s.worker_port, port_b) if (health(port) or {}).get("leader")]
        assert leaders == [s.worker_port], (health(s.worker_port), health(port_b))

        cur.execute("CREATE DATABASE IF NOT EXISTS failover_test")
        cur.execute("USE failover_test")
        cur.execute("DROP TABLE IF EXISTS ha FORCE")
        cur.execute('CREATE TABLE ha (k INT, v INT) UNIQUE KEY(k) DISTRIBUTED BY HASH(k) BUCKETS 1 '
                    'PROPERTIES ("enable_time_travel" = "true")')
        run = int(time.time())
        for k in range(10):
            _insert(cur, f"ha_{run}_{k}", k)
        before = datetime.now(tz=UTC).strftime("%Y-%m-%d %H:%M:%S.%f")
        time.sleep(0.01)

        # kill -9 of the leader: the standby holds everything once the leader's session expires,
        # and the write that waits for it lands.
        pid = running_pid(layout.pid_file("worker"))
        assert pid is not None, "the stack's worker is not running"
        os.kill(pid, signal.SIGKILL)
        failover_s = _insert(cur, f"ha_{run}_10", 10)
        assert until(lambda: slots(port_b) == set(range(WORKER_SLOTS)), 30), health(port_b)
        assert (health(port_b) or {}).get("leader")
        print(f"failover: first write after the kill answered in {failover_s:.1f} s")
        for k in range(11, 20):
            _insert(cur, f"ha_{run}_{k}", k)

        # The stack's worker comes back (as a standby: b keeps the lease), then b leaves cleanly.
        subprocess.run([str(REPO_ROOT / "infra" / "up"), "--detach"], check=True, capture_output=True, timeout=180)
        assert until(lambda: len(slots(s.worker_port)) == WORKER_SLOTS // 2, 60), health(s.worker_port)
        assert (health(port_b) or {}).get("leader") and not (health(s.worker_port) or {}).get("leader")
        worker_b.send_signal(signal.SIGTERM)
        worker_b.wait(60)
        assert until(lambda: slots(s.worker_port) == set(range(WORKER_SLOTS))
                      and bool((health(s.worker_port) or {}).get("leader")), 60), health(s.worker_port)
        for k in range(20, 25):
            _insert(cur, f"ha_{run}_{k}", k)

        # Every label applied once, every row there, the past unchanged.
        cur.execute("SELECT k, v FROM ha ORDER BY k")
        assert cur.fetchall() == tuple((k, k * 10) for k in range(25))
        cur.execute("SHOW TIME TRAVEL ON ha")
        assert sum(1 for row in cur.fetchall() if row[6] == "load") == 25
        cur.execute(f"SELECT count(*) FROM ha FOR TIME AS OF '{before}'")
        assert cur.fetchone() == (10,)
    finally:
        if worker_b.poll() is None:
            worker_b.kill()
            worker_b.wait(30)
        log_b.close()
        conn.close()
        subprocess.run([str(REPO_ROOT / "infra" / "up"), "--detach"], capture_output=True, timeout=180)
        until(lambda: slots(s.worker_port) == set(range(WORKER_SLOTS)), 60)
