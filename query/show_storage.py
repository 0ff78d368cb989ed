"""SHOW DATA, SHOW TABLETS / SHOW TABLET, ADMIN SHOW REPLICA STATUS / DISTRIBUTION: where a table's data
is, in Doris' shapes, from the rowset records (query.storage_usage).

Strata keeps one copy of each rowset, so every tablet has one replica (its id is the tablet's), on the
backend (worker) whose slot holds the table; its bytes are split into local (`ssd`, `hdd`) and remote
(cooled to a resource), as Doris splits LocalDataSize and RemoteDataSize.
"""

from __future__ import annotations

import json
from collections.abc import Iterator

from projections.state import TableState
from query import access, cluster
from query.context import Context, Rows, SessionState, SqlFailure
from query.parser import statements as st
from query.storage_usage import (
    DATA_QUOTA_BYTES,
    REPLICA_QUOTA,
    TabletUsage,
    doris_bytes,
    split_tablet_id,
    table_usage,
    tablets,
)
from schemas.errors import ErrorCode


def _tiers_text(tablet_usage: dict[str, int], rowsets: dict[str, int]) -> str:
    return json.dumps({tier: {"rowsets": rowsets.get(tier, 0), "bytes": size}
                       for tier, size in sorted(tablet_usage.items())})


def show_data(ctx: Context, session: SessionState, s: st.ShowData) -> Rows:
    """Per table of a database, or per table for one: Doris 2.1's columns, sizes of the live rowsets
    (Size: local tiers, RemoteSize: cooled). Only tables the user may see are listed and counted."""
    user = access.user_of(ctx, session)
    if s.table is not None and (s.table.db is not None or _is_table(ctx, session, s.table.name)):
        table = ctx.table(session, s.table)
        db_name = s.table.db or session.database or ""
        if user is not None and not user.sees_table(db_name, table.name):
            raise SqlFailure(ErrorCode.TABLE_ACCESS_DENIED, f"Access denied; user '{user.name}'@'%' has no "
                                                            f"privilege on {db_name}.{table.name}")
        live, _, count = table_usage(ctx, table)
        return Rows(["TableName", "IndexName", "Size", "ReplicaCount", "RowCount", "RemoteSize"], [
            (table.name, table.name, doris_bytes(live.local_bytes), count, live.rows, doris_bytes(live.remote_bytes)),
            ("", "Total", doris_bytes(live.local_bytes), count, None, doris_bytes(live.remote_bytes))])
    db_id, db_name = ctx.database_id(session, s.table.name if s.table is not None else None)
    if user is not None and not user.sees_database(db_name):
        raise SqlFailure(ErrorCode.DB_ACCESS_DENIED, f"Access denied for user '{user.name}'@'%' to database "
                                                     f"'{db_name}'")
    rows: list[tuple[object, ...]] = []
    total_local = total_remote = total_replicas = 0
    for table in ctx.projection.tables_of(db_id):
        if user is not None and not user.sees_table(db_name, table.name):
            continue
        live, _, count = table_usage(ctx, table)
        rows.append((table.name, doris_bytes(live.local_bytes), count, doris_bytes(live.remote_bytes)))
        total_local += live.local_bytes
        total_remote += live.remote_bytes
        total_replicas += count
    rows.append(("Total", doris_bytes(total_local), total_replicas, doris_bytes(total_remote)))
    rows.append(("Quota", doris_bytes(DATA_QUOTA_BYTES), REPLICA_QUOTA, ""))
    rows.append(("Left", doris_bytes(max(0, DATA_QUOTA_BYTES - total_local)), REPLICA_QUOTA - total_replicas, ""))
    return Rows(["TableName", "Size", "ReplicaCount", "RemoteSize"], rows)


def _is_table(ctx: Context, session: SessionState, name: str) -> bool:
    """Whether a lone name after SHOW DATA FROM is a table of the session's database (else a database)."""
    if not session.database:
        return False
    db = ctx.projection.database_by_name(session.database)
    return db is not None and ctx.projection.table_by_name(db.db_id, name) is not None


def _partitions_of(table: TableState, names: tuple[str, ...]) -> None:
    for name in names:
        if table.partition_by_name(name) is None:
            raise SqlFailure(ErrorCode.UNKNOWN_PARTITION, f"Unknown partition '{name}' in table '{table.name}'")


def _tablet_path(ctx: Context, t: TabletUsage) -> str:
    tiers = sorted(set(t.live.bytes_by_tier) | set(t.stale.bytes_by_tier))
    dirs = []
    for tier in tiers:
        where = f"t{t.table.table_id}/p{t.partition_id}/b{t.bucket}"
        dirs.append(f"{tier}:{ctx.tiers.root(tier) / where}" if tier in ctx.tiers.names() else f"{tier}:{where}")
    return ", ".join(dirs)


