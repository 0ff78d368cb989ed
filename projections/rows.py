"""Rows into a table: typed to its current schema, checked, routed to partitions and buckets, and
written as durable rowset files ready to be proposed — the part of a load every writer shares
(INSERT, group commit, routine load).

Typing and routing run in DuckDB over the writer's source relation (columns a0..an, one per
target column). A statement fails as a whole on its first bad row (`prepare_rows`); a routine load
keeps the good rows and sets the bad ones aside with their reason (`split_rows`).
"""

from __future__ import annotations

import contextlib
import time
import uuid
from collections.abc import Callable, Sequence
from concurrent.futures import Future, ThreadPoolExecutor
from dataclasses import dataclass
from datetime import UTC, datetime
from typing import Literal

import duckdb
import pyarrow as pa
import pyarrow.compute as pc

from projections import auto_partitions
from projections.cooldown import local_target
from projections.state import TableState
from schemas.commands import AllocateAutoIncrement, Command
from schemas.envelope import EventEnvelope
from schemas.errors import ErrorCode
from schemas.events import AutoIncrementAllocated
from schemas.model import Column, NewRowset, Partition
from storage.paths import HIDDEN_DELETE_SIGN, HIDDEN_SEQ
from storage.rowset_sql import converted_sql, default_sql, duck_type, quote_literal, rounded_sql
from storage.rowset_writer import RowsetStream, WrittenFile
from storage.tiers import LocalTiers

REASON = "__reason"
# Hands out `count` values of a table's AUTO_INCREMENT column (through the sequencer); returns the first.
Allocate = Callable[[int], int]


def allocator(propose: Callable[[Command], EventEnvelope], table_id: int) -> Allocate:
    """An `Allocate` asking the sequencer (through `propose`) for values of the table's AUTO_INCREMENT
    column: two writers never get the same value, and the counter lives in the log, so it survives
    restarts."""
    def allocate(count: int) -> int:
        decided = propose(AllocateAutoIncrement(table_id=table_id, count=count)).payload
        if not isinstance(decided, AutoIncrementAllocated):
            raise RowsRejected(ErrorCode.UNKNOWN_ERROR, f"AUTO_INCREMENT allocation answered by {decided.TYPE}")
        return decided.start
    return allocate
# Where the AUTO_INCREMENT column's position among the targets was, once `_numbered` moved it last.
_RENUMBERED = Column(unique_id=-3, name="__auto_increment_given", type="BIGINT")


class RowsRejected(Exception):
    """Rows that cannot go into the table; `code` is the MySQL error code a statement answers with."""

    def __init__(self, code: int, message: str) -> None:
        super().__init__(message)
        self.code = int(code)
        self.message = message


@dataclass(frozen=True)
class _Check:
    column: Column
    condition: str  # true for a row that fails
    kind: Literal["null", "length", "value"]

    def failure(self) -> RowsRejected:
        name, kind = self.column.name, self.column.type
        if self.kind == "null":
            return RowsRejected(ErrorCode.BAD_NULL_ERROR, f"Column '{name}' cannot be null")
        if self.kind == "length":
            return RowsRejected(1406, f"Data too long for column '{name}' ({kind}, counted in bytes)")
        return RowsRejected(1366, f"Incorrect value for column '{name}' of type {kind}")


def _bound_tuple(values: tuple[str | None, ...], types: list[str]) -> str:
    items = ", ".join(f"CAST({'NULL' if v is None else quote_literal(v)} AS {t})"
                      for v, t in zip(values, types, strict=False))
    return f"({items})" if len(values) > 1 else items


def _list_match(names: list[str], types: list[str], values: tuple[tuple[str | None, ...], ...]) -> str:
    """True for a row whose partition columns equal one of a LIST partition's values (NULL matching NULL)."""
    plain = [v for v in values if None not in v]
    key = f"({', '.join(names)})" if len(names) > 1 else names[0]
    options = [f"{key} IN ({', '.join(_bound_tuple(v, types) for v in plain)})"] if plain else []
    for value in values:
        if None in value:
            each = [f"{n} IS NULL" if v is None else f"{n} = {_bound_tuple((v,), [t])}"
                    for n, t, v in zip(names, types, value, strict=False)]
            options.append(f"({' AND '.join(each)})")
    return " OR ".join(options) or "false"


