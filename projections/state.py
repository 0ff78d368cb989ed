"""The catalog's state as the fold keeps it: small, held in memory, persisted as JSON per object."""

from __future__ import annotations

from typing import Any, Literal, TypeVar

from pydantic import BaseModel, Field

from schemas.model import (
    SEQUENCE_COL_PROPERTY,
    SEQUENCE_COLUMN,
    SEQUENCE_TYPE_PROPERTY,
    AutoPartitioning,
    Column,
    Distribution,
    KeysModel,
    NewRowset,
    Partition,
    Rowset,
    RowsetMove,
    TableSchema,
    TabletBitmap,
    ViewColumn,
)
from storage.parquet_codecs import parquet_codec

_Model = TypeVar("_Model", bound=BaseModel)


def draft_of(state: _Model, changes: dict[str, Any]) -> _Model:
    """A shallow copy of `state` with `changes` in place, unvalidated: `model_copy(update=changes)`
    for the fold's states (no extra fields, no private attributes) at a fraction of its cost, since
    the fold copies a table and a partition for every event it applies (copy-on-write)."""
    if state.__pydantic_extra__ is not None or state.__pydantic_private__ is not None:
        return state.model_copy(update=changes)
    cls = type(state)
    draft = cls.__new__(cls)
    fields = state.__dict__.copy()
    fields.update(changes)
    object.__setattr__(draft, "__dict__", fields)
    object.__setattr__(draft, "__pydantic_fields_set__", state.__pydantic_fields_set__ | changes.keys())
    object.__setattr__(draft, "__pydantic_extra__", None)
    object.__setattr__(draft, "__pydantic_private__", None)
    return draft


def record_bytes(record: BaseModel) -> bytes:
    """A stored record's value: pydantic's own JSON writer, whose field order is declaration order
    and dict order the fold's, so the bytes are a function of the log alone. The serializer is called
    straight (what `model_dump_json` does with its defaults), without the str round trip."""
    return record.__pydantic_serializer__.to_json(record)


class DatabaseState(BaseModel):
    db_id: int
    name: str
    created_ts_ms: int
    dropped_ts_ms: int | None = None


class ViewState(BaseModel):
    """A view: its query text (table names qualified) and the columns it had when last defined.
    Views have no history: reading one `FOR TIME AS OF` is refused (query.reads)."""

    view_id: int
    db_id: int
    name: str
    definition: str
    columns: tuple[ViewColumn, ...]
    comment: str = ""
    created_ts_ms: int
    altered_ts_ms: int


def unmask(version: int, masks: list[tuple[int, int]], limit: int) -> tuple[int, int, int]:
    """Where a read at `limit` continues from `version` downwards: (version, limit, floor).

    A RESTORE committed at version `high` made the state at `low` current again: a read at a
    version ≥ high sees (high, limit], then everything the state at `low` saw — judged with only
    the masks in force at `low` itself, since later restores did not exist then. The returned
    version lies in the visible segment (floor, limit]."""
    while True:
        in_force = [m for m in masks if m[1] <= limit]
        if not in_force:
            return version, limit, 0
        low, high = max(in_force, key=lambda m: m[1])
        if version > high:
            return version, limit, high
        version, limit = min(version, low), low


class PartitionState(BaseModel):
    partition: Partition
    # The newest version committed to this partition (0: nothing yet).
    version: int = 0
    created_ts_ms: int
    dropped_ts_ms: int | None = None
    # Version ranges (low, high] hidden by a RESTORE committed at version `high`: a read at a
    # version ≥ high skips them, a read below high never sees the mask.
    masks: list[tuple[int, int]] = Field(default_factory=list)

    @property
    def partition_id(self) -> int:
        return self.partition.partition_id

    @property
    def name(self) -> str:
        return self.partition.name


class NameTakeover(BaseModel):
    """From `ts_ms` on, the table holds the name `previous_table_id` held until then (ALTER TABLE …
    REPLACE WITH TABLE): a read of that name at an earlier instant reads the previous holder."""

    ts_ms: int
    previous_table_id: int


class SchemaAt(BaseModel):
    ts_ms: int
    table_schema: TableSchema


class TagState(BaseModel):
    """A named snapshot of a table (ALTER TABLE … CREATE TAG): readable, and its rowsets kept, while
    it is live — until DROP TAG, or until `expires_ts_ms` (None: forever)."""

    name: str
    commit_number: int
    ts_ms: int
    created_ts_ms: int
    retention_days: int | None = None
    expires_ts_ms: int | None = None

    def live_at(self, now_ms: int) -> bool:
        return self.expires_ts_ms is None or now_ms < self.expires_ts_ms


