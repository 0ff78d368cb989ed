"""INSERT, DELETE and UPDATE: rows are checked and typed in DuckDB, routed to partitions and
buckets, written as durable rowset files, and only then proposed as one commit."""

from __future__ import annotations

import uuid
from dataclasses import dataclass, replace
from datetime import UTC, datetime

import duckdb
import pyarrow as pa
import pyarrow.compute as pc
from sqlglot import exp

from projections import literal_rows, rows
from projections.state import TableState
from query import group_commit, transactions
from query.context import Context, Done, SessionState, SqlFailure
from query.doris_variables import ReadOptions, session_flag
from query.functions import to_duckdb
from query.parser import statements as st
from query.reads import bind_tables, duck_error
from query.relation import default_sql, duck_type, quote_ident, snapshot_sql
from query.session_functions import session_zone, substitute
from schemas import commands as cmd
from schemas.errors import ErrorCode
from schemas.model import DELETE_SIGN_COLUMN, SEQUENCE_COLUMN, VERSION_COLUMN, Column, Partition, is_hidden


def write_rows(ctx: Context, cur: duckdb.DuckDBPyConnection, table: TableState, source_sql: str,
               targets: list[Column], *, delete_sign: bool = False, label: str | None = None,
               source: str = "insert", partitions: tuple[int, ...] = (),
               allocate: AutoIncrement | None = None) -> int:
    """Writes the rows of `source_sql` (columns a0..an, one per target) as one commit; returns the
    count. With `partitions`, every row must belong to one of them. `allocate` hands out the
    AUTO_INCREMENT values (pass one to learn the first, see `AutoIncrement`)."""
    label = label or f"insert_{uuid.uuid4().hex}"
    sign_from, allocate = _sign_position(targets), allocate or AutoIncrement.of(ctx, table)
    if table.auto_partition is not None and not partitions and not delete_sign:
        return _write_creating_partitions(ctx, cur, table, source_sql, targets, label=label, source=source,
                                          sign_from=sign_from, allocate=allocate)
    data = prepare_rows(cur, table, source_sql, targets, delete_sign=delete_sign, partitions=partitions,
                        sign_from=sign_from, allocate=allocate)
    if data.num_rows == 0:
        return 0
    return commit_rows(ctx, table, data, label=label, source=source)


# Commits of an AUTO PARTITION load lost to concurrent partition creation before the statement gives up.
_AUTO_PARTITION_ATTEMPTS = 5


def _write_creating_partitions(ctx: Context, cur: duckdb.DuckDBPyConnection, table: TableState, source_sql: str,
                               targets: list[Column], *, label: str, source: str, sign_from: int | None,
                               allocate: rows.Allocate) -> int:
    """A load into an AUTO PARTITION table: the partitions its rows need are created by its own commit.
    Their ids are the next ones this replica knows; when another load took them first, the sequencer
    answers CONFLICT and the rows are routed and written again against the catalog as it now is."""
    for attempt in range(_AUTO_PARTITION_ATTEMPTS):
        if attempt:
            ctx.catch_up()
            table = ctx.projection.tables[table.table_id]
        try:
            routed = rows.prepare_rows_creating_partitions(
                cur, table, source_sql, targets, next_partition_id=ctx.projection.next_ids["partition"],
                sign_from=sign_from, allocate=allocate)
        except rows.RowsRejected as exc:
            raise SqlFailure(exc.code, exc.message) from None
        except duckdb.Error as exc:
            raise SqlFailure(*duck_error(exc)) from None
        if routed.data.num_rows == 0:
            return 0
        rowsets = rows.write_rowsets(ctx.tiers, routed.table, routed.data,
                                     default_cooldown_s=ctx.config.storage_cooldown_seconds)
        try:
            ctx.propose(cmd.CommitRowsets(table_id=table.table_id, label=label, rowsets=tuple(rowsets),
                                          num_rows=routed.data.num_rows, source=source,
                                          new_partitions=routed.new_partitions), table_id=table.table_id)
        except SqlFailure as failure:
            if failure.code != ErrorCode.CONFLICT or not routed.new_partitions:
                raise
            continue
        return int(routed.data.num_rows)
    raise SqlFailure(ErrorCode.CONFLICT, f"the partitions of '{table.name}' kept changing under this load "
                                         f"({_AUTO_PARTITION_ATTEMPTS} attempts); retry")


