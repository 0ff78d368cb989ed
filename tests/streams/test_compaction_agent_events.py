"""The worker's compaction agent scores a tablet when an event touched it: loads into one partition
of a table get that partition's tablet compacted automatically, while a tablet no event touched since
the agent's first pass keeps its pile (nothing rescans it), until a load reaches it too."""

from __future__ import annotations

import os
import time
from collections.abc import Iterator

import pymysql
import pytest

from projections.compaction import CUMULATIVE_TRIGGER

pytestmark = pytest.mark.integration


def _stale(cur: pymysql.cursors.Cursor, db: str, table: str) -> int:
    cur.execute(f"SELECT count(*) FROM information_schema.rowsets WHERE TABLE_SCHEMA = '{db}' AND "
                f"TABLE_NAME = '{table}' AND STATE = 'stale'")
    return int(cur.fetchone()[0])


def _wait_for_compaction(cur: pymysql.cursors.Cursor, db: str, table: str, timeout_s: float = 30) -> None:
    deadline = time.monotonic() + timeout_s
    while _stale(cur, db, table) == 0:
        assert time.monotonic() < deadline, f"{table} was not compacted automatically within {timeout_s} s"
        time.sleep(0.5)


@pytest.fixture
def cur() -> Iterator[pymysql.cursors.Cursor]:
    conn = pymysql.connect(host="127.0.0.1", port=int(os.environ["STRATA_SQL_PORT"]), user="root", autocommit=True)
    cursor = conn.cursor()
    cursor.execute("CREATE DATABASE IF NOT EXISTS compaction_events")
    cursor.execute("USE compaction_events")
    yield cursor
    conn.close()


def test_loads_get_their_tablet_compacted(cur: pymysql.cursors.Cursor) -> None:
    cur.execute("DROP TABLE IF EXISTS piles FORCE")
    cur.execute("CREATE TABLE piles (k INT) DUPLICATE KEY(k) DISTRIBUTED BY HASH(k) BUCKETS 1")
    for i in range(CUMULATIVE_TRIGGER + 1):
        cur.execute(f"INSERT INTO piles VALUES ({i})")
    _wait_for_compaction(cur, "compaction_events", "piles")
    cur.execute("SELECT count(*), sum(k) FROM piles")
    n = CUMULATIVE_TRIGGER + 1
    assert cur.fetchone() == (n, n * (n - 1) // 2)


def test_enabling_auto_compaction_gets_an_old_pile_compacted(cur: pymysql.cursors.Cursor) -> None:
    cur.execute("DROP TABLE IF EXISTS held FORCE")
    cur.execute('CREATE TABLE held (k INT) DUPLICATE KEY(k) DISTRIBUTED BY HASH(k) BUCKETS 1 '
                'PROPERTIES ("disable_auto_compaction" = "true")')
    for i in range(CUMULATIVE_TRIGGER + 1):
        cur.execute(f"INSERT INTO held VALUES ({i})")
    time.sleep(3)  # a pass or more of the agent: the table is left alone
    assert _stale(cur, "compaction_events", "held") == 0
    # No load: the property change alone (an event of the table) gets its tablets scored again.
    cur.execute('ALTER TABLE held SET ("disable_auto_compaction" = "false")')
    _wait_for_compaction(cur, "compaction_events", "held")
