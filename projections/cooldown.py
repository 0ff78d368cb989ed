"""Cooldown: which rowsets of a tablet are due to move, and moving one (DESIGN §10).

Two kinds of move, both decided from the replica and a clock:
- to a remote resource, by the partition's storage policy: a rowset is due at its newest write
  + `cooldown_ttl`, or at `cooldown_datetime`. A tablet cools gap-free from its lowest version —
  the first live rowset not yet due stops the walk — and stale rowsets kept for time travel go
  at once (only reads of the past need them).
- between local media, by `storage_medium` / `storage_cooldown_time`: SSD data moves to HDD once
  the cooldown time has passed (or when the medium is set to HDD).

A tablet's due moves are copied in parallel, each verified, and then committed in one
`MoveRowsets` (in version order, up to the first copy that failed); the source copies are
removed by the caller later, once no query can still be reading them.
"""

from __future__ import annotations

import itertools
import logging
import os
import shutil
from collections.abc import Callable
from concurrent.futures import ThreadPoolExecutor
from dataclasses import dataclass, field
from datetime import UTC, datetime
from pathlib import Path
from typing import Any

from projections.projection import Projection
from projections.proposer import CommandFailed, Proposer
from projections.remote import RemoteStores
from projections.snapshot import cover_tablet
from projections.state import PartitionState, TableState
from schemas import commands as cmd
from schemas.model import Rowset, RowsetMove
from storage.object_store import ResourceError, file_digests
from storage.paths import UnsafePath, check_rowset_path
from storage.rowset_writer import file_sha256
from storage.tiers import LocalTiers, remote_tier, resource_of

log = logging.getLogger(__name__)
DATETIME_FORMAT = "%Y-%m-%d %H:%M:%S"
# The properties (of a table or a partition) that make its data move.
# Copies of one tablet's due rowsets made at once (uploads overlap; commits stay in version order).
COPY_THREADS = 4
# How often a tablet whose cooldown waits for a file a clone shares is planned again.
SHARED_RECHECK_MS = 60_000
TIERING_PROPERTIES = ("storage_policy", "storage_medium", "storage_cooldown_time")


class CorruptRowset(Exception):
    """A rowset's local file does not match its checksum; it is not moved anywhere."""


def utc_ms(text: str) -> int:
    """Milliseconds of a normalized UTC datetime property ('YYYY-MM-DD HH:MM:SS')."""
    return int(datetime.strptime(text, DATETIME_FORMAT).replace(tzinfo=UTC).timestamp() * 1000)


def effective(table: TableState, partition: PartitionState, key: str) -> str | None:
    """A partition's own property, else its table's."""
    return partition.partition.properties.get(key) or table.properties.get(key) or None


def policy_of(projection: Projection, table: TableState, partition: PartitionState) -> dict[str, Any] | None:
    name = effective(table, partition, "storage_policy")
    return projection.named["storage_policy"].get(name) if name else None


def due_ms(policy: dict[str, Any], rowset: Rowset) -> int:
    props = policy["properties"]
    candidates = []
    if props.get("cooldown_ttl") is not None:
        candidates.append(rowset.written_ts_ms + int(props["cooldown_ttl"]) * 1000)
    if props.get("cooldown_datetime"):
        candidates.append(utc_ms(props["cooldown_datetime"]))
    return min(candidates) if candidates else 2**62


def ssd_cooldown_ms(table: TableState, partition: PartitionState, default_cooldown_s: float | None) -> int | None:
    """When a partition's SSD data moves to HDD: its `storage_cooldown_time`, else (Doris'
    `storage_cooldown_second`) the configured default after the partition was created; None: never."""
    cooldown = effective(table, partition, "storage_cooldown_time")
    if cooldown:
        return utc_ms(cooldown)
    if default_cooldown_s is None:
        return None
    return partition.created_ts_ms + int(default_cooldown_s * 1000)


def local_target(table: TableState, partition: PartitionState, now_ms: int,
                 default_cooldown_s: float | None = None) -> str:
    """The local medium a partition's data belongs on now."""
    medium = (effective(table, partition, "storage_medium") or "ssd").lower()
    cooldown = ssd_cooldown_ms(table, partition, default_cooldown_s)
    if medium == "hdd" or (cooldown is not None and cooldown <= now_ms):
        return "hdd"
    return "ssd"


@dataclass(frozen=True)
class Move:
    rowset: Rowset
    to_tier: str


@dataclass(frozen=True)
class TabletPlan:
    moves: list[Move]
    # When this tablet next has something due (None: nothing will be, until the log changes).
    next_due_ms: int | None


def _shared(projection: Projection, table: TableState, rowset: Rowset) -> bool:
    return rowset.shared_file is not None or projection.shared(table.table_id, rowset)