def prepare_rows(cur: duckdb.DuckDBPyConnection, table: TableState, source_sql: str, targets: list[Column], *,
                 delete_sign: bool = False, partitions: tuple[int, ...] = (),
                 sign_from: int | None = None, allocate: rows.Allocate | None = None) -> pa.Table:
    """`rows.prepare_rows`, failing the statement with the rows' error."""
    try:
        return rows.prepare_rows(cur, table, source_sql, targets, delete_sign=delete_sign, partitions=partitions,
                                 sign_from=sign_from, allocate=allocate)
    except rows.RowsRejected as exc:
        raise SqlFailure(exc.code, exc.message) from None
    except duckdb.Error as exc:
        raise SqlFailure(*duck_error(exc)) from None


@dataclass
class AutoIncrement:
    """Values of a table's AUTO_INCREMENT column for one statement (see `rows.allocator`), remembering
    the first value its rows took: MySQL's LAST_INSERT_ID() and the OK packet's insert id (0: none)."""

    allocate: rows.Allocate
    first: int = 0

    @classmethod
    def of(cls, ctx: Context, table: TableState) -> AutoIncrement:
        return cls(rows.allocator(lambda command: ctx.propose(command, table_id=table.table_id), table.table_id))

    def __call__(self, count: int) -> int:
        # A load retried (AUTO PARTITION) allocates again; its last allocation is what it wrote.
        self.first = self.allocate(count)
        return self.first


def commit_rows(ctx: Context, table: TableState, data: pa.Table, *, label: str, source: str = "insert",
                new_partitions: tuple[Partition, ...] = ()) -> int:
    """Writes prepared rows (see `prepare_rows`) as durable rowsets, then proposes them as one commit
    under `label`; returns the count once the commit is applied here. An AUTO PARTITION load passes
    the partitions its rows need (`table` is then the table widened by them)."""
    written = rows.write_rowsets(ctx.tiers, table, data, default_cooldown_s=ctx.config.storage_cooldown_seconds)
    return commit_rowsets(ctx, table, written, data.num_rows, label=label, source=source,
                          new_partitions=new_partitions)


def rowsets_writer(ctx: Context, table: TableState) -> rows.RowsetsWriter:
    """Writes a load's prepared rows a part at a time (a body larger than memory); `commit_rowsets`
    commits what its `finish` returns."""
    return rows.RowsetsWriter(ctx.tiers, table, default_cooldown_s=ctx.config.storage_cooldown_seconds)


def commit_rowsets(ctx: Context, table: TableState, rowsets: list[rows.NewRowset], num_rows: int, *, label: str,
                   source: str, new_partitions: tuple[Partition, ...] = ()) -> int:
    """Proposes written rowsets (`rows.write_rowsets`, a `rowsets_writer`) as one commit under `label`."""
    ctx.propose(cmd.CommitRowsets(table_id=table.table_id, label=label, rowsets=tuple(rowsets),
                                  num_rows=num_rows, source=source, new_partitions=new_partitions),
                table_id=table.table_id)
    return num_rows


# Stand-ins for the hidden columns an INSERT may name that are not schema columns: the delete sign
# (each row's own, see `rows.prepare_rows`) and the version, which the sequencer assigns (a value given
# for it is read and dropped, as Doris fills it with the load's version whatever the load says).
_DELETE_SIGN = Column(unique_id=-1, name=DELETE_SIGN_COLUMN, type="TINYINT", nullable=False)
_VERSION = Column(unique_id=-2, name=VERSION_COLUMN, type="BIGINT", nullable=False)


def _sign_position(targets: list[Column]) -> int | None:
    return targets.index(_DELETE_SIGN) if _DELETE_SIGN in targets else None


