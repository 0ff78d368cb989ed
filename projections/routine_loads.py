"""Routine load jobs as the fold keeps them: definition, state, and how far each has read.

A job's progress (the next Kafka offset per partition) changes only with the events that commit
its batches, so the rows a job loaded and the offsets it consumed can never disagree — that is
the exactly-once. Error rows are counted in a sampling window of ten batches' worth of rows, as in
Doris; a window with more than `max_error_number` of them pauses the job in the same fold step.
"""

from __future__ import annotations

from pydantic import BaseModel, Field

from schemas.model import LoadProgress, RoutineLoadSpec, RoutineLoadState

WINDOW_BATCHES = 10


def job_key(db_id: int, name: str) -> str:
    return f"{db_id}/{name.lower()}"


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
