"""`information_schema`: MySQL's tables and columns (and Doris' extras such as `rowsets`), built from the
catalog replica as Arrow tables when a query reads them, then filtered to what the session's user may
see (query.access.visible).

A query's top-level `TABLE_SCHEMA = '…'` / `TABLE_NAME IN (…)` / `LIKE '…'` conditions on a table are passed down
(`Scope`), so a tool asking about one table does not pay for every table's rowset scan; DuckDB still
applies the whole WHERE to what is built.
"""

from __future__ import annotations

import re
import time
from collections.abc import Callable, Iterable, Iterator
from dataclasses import dataclass, field
from datetime import UTC, datetime
from typing import Any

import pyarrow as pa
from sqlglot import exp

from projections.state import TableState, ViewState
from projections.users import ANY, ROOT
from query import access, processlist
from query.catalog_facts import (
    CHARSET,
    CHARSET_DESCRIPTION,
    CHARSET_MAXLEN,
    COLLATION,
    COLLATION_ID,
    ENGINE,
    ENGINE_COMMENT,
)
from query.context import Context, SessionState, SqlFailure
from schemas.errors import ErrorCode
from schemas.model import Column, Rowset

CATALOG = "internal"  # Doris' TABLE_CATALOG (MySQL says 'def')
INFORMATION_SCHEMA = "information_schema"
_STR, _INT, _TS = pa.string(), pa.int64(), pa.timestamp("us")
_DORIS_TYPE = {_STR: "STRING", _INT: "BIGINT", _TS: "DATETIME"}  # of information_schema's own columns


def moment(ms: int | None) -> datetime | None:
    """A catalog instant as the naive UTC DATETIME information_schema shows (rowsets keep the
    milliseconds: time travel names them)."""
    return None if ms is None else datetime.fromtimestamp(ms / 1000, tz=UTC).replace(tzinfo=None)


def table_time(ms: int | None) -> datetime | None:
    """A table's CREATE_TIME / UPDATE_TIME: MySQL's DATETIME, whole seconds."""
    found = moment(ms)
    return None if found is None else found.replace(microsecond=0)


def type_text(doris_type: str) -> str:
    """A column type as SHOW COLUMNS, DESC, SHOW CREATE TABLE and COLUMN_TYPE print it: `int`,
    `varchar(10)`, `decimal(9,2)`; Doris prints STRING as `text` (SQLAlchemy dialects read it so)."""
    lowered = doris_type.lower()
    return "text" if lowered == "string" else lowered


def mysql_column_type(doris_type: str) -> str:
    """information_schema.COLUMNS' COLUMN_TYPE: `type_text`, except BOOLEAN, which is MySQL's
    `tinyint(1)` there as in Doris' information_schema (Connector/J maps it to BIT); SHOW COLUMNS,
    DESC and SHOW CREATE TABLE say `boolean`, as Doris does."""
    return "tinyint(1)" if doris_type.upper() == "BOOLEAN" else type_text(doris_type)


# --------------------------------------------------------------------------- column facts

_STRING_MAX = 2147483643  # Doris' STRING: at most 2 GB
_INT_DIGITS = {"BOOLEAN": 3, "TINYINT": 3, "SMALLINT": 5, "INT": 10, "BIGINT": 19, "LARGEINT": 39}
_FLOAT_DIGITS = {"FLOAT": 12, "DOUBLE": 22}  # MySQL's NUMERIC_PRECISION of FLOAT and DOUBLE
_TYPE = re.compile(r"([A-Z0-9_]+)(?:\((\d+)(?:,\s*(\d+))?\))?")


@dataclass(frozen=True)
class ColumnFacts:
    """information_schema.COLUMNS' sizes of a column type (MySQL's meaning of each)."""

    data_type: str
    char_length: int | None = None
    octet_length: int | None = None
    precision: int | None = None
    scale: int | None = None
    datetime_precision: int | None = None
    charset: str | None = None
    collation: str | None = None


