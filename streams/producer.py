"""A small client that writes rows to a table's ingest topic, for ROUTINE LOAD to pick up.

One Kafka message is one row: a JSON object (``format="json"``) or one CSV line
(``format="csv"``), in the shapes Doris' routine load reads. The producer is idempotent, so a
retried send never lands twice in the topic; whether a row reached the broker is known only from
its delivery report, which is why :meth:`TableProducer.flush` returns counts and raises when any
row did not make it.

    with TableProducer(ingest_topic("shop", "orders")) as p:
        p.send({"id": 1, "status": "pending", "amount": Decimal("100.00")})
        report = p.flush()

Rows are not checked against the table's schema here: the producer does not know the table (it
imports nothing from ``query/``), and the loading job is where types are decided.
"""

from __future__ import annotations

import json
import logging
import math
import re
import threading
import time
from collections.abc import Callable, Iterable, Mapping, Sequence
from dataclasses import dataclass
from datetime import date, datetime
from decimal import Decimal
from types import TracebackType
from typing import Any, Literal

from confluent_kafka import KafkaError, KafkaException, Message, Producer
from confluent_kafka.admin import AdminClient, NewTopic

from schemas.config import settings
from schemas.topics import INGEST_PREFIX

log = logging.getLogger("strata.producer")

CSV_NULL = "\\N"  # what Doris reads as NULL in CSV
MAX_ERRORS = 10  # a report keeps the first few error messages; a dead broker fails every row alike

# Kafka's own rule for topic names (kafka.common.internals.Topic).
_TOPIC_CHARS = re.compile(r"[A-Za-z0-9._-]+")
_TOPIC_MAX_LEN = 249

Row = Mapping[str, Any] | Sequence[Any]
KeyFn = Callable[[Mapping[str, Any]], str | bytes | None]


class DeliveryFailed(Exception):
    """Some rows did not reach the broker (failed, or still undelivered at the flush timeout)."""

    def __init__(self, report: DeliveryReport) -> None:
        parts = [f"{report.failed} row(s) failed"]
        if report.undelivered:
            parts.append(f"{report.undelivered} still undelivered at the flush timeout")
        detail = "; ".join(report.errors)
        super().__init__(", ".join(parts) + (f": {detail}" if detail else ""))
        self.report = report


@dataclass(frozen=True)
class DeliveryReport:
    """Delivery outcomes since the previous flush (``undelivered``: still queued when it returned)."""

    delivered: int
    failed: int
    errors: tuple[str, ...] = ()
    undelivered: int = 0

    @property
    def ok(self) -> bool:
        return self.failed == 0 and self.undelivered == 0


def _check_topic_name(topic: str) -> None:
    if not topic:
        raise ValueError("topic name is empty")
    if topic in (".", ".."):
        raise ValueError(f"topic name {topic!r} is not allowed by Kafka")
    if len(topic) > _TOPIC_MAX_LEN:
        raise ValueError(f"topic name is {len(topic)} characters long; Kafka allows at most {_TOPIC_MAX_LEN}")
    bad = sorted(set(_TOPIC_CHARS.sub("", topic)))
    if bad:
        raise ValueError(f"topic name {topic!r} contains {''.join(bad)!r}; Kafka topics allow only "
                         "ASCII letters, digits, '.', '_' and '-'")


def ingest_topic(db: str, table: str) -> str:
    """``strata.ingest.<db>.<table>``, lower-cased (Doris names are case-insensitive, topics are not)."""
    for what, name in (("database", db), ("table", table)):
        if not name:
            raise ValueError(f"{what} name is empty")
        # A dot is a legal topic character but would make `a.b` + `c` and `a` + `b.c` the same topic.
        if "." in name:
            raise ValueError(f"{what} name {name!r} contains '.', which would make the topic name ambiguous")
    topic = f"{INGEST_PREFIX}{db}.{table}".lower()
    _check_topic_name(topic)
    return topic


def _scalar_text(value: Any) -> str | None:
    """The text Doris parses for a date, datetime or Decimal; None for any other type."""
    if isinstance(value, datetime):  # before date: datetime is a date
        if value.tzinfo is not None:
            # Doris DATETIME carries no zone; guessing the table's zone would silently shift values.
            raise ValueError(f"datetime {value!r} has a time zone; pass a naive datetime in the zone you mean")
        fmt = "%Y-%m-%d %H:%M:%S.%f" if value.microsecond else "%Y-%m-%d %H:%M:%S"
        return value.strftime(fmt)
    if isinstance(value, date):
        return value.strftime("%Y-%m-%d")
    if isinstance(value, Decimal):
        if not value.is_finite():
            raise ValueError(f"decimal {value} is not a number Doris can store")
        return format(value, "f")  # never exponent notation ("1E+2"), which DECIMAL columns refuse
    return None


