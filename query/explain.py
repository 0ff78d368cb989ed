"""EXPLAIN [VERBOSE | GRAPH] <query>: what the query's reads resolve to, and the executor's plan, without
running the query.

Each table the query reads (inside views too) is resolved as the read path resolves it
(`query.reads.snapshot_for`, partition selection included): the instant, the version of each partition
then, the rowsets covering it per tier, the delete predicates in force and the keys-model merge. The
executor's plan is DuckDB's EXPLAIN of the query bound exactly as `run_query` binds it (DuckDB plans it
and reads only Parquet footers). Binding names local files: when a cold rowset the read needs is not in
this server's file cache, EXPLAIN does not fetch it and leaves the executor's plan out, saying so.
"""

from __future__ import annotations

import re
from collections.abc import Iterator
from dataclasses import dataclass

import duckdb
from sqlglot import exp

from projections.snapshot import Snapshot
from query import access
from query.context import Context, Rows, SessionState, SqlFailure
from query.doris_variables import ReadOptions
from query.mysql_semantics import rewrite
from query.parser import statements as st
from query.parser import table_refs
from query.parser.refs import TableRef
from query.parser.statements import QualifiedName
from query.partition_pruning import pruned
from query.reads import (
    MAX_VIEW_DEPTH,
    bind_tables,
    duck_error,
    format_instant,
    only_partitions,
    selected_partitions,
    snapshot_for,
    view_body,
)
from query.storage_usage import doris_bytes, is_remote
from storage.tiers import resource_of

COLUMN = "Explain String"
_COLUMN_ID = re.compile(r"\bc(\d+)\b")


def _snapshots(ctx: Context, session: SessionState, expr: exp.Expr,
               depth: int = 0) -> Iterator[tuple[str, _Read | None]]:
    """(how the query names it, snapshot) of every table the query reads, views expanded; a view whose
    definition the user may not see (query.access) is named with no snapshot, its tables unsaid."""
    for ref in table_refs(expr):
        db = ref.db or session.database or ""
        if db.lower() == "information_schema" or ref.incr is not None or ref.history is not None:
            continue
        name = QualifiedName(ref.name, ref.db)
        view = ctx.view(session, name)
        if view is not None:
            if not access.may_see_definition(ctx, session, view):
                yield f"{db}.{ref.name}", None
            elif depth < MAX_VIEW_DEPTH:
                yield from _snapshots(ctx, session, view_body(view.definition), depth + 1)
            continue
        yield _label(ref, db), _snapshot(ctx, session, ref, name)


def _label(ref: TableRef, db: str) -> str:
    return f"{db}.{ref.name}" + (f" AS {ref.node.alias}" if ref.node.alias else "")


@dataclass(frozen=True)
class _Read:
    """One table reference's snapshot, and how much of the table there was to choose from then."""

    snapshot: Snapshot
    partitions: int
    tablets: int


def _snapshot(ctx: Context, session: SessionState, ref: TableRef, name: QualifiedName) -> _Read:
    whole = snapshot_for(ctx, session, name, ref.as_of)
    selected = selected_partitions(ref.node)
    tablets = sum(_buckets(whole, p.partition_id) for p in whole.partitions)
    cur = ctx.cursor()
    try:  # the partitions the WHERE clause leaves, as the read prunes them
        read = pruned(only_partitions(whole, selected) if selected else whole, ref.node, cur)
    finally:
        cur.close()
    return _Read(read, len(whole.partitions), tablets)


def _buckets(snapshot: Snapshot, partition_id: int) -> int:
    found = snapshot.table.partitions.get(partition_id)
    return found.partition.buckets if found is not None else 0


def _merge_text(snapshot: Snapshot, options: ReadOptions) -> str:
    table = snapshot.table
    if table.keys_model == "DUPLICATE":
        return "Duplicate Key: every row, no merge"
    if not options.merge:
        return f"{table.keys_model.title()} Key: not merged (skip_storage_engine_merge / skip_delete_bitmap)"
    keys = ", ".join(c.name for c in snapshot.schema.key_columns)
    if table.keys_model == "UNIQUE":
        sequence = table.sequence_column(snapshot.schema)
        order = f"{sequence.name}, " if sequence is not None else ""
        signs = "rows whose __DORIS_DELETE_SIGN__ is 1 drop their key" if options.delete_signs \
            else "delete signs kept (skip_delete_sign)"
        on_read = (f"per key ({keys}) the row with the highest ({order}__version, __seq); {signs}")
        tablets = sum(_buckets(snapshot, p.partition_id) for p in snapshot.partitions)
        on_write = sum(len(p.bitmaps) for p in snapshot.partitions)
        if not on_write:
            return f"Unique Key merge-on-read: {on_read}"
        bitmaps = sum(len(paths) for p in snapshot.partitions for paths in p.bitmaps.values())
        text = (f"Unique Key merge-on-write: {on_write} of {tablets} tablets subtract the rows their "
                f"{bitmaps} delete bitmaps mark")
        return text if on_write == tablets else f"{text}; the others merge on read: {on_read}"
    folds = ", ".join(f"{c.name} {c.aggregation}" for c in snapshot.schema.visible_columns if c.aggregation)
    return f"Aggregate Key merge: per key ({keys}) in version order: {folds}"


def _predicate_text(snapshot: Snapshot, predicate: str | None) -> str:
    if predicate is None:
        return "TRUNCATE (every row)"
    names = {c.unique_id: c.name for entry in snapshot.schema_history for c in entry.table_schema.columns}
    return _COLUMN_ID.sub(lambda m: names.get(int(m.group(1)), m.group(0)), predicate)


