"""Keeps a projection in step with `strata.events`.

The follower assigns itself every partition of the topic at the offsets the projection stored
(no consumer group: the projection owns its position), reads committed records only, folds them
in batches and flushes each batch atomically with its offsets. A record it cannot decode
(`decode_errors`), or an event the fold cannot apply (`apply_errors`), is counted, logged and
skipped — never a crash.
"""

from __future__ import annotations

import gc
import logging
import threading
import time
from collections.abc import Callable

from confluent_kafka import OFFSET_BEGINNING, Consumer, IsolationLevel, KafkaError, KafkaException, TopicPartition
from confluent_kafka.admin import AdminClient, OffsetSpec

from projections.batches import Record, fold_batch
from projections.kafka_batch import IDLE_FETCH_WAIT_MS, consume_available
from projections.projection import Projection
from schemas.config import Settings
from schemas.envelope import DecodeError, EventEnvelope, decode_event
from schemas.topics import EVENTS_TOPIC
from storage.grouped_calls import GroupedCalls

# Answers while a partition's leadership moves to another broker: worth a retry, not an error.
_LEADER_MOVED = (KafkaError.NOT_LEADER_FOR_PARTITION, KafkaError.LEADER_NOT_AVAILABLE, KafkaError._TIMED_OUT,
                 KafkaError._TRANSPORT, KafkaError.REQUEST_TIMED_OUT)

log = logging.getLogger(__name__)

Listener = Callable[[EventEnvelope], None]
# True for the first event a follower must not fold: it then folds nothing more of that partition.
Halt = Callable[[EventEnvelope], bool]


