"""SELECT: every table reference becomes a DuckDB view of its snapshot (latest or AS OF), then
DuckDB runs the rewritten query."""

from __future__ import annotations

import contextlib
import itertools
import uuid
from collections.abc import Iterator
from dataclasses import replace
from datetime import UTC, datetime
from typing import Any

import duckdb
import pyarrow as pa
from sqlglot import exp

from projections.names import name_holder_at, name_taken_ts_ms
from projections.retention import earliest_instant_ms
from projections.snapshot import Snapshot
from projections.state import TableState, TagState, ViewState
from query import history, information_schema
from query.change_feed import changes_sql, check_history, commit_at, commits_between
from query.context import Context, Rows, SessionState, SqlFailure
from query.doris_variables import ReadOptions
from query.functions import to_duckdb
from query.labels import column_labels
from query.parser import (
    AsOf,
    AsOfTag,
    AsOfTime,
    AsOfVersion,
    IncrementalArgumentError,
    IncrementalRead,
    Query,
    change_range,
    parse_statement,
    table_refs,
)
from query.parser.refs import TableRef, is_dual
from query.parser.statements import HistoryRead, QualifiedName
from query.partition_pruning import pruned
from query.relation import snapshot_sql
from query.s3_source import bind_s3_calls
from query.sandbox import check_expression
from query.session_functions import session_zone, substitute
from query.streamed_rows import BATCH_ROWS, StreamedRows, open_result, streamable_types
from schemas.errors import ErrorCode
from storage.set_values import SET_DUCK_TYPE

_view_ids = itertools.count(1)
# Views read through views at most this deep; deeper is refused rather than recursing without end.
MAX_VIEW_DEPTH = 32
ViewKey = tuple[int, str]  # (database id, lower-cased view name)


def parse_instant(text: str, session: SessionState) -> int:
    """'YYYY-MM-DD HH:MM:SS[.ffffff]' in the session time zone → UTC milliseconds."""
    for fmt in ("%Y-%m-%d %H:%M:%S.%f", "%Y-%m-%d %H:%M:%S", "%Y-%m-%d"):
        try:
            moment = datetime.strptime(text.strip(), fmt)
            break
        except ValueError:
            continue
    else:
        raise SqlFailure(ErrorCode.WRONG_VALUE, f"'{text}' is not a valid timestamp; expected "
                                                "'YYYY-MM-DD HH:MM:SS[.ffffff]'")
    return int(moment.replace(tzinfo=session_zone(session)).timestamp() * 1000)


def format_instant(ts_ms: int, session: SessionState) -> str:
    moment = datetime.fromtimestamp(ts_ms / 1000, tz=session_zone(session))
    return moment.strftime("%Y-%m-%d %H:%M:%S.%f")[:-3]


def now_ms() -> int:
    return int(datetime.now(tz=UTC).timestamp() * 1000)


def live_tag(table: TableState, name: str, session: SessionState) -> TagState:
    """The tag `name` of `table`, refused once dropped or expired."""
    tag = table.tags.get(name.lower())
    if tag is None:
        raise SqlFailure(ErrorCode.WRONG_ARGUMENTS, f"table '{table.name}' has no tag '{name}' (SHOW TAGS ON "
                                                    f"{table.name} lists them)")
    if not tag.live_at(now_ms()):
        assert tag.expires_ts_ms is not None
        raise SqlFailure(ErrorCode.WRONG_ARGUMENTS, f"tag '{tag.name}' of '{table.name}' expired at "
                                                    f"{format_instant(tag.expires_ts_ms, session)}")
    return tag


def _named_instant(ctx: Context, session: SessionState, table: TableState, as_of: AsOf) -> tuple[int, str]:
    """The instant a time-travel clause names, and how to name it in an error."""
    if isinstance(as_of, AsOfTag):
        return live_tag(table, as_of.name, session).ts_ms, f"tag '{as_of.name}'"
    if isinstance(as_of, AsOfVersion):
        _check_time_travel(table)
        commit = ctx.projection.commit(table.table_id, as_of.n)
        if commit is None:
            raise SqlFailure(ErrorCode.WRONG_ARGUMENTS,
                             f"table '{table.name}' has no commit {as_of.n} (commits are 1 to {table.commit_number})")
        return commit.ts_ms, f"commit {as_of.n}"
    assert isinstance(as_of, AsOfTime)
    return parse_instant(as_of.ts, session), f"'{as_of.ts}'"


