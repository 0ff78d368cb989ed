"""The console's facts as plain dicts (JSON-ready), computed from the SQL server's projection
replica. The JSON endpoints return them as they are; the HTML views render the same dicts.

Everything here is read-only: a snapshot of the replica under its lock, the file cache's
counters, and (for routine load lag) the source topics' watermarks. What a viewer sees follows
the SQL privileges: root sees everything, any other user only the tables it `sees_table`.
"""

from __future__ import annotations

from collections import defaultdict
from dataclasses import dataclass
from datetime import UTC, datetime
from typing import Any

from projections.cooldown import TIERING_PROPERTIES, effective, plan_tablet
from projections.policy_clock import policy_clock
from projections.retention import earliest_instant_ms
from projections.routine_loads import RoutineLoadJob
from projections.snapshot import resolve
from projections.state import RowsetRecord, TableState
from projections.users import ROOT, UserRecord
from query.kafka_source import watermarks
from schemas.model import OFFSET_BEGINNING
from storage.secrets import masked
from storage.tiers import resource_of

# Commit kinds the fold records (projections/projection.py `_record_commit`), and the two
# row-level happenings that are not commits but show on a table's timeline.
COMMIT_KINDS = ("load", "delete", "update", "schema_change", "add_partition", "drop_partition", "restore",
                "truncate", "overwrite")


class NotFound(Exception):
    """The table does not exist, or the viewer may not see it (the same answer, like SQL)."""


@dataclass(frozen=True)
class Viewer:
    name: str
    user: UserRecord | None  # None: root

    @property
    def is_root(self) -> bool:
        return self.name.lower() == ROOT

    def sees(self, db: str, table: str) -> bool:
        return self.is_root or (self.user is not None and self.user.sees_table(db, table))


def iso(ts_ms: int | None) -> str | None:
    """UTC instant as Doris writes it, to the millisecond ('2026-12-01 10:00:00.123')."""
    if ts_ms is None:
        return None
    return datetime.fromtimestamp(ts_ms / 1000, tz=UTC).strftime("%Y-%m-%d %H:%M:%S.%f")[:-3]


def now_ms() -> int:
    return int(datetime.now(tz=UTC).timestamp() * 1000)


def _records(ctx: Any, table_id: int) -> list[RowsetRecord]:
    return list(ctx.projection.rowset_records(table_id))


def _visible_tables(ctx: Any, viewer: Viewer) -> list[tuple[str, TableState]]:
    projection = ctx.projection
    with projection.lock:
        found = []
        for db in sorted(projection.databases.values(), key=lambda d: d.name):
            if db.dropped_ts_ms is not None:
                continue
            for table in projection.tables_of(db.db_id):
                if viewer.sees(db.name, table.name):
                    found.append((db.name, table))
        return found


def _retention(ctx: Any, table: TableState, now: int) -> dict[str, Any]:
    earliest = earliest_instant_ms(table, now, ctx.config.time_travel_day_s)
    return {"enabled": table.time_travel,
            "retention_days": int(table.properties.get("time_travel_retention_days", "7")) if table.time_travel
            else None,
            "earliest_ms": earliest, "earliest": iso(earliest)}


def table_summary(ctx: Any, db: str, table: TableState, now: int) -> dict[str, Any]:
    records = _records(ctx, table.table_id)
    bytes_by_tier: dict[str, int] = defaultdict(int)
    rowsets_by_tier: dict[str, int] = defaultdict(int)
    for record in records:
        bytes_by_tier[record.rowset.tier] += record.rowset.size_bytes
        rowsets_by_tier[record.rowset.tier] += 1
    latest = resolve(ctx.projection, table)
    return {
        "db": db, "name": table.name, "table_id": table.table_id, "keys_model": table.keys_model,
        "partitions": len(table.live_partitions()),
        "buckets": table.distribution.buckets,
        # Rows held by the latest snapshot's rowsets (before DELETE predicates and key merges apply);
        # what SELECT COUNT(*) answers is `rows`, which the console adds (query.console.sql_reads).
        "rows_stored": sum(r.num_rows for r in latest.rowsets),
        "live_rowsets": len(latest.rowsets),
        "kept_rowsets": len(records),
        "bytes_by_tier": dict(sorted(bytes_by_tier.items())),
        "rowsets_by_tier": dict(sorted(rowsets_by_tier.items())),
        "bytes": sum(bytes_by_tier.values()),
        "commits": table.commit_number,
        "last_commit_ms": table.last_commit_ts_ms, "last_commit": iso(table.last_commit_ts_ms),
        "time_travel": _retention(ctx, table, now),
        "storage_policy": table.properties.get("storage_policy"),
    }


