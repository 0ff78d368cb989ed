"""Doris' session variables (query.doris_variables): what Doris scripts and suites SET is accepted with
Doris' defaults, a bad value or an unknown name is refused, and the read options change answers as in
Doris (regression-test/suites/delete_p0 and data_model_p0 use them to look under deletes and merges)."""

from __future__ import annotations

import pymysql

from tests.query.sqlkit import fails, rows, run

TAIL = "DISTRIBUTED BY HASH(k) BUCKETS 1"


def test_doris_scripts_set_their_variables(conn: pymysql.connections.Connection) -> None:
    for statement in ("SET enable_nereids_planner = true", "SET enable_fallback_to_original_planner = false",
                      "SET parallel_pipeline_task_num = 1", "SET batch_size = 4064", "SET enable_profile = ON",
                      "SET exec_mem_limit = 8589934592", "SET runtime_filter_type = 'BLOOM_FILTER'",
                      "SET experimental_enable_pipeline_x_engine = false", "SET insert_max_filter_ratio = 0.5"):
        run(conn, statement)
    assert rows(conn, "SELECT @@parallel_pipeline_task_num, @@enable_fallback_to_original_planner, "
                      "@@skip_delete_predicate") == [(1, 0, 0)]
    assert rows(conn, "SHOW VARIABLES LIKE 'skip_storage_engine_merge'") == [("skip_storage_engine_merge", "OFF")]
    fails(conn, "SET enable_nereids_planner = 'perhaps'", 1231, "enable_nereids_planner")
    fails(conn, "SET batch_size = 'many'", 1231, "batch_size")
    fails(conn, "SET no_such_doris_variable = 1", 1193, "no_such_doris_variable")


def test_skip_delete_predicate_reads_deleted_rows(conn: pymysql.connections.Connection, db: str) -> None:
    run(conn, f"CREATE TABLE d (k INT, v INT) DUPLICATE KEY(k) {TAIL}")
    run(conn, "INSERT INTO d VALUES (1, 1), (2, 2), (3, 3)")
    run(conn, "DELETE FROM d WHERE k >= 2")
    assert rows(conn, "SELECT k FROM d ORDER BY k") == [(1,)]
    run(conn, "SET skip_delete_predicate = true")
    assert rows(conn, "SELECT k FROM d ORDER BY k") == [(1,), (2,), (3,)]
    run(conn, "SET skip_delete_predicate = false")
    assert rows(conn, "SELECT k FROM d ORDER BY k") == [(1,)]


def test_skip_merge_and_delete_sign_on_unique_and_aggregate(conn: pymysql.connections.Connection, db: str) -> None:
    run(conn, f"CREATE TABLE u (k INT, v INT) UNIQUE KEY(k) {TAIL}")
    run(conn, "INSERT INTO u VALUES (1, 1), (2, 2)")
    run(conn, "INSERT INTO u VALUES (1, 10)")
    run(conn, "DELETE FROM u WHERE k = 2")  # a Unique Key DELETE writes a delete-sign row, as in Doris
    run(conn, f"CREATE TABLE g (k INT, v INT SUM) AGGREGATE KEY(k) {TAIL}")
    run(conn, "INSERT INTO g VALUES (1, 1), (1, 2)")
    run(conn, "INSERT INTO g VALUES (1, 4)")
    assert rows(conn, "SELECT * FROM u ORDER BY k") == [(1, 10)]
    assert rows(conn, "SELECT * FROM g") == [(1, 7)]
    run(conn, "SET skip_delete_sign = true")  # the key's newest row, though it deletes the key
    assert rows(conn, "SELECT * FROM u ORDER BY k") == [(1, 10), (2, 2)]
    run(conn, "SET skip_storage_engine_merge = true")  # every row version, as a Duplicate Key table
    assert rows(conn, "SELECT * FROM u ORDER BY k, v") == [(1, 1), (1, 10), (2, 2), (2, 2)]
    assert rows(conn, "SELECT * FROM g ORDER BY v") == [(1, 1), (1, 2), (1, 4)]
    run(conn, "SET skip_delete_sign = false")
    assert rows(conn, "SELECT * FROM u ORDER BY k, v") == [(1, 1), (1, 10), (2, 2)]
    run(conn, "SET skip_storage_engine_merge = false")
    run(conn, "SET skip_delete_bitmap = true")  # merge-on-write's replaced versions: unmerged in Strata too
    assert rows(conn, "SELECT * FROM u ORDER BY k, v") == [(1, 1), (1, 10), (2, 2)]
    run(conn, "SET skip_delete_bitmap = false")
    assert rows(conn, "SELECT * FROM u ORDER BY k") == [(1, 10)]