def column_facts(doris_type: str) -> ColumnFacts:
    match = _TYPE.fullmatch(doris_type.upper().replace(" ", ""))
    name = match.group(1) if match else doris_type.upper()
    first = int(match.group(2)) if match and match.group(2) else None
    second = int(match.group(3)) if match and match.group(3) else None
    data_type = "tinyint" if name == "BOOLEAN" else name.lower()
    if name in ("CHAR", "VARCHAR", "STRING"):
        length = first if first is not None else (1 if name == "CHAR" else _STRING_MAX)
        # Doris' information_schema calls a STRING a varchar (of its 2 GB), for MySQL clients' sake.
        return ColumnFacts("char" if name == "CHAR" else "varchar", length, length * CHARSET_MAXLEN, charset=CHARSET,
                           collation=COLLATION)
    if name in _INT_DIGITS:
        return ColumnFacts(data_type, precision=_INT_DIGITS[name], scale=0)
    if name in _FLOAT_DIGITS:
        return ColumnFacts(data_type, precision=_FLOAT_DIGITS[name])
    if name in ("DECIMAL", "DECIMALV3"):
        return ColumnFacts("decimal", precision=first if first is not None else 9, scale=second or 0)
    if name == "DATETIME":
        return ColumnFacts(data_type, datetime_precision=first or 0)
    return ColumnFacts(data_type)  # DATE, JSON


# --------------------------------------------------------------------------- scope (pushed-down filters)


@dataclass(frozen=True)
class Scope:
    """Exact values a query's WHERE requires of some columns (column → allowed values); a column not
    named is unconstrained. Only ever narrows to rows the WHERE would reject anyway. And the names
    the query mentions at all (`named`, upper case; None: it may read every column, `*`), so what no
    one reads, such as the sizes that take a scan of each table's rowsets, is not computed."""

    values: dict[str, frozenset[str]] = field(default_factory=dict)
    named: frozenset[str] | None = None
    # Column → the LIKE patterns (as regular expressions) a value must match, every one.
    patterns: dict[str, tuple[re.Pattern[str], ...]] = field(default_factory=dict)

    def allows(self, column: str, value: str) -> bool:
        allowed = self.values.get(column)
        if allowed is not None and value not in allowed:
            return False
        return all(p.fullmatch(value) is not None for p in self.patterns.get(column, ()))

    def needs(self, *columns: str) -> bool:
        return self.named is None or any(column in self.named for column in columns)


def _literals(node: exp.Expr) -> frozenset[str] | None:
    if isinstance(node, exp.Literal) and node.is_string:
        return frozenset({node.this})
    return None


def _like(node: exp.Expr) -> re.Pattern[str] | None:
    """A string literal LIKE pattern as DuckDB matches it (case-sensitive, `%` and `_`, no escape
    character unless an ESCAPE clause names one); None for a pattern with a backslash, whose meaning
    this mirror would have to guess."""
    literal = _literals(node)
    if literal is None:
        return None
    (pattern,) = literal
    if "\\" in pattern:
        return None
    parts = (".*" if ch == "%" else "." if ch == "_" else re.escape(ch) for ch in pattern)
    return re.compile("".join(parts), re.DOTALL)


def _own_column(node: exp.Expr, reference: exp.Table) -> exp.Column | None:
    """`node` as a column of `reference`: unqualified, or qualified by its alias or name (a column of
    an enclosing query's table, `outer.TABLE_NAME`, constrains that table, not this one)."""
    if not isinstance(node, exp.Column) or not isinstance(node.this, exp.Identifier):
        return None
    qualifier = node.table.lower()
    return node if qualifier in ("", reference.alias_or_name.lower()) else None


def scope_of(reference: exp.Table) -> Scope:
    """The `column = 'x'` (either way round), `column IN ('x', …)` and `column LIKE 'x%'` conjuncts
    of the WHERE of the SELECT that reads `reference` as its only table (or naming its alias), taken
    as prefilters. Only string literals count: DuckDB compares them exactly, as `Scope.allows` does."""
    query = reference.root()
    # `*` in a select list (not COUNT(*)) reads every column; otherwise every name the query holds
    # (columns, USING lists, aliases: a superset of the columns it reads).
    star = any(not isinstance(found.parent, exp.Func) for found in query.find_all(exp.Star))
    named = None if star else frozenset(found.name.upper() for found in query.find_all(exp.Identifier))
    select = reference.parent.parent if isinstance(reference.parent, exp.From) else None
    if not isinstance(select, exp.Select) or select.args.get("joins"):
        return Scope(named=named)
    where = select.args.get("where")
    if where is None:
        return Scope(named=named)
    values: dict[str, frozenset[str]] = {}
    patterns: dict[str, tuple[re.Pattern[str], ...]] = {}
    for conjunct in where.this.flatten() if isinstance(where.this, exp.And) else [where.this]:
        column, allowed = None, None
        if conjunct.args.get("negate") or conjunct.args.get("escape"):  # sqlglot's `NOT LIKE`, `LIKE … ESCAPE`
            continue
        if type(conjunct) is exp.Like:
            like_column, pattern = _own_column(conjunct.this, reference), _like(conjunct.expression)
            if like_column is not None and pattern is not None:
                name = like_column.name.upper()
                patterns[name] = (*patterns.get(name, ()), pattern)
            continue
        if isinstance(conjunct, exp.EQ):
            column, allowed = _own_column(conjunct.this, reference), _literals(conjunct.expression)
            if column is None or allowed is None:
                column, allowed = _own_column(conjunct.expression, reference), _literals(conjunct.this)
        elif isinstance(conjunct, exp.In) and not conjunct.args.get("query"):
            found = [_literals(e) for e in conjunct.expressions]
            if found and all(f is not None for f in found):
                column = _own_column(conjunct.this, reference)
                allowed = frozenset().union(*(f for f in found if f is not None))
        if column is not None and allowed is not None:
            name = column.name.upper()
            values[name] = values[name] & allowed if name in values else allowed
    return Scope(values, named, patterns)