def partition_case(table: TableState, only: tuple[int, ...] = ()) -> str:
    """A DuckDB expression giving each typed row (columns c<id>) its partition id, NULL if none
    (or none of `only`, the partitions an `INSERT … PARTITION (…)` names). A LIST table's DEFAULT
    partition takes the rows no other partition takes."""
    live = [p for p in table.live_partitions() if not only or p.partition_id in only]
    if table.partition_kind == "UNPARTITIONED":
        return str(live[0].partition_id)
    cols = [table.schema_now.column(n) for n in table.partition_columns]
    if any(c is None for c in cols):
        raise RowsRejected(ErrorCode.WRONG_ARGUMENTS, "a partition column no longer exists")
    names = [c.file_column for c in cols if c is not None]
    types = [duck_type(c.type) for c in cols if c is not None]
    key = f"({', '.join(names)})" if len(names) > 1 else names[0]
    whens = []
    fallback = ""
    for p in live:
        bound = p.partition.bound
        if bound.is_default:
            fallback = f" ELSE {p.partition_id}"
        elif table.partition_kind == "LIST":
            whens.append(f"WHEN {_list_match(names, types, bound.values)} THEN {p.partition_id}")
        else:
            conds = []
            if bound.lower is not None:
                conds.append(f"{key} >= {_bound_tuple(bound.lower, types)}")
            if bound.upper is not None:
                conds.append(f"{key} < {_bound_tuple(bound.upper, types)}")
            whens.append(f"WHEN {' AND '.join(conds) or 'true'} THEN {p.partition_id}")
    if not whens:
        return fallback.removeprefix(" ELSE ") or "NULL"
    return f"CASE {' '.join(whens)}{fallback} END"


def bucket_expr(table: TableState) -> str:
    """Each routed row's bucket: a hash of the distribution columns (random spread for RANDOM)."""
    buckets = {p.partition_id: p.partition.buckets for p in table.live_partitions()}
    if all(n == 1 for n in buckets.values()):
        return "0"
    cols = [table.schema_now.column(n) for n in table.distribution.columns]
    names = [c.file_column for c in cols if c is not None]
    spread = f"hash({', '.join(names)})" if names else "CAST(floor(random() * 4294967296) AS UBIGINT)"
    cases = " ".join(f"WHEN {pid} THEN {spread} % {n}" for pid, n in buckets.items())
    return f"CAST(CASE __partition {cases} END AS INTEGER)"


@dataclass(frozen=True)
class RoutedQuery:
    """The query typing, checking and routing a load's rows (`routed_query`) and its checks: the
    query gives one `__chk<i>` column per check (true where the row fails it)."""

    sql: str
    checks: list[_Check]


