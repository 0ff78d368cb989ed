"""The Producer API (streams/producer.py) against the stack's real Kafka: rows written are read back
byte for byte with a plain confluent-kafka consumer; bad rows are refused before they are queued;
a broker that cannot be reached turns into DeliveryFailed, not silence."""

from __future__ import annotations

import json
import os
import socket
import time
import uuid
from collections.abc import Iterator
from datetime import UTC, date, datetime
from decimal import Decimal
from typing import Any

import pytest
from confluent_kafka import Consumer
from confluent_kafka.admin import AdminClient

from schemas.config import settings
from streams.producer import (
    DeliveryFailed,
    DeliveryReport,
    TableProducer,
    create_topic,
    ingest_topic,
)


@pytest.fixture(scope="module")
def bootstrap() -> str:
    """Fails (not skips) without the stack, so a run outside infra/test cannot go green."""
    if "STRATA_KAFKA_PORT" not in os.environ:
        pytest.fail("STRATA_KAFKA_PORT is not set; run the tests through infra/test")
    return settings().kafka_bootstrap


@pytest.fixture
def topic(bootstrap: str) -> Iterator[str]:
    name = ingest_topic(f"t_{uuid.uuid4().hex[:10]}", "rows")
    assert create_topic(name, bootstrap=bootstrap) is True
    yield name
    AdminClient({"bootstrap.servers": bootstrap}).delete_topics([name], request_timeout=10)


def consume(bootstrap: str, topic: str, n: int, timeout: float = 20.0) -> list[tuple[bytes | None, bytes]]:
    """The first `n` messages of `topic` as (key, value), failing if fewer arrive in time."""
    consumer = Consumer({"bootstrap.servers": bootstrap, "group.id": f"test-{uuid.uuid4().hex}",
                         "auto.offset.reset": "earliest", "enable.auto.commit": False})
    consumer.subscribe([topic])
    out: list[tuple[bytes | None, bytes]] = []
    try:
        deadline = time.monotonic() + timeout
        while len(out) < n and time.monotonic() < deadline:
            msg = consumer.poll(0.5)
            if msg is None:
                continue
            assert msg.error() is None, msg.error()
            value = msg.value()
            assert value is not None
            out.append((msg.key(), value))
    finally:
        consumer.close()
    assert len(out) == n, f"read {len(out)} of {n} messages from {topic}"
    return out


def closed_port() -> int:
    """A port nothing listens on (bound, then released)."""
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return int(s.getsockname()[1])


# --------------------------------------------------------------------------- no broker needed


def test_ingest_topic_is_the_lower_cased_convention() -> None:
    assert ingest_topic("Shop", "Orders") == "strata.ingest.shop.orders"
    assert ingest_topic("my_db", "t-1") == "strata.ingest.my_db.t-1"


@pytest.mark.parametrize(("db", "table", "problem"), [
    ("shop", "or ders", "' '"),
    ("shop", "bestellüng", "'ü'"),
    ("shop/x", "orders", "'/'"),
    ("", "orders", "database name is empty"),
    ("shop", "", "table name is empty"),
    ("a.b", "c", "ambiguous"),
    ("shop", "x" * 250, "at most 249"),
])
def test_ingest_topic_refuses_names_kafka_cannot_hold(db: str, table: str, problem: str) -> None:
    with pytest.raises(ValueError, match=problem):
        ingest_topic(db, table)


def test_producer_refuses_a_bad_topic_name() -> None:
    with pytest.raises(ValueError, match="contains"):
        TableProducer("strata.ingest.shop.ord ers", bootstrap=f"127.0.0.1:{closed_port()}")


