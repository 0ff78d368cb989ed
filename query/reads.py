"""SELECT: every table reference becomes a DuckDB view of its snapshot (latest or AS OF), then
DuckDB runs the rewritten query."""

from __future__ import annotations

import itertools
from dataclasses import replace
from datetime import UTC, datetime

import duckdb
import pyarrow as pa
from sqlglot import exp

from projections.retention import earliest_instant_ms
from projections.snapshot import Snapshot, resolve
from projections.state import TableState
from query import information_schema
from query.change_feed import changes_sql, check_history, commit_at, commits_between
from query.context import Context, Rows, SessionState, SqlFailure
from query.labels import column_labels
from query.parser import (
    AsOf,
    AsOfTime,
    AsOfVersion,
    IncrementalArgumentError,
    IncrementalRead,
    change_range,
    table_refs,
)
from query.parser.refs import is_dual
from query.parser.statements import QualifiedName
from query.relation import snapshot_sql
from query.session_functions import session_zone, substitute
from query.system_variables import session_flag
from schemas.errors import ErrorCode

_view_ids = itertools.count(1)


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


def as_of_ms(ctx: Context, session: SessionState, table: TableState, as_of: AsOf) -> int:
    """The instant a time-travel clause names, checked against what the table can serve."""
    if not table.time_travel:
        raise SqlFailure(ErrorCode.NOT_SUPPORTED_YET,
                         f"table '{table.name}' has no time travel; enable it with ALTER TABLE {table.name} "
                         "SET (\"enable_time_travel\" = \"true\")")
    if isinstance(as_of, AsOfVersion):
        commit = ctx.projection.commit(table.table_id, as_of.n)
        if commit is None:
            raise SqlFailure(ErrorCode.WRONG_ARGUMENTS,
                             f"table '{table.name}' has no commit {as_of.n} (commits are 1 to {table.commit_number})")
        ts, named = commit.ts_ms, f"commit {as_of.n}"
    else:
        assert isinstance(as_of, AsOfTime)
        ts, named = parse_instant(as_of.ts, session), f"'{as_of.ts}'"
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
    return ts


def snapshot_for(ctx: Context, session: SessionState, name: QualifiedName, as_of: AsOf | None) -> Snapshot:
    table = ctx.table(session, name)
    ts = None if as_of is None else as_of_ms(ctx, session, table, as_of)
    return resolve(ctx.projection, table, ts)


def _incr_commit(ctx: Context, session: SessionState, table: TableState, bound: AsOf, which: str) -> int:
    """An @incr bound as a commit number: the last commit at or before an instant."""
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


def incremental_sql(ctx: Context, session: SessionState, name: QualifiedName, read: IncrementalRead) -> str:
    """DuckDB SQL of `t@incr(...)`: the change rows of commits in (start, end]."""
    table = ctx.table(session, name)
    check_history(ctx, table, [])
    try:
        bounds = change_range(read)
    except IncrementalArgumentError as exc:
        raise SqlFailure(ErrorCode.WRONG_ARGUMENTS, str(exc)) from None
    start = _incr_commit(ctx, session, table, bounds.start, "start")
    end = None if bounds.end is None else _incr_commit(ctx, session, table, bounds.end, "end")
    return changes_sql(ctx, table, commits_between(ctx.projection, table, start, end))


def bind_tables(ctx: Context, session: SessionState, expr: exp.Expr, cur: duckdb.DuckDBPyConnection) -> str:
    """Replaces every table reference of `expr` by a view of its snapshot and every session function
    by its value (query.session_functions); returns DuckDB SQL."""
    expr = substitute(session, expr)  # a copy
    for dual in [t for t in expr.find_all(exp.Table) if is_dual(t)]:
        clause = dual.parent
        select = clause.parent if clause is not None else None
        if isinstance(clause, exp.From) and isinstance(select, exp.Select) and not select.args.get("joins"):
            clause.pop()  # SELECT … FROM DUAL is a SELECT without FROM
    for ref in table_refs(expr):
        alias = ref.node.alias or ref.name
        view = f"__strata_{next(_view_ids)}"
        selected = _selected_partitions(ref.node)
        if selected and (ref.incr is not None or (ref.db or session.database or "").lower() == "information_schema"):
            raise SqlFailure(ErrorCode.NOT_SUPPORTED_YET, f"PARTITION (...) is not supported on '{ref.name}' here")
        if (ref.db or session.database or "").lower() == "information_schema":
            if ref.incr is not None:
                raise SqlFailure(ErrorCode.NOT_SUPPORTED_YET, "information_schema tables have no change feed")
            data: pa.Table = information_schema.table(ctx, session, ref.name, ref.node)
            cur.register(view, data)
        elif ref.incr is not None:
            changes = incremental_sql(ctx, session, QualifiedName(ref.name, ref.db), ref.incr)
            cur.execute(f"CREATE TEMP VIEW {view} AS {changes}")
        else:
            snapshot = snapshot_for(ctx, session, QualifiedName(ref.name, ref.db), ref.as_of)
            if selected:
                snapshot = _only_partitions(snapshot, selected)
            hidden = session_flag(session.system_variables, "show_hidden_columns")
            cur.execute(f"CREATE TEMP VIEW {view} AS {snapshot_sql(snapshot, ctx.locator, show_hidden=hidden)}")
        ref.node.replace(exp.Table(this=exp.to_identifier(view), alias=exp.TableAlias(
            this=exp.to_identifier(alias))))
    return expr.sql(dialect="duckdb")


def _selected_partitions(node: exp.Table) -> tuple[str, ...]:
    """`t PARTITION (p1, p2)`: the partition names a reference is limited to (none: all)."""
    partition = node.args.get("partition")
    return tuple(p.name for p in partition.expressions) if isinstance(partition, exp.Partition) else ()


def _only_partitions(snapshot: Snapshot, names: tuple[str, ...]) -> Snapshot:
    """The snapshot limited to the named partitions (those of the snapshot's instant); an unknown
    name is an error, as in Doris, rather than silently reading every partition."""
    by_name = {p.name.lower(): p.partition_id for p in snapshot.partitions}
    for name in names:
        if name.lower() not in by_name:
            raise SqlFailure(ErrorCode.UNKNOWN_PARTITION,
                             f"Unknown partition '{name}' in table '{snapshot.table.name}'")
    wanted = {by_name[name.lower()] for name in names}
    return replace(snapshot, partitions=tuple(p for p in snapshot.partitions if p.partition_id in wanted))


def run_query(ctx: Context, session: SessionState, expr: exp.Expr) -> Rows:
    """Every SELECT, with or without FROM: DuckDB runs it, with the labels MySQL would give."""
    if table_refs(expr):
        ctx.catch_up()  # a query that reads no table (SELECT 1, a connection pool's ping) has nothing to wait for
    for attempt in (1, 2):
        cur = ctx.cursor()
        try:
            sql = bind_tables(ctx, session, expr, cur)
            result = cur.execute(sql)
            description = result.description or []
            return Rows(column_labels(expr, [d[0] for d in description]), result.fetchall(),
                        [str(d[1]) for d in description])
        except duckdb.IOException as exc:
            # A local copy removed under a long query (its rowset cooled meanwhile): the snapshot,
            # resolved again, names where the rowset is now.
            if attempt == 2:
                raise SqlFailure(*duck_error(exc)) from None
            ctx.catch_up()
        except duckdb.Error as exc:
            raise SqlFailure(*duck_error(exc)) from None
        finally:
            cur.close()
    raise AssertionError("unreachable")


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
