"""Broker Load and EXPORT jobs as the fold keeps them: what each was asked (its spec, secrets
sealed), its state and what it reports. The log holds every change, so a job's state survives a
restart of the SQL server that runs it; the server resumes its unfinished jobs from here."""

from __future__ import annotations

from pydantic import BaseModel, Field

from schemas.model import BulkJobKind, BulkJobState

PREFIX = b"bj/"
DONE_STATES = ("FINISHED", "CANCELLED")


def bulk_job_key(kind: str, db_id: int, label: str) -> str:
    return f"{kind}/{db_id}/{label}"


class BulkJob(BaseModel):
    kind: BulkJobKind
    job_id: int
    db_id: int
    label: str
    state: BulkJobState
    spec: str
    progress: str = ""
    info: dict[str, str] = Field(default_factory=dict)
    error: str = ""
    created_ts_ms: int
    changed_ts_ms: int
    finished_ts_ms: int | None = None

    @property
    def key(self) -> str:
        return bulk_job_key(self.kind, self.db_id, self.label)

    @property
    def done(self) -> bool:
        return self.state in DONE_STATES
