"""query.metadata_count: `SELECT count(*) FROM t` of a Duplicate Key table without deletes is answered
from the rowsets' row counts (the server's `strata_sql_metadata_counts_total` counts it), and every
count equals the count DuckDB gives over the rows (`count(*)` of a subquery, which never takes that
path) — latest and at every earlier instant, through loads, a compaction, PARTITION (…), a DELETE, a
TRUNCATE and on a Unique Key table with upserts, where the rows are counted instead."""

from __future__ import annotations

import os
import urllib.request

import pymysql

from tests.query.sqlkit import columns, fails, rows, run
from tests.query.test_sql_time_travel import instant

UNKNOWN_PARTITION = 1735


def _answered() -> int:
    """How many counts the server has answered from metadata so far."""
    port = int(os.environ["STRATA_HTTP_PORT"])
    text = urllib.request.urlopen(f"http://127.0.0.1:{port}/metrics", timeout=10).read().decode()
    found = [line for line in text.splitlines() if line.startswith("strata_sql_metadata_counts_total ")]
    return int(float(found[0].split()[1])) if found else 0


def _counts(conn: pymysql.connections.Connection, table: str, as_of: str = "") -> tuple[int, int]:
    """(the count as asked, the count of the rows DuckDB reads) of `table`."""
    asked = rows(conn, f"SELECT count(*) FROM {table}{as_of}")[0][0]
    read = rows(conn, f"SELECT count(*) FROM (SELECT * FROM {table}{as_of}) AS s")[0][0]
    return asked, read


def _from_metadata(conn: pymysql.connections.Connection, sql: str) -> bool:
    before = _answered()
    rows(conn, sql)
    return _answered() == before + 1


def test_counts_from_metadata_equal_the_rows_at_every_instant(conn: pymysql.connections.Connection, db: str) -> None:
    run(conn, "CREATE TABLE d (k INT, v INT) DUPLICATE KEY(k) PARTITION BY RANGE(k) "
              "(PARTITION p1 VALUES LESS THAN (100), PARTITION p2 VALUES LESS THAN (1000)) "
              'DISTRIBUTED BY HASH(k) BUCKETS 3 PROPERTIES ("enable_time_travel" = "true")')
    steps = ["INSERT INTO d VALUES (1, 1), (2, 2), (2, 2), (150, 3)",
             "INSERT INTO d SELECT k + 1, v FROM d",
             "INSERT INTO d SELECT k + 300, v FROM d",
             "ADMIN COMPACT TABLE d WHERE TYPE = 'BASE'",
             "INSERT INTO d VALUES (5, 5)",
             "DELETE FROM d WHERE v = 2",
             "INSERT INTO d VALUES (6, 6), (600, 6)",
             "TRUNCATE TABLE d",
             "INSERT INTO d VALUES (7, 7)"]
    instants: list[tuple[str, int]] = []
    for step in steps:
        run(conn, step)
        asked, read = _counts(conn, "d")
        assert asked == read, step
        instants.append((instant(), read))
    for at, then in instants:
        assert _counts(conn, "d", f" FOR TIME AS OF '{at}'") == (then, then), at
    # Before the DELETE the rowsets' counts are the answer; from the DELETE on the rows are counted.
    assert _from_metadata(conn, f"SELECT count(*) FROM d FOR TIME AS OF '{instants[4][0]}'")
    assert not _from_metadata(conn, f"SELECT count(*) FROM d FOR TIME AS OF '{instants[5][0]}'")
    assert not _from_metadata(conn, "SELECT count(*) FROM d")
    assert instants[4][1] == 17


def test_a_plain_count_is_answered_from_metadata_and_labelled_as_asked(
        conn: pymysql.connections.Connection, db: str) -> None:
    run(conn, "CREATE TABLE d (k INT, v INT) DUPLICATE KEY(k) PARTITION BY RANGE(k) "
              "(PARTITION p1 VALUES LESS THAN (100), PARTITION p2 VALUES LESS THAN (1000)) "
              "DISTRIBUTED BY HASH(k) BUCKETS 2")
    run(conn, "INSERT INTO d VALUES (1, 1), (2, 2), (150, 3)")
    run(conn, "INSERT INTO d VALUES (3, 1)")
    assert _from_metadata(conn, "SELECT count(*) FROM d")
    assert rows(conn, "SELECT count(*) FROM d") == [(4,)]
    assert columns(conn, "SELECT count(*) FROM d") == ["count(*)"]
    assert columns(conn, "SELECT COUNT(*) AS n FROM d AS x") == ["n"]
    assert rows(conn, "SELECT count(*) FROM d PARTITION (p1)") == [(3,)]
    assert _from_metadata(conn, f"SELECT count(*) FROM {db}.d PARTITION (p2)")
    fails(conn, "SELECT count(*) FROM d PARTITION (nope)", UNKNOWN_PARTITION, "nope")
    for other in ("SELECT count(*) FROM d WHERE k > 1", "SELECT count(v) FROM d", "SELECT count(*) FROM d LIMIT 1"):
        assert not _from_metadata(conn, other), other
    assert rows(conn, "SELECT count(*) FROM d WHERE k > 1") == [(3,)]


def test_a_unique_key_table_counts_its_rows(conn: pymysql.connections.Connection, db: str) -> None:
    run(conn, "CREATE TABLE u (k INT, v INT) UNIQUE KEY(k) DISTRIBUTED BY HASH(k) BUCKETS 2 "
              'PROPERTIES ("enable_time_travel" = "true")')
    run(conn, "INSERT INTO u VALUES (1, 1), (2, 2), (3, 3)")
    at = instant()
    run(conn, "INSERT INTO u VALUES (1, 10), (4, 4)")
    assert not _from_metadata(conn, "SELECT count(*) FROM u")
    assert _counts(conn, "u") == (4, 4)
    assert _counts(conn, "u", f" FOR TIME AS OF '{at}'") == (3, 3)