def routed_query(table: TableState, source_sql: str, targets: Sequence[Column], *, strict: bool,
                 partitions: tuple[int, ...], passthrough: Sequence[str], sign_from: int | None = None,
                 seq_sql: str = "row_number() OVER () - 1") -> RoutedQuery:
    """The typed, routed rows of `source_sql` with their checks, and with `sign_from`, each row's own
    delete sign (`__DORIS_DELETE_SIGN__` given as source column a<i>). `seq_sql` gives `__seq` (rows
    of one key merge in its order): the rows' order by default, which reads the whole source before
    the first row comes; a reader streaming the rows numbers them itself."""
    schema = table.schema_now
    now = datetime.now(UTC).strftime("%Y-%m-%d %H:%M:%S.%f")
    given = {c.unique_id: i for i, c in enumerate(targets)}
    typed: list[str] = []
    converted: list[str] = []  # each given value converted once, below the rounding and checks that use it
    checks: list[_Check] = []
    for column in schema.columns:
        if column.unique_id in given:
            src = f"a{given[column.unique_id]}"
            converted.append(f"{converted_sql(src, column.type)} AS __converted{len(converted)}")
            value = rounded_sql(f"__converted{len(converted) - 1}", column.type)
            if strict:
                checks.append(_Check(column, f"{src} IS NOT NULL AND {value} IS NULL", "value"))
            if column.type.upper().startswith(("VARCHAR", "CHAR")) and "(" in column.type:
                limit = int(column.type.split("(")[1].rstrip(")"))
                # Doris sizes VARCHAR(n) in bytes of UTF-8, not in characters.
                checks.append(_Check(column, f"strlen(CAST({src} AS VARCHAR)) > {limit}", "length"))
        else:
            if not column.nullable and column.default is None:
                raise RowsRejected(1364, f"Field '{column.name}' doesn't have a default value")
            value = default_sql(column, now=now)
        typed.append(f"{value} AS {column.file_column}")
        if not column.nullable:
            checks.append(_Check(column, f"{value} IS NULL", "null"))
    carried = "".join(f", {name}" for name in passthrough)
    if sign_from is not None:
        # Doris' delete sign is a TINYINT: any value but 0 (or NULL) deletes the row's key.
        carried += f", coalesce(TRY_CAST(a{sign_from} AS TINYINT), 0) <> 0 AS {HIDDEN_DELETE_SIGN}"
    check_cols = "".join(f", ({check.condition}) AS __chk{i}" for i, check in enumerate(checks))
    source_sql = f"SELECT *{''.join(', ' + c for c in converted)} FROM ({source_sql})"
    typed_sql = (f"SELECT {', '.join(typed)}, {seq_sql} AS {HIDDEN_SEQ}{carried}{check_cols} "
                 f"FROM ({source_sql})")
    routed_sql = f"SELECT *, {partition_case(table, partitions)} AS __partition FROM ({typed_sql})"
    return RoutedQuery(f"SELECT *, {bucket_expr(table)} AS __bucket FROM ({routed_sql})", checks)


def _routed(cur: duckdb.DuckDBPyConnection, table: TableState, source_sql: str, targets: Sequence[Column], *,
            strict: bool, partitions: tuple[int, ...], passthrough: Sequence[str],
            sign_from: int | None = None) -> tuple[pa.Table, list[_Check]]:
    """`routed_query`'s rows, read whole."""
    query = routed_query(table, source_sql, targets, strict=strict, partitions=partitions, passthrough=passthrough,
                         sign_from=sign_from)
    # A DuckDB error (a bad expression in the source) is left to the writer, which knows how to name it.
    data: pa.Table = cur.sql(query.sql).to_arrow_table()
    return data, query.checks


def _numbered(cur: duckdb.DuckDBPyConnection, table: TableState, source_sql: str, targets: Sequence[Column],
              allocate: Allocate | None) -> tuple[str, list[Column]]:
    """The source with the table's AUTO_INCREMENT column filled: a row's own value where it gives one,
    else the next of a range the sequencer allocated for this load, in row order. The source is read
    once (so the count allocated and the rows filled agree) and the column becomes its last target."""
    column = table.auto_increment_column
    if column is None:
        return source_sql, list(targets)
    view = f"__numbered_{uuid.uuid4().hex}"
    source = cur.sql(source_sql).to_arrow_table()  # a0..an, one per target, and whatever else it carries
    position = next((i for i, c in enumerate(targets) if c.unique_id == column.unique_id), None)
    given = pa.nulls(source.num_rows, pa.int64())
    if position is not None:
        cur.register(view, source)
        given = pc.cast(cur.sql(f"SELECT TRY_CAST(a{position} AS BIGINT) AS v FROM {view}").to_arrow_table()["v"],
                        pa.int64())
        cur.unregister(view)
    wanted = pc.is_null(given)
    count = pc.sum(pc.cast(wanted, pa.int64())).as_py() or 0
    if count:
        if allocate is None:
            raise RowsRejected(ErrorCode.NOT_SUPPORTED_YET, f"this load cannot fill the AUTO_INCREMENT column "
                                                            f"'{column.name}' of '{table.name}'")
        first = allocate(count)
        drawn = pc.subtract(pc.add(pc.cumulative_sum(pc.cast(wanted, pa.int64())), first), 1)
        given = pc.if_else(wanted, drawn, given)
    cur.register(view, source.append_column(f"a{len(targets)}", given))
    renamed = [c if c.unique_id != column.unique_id else _RENUMBERED for c in targets]
    return f"SELECT * FROM {view}", [*renamed, column]


