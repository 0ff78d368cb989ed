"""The sequencer: the only writer of `strata.events` (DESIGN §5).

It consumes `strata.commands` in a consumer group, decides each command against its own
projection, and produces the resulting events in one Kafka transaction; the last event of the transaction carries
the command offsets it consumed (`EventEnvelope.commands_position`) — so a crash at any instruction
never emits an event twice nor loses one. Commit timestamps are strictly increasing
(`max(previous + 1 ms, wall clock)`).

Exactly-once rests on confluent-kafka's transactions, not on faust (NOTES.md: faust's
exactly-once has open issues on rebalance).

The log is only replay-safe if the sequencer never decides a command twice (DESIGN §15):
- a `command_id` already answered on the log (projections.decided) is skipped, whether it came
  back as a duplicate record or through a replay;
- the stored position is never "repaired": one outside `strata.commands`' offsets (a forged or
  corrupt event, a topic recreated, commands lost to retention) stops the sequencer with an error
  and `/health` degraded, instead of rewinding to the earliest offset and deciding every command
  again. `auto.offset.reset` is `error` for the same reason.
"""

from __future__ import annotations

import logging
import threading
import time
from pathlib import Path

from confluent_kafka import OFFSET_BEGINNING, Consumer, KafkaError, KafkaException, Producer, TopicPartition

from projections.follower import EventFollower
from projections.kafka_batch import IDLE_FETCH_WAIT_MS, consume_available
from projections.projection import Projection
from schemas import events as ev
from schemas.config import Settings
from schemas.envelope import DecodeError, EventEnvelope, decode_command, encode, wrap_event
from schemas.errors import ErrorCode
from schemas.topics import COMMANDS_TOPIC, EVENTS_TOPIC
from streams.rules import Rejected, Rules

log = logging.getLogger(__name__)
TXN_TIMEOUT_S = 20.0
# The consumer errors that mean "your position is not on the log": fatal, never reset.
_OUT_OF_RANGE = {KafkaError._AUTO_OFFSET_RESET, KafkaError.OFFSET_OUT_OF_RANGE}


class PositionOutOfRange(Exception):
    """The commands position the log holds lies outside `strata.commands`: deciding from anywhere
    else could decide commands twice or skip them, so the sequencer stops."""