def tables(ctx: Any, viewer: Viewer) -> dict[str, Any]:
    """`/api/console/tables`: every database and table the viewer sees, with size per tier."""
    now = now_ms()
    databases: dict[str, list[dict[str, Any]]] = {}
    if viewer.is_root:
        with ctx.projection.lock:
            for d in ctx.projection.databases.values():
                if d.dropped_ts_ms is None:
                    databases.setdefault(d.name, [])
    for db, table in _visible_tables(ctx, viewer):
        databases.setdefault(db, []).append(table_summary(ctx, db, table, now))
    tiers = sorted({tier for ts in databases.values() for t in ts for tier in t["bytes_by_tier"]},
                   key=lambda t: (resource_of(t) is not None, t))
    return {"generated_at": iso(now), "viewer": viewer.name, "tiers": tiers,
            "databases": [{"name": name, "tables": databases[name]} for name in sorted(databases)],
            "resources": _resources(ctx) if viewer.is_root else []}


def _resources(ctx: Any) -> list[dict[str, Any]]:
    with ctx.projection.lock:
        named = dict(ctx.projection.named["resource"])
    out = []
    for name, value in sorted(named.items()):
        props = value.get("properties", {}) if isinstance(value, dict) else {}
        out.append({"name": name, "properties": masked({str(k): str(v) for k, v in props.items()})})
    return out


def _find(ctx: Any, viewer: Viewer, db: str, name: str) -> TableState:
    projection = ctx.projection
    with projection.lock:
        database = projection.database_by_name(db)
        table = projection.table_by_name(database.db_id, name) if database is not None else None
        if database is None or table is None or not viewer.sees(database.name, table.name):
            raise NotFound(f"Table '{db}.{name}' doesn't exist")
        return table


def _rowset(record: RowsetRecord, partitions: dict[int, str]) -> dict[str, Any]:
    rs = record.rowset
    return {"rowset_id": rs.rowset_id, "partition": partitions.get(rs.partition_id, str(rs.partition_id)),
            "partition_id": rs.partition_id, "bucket": rs.bucket, "start_version": rs.start_version,
            "end_version": rs.end_version, "tier": rs.tier, "remote": resource_of(rs.tier) is not None,
            "num_rows": rs.num_rows, "size_bytes": rs.size_bytes, "visible_ms": rs.visible_ts_ms,
            "visible": iso(rs.visible_ts_ms), "stale_ms": record.stale_ts_ms, "stale": iso(record.stale_ts_ms),
            "state": "stale" if record.stale_ts_ms is not None else "visible",
            "compacted": rs.start_version < rs.end_version}


def table_timeline(ctx: Any, viewer: Viewer, db: str, name: str, at_ms: int | None = None) -> dict[str, Any]:
    """`/api/console/table/<db>/<table>`: commits, compactions, rowsets per tablet, and — for an
    instant `at_ms` — the time-travel SQL that reads the table then and the rowsets it touches."""
    table = _find(ctx, viewer, db, name)
    now = now_ms()
    partitions = {p.partition_id: p.name for p in table.partitions.values()}
    commits = [{"number": c.commit_number, "ts_ms": c.ts_ms, "time": iso(c.ts_ms), "kind": c.kind,
                "rows_added": c.rows_added, "rows_removed": c.rows_removed, "description": c.description,
                "partition_versions": {partitions.get(pid, str(pid)): v for pid, v in c.partition_versions.items()}}
               for c in ctx.projection.commits(table.table_id)]
    records = _records(ctx, table.table_id)
    rowsets = [_rowset(r, partitions) for r in records]
    # A compaction is no commit (it changes no answer): its output rowset spans versions, and
    # its inputs turned stale at the instant the output became visible.
    compactions = []
    for out in (r for r in rowsets if r["compacted"]):
        inputs = [r["rowset_id"] for r in rowsets
                  if r["stale_ms"] == out["visible_ms"] and r["partition_id"] == out["partition_id"]
                  and r["bucket"] == out["bucket"] and out["start_version"] <= r["start_version"]
                  and r["end_version"] <= out["end_version"] and r["rowset_id"] != out["rowset_id"]]
        compactions.append({"ts_ms": out["visible_ms"], "time": out["visible"], "partition": out["partition"],
                            "bucket": out["bucket"], "versions": [out["start_version"], out["end_version"]],
                            "output": out["rowset_id"], "inputs": inputs, "tier": out["tier"]})
    compactions.sort(key=lambda c: c["ts_ms"])
    tablets: dict[tuple[str, int], list[dict[str, Any]]] = defaultdict(list)
    for partition in table.live_partitions():  # every tablet has its row, one without rowsets too
        for bucket in range(partition.partition.buckets):
            tablets[(partition.name, bucket)] = []
    for r in rowsets:
        tablets[(r["partition"], r["bucket"])].append(r)
    summary = table_summary(ctx, db, table, now)
    result: dict[str, Any] = {
        "viewer": viewer.name, "table": summary, "commits": commits, "compactions": compactions,
        "tags": tags(ctx, table, now),
        "tablets": [{"partition": p, "bucket": b,
                     "rowsets": sorted(rs, key=lambda r: (r["start_version"], -r["end_version"]))}
                    for (p, b), rs in sorted(tablets.items())],
        "cooldowns": [{"ts_ms": m.ts_ms, "time": iso(m.ts_ms), "rowsets": len(m.moves),
                       "moves": [{"rowset_id": mv.rowset_id, "from": mv.from_tier, "to": mv.to_tier} for mv in m.moves]}
                      for m in ctx.projection.moves(table.table_id)],
        "tiers_now": summary["rowsets_by_tier"],
    }
    result["as_of"] = as_of(ctx, table, db, at_ms) if at_ms is not None else None
    return result


