"""SHOW PROC '<path>': Doris' tree of system state, for the paths operators read most, each answered by
the statement that already knows it (SHOW BACKENDS, SHOW PARTITIONS, SHOW TABLETS, ADMIN SHOW REPLICA
STATUS) or from the catalog and rowset records. Any other path is a clear error naming those that work."""

from __future__ import annotations

import time
from collections.abc import Callable
from datetime import datetime

from projections.state import DatabaseState, TableState
from query import cluster, processlist, show, show_storage
from query.context import Context, Rows, SessionState, SqlFailure
from query.parser import statements as st
from query.session_functions import session_zone
from query.storage_usage import DATA_QUOTA_BYTES, REPLICA_QUOTA, doris_bytes, table_usage
from schemas.errors import ErrorCode

_ROOTS = ("backends", "current_queries", "dbs", "frontends", "statistic")


def _unknown(path: str) -> SqlFailure:
    return SqlFailure(ErrorCode.NOT_SUPPORTED_YET,
                      f"SHOW PROC '{path}' is not supported; Strata answers '/', "
                      + ", ".join(f"'/{r}'" for r in _ROOTS)
                      + ", '/dbs/<db id>', '/dbs/<db id>/<table id>', '/dbs/<db id>/<table id>/partitions', "
                        "'/dbs/<db id>/<table id>/partitions/<partition id>[/<index id>[/<tablet id>]]'")


def _moment(session: SessionState, ts_ms: int | None) -> str:
    if ts_ms is None:
        return "NULL"
    return datetime.fromtimestamp(ts_ms / 1000, tz=session_zone(session)).strftime("%Y-%m-%d %H:%M:%S")


def _number(path: str, text: str) -> int:
    if not text.isdigit():
        raise SqlFailure(ErrorCode.UNKNOWN_ERROR, f"errCode = 2, detailMessage = Invalid id format: {text} "
                                                  f"(in '{path}')")
    return int(text)


def _database(ctx: Context, path: str, text: str) -> DatabaseState:
    found = ctx.projection.databases.get(_number(path, text))
    if found is None or found.dropped_ts_ms is not None:
        raise SqlFailure(ErrorCode.UNKNOWN_ERROR, f"errCode = 2, detailMessage = Database[{text}] does not exist.")
    return found


def _table(ctx: Context, path: str, db: DatabaseState, text: str) -> TableState:
    found = ctx.projection.tables.get(_number(path, text))
    if found is None or found.db_id != db.db_id or found.dropped_ts_ms is not None:
        raise SqlFailure(ErrorCode.UNKNOWN_ERROR, f"errCode = 2, detailMessage = Table[{text}] does not exist")
    return found


def _root(ctx: Context, session: SessionState) -> Rows:
    return Rows(["name"], [(name,) for name in _ROOTS])


def _dbs(ctx: Context, session: SessionState) -> Rows:
    rows = []
    for db in sorted(ctx.projection.databases.values(), key=lambda d: d.db_id):
        if db.dropped_ts_ms is not None:
            continue
        tables = ctx.projection.tables_of(db.db_id)
        size = replicas = 0
        for table in tables:
            live, _, count = table_usage(ctx, table)
            size, replicas = size + live.total_bytes, replicas + count
        last = max((t.last_commit_ts_ms for t in tables), default=db.created_ts_ms)
        rows.append((db.db_id, db.name, len(tables), doris_bytes(size), doris_bytes(DATA_QUOTA_BYTES), "NULL", replicas,
                     REPLICA_QUOTA, 0, 1000, _moment(session, last)))
    return Rows(["DbId", "DbName", "TableNum", "Size", "Quota", "LastConsistencyCheckTime", "ReplicaCount",
                 "ReplicaQuota", "RunningTransactionNum", "TransactionQuotaSize", "LastUpdateTime"], rows)


def _tables(ctx: Context, session: SessionState, db: DatabaseState) -> Rows:
    rows = []
    for table in ctx.projection.tables_of(db.db_id):
        live, _, count = table_usage(ctx, table)
        partitioned = table.partition_kind != "UNPARTITIONED"
        rows.append((table.table_id, table.name, 1, ", ".join(table.partition_columns) if partitioned else "",
                     ", ".join(table.distribution.columns) or "RANDOM", "NORMAL", "OLAP", "NULL", count,
                     max((p.version for p in table.live_partitions()), default=0),
                     _moment(session, table.last_commit_ts_ms), 0, _moment(session, table.last_commit_ts_ms)))
    return Rows(["TableId", "TableName", "IndexNum", "PartitionColumnName", "DistributionColumnName", "State", "Type",
                 "LastConsistencyCheckTime", "ReplicaCount", "VisibleVersion", "VisibleVersionTime",
                 "RunningTransactionNum", "LastUpdateTime"], rows)