def _no_partition(table: TableState, partitions: tuple[int, ...]) -> str:
    named = "" if not partitions else " among the partitions named"
    return (f"no partition of '{table.name}'{named} holds some of the rows' "
            f"{', '.join(table.partition_columns)} values")


def _finish(table: TableState, data: pa.Table, *, delete_sign: bool) -> pa.Table:
    keep = [c.file_column for c in table.schema_now.columns] + [HIDDEN_SEQ]
    if table.keys_model == "UNIQUE":
        if HIDDEN_DELETE_SIGN not in data.column_names:
            data = data.append_column(HIDDEN_DELETE_SIGN, pa.array([delete_sign] * data.num_rows, pa.bool_()))
        keep.append(HIDDEN_DELETE_SIGN)
    return data.select([*keep, "__partition", "__bucket"])


def prepare_rows(cur: duckdb.DuckDBPyConnection, table: TableState, source_sql: str, targets: Sequence[Column], *,
                 delete_sign: bool = False, partitions: tuple[int, ...] = (), sign_from: int | None = None,
                 allocate: Allocate | None = None) -> pa.Table:
    """The rows of `source_sql` typed to the table's current schema, checked (NULLs, lengths, values,
    partitions) and routed: the file columns, `__seq`, the delete sign on Unique Key tables (`delete_sign`
    for every row, or each row's from source column a<`sign_from`>), and `__partition`/`__bucket`.
    An AUTO_INCREMENT column is filled by `allocate` where a row gives no value.
    Raises RowsRejected for the first check any row fails; writes nothing."""
    source_sql, targets = _numbered(cur, table, source_sql, targets, allocate)
    data, checks = _routed(cur, table, source_sql, targets, strict=True, partitions=partitions, passthrough=(),
                           sign_from=sign_from)
    return _checked(table, data, checks, partitions, delete_sign)


@dataclass(frozen=True)
class AutoRouted:
    """Rows of an AUTO PARTITION table: `table` includes the `new_partitions` the rows need."""

    table: TableState
    data: pa.Table
    new_partitions: tuple[Partition, ...]


def _auto_routed(cur: duckdb.DuckDBPyConnection, table: TableState, source_sql: str, targets: Sequence[Column], *,
                 strict: bool, passthrough: Sequence[str], next_partition_id: int, clash_fails: bool,
                 sign_from: int | None = None) -> tuple[TableState, pa.Table, list[_Check], tuple[Partition, ...]]:
    """`_routed` on an AUTO PARTITION table: the good rows no partition holds get new partitions, and
    the rows are routed again with them. A new partition that would overlap an existing one raises
    RowsRejected (`clash_fails`), or is not created (its rows stay unrouted)."""
    data, checks = _routed(cur, table, source_sql, targets, strict=strict, partitions=(), passthrough=passthrough,
                           sign_from=sign_from)
    candidates = pc.is_null(data.column("__partition"))
    for i in range(len(checks)):
        candidates = pc.and_(candidates, pc.invert(pc.fill_null(data.column(f"__chk{i}"), False)))
    try:
        new = auto_partitions.plan(table, data.filter(candidates), next_partition_id)
    except auto_partitions.AutoPartitionClash as exc:
        if clash_fails:
            raise RowsRejected(ErrorCode.NO_PARTITION_FOR_GIVEN_VALUE, str(exc)) from None
        new = ()
    if new:
        table = auto_partitions.widened(table, new, int(time.time() * 1000))
        data, checks = _routed(cur, table, source_sql, targets, strict=strict, partitions=(), passthrough=passthrough,
                               sign_from=sign_from)
    return table, data, checks, new