def _target(table: TableState, name: str) -> Column | None:
    """The column an INSERT's column list names: a schema column or, on a Unique Key table, one of
    Doris' hidden ones (`__DORIS_SEQUENCE_COL__` of a `sequence_col` table is the column it names)."""
    if table.keys_model == "UNIQUE" and is_hidden(name):
        hidden = {DELETE_SIGN_COLUMN: _DELETE_SIGN, VERSION_COLUMN: _VERSION,
                  SEQUENCE_COLUMN: table.sequence_column()}
        return hidden.get(name.upper())
    column = table.schema_now.column(name)
    return None if column is None or is_hidden(column.name) else column


def _targets(table: TableState, names: tuple[str, ...] | None, *, partial: bool = False) -> list[Column]:
    """The columns the source's a0..an fill. Without a column list: the visible columns; a table with a
    hidden sequence column then needs the list, naming it (Doris refuses the load otherwise) — except
    in a partial update, which keeps the stored sequence value of the keys it updates."""
    schema = table.schema_now
    hidden_sequence = next((c for c in schema.columns if c.name == SEQUENCE_COLUMN), None)
    if names is None:
        targets = list(schema.visible_columns)
    else:
        targets = []
        for name in names:
            column = _target(table, name)
            if column is None:
                raise SqlFailure(ErrorCode.BAD_FIELD_ERROR, f"Unknown column '{name}' in '{table.name}'")
            if column in targets:
                raise SqlFailure(ErrorCode.DUP_FIELDNAME, f"Column '{name}' specified twice")
            targets.append(column)
    if hidden_sequence is not None and hidden_sequence not in targets and not partial:
        raise SqlFailure(ErrorCode.WRONG_ARGUMENTS,
                         f"Table {table.name} has sequence column, need to specify the sequence column")
    return targets


def _source_sql(ctx: Context, session: SessionState, s: st.Insert, targets: list[Column],
                cur: duckdb.DuckDBPyConnection) -> str:
    """The statement's VALUES or query as one SELECT of columns a0..an, checked against the targets."""
    if s.literal_rows is not None:
        if len(s.literal_rows.duck_types) != len(targets):
            raise SqlFailure(ErrorCode.WRONG_VALUE_COUNT, "Column count doesn't match value count")
        view = f"__values_{uuid.uuid4().hex}"
        cur.register(view, s.literal_rows.data)
        return s.literal_rows.select_sql(view)
    if isinstance(s.query, exp.Values):
        for row in s.query.expressions:
            width = len(row.expressions) if isinstance(row, exp.Tuple) else 1
            if width != len(targets):
                raise SqlFailure(ErrorCode.WRONG_VALUE_COUNT, "Column count doesn't match value count")
        aliases = ", ".join(f"a{i}" for i in range(len(targets)))
        # NOW(), DATABASE() … as the session's
        values = to_duckdb(substitute(session, s.query), session_zone(session)).sql(dialect="duckdb")
        return f"SELECT * FROM ({values}) AS __v({aliases})"
    inner = bind_tables(ctx, session, s.query, cur)
    try:
        width = len(cur.execute(f"SELECT * FROM ({inner}) LIMIT 0").description or [])
    except duckdb.Error as exc:
        raise SqlFailure(*duck_error(exc)) from None
    if width != len(targets):
        raise SqlFailure(ErrorCode.WRONG_VALUE_COUNT, "Column count doesn't match value count")
    return f"SELECT * FROM ({inner}) AS __q({', '.join(f'a{i}' for i in range(width))})"


def _partial_update(session: SessionState, table: TableState, names: tuple[str, ...] | None) -> bool:
    """Whether an INSERT updates only the columns it names of the keys it writes: Doris does so on a
    merge-on-write Unique Key table when the session sets enable_unique_key_partial_update and the
    column list leaves some column out."""
    if names is None or table.keys_model != "UNIQUE" or not session_flag(session.system_variables,
                                                                          "enable_unique_key_partial_update"):
        return False
    if table.properties.get("enable_unique_key_merge_on_write", "true").lower() == "false":
        return False
    named = {n.lower() for n in names}
    return any(c.name.lower() not in named for c in table.schema_now.columns)