def plan_tablet(projection: Projection, table: TableState, partition: PartitionState, bucket: int,
                now_ms: int, default_cooldown_s: float | None = None) -> TabletPlan:
    if not any(effective(table, partition, key) for key in TIERING_PROPERTIES):
        # Nothing moves before the default SSD cooldown: no rowset scan for the common case.
        default = ssd_cooldown_ms(table, partition, default_cooldown_s)
        if default is None or default > now_ms:
            return TabletPlan([], default)
    # A file a clone shares with its source stays where it is (both tables' records name it there):
    # cooldown stops below the first such rowset not cold yet, gap-free, and goes on once compaction
    # has replaced it. The other table's release is an event of that table, not of this one: the
    # tablet is looked at again after a while.
    cover = cover_tablet(projection, table.table_id, partition, bucket, partition.version)
    live = list(itertools.takewhile(lambda r: resource_of(r.tier) is not None or not _shared(projection, table, r),
                                    cover))
    stale_records = [r.rowset for r in projection.rowset_records(table.table_id, partition.partition_id)
                     if r.stale_ts_ms is not None and r.rowset.bucket == bucket]
    stale = [r for r in stale_records if not _shared(projection, table, r)]
    moves: list[Move] = []
    next_due: list[int] = [now_ms + SHARED_RECHECK_MS] if len(live) < len(cover) or len(stale) < len(stale_records) \
        else []
    policy = policy_of(projection, table, partition)
    resource = policy["properties"].get("storage_resource") if policy else None
    if resource and resource in projection.named["resource"]:
        target = remote_tier(resource)
        for rowset in live:
            if resource_of(rowset.tier) is not None:
                continue
            due = due_ms(policy, rowset)  # type: ignore[arg-type]
            if due > now_ms:
                next_due.append(due)
                break  # gap-free: nothing above a rowset that is not due yet
            moves.append(Move(rowset, target))
        moves.extend(Move(r, target) for r in stale if resource_of(r.tier) is None)
    moving = {m.rowset.rowset_id for m in moves}
    medium = local_target(table, partition, now_ms, default_cooldown_s)
    for rowset in (*live, *stale):
        if rowset.rowset_id not in moving and resource_of(rowset.tier) is None and rowset.tier != medium:
            moves.append(Move(rowset, medium))
    cooldown = ssd_cooldown_ms(table, partition, default_cooldown_s)
    if medium == "ssd" and cooldown is not None:
        next_due.append(cooldown)
    return TabletPlan(moves, min(next_due) if next_due else None)


def _copy_durably(source: Path, dest: Path) -> None:
    dest.parent.mkdir(parents=True, exist_ok=True)
    tmp = dest.with_name(f".{dest.name}.tmp")
    shutil.copyfile(source, tmp)
    with open(tmp, "rb+") as fh:
        os.fsync(fh.fileno())
    os.replace(tmp, dest)


@dataclass(frozen=True)
class Copied:
    move: Move
    source: Path
    undo: Callable[[], None]


@dataclass(frozen=True)
class TabletMoves:
    sources: list[Path]  # old copies of the committed moves, for the caller to remove later
    failure: Exception | None  # why the moves after the committed ones were not made


@dataclass
class Cooler:
    projection: Projection
    proposer: Proposer
    tiers: LocalTiers
    stores: RemoteStores
    moved_rowsets: int = 0
    moved_bytes: int = 0
    _pool: ThreadPoolExecutor = field(default_factory=lambda: ThreadPoolExecutor(COPY_THREADS, "tiering-copy"))

    def copy(self, move: Move) -> Copied:
        """Writes and verifies the destination copy of one move.

        Raises `ResourceError` (store down or refusing) or `CorruptRowset`."""
        rowset = move.rowset
        try:  # the path came from the log: only an id-built one is read, uploaded or removed
            check_rowset_path(rowset.path, rowset.partition_id, rowset.bucket, rowset.rowset_id)  # never shared
            source = self.tiers.locate(rowset.tier, rowset.path)
        except UnsafePath as exc:
            raise CorruptRowset(str(exc)) from None
        sha, etag = file_digests(source)  # one read: the local copy's integrity and the upload's ETag
        if sha != rowset.checksum:
            raise CorruptRowset(f"{source} does not match its checksum; left where it is")
        resource = resource_of(move.to_tier)
        if resource is not None:
            store = self.stores(resource)
            store.upload(source, rowset.path, rowset.checksum, etag)
            return Copied(move, source, lambda: store.remove(rowset.path))
        dest = self.tiers.locate(move.to_tier, rowset.path)
        _copy_durably(source, dest)
        if file_sha256(dest) != rowset.checksum:
            dest.unlink(missing_ok=True)
            raise CorruptRowset(f"the copy of {rowset.rowset_id} on {move.to_tier} does not match its checksum")
        return Copied(move, source, lambda: dest.unlink(missing_ok=True))

    def move_tablet(self, table: TableState, moves: list[Move]) -> TabletMoves:
        """Copies a tablet's moves in parallel, then commits the ones before the first failed copy
        in one `MoveRowsets` (so what is cooled stays gap-free from the lowest version).

        Raises `CommandFailed` / `CommandTimeout` when the tablet changed meanwhile; copies the log
        does not name are removed again."""
        futures = [self._pool.submit(self.copy, m) for m in moves]
        copied: list[Copied] = []
        failure: Exception | None = None
        for future in futures:
            try:
                done = future.result()
            except (ResourceError, CorruptRowset) as exc:
                failure = failure or exc
                continue
            if failure is None:
                copied.append(done)
            else:
                done.undo()  # above a gap: not committed now, copied again next time
        if not copied:
            return TabletMoves([], failure)
        command = cmd.MoveRowsets(table_id=table.table_id, moves=tuple(
            RowsetMove(rowset_id=c.move.rowset.rowset_id, from_tier=c.move.rowset.tier, to_tier=c.move.to_tier,
                       path=c.move.rowset.path) for c in copied))
        try:
            self.proposer.propose(command, table_id=table.table_id)
        except CommandFailed:
            for c in copied:
                current = self.projection.rowset_record(c.move.rowset.rowset_id)
                if current is None or current.rowset.tier != c.move.to_tier:  # not this copy the log names
                    c.undo()
            raise
        self.moved_rowsets += len(copied)
        self.moved_bytes += sum(c.move.rowset.size_bytes for c in copied)
        return TabletMoves([c.source for c in copied], failure)
