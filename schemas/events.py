"""The facts on `strata.events`: every kind the sequencer emits (DESIGN §4).

Events carry everything a fold needs — ids, versions and times are assigned by the sequencer —
so applying one is deterministic and needs no other lookup.
"""

from __future__ import annotations

from typing import ClassVar, Literal

from pydantic import Field

from schemas.model import (
    AutoPartitioning,
    BulkJobKind,
    BulkJobState,
    ClonedDelete,
    Distribution,
    KeysModel,
    LoadProgress,
    NewRowset,
    Partition,
    RoutineLoadSpec,
    RoutineLoadState,
    Rowset,
    RowsetMove,
    TableSchema,
    TabletBitmap,
    ViewColumn,
)
from schemas.registry import Payload, register


class Event(Payload):
    FAMILY: ClassVar[str] = "event"


@register
class DatabaseCreated(Event):
    TYPE: ClassVar[str] = "DatabaseCreated"
    db_id: int
    name: str


@register
class DatabaseDropped(Event):
    TYPE: ClassVar[str] = "DatabaseDropped"
    db_id: int
    name: str


@register
class TableCreated(Event):
    TYPE: ClassVar[str] = "TableCreated"
    db_id: int
    table_id: int
    name: str
    keys_model: KeysModel
    table_schema: TableSchema
    partition_kind: Literal["UNPARTITIONED", "RANGE", "LIST"]
    partition_columns: tuple[str, ...] = ()
    partitions: tuple[Partition, ...]
    distribution: Distribution
    properties: dict[str, str] = Field(default_factory=dict)
    comment: str = ""
    # The next column unique id the table will hand out (ids are never reused).
    next_column_id: int
    auto_partition: AutoPartitioning | None = None


@register
class TableCloned(Event):
    """A table made from `source_table_id`'s snapshot at `source_ts_ms`, as its first commit: the
    snapshot's partitions (new ids) at their versions, its rowsets (new ids, each naming the file
    it shares in `shared_file`), its delete predicates and its schemas (oldest first)."""

    TYPE: ClassVar[str] = "TableCloned"
    db_id: int
    table_id: int
    name: str
    source_table_id: int
    source_ts_ms: int
    keys_model: KeysModel
    schemas: tuple[TableSchema, ...]
    partition_kind: Literal["UNPARTITIONED", "RANGE", "LIST"]
    partition_columns: tuple[str, ...] = ()
    partitions: tuple[Partition, ...]
    distribution: Distribution
    properties: dict[str, str] = Field(default_factory=dict)
    comment: str = ""
    next_column_id: int
    auto_partition: AutoPartitioning | None = None
    auto_increment_next: int | None = None
    partition_versions: dict[int, int] = Field(default_factory=dict)
    rowsets: tuple[Rowset, ...] = ()
    deletes: tuple[ClonedDelete, ...] = ()
    description: str = ""


@register
class ViewCreated(Event):
    """A view: tables and views of a database share one namespace and one id sequence (as in Doris)."""

    TYPE: ClassVar[str] = "ViewCreated"
    db_id: int
    view_id: int
    name: str
    definition: str = Field(description="the view's query, table names qualified as `internal`.`db`.`t`")
    columns: tuple[ViewColumn, ...]
    comment: str = ""


@register
class ViewAltered(Event):
    """ALTER VIEW or CREATE OR REPLACE VIEW: a new query and columns (and, from CREATE OR REPLACE, comment)."""

    TYPE: ClassVar[str] = "ViewAltered"
    view_id: int
    definition: str
    columns: tuple[ViewColumn, ...]
    comment: str | None = None


@register
class ViewDropped(Event):
    TYPE: ClassVar[str] = "ViewDropped"
    view_id: int


@register
class TableDropped(Event):
    TYPE: ClassVar[str] = "TableDropped"
    table_id: int
    force: bool = False


@register
class TableRecovered(Event):
    TYPE: ClassVar[str] = "TableRecovered"
    table_id: int


@register
class TablePropertiesChanged(Event):
    TYPE: ClassVar[str] = "TablePropertiesChanged"
    table_id: int
    # Properties set (a value) or removed (None).
    changes: dict[str, str | None]


@register
class SchemaChanged(Event):
    TYPE: ClassVar[str] = "SchemaChanged"
    table_id: int
    table_schema: TableSchema
    next_column_id: int
    description: str = Field(description="what changed, for history: 'ADD COLUMN v2'")


@register
class TableRenamed(Event):
    TYPE: ClassVar[str] = "TableRenamed"
    table_id: int
    name: str


@register
class TableReplaced(Event):
    """ALTER TABLE … REPLACE WITH TABLE: `with_table_id` takes the name of `table_id`. With `swap`,
    `table_id` takes the other name; without, it is dropped (recoverable, as a DROP TABLE).

    Names follow instants: from this commit on, the name resolves to the other table id, and
    a `FOR TIME AS OF` read of a name at an earlier instant reads the table that held it then."""

    TYPE: ClassVar[str] = "TableReplaced"
    table_id: int
    with_table_id: int
    swap: bool


