"""ROUTINE LOAD from a MySQL client, on the real Kafka: JSON and CSV jobs, the COLUMNS mapping and
WHERE, bad records in `strata.dlq`, PAUSE / RESUME / STOP, what SHOW ROUTINE LOAD tells, and the
errors of bad definitions."""

from __future__ import annotations

import time

import pymysql
import pytest

from tests.query.routine_load_kit import dead_letters, kafka_source, new_topic, produce, show, wait_for, wait_rows
from tests.query.sqlkit import fails, rows, run, sorted_rows

pytestmark = pytest.mark.integration
FAST = '"max_batch_interval" = "0.3"'


def _table(conn: pymysql.connections.Connection, name: str = "t", model: str = "DUPLICATE") -> None:
    run(conn, f"CREATE TABLE {name} (id INT NOT NULL, name VARCHAR(10), score DOUBLE) {model} KEY(id) "
              "DISTRIBUTED BY HASH(id) BUCKETS 2")


def test_json_rows_land_once_and_bad_records_go_to_the_dlq(conn: pymysql.connections.Connection, db: str) -> None:
    _table(conn)
    topic = new_topic(partitions=2)
    good = [{"id": i, "name": f"n{i}", "score": i / 2} for i in range(100)]
    produce(topic, good[:50], partition=0)
    produce(topic, good[50:], partition=1)
    produce(topic, [b'{"id": oops', {"id": None, "name": "x"}, {"id": 7, "name": "far too long a name"}],
            partition=0)
    run(conn, f'CREATE ROUTINE LOAD {db}.j ON t PROPERTIES ("format" = "json", {FAST}, "max_error_number" = "10", '
              f'"strict_mode" = "true") {kafka_source(topic)}')
    wait_for(lambda: show(conn, "j")["Statistic"]["totalRows"] >= 103, "the job to read every record")
    assert sorted_rows(conn, "SELECT id, name, score FROM t") == [(r["id"], r["name"], r["score"]) for r in good]
    job = show(conn, "j")
    assert job["State"] == "RUNNING" and job["DbName"] == db and job["TableName"] == "t"
    assert job["Statistic"]["loadedRows"] == 100 and job["Statistic"]["errorRows"] == 3
    assert job["Progress"] == {"0": "52", "1": "49"} and job["Lag"] == {"0": 0, "1": 0}
    assert "partition 0 offset" in job["OtherMsg"]
    letters = dead_letters(f"{db}.j", topic, 3)
    assert len(letters) == 3, letters
    assert {v for v, _ in letters} == {b'{"id": oops', b'{"id": null, "name": "x"}',
                                       b'{"id": 7, "name": "far too long a name"}'}
    headers = {h["strata.source.offset"]: h for _, h in letters}
    assert set(headers) == {"50", "51", "52"}
    assert headers["50"]["strata.reason"] == "the record is not valid JSON"
    assert headers["51"]["strata.reason"] == "Column 'id' cannot be null"
    assert "Data too long for column 'name'" in headers["52"]["strata.reason"]
    assert all(h["strata.source.topic"] == topic and h["strata.source.partition"] == "0" for h in headers.values())
    # Records that arrive later are loaded too, once.
    produce(topic, [{"id": 100, "name": "late"}])
    wait_rows(conn, "t", 101)
    time.sleep(1)
    assert rows(conn, "SELECT count(*), count(DISTINCT id) FROM t") == [(101, 101)]


def test_csv_with_a_column_mapping_and_a_filter(conn: pymysql.connections.Connection, db: str) -> None:
    _table(conn)
    topic = new_topic()
    produce(topic, ["1|a|10", "2|b|20\n", "3|\\N|30", "4|d", "9|e|90"])
    run(conn, f'CREATE ROUTINE LOAD j ON t COLUMNS TERMINATED BY "|", COLUMNS(id, name, raw, score = raw * 2), '
              f'WHERE id < 9 PROPERTIES ({FAST}, "max_error_number" = "5") {kafka_source(topic)}')
    wait_for(lambda: show(conn, "j")["Statistic"]["totalRows"] >= 5, "five records")
    assert sorted_rows(conn, "SELECT * FROM t") == [(1, "a", 20.0), (2, "b", 40.0), (3, None, 60.0)]
    stats = show(conn, "j")["Statistic"]
    assert (stats["loadedRows"], stats["errorRows"], stats["unselectedRows"]) == (3, 1, 1)
    assert show(conn, "j")["JobProperties"]["columnToColumnExpr"] == "id,name,raw,score=raw * 2"
    (value, headers), = dead_letters(f"{db}.j", topic, 1)
    assert value == b"4|d" and "has 2 columns" in headers["strata.reason"]