class Sequencer:
    def __init__(self, config: Settings, state_path: Path, *, instance: str = "sequencer") -> None:
        self.config = config
        self.state_path = state_path
        self.instance = instance
        self.commands_applied = 0
        self.commands_rejected = 0
        self.bad_commands = 0
        self.duplicate_commands = 0
        # How the commit path batches (what bench.concurrent_writers reports): transactions committed, the
        # commands decided into them, the seconds their produce-and-commit took, and the seconds spent on
        # batches from the first decision to the flush — busy / wall time says how close the sequencer is
        # to being the bottleneck, commands per transaction how much it batches across writers.
        self.transactions = 0
        self.transaction_commands = 0
        self.transaction_seconds = 0.0
        self.busy_seconds = 0.0
        self.healthy = False
        # Set when the sequencer stopped for good (PositionOutOfRange): what /health reports.
        self.fatal_error: str | None = None
        self._stop = threading.Event()
        self._last_ts = 0

    def _open(self) -> None:
        # init_transactions first: it fences a previous incarnation (a zombie, or this process
        # before a reopen) and aborts its open transaction, so the catch-up below sees every event
        # that will ever be committed before ours — the positions and state we decide from.
        self._producer = Producer({
            **self.config.kafka_client(),
            "transactional.id": f"strata-{self.instance}",
            "enable.idempotence": True,
            "acks": "all",
            "linger.ms": 0,
        })
        self._producer.init_transactions(30)
        self.projection = Projection(self.state_path)
        follower = EventFollower(self.projection, self.config, name=f"{self.instance}-catchup")
        follower.catch_up(timeout=300)
        follower.stop()
        self.rules = Rules(self.projection)
        self._last_ts = max((t.last_commit_ts_ms for t in self.projection.tables.values()), default=0)
        self._consumer = Consumer({
            **self.config.kafka_client(),
            "group.id": f"strata-{self.instance}",
            "enable.auto.commit": False,
            # Every start position is explicit; one the broker does not have is an error to stop on,
            # not a cue to re-decide the topic from its start.
            "auto.offset.reset": "error",
            "isolation.level": "read_committed",
            "fetch.wait.max.ms": IDLE_FETCH_WAIT_MS,
        })
        # Manual assignment, not a group subscription: one sequencer owns every command partition
        # (its transactional.id fences any zombie), and a restart starts at once instead of
        # waiting out the previous member's session timeout.
        metadata = self._consumer.list_topics(COMMANDS_TOPIC, timeout=10)
        partitions = sorted(metadata.topics[COMMANDS_TOPIC].partitions)
        starts = dict(self.projection.commands_position)
        unknown = [TopicPartition(COMMANDS_TOPIC, p) for p in partitions if p not in starts]
        if unknown:  # a log written before positions rode on the events: the group offsets it committed then
            starts.update({tp.partition: tp.offset for tp in self._consumer.committed(unknown, timeout=10)})
        self._check_in_range(starts)
        self._consumer.assign([TopicPartition(COMMANDS_TOPIC, p, starts[p] if starts[p] >= 0 else OFFSET_BEGINNING)
                               for p in partitions])

    def _check_in_range(self, starts: dict[int, int]) -> None:
        """Every stored position must lie within [log start, high watermark] of its partition."""
        for partition, start in sorted(starts.items()):
            if start < 0:
                continue  # no position yet: the partition is read from its beginning
            low, high = self._consumer.get_watermark_offsets(TopicPartition(COMMANDS_TOPIC, partition),
                                                             timeout=10, cached=False)
            if not low <= start <= high:
                raise PositionOutOfRange(
                    f"the position strata.events holds for {COMMANDS_TOPIC} partition {partition} is offset "
                    f"{start}, outside the partition's offsets [{low}, {high}] (a forged or corrupt event, a "
                    f"recreated topic, or commands lost to retention); the sequencer stops rather than "
                    f"decide commands again — repair the log's position, then restart the worker")

    def _next_ts(self) -> int:
        self._last_ts = max(self._last_ts + 1, int(time.time() * 1000))
        return self._last_ts

    def _decide(self, raw: bytes | None) -> tuple[EventEnvelope | None, int | None]:
        try:
            command = decode_command(raw)
        except DecodeError as exc:
            self.bad_commands += 1
            log.error("sequencer: skipped undecodable command: %s", exc)
            return None, None
        first = self.projection.command_outcome(command.command_id)
        if first is not None:
            # Its proposer already has (or will read) the first answer from strata.events.
            self.duplicate_commands += 1
            log.warning("sequencer: command %s (%s) was already decided as %s (event %s); not deciding it again",
                        command.command_id, command.type, first.type, first.event_id)
            return None, None
        ts = self._next_ts()
        try:
            decision = self.rules.decide(command.payload, ts)
            self.commands_applied += 1
            return wrap_event(decision.event, table_id=decision.table_id, commit_ts_ms=ts,
                              command_id=command.command_id), decision.table_id
        except Rejected as rejected:
            code, reason = int(rejected.code), rejected.reason
        except Exception as exc:  # noqa: BLE001 - a bug in one rule must not stop the log
            log.exception("sequencer: internal error deciding %s", command.type)
            code, reason = int(ErrorCode.UNKNOWN_ERROR), f"internal error deciding {command.type}: {exc}"
        self.commands_rejected += 1
        event = ev.CommandRejected(command_type=command.type, code=code, reason=reason)
        return wrap_event(event, table_id=command.table_id, commit_ts_ms=ts,
                          command_id=command.command_id), command.table_id


    def _process(self, messages: list) -> None:
        started = time.perf_counter()
        delivered: list[tuple[int, int]] = []

        def on_delivery(err: KafkaError | None, msg: object) -> None:
            if err is None:
                delivered.append((msg.partition(), msg.offset()))  # type: ignore[attr-defined]

        decided: list[tuple[EventEnvelope, int | None]] = []
        # strata.commands partition → the offset of the next command to read: the one after the last
        # read here. (librdkafka's `position()` answers the same, or past a transaction marker, which a
        # restart skips anyway; called here under load it took 340 µs of wall time holding the GIL.)
        position: dict[int, int] = {}
        for message in messages:
            error = message.error()
            if error is not None:
                if error.code() in _OUT_OF_RANGE:
                    raise PositionOutOfRange(f"{COMMANDS_TOPIC} partition {message.partition()}: {error.str()}; "
                                             "the sequencer stops rather than reset its position")
                continue
            position[message.partition()] = message.offset() + 1
            envelope, key = self._decide(message.value())
            if envelope is None:
                continue
            # Fold at once so the next command in this batch is decided against it.
            self.projection.apply(envelope, EVENTS_TOPIC, 0, -1)
            decided.append((envelope, key))
        if not decided:
            return  # only undecodable commands: re-read (and skipped again) after a restart
        last, last_key = decided[-1]
        decided[-1] = (last.model_copy(update={"commands_position": position}), last_key)
        self.projection.commands_position.update(position)
        sending = time.perf_counter()
        self._producer.begin_transaction()
        for envelope, key in decided:
            self._producer.produce(EVENTS_TOPIC, key=str(key if key is not None else "catalog").encode(),
                                   value=encode(envelope), on_delivery=on_delivery)
        # Bounded: a broker restart mid-transaction must reopen (init_transactions aborts what is
        # open), not stall every write of the stack until the coordinator expires the transaction.
        self._producer.commit_transaction(TXN_TIMEOUT_S)
        committed = time.perf_counter()
        for partition, offset in delivered:
            self.projection.advance(EVENTS_TOPIC, partition, offset)
        with self.projection.lock:
            self.projection.flush()
        self.transactions += 1
        self.transaction_commands += len(decided)
        self.transaction_seconds += committed - sending
        self.busy_seconds += time.perf_counter() - started

    def run(self) -> None:
        """Runs until `stop`; on a transaction error it rebuilds its state from RocksDB and the log."""
        while not self._stop.is_set():
            try:
                self._open()
                self.healthy = True
                while not self._stop.is_set():
                    messages = consume_available(self._consumer, 500, 0.1)
                    if messages:
                        self._process(messages)
            except PositionOutOfRange as exc:
                self.healthy = False
                self.fatal_error = str(exc)
                log.error("sequencer: STOPPED: %s", exc)
                return
            except KafkaException as exc:
                self.healthy = False
                log.error("sequencer: %s; restarting from the log", exc)
                time.sleep(1)
            except Exception:  # noqa: BLE001 - e.g. a catch-up that timed out: retry, never end the thread
                self.healthy = False
                log.exception("sequencer: failed; restarting from the log")
                time.sleep(1)
            finally:
                self._close()

    def _close(self) -> None:
        for closer in (getattr(self, "_consumer", None), getattr(self, "projection", None)):
            if closer is not None:
                try:
                    closer.close()
                except Exception:  # noqa: BLE001 - closing after a failure must not mask it
                    log.debug("sequencer: close failed", exc_info=True)
        self._consumer = None  # type: ignore[assignment]
        self.projection = None  # type: ignore[assignment]

    def stop(self) -> None:
        self._stop.set()
