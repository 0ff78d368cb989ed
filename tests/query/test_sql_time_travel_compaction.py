"""Compaction designed for time travel, through the SQL port: a time-travel table's compaction keeps every
row's version (projections.compaction), so a read at any instant — aligned with a commit or not — after
ADMIN COMPACT reads as many rowsets as the latest state and returns what it returned before, on all three
keys models, with deletes, updates and a TRUNCATE inside the compacted range; the inputs are then needed by
no read and the recycler removes them after its grace alone. A base compaction merges only what lies at or
below the retention horizon; reads at instants from the horizon on are unchanged."""

from __future__ import annotations

import re
import time
from pathlib import Path

import duckdb
import pymysql
import pytest

from projections.compaction import Compactor
from projections.remote import RemoteStores, open_locator
from projections.replica import Replica
from schemas.config import load_settings
from schemas.model import Rowset
from storage.tiers import LocalTiers
from streams.recycler import Recycler
from tests.query.sqlkit import rows, run, sorted_rows
from tests.query.test_sql_time_travel import instant, states

# Time travel on; compaction only by ADMIN COMPACT, so what each one merges is known.
TT = 'PROPERTIES ("enable_time_travel" = "true", "disable_auto_compaction" = "true")'


def cover_size(conn: pymysql.connections.Connection, sql: str) -> int:
    """How many rowsets the snapshot of the statement's table reads (EXPLAIN's `rowsets: N`)."""
    plan = "\n".join(str(r[0]) for r in rows(conn, f"EXPLAIN {sql}"))
    found = re.search(r"^\s*rowsets: (\d+),", plan, re.MULTILINE)
    assert found is not None, plan
    return int(found.group(1))


def _history(conn: pymysql.connections.Connection, table: str, writes: list[str]) -> dict[str, list[tuple]]:
    """Runs `writes`, one commit each; the rows held at an instant after each (never on a commit)."""
    seen = {}
    for write in writes:
        run(conn, write)
        t = instant()
        seen[t] = sorted_rows(conn, f"SELECT * FROM {table} FOR TIME AS OF '{t}'")
    return seen


@pytest.mark.parametrize("model, columns, writes", [
    ("DUPLICATE", "(k INT, v INT)", [
        "INSERT INTO t VALUES (1, 10), (2, 20)", "INSERT INTO t VALUES (3, 30)", "DELETE FROM t WHERE k = 2",
        "INSERT INTO t VALUES (2, 21), (4, 40)", "INSERT INTO t VALUES (5, 50)", "TRUNCATE TABLE t",
        "INSERT INTO t VALUES (6, 60)", "INSERT INTO t VALUES (7, 70)"]),
    ("UNIQUE", "(k INT, v INT)", [
        "INSERT INTO t VALUES (1, 10), (2, 20)", "INSERT INTO t VALUES (2, 21), (3, 30)", "DELETE FROM t WHERE k = 1",
        "UPDATE t SET v = v + 1 WHERE k = 3", "INSERT INTO t VALUES (1, 11)", "INSERT INTO t VALUES (4, 40)",
        "DELETE FROM t WHERE v > 30", "INSERT INTO t VALUES (5, 50)"]),
    ("AGGREGATE", "(k INT, v BIGINT SUM)", [
        "INSERT INTO t VALUES (1, 10), (2, 20)", "INSERT INTO t VALUES (1, 1)", "INSERT INTO t VALUES (2, 2), (3, 3)",
        "DELETE FROM t WHERE k = 3", "INSERT INTO t VALUES (3, 30)", "INSERT INTO t VALUES (1, 100)"]),
])
def test_every_instant_reads_one_rowset_per_tablet_after_compaction(conn: pymysql.connections.Connection, db: str,
                                                                    model: str, columns: str,
                                                                    writes: list[str]) -> None:
    # Unique Key merged on read: a merge-on-write table's compaction merges (its bitmaps name merged rows).
    properties = TT[:-1] + ', "enable_unique_key_merge_on_write" = "false")' if model == "UNIQUE" else TT
    run(conn, f"CREATE TABLE t {columns} {model} KEY(k) DISTRIBUTED BY HASH(k) BUCKETS 1 {properties}")
    seen = _history(conn, "t", writes)
    latest = sorted_rows(conn, "SELECT * FROM t")
    assert run(conn, "ADMIN COMPACT TABLE t WHERE TYPE = 'BASE'") == 1
    assert cover_size(conn, "SELECT * FROM t") == 1
    for t, expected in seen.items():
        query = f"SELECT * FROM t FOR TIME AS OF '{t}'"
        assert sorted_rows(conn, query) == expected, t
        assert cover_size(conn, query) == 1, t  # the compacted rowset, read through the instant's version
    assert sorted_rows(conn, "SELECT * FROM t") == latest
    # A commit on top: instants inside the compacted range still read it alone.
    run(conn, "INSERT INTO t VALUES (9, 90)")
    first = next(iter(seen))
    assert cover_size(conn, f"SELECT * FROM t FOR TIME AS OF '{first}'") == 1
    assert sorted_rows(conn, f"SELECT * FROM t FOR TIME AS OF '{first}'") == seen[first]


