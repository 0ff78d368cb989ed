"""Value types that commands and events carry: columns, schemas, partitions, rowsets.

Columns are identified by a `unique_id` that never changes and is never reused, so renames,
drops and re-adds of a same-named column can never mix up data written under another schema:
rowset files name their columns ``c<unique_id>``.
"""

from __future__ import annotations

from typing import Literal

from pydantic import BaseModel, ConfigDict, Field

KeysModel = Literal["DUPLICATE", "UNIQUE", "AGGREGATE"]
# BITMAP_UNION / HLL_UNION fold the set-valued BITMAP and HLL columns (their only aggregation).
AggregateKind = Literal["SUM", "MIN", "MAX", "REPLACE", "REPLACE_IF_NOT_NULL", "BITMAP_UNION", "HLL_UNION"]
PartitionKind = Literal["UNPARTITIONED", "RANGE", "LIST"]
# A tier is a local medium, or "remote:<resource name>" for an object store.
Tier = str

# Doris' hidden columns of a Unique Key table. The delete sign and the version are kept in every
# rowset file of such a table (`__delete_sign`, `__version`); the sequence column of a table created
# with `function_column.sequence_type` is a schema column under this name. All are left out of
# `SELECT *` and DESC unless the session sets show_hidden_columns.
HIDDEN_PREFIX = "__DORIS_"
DELETE_SIGN_COLUMN = "__DORIS_DELETE_SIGN__"
VERSION_COLUMN = "__DORIS_VERSION_COL__"
SEQUENCE_COLUMN = "__DORIS_SEQUENCE_COL__"
# Table properties naming a Unique Key table's sequence column: an existing column, or the type of
# the hidden one.
SEQUENCE_COL_PROPERTY = "function_column.sequence_col"
SEQUENCE_TYPE_PROPERTY = "function_column.sequence_type"


class Frozen(BaseModel):
    model_config = ConfigDict(frozen=True, extra="forbid")


class Column(Frozen):
    unique_id: int
    name: str
    type: str = Field(description="canonical Doris type, e.g. INT, DECIMAL(10,2), VARCHAR(20)")
    is_key: bool = False
    nullable: bool = True
    default: str | None = Field(default=None, description="literal text of the DEFAULT, if any")
    aggregation: AggregateKind | None = None
    comment: str = ""
    auto_increment: int | None = Field(default=None, description="AUTO_INCREMENT: the first value the column "
                                                                 "hands out; None for an ordinary column")

    @property
    def file_column(self) -> str:
        """The column's name inside rowset files."""
        return f"c{self.unique_id}"


class ViewColumn(Frozen):
    """A column of a view: its name, the Doris type its query gave it when the view was (re)defined,
    and the COMMENT of the view's column list."""

    name: str
    type: str = Field(description="Doris type of the query's column when the view was defined")
    comment: str = ""
    source: str = Field(description="the name of the query's column this is: a view picks its query's columns "
                                    "by name, so columns its tables gain later stay out of it (as in Doris)")


class TableSchema(Frozen):
    schema_version: int
    columns: tuple[Column, ...]

    def column(self, name: str) -> Column | None:
        lowered = name.lower()
        return next((c for c in self.columns if c.name.lower() == lowered), None)

    @property
    def key_columns(self) -> tuple[Column, ...]:
        return tuple(c for c in self.columns if c.is_key)

    @property
    def visible_columns(self) -> tuple[Column, ...]:
        """The columns a user sees without show_hidden_columns (all but Doris' hidden ones)."""
        return tuple(c for c in self.columns if not is_hidden(c.name))


def is_hidden(name: str) -> bool:
    return name.upper().startswith(HIDDEN_PREFIX)


class PartitionBound(Frozen):
    """One partition's bound: RANGE partitions use [lower, upper) with None as unbounded,
    LIST partitions use `values` (each entry one tuple of the partition columns' values, None for
    NULL) or are the table's DEFAULT partition, which takes every row no other partition takes."""

    lower: tuple[str, ...] | None = None
    upper: tuple[str, ...] | None = None
    values: tuple[tuple[str | None, ...], ...] = ()
    is_default: bool = False


class Partition(Frozen):
    partition_id: int
    name: str
    bound: PartitionBound = PartitionBound()
    buckets: int = Field(ge=1)
    properties: dict[str, str] = Field(default_factory=dict)


class AutoPartitioning(Frozen):
    """Doris 2.1 AUTO PARTITION: a load that meets a value no partition holds creates the partition
    in the same commit. RANGE tables name the `date_trunc` unit of their one DATE/DATETIME column;
    LIST tables create one partition per new value."""

    unit: Literal["year", "quarter", "month", "week", "day", "hour", "minute", "second"] | None = None


class BitmapTarget(Frozen):
    """A rowset a delete bitmap marks rows of, with the versions it spans (a read that no longer uses
    it needs to know whether a compaction output in its place already dropped those rows)."""

    rowset_id: str
    start_version: int
    end_version: int


class TabletBitmap(Frozen):
    """The rows one commit superseded in one tablet (merge-on-write Unique Key): a file of
    (rowset id, row number) pairs (storage.delete_bitmaps), None when the commit superseded none."""

    bucket: int = Field(ge=0)
    path: str | None = Field(default=None, description="relative to the ssd tier root; built from ids only")
    rows: int = Field(default=0, ge=0)
    targets: tuple[BitmapTarget, ...] = ()


class Distribution(Frozen):
    kind: Literal["HASH", "RANDOM"] = "HASH"
    columns: tuple[str, ...] = ()
    buckets: int = Field(default=1, ge=1)


