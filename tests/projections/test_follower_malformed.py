"""Malformed records written straight onto `strata.events` (integration, the real stack): garbage
bytes, a tombstone, JSON nested past the parser's recursion limit, an envelope of an unknown type,
one of a newer schema version, one whose payload is invalid, and a well-formed event naming a table
that never existed. Every replica — the SQL server's, the worker's, a fresh replay — skips them,
counts them and stays consistent: tables created before and after work, nothing else changes.

The sequencer writes `strata.events` in transactions and readers use read_committed; a plain,
non-transactional producer's records are visible to them too, which is what a stray client (or a
bug) would do."""

from __future__ import annotations

import json
import os
import re
import time
import urllib.request
import uuid
from pathlib import Path

import pymysql
from confluent_kafka import Producer

from projections.follower import EventFollower
from projections.projection import Projection
from schemas import events as ev
from schemas.config import settings
from schemas.envelope import encode, wrap_event
from schemas.topics import COMMANDS_TOPIC, EVENTS_TOPIC
from tests.query.sqlkit import rows, run, sorted_rows


def _envelope(type_name: str, schema_version: int, payload: object) -> bytes:
    return json.dumps({"event_id": uuid.uuid4().hex, "type": type_name, "schema_version": schema_version,
                       "table_id": None, "commit_ts_ms": int(time.time() * 1000), "command_id": None,
                       "payload": payload}).encode()


# Records no replica can decode: each must raise the follower's decode_errors by one.
UNDECODABLE: list[bytes | None] = [
    b"\x00\xffnot json at all",
    b"",
    None,  # a tombstone
    b"[" * 100_000,  # past json's recursion limit (was an uncaught RecursionError)
    b'{"type": "TableDropped", "schema_version": ' + b"9" * 5000 + b"}",  # past the int digit limit
    _envelope("FuzzNoSuchEventType", 1, {"x": 1}),
    _envelope("TableDropped", 99, {"table_id": 1}),
    _envelope("TableDropped", 1, {"table_id": "not a number", "unexpected": True}),
]


def _metric(port_env: str, name: str) -> float | None:
    with urllib.request.urlopen(f"http://127.0.0.1:{os.environ[port_env]}/metrics", timeout=10) as response:
        text = response.read().decode()
    found = re.search(rf"^{re.escape(name)} ([0-9.e+]+)$", text, re.M)
    return float(found.group(1)) if found else None


def _healthy(port_env: str) -> bool:
    try:
        with urllib.request.urlopen(f"http://127.0.0.1:{os.environ[port_env]}/health", timeout=10) as response:
            return response.status == 200
    except OSError:
        return False


def _produce(records: list[bytes | None], topic: str = EVENTS_TOPIC) -> None:
    # As Strata's principal: only it may write the log (an outsider is refused, tests/infra/test_kafka_acl.py).
    producer = Producer(settings().kafka_client(acks="all"))
    for value in records:
        producer.produce(topic, key=b"fuzz", value=value)
    assert producer.flush(30) == 0, "records still unsent"


def _wait(check, timeout: float = 30.0) -> bool:  # noqa: ANN001
    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline:
        if check():
            return True
        time.sleep(0.2)
    return bool(check())