class TableState(BaseModel):
    """A table in the catalog. Once the fold has published it (`Projection.tables`) it is never
    changed, nor are its partitions, schemas and properties: a newer state replaces it, so a reader
    may hold and iterate it without the projection's lock."""

    table_id: int
    db_id: int
    name: str
    keys_model: KeysModel
    partition_kind: str
    partition_columns: tuple[str, ...] = ()
    distribution: Distribution
    properties: dict[str, str] = Field(default_factory=dict)
    comment: str = ""
    schemas: list[SchemaAt]
    partitions: dict[int, PartitionState]
    next_column_id: int
    commit_number: int = 0
    created_ts_ms: int
    last_commit_ts_ms: int
    # Commit time of the table's first commit (of any kind), for time-travel errors.
    first_commit_ts_ms: int | None = None
    # Since when history is kept (time travel enabled at creation or by ALTER); None: not kept.
    time_travel_since_ts_ms: int | None = None
    # Instants before this were trimmed from the version index by the recycler.
    history_horizon_ts_ms: int | None = None
    dropped_ts_ms: int | None = None
    auto_partition: AutoPartitioning | None = None
    # Names this table took over by REPLACE, oldest first (projections.names resolves them).
    name_takeovers: list[NameTakeover] = Field(default_factory=list)
    # The next value the AUTO_INCREMENT column hands out; None until the first allocation.
    auto_increment_next: int | None = None
    # Tags by lower-cased name (names are case-insensitive, as table names are).
    tags: dict[str, TagState] = Field(default_factory=dict)
    # The newest instant at which a rowset the recycler deleted was still visible: snapshots at
    # or after it are whole (nothing they read is gone), so a tag may name them.
    recycled_through_ts_ms: int | None = None

    @property
    def schema_now(self) -> TableSchema:
        return self.schemas[-1].table_schema

    def schema_at(self, ts_ms: int) -> TableSchema | None:
        chosen = None
        for entry in self.schemas:
            if entry.ts_ms <= ts_ms:
                chosen = entry.table_schema
        return chosen

    def live_partitions(self) -> list[PartitionState]:
        # No copy needed: the fold never changes a published TableState's dicts (copy-on-write,
        # projections.projection), so the follower cannot resize this one under a reader.
        return [p for p in self.partitions.values() if p.dropped_ts_ms is None]

    def partition_by_name(self, name: str) -> PartitionState | None:
        lowered = name.lower()
        return next((p for p in self.live_partitions() if p.name.lower() == lowered), None)

    @property
    def time_travel(self) -> bool:
        return self.properties.get("enable_time_travel", "false").lower() == "true"

    @property
    def rowset_codec(self) -> str:
        """The Parquet codec of the table's new rowset files, from its "compression" property (Doris'
        names; its default, LZ4F, without one). Each file names its own codec, so a change of the
        property applies to the files written after it."""
        return parquet_codec(self.properties.get("compression"))

    @property
    def auto_increment_column(self) -> Column | None:
        return next((c for c in self.schema_now.columns if c.auto_increment is not None), None)

    def sequence_column(self, schema: TableSchema | None = None) -> Column | None:
        """The column whose value orders the rows of one key of a Unique Key table before their load
        order (Doris' sequence column): the one `function_column.sequence_col` names, or the hidden
        `__DORIS_SEQUENCE_COL__` of `function_column.sequence_type`; looked up in `schema` (the
        schema a read is at; default: now). Fixed at CREATE TABLE, so every schema has it."""
        if self.keys_model != "UNIQUE":
            return None
        name = self.properties.get(SEQUENCE_COL_PROPERTY) or (
            SEQUENCE_COLUMN if SEQUENCE_TYPE_PROPERTY in self.properties else None)
        return None if name is None else (schema or self.schema_now).column(name)


class RowsetRecord(BaseModel):
    rowset: Rowset
    # Commit time at which compaction replaced it; None while it is the live copy.
    stale_ts_ms: int | None = None
    # Replaced by a version-keeping compaction (schemas.model.Rowset.keeps_versions), which answers every
    # instant this rowset did: no read needs it any more, so it goes after the recycler's grace alone.
    replaced_by_keeping: bool = False


class DeleteRecord(BaseModel):
    partition_id: int
    version: int
    predicate: str | None
    ts_ms: int


class DeleteBitmapRecord(BaseModel):
    """The delete bitmaps of one partition's commit (merge-on-write Unique Key): one per tablet it wrote."""

    partition_id: int
    version: int
    tablets: tuple[TabletBitmap, ...]


class CommitRecord(BaseModel):
    """One line of a table's history (SHOW TIME TRAVEL)."""

    commit_number: int
    ts_ms: int
    kind: str
    partition_versions: dict[int, int] = Field(default_factory=dict)
    rows_added: int = 0
    rows_removed: int = 0
    description: str = ""


class MoveRecord(BaseModel):
    """Rowsets that changed tier at one instant (a cooldown, or SSD → HDD): not a commit — no
    answer changes — but part of a table's history the console draws."""

    ts_ms: int
    moves: list[RowsetMove]


class PreparedLoad(BaseModel):
    """A two-phase load (events LoadPrepared, then RowsetsCommitted with its txn_id or LoadAborted)."""

    txn_id: int
    table_id: int
    label: str
    status: Literal["PREPARED", "COMMITTED", "ABORTED"] = "PREPARED"
    rowsets: tuple[NewRowset, ...]
    num_rows: int
    source: str
    new_partitions: tuple[Partition, ...] = ()
    prepared_ts_ms: int
    deadline_ts_ms: int
    finished_ts_ms: int | None = None
    reason: str = ""


class LabelRecord(BaseModel):
    label: str
    command_id: str | None
    commit_number: int
    ts_ms: int
    num_rows: int