# --------------------------------------------------------------------------- tables


Row = tuple[Any, ...]


@dataclass(frozen=True)
class _View:
    columns: tuple[tuple[str, pa.DataType], ...]
    rows: Callable[[Context, SessionState, Scope], Iterable[Row]] = lambda ctx, session, scope: ()

    def build(self, ctx: Context, session: SessionState, scope: Scope) -> pa.Table:
        found = list(self.rows(ctx, session, scope))
        arrays = [pa.array([r[i] for r in found], type=kind) for i, (_, kind) in enumerate(self.columns)]
        return pa.Table.from_arrays(arrays, schema=pa.schema(list(self.columns)))


def _cols(spec: str) -> tuple[tuple[str, pa.DataType], ...]:
    """'NAME NAME:i NAME:t …': string columns by default, `:i` BIGINT, `:t` DATETIME."""
    kinds = {"": _STR, "i": _INT, "t": _TS}
    return tuple((name, kinds[kind]) for name, _, kind in (word.partition(":") for word in spec.split()))


def _databases(ctx: Context, scope: Scope, column: str = "TABLE_SCHEMA") -> list[str]:
    return sorted(d.name for d in ctx.projection.databases.values()
                  if d.dropped_ts_ms is None and scope.allows(column, d.name))


def _live_tables(ctx: Context, scope: Scope) -> Iterator[tuple[str, TableState]]:
    for db in _databases(ctx, scope):
        found = ctx.projection.database_by_name(db)
        if found is None:
            continue
        for table in ctx.projection.tables_of(found.db_id):
            if scope.allows("TABLE_NAME", table.name):
                yield db, table


def _live_views(ctx: Context, scope: Scope) -> Iterator[tuple[str, ViewState]]:
    for db in _databases(ctx, scope):
        found = ctx.projection.database_by_name(db)
        if found is None:
            continue
        for view in ctx.projection.views_of(found.db_id):
            if scope.allows("TABLE_NAME", view.name):
                yield db, view


_SIZES = ("TABLE_ROWS", "AVG_ROW_LENGTH", "DATA_LENGTH")


def table_size(ctx: Context, table: TableState) -> tuple[int, int]:
    """(rows, bytes) of the table's live rowsets."""
    live = [r.rowset for r in ctx.projection.rowset_records(table.table_id) if r.stale_ts_ms is None]
    return sum(r.num_rows for r in live), sum(r.size_bytes for r in live)


def _average(size: int | None, rows: int | None) -> int | None:
    """AVG_ROW_LENGTH: bytes per row (0 for an empty table; None when the sizes were not computed)."""
    if size is None or rows is None:
        return None
    return size // rows if rows else 0


def _schemata(ctx: Context, session: SessionState, scope: Scope) -> Iterator[Row]:
    for name in ["information_schema", *_databases(ctx, Scope())]:
        if scope.allows("SCHEMA_NAME", name):
            yield CATALOG, name, CHARSET, COLLATION, None, "NO"


def _own_views(scope: Scope) -> Iterator[tuple[str, _View]]:
    """information_schema's own tables, which it lists like MySQL and Doris do."""
    if scope.allows("TABLE_SCHEMA", INFORMATION_SCHEMA):
        for name, view in sorted(_VIEWS.items()):
            if scope.allows("TABLE_NAME", name):
                yield name, view