def test_jsonpaths_and_an_outer_array(conn: pymysql.connections.Connection, db: str) -> None:
    _table(conn)
    topic = new_topic()
    produce(topic, ['[{"k": 1, "v": {"n": "a"}}, {"k": 2, "v": {"n": "b"}}]', '[{"k": 3}]'])
    run(conn, f'CREATE ROUTINE LOAD j ON t COLUMNS(id, name) PROPERTIES ("format" = "json", "strip_outer_array" = '
              f'"true", "jsonpaths" = "[\\"$.k\\", \\"$.v.n\\"]", {FAST}) {kafka_source(topic)}')
    wait_rows(conn, "t", 3)
    assert sorted_rows(conn, "SELECT id, name FROM t") == [(1, "a"), (2, "b"), (3, None)]


def test_unique_key_loads_keep_the_newest_row_per_key(conn: pymysql.connections.Connection, db: str) -> None:
    _table(conn, model="UNIQUE")
    topic = new_topic()
    produce(topic, [{"id": 1, "name": "old"}, {"id": 2, "name": "b"}, {"id": 1, "name": "new"}])
    run(conn, f'CREATE ROUTINE LOAD j ON t PROPERTIES ("format" = "json", {FAST}) {kafka_source(topic)}')
    wait_for(lambda: show(conn, "j")["Statistic"]["loadedRows"] == 3, "three rows")
    assert sorted_rows(conn, "SELECT id, name FROM t") == [(1, "new"), (2, "b")]


def test_pause_resume_and_stop(conn: pymysql.connections.Connection, db: str) -> None:
    _table(conn)
    topic = new_topic()
    produce(topic, [{"id": i} for i in range(10)])
    run(conn, f'CREATE ROUTINE LOAD j ON t PROPERTIES ("format" = "json", {FAST}) {kafka_source(topic)}')
    wait_rows(conn, "t", 10)
    run(conn, "PAUSE ROUTINE LOAD FOR j")
    paused = show(conn, "j")
    assert paused["State"] == "PAUSED" and paused["PauseTime"] != "NULL" and "PAUSE" in paused["ReasonOfStateChanged"]
    fails(conn, "PAUSE ROUTINE LOAD FOR j", 1105, "is PAUSED")
    produce(topic, [{"id": i} for i in range(10, 20)])
    wait_for(lambda: show(conn, "j")["Lag"] == {"0": 10}, "the lag to show the new records")
    time.sleep(1.5)
    assert rows(conn, "SELECT count(*) FROM t") == [(10,)], "a paused job loaded rows"
    run(conn, "RESUME ROUTINE LOAD FOR j")
    wait_rows(conn, "t", 20)
    assert show(conn, "j")["State"] == "RUNNING"
    run(conn, "STOP ROUTINE LOAD FOR j")
    stopped = show(conn, "j")
    assert stopped["State"] == "STOPPED" and stopped["EndTime"] != "NULL"
    fails(conn, "RESUME ROUTINE LOAD FOR j", 1105, "is STOPPED")
    assert rows(conn, "SHOW ROUTINE LOAD") == []
    assert [r[1] for r in rows(conn, "SHOW ALL ROUTINE LOAD")] == ["j"]
    produce(topic, [{"id": 99}])
    time.sleep(1.5)
    assert rows(conn, "SELECT count(*) FROM t") == [(20,)], "a stopped job loaded rows"
    # A stopped job's name can be used again; the new job starts where it is told to.
    run(conn, f'CREATE ROUTINE LOAD j ON t PROPERTIES ("format" = "json", {FAST}) '
              f'{kafka_source(topic, kafka_partitions="0", kafka_offsets="20")}')
    wait_rows(conn, "t", 21)
    assert rows(conn, "SELECT max(id) FROM t") == [(99,)]


def test_too_many_bad_records_pause_the_job_with_the_reason(conn: pymysql.connections.Connection, db: str) -> None:
    _table(conn)
    topic = new_topic()
    produce(topic, [{"id": 1}, "not json", {"id": 2}])
    run(conn, f'CREATE ROUTINE LOAD j ON t PROPERTIES ("format" = "json", {FAST}) {kafka_source(topic)}')
    wait_for(lambda: show(conn, "j")["State"] == "PAUSED", "the job to pause")
    job = show(conn, "j")
    assert "max_error_number is 0" in job["ReasonOfStateChanged"]
    assert "not valid JSON" in job["ReasonOfStateChanged"]
    assert sorted_rows(conn, "SELECT id FROM t") == [(1,), (2,)], "the batch's good rows are kept"