def insert(ctx: Context, session: SessionState, s: st.Insert) -> Done:
    if s.overwrite:
        return overwrite(ctx, session, s)
    ctx.catch_up()
    table = ctx.table(session, s.table)
    partial = _partial_update(session, table, s.columns)
    targets = _targets(table, s.columns, partial=partial)
    if s.label and ctx.projection.label(table.table_id, s.label):
        raise SqlFailure(ErrorCode.LABEL_ALREADY_EXISTS, f"Label [{s.label}] has already been used")
    allocate = AutoIncrement.of(ctx, table)
    mode = group_commit.session_mode(session)
    # Only `INSERT INTO t VALUES …` without a label is batched, as in Doris; the rows are typed and
    # checked first, so a bad row fails this statement alone and never reaches the batch. An AUTO
    # PARTITION table's rows may need new partitions, which only their own commit creates.
    batched = mode != "off_mode" and isinstance(s.query, exp.Values) and not s.label and not partial \
        and table.auto_partition is None
    literal = _literal_prepared(ctx, table, s, targets, partial=partial)
    if literal is not None:
        if batched:
            return _batched(ctx, session, table, literal, mode, allocate)
        label = s.label or f"insert_{uuid.uuid4().hex}"
        count = commit_rows(ctx, table, literal, label=label)
        return _inserted(session, count, transactions.insert_reply(ctx, table, label), allocate)
    cur = ctx.cursor()
    try:
        source_sql = _source_sql(ctx, session, s, targets, cur)
        partitions = tuple(_named_partition(table, n) for n in s.partitions)
        if partial:
            source_sql, targets = with_stored_values(ctx, table, source_sql, targets)
        if batched:
            data = prepare_rows(cur, table, source_sql, targets, partitions=partitions,
                                sign_from=_sign_position(targets), allocate=allocate)
            return _batched(ctx, session, table, data, mode, allocate)
        label = s.label or f"insert_{uuid.uuid4().hex}"  # named in the reply, as Doris names its own
        count = write_rows(ctx, cur, table, source_sql, targets, label=label, partitions=partitions,
                           allocate=allocate)
    finally:
        cur.close()
    return _inserted(session, count, transactions.insert_reply(ctx, table, label), allocate)


# Literal rows up to this many are typed and routed in Python when they can be (projections.literal_rows).
_LITERAL_ROWS = 64


def _literal_prepared(ctx: Context, table: TableState, s: st.Insert, targets: list[Column], *,
                      partial: bool) -> pa.Table | None:
    """The statement's rows prepared without DuckDB (`literal_rows.prepare_literal_rows`): a few literal
    rows into the table as it is; None sends the statement the DuckDB way, which answers every error."""
    found = s.literal_rows
    if found is None or partial or s.partitions or found.data.num_rows > _LITERAL_ROWS \
            or len(found.duck_types) != len(targets):
        return None
    opened: list[duckdb.DuckDBPyConnection] = []

    def cursor() -> duckdb.DuckDBPyConnection:
        opened.append(ctx.cursor())
        return opened[-1]

    try:
        return literal_rows.prepare_literal_rows(table, [c.to_pylist() for c in found.data.columns],
                                                 found.duck_types, targets, cursor)
    finally:
        for cur in opened:
            cur.close()


def _batched(ctx: Context, session: SessionState, table: TableState, data: pa.Table, mode: str,
             allocate: AutoIncrement) -> Done:
    """Prepared rows handed to group commit (`mode`); the answer once their batch is committed."""
    count, label = group_commit.registry(ctx).submit(table, data, mode)
    status = "VISIBLE" if mode == "sync_mode" else "PREPARE"
    return _inserted(session, count, f"{{'label':'{label}', 'status':'{status}'}}", allocate)


def _inserted(session: SessionState, count: int, info: str, allocate: AutoIncrement) -> Done:
    """An INSERT's answer; one that generated AUTO_INCREMENT values sets the session's LAST_INSERT_ID()."""
    if allocate.first:
        session.last_insert_id = allocate.first
    return Done(count, info, last_insert_id=allocate.first)


