"""Asynchronous Broker Load and EXPORT jobs of one SQL server: their state on the log
(`ChangeBulkJob` → `BulkJobChanged`, folded into projections.bulk_jobs), a background thread that
runs them one at a time, and SHOW / CANCEL LOAD|EXPORT.

A job is created PENDING by its statement and run by the server that created it; every state it
passes through is a decided command, so SHOW answers the same on every server and after a restart.
A server that restarts resumes its unfinished jobs from the log: a load's commits carry the job's
label, so one already committed is never committed twice (query.broker_load).
"""

from __future__ import annotations

import json
import logging
import queue
import threading
from collections.abc import Callable
from datetime import datetime
from typing import Any

from projections.bulk_jobs import BulkJob
from query.context import Context, Done, Rows, SessionState, SqlFailure
from query.parser import statements as st
from query.show_filter import like
from schemas import commands as cmd
from schemas.errors import ErrorCode
from schemas.model import BulkJobKind, BulkJobState

log = logging.getLogger(__name__)

Runner = Callable[[Context, BulkJob], None]
# Set by query.broker_load and query.export at import: how each kind of job runs.
RUNNERS: dict[str, Runner] = {}


class JobCancelled(Exception):
    """The job was cancelled (CANCEL, or its timeout) while it ran; it stops without committing."""


def create(ctx: Context, kind: BulkJobKind, db: str, label: str, spec: dict[str, Any]) -> None:
    """Puts a new PENDING job on the log (its label must be free) and queues it here."""
    ctx.propose(cmd.ChangeBulkJob(kind=kind, db=db, label=label, state="PENDING",
                                  spec=json.dumps({**spec, "server": ctx.name}, sort_keys=True)))
    job = current(ctx, kind, db, label)
    if job is not None:
        runner(ctx).submit(job)


def current(ctx: Context, kind: str, db: str, label: str) -> BulkJob | None:
    found = ctx.projection.database_by_name(db)
    return ctx.projection.bulk_job(kind, found.db_id, label) if found is not None else None


def db_name(ctx: Context, job: BulkJob) -> str:
    found = ctx.projection.databases.get(job.db_id)
    return found.name if found is not None else ""


def move(ctx: Context, job: BulkJob, state: BulkJobState, from_states: tuple[BulkJobState, ...], *,
         progress: str = "", info: dict[str, str] | None = None, error: str = "") -> bool:
    """Moves the job to `state` if it is in one of `from_states`; False when it was not (cancelled)."""
    try:
        ctx.propose(cmd.ChangeBulkJob(kind=job.kind, db=db_name(ctx, job), label=job.label, state=state,
                                      job_id=job.job_id, progress=progress, info=info or {}, error=error,
                                      from_states=from_states))
    except SqlFailure as failure:
        if failure.code == ErrorCode.UNKNOWN_ERROR:
            return False
        raise
    return True


def still_running(ctx: Context, job: BulkJob) -> None:
    """Raises JobCancelled when the job was cancelled meanwhile."""
    found = ctx.projection.bulk_jobs.get(job.key)
    if found is None or found.job_id != job.job_id or found.state == "CANCELLED":
        raise JobCancelled()


class BulkJobRunner:
    """One thread running this server's jobs in the order they come."""

    def __init__(self, ctx: Context) -> None:
        self.ctx = ctx
        self._queue: queue.Queue[BulkJob | None] = queue.Queue()
        self._thread = threading.Thread(target=self._loop, name="bulk-jobs", daemon=True)
        self._thread.start()
        self._queue.put(None)  # first: resume what this server left unfinished

    def submit(self, job: BulkJob) -> None:
        self._queue.put(job)

    def stop(self) -> None:
        self._queue.put(_STOP)

    def _resume(self) -> None:
        try:
            self.ctx.catch_up()
        except SqlFailure:
            log.warning("bulk jobs: the replica is not caught up; unfinished jobs are resumed later")
            return
        for job in sorted(self.ctx.projection.bulk_jobs.values(), key=lambda j: j.job_id):
            if not job.done and json.loads(job.spec).get("server") == self.ctx.name:
                log.info("resuming %s job %d (%s), %s", job.kind, job.job_id, job.label, job.state)
                self._queue.put(job)

    def _loop(self) -> None:
        while True:
            job = self._queue.get()
            if job is _STOP:
                return
            if job is None:
                self._resume()
                continue
            latest = self.ctx.projection.bulk_jobs.get(job.key)
            if latest is None or latest.job_id != job.job_id or latest.done:
                continue
            try:
                RUNNERS[latest.kind](self.ctx, latest)
            except JobCancelled:
                log.info("%s job %d (%s) cancelled", latest.kind, latest.job_id, latest.label)
            except Exception as exc:  # noqa: BLE001 - a job's failure is its own, shown by SHOW LOAD|EXPORT
                message = exc.message if isinstance(exc, SqlFailure) else f"{type(exc).__name__}: {exc}"
                if not isinstance(exc, SqlFailure):
                    log.exception("%s job %d failed", latest.kind, latest.job_id)
                try:
                    move(self.ctx, latest, "CANCELLED", ("PENDING", "LOADING", "EXPORTING", "COMMITTED"),
                         error=_error_text(latest.kind, message))
                except Exception:  # noqa: BLE001 - Kafka away: the job stays unfinished and resumes on restart
                    log.exception("%s job %d: its failure could not be recorded", latest.kind, latest.job_id)


_STOP: Any = object()


def _error_text(kind: str, message: str) -> str:
    return f"type:{'ETL_RUN_FAIL' if kind == 'LOAD' else 'RUN_FAIL'}; msg:{message}"


