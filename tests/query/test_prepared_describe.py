"""The prepare answer's columns are kept per connection (query.server `StrataSession.prepared_columns`):
a text prepared again is not run again until the catalog changes. No server needed: the session
runs on a stand-in engine whose statements are counted."""

from __future__ import annotations

import asyncio
import datetime as dt
from types import SimpleNamespace
from typing import Any, cast

import pytest
from confluent_kafka import KafkaError, KafkaException
from mysql_mimic.errors import MysqlError

from query import server
from query.context import SqlFailure
from query.engine import Engine
from query.parser import statements as st
from query.server import StrataSession
from query.wire.columns import WireResult, describe
from schemas.errors import ErrorCode

COLUMNS = describe(["id"], ["INTEGER"], [], dt.UTC)
READS_TABLE = "SELECT id FROM people WHERE id = NULL"


class CountingSession(StrataSession):
    """A session whose statements are answered by a counter instead of an engine."""

    def __init__(self, engine: Engine) -> None:
        super().__init__(engine)
        self.runs: list[str] = []
        self.fail = False

    async def _run(self, statement: st.Statement, stream: bool = False) -> Any:
        assert isinstance(statement, st.Query)
        self.runs.append(statement.expr.sql())
        if self.fail:
            raise MysqlError("Table 'people' doesn't exist")
        return WireResult([], COLUMNS)


class Described:
    """A counting session on a stand-in engine: how many SELECTs ran, and how often the replica was
    asked to catch up."""

    def __init__(self) -> None:
        self.catch_ups = 0
        self.catch_up_fails: Exception | None = None
        self.projection = SimpleNamespace(catalog_generation=0)
        ctx = SimpleNamespace(projection=self.projection, catch_up=self._catch_up)
        self.session = CountingSession(cast(Engine, SimpleNamespace(ctx=ctx)))

    @property
    def runs(self) -> list[str]:
        return self.session.runs

    def _catch_up(self) -> None:
        self.catch_ups += 1
        if self.catch_up_fails is not None:
            raise self.catch_up_fails

    def columns(self, sql: str) -> list[str]:
        return [c.name for c in asyncio.run(self.session.prepared_columns(sql))]


@pytest.fixture
def described() -> Described:
    return Described()


def test_same_text_runs_once_and_still_catches_up(described: Described) -> None:
    assert described.columns(READS_TABLE) == ["id"]
    assert described.columns(READS_TABLE) == ["id"]
    assert described.columns(READS_TABLE) == ["id"]
    assert len(described.runs) == 1 and described.runs[0].endswith("LIMIT 0")
    # Read-your-writes across servers, as running it would: each kept answer waits for the replica.
    assert described.catch_ups == 2


@pytest.mark.parametrize("failure", [SqlFailure(ErrorCode.LOCK_WAIT_TIMEOUT, "the replica is not catching up"),
                                     KafkaException(KafkaError(KafkaError._TRANSPORT))], ids=["timeout", "kafka"])
def test_a_kept_answer_is_not_given_while_the_replica_cannot_catch_up(described: Described,
                                                                       failure: Exception) -> None:
    """Running the SELECT would fail (and announce no columns) then: so does the kept answer."""
    assert described.columns(READS_TABLE) == ["id"]
    described.catch_up_fails = failure
    assert described.columns(READS_TABLE) == []
    described.catch_up_fails = None
    assert described.columns(READS_TABLE) == ["id"]
    assert len(described.runs) == 1


def test_a_catalog_change_describes_again(described: Described) -> None:
    described.columns(READS_TABLE)
    described.projection.catalog_generation += 1  # a DDL, grant or user change was folded
    described.columns(READS_TABLE)
    described.columns(READS_TABLE)
    assert len(described.runs) == 2


def test_kept_per_database_and_user(described: Described) -> None:
    described.columns(READS_TABLE)
    described.session.state.database = "other"
    described.columns(READS_TABLE)
    described.session.state.user = "someone"
    described.columns(READS_TABLE)
    described.session.state.database, described.session.state.user = None, "root"
    described.columns(READS_TABLE)
    assert len(described.runs) == 3


def test_failures_are_not_kept(described: Described) -> None:
    described.session.fail = True
    assert described.columns(READS_TABLE) == []
    described.session.fail = False
    assert described.columns(READS_TABLE) == ["id"]
    assert len(described.runs) == 2


def test_other_statements_announce_nothing_and_run_nothing(described: Described) -> None:
    for sql in ("INSERT INTO people VALUES (NULL)", "SELECT 1; SELECT 2", "SELEC nonsense"):
        assert described.columns(sql) == []
        assert described.columns(sql) == []
    assert described.runs == [] and described.catch_ups == 0


def test_a_select_of_no_table_does_not_wait_for_the_replica(described: Described) -> None:
    described.columns("SELECT NULL + 1")
    described.columns("SELECT NULL + 1")
    assert len(described.runs) == 1 and described.catch_ups == 0


def test_least_recently_used_text_goes_first(described: Described) -> None:
    texts = [f"SELECT id FROM people WHERE id = {n}" for n in range(server._DESCRIBED_PER_CONNECTION + 1)]
    described.columns(texts[0])
    for text in texts[1:-1]:
        described.columns(text)
    described.columns(texts[0])  # used again: now the most recent
    described.columns(texts[-1])  # one too many: texts[1] goes
    runs = len(described.runs)
    described.columns(texts[0])
    assert len(described.runs) == runs
    described.columns(texts[1])
    assert len(described.runs) == runs + 1


def test_set_and_change_user_forget_every_description(described: Described) -> None:
    described.columns(READS_TABLE)
    asyncio.run(described.session.handle_query("SET time_zone = '+08:00'", {}))
    described.columns(READS_TABLE)
    asyncio.run(described.session.reset())
    described.columns(READS_TABLE)
    assert len(described.runs) == 3
