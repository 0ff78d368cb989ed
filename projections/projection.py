"""The fold of `strata.events` into one projection: catalog, version index, rowset manifests.

`apply` is a pure function of (state, event): no wall clock, no randomness, so replaying the log
from offset 0 rebuilds the same bytes. The catalog (databases, tables, partitions, schemas) is
small and lives in memory as well as in RocksDB; per-commit facts (versions, rowsets, deletes,
history, labels) live only in RocksDB.

The in-memory catalog is copy-on-write. Statements read `tables` and `databases`, and the states in
them, on their own threads without the lock while the follower folds: a `TableState` (with its
partitions, schemas and properties), `PartitionState` or `DatabaseState` once published is never
changed again. An event's handler changes a draft (`_table`, `_partition`: copies one level deep,
a partition only when it changes) and `apply` publishes the drafts once the handler is done, by
replacing the dict's value (its size unchanged, so an iteration under way goes on); adding or
removing an entry swaps in a new dict. A handler that fails publishes nothing. Inside `batch` (the
follower's batches) the drafts of data commits live on from one event to the next and are published
at the batch's end: a run of commits to a table copies it once, not once per commit.
"""

from __future__ import annotations

import json
import logging
import shutil
import threading
from collections.abc import Callable, Iterable, Iterator, Mapping
from contextlib import contextmanager
from pathlib import Path
from typing import Any, Literal, TypeVar

from projections import decided, keys
from projections.bulk_jobs import PREFIX as BULK_JOB_PREFIX
from projections.bulk_jobs import BulkJob, bulk_job_key
from projections.catalog_names import CatalogNames
from projections.routine_loads import RoutineLoadJob, job_key
from projections.state import (
    CommitRecord,
    DatabaseState,
    DeleteBitmapRecord,
    DeleteRecord,
    LabelRecord,
    MoveRecord,
    NameTakeover,
    PartitionState,
    PreparedLoad,
    RowsetRecord,
    SchemaAt,
    TableState,
    TagState,
    ViewState,
    draft_of,
    record_bytes,
)
from projections.store import ProjectionStore
from projections.users import UserRecord, scope_key
from schemas import events as ev
from schemas.envelope import EventEnvelope
from schemas.model import LoadProgress, NewRowset, Rowset

log = logging.getLogger(__name__)
_S = TypeVar("_S")
NAMED_KINDS = ("resource", "storage_policy")
ROUTINE_LOAD_PREFIX = b"rl/"
USER_PREFIX = b"usr/"
VIEW_PREFIX = b"vw/"
# Bump when the key layout or a stored value's shape changes: a projection written in another
# format is rebuilt from the log (the truth) instead of being misread.
FORMAT_VERSION = b"13"  # 8: views (vw/), name takeovers, AUTO PARTITION, AUTO_INCREMENT, sequence columns;
#                         9: tags and the recycled-through instant on TableState; 10: file holders (fh/);
#                         11: the stale-rowset index (sx/); 12: delete bitmaps (mb/);
#                         13: the version-keeping rowset index (kv/)
FORMAT_KEY = b"m/format"
# Events that change only a table's data or where it lies, never what a statement's names resolve
# to, its columns' types or who may read it: they leave `catalog_generation` alone. Every other kind,
# a new one included, counts as a catalog change.
_DATA_ONLY_EVENTS: tuple[type[ev.Event], ...] = (
    ev.RowsetsCommitted, ev.DeleteCommitted, ev.CompactionCommitted, ev.RowsetsMoved, ev.RowsetsRecycled,
    ev.RoutineLoadProgressed, ev.BulkJobChanged, ev.CommandRejected, ev.LoadPrepared, ev.LoadAborted,
    ev.DeleteBitmapsCommitted)
_DATA_ONLY: dict[type, bool] = {}
# Kinds whose handlers reach the catalog only through `Projection._table`/`_partition` drafts and
# change only data (a subset of `_DATA_ONLY_EVENTS`): inside `Projection.batch` their drafts are kept
# from one event to the next.
_DRAFT_KEEPING_EVENTS: frozenset[type[ev.Event]] = frozenset({
    ev.RowsetsCommitted, ev.DeleteCommitted, ev.CompactionCommitted, ev.RowsetsMoved, ev.LoadPrepared,
    ev.LoadAborted})




def _keeping_key(table_id: int, rowset: Rowset) -> bytes:
    return keys.keeping_key(table_id, rowset.partition_id, rowset.bucket, rowset.start_version, rowset.end_version,
                            rowset.rowset_id)


# The catalog's containers that events change in place (the SQL server's login check holds `users`):
# `abandon` refills them in place. `databases` and `tables` are not among them: events replace those
# (copy-on-write), so a reader iterating one it took never sees it change.
_IN_PLACE_CONTAINERS = ("named", "routine_loads", "bulk_jobs", "users", "views", "next_ids", "commands_position")


def _present(ids: Iterable[int], states: Mapping[int, _S]) -> Iterator[_S]:
    """The states the name index's ids still name in the live dict (each lookup then checks the name)."""
    for found in map(states.get, ids):
        if found is not None:
            yield found


def _open_store(path: Path, *, read_only: bool = False, scratch: bool = False) -> ProjectionStore:
    """A projection's RocksDB, with the floors of the indexes its fold trims from the front."""
    return ProjectionStore(path, read_only=read_only, scratch=scratch, front_trimmed=keys.FRONT_TRIMMED)


