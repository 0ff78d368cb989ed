"""Statements about a table's past: SHOW TIME TRAVEL, RESTORE TABLE, and ADMIN COMPACT (which
turns history into compaction checkpoints without changing any answer)."""

from __future__ import annotations

import json

import duckdb

from projections.compaction import Compactor, Kind
from projections.proposer import CommandFailed, CommandTimeout
from projections.retention import earliest_instant_ms
from query.context import Context, Done, Rows, SessionState, SqlFailure
from query.parser import statements as st
from query.reads import as_of_ms, format_instant, now_ms
from schemas import commands as cmd
from schemas.errors import ErrorCode

# Retries of one tablet's compaction when a concurrent writer (a load, the compaction agent)
# changed its rowsets between planning and commit.
_COMPACTION_ATTEMPTS = 3


def show_time_travel(ctx: Context, session: SessionState, s: st.ShowTimeTravel) -> Rows:
    """One row per commit, each with the table's window: earliest instant, latest commit, retention."""
    ctx.catch_up()
    table = ctx.table(session, s.table)
    if not table.time_travel:
        raise SqlFailure(ErrorCode.NOT_SUPPORTED_YET,
                         f"table '{table.name}' has no time travel; enable it with ALTER TABLE {table.name} "
                         "SET (\"enable_time_travel\" = \"true\")")
    earliest = earliest_instant_ms(table, now_ms(), ctx.config.time_travel_day_s)
    names = {p.partition_id: p.name for p in table.partitions.values()}
    window = (format_instant(earliest, session) if earliest is not None else None,
              format_instant(table.last_commit_ts_ms, session), int(table.properties["time_travel_retention_days"]))
    rows = []
    for commit in ctx.projection.commits(table.table_id):
        versions = {names.get(pid, str(pid)): v for pid, v in sorted(commit.partition_versions.items())}
        rows.append((table.name, *window, commit.commit_number, format_instant(commit.ts_ms, session), commit.kind,
                     commit.rows_added, commit.rows_removed, json.dumps(versions), commit.description,
                     earliest is not None and commit.ts_ms >= earliest))
    return Rows(["Table", "EarliestTime", "LatestCommitTime", "RetentionDays", "CommitNumber", "CommitTime", "Kind",
                 "RowsAdded", "RowsRemoved", "PartitionVersions", "Description", "Reachable"], rows)


def restore_table(ctx: Context, session: SessionState, s: st.RestoreTable) -> Done:
    """A new commit whose content is the table's content at the instant named; no file is copied."""
    ctx.catch_up()
    table = ctx.table(session, s.table)
    target = as_of_ms(ctx, session, table, s.as_of)
    described = (f"RESTORE TO TIME AS OF '{format_instant(target, session)}'"
                 if isinstance(s.as_of, st.AsOfTime) else f"RESTORE TO VERSION AS OF {s.as_of.n}")
    ctx.propose(cmd.RestoreTable(table_id=table.table_id, target_ts_ms=target, description=described),
                table_id=table.table_id)
    return Done()


def admin_compact(ctx: Context, session: SessionState, s: st.AdminCompact) -> Done:
    """Compacts every tablet of the table (or of one partition) now; the answer counts compactions."""
    ctx.catch_up()
    table = ctx.table(session, s.table)
    if s.partition is not None:
        partition = table.partition_by_name(s.partition)
        if partition is None:
            raise SqlFailure(ErrorCode.UNKNOWN_PARTITION, f"Unknown partition '{s.partition}' in table '{table.name}'")
        partition_ids = [partition.partition_id]
    else:
        partition_ids = [p.partition_id for p in table.live_partitions()]
    kind: Kind = "base" if s.compaction_type == "BASE" else "cumulative"
    compactor = Compactor(ctx.projection, ctx.proposer, ctx.locator, ctx.stores, day_s=ctx.config.time_travel_day_s)
    done = 0
    cur = ctx.cursor()
    try:
        for pid in partition_ids:
            for bucket in range(table.partitions[pid].partition.buckets):
                done += _compact_tablet(ctx, compactor, cur, table.table_id, pid, bucket, kind)
    finally:
        cur.close()
    return Done(done)


def _compact_tablet(ctx: Context, compactor: Compactor, cur: duckdb.DuckDBPyConnection, table_id: int, pid: int,
                    bucket: int, kind: Kind) -> int:
    for attempt in range(_COMPACTION_ATTEMPTS):
        ctx.catch_up()
        table = ctx.projection.tables[table_id]  # a published state never changes (copy-on-write)
        try:
            return 1 if compactor.compact(cur, table, table.partitions[pid], bucket, kind) is not None else 0
        except (CommandFailed, CommandTimeout) as exc:
            if attempt == _COMPACTION_ATTEMPTS - 1:
                raise SqlFailure(ErrorCode.CONFLICT, f"compaction of '{table.name}' kept conflicting with "
                                                     f"concurrent writes: {exc}") from None
    return 0
