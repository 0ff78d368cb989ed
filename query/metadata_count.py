"""`SELECT count(*) FROM t` answered from the row counts of the snapshot's rowsets, without DuckDB.

Only where that is exact by construction: every row of every file the snapshot reads is a visible row.
That holds for a Duplicate Key table (no merge by key, no delete signs: `storage.rowset_sql` reads its
files' rows as they are) with no delete predicate or TRUNCATE in force in any partition read, and no
rowset read only through an earlier version than its last (a time-travel table's version-keeping
compaction output, read at an instant inside its range, holds later rows too); each rowset's `num_rows`
is the row count of the file its writer (a load, or a compaction) made. Anything else — a WHERE, GROUP
BY, HAVING, DISTINCT, LIMIT, a join, a view, a `count(col)`, a Unique or Aggregate table, a table with
deletes — goes through DuckDB as before. The snapshot is resolved as every read resolves it
(`reads.snapshot_for`: time travel and its checks, PARTITION (…) by name), so an answer at T is the
answer DuckDB gives at T.
"""

from __future__ import annotations

from prometheus_client import Counter
from sqlglot import exp

from query.context import Context, Rows, SessionState
from query.labels import column_labels
from query.parser import table_refs
from query.parser.refs import TableRef, is_dual
from query.parser.statements import QualifiedName
from query.reads import only_partitions, selected_partitions, snapshot_for

ANSWERED = Counter("strata_sql_metadata_counts_total", "count(*) of a whole table answered from rowset row counts")

# What a SELECT, its table and its count(*) may carry and still be a plain count of the whole table.
_SELECT_ARGS = {"expressions", "from", "from_"}
_TABLE_ARGS = {"this", "db", "alias", "version", "partition"}
_COUNT_ARGS = {"this", "big_int"}


def _counted_table(expr: exp.Expr) -> exp.Table | None:
    """The table of `SELECT count(*) [AS a] FROM t [AS x] [FOR … AS OF …] [PARTITION (…)]`, else None."""
    if not isinstance(expr, exp.Select) or not {k for k, v in expr.args.items() if v} <= _SELECT_ARGS:
        return None
    if len(expr.expressions) != 1:
        return None
    item = expr.expressions[0]
    count = item.this if isinstance(item, exp.Alias) else item
    if not isinstance(count, exp.Count) or not {k for k, v in count.args.items() if v} <= _COUNT_ARGS:
        return None
    star = count.this
    if not isinstance(star, exp.Star) or any(star.args.values()):
        return None
    source = expr.args.get("from_") or expr.args.get("from")
    table = source.this if isinstance(source, exp.From) else None
    if not isinstance(table, exp.Table) or not {k for k, v in table.args.items() if v} <= _TABLE_ARGS or \
            is_dual(table):
        return None
    return table


def counts_whole_table(expr: exp.Expr) -> bool:
    """Whether `expr` has the shape of `SELECT count(*) FROM t` (whether its count can come from
    metadata depends on the table: `metadata_count`)."""
    return _counted_table(expr) is not None


def metadata_count(ctx: Context, session: SessionState, expr: exp.Expr) -> Rows | None:
    """The answer of a plain `SELECT count(*) FROM t` whose count the rowsets' row counts give exactly;
    None when the query is anything else or the count needs the rows (the caller runs it). The caller
    makes it read-your-writes as any read is (`Context.read_fenced`)."""
    table = _counted_table(expr)
    if table is None:
        return None
    refs = table_refs(expr)
    if len(refs) != 1 or refs[0].node is not table:
        return None
    ref: TableRef = refs[0]
    db = ref.db or session.database or ""
    if ref.incr is not None or ref.history is not None or db.lower() == "information_schema":
        return None
    name = QualifiedName(ref.name, ref.db)
    if ctx.view(session, name) is not None:
        return None
    snapshot = snapshot_for(ctx, session, name, ref.as_of)
    if (selected := selected_partitions(table)):
        snapshot = only_partitions(snapshot, selected)
    if snapshot.table.keys_model != "DUPLICATE" or any(p.deletes for p in snapshot.partitions):
        return None
    if any(r.read_through is not None and r.read_through < r.end_version for r in snapshot.rowsets):
        return None  # a version-keeping rowset read through an earlier version: some of its rows are later

    ANSWERED.inc()
    return Rows(column_labels(expr, ["count_star()"]), [(sum(r.num_rows for r in snapshot.rowsets),)], ["BIGINT"])
