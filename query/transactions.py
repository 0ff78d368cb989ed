"""SHOW TRANSACTION: a commit of a table, found by its transaction id or its load label, in Doris' shape.

Every Strata commit is one event the sequencer decided, so a transaction is a table's commit: its id is
`transaction_id(table id, commit number)` (INSERT's reply names it as `txnId`), and it is VISIBLE from
the instant of its event on (Strata has no prepared or aborted transactions on the log: a rejected
command leaves no commit). Who may see it: LOAD_PRIV on its table, as in Doris.
"""

from __future__ import annotations

from datetime import datetime

from projections import keys
from projections.state import CommitRecord, LabelRecord, TableState
from query import access
from query.context import Context, Rows, SessionState, SqlFailure
from query.parser import statements as st
from query.session_functions import session_zone
from schemas.errors import ErrorCode

_COMMITS_PER_TABLE = 10**9  # a table's commit numbers stay below this; the id is readable by eye
COLUMNS = ["TransactionId", "Label", "Coordinator", "TransactionStatus", "LoadJobSourceType", "PrepareTime",
           "PreCommitTime", "CommitTime", "PublishTime", "FinishTime", "Reason", "ErrorReplicasCount", "ListenerId",
           "TimeoutMs", "ErrMsg"]


def transaction_id(table_id: int, commit_number: int) -> int:
    return table_id * _COMMITS_PER_TABLE + commit_number


def _source_type(commit: CommitRecord) -> str:
    """Doris' LoadJobSourceType of a commit."""
    if commit.description.startswith("routine_load"):
        return "ROUTINE_LOAD_TASK"
    if commit.description.startswith("stream_load"):
        return "BACKEND_STREAMING"
    if commit.kind in ("load", "update") or commit.description == "ctas":
        return "INSERT_STREAMING"
    return "FRONTEND"  # DELETE, schema and partition changes, RESTORE, overwrite: the FE's own transactions


def _label_of(ctx: Context, table_id: int, commit_number: int) -> str:
    prefix = keys.label_key(table_id, "")
    for _, raw in ctx.projection.store.scan(prefix):
        record = LabelRecord.model_validate_json(raw)
        if record.commit_number == commit_number:
            return record.label
    return ""


def _find(ctx: Context, session: SessionState, s: st.ShowTransaction) -> tuple[TableState, CommitRecord, str]:
    if s.txn_id is not None:
        table_id, number = divmod(s.txn_id, _COMMITS_PER_TABLE)
        table = ctx.projection.tables.get(table_id)
        commit = ctx.projection.commit(table_id, number) if table is not None and number else None
        if s.db is not None and table is not None and table.db_id != ctx.database_id(session, s.db)[0]:
            commit = None
        if table is None or commit is None:
            raise SqlFailure(ErrorCode.UNKNOWN_ERROR, f"errCode = 2, detailMessage = transaction with id "
                                                      f"{s.txn_id} does not exist")
        return table, commit, _label_of(ctx, table_id, number)
    assert s.label is not None
    db_id, _ = ctx.database_id(session, s.db)
    for table in ctx.projection.tables.values():
        if table.db_id != db_id:
            continue
        found = ctx.projection.label(table.table_id, s.label)
        commit = ctx.projection.commit(table.table_id, found.commit_number) if found is not None else None
        if commit is not None:
            return table, commit, s.label
    raise SqlFailure(ErrorCode.UNKNOWN_ERROR, f"errCode = 2, detailMessage = transaction with label {s.label} "
                                              "does not exist")


def show_transaction(ctx: Context, session: SessionState, s: st.ShowTransaction) -> Rows:
    table, commit, label = _find(ctx, session, s)
    user = access.user_of(ctx, session)
    db = ctx.projection.databases.get(table.db_id)
    db_name = db.name if db is not None else ""
    if user is not None and not user.may("LOAD_PRIV", db_name, table.name):
        raise SqlFailure(ErrorCode.TABLE_ACCESS_DENIED, f"Access denied; user '{user.name}'@'%' needs LOAD_PRIV on "
                                                        f"{db_name}.{table.name}")
    at = datetime.fromtimestamp(commit.ts_ms / 1000, tz=session_zone(session)).strftime("%Y-%m-%d %H:%M:%S")
    # Prepare and pre-commit happen in the writer before it proposes; the log keeps only the decision.
    return Rows(COLUMNS, [(transaction_id(table.table_id, commit.commit_number), label, "SEQUENCER: strata.events",
                           "VISIBLE", _source_type(commit), "NULL", "NULL", at, at, at, "", 0, -1,
                           int(ctx.config.command_timeout_s * 1000),
                           "")])


def insert_reply(ctx: Context, table: TableState, label: str) -> str:
    """INSERT's OK message as Doris words it: the label, VISIBLE, and the transaction's id when the rows
    made a commit (an INSERT of no rows makes none)."""
    found = ctx.projection.label(table.table_id, label)
    txn = f", 'txnId':'{transaction_id(table.table_id, found.commit_number)}'" if found is not None else ""
    return f"{{'label':'{label}', 'status':'VISIBLE'{txn}}}"
