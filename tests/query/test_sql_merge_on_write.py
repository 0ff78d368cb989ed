"""Merge-on-write Unique Key tables (Doris' default): the worker commits each load's delete bitmaps and
reads subtract them (EXPLAIN says so) instead of merging by key — with the same rows as a merge-on-read
table given the same writes, at every instant, through upserts, DELETE/UPDATE, delete-sign loads, a
sequence column, partial updates, compactions and a restore; the property is Doris'."""

from __future__ import annotations

import time
from pathlib import Path

import pymysql

from tests.query.sqlkit import fails, rows, run, show_create
from tests.query.stream_load_kit import curl_load
from tests.query.test_sql_time_travel import instant

WAIT_S = 20.0


def _create(conn: pymysql.connections.Connection, name: str, properties: str = "", columns: str = "") -> None:
    run(conn, f"CREATE TABLE {name} (k INT, v VARCHAR(10), n INT{columns}) UNIQUE KEY(k) "
              f'DISTRIBUTED BY HASH(k) BUCKETS 3 PROPERTIES ("enable_time_travel" = "true"{properties})')


def _plan(conn: pymysql.connections.Connection, table: str, as_of: str = "") -> str:
    found = [str(r[0]) for r in rows(conn, f"EXPLAIN SELECT * FROM {table}{as_of}") if "merge:" in str(r[0])]
    return found[0]


def merged_on_write(conn: pymysql.connections.Connection, table: str) -> str:
    """Waits until every tablet of `table` is read merge-on-write (its bitmaps are committed)."""
    deadline = time.monotonic() + WAIT_S
    while "merge-on-read" in (plan := _plan(conn, table)):
        assert time.monotonic() < deadline, plan
        time.sleep(0.1)
    assert "merge-on-write" in plan, plan
    return plan


def _both(conn: pymysql.connections.Connection, statement: str) -> None:
    for table in ("w", "r"):
        run(conn, statement.format(t=table))


def test_merge_on_write_reads_what_merge_on_read_reads_at_every_instant(
        conn: pymysql.connections.Connection, db: str, tmp_path: Path) -> None:
    _create(conn, "w")
    _create(conn, "r", ', "enable_unique_key_merge_on_write" = "false"')
    steps = ["INSERT INTO {t} VALUES (1, 'a', 1), (2, 'b', 2), (3, 'c', 3), (3, 'c2', 33), (4, 'd', 4)",
             "INSERT INTO {t} VALUES (1, 'a2', 10), (5, 'e', 5)",
             "DELETE FROM {t} WHERE k = 2",
             "UPDATE {t} SET n = n + 100 WHERE k >= 3",
             "INSERT INTO {t} (k, v, n, __DORIS_DELETE_SIGN__) VALUES (4, 'x', 0, 1), (6, 'f', 6, 0)",
             "INSERT INTO {t} SELECT k + 10, v, n FROM {t}"]
    instants = []
    for step in steps:
        _both(conn, step)
        instants.append(instant())
    body = tmp_path / "rows.csv"
    body.write_text("1,load,1000\n7,new,7\n")
    for table in ("w", "r"):
        assert curl_load(body, db, table, {"column_separator": ","})["Status"] == "Success"
    instants.append(instant())
    plan = merged_on_write(conn, "w")
    assert "3 of 3 tablets" in plan
    assert "merge-on-read" in _plan(conn, "r")

    def agree(when: list[str]) -> None:
        for at in when:
            as_of = f" FOR TIME AS OF '{at}'"
            assert rows(conn, f"SELECT * FROM w{as_of} ORDER BY k") == rows(conn, f"SELECT * FROM r{as_of} ORDER BY k")
        assert rows(conn, "SELECT * FROM w ORDER BY k") == rows(conn, "SELECT * FROM r ORDER BY k")
        assert rows(conn, "SELECT count(*), sum(n) FROM w WHERE n > 5") == \
            rows(conn, "SELECT count(*), sum(n) FROM r WHERE n > 5")

    agree(instants)
    assert rows(conn, "SELECT * FROM w WHERE k = 1") == [(1, "load", 1000)]
    assert rows(conn, "SELECT count(*) FROM w") == [(9,)]
    # Every instant is read merge-on-write too once its bitmaps are in.
    assert "merge-on-write" in _plan(conn, "w", f" FOR TIME AS OF '{instants[1]}'")
    # Compaction: a cumulative one, then a base one; each instant reads the same.
    for kind in ("CUMULATIVE", "BASE"):
        _both(conn, f"ADMIN COMPACT TABLE {{t}} WHERE TYPE = '{kind}'")
        agree(instants)
    _both(conn, "INSERT INTO {t} VALUES (1, 'after', 1), (8, 'h', 8)")
    instants.append(instant())
    merged_on_write(conn, "w")
    agree(instants)
    # A restore masks versions: that partition is read merge-on-read from then on, the same rows.
    _both(conn, f"RESTORE TABLE {{t}} TO TIME AS OF '{instants[2]}'")
    instants.append(instant())
    assert "merge-on-read" in _plan(conn, "w")
    agree(instants)


def test_a_sequence_column_and_partial_updates(conn: pymysql.connections.Connection, db: str) -> None:
    _create(conn, "w", ', "function_column.sequence_col" = "n"')
    _create(conn, "r", ', "function_column.sequence_col" = "n", "enable_unique_key_merge_on_write" = "false"')
    _both(conn, "INSERT INTO {t} VALUES (1, 'high', 50), (2, 'b', 1)")
    _both(conn, "INSERT INTO {t} VALUES (1, 'late-low', 10), (2, 'up', 2)")  # key 1: the late row is superseded
    merged_on_write(conn, "w")
    assert rows(conn, "SELECT * FROM w ORDER BY k") == [(1, "high", 50), (2, "up", 2)]
    assert rows(conn, "SELECT * FROM w ORDER BY k") == rows(conn, "SELECT * FROM r ORDER BY k")
    run(conn, "SET enable_unique_key_partial_update = true")
    run(conn, "INSERT INTO w (k, v) VALUES (2, 'part')")
    run(conn, "SET enable_unique_key_partial_update = false")
    merged_on_write(conn, "w")
    assert rows(conn, "SELECT * FROM w ORDER BY k") == [(1, "high", 50), (2, "part", 2)]


def test_the_property_is_dorises(conn: pymysql.connections.Connection, db: str) -> None:
    _create(conn, "w")
    assert '"enable_unique_key_merge_on_write" = "true"' in show_create(conn, "w")
    _create(conn, "r", ', "enable_unique_key_merge_on_write" = "false"')
    assert '"enable_unique_key_merge_on_write" = "false"' in show_create(conn, "r")
    fails(conn, "ALTER TABLE w SET (\"enable_unique_key_merge_on_write\" = \"false\")", 1235,
          "can only be set when the table is created")
    fails(conn, "CREATE TABLE d (k INT) DUPLICATE KEY(k) DISTRIBUTED BY HASH(k) BUCKETS 1 "
                "PROPERTIES (\"enable_unique_key_merge_on_write\" = \"true\")", 1210, "only support unique key table")
    fails(conn, "CREATE TABLE u (k INT) UNIQUE KEY(k) DISTRIBUTED BY HASH(k) BUCKETS 1 "
                "PROPERTIES (\"enable_unique_key_merge_on_write\" = \"maybe\")", 1210)
