"""Proposals on `strata.commands`. The sequencer validates each one against the log's state and
answers with an event (or a `CommandRejected`) carrying the same `command_id`."""

from __future__ import annotations

from typing import ClassVar, Literal

from pydantic import Field

from schemas.model import (
    AutoPartitioning,
    BulkJobKind,
    BulkJobState,
    Column,
    Distribution,
    Frozen,
    KeysModel,
    LoadProgress,
    NewRowset,
    Partition,
    PartitionBound,
    RoutineLoadSpec,
    RoutineLoadState,
    RowsetMove,
    TabletBitmap,
    ViewColumn,
)
from schemas.registry import Payload, register


class Command(Payload):
    FAMILY: ClassVar[str] = "command"


class NewPartition(Frozen):
    """A partition to create; the sequencer assigns its id."""

    name: str
    bound: PartitionBound = PartitionBound()
    buckets: int = Field(ge=1)
    properties: dict[str, str] = Field(default_factory=dict)


@register
class CreateDatabase(Command):
    TYPE: ClassVar[str] = "CreateDatabase"
    name: str
    if_not_exists: bool = False


@register
class DropDatabase(Command):
    TYPE: ClassVar[str] = "DropDatabase"
    name: str
    if_exists: bool = False
    force: bool = False


@register
class CreateTable(Command):
    TYPE: ClassVar[str] = "CreateTable"
    db: str
    name: str
    if_not_exists: bool = False
    keys_model: KeysModel
    columns: tuple[Column, ...]
    partition_kind: Literal["UNPARTITIONED", "RANGE", "LIST"] = "UNPARTITIONED"
    partition_columns: tuple[str, ...] = ()
    partitions: tuple[NewPartition, ...]
    distribution: Distribution
    properties: dict[str, str] = Field(default_factory=dict)
    comment: str = ""
    auto_partition: AutoPartitioning | None = None


@register
class CloneTable(Command):
    """CREATE TABLE … CLONE: a table `db`.`name` whose first commit is `source_table_id`'s snapshot at
    `source_ts_ms` (None: its latest state), reading the source's files without copying them."""

    TYPE: ClassVar[str] = "CloneTable"
    db: str
    name: str
    source_table_id: int
    source_ts_ms: int | None = None


@register
class CreateView(Command):
    """A view in `db`: its query as text (table names qualified) and its columns. With `or_replace`
    an existing view of that name is redefined in place (its id kept)."""

    TYPE: ClassVar[str] = "CreateView"
    db: str
    name: str
    definition: str
    columns: tuple[ViewColumn, ...]
    comment: str = ""
    or_replace: bool = False


@register
class AlterView(Command):
    """ALTER VIEW: the view's new query and columns (the comment stays)."""

    TYPE: ClassVar[str] = "AlterView"
    db: str
    name: str
    definition: str
    columns: tuple[ViewColumn, ...]


@register
class DropView(Command):
    TYPE: ClassVar[str] = "DropView"
    db: str
    name: str


@register
class DropTable(Command):
    TYPE: ClassVar[str] = "DropTable"
    table_id: int
    force: bool = False


@register
class ReplaceTable(Command):
    """ALTER TABLE a REPLACE WITH TABLE b: b takes a's name; with `swap` a takes b's, else a is dropped."""

    TYPE: ClassVar[str] = "ReplaceTable"
    table_id: int
    with_table_id: int
    swap: bool = True


@register
class RecoverTable(Command):
    TYPE: ClassVar[str] = "RecoverTable"
    db: str
    name: str


@register
class RenameTable(Command):
    TYPE: ClassVar[str] = "RenameTable"
    table_id: int
    name: str


@register
class AlterTableProperties(Command):
    TYPE: ClassVar[str] = "AlterTableProperties"
    table_id: int
    changes: dict[str, str | None]


@register
class ChangeSchema(Command):
    TYPE: ClassVar[str] = "ChangeSchema"
    table_id: int
    # The schema version the proposer edited; a concurrent change makes this one stale.
    base_schema_version: int
    columns: tuple[Column, ...]
    next_column_id: int
    description: str


@register
class AddPartition(Command):
    TYPE: ClassVar[str] = "AddPartition"
    table_id: int
    partition: NewPartition
    if_not_exists: bool = False


@register
class DropPartition(Command):
    TYPE: ClassVar[str] = "DropPartition"
    table_id: int
    partition_name: str
    if_exists: bool = False


@register
class ModifyPartitions(Command):
    TYPE: ClassVar[str] = "ModifyPartitions"
    table_id: int
    partition_ids: tuple[int, ...]
    changes: dict[str, str | None]


