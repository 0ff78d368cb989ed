"""The log is safe to replay (issue #15), on the real stack: the sequencer decides each command_id
once — a duplicated command is applied once and every proposer of it gets the one outcome — and a
stored commands position outside `strata.commands` (a forged event) stops the sequencer with a
clear error after a restart, instead of rewinding to the earliest offset and deciding every
command again.

Forging uses Strata's own client credentials (`Settings.kafka_client`): the point is the
sequencer's own defence, whatever the broker's ACLs let through."""

from __future__ import annotations

import os
import signal
import subprocess
import threading
import time
import uuid
from collections.abc import Iterator
from concurrent.futures import ThreadPoolExecutor
from pathlib import Path

import pymysql
import pytest
from confluent_kafka import Consumer, Producer, TopicPartition
from pymysql.connections import Connection as Conn

from bench.replay import events_end_offset
from infra.layout import Layout
from infra.supervisor import running_pid
from projections.replica import Replica
from schemas import commands as cmd
from schemas import events as ev
from schemas.config import REPO_ROOT, Settings
from schemas.envelope import DecodeError, EventEnvelope, decode_event, encode, new_id, wrap_command, wrap_event
from schemas.topics import COMMANDS_TOPIC, EVENTS_TOPIC
from tests.streams.workerkit import health, start_worker, until

pytestmark = pytest.mark.integration


@pytest.fixture
def conn(config: Settings) -> Iterator[Conn]:
    connection = pymysql.connect(host="127.0.0.1", port=config.sql_port, user="root", autocommit=True,
                                 read_timeout=60)
    db = f"replay_{uuid.uuid4().hex[:8]}"
    with connection.cursor() as cur:
        cur.execute(f"CREATE DATABASE {db}")
        cur.execute(f"USE {db}")
        cur.execute("CREATE TABLE t (k INT, v INT) DUPLICATE KEY(k) DISTRIBUTED BY HASH(k) BUCKETS 1")
    yield connection
    with connection.cursor() as cur:
        cur.execute(f"DROP DATABASE IF EXISTS {db} FORCE")
    connection.close()


def _rows(conn: Conn, sql: str) -> list[tuple[object, ...]]:
    with conn.cursor() as cur:
        cur.execute(sql)
        return [tuple(r) for r in cur.fetchall()]


def _events(config: Settings) -> list[EventEnvelope]:
    """Every event on strata.events now (read committed)."""
    consumer = Consumer({**config.kafka_client(), "group.id": f"test-{new_id()}", "enable.auto.commit": False,
                         "isolation.level": "read_committed"})
    try:
        partitions = sorted(consumer.list_topics(EVENTS_TOPIC, timeout=10).topics[EVENTS_TOPIC].partitions)
        ends = {p: consumer.get_watermark_offsets(TopicPartition(EVENTS_TOPIC, p), timeout=10, cached=False)[1]
                for p in partitions}
        consumer.assign([TopicPartition(EVENTS_TOPIC, p, 0) for p in partitions])
        found: list[EventEnvelope] = []
        done = {p for p, end in ends.items() if end == 0}
        deadline = time.monotonic() + 60
        while len(done) < len(partitions) and time.monotonic() < deadline:
            for message in consumer.consume(1000, timeout=0.5):
                if message.error() is not None:
                    continue
                try:
                    found.append(decode_event(message.value()))
                except DecodeError:
                    pass  # other tests put malformed records on the log (test_follower_malformed)
                if (message.offset() or 0) + 1 >= ends[message.partition() or 0]:
                    done.add(message.partition())
            for tp in consumer.position([TopicPartition(EVENTS_TOPIC, p) for p in partitions]):
                if tp.offset >= ends[tp.partition]:
                    done.add(tp.partition)  # the rest were transaction markers
        return found
    finally:
        consumer.close()


def _send(config: Settings, topic: str, key: str, value: bytes) -> None:
    producer = Producer({**config.kafka_client(), "enable.idempotence": True, "acks": "all"})
    producer.produce(topic, key=key.encode(), value=value)
    assert producer.flush(30) == 0


