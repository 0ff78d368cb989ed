"""What the rowset records say a table holds, in Doris' units: tablets, their rowsets, rows and bytes per
tier. SHOW DATA, SHOW TABLETS, ADMIN SHOW REPLICA …, SHOW BACKENDS and SHOW PROC read it.

A Doris tablet is a partition × bucket; Strata keeps one copy of each rowset (one "replica"), on a local
medium (`ssd`, `hdd`) or cooled to a resource (`remote:<name>`). Live rowsets are what the latest
snapshot may read; stale ones (compacted, or of a dropped partition) are kept only for time travel.
"""

from __future__ import annotations

from collections.abc import Iterable
from dataclasses import dataclass, field

from projections.state import RowsetRecord, TableState
from query.context import Context
from storage.tiers import REMOTE_PREFIX

# Doris' database quotas when none is set (SHOW DATA's Quota and Left rows, SHOW PROC '/dbs'):
# default_db_data_quota_bytes (1 PB) and default_db_replica_quota_size (2^30).
DATA_QUOTA_BYTES = 1 << 50
REPLICA_QUOTA = 1 << 30
# Tablet ids are derived, as information_schema.rowsets shows them: no partition has 1000 buckets.
_BUCKETS_PER_PARTITION = 1000


def tablet_id(partition_id: int, bucket: int) -> int:
    return partition_id * _BUCKETS_PER_PARTITION + bucket


def split_tablet_id(tablet: int) -> tuple[int, int]:
    """(partition id, bucket) of a tablet id."""
    return divmod(tablet, _BUCKETS_PER_PARTITION)


def is_remote(tier: str) -> bool:
    return tier.startswith(REMOTE_PREFIX)


@dataclass
class Usage:
    """Rowsets, rows and bytes of some rowsets, split by tier."""

    rowsets: int = 0
    rows: int = 0
    bytes_by_tier: dict[str, int] = field(default_factory=dict)
    rowsets_by_tier: dict[str, int] = field(default_factory=dict)
    max_version: int = 0

    def add(self, record: RowsetRecord) -> None:
        r = record.rowset
        self.rowsets += 1
        self.rows += r.num_rows
        self.bytes_by_tier[r.tier] = self.bytes_by_tier.get(r.tier, 0) + r.size_bytes
        self.rowsets_by_tier[r.tier] = self.rowsets_by_tier.get(r.tier, 0) + 1
        self.max_version = max(self.max_version, r.end_version)

    def merge(self, other: Usage) -> None:
        self.rowsets += other.rowsets
        self.rows += other.rows
        self.max_version = max(self.max_version, other.max_version)
        for tier, size in other.bytes_by_tier.items():
            self.bytes_by_tier[tier] = self.bytes_by_tier.get(tier, 0) + size
        for tier, n in other.rowsets_by_tier.items():
            self.rowsets_by_tier[tier] = self.rowsets_by_tier.get(tier, 0) + n

    @property
    def local_bytes(self) -> int:
        return sum(size for tier, size in self.bytes_by_tier.items() if not is_remote(tier))

    @property
    def remote_bytes(self) -> int:
        return sum(size for tier, size in self.bytes_by_tier.items() if is_remote(tier))

    @property
    def total_bytes(self) -> int:
        return self.local_bytes + self.remote_bytes


@dataclass
class TabletUsage:
    table: TableState
    partition_id: int
    bucket: int
    live: Usage = field(default_factory=Usage)
    stale: Usage = field(default_factory=Usage)

    @property
    def tablet_id(self) -> int:
        return tablet_id(self.partition_id, self.bucket)

    @property
    def partition_name(self) -> str:
        found = self.table.partitions.get(self.partition_id)
        return found.name if found is not None else ""

    @property
    def version(self) -> int:
        found = self.table.partitions.get(self.partition_id)
        return found.version if found is not None else 0


def tablets(ctx: Context, table: TableState, partition_names: Iterable[str] = ()) -> list[TabletUsage]:
    """Every tablet of the table's live partitions (or of the partitions named), with its rowsets'
    usage; ordered by tablet id. Rowsets of dropped partitions belong to no tablet listed here."""
    wanted = {n.lower() for n in partition_names}
    found: dict[tuple[int, int], TabletUsage] = {}
    for p in sorted(table.live_partitions(), key=lambda p: p.partition_id):
        if wanted and p.name.lower() not in wanted:
            continue
        for bucket in range(p.partition.buckets):
            found[(p.partition_id, bucket)] = TabletUsage(table, p.partition_id, bucket)
    for record in ctx.projection.rowset_records(table.table_id):
        tablet = found.get((record.rowset.partition_id, record.rowset.bucket))
        if tablet is not None:
            (tablet.live if record.stale_ts_ms is None else tablet.stale).add(record)
    return list(found.values())


def table_usage(ctx: Context, table: TableState) -> tuple[Usage, Usage, int]:
    """(live, stale, tablet count) over the table's live partitions."""
    live, stale = Usage(), Usage()
    count = 0
    for tablet in tablets(ctx, table):
        count += 1
        live.merge(tablet.live)
        stale.merge(tablet.stale)
    return live, stale, count


_UNITS = (("TB", 1 << 40), ("GB", 1 << 30), ("MB", 1 << 20), ("KB", 1 << 10))


def doris_bytes(size: int) -> str:
    """Doris' byte text (DebugUtil.getByteUint): `900.000 B`, `1.400 KB`, `1024.000 GB`."""
    for unit, scale in _UNITS:
        if size >= scale:
            return f"{size / scale:.3f} {unit}"
    return f"{size:.3f} B"
