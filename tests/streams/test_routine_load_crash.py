"""Crash tests for routine load: `kill -9` of the worker, and a restart of the whole stack (Kafka
included), while a job is loading a topic a producer is still filling. Afterwards every good
record is in the table exactly once and every bad one is in `strata.dlq` exactly once."""

from __future__ import annotations

import os
import signal
import subprocess
import threading
import time
from collections.abc import Callable

import pytest

from infra.layout import Layout
from infra.supervisor import running_pid
from schemas.config import REPO_ROOT, load_settings
from tests.query.routine_load_kit import dead_letters, kafka_source, new_topic, produce, show, wait_for
from tests.query.sqlkit import connect, rows, run

pytestmark = pytest.mark.integration
RECORDS = 6000
BAD_EVERY = 500


def _values(start: int, stop: int) -> list[bytes]:
    return [b"not json %d" % i if i % BAD_EVERY == 7 else b'{"id": %d, "v": %d}' % (i, i * 2)
            for i in range(start, stop)]


def _kill_worker() -> None:
    pid = running_pid(Layout(load_settings()).pid_file("worker"))
    assert pid is not None, "the worker is not running"
    os.kill(pid, signal.SIGKILL)


def _stop_stack() -> None:
    subprocess.run([str(REPO_ROOT / "infra" / "down")], check=True, capture_output=True, timeout=120)


def _up() -> None:
    subprocess.run([str(REPO_ROOT / "infra" / "up"), "--detach"], check=True, capture_output=True, timeout=300)


def _load_through(crash: Callable[[], None], name: str, *, hold_producer: bool) -> None:
    """`hold_producer`: the producer waits while Kafka itself is down (its records must reach the
    topic exactly once for the count to be exact)."""
    db = f"rl_crash_{name}"
    conn = connect()
    run(conn, f"DROP DATABASE IF EXISTS {db} FORCE")
    run(conn, f"CREATE DATABASE {db}")
    run(conn, f"USE {db}")
    run(conn, "CREATE TABLE t (id INT, v INT) DUPLICATE KEY(id) DISTRIBUTED BY HASH(id) BUCKETS 2")
    topic = new_topic(partitions=2)
    produce(topic, _values(0, 1000))
    run(conn, f'CREATE ROUTINE LOAD j ON t PROPERTIES ("format" = "json", "max_batch_interval" = "0.2", '
              f'"max_batch_rows" = "300", "max_error_number" = "100000") {kafka_source(topic)}')

    gate = threading.Lock()

    def keep_producing() -> None:
        for start in range(1000, RECORDS, 250):
            with gate:
                produce(topic, _values(start, start + 250))
            time.sleep(0.1)

    producer = threading.Thread(target=keep_producing)
    producer.start()
    wait_for(lambda: rows(conn, "SELECT count(*) FROM t")[0][0] > 600, "the job to be loading")
    loaded_at_crash = rows(conn, "SELECT count(*) FROM t")[0][0]
    if hold_producer:
        with gate:
            crash()
            _up()
    else:
        crash()
        _up()
    producer.join(timeout=300)
    assert not producer.is_alive()
    bad = len([i for i in range(RECORDS) if i % BAD_EVERY == 7])
    conn = connect(db)
    wait_for(lambda: show(conn, "j")["Statistic"]["totalRows"] >= RECORDS, "every record to be read", timeout=180)
    assert loaded_at_crash < RECORDS - bad, "the crash came after the last batch; the test proved nothing"
    time.sleep(1)  # a duplicate batch would land now
    assert rows(conn, "SELECT count(*), count(DISTINCT id), sum(v) FROM t") == [
        (RECORDS - bad, RECORDS - bad, sum(i * 2 for i in range(RECORDS) if i % BAD_EVERY != 7))]
    job = show(conn, "j")
    assert job["State"] == "RUNNING"
    assert job["Statistic"]["loadedRows"] == RECORDS - bad and job["Statistic"]["errorRows"] == bad
    letters = dead_letters(f"{db}.j", topic, bad)
    offsets = [(h["strata.source.partition"], h["strata.source.offset"]) for _, h in letters]
    assert len(offsets) == bad and len(set(offsets)) == bad, "a bad record reached the DLQ twice or not at all"
    run(conn, f"DROP DATABASE {db} FORCE")


def test_kill_9_of_the_worker_mid_stream_loses_and_duplicates_nothing() -> None:
    _load_through(_kill_worker, "worker", hold_producer=False)


def test_a_job_survives_a_restart_of_the_whole_stack() -> None:
    _load_through(_stop_stack, "stack", hold_producer=True)


def test_a_second_task_of_the_same_job_duplicates_nothing(tmp_path) -> None:  # noqa: ANN001
    """What a rebalance or a second worker amounts to: two tasks reading the same job at once. The
    job's transactional.id fences one of them and the offset check refuses its batches."""
    from projections.replica import Replica
    from storage.tiers import LocalTiers
    from streams.routine_load_task import RoutineLoadTask

    config = load_settings()
    db = "rl_crash_twin"
    conn = connect()
    run(conn, f"DROP DATABASE IF EXISTS {db} FORCE")
    run(conn, f"CREATE DATABASE {db}")
    run(conn, f"USE {db}")
    run(conn, "CREATE TABLE t (id INT, v INT) DUPLICATE KEY(id) DISTRIBUTED BY HASH(id) BUCKETS 2")
    topic = new_topic(partitions=2)
    good = [b'{"id": %d, "v": %d}' % (i, i * 2) for i in range(RECORDS)]
    run(conn, f'CREATE ROUTINE LOAD j ON t PROPERTIES ("format" = "json", "max_batch_interval" = "0.2", '
              f'"max_batch_rows" = "300") {kafka_source(topic)}')
    replica = Replica.open(config, tmp_path / "twin", "test-routine-load-twin")
    stop = threading.Event()
    thread: threading.Thread | None = None
    try:
        key = next(k for k, job in replica.projection.routine_loads.items() if job.name == "j"
                   and replica.projection.databases[job.db_id].name == db)
        twin = RoutineLoadTask(config, replica, LocalTiers.from_config(config), key, stop)
        thread = threading.Thread(target=twin.run)
        thread.start()
        for start in range(0, RECORDS, 500):
            produce(topic, good[start:start + 500])
            time.sleep(0.05)
        wait_for(lambda: show(conn, "j")["Statistic"]["totalRows"] >= RECORDS, "every record", timeout=120)
    finally:
        stop.set()
        if thread is not None:
            thread.join(timeout=60)
        replica.close()
    time.sleep(1)
    assert rows(conn, "SELECT count(*), count(DISTINCT id), sum(v) FROM t") == [
        (RECORDS, RECORDS, sum(i * 2 for i in range(RECORDS)))]
    assert show(conn, "j")["Statistic"]["loadedRows"] == RECORDS
    run(conn, f"DROP DATABASE {db} FORCE")