def test_a_duplicated_command_is_applied_once_and_both_proposers_see_one_outcome(
        config: Settings, conn: Conn, tmp_path: Path) -> None:
    _rows(conn, "INSERT INTO t VALUES (1, 1)")
    first = Replica.open(config, tmp_path / "a", "test-proposer-a")
    second = Replica.open(config, tmp_path / "b", "test-proposer-b")
    try:
        projection = first.projection
        db = projection.database_by_name(str(_rows(conn, "SELECT DATABASE()")[0][0]))
        assert db is not None
        table = projection.table_by_name(db.db_id, "t")
        assert table is not None
        table_id, partition_id = table.table_id, next(iter(table.partitions))
        truncate = cmd.CommitDelete(table_id=table_id, partition_ids=(partition_id,), predicate=None,
                                    kind="truncate", description="TRUNCATE TABLE t")
        command_id = new_id()
        answers: dict[str, EventEnvelope] = {}

        def propose(name: str, replica: Replica) -> None:
            answers[name] = replica.proposer.propose(truncate, table_id=table_id, command_id=command_id, timeout=60)

        threads = [threading.Thread(target=propose, args=(n, r)) for n, r in (("a", first), ("b", second))]
        for thread in threads:
            thread.start()
        for thread in threads:
            thread.join(90)
        assert set(answers) == {"a", "b"}, "a proposer got no answer"
        assert answers["a"].event_id == answers["b"].event_id, "the proposers saw two outcomes"
        assert isinstance(answers["a"].payload, ev.DeleteCommitted)
        assert _rows(conn, "SELECT count(*) FROM t") == [(0,)]

        # A row acknowledged after the truncate survives a late duplicate of it (a replay).
        _rows(conn, "INSERT INTO t VALUES (2, 2)")
        late = wrap_command(truncate, table_id=table_id, issued_ts_ms=int(time.time() * 1000), origin="replayer",
                            command_id=command_id)
        _send(config, COMMANDS_TOPIC, str(table_id), encode(late))
        # Same key, same partition: once this INSERT is answered, the duplicate before it was handled.
        _rows(conn, "INSERT INTO t VALUES (3, 3)")
        assert sorted(_rows(conn, "SELECT k FROM t")) == [(2,), (3,)], "the duplicated TRUNCATE ran again"
        assert sum(1 for e in _events(config) if e.command_id == command_id) == 1
        version = first.projection.tables[table_id].partitions[partition_id].version
        assert version == 4, "versions: insert 1, truncate, insert 2, insert 3 — nothing else"
    finally:
        first.close()
        second.close()


def _truncate_of_t(conn: Conn, replica: Replica) -> tuple[int, cmd.CommitDelete]:
    """`t`'s table id and a TRUNCATE of it as a command, from what `replica` knows."""
    db = replica.projection.database_by_name(str(_rows(conn, "SELECT DATABASE()")[0][0]))
    assert db is not None
    table = replica.projection.table_by_name(db.db_id, "t")
    assert table is not None
    return table.table_id, cmd.CommitDelete(table_id=table.table_id, partition_ids=(next(iter(table.partitions)),),
                                            predicate=None, kind="truncate", description="TRUNCATE TABLE t")


def test_a_proposal_of_a_command_already_answered_gets_that_answer(
        config: Settings, conn: Conn, tmp_path: Path) -> None:
    """The race the test above can lose: the second proposer starts only after its replica has
    applied the first answer. The sequencer skips the duplicate, so no new answer comes; the
    proposer must answer from what its replica already saw, at once, and send nothing."""
    _rows(conn, "INSERT INTO t VALUES (1, 1)")
    first = Replica.open(config, tmp_path / "a", "test-proposer-a")
    second = Replica.open(config, tmp_path / "b", "test-proposer-b")
    try:
        table_id, truncate = _truncate_of_t(conn, first)
        command_id = new_id()
        answer = first.proposer.propose(truncate, table_id=table_id, command_id=command_id, timeout=60)
        assert until(lambda: second.projection.command_outcome(command_id) is not None, 30), "b never applied it"
        started = time.monotonic()
        again = second.proposer.propose(truncate, table_id=table_id, command_id=command_id, timeout=20)
        assert time.monotonic() - started < 1.0, "the proposer waited for an answer that never comes"
        assert again.event_id == answer.event_id and isinstance(again.payload, ev.DeleteCommitted)
        _rows(conn, "INSERT INTO t VALUES (2, 2)")
        assert _rows(conn, "SELECT k FROM t") == [(2,)]
        assert sum(1 for e in _events(config) if e.command_id == command_id) == 1
    finally:
        first.close()
        second.close()


