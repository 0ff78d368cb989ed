"""Routine load jobs as the fold keeps them: definition, state, and how far each has read.

A job's progress (the next Kafka offset per partition) changes only with the events that commit
its batches, so the rows a job loaded and the offsets it consumed can never disagree — that is
the exactly-once. Error rows are counted in a sampling window of ten batches' worth of rows, as in
Doris; a window with more than `max_error_number` of them pauses the job in the same fold step.
"""

from __future__ import annotations

from pydantic import BaseModel, Field

from projections.users import ROOT, UserRecord
from schemas.errors import ErrorCode
from schemas.model import LoadProgress, RoutineLoadSpec, RoutineLoadState
from schemas.topics import INGEST_PREFIX, STRATA_PREFIX

WINDOW_BATCHES = 10


def job_key(db_id: int, name: str) -> str:
    return f"{db_id}/{name.lower()}"


def source_refusal(topic: str, user: str, users: dict[str, UserRecord]) -> tuple[ErrorCode, str] | None:
    """Why `user` may not load from `topic` (None: it may). Strata's own topics hold every
    database's metadata, sealed secrets included: no job reads them. A table's ingest topic
    `strata.ingest.<db>.<table>` may be read by a user with LOAD_PRIV on that table (root: any).
    Asked by the SQL server when a job is created, and by the sequencer for every batch."""
    lowered = topic.strip().lower()  # topic names are case-sensitive; refusing look-alikes too costs nothing
    if not lowered.startswith(STRATA_PREFIX):
        return None
    if not lowered.startswith(INGEST_PREFIX):
        return (ErrorCode.SPECIFIC_ACCESS_DENIED,
                f"kafka_topic '{topic}' is one of Strata's own topics; it can not be a routine load source")
    if user.lower() == ROOT:
        return None
    db, dot, table = lowered[len(INGEST_PREFIX):].partition(".")
    record = users.get(user.lower())
    if not dot or record is None or not record.may("LOAD_PRIV", db, table):
        return (ErrorCode.TABLE_ACCESS_DENIED,
                f"Access denied; user '{user}'@'%' needs LOAD_PRIV on {db}.{table or '*'} to load its ingest "
                f"topic '{topic}'")
    return None


def creator_refusal(job: RoutineLoadJob, db: str, table: str, users: dict[str, UserRecord]) -> str | None:
    """Why the job's creator may no longer commit its batches into `db`.`table` (None: it may)."""
    user = job.spec.user
    if user.lower() == ROOT:
        return None
    record = users.get(user.lower())
    if record is None:
        return f"the job's user '{user}' was dropped"
    if not record.may("LOAD_PRIV", db, table):
        return f"the job's user '{user}' no longer has LOAD_PRIV on {db}.{table}"
    return None


class RoutineLoadJob(BaseModel):
    key: str
    job_id: int
    name: str
    db_id: int
    table_id: int
    state: RoutineLoadState
    spec: RoutineLoadSpec
    reason: str = ""
    created_ts_ms: int
    changed_ts_ms: int
    paused_ts_ms: int | None = None
    end_ts_ms: int | None = None
    progress: dict[int, int] = Field(default_factory=dict, description="next offset to read, per partition")
    loaded_rows: int = 0
    error_rows: int = 0
    unselected_rows: int = 0
    received_bytes: int = 0
    committed_batches: int = 0
    window_rows: int = 0
    window_errors: int = 0
    last_error: str = ""

    def next_offset(self, partition: int) -> int:
        """Where the next batch of `partition` starts (the spec's start until a batch commits)."""
        return self.progress.get(partition, self.spec.start_offsets[partition])

    def conflict(self, load: LoadProgress) -> str | None:
        """Why a batch cannot be committed to this job (None: it can)."""
        if self.state == "STOPPED":
            return f"routine load {self.name} is STOPPED"
        if load.topic != self.spec.topic:
            return f"the batch read topic {load.topic}, the job reads {self.spec.topic}"
        for partition, start in load.start_offsets.items():
            if partition not in self.spec.start_offsets:
                return f"partition {partition} is not one of the job's"
            expected = self.progress.get(partition)
            if expected is not None and start != expected:
                return (f"the batch starts partition {partition} at offset {start}, but the job's last "
                        f"committed batch ended at {expected}")
        return None

    def record(self, load: LoadProgress, loaded_rows: int, ts_ms: int) -> None:
        """Folds one committed batch in."""
        self.progress.update(load.end_offsets)
        self.loaded_rows += loaded_rows
        self.error_rows += load.error_rows
        self.unselected_rows += load.unselected_rows
        self.received_bytes += load.received_bytes
        self.committed_batches += 1
        if load.last_error:
            self.last_error = load.last_error
        self.window_rows += loaded_rows + load.error_rows + load.unselected_rows
        self.window_errors += load.error_rows
        if self.state == "RUNNING" and self.window_errors > self.spec.max_error_number:
            self.state = "PAUSED"
            self.paused_ts_ms = self.changed_ts_ms = ts_ms
            self.reason = (f"ErrorReason{{too many error rows: {self.window_errors} in the last "
                           f"{self.window_rows} rows, max_error_number is {self.spec.max_error_number}; "
                           f"last error: {self.last_error}}}")
        if self.window_rows >= WINDOW_BATCHES * self.spec.max_batch_rows or self.state != "RUNNING":
            self.window_rows = self.window_errors = 0

    def change_state(self, state: RoutineLoadState, reason: str, ts_ms: int) -> None:
        self.state = state
        self.reason = reason
        self.changed_ts_ms = ts_ms
        if state == "PAUSED":
            self.paused_ts_ms = ts_ms
        elif state == "STOPPED":
            self.end_ts_ms = ts_ms
        else:
            self.window_rows = self.window_errors = 0
