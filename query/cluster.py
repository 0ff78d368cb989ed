"""Doris' view of the cluster, answered with what a Strata deployment is made of: its workers are the
backends (they compact, cool and load the tables of their slots), its SQL servers the frontends.

A worker is alive while it is a member of the workers' consumer group on `strata.workers`: Kafka's group
protocol is the heartbeat (a worker that stops polling leaves once its 6 s session expires), and its
slots there say which tables it works for. Its `/health` (the port its group member's client id names)
says how it is doing, since when it runs and which version. A worker this server saw before and that
has left the group is listed as not alive with the time it was last seen, as Doris lists a backend whose
heartbeats stopped; so is the worker this server's configuration names, when none is a member.
SQL servers are present the same way, in a group of their own (`sql_server_presence`).
"""

from __future__ import annotations

import json
import os
import re
import shutil
import threading
import time
import urllib.error
import urllib.request
import zlib
from dataclasses import dataclass, field
from datetime import datetime

from confluent_kafka import KafkaException
from confluent_kafka.admin import AdminClient, ConsumerGroupDescription

from projections.membership import GroupMembership
from query.context import Context, Rows, SessionState
from query.parser import statements as st
from query.session_functions import session_zone
from query.storage_usage import doris_bytes, table_usage
from schemas.config import Settings, strata_version
from schemas.topics import (
    LEADER_GROUP,
    SQL_SERVERS_GROUP,
    WORKER_SLOTS,
    WORKERS_GROUP,
    WORKERS_TOPIC,
    parse_sql_client_id,
    parse_worker_client_id,
    sql_client_id,
)

_GROUP_TIMEOUT_S = 5.0
_HEALTH_TIMEOUT_S = 1.0
STARTED_MS = int(time.time() * 1000)  # this SQL server's start (the module loads as it starts)

BACKEND_COLUMNS = [
    "BackendId", "Host", "HeartbeatPort", "BePort", "HttpPort", "BrpcPort", "ArrowFlightSqlPort", "LastStartTime",
    "LastHeartbeat", "Alive", "SystemDecommissioned", "TabletNum", "DataUsedCapacity", "TrashUsedCapacity",
    "AvailCapacity", "TotalCapacity", "UsedPct", "MaxDiskUsedPct", "RemoteUsedCapacity", "Tag", "ErrMsg", "Version",
    "Status", "HeartbeatFailureCounter", "NodeRole", "CpuCores", "Memory"]
FRONTEND_COLUMNS = [
    "Name", "Host", "EditLogPort", "HttpPort", "QueryPort", "RpcPort", "ArrowFlightSqlPort", "Role", "IsMaster",
    "ClusterId", "Join", "Alive", "ReplayedJournalId", "LastStartTime", "LastHeartbeat", "IsHelper", "ErrMsg",
    "Version", "CurrentConnected"]
_NO_PORT = -1  # a Doris port Strata has no counterpart of (Doris prints -1 for a disabled one)


@dataclass
class Worker:
    """A worker as this server last saw it."""

    instance: str
    host: str
    web_port: int
    slots: frozenset[int] = frozenset()
    leads: bool = False
    alive: bool = False
    last_seen_ms: int | None = None
    started_ms: int | None = None
    version: str = ""
    health: dict[str, object] = field(default_factory=dict)
    error: str = ""
    failures: int = 0


# Workers seen by this process, by instance: a worker that left the group stays listed (not alive).
_seen: dict[str, Worker] = {}
_seen_lock = threading.Lock()


def backend_id(instance: str) -> int:
    """A stable id per worker instance, in Doris' range of backend ids."""
    return 10000 + zlib.crc32(instance.encode()) % 90000


def _describe(config: Settings, groups: list[str]) -> list[ConsumerGroupDescription]:
    """The consumer groups' members now (raises KafkaException or TimeoutError)."""
    admin = AdminClient({**config.kafka_client(), "socket.timeout.ms": int(_GROUP_TIMEOUT_S * 1000)})
    futures = admin.describe_consumer_groups(groups, request_timeout=_GROUP_TIMEOUT_S)
    return [futures[group].result(timeout=_GROUP_TIMEOUT_S) for group in groups]


def _group_members(ctx: Context) -> tuple[list[Worker], str]:
    """The workers in the group now (with their slots and whether they lead), or an error text."""
    try:
        workers_group, leader_group = _describe(ctx.config, [WORKERS_GROUP, LEADER_GROUP])
    except (KafkaException, TimeoutError) as exc:
        return [], f"the workers' group could not be read from Kafka: {exc}"
    leaders = {m.client_id for m in leader_group.members if m.assignment and m.assignment.topic_partitions}
    found: list[Worker] = []
    for member in workers_group.members:
        parsed = parse_worker_client_id(member.client_id or "")
        if parsed is None:
            continue
        instance, port = parsed
        slots = frozenset(tp.partition for tp in (member.assignment.topic_partitions if member.assignment else []))
        found.append(Worker(instance or "local", (member.host or "").lstrip("/") or "127.0.0.1", port, slots,
                            member.client_id in leaders, alive=True))
    return found, ""