def _tables(ctx: Context, session: SessionState, scope: Scope) -> Iterator[Row]:
    for name, _ in _own_views(scope):
        yield (CATALOG, INFORMATION_SCHEMA, name, "SYSTEM VIEW", None, 10, None, None, None, None, None, None, None,
               None, None, None, None, COLLATION, None, "", "")
    sizes = scope.needs(*_SIZES)
    for db, t in _live_tables(ctx, scope):
        rows, size = table_size(ctx, t) if sizes else (None, None)
        yield (CATALOG, db, t.name, "BASE TABLE", ENGINE, 10, "Dynamic", rows, _average(size, rows), size, 0, 0, 0,
               None, table_time(t.created_ts_ms), table_time(t.last_commit_ts_ms), None, COLLATION, None, "",
               t.comment)
    for db, v in _live_views(ctx, scope):  # MySQL's row of a view: no engine, no sizes
        yield (CATALOG, db, v.name, "VIEW", None, None, None, None, None, None, None, None, None, None,
               table_time(v.created_ts_ms), table_time(v.altered_ts_ms), None, None, None, None, v.comment)


# information_schema.views' CHARACTER_SET_CLIENT and COLLATION_CONNECTION (SHOW CREATE VIEW's, in Doris).
VIEW_CHARSET, VIEW_COLLATION = "utf8mb4", "utf8mb4_0900_bin"


def _views(ctx: Context, session: SessionState, scope: Scope) -> Iterator[Row]:
    """A view's definition shows only to whoever may read everything it reads (query.access)."""
    for db, v in _live_views(ctx, scope):
        definition = v.definition if access.may_see_definition(ctx, session, v) else ""
        yield CATALOG, db, v.name, definition, "NONE", "NO", "", "DEFINER", VIEW_CHARSET, VIEW_COLLATION


# information_schema.columns' COLUMN_KEY of a key column, by keys model (as Doris shows it).
_KEY_KIND = {"DUPLICATE": "DUP", "UNIQUE": "UNI", "AGGREGATE": "AGG"}
PRIMARY = "PRIMARY"


def primary_key(table: TableState) -> tuple[Column, ...]:
    """The columns MySQL tools take for the table's primary key: a Unique Key table's key (one row per
    key value, the newest load wins), which JDBC's getPrimaryKeys and table editors need to address a
    row. Doris lists no index here; Duplicate and Aggregate Key tables have none."""
    return tuple(table.schema_now.key_columns) if table.keys_model == "UNIQUE" else ()


def index_rows(table: TableState) -> list[tuple[int, Column]]:
    """(position in the key, column) of the primary key: SHOW INDEX's and STATISTICS' rows."""
    return list(enumerate(primary_key(table), start=1))


def _statistics(ctx: Context, session: SessionState, scope: Scope) -> Iterator[Row]:
    for db, table in _live_tables(ctx, scope):
        for position, c in index_rows(table):
            yield (CATALOG, db, table.name, 0, db, PRIMARY, position, c.name, "A", None, None, None,
                   "YES" if c.nullable else "", "BTREE", "", "", "YES", None)


def _key_column_usage(ctx: Context, session: SessionState, scope: Scope) -> Iterator[Row]:
    for db, table in _live_tables(ctx, scope):
        for position, c in index_rows(table):
            yield CATALOG, db, PRIMARY, CATALOG, db, table.name, c.name, position, None, None, None, None


def _table_constraints(ctx: Context, session: SessionState, scope: Scope) -> Iterator[Row]:
    for db, table in _live_tables(ctx, scope):
        if primary_key(table):
            yield CATALOG, db, PRIMARY, db, table.name, "PRIMARY KEY", "YES"


def column_privileges(ctx: Context, session: SessionState, db: str, table: str) -> str:
    """COLUMNS.PRIVILEGES and SHOW FULL COLUMNS' Privileges: what the session's user may do with the
    table's columns, in MySQL's words."""
    if db.lower() == INFORMATION_SCHEMA:
        return "select"
    user = access.user_of(ctx, session)
    if user is None:
        return "select,insert,update,references"
    held = [("select", user.may("SELECT_PRIV", db, table)), ("insert,update", user.may("LOAD_PRIV", db, table))]
    return ",".join(word for word, ok in held if ok)