def prepare_rows_creating_partitions(cur: duckdb.DuckDBPyConnection, table: TableState, source_sql: str,
                                     targets: Sequence[Column], *, next_partition_id: int,
                                     sign_from: int | None = None, allocate: Allocate | None = None) -> AutoRouted:
    """`prepare_rows` for an AUTO PARTITION table: rows no partition holds get new partitions (ids from
    `next_partition_id`), which the commit of these rows must create (`CommitRowsets.new_partitions`)."""
    source_sql, targets = _numbered(cur, table, source_sql, targets, allocate)
    table, data, checks, new = _auto_routed(cur, table, source_sql, targets, strict=True, passthrough=(),
                                            next_partition_id=next_partition_id, clash_fails=True,
                                            sign_from=sign_from)
    return AutoRouted(table, _checked(table, data, checks, (), False), new)


def _checked(table: TableState, data: pa.Table, checks: list[_Check], partitions: tuple[int, ...],
             delete_sign: bool) -> pa.Table:
    for i, check in enumerate(checks):
        if pc.any(data.column(f"__chk{i}")).as_py():
            raise check.failure()
    if data.column("__partition").null_count:
        raise RowsRejected(ErrorCode.NO_PARTITION_FOR_GIVEN_VALUE, _no_partition(table, partitions))
    return _finish(table, data, delete_sign=delete_sign)


def split_rows(cur: duckdb.DuckDBPyConnection, table: TableState, source_sql: str, targets: Sequence[Column], *,
               strict: bool, partitions: tuple[int, ...] = (), passthrough: Sequence[str] = (),
               allocate: Allocate | None = None, sign_from: int | None = None) -> tuple[pa.Table, pa.Table]:
    """Like `prepare_rows`, but a bad row does not fail the others: returns the good rows, ready to
    write, and the bad ones as their `passthrough` columns plus `__reason` (the first check failed).
    Without `strict`, a value that does not convert becomes NULL (Doris' strict_mode=false)."""
    source_sql, targets = _numbered(cur, table, source_sql, targets, allocate)
    data, checks = _routed(cur, table, source_sql, targets, strict=strict, partitions=partitions,
                           passthrough=passthrough, sign_from=sign_from)
    return split_routed(table, data, checks, partitions, passthrough)


def split_rows_creating_partitions(cur: duckdb.DuckDBPyConnection, table: TableState, source_sql: str,
                                   targets: Sequence[Column], *, strict: bool, passthrough: Sequence[str],
                                   next_partition_id: int,
                                   allocate: Allocate | None = None) -> tuple[AutoRouted, pa.Table]:
    """`split_rows` for an AUTO PARTITION table: the good rows (with the table and the partitions their
    commit must create, as `prepare_rows_creating_partitions`) and the bad ones."""
    source_sql, targets = _numbered(cur, table, source_sql, targets, allocate)
    table, data, checks, new = _auto_routed(cur, table, source_sql, targets, strict=strict, passthrough=passthrough,
                                            next_partition_id=next_partition_id, clash_fails=False)
    good, bad = split_routed(table, data, checks, (), passthrough)
    return AutoRouted(table, good, new), bad


def kept_rows(data: pa.Table, mask: pa.ChunkedArray | pa.Array) -> pa.Table:
    """The rows `mask` (no NULLs) keeps. Most batches keep every row, and a filter copies every column
    even then (a fifth of a large CSV load's time): such a batch is returned as it is."""
    if pc.all(mask, skip_nulls=False).as_py() is True:
        return data
    return data.filter(mask)