def _check_time_travel(table: TableState) -> None:
    if not table.time_travel:
        raise SqlFailure(ErrorCode.NOT_SUPPORTED_YET,
                         f"table '{table.name}' has no time travel; enable it with ALTER TABLE {table.name} "
                         "SET (\"enable_time_travel\" = \"true\")")


def _check_instant(ctx: Context, session: SessionState, table: TableState, ts: int, named: str) -> None:
    """Whether `table` can serve a read at `ts`: time travel on, inside its history, not in the future."""
    _check_time_travel(table)
    now = now_ms()
    if ts > now:
        raise SqlFailure(ErrorCode.WRONG_ARGUMENTS, f"{named} is in the future (now is {format_instant(now, session)})")
    if ts < table.created_ts_ms:
        raise SqlFailure(ErrorCode.WRONG_ARGUMENTS,
                         f"{named} is before table '{table.name}' existed (created "
                         f"{format_instant(table.created_ts_ms, session)})")
    earliest = earliest_instant_ms(table, now, ctx.config.time_travel_day_s)
    if earliest is not None and ts < earliest:
        days = table.properties.get("time_travel_retention_days", "7")
        raise SqlFailure(ErrorCode.WRONG_ARGUMENTS,
                         f"{named} is beyond the time-travel window of '{table.name}' (retention {days} days, "
                         f"history kept since {format_instant(table.time_travel_since_ts_ms or 0, session)}); "
                         f"the earliest instant that works is {format_instant(earliest, session)}")
    if table.first_commit_ts_ms is None or ts < table.first_commit_ts_ms:
        first = table.first_commit_ts_ms
        raise SqlFailure(ErrorCode.WRONG_ARGUMENTS,
                         f"{named} is before the first commit of '{table.name}'"
                         + (f" (at {format_instant(first, session)})" if first is not None else " (none yet)"))


def as_of_ms(ctx: Context, session: SessionState, table: TableState, as_of: AsOf) -> int:
    """The instant a time-travel clause names, checked against what the table itself can serve.

    For writes that act on the table's own history (RESTORE): an instant before the table took its
    name by REPLACE belongs to another table's history and is refused."""
    ts, named = _named_instant(ctx, session, table, as_of)
    taken = name_taken_ts_ms(table)
    if taken is not None and ts < taken:
        raise SqlFailure(ErrorCode.NOT_SUPPORTED_YET,
                         f"{named} is before table '{table.name}' took its name by ALTER TABLE … REPLACE WITH "
                         f"TABLE (at {format_instant(taken, session)}); its history then is another table's")
    _check_instant(ctx, session, table, ts, named)
    return ts


def as_of_table(ctx: Context, session: SessionState, table: TableState, as_of: AsOf) -> tuple[TableState, int]:
    """The table a name denoted at the instant a time-travel clause names, and that instant: a read
    before ALTER TABLE … REPLACE WITH TABLE gave the name to `table` reads the table that held it
    then (projections.names). FOR VERSION AS OF numbers `table`'s own commits, so a commit made
    before it took the name is refused rather than read under a name it did not have. A tag is
    `table`'s own and keeps its snapshot whatever the time-travel window (or its absence) says."""
    if isinstance(as_of, AsOfTag):
        return table, live_tag(table, as_of.name, session).ts_ms
    ts, named = _named_instant(ctx, session, table, as_of)
    holder = name_holder_at(ctx.projection, table, ts)
    if holder is None:
        raise SqlFailure(ErrorCode.WRONG_ARGUMENTS,
                         f"{named}: the table named '{table.name}' then was replaced and dropped for good; its "
                         "history is no longer kept")
    if holder is not table and isinstance(as_of, AsOfVersion):
        raise SqlFailure(ErrorCode.NOT_SUPPORTED_YET,
                         f"{named} of '{table.name}' was made before it took this name by ALTER TABLE … REPLACE "
                         "WITH TABLE; read that instant with FOR TIME AS OF")
    _check_instant(ctx, session, holder, ts, named)
    return holder, ts