def _columns(ctx: Context, session: SessionState, scope: Scope) -> Iterator[Row]:
    for name, view in _own_views(scope):
        for i, (column, kind) in enumerate(view.columns, start=1):
            if scope.allows("COLUMN_NAME", column):
                doris_type = _DORIS_TYPE[kind]
                facts = column_facts(doris_type)
                yield (CATALOG, INFORMATION_SCHEMA, name, column, i, None, "YES", facts.data_type, facts.char_length,
                       facts.octet_length, facts.precision, facts.scale, facts.datetime_precision, facts.charset,
                       facts.collation, type_text(doris_type), "", "", "select", "", None, None)
    for db, table in _live_tables(ctx, scope):
        privileges = column_privileges(ctx, session, db, table.name)
        for i, c in enumerate(table.schema_now.visible_columns, start=1):
            if not scope.allows("COLUMN_NAME", c.name):
                continue
            facts = column_facts(c.type)
            yield (CATALOG, db, table.name, c.name, i, c.default, "YES" if c.nullable else "NO", facts.data_type,
                   facts.char_length, facts.octet_length, facts.precision, facts.scale, facts.datetime_precision,
                   facts.charset, facts.collation, mysql_column_type(c.type),
                   _KEY_KIND[table.keys_model] if c.is_key else "",
                   "auto_increment" if c.auto_increment is not None else (c.aggregation or "").upper(), privileges,
                   c.comment, None, None)
    for db, defined in _live_views(ctx, scope):  # the types its query had when the view was defined
        privileges = column_privileges(ctx, session, db, defined.name)
        for i, vc in enumerate(defined.columns, start=1):
            if scope.allows("COLUMN_NAME", vc.name):
                facts = column_facts(vc.type)
                yield (CATALOG, db, defined.name, vc.name, i, None, "YES", facts.data_type, facts.char_length,
                       facts.octet_length, facts.precision, facts.scale, facts.datetime_precision, facts.charset,
                       facts.collation, mysql_column_type(vc.type), "", "", privileges, vc.comment, None, None)


def _partitions(ctx: Context, session: SessionState, scope: Scope) -> Iterator[Row]:
    sizes = scope.needs(*_SIZES)
    for db, table in _live_tables(ctx, scope):
        by_partition: dict[int, list[Rowset]] = {}
        for record in ctx.projection.rowset_records(table.table_id) if sizes else ():
            if record.stale_ts_ms is None:
                by_partition.setdefault(record.rowset.partition_id, []).append(record.rowset)
        method = None if table.partition_kind == "UNPARTITIONED" else table.partition_kind
        expression = ", ".join(f"`{c}`" for c in table.partition_columns) or None
        live = sorted(table.live_partitions(), key=lambda p: p.partition_id)
        for position, p in enumerate(live, start=1):
            mine = by_partition.get(p.partition_id, [])
            rows, size = (sum(r.num_rows for r in mine), sum(r.size_bytes for r in mine)) if sizes else (None, None)
            yield (CATALOG, db, table.name, None if method is None else p.name, None,
                   None if method is None else position, None, method, None, expression, None, None, rows,
                   _average(size, rows), size, 0, 0, 0, table_time(table.created_ts_ms),
                   table_time(table.last_commit_ts_ms), None, None, "", None, None)


def _engines(ctx: Context, session: SessionState, scope: Scope) -> Iterator[Row]:
    yield ENGINE, "DEFAULT", ENGINE_COMMENT, "NO", "NO", "NO"


def _character_sets(ctx: Context, session: SessionState, scope: Scope) -> Iterator[Row]:
    yield CHARSET, COLLATION, CHARSET_DESCRIPTION, CHARSET_MAXLEN


def _collations(ctx: Context, session: SessionState, scope: Scope) -> Iterator[Row]:
    yield COLLATION, CHARSET, COLLATION_ID, "Yes", "Yes", 1


def _collation_applicability(ctx: Context, session: SessionState, scope: Scope) -> Iterator[Row]:
    yield COLLATION, CHARSET


def _grantee(name: str) -> str:
    return f"'{name}'@'%'"


def _grants(ctx: Context, session: SessionState) -> Iterator[tuple[str, str, str, str]]:
    """(user, db, table, privilege) of every grant the session's user may see: its own, or everyone's
    with ADMIN_PRIV (root holds everything on *.*)."""
    user = access.user_of(ctx, session)
    everyone = user is None or user.may("ADMIN_PRIV")
    if everyone:
        yield ROOT, ANY, ANY, "ADMIN_PRIV"
    for record in sorted(ctx.projection.users.values(), key=lambda u: u.name):
        if not everyone and (user is None or record.name.lower() != user.name.lower()):
            continue
        for scope_key, privileges in sorted(record.grants.items()):
            db, _, table = scope_key.partition(".")
            for privilege in privileges:
                yield record.name, db, table, privilege