@register
class CommitRowsets(Command):
    TYPE: ClassVar[str] = "CommitRowsets"
    table_id: int
    label: str
    rowsets: tuple[NewRowset, ...]
    num_rows: int
    source_offsets: dict[str, int] = Field(default_factory=dict)
    source: str = "insert"
    # A routine-load batch: the records it consumed. It may carry no rowsets (every record was bad or
    # filtered); its offsets still advance.
    load: LoadProgress | None = None
    # AUTO PARTITION: partitions the rows need, created in the same commit. Their ids are the next ids
    # the writer's replica saw (its rowset paths name them); the sequencer rejects the commit with
    # CONFLICT if those ids were taken meanwhile, and the writer routes and writes again.
    new_partitions: tuple[Partition, ...] = ()


@register
class PrepareLoad(Command):
    """The first phase of a two-phase load (Stream Load `two_phase_commit: true`): its rowsets are
    durable but visible to no read until a FinishLoad commits them; an abort, or `timeout_ms` passing
    first, drops them. The sequencer assigns the transaction id and holds the label."""

    TYPE: ClassVar[str] = "PrepareLoad"
    table_id: int
    label: str
    rowsets: tuple[NewRowset, ...]
    num_rows: int
    source: str = "stream_load"
    new_partitions: tuple[Partition, ...] = ()
    timeout_ms: int = Field(ge=1)


@register
class FinishLoad(Command):
    """The second phase of a prepared load: `commit` makes its rows visible in one commit (at most
    once: a commit of a finished transaction is rejected), `abort` drops them."""

    TYPE: ClassVar[str] = "FinishLoad"
    table_id: int
    txn_id: int
    operation: Literal["commit", "abort"]
    reason: str = ""


@register
class OverwriteRowsets(Command):
    """INSERT OVERWRITE: `rowsets` become the whole content of the partitions covered, atomically."""

    TYPE: ClassVar[str] = "OverwriteRowsets"
    table_id: int
    label: str
    rowsets: tuple[NewRowset, ...]
    num_rows: int
    # The partitions whose rows are replaced; empty: every partition the table has when it is decided
    # (a whole-table overwrite also empties a partition added meanwhile, as Doris' table swap does).
    partition_ids: tuple[int, ...] = ()
    rows_removed: int = 0
    description: str = ""


@register
class AllocateAutoIncrement(Command):
    """A writer asks for `count` values of the table's AUTO_INCREMENT column before it writes its rows:
    the sequencer hands out each value once, whichever writer asks, across restarts."""

    TYPE: ClassVar[str] = "AllocateAutoIncrement"
    table_id: int
    count: int = Field(ge=1)


@register
class CommitDelete(Command):
    TYPE: ClassVar[str] = "CommitDelete"
    table_id: int
    partition_ids: tuple[int, ...]
    predicate: str | None
    kind: Literal["delete", "truncate"] = "delete"
    description: str = ""
    num_rows: int = 0


@register
class RestoreTable(Command):
    TYPE: ClassVar[str] = "RestoreTable"
    table_id: int
    target_ts_ms: int
    description: str = ""


@register
class CreateTag(Command):
    """ALTER TABLE … CREATE TAG: names the table's snapshot at `ts_ms`, whose latest commit is
    `commit_number`. The sequencer fills what is None: the latest commit, and the instant of the
    commit (the decision's own instant for the latest commit: the table as it is then, whatever
    compaction did since). `retention_ms` counts from the tag's creation; None keeps it forever."""

    TYPE: ClassVar[str] = "CreateTag"
    table_id: int
    name: str
    commit_number: int | None = None
    ts_ms: int | None = None
    retention_days: int | None = None
    retention_ms: int | None = None


@register
class DropTag(Command):
    TYPE: ClassVar[str] = "DropTag"
    table_id: int
    name: str


@register
class CommitCompaction(Command):
    TYPE: ClassVar[str] = "CommitCompaction"
    table_id: int
    partition_id: int
    bucket: int
    kind: Literal["cumulative", "base"]
    input_rowset_ids: tuple[str, ...]
    output: NewRowset
    start_version: int
    end_version: int
    # Columns the merged file holds (every column any input held, dropped ones included).
    column_ids: tuple[int, ...] | None = None
    # The output kept every input row with its `__version` (schemas.model.Rowset.keeps_versions).
    keeps_versions: bool = False


@register
class CommitDeleteBitmaps(Command):
    """The delete bitmaps of one partition's commit at `version` of a merge-on-write Unique Key table,
    one per tablet the commit wrote (computed by the worker against the cover below `version`)."""

    TYPE: ClassVar[str] = "CommitDeleteBitmaps"
    table_id: int
    partition_id: int
    version: int = Field(ge=1)
    tablets: tuple[TabletBitmap, ...]
    # The version's bitmaps again, against the cover a compaction committed since: the rows they mark
    # are the same, named in the compaction's output instead of its inputs.
    replace: bool = False