def tags(ctx: Any, table: TableState, now: int) -> list[dict[str, Any]]:
    """The table's live tags (SHOW TAGS ON t), each at the instant of the commit it names."""
    found = []
    for tag in sorted(table.tags.values(), key=lambda t: (t.created_ts_ms, t.name)):
        if not tag.live_at(now):
            continue
        commit = ctx.projection.commit(table.table_id, tag.commit_number)
        ts = commit.ts_ms if commit is not None else tag.ts_ms
        found.append({"name": tag.name, "commit_number": tag.commit_number, "ts_ms": ts, "time": iso(ts),
                      "created": iso(tag.created_ts_ms), "retention_days": tag.retention_days,
                      "expires": iso(tag.expires_ts_ms)})
    return found


def next_commit(found: dict[str, Any], at_ms: int) -> int | None:
    """The number of the first commit after `at_ms` in a timeline (None: none since)."""
    return next((c["number"] for c in found["commits"] if c["ts_ms"] > at_ms), None)


def as_of(ctx: Any, table: TableState, db: str, at_ms: int) -> dict[str, Any]:
    """The SQL reading `table` as of `at_ms` (UTC session time zone) and the rowsets that read uses."""
    sql = f"SELECT * FROM `{db}`.`{table.name}` FOR TIME AS OF '{iso(at_ms)}'"
    earliest = earliest_instant_ms(table, now_ms(), ctx.config.time_travel_day_s)
    if not table.time_travel:
        return {"ts_ms": at_ms, "time": iso(at_ms), "sql": sql, "readable": False,
                "reason": f"table '{table.name}' has no time travel", "rowsets": []}
    if earliest is not None and at_ms < earliest:
        return {"ts_ms": at_ms, "time": iso(at_ms), "sql": sql, "readable": False,
                "reason": f"before the earliest available instant {iso(earliest)}", "rowsets": []}
    snapshot = resolve(ctx.projection, table, at_ms)
    # `read_through`: a version-keeping compaction output read up to that version only (None: whole).
    touched = [{"rowset_id": r.rowset_id, "partition": p.name, "bucket": r.bucket,
                "versions": [r.start_version, r.end_version], "read_through": r.read_through, "tier": r.tier,
                "num_rows": r.num_rows}
               for p in snapshot.partitions for r in p.rowsets]
    return {"ts_ms": at_ms, "time": iso(at_ms), "sql": sql, "readable": True, "reason": "",
            "versions": {p.name: p.version for p in snapshot.partitions}, "rowsets": touched}