def _json_default(value: Any) -> Any:
    text = _scalar_text(value)
    if text is not None:
        return text
    if isinstance(value, bytes | bytearray | memoryview):
        # JSON has no bytes; picking an encoding (utf-8? base64?) for the caller would guess wrong.
        raise TypeError("bytes are not JSON; decode them to str (or base64) first")
    raise TypeError(f"{type(value).__name__} is not JSON serializable")


def _json_dumps(value: Any) -> str:
    # allow_nan=False: NaN/Infinity are not JSON and a loader would refuse the whole message.
    return json.dumps(value, default=_json_default, allow_nan=False, ensure_ascii=False, separators=(",", ":"))


class TableProducer:
    """Writes rows to one topic; use as a context manager so the last rows are flushed."""

    def __init__(
        self,
        topic: str,
        *,
        bootstrap: str | None = None,
        format: Literal["json", "csv"] = "json",
        columns: Sequence[str] | None = None,
        column_separator: str = "\t",
        key: KeyFn | None = None,
        config: Mapping[str, Any] | None = None,
    ) -> None:
        _check_topic_name(topic)
        if format not in ("json", "csv"):
            raise ValueError(f"format must be 'json' or 'csv', not {format!r}")
        if isinstance(columns, str):
            raise TypeError("columns must be a sequence of names, not a str")
        if format == "csv" and (not column_separator or "\n" in column_separator or "\r" in column_separator):
            raise ValueError(f"column_separator {column_separator!r} must be non-empty and hold no line break")
        self.topic = topic
        self.format = format
        self.columns: tuple[str, ...] | None = tuple(columns) if columns is not None else None
        self.column_separator = column_separator
        self._key = key
        # Another address than the configured cluster's is an outside cluster (or the local plain
        # listener): Strata's own security settings are not its; `config` carries any it needs.
        conf: dict[str, Any] = {
            **(settings().kafka_client() if bootstrap is None else {"bootstrap.servers": bootstrap}),
            "client.id": "strata-table-producer",
            # Idempotence makes librdkafka's internal retries safe: no duplicates, order kept.
            "enable.idempotence": True,
            "acks": "all",
            # A few ms of waiting turns a loop of send() calls into batches; lz4 is cheap on CPU.
            "linger.ms": 5,
            "compression.type": "lz4",
            # librdkafka's connection errors go to Python logging rather than straight to stderr.
            "logger": log,
        }
        conf.update(config or {})
        self._producer = Producer(conf)
        # Delivery callbacks run in whichever thread polls; the lock keeps counts right if
        # several threads share the producer.
        self._lock = threading.Lock()
        self._delivered = 0
        self._failed = 0
        self._errors: list[str] = []
        self._closed = False

    # ------------------------------------------------------------------ encoding

    def _encode_json(self, row: Row) -> bytes:
        if not isinstance(row, Mapping):
            raise TypeError(f"a JSON row must be a mapping of column to value, not {type(row).__name__}")
        self._check_keys(row)
        try:
            return _json_dumps(row).encode()
        except (TypeError, ValueError) as exc:
            # Encode column by column only now, on the error path, to name the culprit.
            for column, value in row.items():
                try:
                    _json_dumps(value)
                except (TypeError, ValueError) as col_exc:
                    raise ValueError(f"column {column!r}: {col_exc}") from None
            raise ValueError(f"row cannot be encoded as JSON: {exc}") from None

    def _encode_csv(self, row: Row) -> bytes:
        if isinstance(row, Mapping):
            if self.columns is None:
                raise ValueError("a CSV row given as a mapping needs `columns` to fix the field order")
            self._check_keys(row)
            # A missing column is NULL, as a missing key is in a JSON row.
            names: Sequence[Any] = self.columns
            values: Sequence[Any] = [row.get(c) for c in self.columns]
        elif isinstance(row, str | bytes | bytearray) or not isinstance(row, Sequence):
            raise TypeError(f"a CSV row must be a mapping or a sequence of values, not {type(row).__name__}")
        else:
            if self.columns is not None and len(row) != len(self.columns):
                raise ValueError(f"row has {len(row)} values but there are {len(self.columns)} columns")
            names = self.columns if self.columns is not None else range(len(row))
            values = row
        fields = [self._csv_field(name, value) for name, value in zip(names, values, strict=True)]
        return self.column_separator.join(fields).encode()

    def _csv_field(self, name: Any, value: Any) -> str:
        label = f"column {name!r}" if isinstance(name, str) else f"value #{name + 1}"
        if value is None:
            return CSV_NULL
        if isinstance(value, bool):  # before int: bool is an int, and Doris reads true/false
            return "true" if value else "false"
        if isinstance(value, bytes | bytearray | memoryview):
            raise ValueError(f"{label}: bytes have no CSV text; decode them to str first")
        if isinstance(value, float) and not math.isfinite(value):
            raise ValueError(f"{label}: {value} is not a number Doris can load")
        try:
            text = _scalar_text(value)
        except ValueError as exc:
            raise ValueError(f"{label}: {exc}") from None
        if text is None:
            text = str(value)
        # Doris' CSV has no quoting: a separator or line break inside a value would shift or split the row.
        if self.column_separator in text:
            raise ValueError(f"{label}: value contains the column separator {self.column_separator!r}")
        if "\n" in text or "\r" in text:
            raise ValueError(f"{label}: value contains a line break")
        return text

    def _check_keys(self, row: Mapping[str, Any]) -> None:
        if self.columns is None:
            return
        unknown = [k for k in row if k not in self.columns]
        if unknown:
            # Dropping them silently would hide a misspelt column until someone reads the table.
            raise ValueError(f"unknown column(s) {', '.join(map(repr, unknown))}; columns are {list(self.columns)}")

    def _message_key(self, row: Row) -> bytes | None:
        if self._key is None:
            return None
        mapping = row if isinstance(row, Mapping) else dict(zip(self.columns or (), row, strict=False))
        key = self._key(mapping)
        return key.encode() if isinstance(key, str) else key

    # ------------------------------------------------------------------ sending

    def _on_delivery(self, err: KafkaError | None, _msg: Message) -> None:
        with self._lock:
            if err is None:
                self._delivered += 1
                return
            self._failed += 1
            if len(self._errors) < MAX_ERRORS:
                self._errors.append(err.str())

    def send(self, row: Row) -> None:
        """Queues one row; encoding errors raise here, delivery errors surface at :meth:`flush`."""
        if self._closed:
            raise RuntimeError("the producer is closed")
        value = self._encode_json(row) if self.format == "json" else self._encode_csv(row)
        key = self._message_key(row)
        while True:
            try:
                self._producer.produce(self.topic, value=value, key=key, on_delivery=self._on_delivery)
                break
            except BufferError:
                # The local queue is full: serving delivery reports frees room. It cannot spin
                # forever, since queued rows either deliver or time out (message.timeout.ms).
                self._producer.poll(0.1)
        self._producer.poll(0)  # run the callbacks of rows delivered meanwhile

    def send_many(self, rows: Iterable[Row]) -> int:
        """Queues every row; returns how many."""
        n = 0
        for row in rows:
            self.send(row)
            n += 1
        return n

    def flush(self, timeout: float = 30.0) -> DeliveryReport:
        """Waits for every queued row's delivery report; raises DeliveryFailed unless all arrived."""
        undelivered = self._producer.flush(timeout)
        with self._lock:
            report = DeliveryReport(self._delivered, self._failed, tuple(self._errors), undelivered)
            self._delivered = self._failed = 0
            self._errors = []
        if not report.ok:
            raise DeliveryFailed(report)
        return report

    def close(self, timeout: float = 30.0) -> DeliveryReport:
        """Flushes and refuses further sends (a second close only flushes again)."""
        self._closed = True
        return self.flush(timeout)

    def __enter__(self) -> TableProducer:
        return self

    def __exit__(self, exc_type: type[BaseException] | None, exc: BaseException | None,
                 tb: TracebackType | None) -> None:
        if exc_type is None:
            self.close()
            return
        # The block already failed: still deliver what was sent, but let its error be the one seen.
        try:
            self.close()
        except DeliveryFailed as failed:
            log.error("while handling %r: %s", exc, failed)