def test_paused_and_stopped_jobs_survive_pause_all_and_dropping_the_table(conn: pymysql.connections.Connection,
                                                                        db: str) -> None:
    _table(conn, "a")
    _table(conn, "b")
    topic = new_topic()
    for name in ("a", "b"):
        run(conn, f'CREATE ROUTINE LOAD job_{name} ON {name} PROPERTIES ("format" = "json", {FAST}) '
                  f'{kafka_source(topic)}')
    run(conn, "PAUSE ALL ROUTINE LOAD")
    assert {r[1]: r[8] for r in rows(conn, "SHOW ROUTINE LOAD")} == {"job_a": "PAUSED", "job_b": "PAUSED"}
    run(conn, "RESUME ALL ROUTINE LOAD")
    assert {r[8] for r in rows(conn, "SHOW ROUTINE LOAD")} == {"RUNNING"}
    run(conn, "DROP TABLE b")
    job = show(conn, "job_b")
    assert job["State"] == "STOPPED" and "dropped" in job["ReasonOfStateChanged"]


def test_client_secrets_are_sealed_and_masked(conn: pymysql.connections.Connection, db: str) -> None:
    _table(conn)
    topic = new_topic()
    run(conn, f'CREATE ROUTINE LOAD j ON t PROPERTIES ("format" = "json") '
              f'{kafka_source(topic, **{"property.client.id": "strata-test", "property.ssl.key.password": "hunter2"})}')
    custom = show(conn, "j")["CustomProperties"]
    assert custom == {"property.client.id": "strata-test", "property.ssl.key.password": "******"}


@pytest.mark.parametrize(("clause", "code", "fragments"), [
    ('PROPERTIES ("format" = "xml")', 1210, ["format must be json or csv"]),
    ('PROPERTIES ("max_batch_rows" = "many")', 1210, ["max_batch_rows"]),
    ('PROPERTIES ("colour" = "red")', 1210, ["Unknown routine load property: colour"]),
    ('PROPERTIES ("jsonpaths" = "k")', 1210, ["jsonpaths must be a JSON array"]),
    ('PROPERTIES ("format" = "json", "jsonpaths" = "[\\"$.a\\"]")', 1210, ["jsonpaths has 1 paths"]),
    ('COLUMNS(id, score = nope + 1)', 1054, ["Unknown column 'nope'"]),
    ('COLUMNS(id, extra = 1)', 1054, ["Unknown column 'extra'"]),
    ('COLUMNS(name)', 1364, ["'id'", "default value"]),
    ('WHERE nope > 1', 1054, ["Unknown column 'nope' in WHERE"]),
    ('WHERE id IN (SELECT 1)', 1235, ["subqueries are not supported in WHERE"]),
    ('PARTITION (p9)', 1735, ["Unknown partition 'p9'"]),
])
def test_bad_definitions_are_refused_with_the_reason(conn: pymysql.connections.Connection, db: str, clause: str,
                                                     code: int, fragments: list[str]) -> None:
    _table(conn)
    topic = new_topic()
    fails(conn, f"CREATE ROUTINE LOAD j ON t {clause} {kafka_source(topic)}", code, *fragments)
    assert rows(conn, "SHOW ALL ROUTINE LOAD") == []


def test_bad_sources_and_names_are_refused(conn: pymysql.connections.Connection, db: str) -> None:
    _table(conn)
    topic = new_topic(partitions=2)
    fails(conn, f"CREATE ROUTINE LOAD j ON t {kafka_source('no_such_topic_here')}", 1105, "no_such_topic_here")
    fails(conn, f"CREATE ROUTINE LOAD j ON t {kafka_source(topic, kafka_partitions='0,5')}", 1210,
          "has partitions 0,1")
    fails(conn, f"CREATE ROUTINE LOAD j ON t {kafka_source(topic, kafka_partitions='0,1', kafka_offsets='0')}",
          1210, "names 1 offsets for 2")
    fails(conn, f"CREATE ROUTINE LOAD j ON t {kafka_source(topic, kafka_offsets='soon,0')}", 1210,
          "'soon' is not an offset")
    fails(conn, f"CREATE ROUTINE LOAD j ON t {kafka_source(topic, colour='red')}", 1210,
          "Unknown Kafka data source property")
    fails(conn, f"CREATE ROUTINE LOAD j ON nope {kafka_source(topic)}", 1146, "nope")
    fails(conn, "PAUSE ROUTINE LOAD FOR nobody", 1105, "nobody", "does not exist")
    fails(conn, "SHOW ROUTINE LOAD FOR nobody", 1105, "nobody")
    run(conn, f"CREATE ROUTINE LOAD j ON t {kafka_source(topic)}")
    fails(conn, f"CREATE ROUTINE LOAD j ON t {kafka_source(topic)}", 1105, "errCode = 5001", "already exists")
    assert show(conn, "j")["Progress"] == {"0": "OFFSET_BEGINNING", "1": "OFFSET_BEGINNING"}
    # OFFSET_END (Doris' default) is where each partition ends when the job is created.
    produce(topic, [{"id": 1}] * 3, partition=0)
    run(conn, f"CREATE ROUTINE LOAD k ON t {kafka_source(topic, **{'property.kafka_default_offsets': 'OFFSET_END'})}")
    assert show(conn, "k")["Progress"] == {"0": "2", "1": "-1"}