def _user_privileges(ctx: Context, session: SessionState, scope: Scope) -> Iterator[Row]:
    for name, db, _, privilege in _grants(ctx, session):
        if db == ANY:
            yield _grantee(name), "def", privilege, "NO"


def _schema_privileges(ctx: Context, session: SessionState, scope: Scope) -> Iterator[Row]:
    for name, db, on_table, privilege in _grants(ctx, session):
        if db != ANY and on_table == ANY:
            yield _grantee(name), "def", db, privilege, "NO"


def _table_privileges(ctx: Context, session: SessionState, scope: Scope) -> Iterator[Row]:
    for name, db, table, privilege in _grants(ctx, session):
        if db != ANY and table != ANY:
            yield _grantee(name), "def", db, table, privilege, "NO"


def _processlist(ctx: Context, session: SessionState, scope: Scope) -> Iterator[Row]:
    now = time.monotonic()
    for found in processlist.visible_sessions(ctx, session):
        yield (found.connection_id, found.user, found.host, found.database, found.command, int(now - found.since),
               "", found.info)


def _rowsets(ctx: Context, session: SessionState, scope: Scope) -> Iterator[Row]:
    """Doris' `information_schema.rowsets` columns, plus where each rowset is and whether it is live."""
    for db, table in _live_tables(ctx, scope):
        names = {p.partition_id: p.name for p in table.partitions.values()}
        dropped = {p.partition_id: p.dropped_ts_ms for p in table.partitions.values() if p.dropped_ts_ms is not None}
        for record in ctx.projection.rowset_records(table.table_id):
            r = record.rowset
            # A dropped partition's rowsets are kept only for time travel, like compacted ones: stale
            # since the drop (the latest state no longer reads them, and tiering leaves them be).
            stale_ts_ms = record.stale_ts_ms if record.stale_ts_ms is not None else dropped.get(r.partition_id)
            yield (0, r.rowset_id, r.partition_id * 1000 + r.bucket, r.num_rows, r.end_version, 1, r.start_version,
                   r.end_version, 0, r.size_bytes, moment(r.visible_ts_ms), moment(r.written_ts_ms), db, table.name,
                   names.get(r.partition_id, ""), "stale" if stale_ts_ms is not None else "visible", r.tier,
                   r.schema_version, moment(stale_ts_ms))