def runner(ctx: Context) -> BulkJobRunner:
    """The server's runner, made on first use (and by `start`)."""
    return ctx.made_once("bulk_jobs", BulkJobRunner)


# -- SHOW / CANCEL ---------------------------------------------------------------------------------
LOAD_COLUMNS = ["JobId", "Label", "State", "Progress", "Type", "EtlInfo", "TaskInfo", "ErrorMsg", "CreateTime",
                "EtlStartTime", "EtlFinishTime", "LoadStartTime", "LoadFinishTime", "URL", "JobDetails",
                "TransactionId", "ErrorTablets", "User", "Comment"]
EXPORT_COLUMNS = ["JobId", "Label", "State", "Progress", "TaskInfo", "Path", "CreateTime", "StartTime",
                  "FinishTime", "Timeout", "ErrorMsg", "OutfileInfo"]


def _time(ts: int | None) -> str:
    return datetime.fromtimestamp(ts / 1000).strftime("%Y-%m-%d %H:%M:%S") if ts else "NULL"


def _selected(ctx: Context, session: SessionState, kind: str, db: str | None, label: str | None,
              label_like: str | None, state: str | None) -> list[BulkJob]:
    db_id, _ = ctx.database_id(session, db)
    jobs = [j for j in ctx.projection.bulk_jobs.values() if j.kind == kind and j.db_id == db_id]
    if label is not None:
        jobs = [j for j in jobs if j.label == label]
    if label_like is not None:
        jobs = [j for j in jobs if like(label_like, j.label)]
    if state is not None:
        jobs = [j for j in jobs if j.state == state]
    return sorted(jobs, key=lambda j: j.job_id)


def _load_row(job: BulkJob) -> tuple[Any, ...]:
    spec = json.loads(job.spec)
    info = job.info
    # Counted once the rows were checked: a finished job, or one cancelled for too many filtered rows.
    etl = (f"unselected.rows={info.get('unselected', 0)}; dpp.abnorm.ALL={info.get('abnormal', 0)}; "
           f"dpp.norm.ALL={info.get('normal', 0)}") if "normal" in info else "NULL"
    task = f"cluster:N/A; timeout(s):{spec.get('timeout', '')}; max_filter_ratio:{spec.get('max_filter_ratio', '0')}"
    started = int(info["started_ms"]) if "started_ms" in info else None
    details = json.dumps({"ScannedRows": int(info.get("scanned", 0)), "TaskNumber": 1,
                          "FileNumber": int(info.get("files", 0)), "FileSize": int(info.get("bytes", 0)),
                          "LoadBytes": int(info.get("bytes", 0))})
    return (job.job_id, job.label, job.state, job.progress or "ETL:N/A; LOAD:0%", "BROKER", etl, task,
            job.error or "NULL", _time(job.created_ts_ms), _time(started), _time(started), _time(started),
            _time(job.finished_ts_ms), info.get("url", "NULL"), details, info.get("transaction", "NULL"), "{}",
            spec.get("user", ""), spec.get("comment", ""))


def _export_row(job: BulkJob) -> tuple[Any, ...]:
    spec = json.loads(job.spec)
    task = json.dumps({"db": spec.get("db"), "tbl": spec.get("table"), "partitions": spec.get("partitions") or ["*"],
                       "format": spec.get("format"), "column_separator": spec.get("column_separator"),
                       "line_delimiter": spec.get("line_delimiter"), "max_file_size": spec.get("max_file_size"),
                       "snapshot": spec.get("as_of_text")})
    started = int(job.info["started_ms"]) if "started_ms" in job.info else None
    outfile = job.info.get("outfile", "NULL")
    return (job.job_id, job.label, job.state, job.progress or "0%", task, spec.get("path", ""),
            _time(job.created_ts_ms), _time(started), _time(job.finished_ts_ms), spec.get("timeout", ""),
            job.error or "NULL", outfile)


def show_loads(ctx: Context, session: SessionState, s: st.ShowLoads) -> Rows:
    ctx.catch_up()
    jobs = _selected(ctx, session, s.kind, s.db, s.label, s.label_like, s.state)
    if s.limit is not None:
        jobs = jobs[:s.limit]
    if s.kind == "LOAD":
        return Rows(LOAD_COLUMNS, [_load_row(j) for j in jobs])
    return Rows(EXPORT_COLUMNS, [_export_row(j) for j in jobs])


def cancel_loads(ctx: Context, session: SessionState, s: st.CancelLoads) -> Done:
    """Doris' CANCEL LOAD|EXPORT: jobs not yet committed become CANCELLED; a finished one is an error."""
    ctx.catch_up()
    jobs = _selected(ctx, session, s.kind, s.db, s.label, s.label_like, s.state)
    if not jobs:
        raise SqlFailure(ErrorCode.WRONG_ARGUMENTS, f"{s.kind.lower()} job not found"
                                                    + (f" with label '{s.label}'" if s.label else ""))
    live = [j for j in jobs if not j.done]
    if not live:
        raise SqlFailure(ErrorCode.WRONG_ARGUMENTS,
                         f"{s.kind.lower()} job '{jobs[-1].label}' is {jobs[-1].state} and can not be cancelled")
    for job in live:
        if not move(ctx, job, "CANCELLED", ("PENDING", "LOADING", "EXPORTING"), error=_error_text(
                job.kind, "cancelled by user")):
            raise SqlFailure(ErrorCode.WRONG_ARGUMENTS, f"{job.kind.lower()} job '{job.label}' is committing or done "
                                                        "and can not be cancelled")
    return Done()