def snapshot_for(ctx: Context, session: SessionState, name: QualifiedName, as_of: AsOf | None) -> Snapshot:
    table = ctx.table(session, name)
    if as_of is None:
        return ctx.snapshots.resolve(table)
    holder, ts = as_of_table(ctx, session, table, as_of)
    return ctx.snapshots.resolve(holder, ts)


def _incr_commit(ctx: Context, session: SessionState, table: TableState, bound: AsOf, which: str) -> int:
    """An @incr bound as a commit number: the last commit at or before an instant; a tag's commit."""
    if isinstance(bound, AsOfTag):
        try:
            return live_tag(table, bound.name, session).commit_number
        except SqlFailure as exc:
            raise SqlFailure(ErrorCode.WRONG_ARGUMENTS, f"@incr '{which}Tag': {exc.message}") from None
    if isinstance(bound, AsOfVersion):
        if bound.n > table.commit_number:
            raise SqlFailure(ErrorCode.WRONG_ARGUMENTS, f"@incr '{which}Version' {bound.n}: table '{table.name}' has "
                                                        f"no commit {bound.n} (its latest is {table.commit_number})")
        return bound.n
    try:
        ts = parse_instant(bound.ts, session)
    except SqlFailure as exc:
        raise SqlFailure(ErrorCode.WRONG_ARGUMENTS, f"@incr '{which}Timestamp': {exc.message}") from None
    now = now_ms()
    if ts > now:
        raise SqlFailure(ErrorCode.WRONG_ARGUMENTS, f"@incr '{which}Timestamp' '{bound.ts}' is in the future "
                                                    f"(now is {format_instant(now, session)})")
    return commit_at(ctx.projection, table, ts)


def _check_start_after_takeover(ctx: Context, session: SessionState, table: TableState, bound: AsOf,
                                start: int) -> None:
    """A change feed reads one table id's commits: it cannot start before the table took its name
    by ALTER TABLE … REPLACE WITH TABLE (the rows the name showed changed then without a commit of it)."""
    taken = name_taken_ts_ms(table)
    if taken is None:
        return
    if isinstance(bound, AsOfTime):
        since = parse_instant(bound.ts, session)
    else:
        commit = ctx.projection.commit(table.table_id, start) if start else None
        since = commit.ts_ms if commit is not None else table.created_ts_ms
    if since < taken:
        raise SqlFailure(ErrorCode.NOT_SUPPORTED_YET,
                         f"@incr on '{table.name}' can only start after it took its name by ALTER TABLE … REPLACE "
                         f"WITH TABLE (at {format_instant(taken, session)})")


def incremental_sql(ctx: Context, session: SessionState, name: QualifiedName, read: IncrementalRead) -> str:
    """DuckDB SQL of `t@incr(...)`: the change rows of commits in (start, end]."""
    table = ctx.table(session, name)
    check_history(ctx, table, [])
    try:
        bounds = change_range(read)
    except IncrementalArgumentError as exc:
        raise SqlFailure(ErrorCode.WRONG_ARGUMENTS, str(exc)) from None
    start = _incr_commit(ctx, session, table, bounds.start, "start")
    _check_start_after_takeover(ctx, session, table, bounds.start, start)
    end = None if bounds.end is None else _incr_commit(ctx, session, table, bounds.end, "end")
    return changes_sql(ctx, table, commits_between(ctx.projection, table, start, end))