def create_topic(topic: str, *, partitions: int = 1, bootstrap: str | None = None, timeout: float = 30.0) -> bool:
    """Creates `topic` unless it exists; True if this call created it. Returns once it is usable."""
    _check_topic_name(topic)
    # As TableProducer: another address is an outside cluster, without Strata's security settings.
    conf: dict[str, Any] = (settings().kafka_client(logger=log) if not bootstrap
                            else {"bootstrap.servers": bootstrap, "logger": log})
    admin = AdminClient(conf)
    # replication_factor=-1: the broker's default, so the same call works on one broker or many.
    futures = admin.create_topics([NewTopic(topic, num_partitions=partitions, replication_factor=-1)],
                                  request_timeout=timeout)
    created = True
    try:
        futures[topic].result(timeout=timeout)
    except KafkaException as exc:
        if exc.args[0].code() != KafkaError.TOPIC_ALREADY_EXISTS:
            raise
        created = False
    # The controller answers before every broker's metadata has the topic; a producer started
    # right away would see UNKNOWN_TOPIC_OR_PART for a while. Wait until each partition has a leader.
    deadline = time.monotonic() + timeout
    while True:
        md = admin.list_topics(topic, timeout=max(0.1, deadline - time.monotonic()))
        t = md.topics.get(topic)
        if t is not None and t.error is None and t.partitions and all(p.leader >= 0 for p in t.partitions.values()):
            return created
        if time.monotonic() >= deadline:
            raise TimeoutError(f"topic {topic} was not ready within {timeout:.0f} s")
        time.sleep(0.1)