class NewRowset(Frozen):
    """A rowset a writer has made durable and proposes to commit (its version is not known yet)."""

    rowset_id: str
    partition_id: int
    bucket: int
    num_rows: int
    size_bytes: int
    path: str = Field(description="path relative to the tier root; built from ids only")
    tier: Tier = "ssd"
    schema_version: int
    checksum: str = Field(description="sha256 of the file's bytes")


class RowsetMove(Frozen):
    """One rowset's copy changing tier (cooldown to a resource, or between local media)."""

    rowset_id: str
    from_tier: Tier
    to_tier: Tier
    path: str


class SharedFile(Frozen):
    """The rowset whose file a clone's rowset reads (CREATE TABLE … CLONE): the file's path is built
    from these ids, not from the clone's, and it stays until no rowset of any table names it."""

    table_id: int
    partition_id: int
    rowset_id: str


class ClonedDelete(Frozen):
    """A delete predicate a clone takes from its source's snapshot: rows of the partition written
    below `version` matching `predicate` (None: every row) are gone."""

    partition_id: int
    version: int
    predicate: str | None


class Rowset(NewRowset):
    """A committed rowset: rows of one tablet written at versions [start_version, end_version]."""

    start_version: int
    end_version: int
    # Commit time at which the rowset became visible.
    visible_ts_ms: int
    # Unique ids of the columns the file holds, when that is not simply its schema version's
    # columns: a compacted file keeps every column any input had, so a read at an instant
    # before a DROP COLUMN still finds the dropped column's values.
    column_ids: tuple[int, ...] | None = None
    # When the newest row the rowset holds was written (a compaction's output keeps its inputs'
    # newest): `cooldown_ttl` counts from here, as Doris' newest_write_timestamp does.
    newest_write_ts_ms: int | None = None
    # Set on a clone's rowset: the rowset whose file it reads (None: the file is its own).
    shared_file: SharedFile | None = None
    # A time-travel table's compaction output that kept every input row unmerged, with its own
    # `__version` and no delete applied: its rows at or below any version V of its range are exactly
    # the tablet's rows of versions [start_version, V], so it answers reads at instants inside its range.
    keeps_versions: bool = False
    # Rows of the file above this version are not read (None: every row is): set on a version-keeping
    # rowset by a cover at a version inside its range, and on a clone's copy of one.
    read_through: int | None = None

    @property
    def written_ts_ms(self) -> int:
        return self.newest_write_ts_ms if self.newest_write_ts_ms is not None else self.visible_ts_ms

    def file_ids(self, table_id: int) -> tuple[int, int, str]:
        """(table id, partition id, rowset id) the file's path is built from; `table_id` is the
        table whose record this is."""
        if self.shared_file is not None:
            return self.shared_file.table_id, self.shared_file.partition_id, self.shared_file.rowset_id
        return table_id, self.partition_id, self.rowset_id


RoutineLoadState = Literal["RUNNING", "PAUSED", "STOPPED"]
# A Broker Load (LOAD) or EXPORT job's states, Doris' names (a load is LOADING, an export EXPORTING).
BulkJobKind = Literal["LOAD", "EXPORT"]
# COMMITTED: a load's rows are being committed; it can no longer be cancelled.
BulkJobState = Literal["PENDING", "LOADING", "EXPORTING", "COMMITTED", "FINISHED", "CANCELLED"]
# Doris' symbolic start positions, as librdkafka spells them.
OFFSET_BEGINNING = -2
OFFSET_END = -1


class LoadColumn(Frozen):
    """An entry of a routine load's COLUMNS(...): a source field, or `name = expr` computed from them."""

    name: str
    expr: str | None = Field(default=None, description="the expression as written (Doris SQL)")
    expr_sql: str | None = Field(default=None, description="the expression as DuckDB SQL over the source fields")


class RoutineLoadSpec(Frozen):
    """What a routine load job reads and how its records become rows; fixed when the job is created."""

    format: Literal["json", "csv"] = "json"
    columns: tuple[LoadColumn, ...] = ()
    where: str | None = Field(default=None, description="the WHERE filter as written (Doris SQL)")
    where_sql: str | None = Field(default=None, description="the WHERE filter as DuckDB SQL")
    partitions: tuple[int, ...] = Field(default=(), description="target partition ids (PARTITION clause)")
    column_separator: str = "\t"
    jsonpaths: tuple[str, ...] = ()
    json_root: str | None = None
    strip_outer_array: bool = False
    strict_mode: bool = False
    max_batch_interval_s: float = 10.0
    max_batch_rows: int = 200_000
    max_batch_size: int = 100 * 1024 * 1024
    max_error_number: int = 0
    broker_list: str
    topic: str
    # The partitions read and where each starts (OFFSET_BEGINNING, or an offset): OFFSET_END is
    # resolved to the partition's end when the job is created, so a restart never skips records.
    start_offsets: dict[int, int]
    # `property.*` client settings passed to the Kafka consumer; secret values are sealed.
    client_properties: dict[str, str] = Field(default_factory=dict)
    user: str = Field(default="root", description="the SQL user who created the job: every batch commits with "
                                                  "this user's privileges, checked when it commits")


class LoadProgress(Frozen):
    """The Kafka records one routine-load batch consumed, committed in the same event as its rows:
    the sequencer accepts a batch only if it starts where the job's previous batch ended."""

    job: str = Field(description="the job's key, '<db_id>/<name>'")
    topic: str
    start_offsets: dict[int, int] = Field(description="per partition, the first offset the batch read")
    end_offsets: dict[int, int] = Field(description="per partition, the offset the next batch starts at")
    received_bytes: int = 0
    error_rows: int = Field(default=0, description="rows that did not parse or fit (sent to strata.dlq)")
    unselected_rows: int = Field(default=0, description="rows the job's WHERE filtered out")
    last_error: str = ""