def overwrite(ctx: Context, session: SessionState, s: st.Insert) -> Done:
    """INSERT OVERWRITE (Doris): the rows become the whole content of the table, or of the partitions
    named (a row outside them fails the statement), or with PARTITION (*) of the partitions the
    rows fall in — one commit (streams.rules.overwrite_rowsets), so no reader sees a half-done swap
    and `FOR TIME AS OF` before it still reads the old rows. Never batched by group commit."""
    ctx.catch_up()
    table = ctx.table(session, s.table)
    targets = _targets(table, s.columns)
    if s.label and ctx.projection.label(table.table_id, s.label):
        raise SqlFailure(ErrorCode.LABEL_ALREADY_EXISTS, f"Label [{s.label}] has already been used")
    named = tuple(_named_partition(table, n) for n in s.partitions)
    cur = ctx.cursor()
    try:
        data = prepare_rows(cur, table, _source_sql(ctx, session, s, targets, cur), targets, partitions=named,
                            sign_from=_sign_position(targets), allocate=AutoIncrement.of(ctx, table))
    finally:
        cur.close()
    covered = named
    if s.detect_partitions:
        covered = tuple(sorted(pc.unique(data.column("__partition")).to_pylist()))
        if not covered:
            return Done(0, f"{{'label':'{s.label or ''}', 'status':'VISIBLE'}}")  # no row: no partition to replace
    scope = (f" PARTITION ({', '.join(s.partitions)})" if s.partitions
             else " PARTITION (*)" if s.detect_partitions else "")
    label = s.label or f"insert_overwrite_{uuid.uuid4().hex}"
    rowsets = (rows.write_rowsets(ctx.tiers, table, data, default_cooldown_s=ctx.config.storage_cooldown_seconds)
               if data.num_rows else [])
    ctx.propose(cmd.OverwriteRowsets(table_id=table.table_id, label=label, rowsets=tuple(rowsets),
                                     num_rows=data.num_rows, partition_ids=covered,
                                     rows_removed=_count(ctx, table, None, covered),
                                     description=f"INSERT OVERWRITE{scope}"), table_id=table.table_id)
    return Done(data.num_rows, f"{{'label':'{label}', 'status':'VISIBLE'}}")


def with_stored_values(ctx: Context, table: TableState, source_sql: str, targets: list[Column], *,
                       carry: tuple[str, ...] = ()) -> tuple[str, list[Column]]:
    """A partial update's rows made whole: each column the INSERT leaves out takes the stored value of
    the row's key (its default for a new key), so the rowset holds full rows and every later read,
    compaction and time travel merges them like any other load. Returns the source and its targets;
    the source's `carry` columns (a load's record positions) are kept as they are."""
    given = {c.unique_id: i for i, c in enumerate(targets)}
    schema = table.schema_now
    missing = [k.name for k in schema.key_columns if k.unique_id not in given]
    if missing:
        raise SqlFailure(ErrorCode.WRONG_ARGUMENTS,
                         f"Partial update should include all key columns, missing: {', '.join(missing)}")
    now = datetime.now(UTC).strftime("%Y-%m-%d %H:%M:%S.%f")
    same_key = " AND ".join(f"__old.{quote_ident(k.name)} IS NOT DISTINCT FROM "
                            f"TRY_CAST(__new.a{given[k.unique_id]} AS {duck_type(k.type)})" for k in schema.key_columns)
    values = [f"__new.a{given[c.unique_id]}" if c.unique_id in given else
              f"CASE WHEN __old.__stored THEN CAST(__old.{quote_ident(c.name)} AS {duck_type(c.type)}) "
              f"ELSE {default_sql(c, now=now)} END" for c in schema.columns]
    extras = [c for c in targets if c.unique_id < 0]  # the delete sign, the version
    values += [f"__new.a{given[c.unique_id]}" for c in extras]
    selected = ", ".join([*(f"{v} AS a{i}" for i, v in enumerate(values)), *(f"__new.{c}" for c in carry)])
    # The statement's row order is kept: it orders rows of one key within the load (`__seq`).
    source = (f"SELECT {selected} FROM (SELECT *, row_number() OVER () AS __n FROM ({source_sql})) AS __new "
              f"LEFT JOIN (SELECT *, true AS __stored FROM ({_live_rows_sql(ctx, table, ())})) AS __old "
              f"ON {same_key} ORDER BY __new.__n")
    return source, [*schema.columns, *extras]