def _tier_text(snapshot: Snapshot) -> str:
    counts: dict[str, tuple[int, int]] = {}
    for r in snapshot.rowsets:
        n, size = counts.get(r.tier, (0, 0))
        counts[r.tier] = (n + 1, size + r.size_bytes)
    return "; ".join(f"{tier}: {n} ({doris_bytes(size)})" for tier, (n, size) in sorted(counts.items())) or "none"


def _uncached(ctx: Context, snapshot: Snapshot) -> tuple[int, int]:
    """(cold rowsets, those not in this server's file cache)."""
    cold = [r for r in snapshot.rowsets if is_remote(r.tier)]
    missing = [r for r in cold if f"{resource_of(r.tier)}/{r.path}" not in ctx.locator.cache]
    return len(cold), len(missing)


def _table_lines(ctx: Context, session: SessionState, label: str, read: _Read, options: ReadOptions,
                 verbose: bool) -> tuple[list[str], int]:
    snapshot = read.snapshot
    table = snapshot.table
    lines = [f"TABLE {label} (table id {table.table_id}, {table.keys_model} KEY)"]
    if snapshot.ts_ms is None:
        lines.append("  as of: latest")
    else:
        lines.append(f"  as of: {format_instant(snapshot.ts_ms, session)} (session time zone; "
                     f"{snapshot.ts_ms} ms UTC)")
    lines.append(f"  schema version: {snapshot.schema.schema_version}, columns: "
                 f"{', '.join(c.name for c in snapshot.schema.visible_columns)}")
    lines.append(f"  partitions: {len(snapshot.partitions)}/{read.partitions} selected: "
                 + ", ".join(f"{p.name} (version {p.version})" for p in snapshot.partitions))
    # Doris' OlapScanNode words, which its users and regression suites look for in EXPLAIN.
    tablets = sum(_buckets(snapshot, p.partition_id) for p in snapshot.partitions)
    lines.append(f"  partitions={len(snapshot.partitions)}/{read.partitions} "
                 f"({','.join(p.name for p in snapshot.partitions)}), tablets={tablets}/{read.tablets}")
    rowsets = snapshot.rowsets
    lines.append(f"  rowsets: {len(rowsets)}, {sum(r.num_rows for r in rowsets)} rows stored, "
                 f"{doris_bytes(sum(r.size_bytes for r in rowsets))}; per tier: {_tier_text(snapshot)}")
    cold, missing = _uncached(ctx, snapshot)
    lines.append("  file cache: not used (no cold rowsets)" if not cold else
                 f"  file cache: used for {cold} cold rowset(s): {cold - missing} cached, {missing} to fetch")
    deletes = [(p.name, d) for p in snapshot.partitions for d in p.deletes]
    applied = [(name, d) for name, d in deletes if options.delete_predicates or d.predicate is None]
    lines.append(f"  delete predicates: {len(applied)}" + (" (skip_delete_predicate)" if len(applied) < len(deletes)
                                                          else ""))
    lines.extend(f"    {name}: rows below version {d.version} where {_predicate_text(snapshot, d.predicate)}"
                 for name, d in applied)
    lines.append(f"  merge: {_merge_text(snapshot, options)}")
    if verbose:
        for p in snapshot.partitions:
            for r in p.rowsets:
                lines.append(f"    rowset {r.rowset_id}: partition {p.name}, bucket {r.bucket}, versions "
                             f"[{r.start_version}, {r.end_version}], {r.num_rows} rows, {doris_bytes(r.size_bytes)}, "
                             f"{r.tier}, schema version {r.schema_version}"
                             + (f", keeps versions, read through version {r.read_through}"
                                if r.read_through is not None else ", keeps versions" if r.keeps_versions else ""))
    return lines, missing


def _executor_plan(ctx: Context, session: SessionState, expr: exp.Expr) -> list[str]:
    cur = ctx.cursor()
    try:
        sql = bind_tables(ctx, session, expr, cur)
        plan = cur.execute(f"EXPLAIN {sql}").fetchall()
    except duckdb.Error as exc:
        raise SqlFailure(*duck_error(exc)) from None
    finally:
        cur.close()
    return [line for _, text in plan for line in str(text).splitlines()]


def explain(ctx: Context, session: SessionState, s: st.Explain) -> Rows:
    expr = rewrite(s.query.expr)
    if table_refs(expr):
        ctx.catch_up()
    options = ReadOptions.of(session.system_variables)
    lines = [f"STRATA READ PLAN ({s.level})"]
    missing, hidden = 0, 0
    for label, read in _snapshots(ctx, session, expr):
        if read is None:
            lines.append(f"VIEW {label}: its definition is not shown (you may not read every table it reads)")
            hidden += 1
            continue
        table_lines, uncached = _table_lines(ctx, session, label, read, options, s.level == "VERBOSE")
        lines.extend(table_lines)
        missing += uncached
    lines.append("EXECUTOR PLAN (DuckDB)")
    if hidden:
        lines.append("  left out: it would show what the views' definitions read")
    elif missing:
        lines.append(f"  left out: {missing} cold rowset(s) the read needs are not in this server's file cache, "
                     "and EXPLAIN does not fetch them")
    else:
        lines.extend(f"  {line}" for line in _executor_plan(ctx, session, expr))
    return Rows([COLUMN], [(line,) for line in lines])