def split_routed(table: TableState, data: pa.Table, checks: Sequence[_Check], partitions: tuple[int, ...],
                 passthrough: Sequence[str]) -> tuple[pa.Table, pa.Table]:
    """`routed_query`'s rows as the good rows, ready to write, and the bad ones (their `passthrough`
    columns and `__reason`)."""
    unrouted = pc.is_null(data.column("__partition"))
    if not pc.any(unrouted).as_py() and not any(pc.any(data.column(f"__chk{i}")).as_py() for i in range(len(checks))):
        # Most batches fail no check: no reasons to build, nothing to filter.
        none = data.slice(0, 0).select(list(passthrough)).append_column(REASON, pa.array([], pa.string()))
        return _finish(table, data, delete_sign=False), none
    reason = pa.nulls(data.num_rows, pa.string())
    for i, check in enumerate(checks):
        failed = pc.fill_null(data.column(f"__chk{i}"), False)
        reason = pc.if_else(pc.and_(pc.is_null(reason), failed), pa.scalar(check.failure().message), reason)
    reason = pc.if_else(pc.and_(pc.is_null(reason), unrouted), pa.scalar(_no_partition(table, partitions)), reason)
    good = pc.is_null(reason)
    failed_rows = pc.invert(good)
    bad = data.filter(failed_rows).select(list(passthrough)).append_column(REASON, reason.filter(failed_rows))
    return _finish(table, kept_rows(data, good), delete_sign=False), bad


def write_rowsets(tiers: LocalTiers, table: TableState, data: pa.Table, *,
                  default_cooldown_s: float | None = None) -> list[NewRowset]:
    """Writes prepared rows as one durable rowset per partition × bucket, on the local medium each
    partition belongs on now (`default_cooldown_s`: see `cooldown.local_target`); returns them ready
    to be named in a `CommitRowsets`."""
    writer = RowsetsWriter(tiers, table, default_cooldown_s=default_cooldown_s)
    writer.append(data, overlap=False)
    return writer.finish()


# Up to this many rows, a part's partition × bucket pairs are read as Python values: Arrow's group_by
# costs half a millisecond whatever the size, most of a small INSERT's file write.
_FEW_ROWS = 256


def _tablets(data: pa.Table) -> list[tuple[int, int]]:
    """The (partition, bucket) pairs of a prepared part's rows, each once."""
    if data.num_rows <= _FEW_ROWS:
        pairs = zip(data["__partition"].to_pylist(), data["__bucket"].to_pylist(), strict=True)
        return list(dict.fromkeys(pairs))
    groups = data.group_by(["__partition", "__bucket"]).aggregate([]).to_pylist()
    return [(group["__partition"], group["__bucket"]) for group in groups]


# Rowset parts are encoded and written here while the load that made them prepares its next chunk
# (Parquet encoding releases the GIL): a chunked load uses both cores. Each writer has at most one
# part in flight, so its files get their parts in order and a load holds at most two chunks.
_PART_WRITERS = ThreadPoolExecutor(max_workers=4, thread_name_prefix="rowset-parts")