@register
class PartitionAdded(Event):
    TYPE: ClassVar[str] = "PartitionAdded"
    table_id: int
    partition: Partition


@register
class PartitionDropped(Event):
    TYPE: ClassVar[str] = "PartitionDropped"
    table_id: int
    partition_id: int


@register
class PartitionPropertiesChanged(Event):
    TYPE: ClassVar[str] = "PartitionPropertiesChanged"
    table_id: int
    partition_ids: tuple[int, ...]
    changes: dict[str, str | None]


@register
class AutoIncrementAllocated(Event):
    """Values [start, start + count) of the table's AUTO_INCREMENT column now belong to one writer."""

    TYPE: ClassVar[str] = "AutoIncrementAllocated"
    table_id: int
    start: int
    count: int


@register
class RowsetsCommitted(Event):
    """One load transaction: every partition it touched got one new version."""

    TYPE: ClassVar[str] = "RowsetsCommitted"
    table_id: int
    commit_number: int
    label: str
    partition_versions: dict[int, int]
    rowsets: tuple[Rowset, ...]
    num_rows: int
    # Kafka source offsets consumed by a routine load, committed with its rows.
    source_offsets: dict[str, int] = Field(default_factory=dict)
    source: str = Field(default="insert", description="insert | routine_load:<job> | restore")
    load: LoadProgress | None = Field(default=None, description="the Kafka records a routine load batch consumed")
    new_partitions: tuple[Partition, ...] = Field(default=(), description="AUTO PARTITION: partitions created by "
                                                  "this commit, visible from its commit time with its rows")
    txn_id: int | None = Field(default=None, description="the prepared load (LoadPrepared) this commit finishes")


@register
class LoadPrepared(Event):
    """A two-phase load's rows are durable under `txn_id` and hold `label`; no read sees them until
    a RowsetsCommitted with this `txn_id`. Not finished by `deadline_ts_ms`, it can only abort."""

    TYPE: ClassVar[str] = "LoadPrepared"
    table_id: int
    txn_id: int
    label: str
    rowsets: tuple[NewRowset, ...]
    num_rows: int
    source: str = "stream_load"
    new_partitions: tuple[Partition, ...] = ()
    deadline_ts_ms: int


@register
class LoadAborted(Event):
    """A prepared load dropped (asked for, or its deadline passed): its rows are never visible and its
    label is free again."""

    TYPE: ClassVar[str] = "LoadAborted"
    table_id: int
    txn_id: int
    label: str
    reason: str


@register
class TableOverwritten(Event):
    """INSERT OVERWRITE: one commit whose rows replace every row of the partitions it covers.

    For each covered partition, versions up to `masked_versions[p]` are hidden from every read at
    `partition_versions[p]` or later — the mask a RESTORE to an empty table would set — and the new
    rowsets are written at `partition_versions[p]` (= masked + 1). Reads at earlier versions never
    see the mask, so time travel before the overwrite reads the old rows."""

    TYPE: ClassVar[str] = "TableOverwritten"
    table_id: int
    commit_number: int
    label: str
    masked_versions: dict[int, int]
    partition_versions: dict[int, int]
    rowsets: tuple[Rowset, ...]
    num_rows: int
    rows_removed: int = 0
    description: str = ""


@register
class DeleteCommitted(Event):
    """Rows written at versions below `partition_versions[p]` matching `predicate` are gone.

    The predicate is DuckDB SQL over rowset file columns (``c<unique_id>``); None means every row
    (TRUNCATE)."""

    TYPE: ClassVar[str] = "DeleteCommitted"
    table_id: int
    commit_number: int
    partition_versions: dict[int, int]
    predicate: str | None
    kind: Literal["delete", "truncate"] = "delete"
    description: str = ""
    # Rows the delete removed from the latest state (for history; reads apply the predicate).
    num_rows: int = 0


@register
class TableRestored(Event):
    """RESTORE TABLE … TO TIME AS OF: a new commit whose content is the table's content at an
    earlier instant, made without copying a file. For each partition, versions in
    (restored_versions[p], partition_versions[p]] are masked from every later read."""

    TYPE: ClassVar[str] = "TableRestored"
    table_id: int
    commit_number: int
    target_ts_ms: int
    restored_versions: dict[int, int]
    partition_versions: dict[int, int]
    # The schema in force at the target instant, when it differs from today's.
    table_schema: TableSchema | None = None
    description: str = ""


@register
class TagCreated(Event):
    """A tag names the table's snapshot at `ts_ms` (commit `commit_number`) and keeps every rowset
    that snapshot needs until it is dropped or `expires_ts_ms` passes (None: never)."""

    TYPE: ClassVar[str] = "TagCreated"
    table_id: int
    name: str
    commit_number: int
    ts_ms: int
    retention_days: int | None = None
    expires_ts_ms: int | None = None


@register
class TagDropped(Event):
    TYPE: ClassVar[str] = "TagDropped"
    table_id: int
    name: str