def test_the_inputs_are_recycled_after_the_grace_and_every_instant_still_reads(
        conn: pymysql.connections.Connection, db: str, tmp_path: Path) -> None:
    run(conn, f"CREATE TABLE h (k INT, v INT) DUPLICATE KEY(k) DISTRIBUTED BY HASH(k) BUCKETS 2 {TT}")
    seen = _history(conn, "h", [f"INSERT INTO h VALUES ({i}, {i * 10}), ({i + 100}, {i})" for i in range(6)])
    compacted = run(conn, "ADMIN COMPACT TABLE h WHERE TYPE = 'BASE'")
    stale = states(conn, db, "h").get("stale", 0)
    assert compacted >= 1 and stale >= 2
    config = load_settings()
    replica = Replica.open(config, tmp_path / "recycler", "tt-compaction-recycler")
    try:
        # A week of retention, a short grace: only the inputs of the version-keeping compactions are due.
        recycler = Recycler(replica.projection, replica.proposer, LocalTiers.from_config(config),
                            RemoteStores(replica.projection, config), grace_s=0.5, day_s=86400.0)
        time.sleep(0.6)
        assert recycler.recycle_table(replica.projection.tables[_table_id(replica, db, "h")]) == stale
    finally:
        replica.close()
    deadline = time.monotonic() + 10
    while "stale" in states(conn, db, "h") and time.monotonic() < deadline:
        time.sleep(0.1)
    assert "stale" not in states(conn, db, "h")
    for t, expected in seen.items():
        assert sorted_rows(conn, f"SELECT * FROM h FOR TIME AS OF '{t}'") == expected, t
    # The history is still whole: the earliest instant did not move past the first commit.
    assert all(r[11] == 1 for r in rows(conn, "SHOW TIME TRAVEL ON h"))


def _table_id(replica: Replica, db: str, name: str) -> int:
    return next(t.table_id for t in replica.projection.tables.values()
                if t.name == name and t.dropped_ts_ms is None
                and replica.projection.databases[t.db_id].name == db)


def test_base_compaction_merges_up_to_the_horizon_and_keeps_versions_above(
        conn: pymysql.connections.Connection, db: str, tmp_path: Path) -> None:
    run(conn, "CREATE TABLE z (k INT, v INT) UNIQUE KEY(k) DISTRIBUTED BY HASH(k) BUCKETS 1 "
              'PROPERTIES ("enable_time_travel" = "true", "time_travel_retention_days" = "1", '
              '"disable_auto_compaction" = "true", "enable_unique_key_merge_on_write" = "false")')
    old = _history(conn, "z", ["INSERT INTO z VALUES (1, 10), (2, 20)", "INSERT INTO z VALUES (1, 11)",
                               "DELETE FROM z WHERE k = 2"])
    time.sleep(0.3)
    cut = time.time()  # the horizon: versions 1 … 3 lie behind it
    time.sleep(0.3)
    recent = _history(conn, "z", ["INSERT INTO z VALUES (2, 22)", "INSERT INTO z VALUES (1, 12), (3, 30)"])
    config = load_settings()
    replica = Replica.open(config, tmp_path / "compactor", "tt-compaction-horizon")
    try:
        locator, stores = open_locator(config, replica.projection, "tt-compaction-horizon")
        # This stack's day is a real one; a compactor whose retention day lasts one second, one second after
        # `cut`, sees a horizon at version 3 (the instants of `recent` are inside its retention, those of
        # `old` but the last not).
        compactor = Compactor(replica.projection, replica.proposer, locator, stores, day_s=1.0,
                              clock=lambda: cut + 1.0)
        table_id = _table_id(replica, db, "z")
        cur = duckdb.connect()

        def compact() -> Rowset | None:
            table = replica.projection.tables[table_id]
            partition = next(iter(table.partitions.values()))
            event = compactor.compact(cur, table, partition, 0, "base")
            return event.output if event is not None else None

        merged = compact()
        assert merged is not None and (merged.start_version, merged.end_version, merged.keeps_versions) == (1, 3, False)
        _wait_visible(conn, db, "z", 3)
        kept = compact()
        assert kept is not None and (kept.start_version, kept.end_version, kept.keeps_versions) == (4, 5, True)
        assert compact() is None  # the merged base alone lies at or below the horizon
    finally:
        replica.close()
    _wait_visible(conn, db, "z", 2)
    last_old = list(old)[-1]
    for t, expected in [(last_old, old[last_old]), *recent.items()]:
        query = f"SELECT * FROM z FOR TIME AS OF '{t}'"
        assert sorted_rows(conn, query) == expected, t
        assert cover_size(conn, query) <= 2, t
    assert sorted_rows(conn, "SELECT * FROM z") == [(1, 12), (2, 22), (3, 30)]


def _wait_visible(conn: pymysql.connections.Connection, db: str, table: str, n: int) -> None:
    deadline = time.monotonic() + 10
    while states(conn, db, table).get("visible") != n and time.monotonic() < deadline:
        time.sleep(0.1)
    assert states(conn, db, table).get("visible") == n