def _health(host: str, port: int) -> tuple[dict[str, object], str]:
    """A Strata process's /health JSON (a 503 still carries it, saying why), or an error text."""
    url = f"http://{host}:{port}/health"
    try:
        with urllib.request.urlopen(url, timeout=_HEALTH_TIMEOUT_S) as answer:  # noqa: S310 - a Strata process
            body = answer.read()
    except urllib.error.HTTPError as exc:
        body = exc.read()
    except (OSError, ValueError) as exc:
        return {}, f"/health at {url} did not answer: {exc}"
    try:
        found = json.loads(body)
    except ValueError:
        return {}, f"/health at {url} did not answer JSON"
    return (found, "") if isinstance(found, dict) else ({}, f"/health at {url} did not answer a JSON object")


def _probe(worker: Worker) -> None:
    """Reads the worker's /health into it."""
    health, error = _health(worker.host, worker.web_port)
    if error:
        worker.error = error
        return
    worker.health = health
    started = health.get("started_ms")
    worker.started_ms = started if isinstance(started, int) else None
    worker.version = str(health.get("version", ""))
    if health.get("status") != "ok":
        worker.error = f"worker is {health.get('status')}" + (
            f": {health['sequencer_error']}" if health.get("sequencer_error") else "")


def workers(ctx: Context) -> list[Worker]:
    """Every worker this server knows of: the group's members now, then those that left it."""
    members, group_error = _group_members(ctx)
    now = int(time.time() * 1000)
    for worker in members:
        worker.last_seen_ms = now
        _probe(worker)
    with _seen_lock:
        for worker in members:
            _seen[worker.instance] = worker
        present = {w.instance for w in members}
        expected = ctx.config.worker_instance or "local"
        if not members and expected not in _seen:
            _seen[expected] = Worker(expected, ctx.config.kafka_host, ctx.config.worker_port)
        for instance, worker in _seen.items():
            if instance not in present and (worker.alive or not worker.error):
                worker.alive, worker.slots, worker.leads = False, frozenset(), False
                worker.error = group_error or f"not a member of the workers' group ({WORKERS_GROUP})"
            if instance not in present:
                worker.failures += 1
        return sorted(_seen.values(), key=lambda w: w.instance)


def _moment(session: SessionState, ts_ms: int | None) -> str | None:
    if ts_ms is None:
        return None
    return datetime.fromtimestamp(ts_ms / 1000, tz=session_zone(session)).strftime("%Y-%m-%d %H:%M:%S")


@dataclass
class _Disks:
    total: int
    available: int
    max_used_pct: float


def _disks(ctx: Context) -> _Disks:
    """The file systems holding the local tiers (each counted once)."""
    seen: dict[int, tuple[int, int]] = {}  # device: (total, free)
    for tier in ctx.tiers.names():
        root = ctx.tiers.root(tier)
        if root.exists():
            usage = shutil.disk_usage(root)
            seen.setdefault(root.stat().st_dev, (usage.total, usage.free))
    total = sum(t for t, _ in seen.values())
    available = sum(f for _, f in seen.values())
    max_used = max(((t - f) * 100 / t for t, f in seen.values() if t), default=0.0)
    return _Disks(total, available, max_used)


def _memory_text() -> str:
    try:
        return doris_bytes(os.sysconf("SC_PAGE_SIZE") * os.sysconf("SC_PHYS_PAGES"))
    except (ValueError, OSError):
        return ""


