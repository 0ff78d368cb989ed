"""Proposes commands and learns their fate from the log, through a projection replica.

A writer (the SQL server, an agent) sends a command to `strata.commands` and blocks until its
replica has *applied* the event that answers it — so the statement that follows reads its own
write. It lives beside the projections because its answer is a projection's progress; both the
query server and the stream agents use it.
"""

from __future__ import annotations

import threading
import time
from collections import OrderedDict
from dataclasses import dataclass

from confluent_kafka import KafkaError, Producer

from schemas import events as ev
from schemas.commands import Command
from schemas.config import Settings
from schemas.envelope import EventEnvelope, encode, wrap_command
from schemas.topics import COMMANDS_TOPIC

# How long a command may take to reach the broker before the proposal fails as unsent.
_DELIVERY_TIMEOUT_S = 10.0
# How long the thread serving delivery reports outlives the last send in flight: a writer's next
# statement usually comes sooner, and then needs no new thread.
_DELIVERY_SERVER_LINGER_S = 1.0
# How many recent answers a proposer remembers, so a proposal of a command_id already answered (a
# retry, or another writer proposing the same id) learns that answer: the sequencer skips the
# duplicate, so no second answer would ever come.
_RECENT_ANSWERS = 4096


class CommandFailed(Exception):
    """The sequencer rejected the command; `code` is the MySQL error code it chose."""

    def __init__(self, code: int, reason: str) -> None:
        super().__init__(reason)
        self.code = code
        self.reason = reason


class CommandTimeout(Exception):
    pass


@dataclass
class _Waiter:
    done: threading.Event
    envelope: EventEnvelope | None = None


class Proposer:
    def __init__(self, config: Settings, *, origin: str) -> None:
        self.config = config
        self.origin = origin
        self._waiters: dict[str, _Waiter] = {}
        self._recent: OrderedDict[str, EventEnvelope] = OrderedDict()
        self._lock = threading.Lock()
        # Sends whose delivery report has not come yet, and whether a thread serves the reports.
        self._in_flight = 0
        self._serving = False
        self._producer = Producer({
            **config.kafka_client(),
            "enable.idempotence": True,
            "acks": "all",
            "linger.ms": 0,
        })

    def on_event(self, envelope: EventEnvelope) -> None:
        """The follower's listener: called after the event's batch is flushed."""
        if envelope.command_id is None:
            return
        with self._lock:
            # Under the lock with the waiters: a proposal either finds this answer here or is
            # waiting when it comes, never neither.
            self._recent[envelope.command_id] = envelope
            if len(self._recent) > _RECENT_ANSWERS:
                self._recent.popitem(last=False)
            waiter = self._waiters.get(envelope.command_id)
        if waiter is not None:
            waiter.envelope = envelope
            waiter.done.set()

    def _sending(self) -> None:
        """Counts one more send in flight and makes sure a thread serves the delivery reports.

        One thread polls the shared producer for everyone and each writer waits on its own event. When
        every writer polled, a writer whose report another one served stayed blocked in its own poll
        until that timed out (up to 50 ms per commit with many writers); `flush()` instead waited for
        the whole queue, others' commands included."""
        with self._lock:
            self._in_flight += 1
            if self._serving:
                return
            self._serving = True
        threading.Thread(target=self._serve_deliveries, name=f"deliveries-{self.origin}", daemon=True).start()

    def _delivered(self) -> None:
        with self._lock:
            self._in_flight -= 1

    def _serve_deliveries(self) -> None:
        """Polls the producer while sends are in flight, and a while after (then ends, so an unused
        proposer holds no thread)."""
        idle_since: float | None = None
        while True:
            self._producer.poll(0.05)
            with self._lock:
                if self._in_flight > 0:
                    idle_since = None
                    continue
                now = time.monotonic()
                idle_since = idle_since or now
                if now - idle_since >= _DELIVERY_SERVER_LINGER_S:
                    # Under the lock that `_sending` counts under: a send either sees this thread
                    # still serving, or starts the next one.
                    self._serving = False
                    return

    def propose(self, command: Command, *, table_id: int | None = None, timeout: float | None = None,
                transaction: Producer | None = None, command_id: str | None = None) -> EventEnvelope:
        """Sends `command` and returns the event that accepted it; raises CommandFailed if rejected.

        With `transaction` (a transactional producer whose transaction the caller began, e.g. with
        dead-letter records in it), the command is sent in that transaction, which is then
        committed: the sequencer reads commands read-committed, so the command and the caller's
        records become visible together or not at all.

        With `command_id` (default: a new one), a retry of the same proposal is answered with the
        first outcome: the sequencer decides each command_id once. A retry whose first answer this
        replica has already applied is answered from the replica's recent answers without sending;
        one older than the last `_RECENT_ANSWERS` answers waits out `timeout`."""
        envelope = wrap_command(command, table_id=table_id, issued_ts_ms=int(time.time() * 1000),
                                origin=self.origin, command_id=command_id)
        waiter = _Waiter(threading.Event())
        with self._lock:
            # A transaction's own records must still be committed, so it is always sent.
            known = self._recent.get(command_id) if command_id is not None and transaction is None else None
            if known is None:
                self._waiters[envelope.command_id] = waiter
        if known is not None:
            return _outcome(known)
        errors: list[str] = []
        delivered = threading.Event()

        def on_delivery(err: KafkaError | None, _msg: object) -> None:
            if err is not None:
                errors.append(str(err))
            if transaction is None:
                self._delivered()
            delivered.set()

        try:
            key = str(table_id if table_id is not None else "catalog").encode()
            if transaction is not None:
                transaction.produce(COMMANDS_TOPIC, key=key, value=encode(envelope), on_delivery=on_delivery)
                transaction.commit_transaction(30)
            else:
                self._sending()  # counted first: its report may be served the moment it is queued
                try:
                    self._producer.produce(COMMANDS_TOPIC, key=key, value=encode(envelope), on_delivery=on_delivery)
                except BaseException:
                    self._delivered()  # never queued: no report will come
                    raise
                delivered.wait(_DELIVERY_TIMEOUT_S)
            if errors:
                raise CommandFailed(1105, f"could not send the command to {COMMANDS_TOPIC}: {errors[0]}")
            if not waiter.done.wait(timeout or self.config.command_timeout_s):
                raise CommandTimeout(f"no answer to {command.TYPE} within "
                                     f"{timeout or self.config.command_timeout_s:.0f}s — is the worker running?")
        finally:
            with self._lock:
                self._waiters.pop(envelope.command_id, None)
        assert waiter.envelope is not None
        return _outcome(waiter.envelope)


def _outcome(answer: EventEnvelope) -> EventEnvelope:
    if isinstance(answer.payload, ev.CommandRejected):
        raise CommandFailed(answer.payload.code, answer.payload.reason)
    return answer
