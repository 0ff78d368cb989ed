"""Routine loads stay inside their grants (issue #15): Strata's own topics are never a source, a
table's ingest topic only for a user with LOAD_PRIV on that table, SHOW ROUTINE LOAD names the job's
creator, and each batch commits with the creator's privileges as they are when it commits — a
REVOKE pauses the job with the reason, as Doris pauses a job on error."""

from __future__ import annotations

import os
import uuid
from collections.abc import Iterator

import pymysql
import pytest
from pymysql.connections import Connection as Conn

from schemas.topics import COMMANDS_TOPIC, DLQ_TOPIC, EVENTS_TOPIC
from streams.producer import create_topic, ingest_topic
from tests.query.routine_load_kit import kafka_source, new_topic, produce, show, wait_for, wait_rows
from tests.query.sqlkit import fails, rows, run

pytestmark = pytest.mark.integration
FAST = '"max_batch_interval" = "0.3", "format" = "json"'


def _login(user: str, password: str, database: str) -> Conn:
    return pymysql.connect(host="127.0.0.1", port=int(os.environ["STRATA_SQL_PORT"]), user=user, password=password,
                           database=database, autocommit=True, connect_timeout=20)


@pytest.fixture
def loader(conn: Conn, db: str) -> Iterator[tuple[str, Conn]]:
    """A user with LOAD_PRIV (and SELECT_PRIV) on `db`.t only, logged in: (name, connection)."""
    run(conn, "CREATE TABLE t (id INT NOT NULL, name VARCHAR(10)) DUPLICATE KEY(id) DISTRIBUTED BY HASH(id) BUCKETS 1")
    run(conn, "CREATE TABLE other (id INT NOT NULL) DUPLICATE KEY(id) DISTRIBUTED BY HASH(id) BUCKETS 1")
    name, password = f"u_{uuid.uuid4().hex[:8]}", f"pw-{uuid.uuid4().hex}"
    run(conn, f"CREATE USER '{name}'@'%' IDENTIFIED BY '{password}'")
    run(conn, f"GRANT LOAD_PRIV, SELECT_PRIV ON {db}.t TO '{name}'@'%'")
    me = _login(name, password, db)
    yield name, me
    me.close()
    run(conn, f"DROP USER IF EXISTS '{name}'")


@pytest.mark.parametrize("topic", [EVENTS_TOPIC, COMMANDS_TOPIC, DLQ_TOPIC, "strata.workers", "Strata.Events"])
def test_strata_topics_are_refused_as_sources_even_to_root(conn: Conn, db: str, topic: str) -> None:
    run(conn, "CREATE TABLE t (id INT NOT NULL) DUPLICATE KEY(id) DISTRIBUTED BY HASH(id) BUCKETS 1")
    fails(conn, f"CREATE ROUTINE LOAD {db}.j ON t PROPERTIES ({FAST}) {kafka_source(topic)}", 1227,
          f"kafka_topic '{topic}' is one of Strata's own topics", "can not be a routine load source")
    assert rows(conn, "SHOW ALL ROUTINE LOAD") == []


def test_a_user_may_not_read_the_log_through_a_job(db: str, loader: tuple[str, Conn]) -> None:
    _, me = loader
    for topic in (EVENTS_TOPIC, COMMANDS_TOPIC):
        fails(me, f"CREATE ROUTINE LOAD {db}.j ON t PROPERTIES ({FAST}) {kafka_source(topic)}", 1227,
              "one of Strata's own topics")


def test_an_ingest_topic_needs_load_priv_on_its_table(conn: Conn, db: str, loader: tuple[str, Conn]) -> None:
    name, me = loader
    others = ingest_topic(db, "other")
    create_topic(others)
    fails(me, f"CREATE ROUTINE LOAD {db}.j ON t PROPERTIES ({FAST}) {kafka_source(others)}", 1142,
          f"needs LOAD_PRIV on {db}.other", others)
    own = ingest_topic(db, "t")
    create_topic(own)
    produce(own, [{"id": 1, "name": "a"}])
    run(me, f"CREATE ROUTINE LOAD {db}.mine ON t PROPERTIES ({FAST}) {kafka_source(own)}")
    wait_rows(conn, f"{db}.t", 1)
    assert show(conn, "mine")["User"] == name


def test_show_names_the_creator_and_a_revoke_pauses_the_job(conn: Conn, db: str, loader: tuple[str, Conn]) -> None:
    name, me = loader
    topic = new_topic()
    produce(topic, [{"id": 1, "name": "a"}])
    run(me, f"CREATE ROUTINE LOAD {db}.j ON t PROPERTIES ({FAST}) {kafka_source(topic)}")
    wait_rows(conn, "t", 1)
    job = show(conn, "j")
    assert (job["User"], job["State"]) == (name, "RUNNING")
    assert show(me, "j")["User"] == name
    run(conn, f"CREATE ROUTINE LOAD {db}.by_root ON t PROPERTIES ({FAST}) {kafka_source(new_topic())}")
    assert show(conn, "by_root")["User"] == "root"

    run(conn, f"REVOKE LOAD_PRIV ON {db}.t FROM '{name}'@'%'")
    produce(topic, [{"id": 2, "name": "b"}, {"id": 3, "name": "c"}])
    wait_for(lambda: show(conn, "j")["State"] == "PAUSED", "the job to pause")
    job = show(conn, "j")
    assert f"the job's user '{name}' no longer has LOAD_PRIV on {db}.t" in job["ReasonOfStateChanged"]
    assert rows(conn, "SELECT id FROM t") == [(1,)], "a batch committed without the creator's privilege"
    assert job["Progress"] == {"0": "0"}, "the refused batch's offsets were committed"

    # RESUME by root does not lend root's privileges: the next batch pauses it again; a GRANT lets it load.
    run(conn, "RESUME ROUTINE LOAD FOR j")
    wait_for(lambda: show(conn, "j")["State"] == "PAUSED", "the job to pause again")
    assert rows(conn, "SELECT id FROM t") == [(1,)]
    run(conn, f"GRANT LOAD_PRIV ON {db}.t TO '{name}'@'%'")
    run(conn, "RESUME ROUTINE LOAD FOR j")
    wait_rows(conn, "t", 3)
    assert sorted(rows(conn, "SELECT id FROM t")) == [(1,), (2,), (3,)]


def test_a_dropped_creator_pauses_the_job(conn: Conn, db: str, loader: tuple[str, Conn]) -> None:
    name, me = loader
    topic = new_topic()
    run(me, f"CREATE ROUTINE LOAD {db}.j ON t PROPERTIES ({FAST}) {kafka_source(topic)}")
    run(conn, f"DROP USER '{name}'")
    produce(topic, [{"id": 1, "name": "a"}])
    wait_for(lambda: show(conn, "j")["State"] == "PAUSED", "the job to pause")
    assert f"the job's user '{name}' was dropped" in show(conn, "j")["ReasonOfStateChanged"]
    assert rows(conn, "SELECT count(*) FROM t") == [(0,)]