@register
class CompactionCommitted(Event):
    TYPE: ClassVar[str] = "CompactionCommitted"
    table_id: int
    partition_id: int
    bucket: int
    kind: Literal["cumulative", "base"]
    input_rowset_ids: tuple[str, ...]
    output: Rowset


@register
class DeleteBitmapsCommitted(Event):
    """Rows a commit at `version` of a partition superseded, per tablet it wrote (merge-on-write Unique
    Key). An index, not a change of data: a read at or above `version` that has every bitmap it needs
    subtracts them instead of merging by key, and returns the same rows either way."""

    TYPE: ClassVar[str] = "DeleteBitmapsCommitted"
    table_id: int
    partition_id: int
    version: int
    tablets: tuple[TabletBitmap, ...]
    replace: bool = Field(default=False, description="takes the place of the version's bitmaps (recomputed "
                                                     "against a compaction's output)")


@register
class RowsetsMoved(Event):
    """Each rowset is read from its new tier from now on (its old copy goes after a grace)."""

    TYPE: ClassVar[str] = "RowsetsMoved"
    table_id: int
    moves: tuple[RowsetMove, ...]


@register
class RowsetsRecycled(Event):
    TYPE: ClassVar[str] = "RowsetsRecycled"
    table_id: int
    rowset_ids: tuple[str, ...]
    # Version-index entries older than this are trimmed to the last one at or before it.
    horizon_ts_ms: int | None = None


@register
class ResourceCreated(Event):
    TYPE: ClassVar[str] = "ResourceCreated"
    name: str
    resource_type: str
    # Secret values (s3.secret_key) are sealed with the machine-local key (storage.secrets): the
    # log, read by outside consumers, never holds them in clear.
    properties: dict[str, str]


@register
class ResourceAltered(Event):
    TYPE: ClassVar[str] = "ResourceAltered"
    name: str
    properties: dict[str, str]


@register
class ResourceDropped(Event):
    TYPE: ClassVar[str] = "ResourceDropped"
    name: str


@register
class StoragePolicyCreated(Event):
    TYPE: ClassVar[str] = "StoragePolicyCreated"
    name: str
    properties: dict[str, str]


@register
class StoragePolicyAltered(Event):
    TYPE: ClassVar[str] = "StoragePolicyAltered"
    name: str
    properties: dict[str, str]


@register
class StoragePolicyDropped(Event):
    TYPE: ClassVar[str] = "StoragePolicyDropped"
    name: str


@register
class RoutineLoadChanged(Event):
    """A job was created (`spec` set: a new job id) or changed state."""

    TYPE: ClassVar[str] = "RoutineLoadChanged"
    db_id: int
    job: str
    job_id: int
    state: RoutineLoadState
    table_id: int
    spec: RoutineLoadSpec | None = None
    reason: str = ""


@register
class RoutineLoadProgressed(Event):
    """A routine-load batch with no rows to commit (all bad or filtered): only its offsets advance."""

    TYPE: ClassVar[str] = "RoutineLoadProgressed"
    table_id: int
    load: LoadProgress


@register
class BulkJobChanged(Event):
    """A Broker Load or EXPORT job was created (`spec` set) or changed state."""

    TYPE: ClassVar[str] = "BulkJobChanged"
    kind: BulkJobKind
    db_id: int
    label: str
    job_id: int
    state: BulkJobState
    spec: str = ""
    progress: str = ""
    info: dict[str, str] = Field(default_factory=dict)
    error: str = ""


@register
class CommandRejected(Event):
    TYPE: ClassVar[str] = "CommandRejected"
    command_type: str
    code: int = Field(description="MySQL error code")
    reason: str


@register
class UserCreated(Event):
    """`auth_string`: the sealed mysql_native_password hash; never the password."""

    TYPE: ClassVar[str] = "UserCreated"
    name: str
    auth_string: str = ""
    failed_login_attempts: int = Field(default=0, description="lock after this many failed logins in a row (0: never)")
    password_lock_time_s: int = Field(default=0, description="how long a lock lasts, seconds (-1: until unlocked)")


@register
class UserAltered(Event):
    """A user's login policy or connection limit changed (None: unchanged). Any change of the
    lockout settings, and `unlock`, ends a lock in force, as Doris' ALTER USER does."""

    TYPE: ClassVar[str] = "UserAltered"
    name: str
    failed_login_attempts: int | None = None
    password_lock_time_s: int | None = None
    max_user_connections: int | None = None
    query_timeout_s: int | None = Field(default=None, description="the user's query_timeout (0: the session's)")
    insert_timeout_s: int | None = Field(default=None, description="the user's insert_timeout (0: the session's)")
    unlock: bool = False


@register
class UserDropped(Event):
    TYPE: ClassVar[str] = "UserDropped"
    name: str


@register
class PasswordSet(Event):
    TYPE: ClassVar[str] = "PasswordSet"
    name: str
    auth_string: str


@register
class GrantsChanged(Event):
    """The user's privileges on `db`.`table` are now `privileges` (after a GRANT or REVOKE)."""

    TYPE: ClassVar[str] = "GrantsChanged"
    name: str
    db: str
    table: str
    privileges: tuple[str, ...]