def _to_file_columns(table: TableState, where: exp.Expr, *, keys_only: bool) -> str:
    """The predicate in terms of rowset columns (c<id>), checked against the schema."""
    if where.find(exp.Query) is not None:
        # The predicate is stored and applied to this table's rows alone at every later read.
        raise SqlFailure(ErrorCode.NOT_SUPPORTED_YET, f"DELETE on a {table.keys_model} KEY table takes a predicate "
                                                      "on its own columns; subqueries are not supported")
    where = where.copy()
    for column in list(where.find_all(exp.Column)):
        found = table.schema_now.column(column.name)
        if found is None:
            raise SqlFailure(ErrorCode.BAD_FIELD_ERROR, f"Unknown column '{column.name}' in 'where clause'")
        if keys_only and not found.is_key:
            raise SqlFailure(ErrorCode.WRONG_ARGUMENTS,
                             f"DELETE on an AGGREGATE KEY table may only filter key columns; '{found.name}' is "
                             "a value column")
        column.replace(exp.column(found.file_column))
    return where.sql(dialect="duckdb")


def _user_predicate(where: exp.Expr | None) -> str:
    return "true" if where is None else where.sql(dialect="duckdb")


def _bound_sql(ctx: Context, session: SessionState, expr: exp.Expr, cur: duckdb.DuckDBPyConnection) -> str:
    """An UPDATE/DELETE expression as DuckDB SQL, the tables its subqueries read bound on `cur`."""
    try:
        return bind_tables(ctx, session, expr, cur, views=True)  # taken apart and put inside UPDATE/DELETE SQL
    except duckdb.Error as exc:
        raise SqlFailure(*duck_error(exc)) from None


def delete(ctx: Context, session: SessionState, s: st.Delete) -> Done:
    ctx.catch_up()
    table = ctx.table(session, s.table)
    partitions = tuple(_named_partition(table, n) for n in s.partitions)
    if table.keys_model == "UNIQUE":
        return _rewrite_unique(ctx, session, table, s.where, None, delete_sign=True, partitions=partitions,
                               alias=s.alias, sources=s.using)
    if s.using is not None:
        # A Duplicate/Aggregate delete is a stored predicate on the table's own columns (as in Doris).
        raise SqlFailure(ErrorCode.NOT_SUPPORTED_YET, f"DELETE ... USING is only supported on UNIQUE KEY tables; "
                                                      f"'{table.name}' is {table.keys_model} KEY")
    if s.where is None:
        raise SqlFailure(ErrorCode.WRONG_ARGUMENTS, "DELETE needs a WHERE clause on this table; use TRUNCATE TABLE")
    # The predicate is stored and applied at every later read: NOW() must be this statement's instant.
    where = to_duckdb(substitute(session, s.where), session_zone(session))
    predicate = _to_file_columns(table, where, keys_only=table.keys_model == "AGGREGATE")
    count = _count(ctx, table, where, partitions)
    ctx.propose(cmd.CommitDelete(table_id=table.table_id,
                                 partition_ids=partitions or tuple(p.partition_id for p in table.live_partitions()),
                                 predicate=predicate, description=f"DELETE WHERE {s.where.sql()}", num_rows=count),
                table_id=table.table_id)
    return Done(count)


def _current_sql(ctx: Context, table: TableState, partitions: tuple[int, ...]) -> str:
    """The table's latest rows as SQL, only those of `partitions` when some are named."""
    snapshot = ctx.snapshots.resolve(table)
    if partitions:
        snapshot = replace(snapshot, partitions=tuple(p for p in snapshot.partitions if p.partition_id in partitions))
    return snapshot_sql(snapshot, ctx.locator)


def _live_rows_sql(ctx: Context, table: TableState, partitions: tuple[int, ...]) -> str:
    """A Unique Key table's latest rows with every schema column, a hidden sequence column too."""
    snapshot = ctx.snapshots.resolve(table)
    if partitions:
        snapshot = replace(snapshot, partitions=tuple(p for p in snapshot.partitions if p.partition_id in partitions))
    columns = ", ".join(quote_ident(c.name) for c in table.schema_now.columns)
    return (f"SELECT {columns} FROM ({snapshot_sql(snapshot, ctx.locator, ReadOptions(show_hidden=True))}) "
            f"WHERE {quote_ident(DELETE_SIGN_COLUMN)} = 0")