def versions_sql(ctx: Context, session: SessionState, name: QualifiedName, read: HistoryRead) -> str:
    """DuckDB SQL of `t FOR SYSTEM_TIME …`: every version of the table's rows the range meets."""
    table = ctx.table(session, name)
    bounds = [None if text is None else parse_instant(text, session) for text in (read.start, read.end)]
    start_ms, end_ms = bounds
    if start_ms is not None and end_ms is not None and end_ms < start_ms:
        raise SqlFailure(ErrorCode.WRONG_ARGUMENTS, f"FOR SYSTEM_TIME {read.kind} '{read.start}' … '{read.end}': "
                                                    "the range ends before it starts")
    kept = history.history_start_ms(ctx, table, now_ms())
    if start_ms is not None and start_ms < kept:
        raise SqlFailure(ErrorCode.WRONG_ARGUMENTS,
                         f"FOR SYSTEM_TIME on '{table.name}' starts at '{read.start}', before the history kept "
                         f"(from {format_instant(kept, session)}: its time travel window, when time travel was "
                         "enabled, or when it took its name by REPLACE); versions that ended earlier are gone")
    wanted = history.VersionRange(start_ms, end_ms, end_inclusive=read.kind != "FROM")
    return history.history_sql(ctx, table, wanted, kept)


def bind_tables(ctx: Context, session: SessionState, expr: exp.Expr, cur: duckdb.DuckDBPyConnection,
                expanding: tuple[ViewKey, ...] = (), *, views: bool = False) -> str:
    """Replaces every table reference of `expr` by a view of its snapshot (a view reference by its
    definition, bound the same way) and every session function by its value
    (query.session_functions); returns DuckDB SQL. `expanding`: the views whose definitions `expr`
    is part of, outermost first (a view met again there reads itself). `views`: bind every table as a
    temp view on `cur`, for callers that take the SQL apart or put it where a WITH cannot go."""
    expr = to_duckdb(substitute(session, expr), session_zone(session))  # a copy
    for dual in [t for t in expr.find_all(exp.Table) if is_dual(t)]:
        clause = dual.parent
        select = clause.parent if clause is not None else None
        if isinstance(clause, exp.From) and isinstance(select, exp.Select) and not select.args.get("joins"):
            clause.pop()  # SELECT … FROM DUAL is a SELECT without FROM
    qualified: set[tuple[str, str]] = set()  # (db, table) of references a column may name as db.table.col
    # A query's table snapshots become CTEs of the query (inlined, never materialized) rather than temp
    # views: DuckDB binds a view's Parquet scans once more when it is created (~3 ms a table).
    inline = not views and isinstance(expr, exp.Select | exp.SetOperation)
    snapshots: list[tuple[str, str]] = []
    for ref in table_refs(expr):
        alias = ref.node.alias or ref.name
        if not ref.node.alias:
            qualified.add(((ref.db or session.database or "").lower(), ref.name.lower()))
        view = f"__strata_{next(_view_ids)}"
        selected = selected_partitions(ref.node)
        catalog = ref.node.catalog
        if catalog and catalog.lower() != information_schema.CATALOG:
            raise SqlFailure(ErrorCode.NOT_SUPPORTED_YET, f"catalog '{catalog}' is not supported; Strata has only "
                                                          f"'{information_schema.CATALOG}'")
        past = ref.incr is not None or ref.history is not None
        if selected and (past or (ref.db or session.database or "").lower() == "information_schema"):
            raise SqlFailure(ErrorCode.NOT_SUPPORTED_YET, f"PARTITION (...) is not supported on '{ref.name}' here")
        if (ref.db or session.database or "").lower() == "information_schema":
            if past:
                raise SqlFailure(ErrorCode.NOT_SUPPORTED_YET, "information_schema tables have no history")
            data: pa.Table = information_schema.table(ctx, session, ref.name, ref.node)
            cur.register(view, data)
        elif (found := ctx.view(session, QualifiedName(ref.name, ref.db))) is not None:
            cur.execute(f"CREATE TEMP VIEW {view} AS {_view_sql(ctx, session, ref, found, cur, expanding)}")
        elif ref.incr is not None:
            changes = incremental_sql(ctx, session, QualifiedName(ref.name, ref.db), ref.incr)
            cur.execute(f"CREATE TEMP VIEW {view} AS {changes}")
        elif ref.history is not None:
            versions = versions_sql(ctx, session, QualifiedName(ref.name, ref.db), ref.history)
            cur.execute(f"CREATE TEMP VIEW {view} AS {versions}")
        else:
            snapshot = snapshot_for(ctx, session, QualifiedName(ref.name, ref.db), ref.as_of)
            if selected:
                snapshot = only_partitions(snapshot, selected)
            snapshot = pruned(snapshot, ref.node, cur)
            read = snapshot_sql(snapshot, ctx.locator, ReadOptions.of(session.system_variables),
                                ctx.superseded.for_cursor(cur, ctx.locator.hold))
            if inline:
                snapshots.append((view, read))
            else:
                cur.execute(f"CREATE TEMP VIEW {view} AS {read}")
        ref.node.replace(exp.Table(this=exp.to_identifier(view), alias=exp.TableAlias(
            this=exp.to_identifier(alias))))
    # After the tables: the views it registers are not table references to bind.
    bind_s3_calls(ctx, expr, cur, in_view=bool(expanding))  # fetched by Strata, never by DuckDB
    _unqualify_columns(expr, qualified)
    return _with_snapshots(expr, snapshots)


