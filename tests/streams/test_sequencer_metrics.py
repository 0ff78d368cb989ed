"""The sequencer's batching metrics on the real stack: concurrent INSERTs are decided into Kafka
transactions, and /metrics counts the transactions, the commands in them and the time they took
(what bench.concurrent_writers reports per level)."""

from __future__ import annotations

import uuid
from concurrent.futures import ThreadPoolExecutor

import pytest

from bench.stack import sequencer_gauges
from schemas.config import Settings
from tests.query.sqlkit import connect

pytestmark = pytest.mark.integration

WRITERS = 8
INSERTS_EACH = 4


def test_concurrent_inserts_are_counted_in_the_transactions_that_decided_them(config: Settings) -> None:
    db = f"seqmetrics_{uuid.uuid4().hex[:8]}"
    admin = connect()
    with admin.cursor() as cur:
        cur.execute(f"CREATE DATABASE {db}")
        cur.execute(f"CREATE TABLE {db}.t (k INT, v INT) DUPLICATE KEY(k) DISTRIBUTED BY HASH(k) BUCKETS 1")
    try:
        before = sequencer_gauges(config)

        def write(writer: int) -> None:
            conn = connect(db)
            try:
                with conn.cursor() as cur:
                    for i in range(INSERTS_EACH):
                        cur.execute(f"INSERT INTO t VALUES ({writer * 100 + i}, {i})")
            finally:
                conn.close()

        with ThreadPoolExecutor(WRITERS) as pool:
            list(pool.map(write, range(WRITERS)))
        after = sequencer_gauges(config)
    finally:
        with admin.cursor() as cur:
            cur.execute(f"DROP DATABASE IF EXISTS {db} FORCE")
        admin.close()

    moved = {name: after[name] - before[name] for name in
             ("transactions", "transaction_commands", "transaction_seconds", "busy_seconds", "commands_applied")}
    inserts = WRITERS * INSERTS_EACH
    # Each INSERT was answered, so each was decided in a committed transaction (agents may add commands).
    assert moved["commands_applied"] >= inserts, moved
    assert moved["transaction_commands"] >= inserts, moved
    assert 1 <= moved["transactions"] <= moved["transaction_commands"], moved
    assert moved["transaction_seconds"] > 0, moved
    # A batch's time runs from its first decision to its flush, around its transaction.
    assert moved["busy_seconds"] >= moved["transaction_seconds"], moved