def test_malformed_events_are_skipped_counted_and_leave_every_replica_consistent(
        conn: pymysql.connections.Connection, db: str, tmp_path: Path) -> None:
    run(conn, "CREATE TABLE before_t (k INT, v VARCHAR(10)) DUPLICATE KEY(k) DISTRIBUTED BY HASH(k) BUCKETS 2")
    run(conn, "INSERT INTO before_t VALUES (1, 'a'), (2, 'b')")
    sql_before = _metric("STRATA_HTTP_PORT", "strata_sql_projection_decode_errors")
    worker_decode = _metric("STRATA_WORKER_PORT", "strata_worker_projection_decode_errors")
    worker_apply = _metric("STRATA_WORKER_PORT", "strata_worker_projection_apply_errors")
    assert sql_before is not None and worker_decode is not None and worker_apply is not None

    # Decodes, but names a table no replica has: the fold raises on it (once a poison pill that
    # ended the follower thread, and every later start of it).
    dangling = encode(wrap_event(ev.TableDropped(table_id=900_000_000 + int(time.time()) % 1000),
                                 table_id=None, commit_ts_ms=int(time.time() * 1000), command_id=None))
    _produce([*UNDECODABLE, dangling])

    # The SQL server still answers, and its replica is past the garbage (read-your-writes: this
    # CREATE's event is after it on the log).
    run(conn, "CREATE TABLE after_t (k INT, v VARCHAR(10)) DUPLICATE KEY(k) DISTRIBUTED BY HASH(k) BUCKETS 1")
    run(conn, "INSERT INTO after_t VALUES (3, 'c')")
    run(conn, "INSERT INTO before_t VALUES (4, 'd')")
    assert sorted_rows(conn, "SELECT k, v FROM before_t") == [(1, "a"), (2, "b"), (4, "d")]
    assert rows(conn, "SELECT k, v FROM after_t") == [(3, "c")]
    assert sorted(r[0] for r in rows(conn, "SHOW TABLES")) == ["after_t", "before_t"]
    assert _healthy("STRATA_HTTP_PORT"), "the SQL server's follower thread died"

    # Skipped and counted by the SQL server's replica…
    sql_after = _metric("STRATA_HTTP_PORT", "strata_sql_projection_decode_errors")
    assert sql_after == sql_before + len(UNDECODABLE)
    # …and by the worker's (it follows on its own thread: wait for it).
    assert _wait(lambda: _metric("STRATA_WORKER_PORT", "strata_worker_projection_decode_errors")
                 == worker_decode + len(UNDECODABLE)), "the worker's replica did not count the bad records"
    assert _wait(lambda: _metric("STRATA_WORKER_PORT", "strata_worker_projection_apply_errors") == worker_apply + 1)
    assert _healthy("STRATA_WORKER_PORT"), "the worker's agents stopped"

    # A replica rebuilt from offset 0 skips them the same way and holds both tables.
    projection = Projection(tmp_path / "replayed")
    follower = EventFollower(projection, settings(), name=f"fuzz-replay-{uuid.uuid4().hex[:8]}")
    try:
        follower.catch_up(timeout=120)
        assert follower.decode_errors >= len(UNDECODABLE)
        assert follower.apply_errors >= 1
        database = projection.database_by_name(db)
        assert database is not None
        assert sorted(t.name for t in projection.tables_of(database.db_id)) == ["after_t", "before_t"]
        assert projection.table_by_name(database.db_id, "before_t").commit_number == 2  # type: ignore[union-attr]
    finally:
        follower.stop()
        projection.close()


def test_malformed_commands_are_skipped_and_counted_by_the_sequencer(conn: pymysql.connections.Connection,
                                                                    db: str) -> None:
    """The same records on `strata.commands`: the sequencer counts them and goes on deciding."""
    before = _metric("STRATA_WORKER_PORT", "strata_sequencer_bad_commands")
    assert before is not None
    _produce(UNDECODABLE, COMMANDS_TOPIC)
    run(conn, "CREATE TABLE after_bad_commands (k INT) DUPLICATE KEY(k) DISTRIBUTED BY HASH(k) BUCKETS 1")
    run(conn, "INSERT INTO after_bad_commands VALUES (7)")
    assert rows(conn, "SELECT k FROM after_bad_commands") == [(7,)]
    # The commands topic may have several partitions: the CREATE need not come after every bad record.
    assert _wait(lambda: _metric("STRATA_WORKER_PORT", "strata_sequencer_bad_commands")
                 == before + len(UNDECODABLE))
    assert _healthy("STRATA_WORKER_PORT")