def _job_view(ctx: Any, job: RoutineLoadJob, db: str, table: str, now: int) -> dict[str, Any]:
    spec = job.spec
    until = job.end_ts_ms or (job.paused_ts_ms if job.state == "PAUSED" else None) or now
    age_s = max(0.001, (until - job.created_ts_ms) / 1000)
    lag: dict[str, int | None] = {}
    progress: dict[str, int] = {}
    for partition in sorted(spec.start_offsets):
        nxt = job.next_offset(partition)
        progress[str(partition)] = nxt
    if job.state != "STOPPED":
        client = {k.removeprefix("property."): v
                  for k, v in ctx.stores.box.open_properties(dict(spec.client_properties)).items()}
        ends = watermarks(spec.broker_list, spec.topic, sorted(spec.start_offsets), client)
        for partition in sorted(spec.start_offsets):
            if partition not in ends:
                lag[str(partition)] = None  # the source cluster did not answer in time
                continue
            low, high = ends[partition]
            nxt = job.next_offset(partition)
            lag[str(partition)] = max(0, high - (low if nxt == OFFSET_BEGINNING else nxt))
    return {"id": job.job_id, "name": job.name, "db": db, "table": table, "state": job.state,
            "reason": job.reason, "topic": spec.topic, "created": iso(job.created_ts_ms),
            "loaded_rows": job.loaded_rows, "error_rows": job.error_rows, "unselected_rows": job.unselected_rows,
            "received_bytes": job.received_bytes, "committed_batches": job.committed_batches,
            # Loaded rows over the job's age (creation to now, or to its pause / end).
            "rows_per_s": round(job.loaded_rows / age_s, 2), "rows_per_s_basis": "loaded_rows / job age",
            "next_offsets": progress, "lag": lag, "last_error": job.last_error,
            "client_properties": masked(dict(spec.client_properties))}


def _tiering_queue(ctx: Any, viewer: Viewer) -> list[dict[str, Any]]:
    """Per tablet, what the worker's tiering agent would move and when it is next due, planned here
    from the replica with the same rule (projections.cooldown.plan_tablet) and the policy clock."""
    config = ctx.config
    now = int(policy_clock(config)() * 1000)
    queue = []
    for db, table in _visible_tables(ctx, viewer):
        for partition in table.live_partitions():
            tiered = any(effective(table, partition, key) for key in TIERING_PROPERTIES)
            for bucket in range(partition.partition.buckets):
                with ctx.projection.lock:
                    plan = plan_tablet(ctx.projection, table, partition, bucket, now, config.storage_cooldown_seconds)
                if not plan.moves and not tiered:
                    continue  # only the default SSD → HDD cooldown, weeks away: not a queue entry
                moves = [{"rowset_id": m.rowset.rowset_id, "versions": [m.rowset.start_version, m.rowset.end_version],
                          "from": m.rowset.tier, "to": m.to_tier, "size_bytes": m.rowset.size_bytes}
                         for m in plan.moves]
                queue.append({"db": db, "table": table.name, "partition": partition.name, "bucket": bucket,
                              "policy": effective(table, partition, "storage_policy"),
                              "due_now": moves, "next_due_ms": plan.next_due_ms, "next_due": iso(plan.next_due_ms)
                              if plan.next_due_ms is not None and plan.next_due_ms < 2**61 else None})
    return queue


def pipelines(ctx: Any, viewer: Viewer) -> dict[str, Any]:
    """`/api/console/pipelines`: routine loads, the tiering queue, the file cache."""
    now = now_ms()
    projection = ctx.projection
    with projection.lock:
        jobs = sorted(projection.routine_loads.values(), key=lambda j: j.job_id)
        names = {}
        for job in jobs:
            database = projection.databases.get(job.db_id)
            table = projection.tables.get(job.table_id)
            if database is None or database.dropped_ts_ms is not None or table is None \
                    or table.dropped_ts_ms is not None:
                continue  # gone with its table or database (it stopped then)
            names[job.key] = (database.name, table.name)
    loads = [_job_view(ctx, job, *names[job.key], now) for job in jobs
             if job.key in names and viewer.sees(*names[job.key])]
    cache = ctx.locator.cache
    stats = cache.stats
    reads = stats.hits + stats.misses
    return {
        "generated_at": iso(now), "viewer": viewer.name, "routine_loads": loads,
        "tiering": {"computed_by": "the SQL server, from its replica with projections.cooldown.plan_tablet; "
                                   "the moves themselves are made by the worker's tiering agent",
                    "now": iso(int(policy_clock(ctx.config)() * 1000)), "tablets": _tiering_queue(ctx, viewer)},
        "file_cache": {"hits": stats.hits, "misses": stats.misses, "hit_rate": round(stats.hits / reads, 4)
                       if reads else None, "bytes_downloaded": stats.bytes_downloaded,
                       "evictions": stats.evictions, "bytes_cached": cache.bytes_cached, "cap_bytes": cache.cap_bytes},
    }