def _with_snapshots(expr: exp.Expr, snapshots: list[tuple[str, str]]) -> str:
    """DuckDB SQL of `expr` with each (name, snapshot SQL) as a NOT MATERIALIZED CTE ahead of its own
    CTEs (which may read them). The snapshot SQL is put in after generation, in place of a marker (a
    random token, which no query text can hold), so sqlglot never parses or regenerates it."""
    if not snapshots:
        return expr.sql(dialect="duckdb")
    token = uuid.uuid4().hex
    ctes = [exp.CTE(this=exp.select(exp.Literal.string(f"{token}{name}")), alias=exp.TableAlias(
        this=exp.to_identifier(name)), materialized=False) for name, _ in snapshots]
    existing = expr.args.get("with_")
    if isinstance(existing, exp.With):
        existing.set("expressions", [*ctes, *existing.expressions])
    else:
        expr.set("with_", exp.With(expressions=ctes))
    sql = expr.sql(dialect="duckdb")
    for name, read in snapshots:
        marker = f"(SELECT '{token}{name}')"
        assert sql.count(marker) == 1, "a snapshot's place in the query"
        sql = sql.replace(marker, f"({read})")
    return sql


def _unqualify_columns(expr: exp.Expr, qualified: set[tuple[str, str]]) -> None:
    """MySQL and Doris let a column name its table's database, `db.t.c` (dbt-doris' snapshots do); the
    bound view is aliased `t`, so the database part goes."""
    for column in expr.find_all(exp.Column):
        if column.args.get("db") is not None and (column.db.lower(), column.table.lower()) in qualified:
            column.set("db", None)


def duck_name(name: str) -> str:
    return '"' + name.replace('"', '""') + '"'


def view_body(definition: str) -> exp.Expr:
    """A view's stored query, parsed and checked by the sandbox: what a definition names is read with
    the definer's rights, so it must never reach a file, a URL or a setting (query.sandbox)."""
    body = parse_statement(definition)
    if not isinstance(body, Query):
        raise SqlFailure(ErrorCode.UNKNOWN_ERROR, f"a view's definition is not a query: {definition[:80]}")
    check_expression(body.expr)
    return body.expr