def _named_partition(table: TableState, name: str) -> int:
    found = table.partition_by_name(name)
    if found is None:
        raise SqlFailure(ErrorCode.UNKNOWN_PARTITION, f"Unknown partition '{name}' in table '{table.name}'")
    return found.partition_id


def _count(ctx: Context, table: TableState, where: exp.Expr | None, partitions: tuple[int, ...]) -> int:
    cur = ctx.cursor()
    try:
        sql = _current_sql(ctx, table, partitions)
        row = cur.execute(f"SELECT count(*) FROM ({sql}) AS {quote_ident(table.name)} "
                          f"WHERE {_user_predicate(where)}").fetchone()
        return int(row[0]) if row else 0
    except duckdb.Error as exc:
        raise SqlFailure(*duck_error(exc)) from None
    finally:
        cur.close()


def update(ctx: Context, session: SessionState, s: st.Update) -> Done:
    ctx.catch_up()
    table = ctx.table(session, s.table)
    if table.keys_model != "UNIQUE":
        raise SqlFailure(ErrorCode.NOT_SUPPORTED_YET,
                         f"UPDATE is only supported on UNIQUE KEY tables; '{table.name}' is {table.keys_model} KEY")
    assignments: dict[int, exp.Expr] = {}
    for name, value in s.assignments:
        column = table.schema_now.column(name)
        if column is None:
            raise SqlFailure(ErrorCode.BAD_FIELD_ERROR, f"Unknown column '{name}' in 'field list'")
        if column.is_key:
            raise SqlFailure(ErrorCode.WRONG_ARGUMENTS, f"Can not update key column '{column.name}'")
        assignments[column.unique_id] = value
    return _rewrite_unique(ctx, session, table, s.where, assignments, delete_sign=False, alias=s.alias,
                           sources=s.sources)


def _rewrite_unique(ctx: Context, session: SessionState, table: TableState, where: exp.Expr | None,
                    assignments: dict[int, exp.Expr] | None, *, delete_sign: bool,
                    partitions: tuple[int, ...] = (), alias: str | None = None,
                    sources: exp.From | None = None) -> Done:
    """Unique Key DELETE/UPDATE (merge-on-write style): the matching rows are written again, with a
    delete sign or with their new values, as one commit.

    `sources` are the other tables of `UPDATE … FROM` / `DELETE … USING`, joined to the target's latest
    rows by the WHERE clause; their references are bound like any query's (grants were checked for
    them too). A target row several source rows match is written once for a DELETE; for an UPDATE
    each match writes it and the last one written wins, as in Doris, where the pick is arbitrary."""
    columns = list(table.schema_now.columns)
    name = quote_ident(alias or table.name)
    cur = ctx.cursor()
    try:
        selected = []
        for i, c in enumerate(columns):
            value = (assignments or {}).get(c.unique_id)
            own = f"{name}.{quote_ident(c.name)}"
            selected.append(f"{_bound_sql(ctx, session, value, cur) if value is not None else own} AS a{i}")
        sql = _live_rows_sql(ctx, table, partitions)
        # The bound tables, as a FROM list joined to the target's rows by the WHERE clause.
        others = "" if sources is None else \
            ", " + _bound_sql(ctx, session, _joined(sources), cur).removeprefix("SELECT * FROM ")
        predicate = "true" if where is None else _bound_sql(ctx, session, where, cur)
        distinct = "DISTINCT " if delete_sign and sources is not None else ""
        source = f"SELECT {distinct}{', '.join(selected)} FROM ({sql}) AS {name}{others} WHERE {predicate}"
        count = write_rows(ctx, cur, table, source, columns, delete_sign=delete_sign,
                           source="delete" if delete_sign else "update")
    finally:
        cur.close()
    return Done(count)


def _joined(sources: exp.From) -> exp.Select:
    """`SELECT * FROM t2 [JOIN t3 …]` of a FROM/USING clause: the parser hangs the joins on the first
    table, whose node binding replaces; in a SELECT they are the query's own, and bind like any."""
    first = sources.this.copy()
    joins = first.args.get("joins") or []
    first.set("joins", None)
    select = exp.select("*").from_(first)
    select.set("joins", [j.copy() for j in joins] or None)
    return select