_VIEWS: dict[str, _View] = {
    "schemata": _View(_cols("CATALOG_NAME SCHEMA_NAME DEFAULT_CHARACTER_SET_NAME DEFAULT_COLLATION_NAME SQL_PATH "
                            "DEFAULT_ENCRYPTION"), _schemata),
    "tables": _View(_cols(
        "TABLE_CATALOG TABLE_SCHEMA TABLE_NAME TABLE_TYPE ENGINE VERSION:i ROW_FORMAT TABLE_ROWS:i "
        "AVG_ROW_LENGTH:i DATA_LENGTH:i MAX_DATA_LENGTH:i INDEX_LENGTH:i DATA_FREE:i AUTO_INCREMENT:i "
        "CREATE_TIME:t UPDATE_TIME:t CHECK_TIME:t TABLE_COLLATION CHECKSUM:i CREATE_OPTIONS TABLE_COMMENT"), _tables),
    "columns": _View(_cols(
        "TABLE_CATALOG TABLE_SCHEMA TABLE_NAME COLUMN_NAME ORDINAL_POSITION:i COLUMN_DEFAULT IS_NULLABLE "
        "DATA_TYPE CHARACTER_MAXIMUM_LENGTH:i CHARACTER_OCTET_LENGTH:i NUMERIC_PRECISION:i NUMERIC_SCALE:i "
        "DATETIME_PRECISION:i CHARACTER_SET_NAME COLLATION_NAME COLUMN_TYPE COLUMN_KEY EXTRA PRIVILEGES "
        "COLUMN_COMMENT GENERATION_EXPRESSION SRS_ID:i"), _columns),
    # A Unique Key table's key is its PRIMARY index and constraint (`primary_key`). Strata tables have
    # no secondary indexes, foreign keys, routines or triggers: those tables exist with MySQL's
    # columns and no rows, so tools' metadata queries run and find nothing.
    "statistics": _View(_cols(
        "TABLE_CATALOG TABLE_SCHEMA TABLE_NAME NON_UNIQUE:i INDEX_SCHEMA INDEX_NAME SEQ_IN_INDEX:i COLUMN_NAME "
        "COLLATION CARDINALITY:i SUB_PART:i PACKED NULLABLE INDEX_TYPE COMMENT INDEX_COMMENT IS_VISIBLE "
        "EXPRESSION"), _statistics),
    "views": _View(_cols("TABLE_CATALOG TABLE_SCHEMA TABLE_NAME VIEW_DEFINITION CHECK_OPTION IS_UPDATABLE DEFINER "
                         "SECURITY_TYPE CHARACTER_SET_CLIENT COLLATION_CONNECTION"), _views),
    "key_column_usage": _View(_cols(
        "CONSTRAINT_CATALOG CONSTRAINT_SCHEMA CONSTRAINT_NAME TABLE_CATALOG TABLE_SCHEMA TABLE_NAME COLUMN_NAME "
        "ORDINAL_POSITION:i POSITION_IN_UNIQUE_CONSTRAINT:i REFERENCED_TABLE_SCHEMA REFERENCED_TABLE_NAME "
        "REFERENCED_COLUMN_NAME"), _key_column_usage),
    "table_constraints": _View(_cols("CONSTRAINT_CATALOG CONSTRAINT_SCHEMA CONSTRAINT_NAME TABLE_SCHEMA TABLE_NAME "
                                     "CONSTRAINT_TYPE ENFORCED"), _table_constraints),
    "referential_constraints": _View(_cols(
        "CONSTRAINT_CATALOG CONSTRAINT_SCHEMA CONSTRAINT_NAME UNIQUE_CONSTRAINT_CATALOG UNIQUE_CONSTRAINT_SCHEMA "
        "UNIQUE_CONSTRAINT_NAME MATCH_OPTION UPDATE_RULE DELETE_RULE TABLE_NAME REFERENCED_TABLE_NAME")),
    "routines": _View(_cols(
        "SPECIFIC_NAME ROUTINE_CATALOG ROUTINE_SCHEMA ROUTINE_NAME ROUTINE_TYPE DATA_TYPE "
        "CHARACTER_MAXIMUM_LENGTH:i CHARACTER_OCTET_LENGTH:i NUMERIC_PRECISION:i NUMERIC_SCALE:i "
        "DATETIME_PRECISION:i CHARACTER_SET_NAME COLLATION_NAME DTD_IDENTIFIER ROUTINE_BODY ROUTINE_DEFINITION "
        "EXTERNAL_NAME EXTERNAL_LANGUAGE PARAMETER_STYLE IS_DETERMINISTIC SQL_DATA_ACCESS SQL_PATH SECURITY_TYPE "
        "CREATED:t LAST_ALTERED:t SQL_MODE ROUTINE_COMMENT DEFINER CHARACTER_SET_CLIENT COLLATION_CONNECTION "
        "DATABASE_COLLATION")),
    "parameters": _View(_cols(
        "SPECIFIC_CATALOG SPECIFIC_SCHEMA SPECIFIC_NAME ORDINAL_POSITION:i PARAMETER_MODE PARAMETER_NAME DATA_TYPE "
        "CHARACTER_MAXIMUM_LENGTH:i CHARACTER_OCTET_LENGTH:i NUMERIC_PRECISION:i NUMERIC_SCALE:i "
        "DATETIME_PRECISION:i CHARACTER_SET_NAME COLLATION_NAME DTD_IDENTIFIER ROUTINE_TYPE")),
    "triggers": _View(_cols(
        "TRIGGER_CATALOG TRIGGER_SCHEMA TRIGGER_NAME EVENT_MANIPULATION EVENT_OBJECT_CATALOG EVENT_OBJECT_SCHEMA "
        "EVENT_OBJECT_TABLE ACTION_ORDER:i ACTION_CONDITION ACTION_STATEMENT ACTION_ORIENTATION ACTION_TIMING "
        "ACTION_REFERENCE_OLD_TABLE ACTION_REFERENCE_NEW_TABLE ACTION_REFERENCE_OLD_ROW ACTION_REFERENCE_NEW_ROW "
        "CREATED:t SQL_MODE DEFINER CHARACTER_SET_CLIENT COLLATION_CONNECTION DATABASE_COLLATION")),
    "engines": _View(_cols("ENGINE SUPPORT COMMENT TRANSACTIONS XA SAVEPOINTS"), _engines),
    "character_sets": _View(_cols("CHARACTER_SET_NAME DEFAULT_COLLATE_NAME DESCRIPTION MAXLEN:i"), _character_sets),
    "collations": _View(_cols("COLLATION_NAME CHARACTER_SET_NAME ID:i IS_DEFAULT IS_COMPILED SORTLEN:i"),
                        _collations),
    "collation_character_set_applicability": _View(_cols("COLLATION_NAME CHARACTER_SET_NAME"),
                                                   _collation_applicability),
    "user_privileges": _View(_cols("GRANTEE TABLE_CATALOG PRIVILEGE_TYPE IS_GRANTABLE"), _user_privileges),
    "schema_privileges": _View(_cols("GRANTEE TABLE_CATALOG TABLE_SCHEMA PRIVILEGE_TYPE IS_GRANTABLE"),
                               _schema_privileges),
    "table_privileges": _View(_cols("GRANTEE TABLE_CATALOG TABLE_SCHEMA TABLE_NAME PRIVILEGE_TYPE IS_GRANTABLE"),
                              _table_privileges),
    "column_privileges": _View(_cols("GRANTEE TABLE_CATALOG TABLE_SCHEMA TABLE_NAME COLUMN_NAME PRIVILEGE_TYPE "
                                     "IS_GRANTABLE")),  # Doris grants on tables, never on single columns
    "processlist": _View(_cols("ID:i USER HOST DB COMMAND TIME:i STATE INFO"), _processlist),
    "partitions": _View(_cols(
        "TABLE_CATALOG TABLE_SCHEMA TABLE_NAME PARTITION_NAME SUBPARTITION_NAME PARTITION_ORDINAL_POSITION:i "
        "SUBPARTITION_ORDINAL_POSITION:i PARTITION_METHOD SUBPARTITION_METHOD PARTITION_EXPRESSION "
        "SUBPARTITION_EXPRESSION PARTITION_DESCRIPTION TABLE_ROWS:i AVG_ROW_LENGTH:i DATA_LENGTH:i "
        "MAX_DATA_LENGTH:i INDEX_LENGTH:i DATA_FREE:i CREATE_TIME:t UPDATE_TIME:t CHECK_TIME:t CHECKSUM:i "
        "PARTITION_COMMENT NODEGROUP TABLESPACE_NAME"), _partitions),
    "rowsets": _View(_cols(
        "BACKEND_ID:i ROWSET_ID TABLET_ID:i ROWSET_NUM_ROWS:i TXN_ID:i NUM_SEGMENTS:i START_VERSION:i "
        "END_VERSION:i INDEX_DISK_SIZE:i DATA_DISK_SIZE:i CREATION_TIME:t NEWEST_WRITE_TIMESTAMP:t TABLE_SCHEMA "
        "TABLE_NAME PARTITION_NAME STATE TIER SCHEMA_VERSION:i STALE_TIME:t"), _rowsets),
}


def table(ctx: Context, session: SessionState, name: str, reference: exp.Table | None = None) -> pa.Table:
    """The rows of `information_schema.<name>` the session's user may see; `reference`, the query's
    table node, lets its WHERE narrow what is built (`scope_of`)."""
    view = _VIEWS.get(name.lower())
    if view is None:
        raise SqlFailure(ErrorCode.NO_SUCH_TABLE, f"Table 'information_schema.{name}' doesn't exist; "
                                                  f"available: {', '.join(names())}")
    scope = scope_of(reference) if reference is not None else Scope()
    return access.visible(ctx, session, view.build(ctx, session, scope))


def names() -> list[str]:
    return sorted(_VIEWS)


def view_columns(name: str) -> list[tuple[str, str]]:
    """(column, Doris type) of `information_schema.<name>`, for DESC and SHOW COLUMNS."""
    view = _VIEWS.get(name.lower())
    if view is None:
        raise SqlFailure(ErrorCode.NO_SUCH_TABLE, f"Table 'information_schema.{name}' doesn't exist")
    return [(column, _DORIS_TYPE[kind]) for column, kind in view.columns]


def is_information_schema(session: SessionState, db: str | None) -> bool:
    return (db or session.database or "").lower() == INFORMATION_SCHEMA