def _view_sql(ctx: Context, session: SessionState, ref: TableRef, view: ViewState, cur: duckdb.DuckDBPyConnection,
              expanding: tuple[ViewKey, ...]) -> str:
    """DuckDB SQL of a view reference: its definition, bound with the definer's rights (the reader
    needs SELECT_PRIV on the view only, checked by query.access as for a table), with the view's
    columns picked by name, so columns added to a table later stay out of it, as in Doris."""
    if ref.as_of is not None or ref.incr is not None or ref.history is not None or selected_partitions(ref.node):
        raise SqlFailure(ErrorCode.NOT_SUPPORTED_YET,
                         f"'{view.name}' is a view: FOR TIME AS OF, FOR TAG AS OF, FOR SYSTEM_TIME, @incr and "
                         "PARTITION apply to tables; put the clause on the tables inside the view's definition")
    key = (view.db_id, view.name.lower())
    if key in expanding:
        raise SqlFailure(ErrorCode.VIEW_RECURSIVE, f"view '{view.name}' reads itself (through "
                                                   f"{len(expanding)} view(s))")
    if len(expanding) >= MAX_VIEW_DEPTH:
        raise SqlFailure(ErrorCode.NOT_SUPPORTED_YET, f"views nest deeper than {MAX_VIEW_DEPTH} levels")
    body = view_body(view.definition)
    inner = bind_tables(ctx, session, body, cur, (*expanding, key))
    labels = unique_labels([label for label, _ in result_labels(cur, body, inner)])
    known = {label.lower() for label in labels}
    for column in view.columns:
        if column.source.lower() not in known:
            raise SqlFailure(ErrorCode.BAD_FIELD_ERROR,
                             f"view '{view.name}' reads column '{column.source}', which its query no longer gives "
                             "(a table it reads changed); redefine the view with ALTER VIEW")
    picked = ", ".join(f"{duck_name(c.source)} AS {duck_name(c.name)}" for c in view.columns)
    return f"SELECT {picked} FROM ({inner}) AS __view({', '.join(duck_name(label) for label in labels)})"


def unique_labels(labels: list[str]) -> list[str]:
    """Labels made distinct as DuckDB does a subquery's names (case-insensitively: `a`, `a_1`, …)."""
    seen: set[str] = set()
    unique = []
    for label in labels:
        candidate, n = label, 0
        while candidate.lower() in seen:
            n += 1
            candidate = f"{label}_{n}"
        seen.add(candidate.lower())
        unique.append(candidate)
    return unique


def result_labels(cur: duckdb.DuckDBPyConnection, query: exp.Expr, sql: str) -> list[tuple[str, str]]:
    """(label, DuckDB type) of each column of `query`, bound as `sql`: MySQL's labels (query.labels),
    which, unlike DuckDB's names, do not change with the values session functions take. A view
    names its query's columns by these labels (`unique_labels`), so it picks them by name, and a
    column a table gains later (a `*` then gives one more) stays out of it, as in Doris."""
    try:
        described = cur.execute(f"DESCRIBE {sql}").fetchall()
    except duckdb.Error as exc:
        raise SqlFailure(*duck_error(exc)) from None
    labels = column_labels(query, [str(row[0]) for row in described])
    return list(zip(labels, [str(row[1]) for row in described], strict=True))


def selected_partitions(node: exp.Table) -> tuple[str, ...]:
    """`t PARTITION (p1, p2)`: the partition names a reference is limited to (none: all)."""
    partition = node.args.get("partition")
    return tuple(p.name for p in partition.expressions) if isinstance(partition, exp.Partition) else ()


def only_partitions(snapshot: Snapshot, names: tuple[str, ...]) -> Snapshot:
    """The snapshot limited to the named partitions (those of the snapshot's instant); an unknown
    name is an error, as in Doris, rather than silently reading every partition."""
    by_name = {p.name.lower(): p.partition_id for p in snapshot.partitions}
    for name in names:
        if name.lower() not in by_name:
            raise SqlFailure(ErrorCode.UNKNOWN_PARTITION,
                             f"Unknown partition '{name}' in table '{snapshot.table.name}'")
    wanted = {by_name[name.lower()] for name in names}
    return replace(snapshot, partitions=tuple(p for p in snapshot.partitions if p.partition_id in wanted))


def _sets_hidden(rows: list[tuple[Any, ...]], types: list[str]) -> list[tuple[Any, ...]]:
    """Rows with BITMAP and HLL values as NULL: Doris sends no value of these types to a MySQL client
    (return_object_data_as_binary off); functions such as bitmap_to_string give what they hold."""
    hidden = [i for i, kind in enumerate(types) if kind == SET_DUCK_TYPE]
    if not hidden:
        return rows
    return [tuple(None if i in hidden else value for i, value in enumerate(row)) for row in rows]


