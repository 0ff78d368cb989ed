"""One routine load job at work: read its Kafka partitions from where the log says the job
stopped, cut batches by time, rows or bytes, turn them into rows, and commit each batch's rows,
its dead-letter records and its offsets together.

Exactly once rests on the log, not on consumer groups: the task never commits offsets to Kafka.
Each batch's `CommitRowsets` names the offsets it started and ended at, the sequencer accepts it
only where the job's previous batch ended, and a restarted task (after kill -9, a broker restart,
another worker taking over) starts from the offsets the projection holds. The batch's DLQ records
and its command go in one Kafka transaction whose transactional.id is the job's: a second task of
the same job fences the first, and a rejected or aborted batch leaves no DLQ record behind.
"""

from __future__ import annotations

import hashlib
import logging
import threading
import time
from concurrent.futures import Future, ThreadPoolExecutor
from dataclasses import dataclass, field

import pyarrow as pa
from confluent_kafka import OFFSET_BEGINNING as KAFKA_BEGINNING
from confluent_kafka import Consumer, KafkaError, KafkaException, Message, Producer, TopicPartition

from projections.load_source import LoadedBatch, LoadPlan, load_batch, plan_load, records_table
from projections.proposer import CommandFailed, CommandTimeout
from projections.replica import Replica
from projections.routine_loads import RoutineLoadJob
from projections.rows import RowsRejected, allocator, write_rowsets
from schemas import commands as cmd
from schemas.config import Settings
from schemas.errors import ErrorCode
from schemas.model import OFFSET_BEGINNING, LoadProgress
from schemas.topics import DLQ_TOPIC
from storage.sandbox import sandboxed_connection
from storage.secrets import SecretBox
from storage.tiers import LocalTiers

log = logging.getLogger(__name__)
_POLL_S = 0.2
_CONSUME_CHUNK = 10_000
# Consumer errors that no retry will cure: the job pauses with the reason.
_FATAL = {KafkaError.UNKNOWN_TOPIC_OR_PART, KafkaError._UNKNOWN_PARTITION, KafkaError.TOPIC_AUTHORIZATION_FAILED,
          KafkaError._UNKNOWN_TOPIC}


# Rejections that say the job may not load at all (its user's privileges, its source topic).
_DENIED = {ErrorCode.TABLE_ACCESS_DENIED, ErrorCode.SPECIFIC_ACCESS_DENIED}


class JobHalted(Exception):
    """The job is no longer RUNNING here (paused, stopped, dropped, or fenced by another task)."""


@dataclass
class TaskStats:
    loaded_rows: int = 0
    error_rows: int = 0
    batches: int = 0
    conflicts: int = 0
    last_batch_s: float = 0.0
    errors: list[str] = field(default_factory=list)


@dataclass
class _Batch:
    messages: list[Message]
    start: dict[int, int]
    end: dict[int, int]
    size: int