def show_tablets(ctx: Context, session: SessionState, s: st.ShowTablets) -> Rows:
    table = ctx.table(session, s.table)
    _partitions_of(table, s.partitions)
    owners = cluster.slot_owners(cluster.workers(ctx))
    rows = []
    for t in tablets(ctx, table, s.partitions):
        rows.append((t.tablet_id, t.tablet_id, cluster.owner_of(owners, table.table_id), 0, t.version, t.version, -1,
                     "NULL", t.live.local_bytes, t.live.remote_bytes, t.live.rows, "NORMAL", "NULL", -1,
                     t.live.rowsets, t.live.rowsets + t.stale.rowsets, 0, 0, _tablet_path(ctx, t),
                     _console_url(ctx, session, table), "", -1, -1, t.partition_name,
                     _tiers_text(t.live.bytes_by_tier, t.live.rowsets_by_tier), t.stale.rowsets,
                     t.stale.total_bytes))
    return Rows(["TabletId", "ReplicaId", "BackendId", "SchemaHash", "Version", "LstSuccessVersion",
                 "LstFailedVersion", "LstFailedTime", "LocalDataSize", "RemoteDataSize", "RowCount", "State",
                 "LstConsistencyCheckTime", "CheckVersion", "VisibleVersionCount", "VersionCount", "QueryHits",
                 "PathHash", "Path", "MetaUrl", "CompactionStatus", "CooldownReplicaId", "CooldownMetaId",
                 "PartitionName", "Tiers", "StaleRowsets", "StaleDataSize"], rows)


def _console_url(ctx: Context, session: SessionState, table: TableState) -> str:
    db = ctx.projection.databases.get(table.db_id)
    return (f"http://{ctx.config.sql_host}:{ctx.config.http_port}/api/console/table/"
            f"{db.name if db else ''}/{table.name}")


def _tables(ctx: Context) -> Iterator[TableState]:
    return (t for t in ctx.projection.tables.values() if t.dropped_ts_ms is None)


def show_tablet(ctx: Context, session: SessionState, s: st.ShowTablet) -> Rows:
    partition_id, bucket = split_tablet_id(s.tablet_id)
    for table in _tables(ctx):
        p = table.partitions.get(partition_id)
        if p is None or p.dropped_ts_ms is not None or bucket >= p.partition.buckets:
            continue
        db = ctx.projection.databases.get(table.db_id)
        return Rows(["DbName", "TableName", "PartitionName", "IndexName", "DbId", "TableId", "PartitionId",
                     "IndexId", "IsSync", "Order", "QueryHits", "DetailCmd"], [
            (db.name if db else "", table.name, p.name, table.name, table.db_id, table.table_id, partition_id,
             table.table_id, "true", bucket, 0,
             f"SHOW PROC '/dbs/{table.db_id}/{table.table_id}/partitions/{partition_id}/{table.table_id}/"
             f"{s.tablet_id}';")])
    raise SqlFailure(ErrorCode.UNKNOWN_ERROR, f"errCode = 2, detailMessage = Tablet {s.tablet_id} does not exist")


def admin_show_replica(ctx: Context, session: SessionState, s: st.AdminShowReplica) -> Rows:
    table = ctx.table(session, s.table)
    _partitions_of(table, s.partitions)
    workers = cluster.workers(ctx)
    owners = cluster.slot_owners(workers)
    backend = cluster.owner_of(owners, table.table_id)
    found = tablets(ctx, table, s.partitions)
    if s.kind == "DISTRIBUTION":
        return _distribution(found, workers, owners)
    rows = []
    for t in found:
        # A replica is DEAD while no live worker holds its table's slot (nobody compacts or cools it);
        # its data stays readable by every SQL server.
        status = "OK" if backend != -1 else "DEAD"
        if s.status is not None and (status == s.status) == s.status_negated:
            continue
        rows.append((t.tablet_id, t.tablet_id, backend, t.version, -1, t.version, t.version, 0, t.live.rowsets,
                     "false", "false", "NORMAL", status))
    return Rows(["TabletId", "ReplicaId", "BackendId", "Version", "LastFailedVersion", "LastSuccessVersion",
                 "CommittedVersion", "SchemaHash", "VersionNum", "IsBad", "IsUserDrop", "State", "Status"], rows)


def _distribution(found: list[TabletUsage], workers: list[cluster.Worker], owners: dict[int, int]) -> Rows:
    backends = sorted({cluster.backend_id(w.instance) for w in workers})
    counts = dict.fromkeys(backends, 0)
    sizes = dict.fromkeys(backends, 0)
    for t in found:
        backend = cluster.owner_of(owners, t.table.table_id)
        counts[backend] = counts.get(backend, 0) + 1
        sizes[backend] = sizes.get(backend, 0) + t.live.total_bytes
    replicas, size = max(1, sum(counts.values())), max(1, sum(sizes.values()))
    rows = []
    for backend in sorted(counts):
        n_pct, s_pct = counts[backend] * 100 / replicas, sizes[backend] * 100 / size
        rows.append((backend, counts[backend], sizes[backend], ">" * round(n_pct / 2), f"{n_pct:.2f} %",
                     ">" * round(s_pct / 2), f"{s_pct:.2f} %"))
    return Rows(["BackendId", "ReplicaNum", "ReplicaSize", "NumGraph", "NumPercent", "SizeGraph", "SizePercent"], rows)