def _statistic(ctx: Context, session: SessionState) -> Rows:
    rows: list[tuple[object, ...]] = []
    totals = [0, 0, 0, 0, 0, 0]
    for db in sorted(ctx.projection.databases.values(), key=lambda d: d.db_id):
        if db.dropped_ts_ms is not None:
            continue
        tables = ctx.projection.tables_of(db.db_id)
        partitions = sum(len(t.live_partitions()) for t in tables)
        tablets = sum(p.partition.buckets for t in tables for p in t.live_partitions())
        counts = [len(tables), partitions, len(tables), tablets, tablets, 0]
        totals = [a + b for a, b in zip(totals, counts, strict=True)]
        rows.append((str(db.db_id), db.name, *counts, 0, 0, 0))  # a text column: the last row says Total
    rows.append(("Total", len(rows), *totals, 0, 0, 0))
    return Rows(["DbId", "DbName", "TableNum", "PartitionNum", "IndexNum", "TabletNum", "ReplicaNum",
                 "UnhealthyTabletNum", "InconsistentTabletNum", "CloningTabletNum", "BadTabletNum"], rows)


def _current_queries(ctx: Context, session: SessionState) -> Rows:
    now = time.monotonic()
    rows = [(found.query_id, found.connection_id, "internal", found.database or "", found.user,
             f"{int((now - found.since) * 1000)}", "", found.info)
            for found in processlist.visible_sessions(ctx, session) if found.info is not None]
    return Rows(["QueryId", "ConnectionId", "Catalog", "Database", "User", "ExecTime", "SqlHash", "Statement"], rows)


def _table_path(ctx: Context, session: SessionState, path: str, parts: list[str]) -> Rows:
    """'/dbs/<db>/<table>' and below."""
    db = _database(ctx, path, parts[1])
    table = _table(ctx, path, db, parts[2])
    name = st.QualifiedName(table.name, db.name)
    if len(parts) == 3:
        return Rows(["Nodes"], [("partitions",)])  # no temporary partitions or rollup indexes in Strata
    if parts[3] != "partitions":
        raise _unknown(path)
    if len(parts) == 4:
        return show.show_partitions(ctx, session, st.ShowPartitions(name))
    partition_id = _number(path, parts[4])
    partition = table.partitions.get(partition_id)
    if partition is None or partition.dropped_ts_ms is not None:
        raise SqlFailure(ErrorCode.UNKNOWN_ERROR, f"errCode = 2, detailMessage = Partition[{parts[4]}] does not "
                                                  "exist")
    if len(parts) == 5:  # a partition's indexes: Strata tables have their base index only (its id is the table's)
        return Rows(["IndexId", "IndexName", "State", "LastConsistencyCheckTime"],
                    [(table.table_id, table.name, "NORMAL", "NULL")])
    if _number(path, parts[5]) != table.table_id:
        raise SqlFailure(ErrorCode.UNKNOWN_ERROR, f"errCode = 2, detailMessage = Index[{parts[5]}] does not exist")
    tablets = show_storage.show_tablets(ctx, session, st.ShowTablets(name, (partition.name,)))
    if len(parts) == 6:
        return tablets
    if len(parts) == 7:
        tablet = _number(path, parts[6])
        replicas = show_storage.admin_show_replica(ctx, session, st.AdminShowReplica("STATUS", name, (partition.name,)))
        return Rows(replicas.columns, [r for r in replicas.rows if r[0] == tablet])
    raise _unknown(path)


_FIXED: dict[str, Callable[[Context, SessionState], Rows]] = {
    "": _root,
    "backends": cluster.show_backends,
    "frontends": cluster.show_frontends,
    "dbs": _dbs,
    "statistic": _statistic,
    "current_queries": _current_queries,
}


def show_proc(ctx: Context, session: SessionState, s: st.ShowProc) -> Rows:
    path = s.path.strip()
    if not path.startswith("/"):
        raise SqlFailure(ErrorCode.UNKNOWN_ERROR, f"errCode = 2, detailMessage = Path must start with '/': {path}")
    parts = [p for p in path.split("/") if p]
    if len(parts) <= 1 and (found := _FIXED.get(parts[0] if parts else "")) is not None:
        return found(ctx, session)
    if parts and parts[0] == "dbs":
        if len(parts) == 2:
            return _tables(ctx, session, _database(ctx, path, parts[1]))
        return _table_path(ctx, session, path, parts)
    raise _unknown(path)
