"""Stream Load two-phase commit: a load with `two_phase_commit: true` writes its rowsets and
proposes a PrepareLoad (its rows durable, invisible, its label taken); `PUT /api/{db}/_stream_load_2pc`
with `txn_id` (or `label`) and `txn_operation: commit|abort` proposes a FinishLoad.

Everything is on the log, so any SQL server can finish a load another prepared, also after that
one crashed, and the sequencer finishes each transaction once: a commit retried after a crash
answers "already visible", never loads twice. A prepared load not finished by its deadline (the
load's `timeout` header, else Doris' stream_load_default_precommit_timeout_second, 3600 s) can only
abort: a late commit aborts it, and `sweep` (run periodically by every SQL server) aborts it.
"""

from __future__ import annotations

import logging
import time
from typing import Literal

import pyarrow as pa

from projections import rows
from projections.state import PreparedLoad, TableState
from query.console.data import Viewer
from query.context import Context, SqlFailure
from query.stream_load.request import StreamLoadRequest
from schemas import commands as cmd
from schemas import events as ev
from schemas.model import Partition

log = logging.getLogger("strata.stream_load")

DEFAULT_PRECOMMIT_TIMEOUT_S = 3600  # Doris FE's stream_load_default_precommit_timeout_second


def by_label(ctx: Context, table_id: int, label: str) -> PreparedLoad | None:
    return ctx.projection.prepared_label(table_id, label)


def prepare(ctx: Context, table: TableState, data: pa.Table, request: StreamLoadRequest,
            new_partitions: tuple[Partition, ...]) -> int:
    """Writes the rows as durable rowsets and proposes them as a prepared load; returns its txn id."""
    if data.num_rows == 0:
        raise SqlFailure(1105, "all rows were filtered or unselected: there is nothing to prepare")
    rowsets = rows.write_rowsets(ctx.tiers, table, data, default_cooldown_s=ctx.config.storage_cooldown_seconds)
    timeout_s = request.timeout_s if request.timeout_given else DEFAULT_PRECOMMIT_TIMEOUT_S
    decided = ctx.propose(cmd.PrepareLoad(table_id=table.table_id, label=request.label, rowsets=tuple(rowsets),
                                          num_rows=data.num_rows, new_partitions=new_partitions,
                                          timeout_ms=timeout_s * 1000), table_id=table.table_id).payload
    assert isinstance(decided, ev.LoadPrepared)
    return decided.txn_id


def _answer(ok: bool, message: str) -> dict[str, str]:
    return {"status": "Success" if ok else "FAILED", "msg": message}


def _find(ctx: Context, db: str, headers: dict[str, str]) -> PreparedLoad | str:
    """The load the request names (`txn_id`, or `label` of a load still prepared), or why none."""
    database = ctx.projection.database_by_name(db)
    if database is None:
        return f"Unknown database '{db}'"
    text = headers.get("txn_id", "").strip()
    if text:
        if not text.isdigit():
            return f"txn_id must be a number, not '{text}'"
        found = ctx.projection.prepared_load(int(text))
        table = ctx.projection.tables.get(found.table_id) if found is not None else None
        if found is None or table is None or table.db_id != database.db_id:
            return f"transaction [{text}] not found in database {db}"
        return found
    label = headers.get("label", "").strip()
    if not label:
        return "the request needs a txn_id or label header"
    for prepared in ctx.projection.prepared_loads():
        table = ctx.projection.tables.get(prepared.table_id)
        if prepared.label == label and table is not None and table.db_id == database.db_id:
            return prepared
    return f"no prepared transaction with label [{label}] in database {db}"


def finish_request(ctx: Context, viewer: Viewer, db: str, headers: dict[str, str]) -> dict[str, str]:
    """Answers `_stream_load_2pc` in Doris' shape: {"status": "Success"|"FAILED", "msg": …}."""
    h = {k.lower(): v for k, v in headers.items()}
    word = h.get("txn_operation", "").strip().lower()
    if word not in ("commit", "abort"):
        return _answer(False, f"txn_operation must be commit or abort, not '{h.get('txn_operation', '')}'")
    operation: Literal["commit", "abort"] = "commit" if word == "commit" else "abort"
    ctx.catch_up()
    found = _find(ctx, db, h)
    if isinstance(found, str):
        return _answer(False, found)
    table = ctx.projection.tables.get(found.table_id)
    if table is None or (viewer.user is not None and not viewer.user.may("LOAD_PRIV", db, table.name)):
        return _answer(False, f"Access denied; user '{viewer.name}' needs LOAD_PRIV on the transaction's table")
    try:
        decided = ctx.propose(cmd.FinishLoad(table_id=found.table_id, txn_id=found.txn_id, operation=operation),
                              table_id=found.table_id).payload
    except SqlFailure as failure:
        return _answer(False, failure.message)
    if isinstance(decided, ev.LoadAborted) and operation == "commit":
        return _answer(False, f"transaction [{found.txn_id}] is already aborted. abort reason: {decided.reason}")
    return _answer(True, f"transaction [{found.txn_id}] {operation} successfully.")


def sweep(ctx: Context) -> int:
    """Aborts the prepared loads past their deadline; returns how many. Several servers may sweep the
    same load: the sequencer aborts it once and rejects the others. Reads this server's replica
    without waiting for it: a load it has not seen yet is swept next time."""
    now_ms = int(time.time() * 1000)
    aborted = 0
    for prepared in ctx.projection.prepared_loads():
        if prepared.deadline_ts_ms >= now_ms:
            continue
        try:
            ctx.propose(cmd.FinishLoad(table_id=prepared.table_id, txn_id=prepared.txn_id, operation="abort",
                                       reason="timeout: the prepared transaction was not committed before its "
                                              "deadline"), table_id=prepared.table_id)
            aborted += 1
        except SqlFailure as failure:
            log.info("prepared load %d was finished meanwhile: %s", prepared.txn_id, failure.message)
    return aborted