def test_bad_rows_raise_before_anything_is_queued() -> None:
    # Nothing listens here: a row that got queued would show up as undelivered at the flush.
    bootstrap = f"127.0.0.1:{closed_port()}"
    csv = TableProducer("strata.ingest.shop.orders", bootstrap=bootstrap, format="csv",
                        columns=["id", "note"])
    with pytest.raises(ValueError, match="column 'note'.*separator"):
        csv.send({"id": 1, "note": "a\tb"})
    with pytest.raises(ValueError, match="column 'note'.*line break"):
        csv.send([1, "two\nlines"])
    with pytest.raises(ValueError, match="2 columns"):
        csv.send([1, "x", "extra"])
    with pytest.raises(ValueError, match="unknown column.*'nite'"):
        csv.send({"id": 1, "nite": "typo"})
    with pytest.raises(ValueError, match="column 'note'.*bytes"):
        csv.send([1, b"raw"])
    with pytest.raises(TypeError, match="mapping or a sequence"):
        csv.send("1\tx")  # a str is a sequence, but not of values
    no_columns = TableProducer("strata.ingest.shop.orders", bootstrap=bootstrap, format="csv")
    with pytest.raises(ValueError, match="needs `columns`"):
        no_columns.send({"id": 1})

    js = TableProducer("strata.ingest.shop.orders", bootstrap=bootstrap)
    with pytest.raises(ValueError, match="column 'blob'.*bytes are not JSON"):
        js.send({"id": 1, "blob": b"\x00\x01"})
    with pytest.raises(ValueError, match="column 'x'"):
        js.send({"id": 1, "x": float("nan")})
    with pytest.raises(ValueError, match="column 'at'.*time zone"):
        js.send({"at": datetime(2026, 1, 1, tzinfo=UTC)})
    with pytest.raises(TypeError, match="mapping"):
        js.send([1, 2])

    for p in (csv, no_columns, js):
        assert p.flush(timeout=1) == DeliveryReport(delivered=0, failed=0)


def test_csv_separator_must_not_be_a_line_break() -> None:
    with pytest.raises(ValueError, match="column_separator"):
        TableProducer("strata.ingest.shop.orders", format="csv", column_separator="\n")


# --------------------------------------------------------------------------- against the real Kafka


@pytest.mark.integration
def test_json_rows_round_trip(bootstrap: str, topic: str) -> None:
    rows: list[dict[str, Any]] = [
        {"id": 1, "status": "pending", "amount": Decimal("100.00"), "day": date(2026, 12, 1),
         "at": datetime(2026, 12, 1, 10, 0, 0), "note": None},
        {"id": 2, "status": "größer", "amount": Decimal("1E+2"), "day": date(2026, 12, 2),
         "at": datetime(2026, 12, 1, 10, 0, 0, 123456), "note": "x"},
        {"id": 3, "ok": True, "ratio": 0.5},
    ]
    # No bootstrap argument: the default must be the stack's (schemas.config.settings()).
    with TableProducer(topic) as producer:
        assert producer.send_many(rows) == 3
    got = [json.loads(value) for _, value in consume(bootstrap, topic, 3)]
    assert got == [
        {"id": 1, "status": "pending", "amount": "100.00", "day": "2026-12-01",
         "at": "2026-12-01 10:00:00", "note": None},
        {"id": 2, "status": "größer", "amount": "100", "day": "2026-12-02",
         "at": "2026-12-01 10:00:00.123456", "note": "x"},
        {"id": 3, "ok": True, "ratio": 0.5},
    ]


@pytest.mark.integration
def test_csv_rows_with_nulls(bootstrap: str, topic: str) -> None:
    with TableProducer(topic, bootstrap=bootstrap, format="csv", columns=["id", "name", "amount", "day"]) as p:
        p.send({"id": 1, "name": "al", "amount": Decimal("1.50"), "day": date(2026, 1, 31)})
        p.send({"id": 2, "amount": None})  # a missing column is NULL too
        p.send([3, None, Decimal("-0.01"), datetime(2026, 1, 31, 23, 59, 59)])
        p.send([4, True, 2.5, "2026-02-01"])
        report = p.flush()
    assert report == DeliveryReport(delivered=4, failed=0)
    assert [value for _, value in consume(bootstrap, topic, 4)] == [
        b"1\tal\t1.50\t2026-01-31",
        b"2\t\\N\t\\N\t\\N",
        b"3\t\\N\t-0.01\t2026-01-31 23:59:59",
        b"4\ttrue\t2.5\t2026-02-01",
    ]


@pytest.mark.integration
def test_csv_with_another_separator_and_no_columns(bootstrap: str, topic: str) -> None:
    with TableProducer(topic, bootstrap=bootstrap, format="csv", column_separator="|") as p:
        p.send([1, "a,b", None])
        with pytest.raises(ValueError, match=r"value #2.*separator '\|'"):
            p.send([2, "a|b", None])
    assert [value for _, value in consume(bootstrap, topic, 1)] == [b"1|a,b|\\N"]


