"""EXPLAIN [VERBOSE | GRAPH] through pymysql: what a read resolves to (instant, partitions and their
versions, rowsets per tier, file cache, delete predicates, keys-model merge) and DuckDB's plan, without
running the query; the same SELECT privileges as the query."""

from __future__ import annotations

import time

from tests.query.sqlkit import Conn, columns, fails, rows, run
from tests.query.test_sql_tiering import _policy as tiering_policy
from tests.query.test_sql_tiering import minio, resource, wait_cooled

__all__ = ["minio", "resource"]  # the tiering tests' fixtures, used here


def _explain(conn: Conn, sql: str) -> str:
    assert columns(conn, sql) == ["Explain String"]
    return "\n".join(str(r[0]) for r in rows(conn, sql))


def _now(conn: Conn) -> str:
    return str(rows(conn, "SELECT CAST(NOW(3) AS CHAR)")[0][0])


def test_explain_names_the_read_and_the_executor_plan(conn: Conn, db: str) -> None:
    run(conn, "CREATE TABLE t (k INT, v VARCHAR(10)) DUPLICATE KEY(k) PARTITION BY RANGE(k) "
              "(PARTITION p1 VALUES LESS THAN (10), PARTITION p2 VALUES LESS THAN (20)) "
              "DISTRIBUTED BY HASH(k) BUCKETS 2")
    run(conn, "INSERT INTO t VALUES (1, 'x'), (11, 'y')")
    run(conn, "DELETE FROM t PARTITION p1 WHERE v = 'x'")
    text = _explain(conn, "EXPLAIN SELECT CAST(v AS INT) FROM t WHERE k > 0")  # would fail if it ran
    assert f"TABLE {db}.t" in text and "DUPLICATE KEY" in text and "as of: latest" in text
    assert "partitions: 2/2 selected: p1 (version 2), p2 (version 1)" in text
    assert "rowsets: 2, 2 rows stored" in text and "ssd: 2" in text
    assert "file cache: not used" in text
    assert "p1: rows below version 2 where v = 'x'" in text
    assert "merge: Duplicate Key: every row" in text
    assert "EXECUTOR PLAN (DuckDB)" in text and "READ_PARQUET" in text
    one = _explain(conn, "EXPLAIN SELECT * FROM t PARTITION (p2)")
    assert "partitions: 1/2 selected: p2 (version 1)" in one
    assert "partitions=1/2 (p2), tablets=2/4" in one and "partitions=2/2 (p1,p2), tablets=4/4" in text
    verbose = _explain(conn, "EXPLAIN VERBOSE SELECT * FROM t")
    assert verbose.count("    rowset ") == 2 and "versions [1, 1]" in verbose
    assert "READ_PARQUET" in _explain(conn, "EXPLAIN GRAPH SELECT * FROM t")


def test_explain_for_time_as_of_resolves_the_version_then(conn: Conn, db: str) -> None:
    run(conn, "CREATE TABLE u (k INT, v INT SUM) AGGREGATE KEY(k) DISTRIBUTED BY HASH(k) BUCKETS 1 "
              "PROPERTIES ('enable_time_travel' = 'true')")
    run(conn, "INSERT INTO u VALUES (1, 1)")
    time.sleep(0.01)
    before = _now(conn)
    time.sleep(0.01)
    run(conn, "INSERT INTO u VALUES (1, 2)")
    latest = _explain(conn, "EXPLAIN SELECT * FROM u")
    then = _explain(conn, f"EXPLAIN SELECT * FROM u FOR TIME AS OF '{before}'")
    assert "u (version 2)" in latest and "rowsets: 2" in latest
    assert "u (version 1)" in then and "rowsets: 1," in then and f"as of: {before}" in then
    assert "Aggregate Key merge: per key (k) in version order: v SUM" in latest
    fails(conn, "EXPLAIN SELECT * FROM u FOR TIME AS OF '2000-01-01 00:00:00'", 1210)


def test_explain_unique_key_merge(conn: Conn, db: str) -> None:
    run(conn, "CREATE TABLE w (k INT, v INT) UNIQUE KEY(k) DISTRIBUTED BY HASH(k) BUCKETS 1")
    text = _explain(conn, "EXPLAIN SELECT * FROM w")
    assert "Unique Key merge-on-read: per key (k) the row with the highest (__version, __seq)" in text
    assert "partitions: 1/1 selected: w (version 0)" in text


def test_explain_needs_the_query_privileges(reader: tuple[Conn, str, str]) -> None:
    me, _, _ = reader
    assert "TABLE" in _explain(me, "EXPLAIN SELECT * FROM open")
    fails(me, "EXPLAIN SELECT * FROM closed", 1142)
    fails(me, "EXPLAIN SELECT * FROM open JOIN closed ON open.k = closed.k", 1142)


def test_explain_of_a_write_is_not_supported(conn: Conn, db: str) -> None:
    fails(conn, "EXPLAIN INSERT INTO t VALUES (1)", 1235)
    fails(conn, "EXPLAIN SHAPE PLAN SELECT 1", 1235)


def test_explain_cold_rowsets_and_the_file_cache(conn: Conn, db: str, resource: tuple[str, str]) -> None:
    name, _ = resource
    policy = tiering_policy(conn, name)
    run(conn, f'CREATE TABLE c (k INT, v INT) DUPLICATE KEY(k) DISTRIBUTED BY HASH(k) BUCKETS 1 '
              f'PROPERTIES ("storage_policy"="{policy}")')
    run(conn, "INSERT INTO c VALUES (1, 10), (2, 20)")
    wait_cooled(conn, db, "c", name)
    cold = _explain(conn, "EXPLAIN SELECT * FROM c")
    assert f"remote:{name}: 1" in cold
    assert "file cache: used for 1 cold rowset(s): 0 cached, 1 to fetch" in cold
    assert "left out: 1 cold rowset(s)" in cold and "READ_PARQUET" not in cold  # EXPLAIN fetched nothing
    assert _explain(conn, "EXPLAIN SELECT * FROM c") == cold
    assert len(rows(conn, "SELECT * FROM c")) == 2  # the read fetches it into this server's cache
    warm = _explain(conn, "EXPLAIN SELECT * FROM c")
    assert "1 cached, 0 to fetch" in warm and "READ_PARQUET" in warm


def test_explain_through_views(conn: Conn, db: str, reader: tuple[Conn, str, str]) -> None:
    run(conn, "CREATE VIEW v_open AS SELECT k FROM open")
    run(conn, "CREATE VIEW v_closed AS SELECT k FROM closed")
    assert f"TABLE {db}.open" in _explain(conn, "EXPLAIN SELECT * FROM v_open")
    me, name, _ = reader
    run(conn, f"GRANT SELECT_PRIV ON {db}.v_open TO '{name}'")
    run(conn, f"GRANT SELECT_PRIV ON {db}.v_closed TO '{name}'")
    assert f"TABLE {db}.open" in _explain(me, "EXPLAIN SELECT * FROM v_open")
    hidden = _explain(me, "EXPLAIN SELECT * FROM v_closed")
    assert "definition is not shown" in hidden and "closed (" not in hidden and "READ_PARQUET" not in hidden