class RoutineLoadTask:
    def __init__(self, config: Settings, replica: Replica, tiers: LocalTiers, job_key: str,
                 stop: threading.Event) -> None:
        self.config, self.tiers = config, tiers
        self.projection, self.proposer, self.follower = replica.projection, replica.proposer, replica.follower
        self.key = job_key
        self.stop = stop
        self.stats = TaskStats()
        self._plan: LoadPlan | None = None
        self._positions: dict[int, int] = {}
        # The job's COLUMNS and WHERE are user SQL: evaluated where no file, URL or setting is reachable.
        self._cursor = sandboxed_connection()

    # -- the job as the log has it ---------------------------------------------------------------
    def job(self) -> RoutineLoadJob:
        job = self.projection.routine_loads.get(self.key)
        if job is None or job.state != "RUNNING":
            raise JobHalted(f"job {self.key} is {job.state if job else 'gone'}")
        table = self.projection.tables.get(job.table_id)
        if table is None or table.dropped_ts_ms is not None:  # the fold stops the job with its table
            raise JobHalted(f"the table of job {self.key} was dropped")
        return job

    def _change(self, state: str, reason: str) -> None:
        job = self.projection.routine_loads.get(self.key)
        if job is None:
            return
        db = self.projection.databases.get(job.db_id)
        if db is None:
            return
        try:
            self.proposer.propose(cmd.ChangeRoutineLoad(db=db.name, job=job.name, state=state,  # type: ignore[arg-type]
                                                        table_id=job.table_id, reason=reason,
                                                        from_states=("RUNNING",)), table_id=job.table_id)
        except (CommandFailed, CommandTimeout) as exc:
            log.warning("routine load %s: could not change state to %s: %s", self.key, state, exc)

    # -- running ---------------------------------------------------------------------------------
    def run(self) -> None:
        """Loads until the job stops RUNNING or the worker stops; transient failures back off."""
        backoff = 1.0
        while not self.stop.is_set():
            try:
                self._run_once()
                return
            except JobHalted as halted:
                log.info("routine load %s halted: %s", self.key, halted)
                return
            except Exception as exc:  # noqa: BLE001 - a bad pass must not end the job; the next resumes from the log
                self.stats.errors = [*self.stats.errors[-9:], str(exc)]
                log.exception("routine load %s failed; retrying in %.0fs", self.key, backoff)
                if self.stop.wait(backoff):
                    return
                backoff = min(backoff * 2, 30.0)

    def _run_once(self) -> None:
        job = self.job()
        spec = job.spec
        box = SecretBox(self.config.secret_key_file)
        client = {k.removeprefix("property."): v for k, v in box.open_properties(dict(spec.client_properties)).items()}
        consumer = Consumer({
            # librdkafka's defaults fetch 1 MB per partition and stop prefetching at 100k messages,
            # which starves a batch of 200k small records; the job's own properties still win.
            "fetch.max.bytes": 64 * 1024 * 1024,
            "max.partition.fetch.bytes": 16 * 1024 * 1024,
            "queued.min.messages": max(100_000, spec.max_batch_rows),
            **client,
            "bootstrap.servers": spec.broker_list,
            "group.id": client.get("group.id", f"strata-routine-load-{job.job_id}"),
            "enable.auto.commit": False,  # the offsets live on strata.events, with the rows
            "enable.auto.offset.store": False,
            "auto.offset.reset": "earliest",
            "isolation.level": "read_committed",
            "enable.partition.eof": False,
        })
        producer = Producer({**self.config.kafka_client(),
                             "transactional.id": f"strata-routine-load-{job.job_id}",
                             "linger.ms": 5, "compression.type": "lz4"})
        # Batch N commits in a thread of its own while batch N+1 is read: reading and committing
        # each take about half a batch's time. Batches still commit one at a time, in order.
        committer = ThreadPoolExecutor(max_workers=1, thread_name_prefix=f"routine-load-{job.job_id}-commit")
        pending: Future[bool] | None = None
        try:
            producer.init_transactions(30)  # fences any other task of this job, aborts its open batch
            self._assign(consumer, job)
            while not self.stop.is_set():
                try:
                    batch = self._collect(consumer, self.job())
                except JobHalted:
                    if pending is not None:
                        pending.result()  # what was read before the pause still commits
                    raise
                if pending is not None and not pending.result():
                    self._assign(consumer, self.job())  # refused: what was read since is void too
                    batch = None
                pending = committer.submit(self._commit, producer, batch) if batch is not None else None
            if pending is not None:
                pending.result()
        finally:
            committer.shutdown(wait=True)
            consumer.close()

    def _assign(self, consumer: Consumer, job: RoutineLoadJob) -> None:
        self._positions = {p: job.next_offset(p) for p in job.spec.start_offsets}
        consumer.assign([TopicPartition(job.spec.topic, p, KAFKA_BEGINNING if o == OFFSET_BEGINNING else o)
                         for p, o in self._positions.items()])

    def _collect(self, consumer: Consumer, job: RoutineLoadJob) -> _Batch | None:
        """Reads until the batch is full (rows or bytes) or `max_batch_interval` has passed."""
        spec = job.spec
        deadline = time.monotonic() + spec.max_batch_interval_s
        messages: list[Message] = []
        size = 0
        start: dict[int, int] = {}
        end: dict[int, int] = {}
        while len(messages) < spec.max_batch_rows and size < spec.max_batch_size and not self.stop.is_set():
            left = deadline - time.monotonic()
            if left <= 0:
                break
            got = consumer.consume(num_messages=min(_CONSUME_CHUNK, spec.max_batch_rows - len(messages)),
                                   timeout=min(_POLL_S, left))
            for message in got:
                error = message.error()
                if error is not None:
                    self._consumer_error(error)
                    continue
                partition, offset = message.partition(), message.offset()
                assert partition is not None and offset is not None  # a message without an error has both
                if partition not in start:
                    start[partition] = self._positions[partition]
                end[partition] = offset + 1
                value = message.value()
                size += len(value) if value else 0
                messages.append(message)
            if not got and self.projection.routine_loads[self.key].state != "RUNNING":
                # Paused or stopped meanwhile: drop what was read, the log still says where to resume.
                raise JobHalted(f"job {self.key} is no longer RUNNING")
        if not messages:
            return None
        self._positions.update(end)  # the next batch starts here, whether or not this one is committed yet
        return _Batch(messages, start, end, size)

    def _consumer_error(self, error: KafkaError) -> None:
        if error.code() in _FATAL:
            reason = f"ErrorReason{{Kafka: {error.str()}}}"
            self._change("PAUSED", reason)
            raise JobHalted(reason)
        log.warning("routine load %s: consumer error %s", self.key, error.str())

    def _plan_for(self, job: RoutineLoadJob) -> LoadPlan:
        table = self.projection.tables[job.table_id]
        if self._plan is None or self._plan.schema_version != table.schema_now.schema_version:
            try:
                self._plan = plan_load(job.spec, table)
            except RowsRejected as exc:  # a schema change took a column the job fills
                reason = f"ErrorReason{{the job no longer fits table '{table.name}': {exc.message}}}"
                self._change("PAUSED", reason)
                raise JobHalted(reason) from None
        return self._plan

    def _commit(self, producer: Producer, batch: _Batch) -> bool:
        """Loads and commits one batch; False when the sequencer refused its offsets."""
        began = time.monotonic()
        # The batch is typed under the schema of the moment it is loaded: an ALTER TABLE that
        # returned before these records were produced must be in the replica first.
        if not self.follower.wait_for_now(self.config.command_timeout_s):
            raise TimeoutError("the worker's replica is not catching up with strata.events")
        job = self.job()
        table = self.projection.tables[job.table_id]
        plan = self._plan_for(job)
        messages = batch.messages
        records = records_table([m.partition() for m in messages], [m.offset() for m in messages],
                                [m.value() for m in messages])
        # An AUTO PARTITION table's batch brings the partitions its rows need, under the next ids this
        # replica knows; if another load took them first, the sequencer answers CONFLICT and the batch
        # is loaded again from the log's offsets (as for any conflict).
        next_partition_id = self.projection.next_ids["partition"] if table.auto_partition is not None else None
        allocate = allocator(lambda command: self.proposer.propose(command, table_id=table.table_id), table.table_id)
        loaded = load_batch(self._cursor, table, job.spec, plan, records, next_partition_id=next_partition_id,
                            allocate=allocate)
        default_cooldown = self.config.storage_cooldown_seconds
        rowsets = (write_rowsets(self.tiers, loaded.table or table, loaded.rows, default_cooldown_s=default_cooldown)
                   if loaded.rows.num_rows else [])
        first_error = self._first_error(loaded)
        progress = LoadProgress(job=job.key, topic=job.spec.topic, start_offsets=batch.start, end_offsets=batch.end,
                                received_bytes=batch.size, error_rows=loaded.bad.num_rows,
                                unselected_rows=loaded.unselected, last_error=first_error)
        command = cmd.CommitRowsets(table_id=table.table_id, label=_label(job, batch), rowsets=tuple(rowsets),
                                    num_rows=loaded.rows.num_rows, source=f"routine_load:{job.name}",
                                    source_offsets={str(p): o for p, o in batch.end.items()}, load=progress,
                                    new_partitions=loaded.new_partitions)
        producer.begin_transaction()
        try:
            self._dead_letters(producer, job, loaded.bad, messages)
            self.proposer.propose(command, table_id=table.table_id, transaction=producer)
        except CommandFailed as failed:
            if failed.code in _DENIED:
                # The job's user lost its grant (or was dropped), or its source is refused: no retry
                # cures that, so the job pauses with the reason, as Doris pauses a job on error.
                reason = f"ErrorReason{{{failed.reason}}}"
                self._change("PAUSED", reason)
                raise JobHalted(reason) from None
            if failed.code != ErrorCode.CONFLICT and failed.code != ErrorCode.LABEL_ALREADY_EXISTS:
                raise
            # Another task of this job got there first, or this batch already landed: start over
            # from the offsets the log holds.
            self.stats.conflicts += 1
            log.warning("routine load %s: batch refused (%s); resuming from the log", self.key, failed.reason)
            return False
        except KafkaException as exc:
            if exc.args and isinstance(exc.args[0], KafkaError) and exc.args[0].fatal():
                raise JobHalted(f"fenced by another task of the job: {exc}") from None
            _abort(producer)
            raise
        self.stats.loaded_rows += loaded.rows.num_rows
        self.stats.error_rows += loaded.bad.num_rows
        self.stats.batches += 1
        self.stats.last_batch_s = time.monotonic() - began
        return True

    @staticmethod
    def _first_error(loaded: LoadedBatch) -> str:
        if not loaded.bad.num_rows:
            return ""
        row = loaded.bad.slice(0, 1).to_pylist()[0]
        return f"partition {row['__p']} offset {row['__o']}: {row['__reason']}"

    def _dead_letters(self, producer: Producer, job: RoutineLoadJob, bad: pa.Table, messages: list[Message]) -> None:
        if not bad.num_rows:
            return
        by_position = {(m.partition(), m.offset()): m for m in messages}
        db = self.projection.databases.get(job.db_id)
        job_name = f"{db.name if db else job.db_id}.{job.name}"
        for row in bad.to_pylist():
            message = by_position[(row["__p"], row["__o"])]
            producer.produce(DLQ_TOPIC, key=job.spec.topic.encode(), value=message.value(), headers=[
                ("strata.job", job_name.encode()), ("strata.table_id", str(job.table_id).encode()),
                ("strata.source.topic", job.spec.topic.encode()),
                ("strata.source.partition", str(row["__p"]).encode()),
                ("strata.source.offset", str(row["__o"]).encode()),
                ("strata.reason", row["__reason"].encode())])
            producer.poll(0)


def _label(job: RoutineLoadJob, batch: _Batch) -> str:
    """The same batch always gets the same label, so a retried batch is refused as a duplicate."""
    span = ",".join(f"{p}:{batch.start[p]}-{batch.end[p]}" for p in sorted(batch.start))
    return f"routine_load_{job.job_id}_{hashlib.sha1(span.encode()).hexdigest()[:20]}"


def _abort(producer: Producer) -> None:
    try:
        producer.abort_transaction(10)
    except KafkaException as exc:
        log.warning("could not abort a routine load transaction: %s", exc)
