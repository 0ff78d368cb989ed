"""The dynamic partition scheduler after a crash and beside a second scheduler: `kill -9` of the
worker in the middle of a pass creating ten months of history, then the restarted worker and a
scheduler run from this process at the same time — the table ends with exactly the planned
partitions, each once."""

from __future__ import annotations

import os
import signal
import subprocess
import threading
import time
from datetime import UTC, datetime
from pathlib import Path

import pytest

from infra.layout import Layout
from infra.supervisor import running_pid
from projections.dynamic_partitions import parse_spec, plan
from projections.policy_clock import policy_clock
from projections.replica import Replica
from schemas.config import REPO_ROOT, load_settings
from streams.dynamic_partition_scheduler import DynamicPartitionScheduler
from tests.query.routine_load_kit import wait_for
from tests.query.sqlkit import connect, rows, run

pytestmark = pytest.mark.integration
PROPS = {"dynamic_partition.enable": "true", "dynamic_partition.time_unit": "DAY", "dynamic_partition.start": "-300",
         "dynamic_partition.end": "3", "dynamic_partition.create_history_partition": "true"}


def _names(conn) -> list[str]:  # noqa: ANN001
    return [r[1] for r in rows(conn, "SHOW PARTITIONS FROM t")]


def test_a_crash_mid_pass_and_a_second_scheduler_converge_on_the_plan(tmp_path: Path) -> None:
    config = load_settings()
    conn = connect()
    run(conn, "DROP DATABASE IF EXISTS dyn_crash FORCE")
    run(conn, "CREATE DATABASE dyn_crash")
    run(conn, "USE dyn_crash")
    props = ", ".join(f'"{k}" = "{v}"' for k, v in PROPS.items())
    run(conn, f"CREATE TABLE t (dt DATE, k INT) DUPLICATE KEY(dt) PARTITION BY RANGE(dt) () "
              f"DISTRIBUTED BY HASH(k) BUCKETS 1 PROPERTIES ({props})")
    wait_for(lambda: len(_names(conn)) >= 5, "the scheduler to start creating partitions", timeout=60)
    pid = running_pid(Layout(config).pid_file("worker"))
    assert pid is not None
    os.kill(pid, signal.SIGKILL)
    at_kill = len(_names(conn))
    expected = [p.name for p in plan(parse_spec(PROPS), datetime.fromtimestamp(policy_clock(config)(), UTC),  # type: ignore[arg-type]
                                     "DATE").create]
    assert at_kill < len(expected), "the pass had finished before the kill; the test proved nothing"

    # This process's scheduler runs while the worker restarts and runs its own.
    replica = Replica.open(config, tmp_path / "replica", "test-dynamic-scheduler")
    try:
        ours = DynamicPartitionScheduler(replica.projection, replica.proposer, clock=policy_clock(config),
                                         interval_s=3600)
        restart = threading.Thread(target=lambda: subprocess.run([str(REPO_ROOT / "infra" / "up"), "--detach"],
                                                                 check=True, capture_output=True, timeout=300))
        restart.start()
        ours.sweep()
        restart.join()
        wait_for(lambda: len(_names(connect("dyn_crash"))) >= len(expected), "every planned partition", timeout=120)
        time.sleep(2)  # a duplicate add would land now
        ours.sweep()
        assert ours.failures == 0
    finally:
        replica.close()
    got = _names(connect("dyn_crash"))
    assert sorted(got) == sorted(expected) and len(got) == len(set(got))
    run(connect(), "DROP DATABASE dyn_crash FORCE")