@pytest.mark.integration
def test_keys_come_from_the_key_function(bootstrap: str, topic: str) -> None:
    def key(row: object) -> str | bytes | None:
        assert isinstance(row, dict)
        return None if row["id"] == 3 else (b"raw" if row["id"] == 2 else f"order-{row['id']}")

    with TableProducer(topic, bootstrap=bootstrap, key=key) as p:
        p.send_many([{"id": 1}, {"id": 2}, {"id": 3}])
    # A CSV row given as a sequence reaches the key function as a mapping by column name.
    with TableProducer(topic, bootstrap=bootstrap, format="csv", columns=["id"],
                       key=lambda r: f"csv-{r['id']}") as p:
        p.send([4])
    assert [k for k, _ in consume(bootstrap, topic, 4)] == [b"order-1", b"raw", None, b"csv-4"]


@pytest.mark.integration
def test_delivery_reports_count_since_the_last_flush(bootstrap: str, topic: str) -> None:
    p = TableProducer(topic, bootstrap=bootstrap)
    assert p.send_many({"id": i} for i in range(5)) == 5
    assert p.flush() == DeliveryReport(delivered=5, failed=0)
    assert p.flush() == DeliveryReport(delivered=0, failed=0)
    p.send({"id": 5})
    p.send({"id": 6})
    assert p.close() == DeliveryReport(delivered=2, failed=0)
    with pytest.raises(RuntimeError, match="closed"):
        p.send({"id": 7})
    assert len(consume(bootstrap, topic, 7)) == 7


@pytest.mark.integration
def test_a_full_queue_is_waited_out_not_dropped(bootstrap: str, topic: str) -> None:
    # A queue of 2 messages: nearly every send hits BufferError and must poll and retry.
    with TableProducer(topic, bootstrap=bootstrap, config={"queue.buffering.max.messages": 2}) as p:
        assert p.send_many({"id": i} for i in range(200)) == 200
        assert p.flush() == DeliveryReport(delivered=200, failed=0)
    ids = [json.loads(v)["id"] for _, v in consume(bootstrap, topic, 200)]
    assert ids == list(range(200))  # idempotent producer: no duplicates, order kept


@pytest.mark.integration
def test_create_topic_is_a_no_op_when_it_exists(bootstrap: str) -> None:
    name = ingest_topic(f"t_{uuid.uuid4().hex[:10]}", "multi")
    admin = AdminClient({"bootstrap.servers": bootstrap})
    try:
        assert create_topic(name, partitions=3, bootstrap=bootstrap) is True
        assert create_topic(name, partitions=3, bootstrap=bootstrap) is False
        assert len(admin.list_topics(name, timeout=10).topics[name].partitions) == 3
    finally:
        admin.delete_topics([name], request_timeout=10)


def test_rows_that_time_out_fail_the_flush() -> None:
    p = TableProducer("strata.ingest.shop.orders", bootstrap=f"127.0.0.1:{closed_port()}",
                      config={"message.timeout.ms": 1000})
    p.send_many([{"id": 1}, {"id": 2}])
    with pytest.raises(DeliveryFailed) as caught:
        p.flush(timeout=10)
    report = caught.value.report
    assert (report.delivered, report.failed, report.undelivered) == (0, 2, 0)
    assert report.errors and all("timed out" in e.lower() for e in report.errors)
    assert "2 row(s) failed" in str(caught.value)
    assert p.flush(timeout=1) == DeliveryReport(delivered=0, failed=0)  # counts were reset


def test_rows_still_queued_at_the_flush_timeout_fail_the_flush() -> None:
    p = TableProducer("strata.ingest.shop.orders", bootstrap=f"127.0.0.1:{closed_port()}",
                      config={"message.timeout.ms": 3000})
    p.send({"id": 1})
    with pytest.raises(DeliveryFailed, match="1 still undelivered") as caught:
        p.flush(timeout=0.3)
    assert (caught.value.report.failed, caught.value.report.undelivered) == (0, 1)
    # The row is not lost track of: once it times out the next flush reports it as failed.
    with pytest.raises(DeliveryFailed) as later:
        p.flush(timeout=10)
    assert (later.value.report.failed, later.value.report.undelivered) == (1, 0)


def test_exiting_on_an_error_keeps_that_error() -> None:
    with pytest.raises(KeyError, match="boom"):
        with TableProducer("strata.ingest.shop.orders", bootstrap=f"127.0.0.1:{closed_port()}",
                           config={"message.timeout.ms": 500}) as p:
            p.send({"id": 1})
            raise KeyError("boom")  # the undelivered row is logged, not raised over this