def run_query(ctx: Context, session: SessionState, expr: exp.Expr, *, caught_up: bool = False) -> Rows:
    """Every SELECT, with or without FROM: DuckDB runs it, with the labels MySQL would give.
    `caught_up`: the caller has just waited for the replica (`Context.catch_up`)."""
    reads_tables = bool(table_refs(expr))
    # Streaming costs a small result a little more than fetching it (the Arrow reader, a hop to the
    # encoding thread): a query that reads no table, or with a small LIMIT, is fetched whole.
    stream = session.arrow_results or (session.stream_results and reads_tables and not limited_below(expr, BATCH_ROWS)
                                       and not one_row(expr))
    for attempt in (1, 2):
        cur = ctx.cursor()
        streamed = False
        try:
            if reads_tables and not caught_up and attempt == 1:
                # Read-your-writes: the log's end is asked for while the tables are bound (a query that
                # reads no table, SELECT 1 or a connection pool's ping, has nothing to wait for).
                cur, sql = _bound_fenced(ctx, session, expr, cur)
            else:
                sql = bind_tables(ctx, session, expr, cur)
            if stream:
                opened = open_result(cur, sql, BATCH_ROWS, bind_first=aggregates(expr))
                types = [kind for _, kind in opened.described]
                labels = column_labels(expr, [name for name, _ in opened.described])
                if session.arrow_results or streamable_types(types):
                    batches = StreamedRows(cur, opened.reader(), ctx.locator.take_pins(),
                                           lambda exc: SqlFailure(*duck_error(exc)))
                    streamed = True  # the cursor is the stream's now
                    return Rows(labels, [], types, batches=batches)
                return Rows(labels, _sets_hidden(opened.fetchall(), types), types)
            result = cur.execute(sql)
            description = result.description or []
            types = [str(d[1]) for d in description]
            return Rows(column_labels(expr, [d[0] for d in description]), _sets_hidden(result.fetchall(), types),
                        types)
        except duckdb.IOException as exc:
            # A local copy removed under a long query (its rowset cooled meanwhile): the snapshot,
            # resolved again, names where the rowset is now.
            if attempt == 2:
                raise SqlFailure(*duck_error(exc)) from None
            ctx.catch_up()
        except duckdb.Error as exc:
            raise SqlFailure(*duck_error(exc)) from None
        finally:
            if not streamed:
                cur.close()
    raise AssertionError("unreachable")


def _bound_fenced(ctx: Context, session: SessionState, expr: exp.Expr,
                  cur: duckdb.DuckDBPyConnection) -> tuple[duckdb.DuckDBPyConnection, str]:
    """`bind_tables` made while the log's end is asked for (`Context.read_fenced`): the cursor and SQL of
    the binding that stands — on a fresh cursor, in the rare case the replica was behind the log as the
    query came (`bind_tables` rewrites a copy of `expr`, so binding it again starts from the query)."""
    rebound: list[duckdb.DuckDBPyConnection] = []

    def again() -> str:
        cur.close()
        fresh = ctx.cursor()
        try:
            sql = bind_tables(ctx, session, expr, fresh)
        except BaseException:
            fresh.close()
            raise
        rebound.append(fresh)
        return sql

    sql = ctx.read_fenced(lambda: bind_tables(ctx, session, expr, cur), again)
    return (rebound[0] if rebound else cur), sql


def aggregates(expr: exp.Expr) -> bool:
    """Whether the query groups or aggregates anywhere: its result types are then often ones that cannot
    stream (SUM of integers is a HUGEINT), which `open_result` is told."""
    return expr.find(exp.AggFunc, exp.Group) is not None


def limited_below(expr: exp.Expr, rows: int) -> bool:
    """Whether the query's own LIMIT (a literal) keeps it to at most `rows` rows."""
    limit = expr.args.get("limit")
    count = limit.expression if isinstance(limit, exp.Limit) else None
    return isinstance(count, exp.Literal) and count.is_int and int(count.this) <= rows