def show_backends(ctx: Context, session: SessionState) -> Rows:
    found = workers(ctx)
    # Each table's tablets and bytes go to the worker holding the table's slot.
    per_slot: dict[int, tuple[int, int, int]] = {}
    for table in ctx.projection.tables.values():
        if table.dropped_ts_ms is not None:
            continue
        live, stale, tablet_count = table_usage(ctx, table)
        slot = table.table_id % WORKER_SLOTS
        tablets, local, remote = per_slot.get(slot, (0, 0, 0))
        per_slot[slot] = (tablets + tablet_count, local + live.local_bytes + stale.local_bytes,
                          remote + live.remote_bytes + stale.remote_bytes)
    disks = _disks(ctx)
    used_pct = (disks.total - disks.available) * 100 / disks.total if disks.total else 0.0
    rows = []
    for w in found:
        tablets = sum(per_slot.get(s, (0, 0, 0))[0] for s in w.slots)
        local = sum(per_slot.get(s, (0, 0, 0))[1] for s in w.slots)
        remote = sum(per_slot.get(s, (0, 0, 0))[2] for s in w.slots)
        status = {"health": w.health.get("status", "unreachable" if w.alive else "gone"), "leader": w.leads,
                  "slots": sorted(w.slots), "isQueryDisabled": False, "isLoadDisabled": False}
        rows.append((backend_id(w.instance), w.host, w.web_port, _NO_PORT, w.web_port, _NO_PORT, _NO_PORT,
                     _moment(session, w.started_ms), _moment(session, w.last_seen_ms), "true" if w.alive else "false",
                     "false", tablets, doris_bytes(local), doris_bytes(0), doris_bytes(disks.available),
                     doris_bytes(disks.total), f"{used_pct:.2f} %", f"{disks.max_used_pct:.2f} %", doris_bytes(remote),
                     json.dumps({"location": "default", "instance": w.instance}), w.error, w.version,
                     json.dumps(status), 0 if w.alive else w.failures, "mix", os.cpu_count() or 0, _memory_text()))
    return Rows(BACKEND_COLUMNS, rows)


def sql_server_presence(config: Settings) -> GroupMembership:
    """This SQL server's membership of the SQL servers' group, so the others list it (SHOW FRONTENDS).
    Nothing is written to the topic; the member's client id says where the server answers."""
    instance = re.sub(r"[^A-Za-z0-9_-]", "_", f"{config.sql_host}-{config.sql_port}")
    return GroupMembership(config, WORKERS_TOPIC, SQL_SERVERS_GROUP, instance, lambda: None,
                           sql_client_id(config.sql_host, config.sql_port, config.http_port))


def _other_frontends(ctx: Context, session: SessionState, cluster_id: int) -> list[tuple[object, ...]]:
    """The other SQL servers present in the SQL servers' group, as each one's /health describes it."""
    try:
        (group,) = _describe(ctx.config, [SQL_SERVERS_GROUP])
    except (KafkaException, TimeoutError):
        return []
    rows: list[tuple[object, ...]] = []
    now = int(time.time() * 1000)
    for member in group.members:
        parsed = parse_sql_client_id(member.client_id or "")
        if parsed is None or (parsed[1] == ctx.config.sql_port and parsed[0] == ctx.config.sql_host):
            continue
        host, sql_port, http_port = parsed
        health, error = _health(host, http_port)
        started, applied = health.get("started_ms"), health.get("applied_events")
        rows.append((str(health.get("replica", f"sql-{sql_port}")), host, _NO_PORT, http_port, sql_port, _NO_PORT,
                     _NO_PORT, "FOLLOWER", "true", cluster_id, "true", "true" if health.get("status") == "ok"
                     else "false", applied if isinstance(applied, int) else -1,
                     _moment(session, started if isinstance(started, int) else None), _moment(session, now), "true",
                     error or ("" if health.get("status") == "ok" else f"server is {health.get('status')}"),
                     str(health.get("version", "")), "No"))
    return rows


def show_frontends(ctx: Context, session: SessionState) -> Rows:
    """This SQL server, then the others present in the SQL servers' group: every SQL server takes reads
    and writes (the sequencer orders the writes), so each is a master as Doris' tools mean it; the journal
    it replayed is the events its replica applied."""
    config = ctx.config
    cluster_id = zlib.crc32(str(config.kafka_client().get("bootstrap.servers", "")).encode()) & 0x7FFFFFFF
    now = int(time.time() * 1000)
    follower = ctx.follower._thread
    row = (ctx.name, config.sql_host, _NO_PORT, config.http_port, config.sql_port, _NO_PORT, _NO_PORT, "FOLLOWER",
           "true", cluster_id, "true", "true" if follower is not None and follower.is_alive() else "false",
           ctx.follower.applied_events, _moment(session, STARTED_MS), _moment(session, now), "true", "",
           strata_version(), "Yes")
    return Rows(FRONTEND_COLUMNS, [row, *_other_frontends(ctx, session, cluster_id)])


def slot_owners(found: list[Worker]) -> dict[int, int]:
    """The backend id of the live worker holding each slot (a slot no live worker holds is absent)."""
    return {slot: backend_id(w.instance) for w in found if w.alive for slot in w.slots}


def owner_of(owners: dict[int, int], table_id: int) -> int:
    """The backend (worker) that works for a table: -1 while no live worker holds its slot."""
    return owners.get(table_id % WORKER_SLOTS, -1)


def show_cluster(ctx: Context, session: SessionState, s: st.ShowCluster) -> Rows:
    return show_backends(ctx, session) if s.kind == "BACKENDS" else show_frontends(ctx, session)
