"""Routine loads into Unique Key tables with Doris' load-order columns: a hidden sequence column mapped in
COLUMNS orders each key's rows, and an AUTO_INCREMENT column is filled by the sequencer's ranges."""

from __future__ import annotations

import pymysql
import pytest

from tests.query.routine_load_kit import kafka_source, new_topic, produce, show, wait_for
from tests.query.sqlkit import fails, run, sorted_rows

pytestmark = pytest.mark.integration
FAST = '"max_batch_interval" = "0.3"'


def test_sequence_column_orders_a_routine_load(conn: pymysql.connections.Connection, db: str) -> None:
    run(conn, "CREATE TABLE t (id INT NOT NULL, name VARCHAR(10)) UNIQUE KEY(id) DISTRIBUTED BY HASH(id) BUCKETS 2 "
              'PROPERTIES ("function_column.sequence_type" = "int")')
    topic = new_topic()
    fails(conn, f'CREATE ROUTINE LOAD j ON t PROPERTIES ("format" = "json", {FAST}) {kafka_source(topic)}', 1210,
          "has sequence column, need to specify the sequence column")
    produce(topic, [{"id": 1, "name": "new", "v": 5}, {"id": 1, "name": "old", "v": 2}, {"id": 2, "name": "b", "v": 1}])
    run(conn, f'CREATE ROUTINE LOAD j ON t COLUMNS(id, name, v, __DORIS_SEQUENCE_COL__ = v) '
              f'PROPERTIES ("format" = "json", {FAST}) {kafka_source(topic)}')
    wait_for(lambda: show(conn, "j")["Statistic"]["loadedRows"] == 3, "three rows")
    assert sorted_rows(conn, "SELECT id, name FROM t") == [(1, "new"), (2, "b")]


def test_auto_increment_in_a_routine_load(conn: pymysql.connections.Connection, db: str) -> None:
    run(conn, "CREATE TABLE t (id BIGINT NOT NULL AUTO_INCREMENT, name VARCHAR(10)) DUPLICATE KEY(id) "
              "DISTRIBUTED BY HASH(id) BUCKETS 2")
    run(conn, "INSERT INTO t (name) VALUES ('sql')")
    topic = new_topic()
    produce(topic, [{"name": "a"}, {"name": "b"}, {"id": 100, "name": "c"}])
    run(conn, f'CREATE ROUTINE LOAD j ON t PROPERTIES ("format" = "json", {FAST}) {kafka_source(topic)}')
    wait_for(lambda: show(conn, "j")["Statistic"]["loadedRows"] == 3, "three rows")
    assert sorted_rows(conn, "SELECT id, name FROM t") == [(1, "sql"), (2, "a"), (3, "b"), (100, "c")]