class RowsetsWriter:
    """A load's prepared rows written as they come, a part at a time, into one rowset per partition ×
    bucket (a read walks one rowset per partition, bucket and version: a commit never has two), each
    part appended to its partition × bucket's open file, on a writer thread while the load goes on.
    `finish` makes them durable; nothing is named before (files `abandon` leaves are the recycler's
    orphan sweep's).

    Each part's `__seq` (its rows' order, 0 up) is moved past the parts before it: rows of one key in
    one commit merge in `__seq` order (a Unique Key table's last row wins, an Aggregate's REPLACE), so
    the parts of a load written a chunk at a time order as the whole load would have."""

    def __init__(self, tiers: LocalTiers, table: TableState, *, default_cooldown_s: float | None = None) -> None:
        self.tiers, self.table, self.default_cooldown_s = tiers, table, default_cooldown_s
        self._open: dict[tuple[int, int], tuple[str, RowsetStream]] = {}
        self._next_seq = 0
        self._writing: Future[None] | None = None
        # Files sorted by the table's key (Duplicate: its sort key), for the row groups' statistics.
        self._sort_key = tuple(c.file_column for c in table.schema_now.columns if c.is_key)

    def append(self, data: pa.Table, *, overlap: bool = True) -> None:
        """Appends a part; written on a writer thread unless `overlap` is false (the load's last
        part, followed by `finish` at once: nothing to overlap with, and a hop through the shared
        writers would queue a small INSERT behind other loads' parts)."""
        data = self._sequenced(data)
        keep = [name for name in data.column_names if name not in ("__partition", "__bucket")]
        now_ms = int(time.time() * 1000)
        parts: list[tuple[RowsetStream, pa.Table]] = []
        groups = _tablets(data)
        for key in groups:
            if key not in self._open:
                # New rows land hot, on the partition's local medium; cooldown moves them later.
                tier = local_target(self.table, self.table.partitions[key[0]], now_ms, self.default_cooldown_s)
                self._open[key] = (tier, RowsetStream(self.tiers.root(tier), self.table.table_id, *key,
                                                      sort_key=self._sort_key, codec=self.table.rowset_codec))
            if len(groups) == 1:  # every row in one partition × bucket: no filter (it copies every column)
                parts.append((self._open[key][1], data.select(keep)))
                continue
            mask = pc.and_(pc.equal(data["__partition"], key[0]), pc.equal(data["__bucket"], key[1]))
            parts.append((self._open[key][1], data.filter(mask).select(keep)))
        self._written()
        if overlap:
            self._writing = _PART_WRITERS.submit(_write_parts, parts)
        else:
            _write_parts(parts)

    def _written(self) -> None:
        """Waits for the part in flight; its write's error is raised here."""
        writing, self._writing = self._writing, None
        if writing is not None:
            writing.result()

    def _sequenced(self, data: pa.Table) -> pa.Table:
        if HIDDEN_SEQ not in data.column_names or not data.num_rows:
            return data
        seq = data[HIDDEN_SEQ]
        if self._next_seq:
            data = data.set_column(data.column_names.index(HIDDEN_SEQ), HIDDEN_SEQ,
                                   pc.add(seq, pa.scalar(self._next_seq, seq.type)))
        self._next_seq += int(pc.max(seq).as_py()) + 1
        return data

    def finish(self) -> list[NewRowset]:
        self._written()
        schema = self.table.schema_now
        rowsets = []
        finished = _finish_side_by_side([stream for _, stream in self._open.values()])
        for (partition_id, bucket), (tier, stream) in self._open.items():
            written = finished[stream] if stream in finished else stream.finish()
            rowsets.append(NewRowset(rowset_id=written.rowset_id, partition_id=partition_id, bucket=bucket,
                                     num_rows=written.num_rows, size_bytes=written.size_bytes, path=written.path,
                                     tier=tier, schema_version=schema.schema_version, checksum=written.checksum))
        self._open.clear()
        return rowsets

    def abandon(self) -> None:
        with contextlib.suppress(Exception):  # the load failed already; its files go either way
            self._written()
        for _, stream in self._open.values():
            stream.abandon()
        self._open.clear()


# Finishes the files of one load side by side: writing, fsyncing and hashing a file mostly runs
# outside the GIL, so a load of several buckets waits for about the longest file instead of their sum.
_FINISHERS = ThreadPoolExecutor(max_workers=2, thread_name_prefix="rowset-finish")


def _finish_side_by_side(streams: list[RowsetStream]) -> dict[RowsetStream, WrittenFile]:
    """The files of `streams` that `finish` sorts without DuckDB, finished at once (one on this thread,
    so a busy pool never stalls it); a DuckDB sort may hold `_SORT_MEMORY`, so those are left to run
    one at a time."""
    light = [stream for stream in streams if not stream.needs_sort]
    if len(light) < 2:
        return {}
    others = {stream: _FINISHERS.submit(stream.finish) for stream in light[1:]}
    done = {light[0]: light[0].finish()}
    return done | {stream: future.result() for stream, future in others.items()}


def _write_parts(parts: list[tuple[RowsetStream, pa.Table]]) -> None:
    for stream, part in parts:
        stream.append(part)
