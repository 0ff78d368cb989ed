"""query.cluster without a stack: which workers SHOW BACKENDS lists as alive, from the workers' group
(stubbed here) and what this server saw before; and the client id a worker's group member carries."""

from __future__ import annotations

from types import SimpleNamespace
from typing import Any, cast

import pytest

from query import cluster
from query.context import Context
from schemas.config import Settings
from schemas.topics import parse_worker_client_id
from streams.ownership import worker_client_id


@pytest.fixture(autouse=True)
def _fresh(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(cluster, "_seen", {})
    monkeypatch.setattr(cluster, "_probe", lambda worker: None)  # no worker's /health to ask


def _ctx(instance: str = "") -> Context:
    return cast(Context, SimpleNamespace(config=Settings(worker_instance=instance)))


def _members(monkeypatch: pytest.MonkeyPatch, members: list[cluster.Worker], error: str = "") -> None:
    def describe(ctx: Any) -> tuple[list[cluster.Worker], str]:
        return [cluster.Worker(w.instance, w.host, w.web_port, w.slots, w.leads, alive=True) for w in members], error

    monkeypatch.setattr(cluster, "_group_members", describe)


def test_a_worker_that_leaves_the_group_is_listed_not_alive(monkeypatch: pytest.MonkeyPatch) -> None:
    a = cluster.Worker("a", "127.0.0.1", 6066, frozenset(range(6)), leads=True)
    b = cluster.Worker("b", "127.0.0.1", 6067, frozenset(range(6, 12)))
    _members(monkeypatch, [a, b])
    both = cluster.workers(_ctx())
    assert [(w.instance, w.alive) for w in both] == [("a", True), ("b", True)]
    assert cluster.slot_owners(both)[7] == cluster.backend_id("b")
    _members(monkeypatch, [a])
    after = cluster.workers(_ctx())
    gone = next(w for w in after if w.instance == "b")
    assert not gone.alive and gone.slots == frozenset() and "not a member" in gone.error
    assert gone.last_seen_ms is not None and gone.failures == 1
    assert cluster.owner_of(cluster.slot_owners(after), 7) == -1


def test_the_configured_worker_is_listed_when_none_is_a_member(monkeypatch: pytest.MonkeyPatch) -> None:
    _members(monkeypatch, [], error="the workers' group could not be read from Kafka: timed out")
    found = cluster.workers(_ctx("w1"))
    assert [(w.instance, w.alive) for w in found] == [("w1", False)]
    assert "could not be read" in found[0].error


def test_worker_client_id_round_trip() -> None:
    assert parse_worker_client_id(worker_client_id("w-1", 6066)) == ("w-1", 6066)
    assert parse_worker_client_id("rdkafka") is None
    assert cluster.backend_id("a") == cluster.backend_id("a") and 10000 <= cluster.backend_id("a") < 100000