class EventFollower:
    def __init__(self, projection: Projection, config: Settings, *, name: str,
                 listener: Listener | None = None, topic: str = EVENTS_TOPIC, halt: Halt | None = None) -> None:
        """`halt` (optional) folds only a prefix of each partition: the first event it is true for,
        and everything after it on that partition, is left unapplied (`strata replay --until`)."""
        self.projection = projection
        self.topic = topic
        self.name = name
        self._listeners: list[Listener] = [listener] if listener is not None else []
        self._consumer = Consumer({
            **config.kafka_client(),
            "group.id": f"strata-follower-{name}",
            "enable.auto.commit": False,
            "isolation.level": "read_committed",
            "fetch.wait.max.ms": IDLE_FETCH_WAIT_MS,
            "fetch.min.bytes": 1,
            "enable.partition.eof": False,
        })
        # Watermark queries get a consumer of their own: from another thread, on the consumer that
        # is blocked in consume(), they stall until that call returns.
        self._probe = Consumer({**config.kafka_client(), "group.id": f"strata-probe-{name}",
                                "enable.auto.commit": False, "isolation.level": "read_committed"})
        # Every statement asks for the log's end (read-your-writes), and a probe is a broker round
        # trip on one consumer: concurrent callers share probes instead of queueing for it.
        self._probes: GroupedCalls[None, dict[int, int]] = GroupedCalls(
            lambda _: {None: {p: self._end_offset(p) for p in self._partitions}})
        # A read fence's request for the log's end (`request_end_offsets`): an admin client's request is
        # sent and answered by librdkafka's threads, so no Python thread has to get the GIL (held by the
        # reader binding its statement) before the request can leave. Made on first use: only a SQL
        # server's follower has readers, and a client costs threads and a broker connection.
        self._kafka_client = config.kafka_client()
        self._admin: AdminClient | None = None
        self._admin_made = threading.Lock()
        self._applied = threading.Condition()
        self._stop = threading.Event()
        self._thread: threading.Thread | None = None
        self._flushed = projection.offsets()
        self.decode_errors = 0
        # Decoded events the fold raised on, skipped (see `_skipped`).
        self.apply_errors = 0
        self.applied_events = 0
        self._halt = halt
        # Partitions stopped by `halt`; they count as caught up, since nothing more of them is wanted.
        self.halted: set[int] = set()
        self._assign()

    def add_listener(self, listener: Listener) -> None:
        """Also calls `listener` with every event folded from now on (after it is flushed)."""
        self._listeners.append(listener)

    def _assign(self) -> None:
        metadata = self._consumer.list_topics(self.topic, timeout=10)
        topic_meta = metadata.topics.get(self.topic)
        if topic_meta is None or topic_meta.error is not None:
            raise RuntimeError(f"topic {self.topic} is not available: {topic_meta and topic_meta.error}")
        stored = self.projection.offsets()
        self._partitions = sorted(topic_meta.partitions)
        self._consumer.assign([
            TopicPartition(self.topic, p, stored.get((self.topic, p), OFFSET_BEGINNING))
            for p in self._partitions])

    def _note_position(self) -> None:
        """Records how far the projection is, counting transaction markers as passed.

        The log's end offset counts commit markers, which are never delivered; librdkafka's
        position steps over them, so it — not the last applied offset — is compared with the end.
        Everything before it has been delivered to this (single) consuming thread and flushed."""
        flushed = dict(self.projection.offsets())
        for tp in self._consumer.position([TopicPartition(self.topic, p) for p in self._partitions]):
            # A halted partition's consumer position is past records it did not fold.
            if tp.offset >= 0 and tp.partition not in self.halted:
                key = (self.topic, tp.partition)
                flushed[key] = max(flushed.get(key, 0), tp.offset)
        self._flushed = flushed
        with self._applied:
            self._applied.notify_all()

    def end_offsets(self) -> dict[int, int]:
        """The log's end per partition (the last stable offset, for read_committed) as of this call:
        from a probe begun after the call (shared with the calls made meanwhile, `GroupedCalls`)."""
        return self._probes(None)

    def _end_offset(self, partition: int, retry_for_s: float = 15.0) -> int:
        """One partition's end; a leader that just moved (a broker of the cluster died) is waited
        for a while instead of failing the statement that asked."""
        deadline = time.monotonic() + retry_for_s
        while True:
            try:
                _, high = self._probe.get_watermark_offsets(TopicPartition(self.topic, partition), timeout=10,
                                                            cached=False)
                return int(high)
            except KafkaException as exc:
                error = exc.args[0] if exc.args else None
                transient = isinstance(error, KafkaError) and (error.retriable() or error.code() in _LEADER_MOVED)
                if not transient or time.monotonic() > deadline:
                    raise
                time.sleep(0.2)

    def request_end_offsets(self) -> Callable[[], dict[int, int]]:
        """The log's end per partition as of this call (the last stable offset), asked for now; the call
        returned waits for the answer. If the request fails (a partition's leader moving, a broker
        restarting), the answer is `end_offsets`', whose probe retries such errors for a while."""
        with self._admin_made:
            if self._admin is None:
                self._admin = AdminClient(self._kafka_client)
            admin = self._admin
        futures = admin.list_offsets(
            {TopicPartition(self.topic, p): OffsetSpec.latest() for p in self._partitions},
            isolation_level=IsolationLevel.READ_COMMITTED, request_timeout=10)

        def answer() -> dict[int, int]:
            try:
                return {tp.partition: int(f.result().offset) for tp, f in futures.items()}
            except KafkaException as exc:
                log.info("follower %s: log-end request failed (%s); probing again", self.name, exc)
                return self.end_offsets()
        return answer

    def position(self) -> dict[int, int]:
        """Offsets whose effects are flushed, so a reader that sees them can read RocksDB too."""
        return {p: self._flushed.get((self.topic, p), 0) for p in self._partitions}

    def poll_once(self, max_records: int = 2000, timeout: float = 0.05) -> int:
        """Applies up to `max_records` records; returns how many records were consumed."""
        messages = consume_available(self._consumer, max_records, timeout)
        if not messages:
            self._note_position()
            return 0
        applied: list[EventEnvelope] = []
        with self.projection.lock:
            self._fold(messages, applied)
        self._note_position()
        self.applied_events += len(applied)
        for listener in self._listeners:
            for envelope in applied:
                listener(envelope)
        return len(messages)

    def _fold(self, messages: list, applied: list[EventEnvelope]) -> None:
        applied.extend(fold_batch(self.projection, self._decode(messages), self._skipped))

    def _skipped(self, envelope: EventEnvelope, topic: str, partition: int, offset: int) -> None:
        # A well-formed event naming what the projection lacks (a dropped table's id, say). Raising
        # would end this thread, and at the next start `catch_up` would raise on the same record
        # forever: the log keeps it. The fold is deterministic, so every replica and every replay
        # skips it the same way.
        self.apply_errors += 1
        log.exception("follower %s: skipped event %s at %s/%d@%d that the projection cannot apply",
                      self.name, envelope.type, topic, partition, offset)

    def _decode(self, messages: list) -> list[Record]:
        """The records to fold (an undecodable one counted, with no event); a record past a `halt`
        stops its partition and is left out, with everything after it there."""
        records: list[Record] = []
        for message in messages:
            if message.error():
                log.warning("follower %s: consume error %s", self.name, message.error())
                continue
            if message.partition() in self.halted:
                continue
            try:
                envelope = decode_event(message.value())
            except DecodeError as exc:
                self.decode_errors += 1
                log.error("follower %s: skipped record at %s/%d@%d: %s", self.name, message.topic(),
                          message.partition(), message.offset(), exc)
                records.append((message.topic(), message.partition(), message.offset(), None))
                continue
            if self._halt is not None and self._halt(envelope):
                self._stop_partition(message.partition())
                continue
            records.append((message.topic(), message.partition(), message.offset(), envelope))
        return records

    def _stop_partition(self, partition: int) -> None:
        self.halted.add(partition)
        # Paused, so the records past the halt are not fetched again only to be skipped.
        self._consumer.pause([TopicPartition(self.topic, partition)])

    def _reached(self, target: dict[int, int], position: dict[int, int] | None = None) -> bool:
        """Whether `position` (default: the projection's now) is at `target` or past it."""
        position = self.position() if position is None else position
        return all(p in self.halted or position.get(p, 0) >= end for p, end in target.items())

    def catch_up(self, timeout: float = 60.0, progress: Callable[[int, int], None] | None = None) -> None:
        """Applies records until the projection reaches the log's end as of now (this thread)."""
        target = self.end_offsets()
        deadline = time.monotonic() + timeout
        total = sum(target.values())
        # Folding makes many short-lived, acyclic objects; the cyclic collector's passes over them
        # cost about half of a replay's time, and nothing cyclic is left behind for it to find.
        collecting = gc.isenabled()
        gc.disable()
        try:
            while not self._reached(target):
                if time.monotonic() > deadline:
                    raise TimeoutError(f"follower {self.name}: not caught up with {self.topic} in {timeout}s")
                self.poll_once(max_records=5000, timeout=0.2)
                if progress is not None:
                    # A halted partition is done: it counts as at its end, so the bar completes.
                    progress(sum(target.get(p, o) if p in self.halted else o for p, o in self.position().items()),
                             total)
        finally:
            if collecting:
                gc.enable()

    def wait_until(self, target: dict[int, int], timeout: float) -> bool:
        """Blocks (another thread runs the follower) until the projection reaches `target`."""
        deadline = time.monotonic() + timeout
        with self._applied:
            while not self._reached(target):
                left = deadline - time.monotonic()
                if left <= 0:
                    return False
                self._applied.wait(min(left, 0.5))
        return True

    def wait_for_now(self, timeout: float) -> bool:
        """Read-your-writes: wait until everything on the log when called is applied."""
        return self.wait_until(self.end_offsets(), timeout)

    def fence(self) -> ReadFence:
        """`wait_for_now` for a reader that goes on meanwhile (`ReadFence`)."""
        return ReadFence(self)

    def start(self) -> None:
        self._thread = threading.Thread(target=self._run, name=f"follower-{self.name}", daemon=True)
        self._thread.start()

    def _run(self) -> None:
        while not self._stop.is_set():
            try:
                self.poll_once()
            except KafkaException as exc:
                log.warning("follower %s: %s; retrying", self.name, exc)
                time.sleep(0.5)

    def stop(self) -> None:
        self._stop.set()
        if self._thread is not None:
            self._thread.join(timeout=5)
        self._consumer.close()
        self._probe.close()


class ReadFence:
    """Read-your-writes without waiting first. `wait_for_now` costs a statement a broker round trip
    (1–3 ms) before it may look at the projection; a fence asks for the log's end (the request in
    flight on librdkafka's threads) while the statement resolves what it reads (snapshots, files, its
    executor's plan), then `held` says whether that read stands: it does when the projection, before
    the read began, already held everything on the log when the fence was made — as it does whenever
    the replica is current. Otherwise `held` waits for the replica to hold it, and the caller reads again."""

    def __init__(self, follower: EventFollower) -> None:
        self._follower = follower
        # Taken before the caller reads anything: the least its read can have seen (positions only grow).
        self._position = follower.position()
        self._ends = follower.request_end_offsets()

    def held(self, timeout: float) -> bool:
        """True: what was read since the fence was made holds everything on the log as of then. False:
        it may not, and the projection holds it now (read again). TimeoutError when the replica does
        not catch up within `timeout`; the probe's own error (Kafka unreachable) as it came."""
        ends = self._ends()
        if self._follower._reached(ends, self._position):
            return True
        if not self._follower.wait_until(ends, timeout):
            raise TimeoutError(f"follower {self._follower.name}: not caught up with {self._follower.topic} "
                               f"in {timeout}s")
        return False