def one_row(expr: exp.Expr) -> bool:
    """Whether the query is an aggregate without GROUP BY (`SELECT count(*) FROM t WHERE …`), which gives
    one row (none under a HAVING): fetched whole, one bind of the query instead of two."""
    if not isinstance(expr, exp.Select) or expr.args.get("group") or expr.args.get("distinct"):
        return False
    projections = expr.expressions
    if any(p.find(exp.Window) for p in projections):
        return False
    # Each output column an aggregate of this SELECT (not of a subquery of it) or a constant.
    def aggregated(p: exp.Expr) -> bool:
        return any(agg.parent_select is expr for agg in p.find_all(exp.AggFunc))
    return any(aggregated(p) for p in projections) and all(
        aggregated(p) or not any(c.parent_select is expr for c in p.find_all(exp.Column)) for p in projections)


def query_table(ctx: Context, session: SessionState, expr: exp.Expr) -> pa.Table:
    """A query's whole result as Arrow, its columns labelled as a client would see them."""
    with query_batches(ctx, session, expr) as reader:
        return reader.read_all()


@contextlib.contextmanager
def query_batches(ctx: Context, session: SessionState, expr: exp.Expr) -> Iterator[pa.RecordBatchReader]:
    """A query's result as Arrow record batches read as they are taken (for writers of files: INTO
    OUTFILE, EXPORT, which never hold the whole result), columns labelled as a client would see them."""
    if table_refs(expr):
        ctx.catch_up()
    cur = ctx.cursor()
    try:
        opened = open_result(cur, bind_tables(ctx, session, expr, cur), BATCH_ROWS, bind_first=True)
        labels = column_labels(expr, [name for name, _ in opened.described])
        reader = opened.reader()
        for field in reader.schema:
            # A BITMAP/HLL value (storage.set_values) has no text a file could carry that Doris would read back.
            if pa.types.is_list(field.type) and pa.types.is_uint64(field.type.value_type):
                raise SqlFailure(ErrorCode.NOT_SUPPORTED_YET, f"column '{field.name}' is a BITMAP or HLL, which is "
                                                              "not written to files; write bitmap_to_string(…) or "
                                                              "hll_cardinality(…) of it")
        schema = pa.schema([f.with_name(label) for f, label in zip(reader.schema, labels, strict=True)])
        yield pa.RecordBatchReader.from_batches(schema, _labelled(reader, schema))
    except duckdb.Error as exc:
        raise SqlFailure(*duck_error(exc)) from None
    finally:
        cur.close()


def _labelled(reader: pa.RecordBatchReader, schema: pa.Schema) -> Iterator[pa.RecordBatch]:
    try:
        for batch in reader:
            yield pa.RecordBatch.from_arrays(batch.columns, schema=schema)
    except duckdb.Error as exc:
        raise SqlFailure(*duck_error(exc)) from None


def duck_error(exc: duckdb.Error) -> tuple[int, str]:
    """A DuckDB error as a MySQL error code and a message without DuckDB's internals."""
    message = str(exc).split("\n")[0]
    for prefix in ("Binder Error: ", "Conversion Error: ", "Parser Error: ", "Catalog Error: ",
                   "Invalid Input Error: ", "Constraint Error: ", "Out of Range Error: "):
        message = message.replace(prefix, "")
    message = message.replace("__strata_", "view ")
    if isinstance(exc, duckdb.BinderException) and "not found" in message:
        return ErrorCode.BAD_FIELD_ERROR, message
    if isinstance(exc, duckdb.BinderException) and message.startswith("Ambiguous reference"):
        return ErrorCode.NON_UNIQ_ERROR, message
    if isinstance(exc, duckdb.CatalogException) and "Function with name" in message:
        return ErrorCode.SP_DOES_NOT_EXIST, message
    if isinstance(exc, duckdb.ConversionException):
        return ErrorCode.TRUNCATED_WRONG_VALUE, message
    if isinstance(exc, duckdb.OutOfRangeException):
        return ErrorCode.DATA_OUT_OF_RANGE, message
    return ErrorCode.UNKNOWN_ERROR, message