@register
class MoveRowsets(Command):
    """Moves of one tablet's rowsets, in version order, whose destination copies are verified."""

    TYPE: ClassVar[str] = "MoveRowsets"
    table_id: int
    moves: tuple[RowsetMove, ...] = Field(min_length=1)


@register
class RecycleRowsets(Command):
    TYPE: ClassVar[str] = "RecycleRowsets"
    table_id: int
    rowset_ids: tuple[str, ...]
    horizon_ts_ms: int | None = None


@register
class CreateResource(Command):
    TYPE: ClassVar[str] = "CreateResource"
    name: str
    resource_type: str
    properties: dict[str, str]
    if_not_exists: bool = False


@register
class AlterResource(Command):
    TYPE: ClassVar[str] = "AlterResource"
    name: str
    properties: dict[str, str]


@register
class DropResource(Command):
    TYPE: ClassVar[str] = "DropResource"
    name: str
    if_exists: bool = False


@register
class CreateStoragePolicy(Command):
    TYPE: ClassVar[str] = "CreateStoragePolicy"
    name: str
    properties: dict[str, str]
    if_not_exists: bool = False


@register
class AlterStoragePolicy(Command):
    TYPE: ClassVar[str] = "AlterStoragePolicy"
    name: str
    properties: dict[str, str]


@register
class DropStoragePolicy(Command):
    TYPE: ClassVar[str] = "DropStoragePolicy"
    name: str
    if_exists: bool = False


@register
class ChangeRoutineLoad(Command):
    """Creates a job (with `spec`), or changes the state of an existing one."""

    TYPE: ClassVar[str] = "ChangeRoutineLoad"
    db: str
    job: str
    state: RoutineLoadState
    table_id: int
    spec: RoutineLoadSpec | None = Field(default=None, description="set when the job is created")
    reason: str = ""
    # Only move a job from these states (empty: any); PAUSE of a STOPPED job must not revive it.
    from_states: tuple[RoutineLoadState, ...] = ()



@register
class ChangeBulkJob(Command):
    """Creates a Broker Load or EXPORT job (`job_id` 0: the sequencer numbers it; `spec` set) or moves
    an existing one to `state`. A new job's label must be unused by live jobs of its kind and database."""

    TYPE: ClassVar[str] = "ChangeBulkJob"
    kind: BulkJobKind
    db: str
    label: str
    state: BulkJobState
    job_id: int = 0
    spec: str = Field(default="", description="set when the job is created: its statement's parts as JSON, "
                                              "secret values sealed")
    progress: str = ""
    info: dict[str, str] = Field(default_factory=dict, description="counts and details the job shows (SHOW LOAD)")
    error: str = ""
    # Only move a job from these states (empty: any); CANCEL of a FINISHED job must not undo it.
    from_states: tuple[BulkJobState, ...] = ()


@register
class CreateUser(Command):
    """`auth_string` is the mysql_native_password hash (SHA1(SHA1(password)), hex), sealed."""

    TYPE: ClassVar[str] = "CreateUser"
    name: str
    auth_string: str = ""
    if_not_exists: bool = False
    failed_login_attempts: int = Field(default=0, description="lock after this many failed logins in a row (0: never)")
    password_lock_time_s: int = Field(default=0, description="how long a lock lasts, seconds (-1: until unlocked)")


@register
class AlterUser(Command):
    """ALTER USER's password policy, ACCOUNT_UNLOCK, and SET PROPERTY's max_user_connections,
    query_timeout and insert_timeout (seconds; 0: the session variable decides); None leaves a
    setting as it is."""

    TYPE: ClassVar[str] = "AlterUser"
    name: str
    failed_login_attempts: int | None = None
    password_lock_time_s: int | None = None
    max_user_connections: int | None = None
    query_timeout_s: int | None = None
    insert_timeout_s: int | None = None
    unlock: bool = False


@register
class DropUser(Command):
    TYPE: ClassVar[str] = "DropUser"
    name: str
    if_exists: bool = False


@register
class SetPassword(Command):
    TYPE: ClassVar[str] = "SetPassword"
    name: str
    auth_string: str


@register
class ChangeGrants(Command):
    """GRANT (or REVOKE) `privileges` on `db`.`table` (`*` for every one)."""

    TYPE: ClassVar[str] = "ChangeGrants"
    name: str
    db: str
    table: str
    privileges: tuple[str, ...]
    revoke: bool = False