def test_concurrent_proposals_share_one_delivery_thread_that_ends_when_idle(
        config: Settings, conn: Conn, tmp_path: Path) -> None:
    """Writers on many threads share one proposer: each gets its own answer, one thread serves the
    producer's delivery reports while any send is in flight, and it ends once none has been for a
    while (an idle proposer holds no thread)."""
    _rows(conn, "INSERT INTO t VALUES (1, 1)")
    replica = Replica.open(config, tmp_path / "c", "test-proposer-c")
    try:
        table_id, truncate = _truncate_of_t(conn, replica)
        with ThreadPoolExecutor(16) as pool:
            answers = list(pool.map(lambda _: replica.proposer.propose(truncate, table_id=table_id, timeout=60),
                                    range(48)))
        assert len({a.event_id for a in answers}) == 48
        assert all(isinstance(a.payload, ev.DeleteCommitted) for a in answers)
        servers = [t for t in threading.enumerate() if t.name == "deliveries-test-proposer-c"]
        assert len(servers) <= 1
        assert until(lambda: not any(t.is_alive() for t in servers), 10), "the delivery thread outlived its sends"
        assert not any(t.name == "deliveries-test-proposer-c" for t in threading.enumerate())
        again = replica.proposer.propose(truncate, table_id=table_id, timeout=60)  # a new thread serves it
        assert isinstance(again.payload, ev.DeleteCommitted)
    finally:
        replica.close()


def test_a_forged_out_of_range_position_stops_the_sequencer_after_a_restart(config: Settings, conn: Conn) -> None:
    _rows(conn, "INSERT INTO t VALUES (1, 1)")
    layout = Layout(config)
    probe = Consumer({**config.kafka_client(), "group.id": f"test-{new_id()}"})
    try:
        partitions = sorted(probe.list_topics(COMMANDS_TOPIC, timeout=10).topics[COMMANDS_TOPIC].partitions)
        truth = {p: probe.get_watermark_offsets(TopicPartition(COMMANDS_TOPIC, p), timeout=10, cached=False)[1]
                 for p in partitions}
    finally:
        probe.close()

    def position_event(position: dict[int, int], reason: str) -> bytes:
        event = wrap_event(ev.CommandRejected(command_type="Forged", code=1105, reason=reason), table_id=None,
                           commit_ts_ms=int(time.time() * 1000), command_id=None)
        return encode(event.model_copy(update={"commands_position": position}))

    _send(config, EVENTS_TOPIC, "catalog", position_event({p: o + 1_000_000 for p, o in truth.items()}, "forged"))
    pid = running_pid(layout.pid_file("worker"))
    assert pid is not None, "the stack's worker is not running"
    os.kill(pid, signal.SIGKILL)
    # The same worker restarted (its instance name and port), watched by the test: `infra/up` would
    # wait for a health that, rightly, never comes.
    worker, out = start_worker(config.worker_instance or "local", config.worker_port,
                               layout.run_dir / "worker-forged.log")
    try:
        before = events_end_offset(config)
        assert until(lambda: (health(config.worker_port) or {}).get("status") == "degraded", 120), \
            health(config.worker_port)
        answer = health(config.worker_port) or {}
        assert answer["sequencer"] is False
        assert "outside the partition's offsets" in answer["sequencer_error"], answer
        assert "sequencer stops rather than decide commands again" in answer["sequencer_error"]
        time.sleep(3)
        assert events_end_offset(config) == before, "the sequencer decided commands again"
        log = (layout.run_dir / "worker-forged.log").read_text()
        assert "sequencer: STOPPED" in log and "outside the partition's offsets" in log
    finally:
        worker.send_signal(signal.SIGKILL)
        worker.wait(30)
        out.close()
        # Repair the position (what an operator would do), then bring the stack's worker back.
        _send(config, EVENTS_TOPIC, "catalog", position_event(truth, "repair"))
        subprocess.run([str(REPO_ROOT / "infra" / "up"), "--detach"], check=True, capture_output=True, timeout=300)
    _rows(conn, "INSERT INTO t VALUES (2, 2)")
    assert sorted(_rows(conn, "SELECT k FROM t")) == [(1,), (2,)], "the repaired sequencer decided commands again"