class Projection:
    def __init__(self, path: Path, *, read_only: bool = False, scratch: bool = False) -> None:
        """`scratch`: written without RocksDB's write-ahead log, for a projection rebuilt from
        offset 0 if it is lost (see `ProjectionStore`)."""
        self.store = _open_store(path, read_only=read_only, scratch=scratch)
        if not read_only and self.store.get(FORMAT_KEY) != FORMAT_VERSION:
            self._rebuild(path)
        # Held while a batch is folded and flushed, and by readers resolving a snapshot, so a
        # reader never sees half of an event.
        self.lock = threading.RLock()
        # Counts catalog changes folded by this process (see `_DATA_ONLY_EVENTS`), so a cache of
        # something derived from the catalog (a prepared SELECT's columns, query.server) knows it is
        # stale by comparing one number. In memory only: not part of the fold's bytes or checksum.
        self.catalog_generation = 0
        self._name_index: CatalogNames | None = None  # catalog lookups by name (`_names`)
        # Per table, how many entries the fold wrote into its stale-rowset indexes since this process
        # opened the projection (in memory, not part of the fold's bytes): the recycler looks at a table
        # again only when this moved, or when its last look left stale rowsets (streams.recycler).
        self.stale_writes: dict[int, int] = {}
        # Counts every event folded by this process, data-only ones included: what a snapshot cache
        # (projections.snapshot_cache) compares to know a resolved snapshot still stands. In memory only.
        self.generation = 0
        # The newest commit time folded: what `decided` forgets against at flush; and its value then.
        self._newest_ts_ms = 0
        self._newest_at_flush = 0
        # Inside `batch`: drafts of `_DRAFT_KEEPING_EVENTS` outlive their event (see `batch`).
        self._batching = False
        self._load_state()
        self._handlers: dict[type[ev.Event], Callable[[Any, int], None]] = {
            ev.DatabaseCreated: self._database_created,
            ev.DatabaseDropped: self._database_dropped,
            ev.TableCreated: self._table_created,
            ev.TableCloned: self._table_cloned,
            ev.TableDropped: self._table_dropped,
            ev.ViewCreated: self._view_created,
            ev.ViewAltered: self._view_altered,
            ev.ViewDropped: self._view_dropped,
            ev.TableRecovered: self._table_recovered,
            ev.TablePropertiesChanged: self._table_properties_changed,
            ev.SchemaChanged: self._schema_changed,
            ev.TableRenamed: self._table_renamed,
            ev.TableReplaced: self._table_replaced,
            ev.PartitionAdded: self._partition_added,
            ev.PartitionDropped: self._partition_dropped,
            ev.PartitionPropertiesChanged: self._partition_properties_changed,
            ev.RowsetsCommitted: self._rowsets_committed,
            ev.LoadPrepared: self._load_prepared,
            ev.LoadAborted: self._load_aborted,
            ev.AutoIncrementAllocated: self._auto_increment_allocated,
            ev.DeleteCommitted: self._delete_committed,
            ev.CompactionCommitted: self._compaction_committed,
            ev.DeleteBitmapsCommitted: self._delete_bitmaps_committed,
            ev.TableRestored: self._table_restored,
            ev.TableOverwritten: self._table_overwritten,
            ev.RowsetsMoved: self._rowsets_moved,
            ev.RowsetsRecycled: self._rowsets_recycled,
            ev.TagCreated: self._tag_created,
            ev.TagDropped: self._tag_dropped,
            ev.ResourceCreated: self._named_put("resource"),
            ev.ResourceAltered: self._named_merge("resource"),
            ev.ResourceDropped: self._named_drop("resource"),
            ev.StoragePolicyCreated: self._named_put("storage_policy"),
            ev.StoragePolicyAltered: self._named_merge("storage_policy"),
            ev.StoragePolicyDropped: self._named_drop("storage_policy"),
            ev.RoutineLoadChanged: self._routine_load_changed,
            ev.RoutineLoadProgressed: self._routine_load_progressed,
            ev.BulkJobChanged: self._bulk_job_changed,
            ev.UserCreated: self._user_created,
            ev.UserDropped: self._user_dropped,
            ev.PasswordSet: self._password_set,
            ev.GrantsChanged: self._grants_changed,
            ev.UserAltered: self._user_altered,
        }

    # -- lifecycle -------------------------------------------------------------------------------
    def _load_state(self) -> None:
        """The catalog and positions in memory, as the store's committed state has them."""
        self.databases: dict[int, DatabaseState] = {}
        self.tables: dict[int, TableState] = {}
        self.named: dict[str, dict[str, dict[str, Any]]] = {kind: {} for kind in NAMED_KINDS}
        self.routine_loads: dict[str, RoutineLoadJob] = {}
        self.bulk_jobs: dict[str, BulkJob] = {}  # the latest job of each (kind, database, label)
        self.users: dict[str, UserRecord] = {}
        self.views: dict[int, ViewState] = {}
        self.next_ids = {"db": 1, "table": 1, "partition": 1, "routine_load": 1, "bulk_job": 1}
        self.commands_position: dict[int, int] = {}
        self._dirty_tables: set[int] = set()
        # Tables the events being applied change, published by `apply` (see the module's doc) or,
        # inside `batch`, by `publish`.
        self._drafts: dict[int, TableState] = {}
        self._dirty_dbs: set[int] = set()
        self._offsets = self.store.offsets()
        self._load()

    def _load(self) -> None:
        for _, raw in self.store.scan(keys.DB):
            db = DatabaseState.model_validate_json(raw)
            self.databases[db.db_id] = db
        for _, raw in self.store.scan(keys.TABLE):
            table = TableState.model_validate_json(raw)
            self.tables[table.table_id] = table
        counters = self.store.get(keys.COUNTERS)
        if counters:
            self.next_ids.update(json.loads(counters))
        position = self.store.get(keys.COMMANDS_POSITION)
        if position:
            self.commands_position = {int(p): int(o) for p, o in json.loads(position).items()}
        for kind in NAMED_KINDS:
            prefix = f"n/{kind}/".encode()
            for key, raw in self.store.scan(prefix):
                self.named[kind][key[len(prefix):].decode()] = json.loads(raw)
        for _, raw in self.store.scan(ROUTINE_LOAD_PREFIX):
            job = RoutineLoadJob.model_validate_json(raw)
            self.routine_loads[job.key] = job
        for _, raw in self.store.scan(BULK_JOB_PREFIX):
            bulk = BulkJob.model_validate_json(raw)
            self.bulk_jobs[bulk.key] = bulk
        for _, raw in self.store.scan(VIEW_PREFIX):
            view = ViewState.model_validate_json(raw)
            self.views[view.view_id] = view
        for _, raw in self.store.scan(USER_PREFIX):
            user = UserRecord.model_validate_json(raw)
            self.users[user.name.lower()] = user

    def _rebuild(self, path: Path) -> None:
        if next(iter(self.store.scan(b"")), None) is not None:
            log.warning("projection %s is in another format; rebuilding it from the log", path)
            self.store.close()
            shutil.rmtree(path)
            self.store = _open_store(path, scratch=self.store.scratch)
        self.store.put(FORMAT_KEY, FORMAT_VERSION)
        self.store.commit({})

    def offsets(self) -> dict[tuple[str, int], int]:
        """The next offset to apply, per (topic, partition)."""
        return dict(self._offsets)

    def apply(self, envelope: EventEnvelope, topic: str, partition: int, offset: int) -> None:
        """Folds one event in; its effects become durable (and readable in RocksDB) at `flush`.

        Outside `batch`, the tables it changes are published before it returns; a handler that
        fails publishes nothing. Inside, see `batch`."""
        payload = envelope.payload
        kind = type(payload)
        handler = self._handlers.get(kind)
        if handler is not None:
            if self._batching and kind in _DRAFT_KEEPING_EVENTS:
                # Its drafts stay for the batch's next events; `batch` publishes them, or its caller
                # `abandon`s the batch if this raises (the drafts may hold half of this event).
                handler(payload, envelope.commit_ts_ms)
            else:
                # Read the catalog as published, with the batch's earlier events in it.
                self.publish()
                try:
                    handler(payload, envelope.commit_ts_ms)
                    self.publish()
                finally:
                    self._drafts.clear()
        # After the change is in place, never before: a reader that saw the old number and then the
        # new state caches it under the old number (recomputed next time); the other order would let
        # it cache the old state under the new number for good. (The kinds whose drafts a batch
        # keeps are data-only: they never count, so no number runs ahead of a draft not yet published.)
        data_only = _DATA_ONLY.get(kind)
        if data_only is None:
            data_only = _DATA_ONLY[kind] = issubclass(kind, _DATA_ONLY_EVENTS)
        if not data_only:
            self.catalog_generation += 1
        self.generation += 1
        if envelope.commands_position:
            self.commands_position.update(envelope.commands_position)
        decided.remember(self.store, envelope)
        if envelope.commit_ts_ms > self._newest_ts_ms:
            self._newest_ts_ms = envelope.commit_ts_ms
        if offset >= 0:  # the sequencer folds before it knows the offset, and advances after commit
            self._offsets[(topic, partition)] = offset + 1

    def publish(self) -> None:
        """Makes the drafts of the events applied so far the published tables (see the module's doc)."""
        if self._drafts:
            for table_id, draft in self._drafts.items():
                self.tables[table_id] = draft
            self._drafts.clear()

    @contextmanager
    def batch(self) -> Iterator[None]:
        """Applies the events of a batch (the follower's) with the drafts of `_DRAFT_KEEPING_EVENTS`
        kept from one event to the next: a run of commits to one table copies it (and a partition)
        once, not once per event, and publishes it once at the end. Events of other kinds run as
        outside a batch, after the earlier events' drafts are published.

        Readers see the tables as the batch leaves them once it ends (its RocksDB records at `flush`),
        never a draft being changed. If an event raises, the drafts may hold part of it, so the caller
        must `abandon` what was folded since the last flush (and fold the batch again event by event,
        outside `batch`, to skip that event whole, as `apply` alone does)."""
        self._batching = True
        try:
            yield
            self.publish()
        finally:
            self._batching = False

    def abandon(self) -> None:
        """Forgets everything folded since the last flush — the store's pending writes, the drafts and
        the catalog in memory, read again from the store's committed state, as a restart would."""
        self.store.discard()
        # Read back into the same in-place containers: whoever holds one must see the catalog as folded
        # from here on, not a copy left behind. `tables` and `databases` are new dicts, as after any event.
        kept = {name: getattr(self, name) for name in _IN_PLACE_CONTAINERS}
        self._load_state()
        for name, container in kept.items():
            container.clear()
            container.update(getattr(self, name))
            setattr(self, name, container)
        self._newest_ts_ms = self._newest_at_flush
        # The catalog objects are new ones (with the same state): caches derived from them recompute.
        self.catalog_generation += 1
        self.generation += 1

    def advance(self, topic: str, partition: int, offset: int) -> None:
        """Moves the tracking position past a record without an effect (e.g. one we could not decode)."""
        self._offsets[(topic, partition)] = offset + 1

    def flush(self) -> None:
        self.publish()
        for table_id in self._dirty_tables:
            table = self.tables.get(table_id)
            if table is None:
                self.store.delete(keys.table_key(table_id))
            else:
                self.store.put(keys.table_key(table_id), record_bytes(table))
        for db_id in self._dirty_dbs:
            self.store.put(keys.db_key(db_id), record_bytes(self.databases[db_id]))
        self.store.put(keys.COUNTERS, json.dumps(self.next_ids, sort_keys=True).encode())
        if self.commands_position:
            self.store.put(keys.COMMANDS_POSITION, json.dumps(self.commands_position, sort_keys=True).encode())
        if self._newest_ts_ms:
            decided.forget_before(self.store, self._newest_ts_ms)
        self.store.commit(self._offsets)
        self._newest_at_flush = self._newest_ts_ms
        self._dirty_tables.clear()
        self._dirty_dbs.clear()

    def close(self) -> None:
        self.store.close()

    # -- catalog lookups -------------------------------------------------------------------------
    def _names(self) -> CatalogNames:
        """The name index (projections.catalog_names), rebuilt when its stamp moved."""
        generation = self.catalog_generation  # first: see the module's doc
        databases, tables, views = self.databases, self.tables, self.views
        stamp = (generation, id(databases), len(databases), id(tables), len(tables), id(views), len(views))
        names = self._name_index
        if names is None or names.stamp != stamp:
            names = self._name_index = CatalogNames.of(stamp, databases, tables, views)
        return names

    def database_by_name(self, name: str, *, include_dropped: bool = False) -> DatabaseState | None:
        lowered = name.lower()
        found = [d for d in _present(self._names().databases.get(lowered, ()), self.databases)
                 if d.name.lower() == lowered and (include_dropped or d.dropped_ts_ms is None)]
        return max(found, key=lambda d: d.db_id) if found else None

    def table_by_name(self, db_id: int, name: str, *, dropped: bool = False) -> TableState | None:
        lowered = name.lower()
        found = [t for t in _present(self._names().tables.get((db_id, lowered), ()), self.tables)
                 if t.db_id == db_id and t.name.lower() == lowered and ((t.dropped_ts_ms is not None) == dropped)]
        return max(found, key=lambda t: t.table_id) if found else None

    def view_by_name(self, db_id: int, name: str) -> ViewState | None:
        lowered = name.lower()
        return next((v for v in _present(self._names().views.get((db_id, lowered), ()), self.views)
                     if v.db_id == db_id and v.name.lower() == lowered), None)

    def views_of(self, db_id: int) -> list[ViewState]:
        return sorted((v for v in _present(self._names().views_of.get(db_id, ()), self.views) if v.db_id == db_id),
                      key=lambda v: v.name)

    def tables_of(self, db_id: int) -> list[TableState]:
        return sorted((t for t in _present(self._names().tables_of.get(db_id, ()), self.tables)
                       if t.db_id == db_id and t.dropped_ts_ms is None), key=lambda t: t.name)

    def command_outcome(self, command_id: str) -> decided.Outcome | None:
        """The first answer the log gave this command, if it is still remembered (projections.decided)."""
        return decided.outcome(self.store, command_id)

    def prepared_load(self, txn_id: int) -> PreparedLoad | None:
        raw = self.store.get(keys.prepared_load_key(txn_id))
        return PreparedLoad.model_validate_json(raw) if raw else None

    def prepared_rowset(self, rowset_id: str) -> NewRowset | None:
        """A rowset of a load still prepared (its files must stay until the load is finished)."""
        raw = self.store.get(keys.prepared_rowset_key(rowset_id))
        return NewRowset.model_validate_json(raw) if raw else None

    def prepared_label(self, table_id: int, label: str) -> PreparedLoad | None:
        """The load still prepared under `label` on the table, if any."""
        raw = self.store.get(keys.prepared_label_key(table_id, label))
        return self.prepared_load(int(raw)) if raw else None

    def prepared_loads(self) -> list[PreparedLoad]:
        """Every load still prepared (neither committed nor aborted)."""
        found = (self.prepared_load(int(raw)) for _, raw in self.store.scan(keys.PREPARED_LABEL))
        return [p for p in found if p is not None]

    def label(self, table_id: int, label: str) -> LabelRecord | None:
        raw = self.store.get(keys.label_key(table_id, label))
        return LabelRecord.model_validate_json(raw) if raw else None

    def rowset_records(self, table_id: int, partition_id: int | None = None) -> Iterator[RowsetRecord]:
        for _, raw in self.store.scan(keys.rowset_prefix(table_id, partition_id)):
            yield RowsetRecord.model_validate_json(raw)

    def rowset_record(self, rowset_id: str) -> RowsetRecord | None:
        key = self.store.get(keys.rowset_locator_key(rowset_id))
        raw = self.store.get(key) if key else None
        return RowsetRecord.model_validate_json(raw) if raw else None

    def stale_records(self, table_id: int, through_ts_ms: int, *, by_keeping: bool = False) -> Iterator[RowsetRecord]:
        """The table's stale rowset records that went stale at or before `through_ts_ms`, oldest
        first, through the stale-rowset index: no live record is read. `by_keeping`: those a
        version-keeping compaction replaced (`RowsetRecord.replaced_by_keeping`) instead of the others."""
        prefix = keys.keeping_stale_prefix(table_id) if by_keeping else keys.stale_prefix(table_id)
        for key, rowset_key in self.store.scan(prefix):
            if keys.stale_ts_of(key, prefix) > through_ts_ms:
                return
            raw = self.store.get(rowset_key)
            if raw:
                yield RowsetRecord.model_validate_json(raw)

    def has_stale(self, table_id: int) -> bool:
        """Whether the table has any stale rowset record (due or not): one bounded seek per index."""
        return any(next(self.store.scan(prefix), None) is not None
                   for prefix in (keys.stale_prefix(table_id), keys.keeping_stale_prefix(table_id)))

    def dropped_tables(self) -> list[TableState]:
        """The dropped tables not yet purged (through the name index: no walk of the catalog)."""
        return [t for t in _present(self._names().dropped, self.tables) if t.dropped_ts_ms is not None]

    def file_holders(self, file_rowset_id: str) -> list[str]:
        """The rowsets, of any table, whose records name the file of rowset `file_rowset_id` (its own
        record while it lives, and every clone's): the file may go only once none is left."""
        prefix = keys.file_holder_prefix(file_rowset_id)
        return [key[len(prefix):].decode() for key, _ in self.store.scan(prefix)]

    def shared(self, table_id: int, rowset: Rowset) -> bool:
        """Whether another rowset record (a clone's, or a clone's source's) names `rowset`'s file."""
        return len(self.file_holders(rowset.file_ids(table_id)[2])) > 1

    def deletes(self, table_id: int, partition_id: int) -> list[DeleteRecord]:
        return [DeleteRecord.model_validate_json(raw)
                for _, raw in self.store.scan(keys.delete_prefix(table_id, partition_id))]

    def delete_bitmaps(self, table_id: int, partition_id: int, above: int, through: int) -> list[DeleteBitmapRecord]:
        """A merge-on-write partition's delete bitmaps of the versions in (`above`, `through`], by version."""
        prefix = keys.bitmap_prefix(table_id, partition_id)
        found = []
        for key, raw in self.store.scan(prefix, start=keys.bitmap_key(table_id, partition_id, above + 1)):
            if int(key[len(prefix):]) > through:
                break
            found.append(DeleteBitmapRecord.model_validate_json(raw))
        return found

    def commits(self, table_id: int) -> list[CommitRecord]:
        return [CommitRecord.model_validate_json(raw) for _, raw in self.store.scan(keys.commit_prefix(table_id))]

    def moves(self, table_id: int) -> list[MoveRecord]:
        """The table's tier moves, oldest first."""
        return [MoveRecord.model_validate_json(raw) for _, raw in self.store.scan(keys.move_prefix(table_id))]

    def commit(self, table_id: int, commit_number: int) -> CommitRecord | None:
        raw = self.store.get(keys.commit_key(table_id, commit_number))
        return CommitRecord.model_validate_json(raw) if raw else None

    def version_at(self, table_id: int, partition_id: int, ts_ms: int) -> int:
        """The version of a partition visible at `ts_ms` (0: none yet) — one seek."""
        found = self.store.seek_for_prev(keys.version_key(table_id, partition_id, ts_ms),
                                         keys.version_prefix(table_id, partition_id))
        return int(found[1]) if found else 0

    # -- helpers for handlers ----------------------------------------------------------------------
    def _table(self, table_id: int) -> TableState:
        """The table as the event being applied may change it: a draft of the published one, whose
        partitions, schemas and properties are the draft's own (their elements still shared)."""
        self._dirty_tables.add(table_id)
        draft = self._drafts.get(table_id)
        if draft is None:
            table = self.tables[table_id]
            draft = self._drafts[table_id] = draft_of(table, {
                "partitions": dict(table.partitions), "schemas": list(table.schemas),
                "properties": dict(table.properties), "name_takeovers": list(table.name_takeovers),
                "tags": dict(table.tags)})
        return draft

    def _partition(self, draft: TableState, partition_id: int) -> PartitionState:
        """A partition of a draft table that may be changed: copied the first time, while it is still
        the published table's."""
        partition = draft.partitions[partition_id]
        published = self.tables.get(draft.table_id)
        if published is not None and published.partitions.get(partition_id) is partition:
            partition = draft.partitions[partition_id] = draft_of(partition, {"masks": list(partition.masks)})
        return partition

    def _record_commit(self, table: TableState, ts: int, kind: str, *, partition_versions: dict[int, int]
                       | None = None, rows_added: int = 0, rows_removed: int = 0, description: str = "") -> int:
        table.commit_number += 1
        table.last_commit_ts_ms = ts
        if table.first_commit_ts_ms is None:
            table.first_commit_ts_ms = ts
        record = CommitRecord(commit_number=table.commit_number, ts_ms=ts, kind=kind,
                              partition_versions=partition_versions or {}, rows_added=rows_added,
                              rows_removed=rows_removed, description=description)
        self.store.put(keys.commit_key(table.table_id, table.commit_number), record_bytes(record))
        return table.commit_number

    def _bump_versions(self, table: TableState, partition_versions: dict[int, int], ts: int) -> None:
        for pid, version in partition_versions.items():
            self._partition(table, pid).version = version
            self.store.put(keys.version_key(table.table_id, pid, ts), str(version).encode())

    def _put_rowset(self, table_id: int, record: RowsetRecord) -> None:
        rs = record.rowset
        key = keys.rowset_key(table_id, rs.partition_id, rs.bucket, rs.start_version, rs.end_version, rs.rowset_id)
        self.store.put(key, record_bytes(record))
        self.store.put(keys.rowset_locator_key(rs.rowset_id), key)
        self.store.put(keys.file_holder_key(rs.file_ids(table_id)[2], rs.rowset_id), b"")
        if record.stale_ts_ms is not None:
            self.store.put(keys.stale_key(table_id, record.stale_ts_ms, rs.rowset_id,
                                          by_keeping=record.replaced_by_keeping), key)
            self.stale_writes[table_id] = self.stale_writes.get(table_id, 0) + 1
        if rs.keeps_versions:
            self.store.put(_keeping_key(table_id, rs), key)

    def _set_stale(self, table_id: int, record: RowsetRecord, stale_ts_ms: int | None, *,
                   by_keeping: bool = False) -> None:
        """Marks a rowset stale since `stale_ts_ms` (None: live again), its stale-index entry with it;
        `by_keeping`: replaced by a version-keeping compaction."""
        self._unindex_stale(table_id, record)
        self._put_rowset(table_id, record.model_copy(update={"stale_ts_ms": stale_ts_ms,
                                                             "replaced_by_keeping": by_keeping}))

    def _unindex_stale(self, table_id: int, record: RowsetRecord) -> None:
        if record.stale_ts_ms is not None:
            self.store.delete(keys.stale_key(table_id, record.stale_ts_ms, record.rowset.rowset_id,
                                             by_keeping=record.replaced_by_keeping))

    def _forget_rowset(self, table_id: int, rowset: Rowset) -> None:
        """Drops a rowset's record and its hold on its file (the record's key is the caller's)."""
        self.store.delete(keys.rowset_locator_key(rowset.rowset_id))
        self.store.delete(keys.file_holder_key(rowset.file_ids(table_id)[2], rowset.rowset_id))
        if rowset.keeps_versions:
            self.store.delete(_keeping_key(table_id, rowset))

    # -- handlers ------------------------------------------------------------------------------------
    def _database_created(self, e: ev.DatabaseCreated, ts: int) -> None:
        self.databases = {**self.databases, e.db_id: DatabaseState(db_id=e.db_id, name=e.name, created_ts_ms=ts)}
        self._dirty_dbs.add(e.db_id)
        self.next_ids["db"] = max(self.next_ids["db"], e.db_id + 1)

    def _database_dropped(self, e: ev.DatabaseDropped, ts: int) -> None:
        self.databases[e.db_id] = self.databases[e.db_id].model_copy(update={"dropped_ts_ms": ts})
        self._dirty_dbs.add(e.db_id)
        for table in self.tables.values():
            if table.db_id == e.db_id and table.dropped_ts_ms is None:
                self._table(table.table_id).dropped_ts_ms = ts
        self._stop_jobs(lambda job: job.db_id == e.db_id, f"database {e.name} was dropped", ts)
        for view in [v for v in self.views.values() if v.db_id == e.db_id]:
            self._view_dropped(ev.ViewDropped(view_id=view.view_id), ts)

    def _table_created(self, e: ev.TableCreated, ts: int) -> None:
        created = TableState(
            table_id=e.table_id, db_id=e.db_id, name=e.name, keys_model=e.keys_model,
            partition_kind=e.partition_kind, partition_columns=e.partition_columns,
            distribution=e.distribution, properties=dict(e.properties), comment=e.comment,
            schemas=[SchemaAt(ts_ms=ts, table_schema=e.table_schema)],
            partitions={p.partition_id: PartitionState(partition=p, created_ts_ms=ts) for p in e.partitions},
            next_column_id=e.next_column_id, created_ts_ms=ts, last_commit_ts_ms=ts,
            time_travel_since_ts_ms=ts if e.properties.get("enable_time_travel") == "true" else None,
            auto_partition=e.auto_partition)
        self.tables = {**self.tables, e.table_id: created}
        self._dirty_tables.add(e.table_id)
        self.next_ids["table"] = max(self.next_ids["table"], e.table_id + 1)
        for p in e.partitions:
            self.next_ids["partition"] = max(self.next_ids["partition"], p.partition_id + 1)

    def _table_cloned(self, e: ev.TableCloned, ts: int) -> None:
        """A clone: its own table, whose first commit is the source's snapshot. Its history starts
        here (every schema it has is in force from now on; older ones only project older files)."""
        self._table_created(ev.TableCreated(
            db_id=e.db_id, table_id=e.table_id, name=e.name, keys_model=e.keys_model, table_schema=e.schemas[0],
            partition_kind=e.partition_kind, partition_columns=e.partition_columns, partitions=e.partitions,
            distribution=e.distribution, properties=e.properties, comment=e.comment,
            next_column_id=e.next_column_id, auto_partition=e.auto_partition), ts)
        table = self._table(e.table_id)
        table.schemas = [SchemaAt(ts_ms=ts, table_schema=schema) for schema in e.schemas]
        table.auto_increment_next = e.auto_increment_next
        self._bump_versions(table, e.partition_versions, ts)
        for rowset in e.rowsets:
            self._put_rowset(e.table_id, RowsetRecord(rowset=rowset))
        for delete in e.deletes:
            record = DeleteRecord(partition_id=delete.partition_id, version=delete.version,
                                  predicate=delete.predicate, ts_ms=ts)
            self.store.put(keys.delete_key(e.table_id, delete.partition_id, delete.version), record_bytes(record))
        self._record_commit(table, ts, "clone", partition_versions=e.partition_versions,
                            rows_added=sum(r.num_rows for r in e.rowsets), description=e.description)

    def _view_key(self, view_id: int) -> bytes:
        return VIEW_PREFIX + f"{view_id:010d}".encode()

    def _view_created(self, e: ev.ViewCreated, ts: int) -> None:
        view = ViewState(view_id=e.view_id, db_id=e.db_id, name=e.name, definition=e.definition, columns=e.columns,
                         comment=e.comment, created_ts_ms=ts, altered_ts_ms=ts)
        self.views[e.view_id] = view
        self.store.put(self._view_key(e.view_id), record_bytes(view))
        self.next_ids["table"] = max(self.next_ids["table"], e.view_id + 1)  # one id sequence with tables

    def _view_altered(self, e: ev.ViewAltered, ts: int) -> None:
        view = self.views[e.view_id]
        view.definition, view.columns, view.altered_ts_ms = e.definition, e.columns, ts
        if e.comment is not None:
            view.comment = e.comment
        self.store.put(self._view_key(e.view_id), record_bytes(view))

    def _view_dropped(self, e: ev.ViewDropped, ts: int) -> None:
        self.views.pop(e.view_id, None)
        self.store.delete(self._view_key(e.view_id))

    def _table_dropped(self, e: ev.TableDropped, ts: int) -> None:
        self._stop_jobs(lambda job: job.table_id == e.table_id, f"table id {e.table_id} was dropped", ts)
        if e.force:
            self._purge(e.table_id)
        else:
            self._table(e.table_id).dropped_ts_ms = ts

    def _purge(self, table_id: int) -> None:
        """Forgets a table and its whole history; its files, no longer named, go to the orphan sweep."""
        self.tables = {i: t for i, t in self.tables.items() if i != table_id}
        self._drafts.pop(table_id, None)
        self._dirty_tables.add(table_id)
        for _, raw in list(self.store.scan(keys.rowset_prefix(table_id))):
            self._forget_rowset(table_id, RowsetRecord.model_validate_json(raw).rowset)
        for prefix in keys.table_prefixes(table_id):
            for key, _ in list(self.store.scan(prefix)):
                self.store.delete(key)

    def _table_recovered(self, e: ev.TableRecovered, ts: int) -> None:
        self._table(e.table_id).dropped_ts_ms = None

    def _table_properties_changed(self, e: ev.TablePropertiesChanged, ts: int) -> None:
        table = self._table(e.table_id)
        if "enable_time_travel" in e.changes:
            enabled = e.changes["enable_time_travel"] == "true"
            if not enabled:
                table.time_travel_since_ts_ms = None
            elif table.time_travel_since_ts_ms is None:
                table.time_travel_since_ts_ms = ts
        for key, value in e.changes.items():
            if value is None:
                table.properties.pop(key, None)
            else:
                table.properties[key] = value
        table.last_commit_ts_ms = ts

    def _schema_changed(self, e: ev.SchemaChanged, ts: int) -> None:
        table = self._table(e.table_id)
        table.schemas.append(SchemaAt(ts_ms=ts, table_schema=e.table_schema))
        table.next_column_id = e.next_column_id
        self._record_commit(table, ts, "schema_change", description=e.description)

    def _auto_increment_allocated(self, e: ev.AutoIncrementAllocated, ts: int) -> None:
        table = self._table(e.table_id)
        table.auto_increment_next = e.start + e.count
        table.last_commit_ts_ms = ts

    def _table_renamed(self, e: ev.TableRenamed, ts: int) -> None:
        self._table(e.table_id).name = e.name

    def _table_replaced(self, e: ev.TableReplaced, ts: int) -> None:
        replaced, replacing = self._table(e.table_id), self._table(e.with_table_id)
        replaced_name, replacing_name = replaced.name, replacing.name
        replacing.name = replaced_name
        replacing.name_takeovers.append(NameTakeover(ts_ms=ts, previous_table_id=replaced.table_id))
        if e.swap:
            replaced.name = replacing_name
            replaced.name_takeovers.append(NameTakeover(ts_ms=ts, previous_table_id=replacing.table_id))
        else:
            self._stop_jobs(lambda job: job.table_id == e.table_id, f"table {replaced_name} was replaced", ts)
            replaced.dropped_ts_ms = ts

    def _partition_added(self, e: ev.PartitionAdded, ts: int) -> None:
        table = self._table(e.table_id)
        table.partitions[e.partition.partition_id] = PartitionState(partition=e.partition, created_ts_ms=ts)
        self.next_ids["partition"] = max(self.next_ids["partition"], e.partition.partition_id + 1)
        self._record_commit(table, ts, "add_partition", description=f"ADD PARTITION {e.partition.name}")

    def _partition_dropped(self, e: ev.PartitionDropped, ts: int) -> None:
        table = self._table(e.table_id)
        partition = self._partition(table, e.partition_id)
        partition.dropped_ts_ms = ts
        self._record_commit(table, ts, "drop_partition", description=f"DROP PARTITION {partition.name}")

    def _partition_properties_changed(self, e: ev.PartitionPropertiesChanged, ts: int) -> None:
        table = self._table(e.table_id)
        for pid in e.partition_ids:
            state = self._partition(table, pid)
            props = dict(state.partition.properties)
            for key, value in e.changes.items():
                if value is None:
                    props.pop(key, None)
                else:
                    props[key] = value
            state.partition = state.partition.model_copy(update={"properties": props})

    def _rowsets_committed(self, e: ev.RowsetsCommitted, ts: int) -> None:
        table = self._table(e.table_id)
        for partition in e.new_partitions:  # AUTO PARTITION: the partitions come with their rows, at one instant
            table.partitions[partition.partition_id] = PartitionState(partition=partition, created_ts_ms=ts)
            self.next_ids["partition"] = max(self.next_ids["partition"], partition.partition_id + 1)
        self._bump_versions(table, e.partition_versions, ts)
        for rowset in e.rowsets:
            self._put_rowset(e.table_id, RowsetRecord(rowset=rowset))
        # Unique Key DELETE/UPDATE are loads of delete-sign / new-value rows (merge-on-write).
        removed = e.num_rows if e.source in ("delete", "update") else 0
        added = 0 if e.source == "delete" else e.num_rows
        kind = e.source if e.source in ("delete", "update") else "load"
        number = self._record_commit(table, ts, kind, partition_versions=e.partition_versions,
                                     rows_added=added, rows_removed=removed, description=e.source)
        label = LabelRecord(label=e.label, command_id=None, commit_number=number, ts_ms=ts, num_rows=e.num_rows)
        self.store.put(keys.label_key(e.table_id, e.label), record_bytes(label))
        if e.load is not None:
            self._record_load(e.load, e.num_rows, ts)
        if e.txn_id is not None:
            self._finish_prepared(e.txn_id, "COMMITTED", ts, "")

    def _load_prepared(self, e: ev.LoadPrepared, ts: int) -> None:
        prepared = PreparedLoad(txn_id=e.txn_id, table_id=e.table_id, label=e.label, rowsets=e.rowsets,
                                num_rows=e.num_rows, source=e.source, new_partitions=e.new_partitions,
                                prepared_ts_ms=ts, deadline_ts_ms=e.deadline_ts_ms)
        self.store.put(keys.prepared_load_key(e.txn_id), record_bytes(prepared))
        self.store.put(keys.prepared_label_key(e.table_id, e.label), str(e.txn_id).encode())
        for rowset in e.rowsets:
            self.store.put(keys.prepared_rowset_key(rowset.rowset_id), record_bytes(rowset))
        self.next_ids["txn"] = max(self.next_ids.get("txn", 1), e.txn_id + 1)

    def _load_aborted(self, e: ev.LoadAborted, ts: int) -> None:
        self._finish_prepared(e.txn_id, "ABORTED", ts, e.reason)

    def _finish_prepared(self, txn_id: int, status: Literal["COMMITTED", "ABORTED"], ts: int, reason: str) -> None:
        prepared = self.prepared_load(txn_id)
        if prepared is None:
            return
        finished = prepared.model_copy(update={"status": status, "finished_ts_ms": ts, "reason": reason})
        self.store.put(keys.prepared_load_key(txn_id), record_bytes(finished))
        self.store.delete(keys.prepared_label_key(prepared.table_id, prepared.label))
        for rowset in prepared.rowsets:  # committed: a rowset record names it now; aborted: an orphan
            self.store.delete(keys.prepared_rowset_key(rowset.rowset_id))

    def _delete_committed(self, e: ev.DeleteCommitted, ts: int) -> None:
        table = self._table(e.table_id)
        self._bump_versions(table, e.partition_versions, ts)
        for pid, version in e.partition_versions.items():
            record = DeleteRecord(partition_id=pid, version=version, predicate=e.predicate, ts_ms=ts)
            self.store.put(keys.delete_key(e.table_id, pid, version), record_bytes(record))
        self._record_commit(table, ts, e.kind, partition_versions=e.partition_versions,
                            rows_removed=e.num_rows, description=e.description)

    def _compaction_committed(self, e: ev.CompactionCommitted, ts: int) -> None:
        for rowset_id in e.input_rowset_ids:
            record = self.rowset_record(rowset_id)
            if record is not None:
                self._set_stale(e.table_id, record, ts, by_keeping=e.output.keeps_versions)
        self._put_rowset(e.table_id, RowsetRecord(rowset=e.output))

    def _delete_bitmaps_committed(self, e: ev.DeleteBitmapsCommitted, ts: int) -> None:
        # The first bitmap of a version stays unless replaced: any computation of a version marks the
        # same rows, named in the rowsets of its cover (a replacement names a compaction's output).
        key = keys.bitmap_key(e.table_id, e.partition_id, e.version)
        if e.table_id in self.tables and (e.replace or self.store.get(key) is None):
            record = DeleteBitmapRecord(partition_id=e.partition_id, version=e.version, tablets=e.tablets)
            self.store.put(key, record_bytes(record))

    def _hide_versions(self, table: TableState, pid: int, restored: int, version: int, ts: int) -> None:
        """Masks versions (restored, version] of a partition from every read at `version` or later.

        The rowsets the state at `restored` is read from are live again (never recycled while live);
        everything newer than it is stale, kept only for reads at earlier instants."""
        from projections.snapshot import cover_tablet  # the fold reuses the read path's cover walk

        partition = self._partition(table, pid)
        keep = {r.rowset_id for bucket in range(partition.partition.buckets)
                for r in cover_tablet(self, table.table_id, partition, bucket, restored)}
        for record in list(self.rowset_records(table.table_id, pid)):
            rowset = record.rowset
            if rowset.rowset_id in keep and record.stale_ts_ms is not None:
                self._set_stale(table.table_id, record, None)
            elif rowset.rowset_id not in keep and record.stale_ts_ms is None and rowset.end_version > restored:
                self._set_stale(table.table_id, record, ts)
        partition.masks.append((restored, version))

    def _table_restored(self, e: ev.TableRestored, ts: int) -> None:
        table = self._table(e.table_id)
        for pid, version in e.partition_versions.items():
            self._hide_versions(table, pid, e.restored_versions.get(pid, 0), version, ts)
        self._bump_versions(table, e.partition_versions, ts)
        if e.table_schema is not None:
            table.schemas.append(SchemaAt(ts_ms=ts, table_schema=e.table_schema))
        self._record_commit(table, ts, "restore", partition_versions=e.partition_versions, description=e.description)

    def _table_overwritten(self, e: ev.TableOverwritten, ts: int) -> None:
        """INSERT OVERWRITE: a restore of each covered partition to nothing, then its new rowsets
        one version above the mask — both in this one commit."""
        table = self._table(e.table_id)
        for pid, masked in e.masked_versions.items():
            self._hide_versions(table, pid, 0, masked, ts)
        self._bump_versions(table, e.partition_versions, ts)
        for rowset in e.rowsets:
            self._put_rowset(e.table_id, RowsetRecord(rowset=rowset))
        number = self._record_commit(table, ts, "overwrite", partition_versions=e.partition_versions,
                                     rows_added=e.num_rows, rows_removed=e.rows_removed,
                                     description=e.description)
        label = LabelRecord(label=e.label, command_id=None, commit_number=number, ts_ms=ts, num_rows=e.num_rows)
        self.store.put(keys.label_key(e.table_id, e.label), record_bytes(label))

    def _rowsets_moved(self, e: ev.RowsetsMoved, ts: int) -> None:
        for move in e.moves:
            record = self.rowset_record(move.rowset_id)
            if record is not None:
                # The moved copy is the rowset's own file, at the path built from its own ids.
                self._forget_rowset(e.table_id, record.rowset)
                moved: Rowset = record.rowset.model_copy(update={"tier": move.to_tier, "path": move.path,
                                                                 "shared_file": None})
                self._put_rowset(e.table_id, record.model_copy(update={"rowset": moved}))
        self.store.put(keys.move_key(e.table_id, ts), record_bytes(MoveRecord(ts_ms=ts, moves=list(e.moves))))

    def _rowsets_recycled(self, e: ev.RowsetsRecycled, ts: int) -> None:
        table = self.tables.get(e.table_id)
        if e.horizon_ts_ms is not None and table is not None:
            self._trim_history(self._table(e.table_id), e.horizon_ts_ms)
        for rowset_id in e.rowset_ids:
            locator = keys.rowset_locator_key(rowset_id)
            key = self.store.get(locator)
            record = self.rowset_record(rowset_id) if key else None
            # A rowset a version-keeping compaction replaced leaves every snapshot whole: its output reads for it.
            if record is not None and record.stale_ts_ms is not None and table is not None and \
                    not record.replaced_by_keeping:
                draft = self._table(e.table_id)
                draft.recycled_through_ts_ms = max(draft.recycled_through_ts_ms or 0, record.stale_ts_ms)
            if key:
                self.store.delete(key)
                self.store.delete(locator)
            if record is not None:
                self._unindex_stale(e.table_id, record)
                self._forget_rowset(e.table_id, record.rowset)

    def _tag_created(self, e: ev.TagCreated, ts: int) -> None:
        self._table(e.table_id).tags[e.name.lower()] = TagState(
            name=e.name, commit_number=e.commit_number, ts_ms=e.ts_ms, created_ts_ms=ts,
            retention_days=e.retention_days, expires_ts_ms=e.expires_ts_ms)

    def _tag_dropped(self, e: ev.TagDropped, ts: int) -> None:
        self._table(e.table_id).tags.pop(e.name.lower(), None)

    def _trim_history(self, table: TableState, horizon: int) -> None:
        """Drops version-index entries before the horizon but the last one at or before it, which
        still answers every instant from the horizon on. Only the entries at or before the horizon are
        listed — the one kept by the last trim and those the horizon passed since — never the commits
        inside the retention, which the recycler's every pass would otherwise walk again."""
        if table.history_horizon_ts_ms is not None and table.history_horizon_ts_ms >= horizon:
            return
        table.history_horizon_ts_ms = horizon
        for pid in table.partitions:
            prefix = keys.version_prefix(table.table_id, pid)
            past = keys.version_key(table.table_id, pid, horizon + 1)
            old = [key for key, _ in self.store.scan(prefix, before=past)]
            for key in old[:-1]:
                self.store.delete(key)

    def _named_put(self, kind: str) -> Callable[[Any, int], None]:
        def handle(e: Any, ts: int) -> None:
            value = {"name": e.name, "properties": dict(e.properties), "created_ts_ms": ts,
                     **({"resource_type": e.resource_type} if hasattr(e, "resource_type") else {})}
            self._named_write(kind, e.name, value)
        return handle

    def _named_merge(self, kind: str) -> Callable[[Any, int], None]:
        # A storage policy's ALTER carries its whole new property set (cooldown_ttl and
        # cooldown_datetime exclude each other, so setting one removes the other); a resource's
        # carries only what changed.
        replaces = kind == "storage_policy"

        def handle(e: Any, ts: int) -> None:
            value = dict(self.named[kind][e.name])
            value["properties"] = dict(e.properties) if replaces else {**value["properties"], **e.properties}
            value["version"] = int(value.get("version", 0)) + 1
            self._named_write(kind, e.name, value)
        return handle

    def _named_drop(self, kind: str) -> Callable[[Any, int], None]:
        def handle(e: Any, ts: int) -> None:
            self.named[kind].pop(e.name, None)
            self.store.delete(f"n/{kind}/{e.name}".encode())
        return handle

    def _routine_load_changed(self, e: ev.RoutineLoadChanged, ts: int) -> None:
        key = job_key(e.db_id, e.job)
        if e.spec is not None:
            job = RoutineLoadJob(key=key, job_id=e.job_id, name=e.job, db_id=e.db_id, table_id=e.table_id,
                                 state=e.state, spec=e.spec, reason=e.reason, created_ts_ms=ts, changed_ts_ms=ts)
            self.next_ids["routine_load"] = max(self.next_ids["routine_load"], e.job_id + 1)
        else:
            found = self.routine_loads.get(key)
            if found is None:  # the sequencer never changes an unknown job; an odd log must not stop the fold
                log.warning("RoutineLoadChanged for unknown job %s skipped", key)
                return
            job = found
            job.change_state(e.state, e.reason, ts)
        self._put_job(job)

    def _bulk_job_changed(self, e: ev.BulkJobChanged, ts: int) -> None:
        key = bulk_job_key(e.kind, e.db_id, e.label)
        if e.spec:
            job = BulkJob(kind=e.kind, job_id=e.job_id, db_id=e.db_id, label=e.label, state=e.state, spec=e.spec,
                          progress=e.progress, info=dict(e.info), error=e.error, created_ts_ms=ts, changed_ts_ms=ts)
            self.next_ids["bulk_job"] = max(self.next_ids.get("bulk_job", 1), e.job_id + 1)
        else:
            found = self.bulk_jobs.get(key)
            if found is None or found.job_id != e.job_id:
                log.warning("BulkJobChanged for unknown job %s (%d) skipped", key, e.job_id)
                return
            job = found.model_copy(update={"state": e.state, "changed_ts_ms": ts,
                                           "progress": e.progress or found.progress,
                                           "info": {**found.info, **e.info}, "error": e.error or found.error})
        if job.done and job.finished_ts_ms is None:
            job.finished_ts_ms = ts
        self.bulk_jobs[key] = job
        self.store.put(BULK_JOB_PREFIX + key.encode(), record_bytes(job))

    def bulk_job(self, kind: str, db_id: int, label: str) -> BulkJob | None:
        return self.bulk_jobs.get(bulk_job_key(kind, db_id, label))

    def _routine_load_progressed(self, e: ev.RoutineLoadProgressed, ts: int) -> None:
        self._record_load(e.load, 0, ts)

    def _record_load(self, load: LoadProgress, rows: int, ts: int) -> None:
        job = self.routine_loads.get(load.job)
        if job is not None:
            job.record(load, rows, ts)
            self._put_job(job)

    # -- users -----------------------------------------------------------------------------------------
    def _put_user(self, user: UserRecord) -> None:
        self.users[user.name.lower()] = user
        self.store.put(USER_PREFIX + user.name.lower().encode(), record_bytes(user))

    def _user_created(self, e: ev.UserCreated, ts: int) -> None:
        self._put_user(UserRecord(name=e.name, auth_string=e.auth_string, created_ts_ms=ts,
                                  failed_login_attempts=e.failed_login_attempts,
                                  password_lock_time_s=e.password_lock_time_s))

    def _user_altered(self, e: ev.UserAltered, ts: int) -> None:
        user = self.users.get(e.name.lower())
        if user is None:
            return
        changes: dict[str, int] = {}
        for name in ("failed_login_attempts", "password_lock_time_s", "max_user_connections", "query_timeout_s",
                     "insert_timeout_s"):
            value = getattr(e, name)
            if value is not None:
                changes[name] = value
        if e.unlock or e.failed_login_attempts is not None or e.password_lock_time_s is not None:
            changes["lock_reset_ts_ms"] = ts
        self._put_user(user.model_copy(update=changes))

    def _user_dropped(self, e: ev.UserDropped, ts: int) -> None:
        self.users.pop(e.name.lower(), None)
        self.store.delete(USER_PREFIX + e.name.lower().encode())

    def _password_set(self, e: ev.PasswordSet, ts: int) -> None:
        user = self.users.get(e.name.lower())
        if user is not None:
            self._put_user(user.model_copy(update={"auth_string": e.auth_string}))

    def _grants_changed(self, e: ev.GrantsChanged, ts: int) -> None:
        user = self.users.get(e.name.lower())
        if user is None:
            return
        grants = {k: v for k, v in user.grants.items() if k != scope_key(e.db, e.table)}
        if e.privileges:
            grants[scope_key(e.db, e.table)] = list(e.privileges)
        self._put_user(user.model_copy(update={"grants": grants}))

    def _stop_jobs(self, which: Callable[[RoutineLoadJob], bool], reason: str, ts: int) -> None:
        """A job whose table goes stops with it, as Doris cancels it: nothing is left to load into."""
        for job in list(self.routine_loads.values()):
            if which(job) and job.state != "STOPPED":
                job.change_state("STOPPED", f"ErrorReason{{{reason}}}", ts)
                self._put_job(job)

    def _put_job(self, job: RoutineLoadJob) -> None:
        self.routine_loads[job.key] = job
        self.store.put(ROUTINE_LOAD_PREFIX + job.key.encode(), record_bytes(job))

    def routine_load(self, db_id: int, name: str) -> RoutineLoadJob | None:
        return self.routine_loads.get(job_key(db_id, name))

    def _named_write(self, kind: str, name: str, value: dict[str, Any]) -> None:
        self.named[kind][name] = value
        self.store.put(f"n/{kind}/{name}".encode(), json.dumps(value, sort_keys=True).encode())
