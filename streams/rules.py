"""What the sequencer decides for each command: the event it becomes, or why it is rejected.

`decide` reads the sequencer's projection and never writes it; the sequencer folds the decided
event in before deciding the next command, so commands in one batch see each other.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass
from hashlib import sha256
from typing import Any

from projections.auto_partitions import widened
from projections.cooldown import effective
from projections.merge_on_write import enabled as merges_on_write
from projections.projection import Projection
from projections.retention import capped_horizon_ms, needed_by_tags, tag_instants_ms, whole_since_ms
from projections.routine_loads import creator_refusal, source_refusal
from projections.snapshot import cover_tablet, keeps_versions_possible, resolve
from projections.state import TableState
from projections.users import PRIVILEGES, ROOT, UserRecord, scope_key
from schemas import commands as cmd
from schemas import events as ev
from schemas.errors import ErrorCode
from schemas.model import ClonedDelete, LoadProgress, NewRowset, Partition, Rowset, SharedFile, TableSchema
from storage.delete_bitmaps import bitmap_path_problem
from storage.paths import path_problem, rowset_path
from storage.tiers import LOCAL_MEDIA, remote_tier, resource_of

# The properties that name a storage policy: a partition's own, and the one dynamic partitions get.
_POLICY_KEYS = ("storage_policy", "dynamic_partition.storage_policy")


class Rejected(Exception):
    def __init__(self, code: ErrorCode, reason: str) -> None:
        super().__init__(reason)
        self.code = code
        self.reason = reason


@dataclass(frozen=True)
class Decision:
    event: ev.Event
    table_id: int | None


def _live_table(state: Projection, table_id: int) -> TableState:
    table = state.tables.get(table_id)
    if table is None or table.dropped_ts_ms is not None:
        raise Rejected(ErrorCode.NO_SUCH_TABLE, f"table id {table_id} does not exist (dropped meanwhile?)")
    return table


def _database(state: Projection, name: str) -> int:
    db = state.database_by_name(name)
    if db is None:
        raise Rejected(ErrorCode.BAD_DB_ERROR, f"Unknown database '{name}'")
    return db.db_id


def _check_path(path: str, table_id: int, partition_id: int, bucket: int, rowset_id: str) -> None:
    """A path in a command must be the one built from the rowset's ids (DESIGN §15): the recycler,
    the readers and the tiering agent open and delete what the log names."""
    try:
        expected = rowset_path(table_id, partition_id, bucket, rowset_id)
    except ValueError as exc:
        raise Rejected(ErrorCode.WRONG_ARGUMENTS, str(exc)) from None
    problem = path_problem(path, expected)
    if problem is not None:
        raise Rejected(ErrorCode.WRONG_ARGUMENTS, problem)


def _check_partition_names_unique(names: list[str]) -> None:
    seen: set[str] = set()
    for name in names:
        if name.lower() in seen:
            raise Rejected(ErrorCode.SAME_NAME_PARTITION, f"Duplicate partition name {name}")
        seen.add(name.lower())


class Rules:
    """One method per command kind; each returns a Decision or raises Rejected."""

    def __init__(self, state: Projection) -> None:
        self.state = state
        self._by_type: dict[type[cmd.Command], Callable[[Any, int], Decision]] = {
            cmd.CreateDatabase: self.create_database,
            cmd.DropDatabase: self.drop_database,
            cmd.CreateTable: self.create_table,
            cmd.CloneTable: self.clone_table,
            cmd.DropTable: self.drop_table,
            cmd.CreateView: self.create_view,
            cmd.AlterView: self.alter_view,
            cmd.DropView: self.drop_view,
            cmd.RecoverTable: self.recover_table,
            cmd.RenameTable: self.rename_table,
            cmd.ReplaceTable: self.replace_table,
            cmd.AlterTableProperties: self.alter_table_properties,
            cmd.ChangeSchema: self.change_schema,
            cmd.AddPartition: self.add_partition,
            cmd.DropPartition: self.drop_partition,
            cmd.ModifyPartitions: self.modify_partitions,
            cmd.CommitRowsets: self.commit_rowsets,
            cmd.PrepareLoad: self.prepare_load,
            cmd.FinishLoad: self.finish_load,
            cmd.OverwriteRowsets: self.overwrite_rowsets,
            cmd.AllocateAutoIncrement: self.allocate_auto_increment,
            cmd.CommitDelete: self.commit_delete,
            cmd.CommitCompaction: self.commit_compaction,
            cmd.CommitDeleteBitmaps: self.commit_delete_bitmaps,
            cmd.RecycleRowsets: self.recycle_rowsets,
            cmd.MoveRowsets: self.move_rowsets,
            cmd.RestoreTable: self.restore_table,
            cmd.CreateTag: self.create_tag,
            cmd.DropTag: self.drop_tag,
            cmd.CreateResource: self.create_resource,
            cmd.AlterResource: self.alter_resource,
            cmd.DropResource: self.drop_resource,
            cmd.CreateStoragePolicy: self.create_storage_policy,
            cmd.AlterStoragePolicy: self.alter_storage_policy,
            cmd.DropStoragePolicy: self.drop_storage_policy,
            cmd.ChangeRoutineLoad: self.change_routine_load,
            cmd.ChangeBulkJob: self.change_bulk_job,
            cmd.CreateUser: self.create_user,
            cmd.DropUser: self.drop_user,
            cmd.SetPassword: self.set_password,
            cmd.ChangeGrants: self.change_grants,
            cmd.AlterUser: self.alter_user,
        }

    def decide(self, command: cmd.Command, ts_ms: int) -> Decision:
        handler = self._by_type.get(type(command))
        if handler is None:
            raise Rejected(ErrorCode.NOT_SUPPORTED_YET, f"{command.TYPE} is not supported by this sequencer")
        return handler(command, ts_ms)

    def _new_partition_id(self, offset: int = 0) -> int:
        return self.state.next_ids["partition"] + offset

    # -- databases -------------------------------------------------------------------------------
    def create_database(self, c: cmd.CreateDatabase, ts: int) -> Decision:
        if self.state.database_by_name(c.name) is not None:
            if c.if_not_exists:
                raise Rejected(ErrorCode.DB_CREATE_EXISTS, "exists")  # answered as a no-op by the proposer
            raise Rejected(ErrorCode.DB_CREATE_EXISTS, f"Can't create database '{c.name}'; database exists")
        return Decision(ev.DatabaseCreated(db_id=self.state.next_ids["db"], name=c.name), None)

    def drop_database(self, c: cmd.DropDatabase, ts: int) -> Decision:
        db = self.state.database_by_name(c.name)
        if db is None:
            raise Rejected(ErrorCode.DB_DROP_EXISTS, f"Can't drop database '{c.name}'; database doesn't exist")
        return Decision(ev.DatabaseDropped(db_id=db.db_id, name=db.name), None)

    # -- tables ------------------------------------------------------------------------------------
    def create_table(self, c: cmd.CreateTable, ts: int) -> Decision:
        db_id = _database(self.state, c.db)
        self._check_name_free(db_id, c.name)
        _check_partition_names_unique([p.name for p in c.partitions])
        for properties in (c.properties, *(p.properties for p in c.partitions)):
            self._check_policy_named(properties)
        partitions = tuple(
            Partition(partition_id=self._new_partition_id(i), name=p.name, bound=p.bound, buckets=p.buckets,
                      properties=p.properties)
            for i, p in enumerate(c.partitions))
        next_column_id = max((col.unique_id for col in c.columns), default=0) + 1
        table_id = self.state.next_ids["table"]
        event = ev.TableCreated(
            db_id=db_id, table_id=table_id, name=c.name, keys_model=c.keys_model,
            table_schema=TableSchema(schema_version=1, columns=c.columns), partition_kind=c.partition_kind,
            partition_columns=c.partition_columns, partitions=partitions, distribution=c.distribution,
            properties=c.properties, comment=c.comment, next_column_id=next_column_id,
            auto_partition=c.auto_partition)
        return Decision(event, table_id)

    def clone_table(self, c: cmd.CloneTable, ts: int) -> Decision:
        """The source's snapshot becomes the clone's first commit: its rowsets get new ids in the
        clone's new partitions but keep the versions (files hold them) and name the file they share.
        Keyed by the source, so it is ordered before any later recycle of the source's rowsets."""
        db_id = _database(self.state, c.db)
        self._check_name_free(db_id, c.name)
        source = _live_table(self.state, c.source_table_id)
        if c.source_ts_ms is not None and not whole_since_ms(source) <= c.source_ts_ms <= ts:
            raise Rejected(ErrorCode.WRONG_ARGUMENTS, f"table '{source.name}' no longer keeps its snapshot at that "
                                                      "instant (compacted and recycled since)")
        snapshot = resolve(self.state, source, c.source_ts_ms)
        table_id = self.state.next_ids["table"]
        partitions: list[Partition] = []
        versions: dict[int, int] = {}
        rowsets: list[Rowset] = []
        deletes: list[ClonedDelete] = []
        for i, taken in enumerate(snapshot.partitions):
            pid = self._new_partition_id(i)
            partition = source.partitions[taken.partition_id].partition
            partitions.append(partition.model_copy(update={"partition_id": pid}))
            if taken.version:
                versions[pid] = taken.version
            for r in taken.rowsets:
                shared = r.shared_file or SharedFile(table_id=source.table_id, partition_id=r.partition_id,
                                                     rowset_id=r.rowset_id)
                rowset_id = sha256(f"{table_id}/{r.rowset_id}".encode()).hexdigest()[:32]
                # A version-keeping rowset read through the instant's version: the clone's copy ends there
                # (its file's newer rows are the source's later history, never the clone's).
                end = r.end_version if r.read_through is None else r.read_through
                rowsets.append(r.model_copy(update={"rowset_id": rowset_id, "partition_id": pid, "visible_ts_ms": ts,
                                                    "newest_write_ts_ms": r.written_ts_ms, "shared_file": shared,
                                                    "end_version": end}))
            deletes.extend(ClonedDelete(partition_id=pid, version=d.version, predicate=d.predicate)
                           for d in taken.deletes)
        event = ev.TableCloned(
            db_id=db_id, table_id=table_id, name=c.name, source_table_id=source.table_id,
            source_ts_ms=ts if c.source_ts_ms is None else c.source_ts_ms, keys_model=source.keys_model,
            schemas=tuple(s.table_schema for s in snapshot.schema_history),
            partition_kind=source.partition_kind,  # type: ignore[arg-type]
            partition_columns=source.partition_columns, partitions=tuple(partitions), distribution=source.distribution,
            properties=dict(source.properties), comment=source.comment, next_column_id=source.next_column_id,
            auto_partition=source.auto_partition, auto_increment_next=source.auto_increment_next,
            partition_versions=versions, rowsets=tuple(rowsets), deletes=tuple(deletes),
            description=f"CLONE {source.name}")
        return Decision(event, source.table_id)

    def _check_name_free(self, db_id: int, name: str) -> None:
        """Tables and views of a database share one namespace (as in Doris and MySQL)."""
        if self.state.table_by_name(db_id, name) is not None or self.state.view_by_name(db_id, name) is not None:
            raise Rejected(ErrorCode.TABLE_EXISTS_ERROR, f"Table '{name}' already exists")

    # -- views -------------------------------------------------------------------------------------
    def create_view(self, c: cmd.CreateView, ts: int) -> Decision:
        db_id = _database(self.state, c.db)
        existing = self.state.view_by_name(db_id, c.name)
        if existing is not None and c.or_replace:
            return Decision(ev.ViewAltered(view_id=existing.view_id, definition=c.definition, columns=c.columns,
                                           comment=c.comment), None)
        self._check_name_free(db_id, c.name)
        view_id = self.state.next_ids["table"]
        return Decision(ev.ViewCreated(db_id=db_id, view_id=view_id, name=c.name, definition=c.definition,
                                       columns=c.columns, comment=c.comment), None)

    def _view(self, db: str, name: str) -> int:
        db_id = _database(self.state, db)
        view = self.state.view_by_name(db_id, name)
        if view is None:
            if self.state.table_by_name(db_id, name) is not None:
                raise Rejected(ErrorCode.WRONG_OBJECT, f"'{db}.{name}' is not VIEW. Use 'DROP TABLE {db}.{name}'.")
            raise Rejected(ErrorCode.NO_SUCH_TABLE, f"Table '{db}.{name}' doesn't exist")
        return view.view_id

    def alter_view(self, c: cmd.AlterView, ts: int) -> Decision:
        return Decision(ev.ViewAltered(view_id=self._view(c.db, c.name), definition=c.definition,
                                       columns=c.columns), None)

    def drop_view(self, c: cmd.DropView, ts: int) -> Decision:
        return Decision(ev.ViewDropped(view_id=self._view(c.db, c.name)), None)

    def drop_table(self, c: cmd.DropTable, ts: int) -> Decision:
        table = self.state.tables.get(c.table_id)
        # FORCE also purges a table already dropped (the recycler, once its recovery window passed).
        if table is None or (table.dropped_ts_ms is not None and not c.force):
            raise Rejected(ErrorCode.NO_SUCH_TABLE, f"table id {c.table_id} does not exist (dropped meanwhile?)")
        return Decision(ev.TableDropped(table_id=c.table_id, force=c.force), c.table_id)

    def recover_table(self, c: cmd.RecoverTable, ts: int) -> Decision:
        db_id = _database(self.state, c.db)
        dropped = self.state.table_by_name(db_id, c.name, dropped=True)
        if dropped is None:
            raise Rejected(ErrorCode.NO_SUCH_TABLE, f"No dropped table '{c.name}' to recover in '{c.db}'")
        if self.state.table_by_name(db_id, c.name) is not None or self.state.view_by_name(db_id, c.name) is not None:
            raise Rejected(ErrorCode.TABLE_EXISTS_ERROR,
                           f"Table '{c.name}' already exists; rename or drop it before RECOVER")
        return Decision(ev.TableRecovered(table_id=dropped.table_id), dropped.table_id)

    def rename_table(self, c: cmd.RenameTable, ts: int) -> Decision:
        table = _live_table(self.state, c.table_id)
        self._check_name_free(table.db_id, c.name)
        return Decision(ev.TableRenamed(table_id=c.table_id, name=c.name), c.table_id)

    def replace_table(self, c: cmd.ReplaceTable, ts: int) -> Decision:
        replaced = _live_table(self.state, c.table_id)
        replacing = _live_table(self.state, c.with_table_id)
        if replaced.table_id == replacing.table_id:
            raise Rejected(ErrorCode.WRONG_ARGUMENTS, f"Table '{replaced.name}' can not be replaced with itself")
        if replaced.db_id != replacing.db_id:
            raise Rejected(ErrorCode.WRONG_ARGUMENTS, "REPLACE WITH TABLE needs two tables of one database")
        return Decision(ev.TableReplaced(table_id=c.table_id, with_table_id=c.with_table_id, swap=c.swap),
                        c.table_id)

    def alter_table_properties(self, c: cmd.AlterTableProperties, ts: int) -> Decision:
        _live_table(self.state, c.table_id)
        self._check_policy_named(c.changes)
        return Decision(ev.TablePropertiesChanged(table_id=c.table_id, changes=c.changes), c.table_id)

    def allocate_auto_increment(self, c: cmd.AllocateAutoIncrement, ts: int) -> Decision:
        """The next `count` values, after every value handed out before (the counter lives in the log)."""
        table = _live_table(self.state, c.table_id)
        column = table.auto_increment_column
        if column is None or column.auto_increment is None:
            raise Rejected(ErrorCode.WRONG_ARGUMENTS, f"table '{table.name}' has no AUTO_INCREMENT column")
        start = max(table.auto_increment_next or column.auto_increment, column.auto_increment)
        return Decision(ev.AutoIncrementAllocated(table_id=c.table_id, start=start, count=c.count), c.table_id)

    def change_schema(self, c: cmd.ChangeSchema, ts: int) -> Decision:
        table = _live_table(self.state, c.table_id)
        current = table.schema_now.schema_version
        if c.base_schema_version != current:
            raise Rejected(ErrorCode.CONFLICT,
                           f"the schema of '{table.name}' changed concurrently (now version {current}); retry")
        schema = TableSchema(schema_version=current + 1, columns=c.columns)
        return Decision(ev.SchemaChanged(table_id=c.table_id, table_schema=schema,
                                         next_column_id=c.next_column_id, description=c.description), c.table_id)

    # -- partitions --------------------------------------------------------------------------------
    def add_partition(self, c: cmd.AddPartition, ts: int) -> Decision:
        table = _live_table(self.state, c.table_id)
        if table.partition_by_name(c.partition.name) is not None:
            raise Rejected(ErrorCode.SAME_NAME_PARTITION, f"Duplicate partition name {c.partition.name}")
        partition = Partition(partition_id=self._new_partition_id(), name=c.partition.name,
                              bound=c.partition.bound, buckets=c.partition.buckets,
                              properties=c.partition.properties)
        return Decision(ev.PartitionAdded(table_id=c.table_id, partition=partition), c.table_id)

    def drop_partition(self, c: cmd.DropPartition, ts: int) -> Decision:
        table = _live_table(self.state, c.table_id)
        partition = table.partition_by_name(c.partition_name)
        if partition is None:
            raise Rejected(ErrorCode.UNKNOWN_PARTITION, f"Unknown partition '{c.partition_name}' in table "
                                                        f"'{table.name}'")
        return Decision(ev.PartitionDropped(table_id=c.table_id, partition_id=partition.partition_id), c.table_id)

    def modify_partitions(self, c: cmd.ModifyPartitions, ts: int) -> Decision:
        table = _live_table(self.state, c.table_id)
        live = {p.partition_id for p in table.live_partitions()}
        missing = [pid for pid in c.partition_ids if pid not in live]
        if missing:
            raise Rejected(ErrorCode.UNKNOWN_PARTITION, f"partition ids {missing} no longer exist")
        self._check_policy_named(c.changes)
        return Decision(ev.PartitionPropertiesChanged(table_id=c.table_id, partition_ids=c.partition_ids,
                                                      changes=c.changes), c.table_id)

    # -- data ----------------------------------------------------------------------------------------
    def _next_versions(self, table: TableState, partition_ids: set[int]) -> dict[int, int]:
        versions = {}
        for pid in sorted(partition_ids):
            partition = table.partitions.get(pid)
            if partition is None or partition.dropped_ts_ms is not None:
                raise Rejected(ErrorCode.UNKNOWN_PARTITION,
                               f"partition id {pid} of '{table.name}' was dropped during the load; retry")
            versions[pid] = partition.version + 1
        return versions

    def _check_label(self, table_id: int, label: str) -> None:
        previous = self.state.label(table_id, label)
        if previous is not None:
            raise Rejected(ErrorCode.LABEL_ALREADY_EXISTS,
                           f"Label [{label}] has already been used by commit {previous.commit_number} "
                           f"({previous.num_rows} rows)")
        prepared = self.state.prepared_label(table_id, label)
        if prepared is not None:
            raise Rejected(ErrorCode.LABEL_ALREADY_EXISTS,
                           f"Label [{label}] has already been used by prepared transaction [{prepared.txn_id}]")

    def _placed(self, table: TableState, rowsets: tuple[NewRowset, ...], versions: dict[int, int],
                ts: int) -> tuple[Rowset, ...]:
        """The new rowsets, each checked against its tablet and given its partition's version."""
        for r in rowsets:
            if not 0 <= r.bucket < table.partitions[r.partition_id].partition.buckets:
                raise Rejected(ErrorCode.WRONG_ARGUMENTS, f"bucket {r.bucket} out of range")
            _check_path(r.path, table.table_id, r.partition_id, r.bucket, r.rowset_id)
        return tuple(
            Rowset(**r.model_dump(), start_version=versions[r.partition_id], end_version=versions[r.partition_id],
                   visible_ts_ms=ts)
            for r in rowsets)

    def commit_rowsets(self, c: cmd.CommitRowsets, ts: int) -> Decision:
        table = _live_table(self.state, c.table_id)
        self._check_label(c.table_id, c.label)
        if c.load is not None:
            self._check_load(c.table_id, c.load)
            if not c.rowsets:
                return Decision(ev.RoutineLoadProgressed(table_id=c.table_id, load=c.load), c.table_id)
        elif not c.rowsets:
            raise Rejected(ErrorCode.WRONG_ARGUMENTS, "a commit needs at least one rowset")
        new_partitions = self._auto_partitions(table, c.new_partitions)
        if new_partitions:
            # The fold adds them before it applies the rowsets; versions start from 0 like any new partition.
            table = widened(table, new_partitions, ts)
        versions = self._next_versions(table, {r.partition_id for r in c.rowsets})
        rowsets = self._placed(table, c.rowsets, versions, ts)
        event = ev.RowsetsCommitted(table_id=c.table_id, commit_number=table.commit_number + 1, label=c.label,
                                    partition_versions=versions, rowsets=rowsets, num_rows=c.num_rows,
                                    source_offsets=c.source_offsets, source=c.source, load=c.load,
                                    new_partitions=new_partitions)
        return Decision(event, c.table_id)

    def prepare_load(self, c: cmd.PrepareLoad, ts: int) -> Decision:
        """A two-phase load's first phase: the label is taken and the rowsets recorded, no version yet."""
        table = _live_table(self.state, c.table_id)
        self._check_label(c.table_id, c.label)
        if not c.rowsets:
            raise Rejected(ErrorCode.WRONG_ARGUMENTS, "a prepared load needs at least one rowset")
        known = set(table.partitions) | {p.partition_id for p in c.new_partitions}
        for r in c.rowsets:
            if r.partition_id not in known:
                raise Rejected(ErrorCode.UNKNOWN_PARTITION, f"partition id {r.partition_id} of '{table.name}' is "
                                                            "unknown")
            _check_path(r.path, table.table_id, r.partition_id, r.bucket, r.rowset_id)
        txn_id = self.state.next_ids.get("txn", 1)
        event = ev.LoadPrepared(table_id=c.table_id, txn_id=txn_id, label=c.label, rowsets=c.rowsets,
                                num_rows=c.num_rows, source=c.source, new_partitions=c.new_partitions,
                                deadline_ts_ms=ts + c.timeout_ms)
        return Decision(event, c.table_id)

    def finish_load(self, c: cmd.FinishLoad, ts: int) -> Decision:
        """Commits a prepared load as one RowsetsCommitted (versions assigned now), or aborts it. A load
        finished before answers as Doris does; one past its deadline can only abort, so a late commit
        aborts it. Each transaction is finished once: a retried commit never loads twice."""
        prepared = self.state.prepared_load(c.txn_id)
        if prepared is None or prepared.table_id != c.table_id:
            raise Rejected(ErrorCode.UNKNOWN_ERROR, f"transaction [{c.txn_id}] not found")
        if prepared.status == "COMMITTED":
            raise Rejected(ErrorCode.UNKNOWN_ERROR, f"transaction [{c.txn_id}] is already visible, not pre-committed.")
        if prepared.status == "ABORTED":
            raise Rejected(ErrorCode.UNKNOWN_ERROR, f"transaction [{c.txn_id}] is already aborted. abort reason: "
                                                    f"{prepared.reason}")
        if c.operation == "abort" or ts > prepared.deadline_ts_ms:
            reason = c.reason or "user abort" if c.operation == "abort" else \
                "timeout: the prepared transaction was not committed before its deadline"
            return Decision(ev.LoadAborted(table_id=c.table_id, txn_id=c.txn_id, label=prepared.label,
                                           reason=reason), c.table_id)
        table = _live_table(self.state, c.table_id)
        new_partitions = self._auto_partitions(table, prepared.new_partitions)
        if new_partitions:
            table = widened(table, new_partitions, ts)
        versions = self._next_versions(table, {r.partition_id for r in prepared.rowsets})
        event = ev.RowsetsCommitted(table_id=c.table_id, commit_number=table.commit_number + 1, label=prepared.label,
                                    partition_versions=versions, rowsets=self._placed(table, prepared.rowsets,
                                                                                      versions, ts),
                                    num_rows=prepared.num_rows, source=prepared.source,
                                    new_partitions=new_partitions, txn_id=prepared.txn_id)
        return Decision(event, c.table_id)

    def _auto_partitions(self, table: TableState, proposed: tuple[Partition, ...]) -> tuple[Partition, ...]:
        """The partitions an AUTO PARTITION commit really creates. One that a concurrent load created
        first under the same id and bound is already there (the commit just writes into it); any other
        clash — a name or id taken by another partition — is a CONFLICT the writer resolves by routing
        its rows again against the catalog as it now is."""
        if proposed and table.auto_partition is None:
            raise Rejected(ErrorCode.WRONG_ARGUMENTS, f"table '{table.name}' does not create partitions on load")
        created: list[Partition] = []
        for p in proposed:
            existing = table.partition_by_name(p.name)
            if existing is not None and existing.partition_id == p.partition_id \
                    and existing.partition.bound == p.bound:
                continue
            if existing is not None or p.partition_id != self._new_partition_id(len(created)):
                raise Rejected(ErrorCode.CONFLICT, f"partition {p.name} of '{table.name}' was created concurrently "
                                                   "with other rows' partitions; retry")
            created.append(p)
        return tuple(created)

    def overwrite_rowsets(self, c: cmd.OverwriteRowsets, ts: int) -> Decision:
        """Each covered partition gets two versions in this one commit: the first ends a mask over
        everything before it (a restore to nothing), the second holds the new rowsets."""
        table = _live_table(self.state, c.table_id)
        self._check_label(c.table_id, c.label)
        covered = set(c.partition_ids) or {p.partition_id for p in table.live_partitions()}
        stray = sorted({r.partition_id for r in c.rowsets} - covered)
        if stray:
            raise Rejected(ErrorCode.WRONG_ARGUMENTS, f"rowsets of partition ids {stray} lie outside the "
                                                      "partitions the overwrite covers")
        masked = self._next_versions(table, covered)
        versions = {pid: version + 1 for pid, version in masked.items()}
        event = ev.TableOverwritten(table_id=c.table_id, commit_number=table.commit_number + 1, label=c.label,
                                    masked_versions=masked, partition_versions=versions,
                                    rowsets=self._placed(table, c.rowsets, versions, ts), num_rows=c.num_rows,
                                    rows_removed=c.rows_removed, description=c.description)
        return Decision(event, c.table_id)

    def commit_delete(self, c: cmd.CommitDelete, ts: int) -> Decision:
        table = _live_table(self.state, c.table_id)
        versions = self._next_versions(table, set(c.partition_ids))
        event = ev.DeleteCommitted(table_id=c.table_id, commit_number=table.commit_number + 1,
                                   partition_versions=versions, predicate=c.predicate, kind=c.kind,
                                   description=c.description, num_rows=c.num_rows)
        return Decision(event, c.table_id)

    def commit_compaction(self, c: cmd.CommitCompaction, ts: int) -> Decision:
        table = _live_table(self.state, c.table_id)
        partition = table.partitions.get(c.partition_id)
        if partition is None or partition.dropped_ts_ms is not None:
            raise Rejected(ErrorCode.UNKNOWN_PARTITION, f"partition id {c.partition_id} was dropped")
        live = cover_tablet(self.state, c.table_id, partition, c.bucket, partition.version)
        ids = [r.rowset_id for r in live]
        if not c.input_rowset_ids or c.input_rowset_ids[0] not in ids:
            raise Rejected(ErrorCode.CONFLICT, "compaction inputs are no longer the tablet's live rowsets")
        first = ids.index(c.input_rowset_ids[0])
        run = live[first:first + len(c.input_rowset_ids)]
        if [r.rowset_id for r in run] != list(c.input_rowset_ids):
            raise Rejected(ErrorCode.CONFLICT, "compaction inputs are not a contiguous run of the tablet's live "
                                               "rowsets (a concurrent compaction or restore?)")
        if (run[0].start_version, run[-1].end_version) != (c.start_version, c.end_version):
            raise Rejected(ErrorCode.WRONG_ARGUMENTS, "compaction version range does not match its inputs")
        if (c.output.partition_id, c.output.bucket) != (c.partition_id, c.bucket):
            raise Rejected(ErrorCode.WRONG_ARGUMENTS, "compaction output is not in the tablet it compacts")
        _check_path(c.output.path, c.table_id, c.partition_id, c.bucket, c.output.rowset_id)
        if c.keeps_versions and not keeps_versions_possible(table, partition, run):
            raise Rejected(ErrorCode.WRONG_ARGUMENTS, "a version-keeping compaction needs a time-travel table and "
                                                      "inputs that keep every row's version, with no RESTORE between")
        output = Rowset(**c.output.model_dump(), start_version=c.start_version, end_version=c.end_version,
                        visible_ts_ms=ts, column_ids=c.column_ids,
                        newest_write_ts_ms=max(r.written_ts_ms for r in run), keeps_versions=c.keeps_versions)
        return Decision(ev.CompactionCommitted(table_id=c.table_id, partition_id=c.partition_id, bucket=c.bucket,
                                               kind=c.kind, input_rowset_ids=c.input_rowset_ids, output=output),
                        c.table_id)

    def commit_delete_bitmaps(self, c: cmd.CommitDeleteBitmaps, ts: int) -> Decision:
        table = _live_table(self.state, c.table_id)
        if not merges_on_write(table):
            raise Rejected(ErrorCode.WRONG_ARGUMENTS, f"table '{table.name}' does not keep delete bitmaps")
        partition = table.partitions.get(c.partition_id)
        if partition is None or partition.dropped_ts_ms is not None:
            raise Rejected(ErrorCode.UNKNOWN_PARTITION, f"partition id {c.partition_id} was dropped")
        if c.version > partition.version:
            raise Rejected(ErrorCode.WRONG_ARGUMENTS, f"partition id {c.partition_id} has no version {c.version}")
        existing = self.state.delete_bitmaps(c.table_id, c.partition_id, c.version - 1, c.version)
        if existing and not c.replace:
            raise Rejected(ErrorCode.CONFLICT, f"version {c.version} of partition id {c.partition_id} has its "
                                              "delete bitmaps already")
        if c.replace and not existing:
            raise Rejected(ErrorCode.WRONG_ARGUMENTS, f"version {c.version} of partition id {c.partition_id} has "
                                                      "no delete bitmaps to replace")
        buckets = [t.bucket for t in c.tablets]
        if len(set(buckets)) != len(buckets) or any(b >= partition.partition.buckets for b in buckets):
            raise Rejected(ErrorCode.WRONG_ARGUMENTS, "delete bitmaps name a bucket twice or one the partition lacks")
        for tablet in c.tablets:
            if tablet.path is None:
                if tablet.rows or tablet.targets:
                    raise Rejected(ErrorCode.WRONG_ARGUMENTS, "a delete bitmap with rows needs a file")
                continue
            problem = bitmap_path_problem(tablet.path, c.table_id, c.partition_id, tablet.bucket, c.version)
            if problem is not None:
                raise Rejected(ErrorCode.WRONG_ARGUMENTS, problem)
        for tablet in c.tablets:
            for target in tablet.targets:
                # Computed against rowsets a compaction replaced meanwhile: the worker computes it again.
                record = self.state.rowset_record(target.rowset_id)
                if record is None or record.stale_ts_ms is not None or \
                        (record.rowset.partition_id, record.rowset.bucket) != (c.partition_id, tablet.bucket):
                    raise Rejected(ErrorCode.CONFLICT, f"delete bitmaps name rowset {target.rowset_id}, which is "
                                                       "not a live rowset of their tablet")
        return Decision(ev.DeleteBitmapsCommitted(table_id=c.table_id, partition_id=c.partition_id,
                                                  version=c.version, tablets=c.tablets, replace=c.replace),
                        c.table_id)

    def recycle_rowsets(self, c: cmd.RecycleRowsets, ts: int) -> Decision:
        table = self.state.tables.get(c.table_id)
        if table is None:
            raise Rejected(ErrorCode.NO_SUCH_TABLE, f"table id {c.table_id} does not exist")
        # A tag created after the recycler planned this pass still wins: the check is here, in order.
        tagged = tag_instants_ms(table, ts)
        for rowset_id in c.rowset_ids:
            record = self.state.rowset_record(rowset_id)
            if record is None:
                raise Rejected(ErrorCode.CONFLICT, f"rowset {rowset_id} is already recycled")
            if record.stale_ts_ms is None:
                raise Rejected(ErrorCode.CONFLICT, f"rowset {rowset_id} is live (restored?); it cannot be recycled")
            if not record.replaced_by_keeping and needed_by_tags(record.rowset, record.stale_ts_ms, tagged):
                raise Rejected(ErrorCode.CONFLICT, f"rowset {rowset_id} is read by a tag of '{table.name}'")
        return Decision(ev.RowsetsRecycled(table_id=c.table_id, rowset_ids=c.rowset_ids,
                                           horizon_ts_ms=capped_horizon_ms(table, c.horizon_ts_ms, ts)), c.table_id)

    def create_tag(self, c: cmd.CreateTag, ts: int) -> Decision:
        table = _live_table(self.state, c.table_id)
        existing = table.tags.get(c.name.lower())
        if existing is not None and existing.live_at(ts):  # an expired tag's name may be used again
            raise Rejected(ErrorCode.UNKNOWN_ERROR, f"tag '{c.name}' already exists on table '{table.name}'")
        number = table.commit_number if c.commit_number is None else c.commit_number
        commit = self.state.commit(c.table_id, number) if number else None
        if commit is None:
            raise Rejected(ErrorCode.WRONG_ARGUMENTS, f"table '{table.name}' has no commit {number} to tag"
                           if number else f"table '{table.name}' has no commit to tag yet")
        at = c.ts_ms if c.ts_ms is not None else ts if number == table.commit_number else commit.ts_ms
        if at < whole_since_ms(table) or at > ts:
            raise Rejected(ErrorCode.WRONG_ARGUMENTS, f"table '{table.name}' no longer keeps its snapshot of commit "
                                                      f"{number} (compacted and recycled since); a tag can name "
                                                      "only a snapshot still kept")
        expires = None if c.retention_ms is None else ts + c.retention_ms
        return Decision(ev.TagCreated(table_id=c.table_id, name=c.name, commit_number=number, ts_ms=at,
                                      retention_days=c.retention_days, expires_ts_ms=expires), c.table_id)

    def drop_tag(self, c: cmd.DropTag, ts: int) -> Decision:
        table = _live_table(self.state, c.table_id)
        if c.name.lower() not in table.tags:
            raise Rejected(ErrorCode.WRONG_ARGUMENTS, f"tag '{c.name}' does not exist on table '{table.name}'")
        return Decision(ev.TagDropped(table_id=c.table_id, name=table.tags[c.name.lower()].name), c.table_id)

    def move_rowsets(self, c: cmd.MoveRowsets, ts: int) -> Decision:
        _live_table(self.state, c.table_id)
        for move in c.moves:
            record = self.state.rowset_record(move.rowset_id)
            if record is None:
                raise Rejected(ErrorCode.CONFLICT, f"rowset {move.rowset_id} no longer exists (recycled?)")
            if record.rowset.tier != move.from_tier:
                raise Rejected(ErrorCode.CONFLICT, f"rowset {move.rowset_id} is on {record.rowset.tier} now, "
                                                   f"not {move.from_tier} (moved meanwhile?)")
            if record.rowset.shared_file is not None or self.state.shared(c.table_id, record.rowset):
                raise Rejected(ErrorCode.CONFLICT, f"rowset {move.rowset_id} shares its file with a clone (or a "
                                                   "clone's source); shared files stay where they are")
            _check_path(move.path, c.table_id, record.rowset.partition_id, record.rowset.bucket, move.rowset_id)
            resource = resource_of(move.to_tier)
            if resource is None and move.to_tier not in LOCAL_MEDIA:
                raise Rejected(ErrorCode.WRONG_ARGUMENTS, f"unknown tier '{move.to_tier}'")
            if resource is not None and resource not in self.state.named["resource"]:
                raise Rejected(ErrorCode.WRONG_ARGUMENTS, f"Resource '{resource}' does not exist")
        return Decision(ev.RowsetsMoved(table_id=c.table_id, moves=c.moves), c.table_id)

    def restore_table(self, c: cmd.RestoreTable, ts: int) -> Decision:
        table = _live_table(self.state, c.table_id)
        if table.time_travel_since_ts_ms is None or c.target_ts_ms < table.time_travel_since_ts_ms:
            raise Rejected(ErrorCode.WRONG_ARGUMENTS, f"no history of '{table.name}' is kept at that instant")
        restored, versions = {}, {}
        for partition in table.live_partitions():
            created_before = partition.created_ts_ms <= c.target_ts_ms
            restored[partition.partition_id] = (
                self.state.version_at(c.table_id, partition.partition_id, c.target_ts_ms) if created_before else 0)
            versions[partition.partition_id] = partition.version + 1
        schema_then = table.schema_at(c.target_ts_ms)
        schema = None
        if schema_then is not None and schema_then.columns != table.schema_now.columns:
            schema = TableSchema(schema_version=table.schema_now.schema_version + 1, columns=schema_then.columns)
        return Decision(ev.TableRestored(table_id=c.table_id, commit_number=table.commit_number + 1,
                                         target_ts_ms=c.target_ts_ms, restored_versions=restored,
                                         partition_versions=versions, table_schema=schema,
                                         description=c.description), c.table_id)

    # -- resources and policies ------------------------------------------------------------------------
    def _named_absent(self, kind: str, name: str, label: str) -> None:
        if name in self.state.named[kind]:
            raise Rejected(ErrorCode.WRONG_ARGUMENTS, f"{label} '{name}' already exists")

    def _named_present(self, kind: str, name: str, label: str) -> dict[str, Any]:
        found = self.state.named[kind].get(name)
        if found is None:
            raise Rejected(ErrorCode.WRONG_ARGUMENTS, f"{label} '{name}' does not exist")
        return found

    def create_resource(self, c: cmd.CreateResource, ts: int) -> Decision:
        self._named_absent("resource", c.name, "Resource")
        return Decision(ev.ResourceCreated(name=c.name, resource_type=c.resource_type,
                                           properties=c.properties), None)

    def alter_resource(self, c: cmd.AlterResource, ts: int) -> Decision:
        self._named_present("resource", c.name, "Resource")
        return Decision(ev.ResourceAltered(name=c.name, properties=c.properties), None)

    def drop_resource(self, c: cmd.DropResource, ts: int) -> Decision:
        self._named_present("resource", c.name, "Resource")
        users = [p for p, v in self.state.named["storage_policy"].items()
                 if v["properties"].get("storage_resource") == c.name]
        if users:
            raise Rejected(ErrorCode.WRONG_ARGUMENTS, f"Resource '{c.name}' is used by storage policy "
                                                      f"{', '.join(sorted(users))}")
        # A table may have cooled there under a policy it no longer uses: its rows would be lost.
        tier = remote_tier(c.name)
        holders = sorted({t.name for t in self.state.tables.values()
                          if any(r.rowset.tier == tier for r in self.state.rowset_records(t.table_id))})
        if holders:
            raise Rejected(ErrorCode.WRONG_ARGUMENTS, f"Resource '{c.name}' still holds cooled data of table "
                                                      f"{', '.join(holders)}")
        return Decision(ev.ResourceDropped(name=c.name), None)

    def _check_policy_named(self, properties: dict[str, str] | dict[str, str | None]) -> None:
        """A table or partition may name only a storage policy that exists (a DROP may have won the race)."""
        for key in _POLICY_KEYS:
            name = properties.get(key)
            if name:
                self._named_present("storage_policy", name, "Storage policy")

    def _check_policy_resource(self, properties: dict[str, str]) -> None:
        resource = properties.get("storage_resource")
        if resource:
            self._named_present("resource", resource, "Storage resource")

    def _cooled_under(self, policy: str) -> list[str]:
        """Tables with rowsets on a remote tier in partitions the policy governs."""
        cooled = []
        for table in self.state.tables.values():
            if table.dropped_ts_ms is not None:
                continue
            if any(effective(table, p, "storage_policy") == policy
                   and any(resource_of(r.rowset.tier) for r in self.state.rowset_records(table.table_id,
                                                                                        p.partition_id))
                   for p in table.live_partitions()):
                cooled.append(table.name)
        return sorted(cooled)

    def create_storage_policy(self, c: cmd.CreateStoragePolicy, ts: int) -> Decision:
        self._named_absent("storage_policy", c.name, "Storage policy")
        self._check_policy_resource(c.properties)
        return Decision(ev.StoragePolicyCreated(name=c.name, properties=c.properties), None)

    def alter_storage_policy(self, c: cmd.AlterStoragePolicy, ts: int) -> Decision:
        current = self._named_present("storage_policy", c.name, "Storage policy")
        self._check_policy_resource(c.properties)
        resource = c.properties.get("storage_resource")
        if resource and resource != current["properties"].get("storage_resource"):
            # Cooled rowsets are read from (and recycled on) the resource their tier names; a
            # policy switching resources under them would split a tablet across two stores.
            cooled = self._cooled_under(c.name)
            if cooled:
                raise Rejected(ErrorCode.WRONG_ARGUMENTS, f"Storage policy '{c.name}': storage_resource can not be "
                                                          f"changed, table {', '.join(cooled)} already has data "
                                                          "cooled under it")
        return Decision(ev.StoragePolicyAltered(name=c.name, properties=c.properties), None)

    def drop_storage_policy(self, c: cmd.DropStoragePolicy, ts: int) -> Decision:
        self._named_present("storage_policy", c.name, "Storage policy")
        users = [t.name for t in self.state.tables.values()
                 if t.dropped_ts_ms is None and (any(t.properties.get(k) == c.name for k in _POLICY_KEYS) or any(
                     p.partition.properties.get("storage_policy") == c.name for p in t.live_partitions()))]
        if users:
            raise Rejected(ErrorCode.WRONG_ARGUMENTS, f"Storage policy '{c.name}' is used by table "
                                                      f"{', '.join(sorted(users))}")
        return Decision(ev.StoragePolicyDropped(name=c.name), None)

    # -- routine load ----------------------------------------------------------------------------
    def _check_load(self, table_id: int, load: LoadProgress) -> None:
        """A batch commits only where the job's last one ended: a zombie task or a replayed batch
        is refused, so every source record lands once."""
        job = self.state.routine_loads.get(load.job)
        if job is None or job.table_id != table_id:
            raise Rejected(ErrorCode.CONFLICT, f"routine load {load.job} does not load table id {table_id}")
        conflict = job.conflict(load)
        if conflict is not None:
            raise Rejected(ErrorCode.CONFLICT, conflict)
        # A job loads with its creator's privileges, as of each commit (a REVOKE or DROP USER
        # after CREATE ROUTINE LOAD stops it), and never from Strata's own topics.
        db = self.state.databases.get(job.db_id)
        table = self.state.tables[table_id]
        refused = creator_refusal(job, db.name if db else "", table.name, self.state.users)
        if refused is not None:
            raise Rejected(ErrorCode.TABLE_ACCESS_DENIED, refused)
        bad_source = source_refusal(job.spec.topic, job.spec.user, self.state.users)
        if bad_source is not None:
            raise Rejected(*bad_source)

    def change_routine_load(self, c: cmd.ChangeRoutineLoad, ts: int) -> Decision:
        db_id = _database(self.state, c.db)
        job = self.state.routine_load(db_id, c.job)
        if c.spec is not None:
            if job is not None and job.state != "STOPPED":
                raise Rejected(ErrorCode.LABEL_ALREADY_EXISTS,
                               f"routine load job {c.job} already exists in database {c.db} ({job.state})")
            _live_table(self.state, c.table_id)
            bad_source = source_refusal(c.spec.topic, c.spec.user, self.state.users)
            if bad_source is not None:
                raise Rejected(*bad_source)
            event = ev.RoutineLoadChanged(db_id=db_id, job=c.job, job_id=self.state.next_ids["routine_load"],
                                          state=c.state, table_id=c.table_id, spec=c.spec, reason=c.reason)
            return Decision(event, c.table_id)
        if job is None:
            raise Rejected(ErrorCode.UNKNOWN_ERROR, f"routine load job {c.job} does not exist in database {c.db}")
        if c.from_states and job.state not in c.from_states:
            raise Rejected(ErrorCode.UNKNOWN_ERROR,
                           f"routine load job {c.job} is {job.state}; it can only be changed to {c.state} "
                           f"from {' or '.join(c.from_states)}")
        event = ev.RoutineLoadChanged(db_id=db_id, job=job.name, job_id=job.job_id, state=c.state,
                                      table_id=job.table_id, reason=c.reason)
        return Decision(event, job.table_id)

    def change_bulk_job(self, c: cmd.ChangeBulkJob, ts: int) -> Decision:
        """A label names one live job of its kind per database; a CANCELLED job's label may be used
        again (as in Doris). Each job changes only from the states its command names."""
        db_id = _database(self.state, c.db)
        job = self.state.bulk_job(c.kind, db_id, c.label)
        if c.spec:
            if job is not None and job.state != "CANCELLED":
                raise Rejected(ErrorCode.LABEL_ALREADY_EXISTS,
                               f"Label [{c.label}] has already been used by {c.kind.lower()} job {job.job_id} "
                               f"({job.state})")
            return Decision(ev.BulkJobChanged(kind=c.kind, db_id=db_id, label=c.label,
                                              job_id=self.state.next_ids.get("bulk_job", 1), state=c.state,
                                              spec=c.spec, progress=c.progress, info=c.info, error=c.error), None)
        if job is None or (c.job_id and job.job_id != c.job_id):
            raise Rejected(ErrorCode.UNKNOWN_ERROR, f"{c.kind.lower()} job with label '{c.label}' does not exist in "
                                                    f"database {c.db}")
        if c.from_states and job.state not in c.from_states:
            raise Rejected(ErrorCode.UNKNOWN_ERROR,
                           f"{c.kind.lower()} job '{c.label}' is {job.state}; it can only become {c.state} from "
                           f"{' or '.join(c.from_states)}")
        return Decision(ev.BulkJobChanged(kind=c.kind, db_id=db_id, label=c.label, job_id=job.job_id, state=c.state,
                                          progress=c.progress, info=c.info, error=c.error), None)

    # -- users -----------------------------------------------------------------------------------------
    def _user(self, name: str) -> UserRecord:
        found = self.state.users.get(name.lower())
        if found is None:
            raise Rejected(ErrorCode.UNKNOWN_ERROR, f"User '{name}'@'%' does not exist")
        return found

    def create_user(self, c: cmd.CreateUser, ts: int) -> Decision:
        if c.name.lower() == ROOT or c.name.lower() in self.state.users:
            raise Rejected(ErrorCode.CANNOT_USER, f"Operation CREATE USER failed for '{c.name}'@'%': the user exists")
        return Decision(ev.UserCreated(name=c.name, auth_string=c.auth_string,
                                       failed_login_attempts=c.failed_login_attempts,
                                       password_lock_time_s=c.password_lock_time_s), None)

    def alter_user(self, c: cmd.AlterUser, ts: int) -> Decision:
        user = self._user(c.name)
        return Decision(ev.UserAltered(name=user.name, failed_login_attempts=c.failed_login_attempts,
                                       password_lock_time_s=c.password_lock_time_s,
                                       max_user_connections=c.max_user_connections, query_timeout_s=c.query_timeout_s,
                                       insert_timeout_s=c.insert_timeout_s, unlock=c.unlock), None)

    def drop_user(self, c: cmd.DropUser, ts: int) -> Decision:
        self._user(c.name)
        return Decision(ev.UserDropped(name=c.name), None)

    def set_password(self, c: cmd.SetPassword, ts: int) -> Decision:
        self._user(c.name)
        return Decision(ev.PasswordSet(name=c.name, auth_string=c.auth_string), None)

    def change_grants(self, c: cmd.ChangeGrants, ts: int) -> Decision:
        user = self._user(c.name)
        held = set(user.grants.get(scope_key(c.db, c.table), []))
        changed = held - set(c.privileges) if c.revoke else held | set(c.privileges)
        ordered = tuple(p for p in PRIVILEGES if p in changed)
        return Decision(ev.GrantsChanged(name=user.name, db=c.db, table=c.table, privileges=ordered), None)
