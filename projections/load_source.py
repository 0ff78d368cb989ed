"""Kafka records into rows for a routine load: how a JSON or CSV record becomes the source fields,
the COLUMNS mapping and WHERE filter over them, and the typed rows that reach `rows.split_rows`.

All of it is one DuckDB query per batch over the records as an Arrow table (`__p` partition,
`__o` offset, `__v` value bytes), so a batch is parsed in C++, not record by record in Python. A
record that does not parse gets its reason in `__bad` and goes to the dead-letter queue; the rest
are typed and checked like any INSERT's rows. Shared by the SQL server (which checks a job's
definition on an empty batch before accepting it) and the routine load tasks that run it.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from dataclasses import dataclass
from typing import Protocol

import duckdb
import pyarrow as pa
import pyarrow.compute as pc

from projections.rows import REASON, Allocate, RowsRejected, kept_rows, split_rows, split_rows_creating_partitions
from projections.state import TableState
from schemas.errors import ErrorCode
from schemas.model import DELETE_SIGN_COLUMN, SEQUENCE_COLUMN, Column, LoadColumn, Partition
from storage.rowset_sql import converted_sql, quote_ident, quote_literal


class LoadMapping(Protocol):
    """What a load reads and how its fields become rows: a routine load's `RoutineLoadSpec`, or a
    Stream Load's request (query.stream_load)."""

    @property
    def format(self) -> str: ...
    @property
    def columns(self) -> tuple[LoadColumn, ...]: ...
    @property
    def where_sql(self) -> str | None: ...
    @property
    def partitions(self) -> tuple[int, ...]: ...
    @property
    def column_separator(self) -> str: ...
    @property
    def jsonpaths(self) -> tuple[str, ...]: ...
    @property
    def json_root(self) -> str | None: ...
    @property
    def strip_outer_array(self) -> bool: ...
    @property
    def strict_mode(self) -> bool: ...


# Turns the mapped rows (SQL with a0..an, one per target, and __p, __o) into other rows and targets
# before they are typed: a Stream Load's partial_columns fills the columns it leaves out from stored rows.
Rewrite = Callable[[str, list[Column]], tuple[str, list[Column]]]

RECORDS = pa.schema([("__p", pa.int32()), ("__o", pa.int64()), ("__v", pa.binary())])
CARRIED = ("__p", "__o")  # what a bad row keeps to name its record


def records_table(partitions: Sequence[int | None], offsets: Sequence[int | None],
                  values: Sequence[bytes | None]) -> pa.Table:
    return pa.table([pa.array(partitions, pa.int32()), pa.array(offsets, pa.int64()), pa.array(values, pa.binary())],
                    schema=RECORDS)


def source_fields(spec: LoadMapping, table: TableState) -> list[str]:
    """The fields each record holds, in order: COLUMNS' plain names, or else the table's columns."""
    if spec.columns:
        return [c.name for c in spec.columns if c.expr_sql is None]
    return [c.name for c in table.schema_now.visible_columns]


def _parsed_sql(spec: LoadMapping, fields: list[str]) -> str:
    """Records → `__p, __o, __bad` and one VARCHAR column per source field (`__f<i>`)."""
    if spec.format == "csv":
        text = r"regexp_replace(TRY(decode(__v)), '\r?\n$', '')"
        count = len(fields)
        values = ", ".join(f"CASE WHEN __l[{i + 1}] = '\\N' THEN NULL ELSE __l[{i + 1}] END AS __f{i}"
                           for i in range(count))
        bad = (f"CASE WHEN __v IS NULL THEN 'the record is empty (a tombstone)' "
               f"WHEN __s IS NULL THEN 'the record is not valid UTF-8' "
               f"WHEN len(__l) <> {count} THEN 'the record has ' || len(__l) || ' columns separated by ' || "
               f"{quote_literal(repr(spec.column_separator))} || ', the job expects {count}' END")
        split = f"string_split(__s, {quote_literal(spec.column_separator)})"
        return (f"SELECT __p, __o, {bad} AS __bad, {values} FROM "
                f"(SELECT __p, __o, __v, __s, {split} AS __l FROM (SELECT *, {text} AS __s FROM __records))")
    document = "CASE WHEN json_valid(__s) THEN CAST(__s AS JSON) END"
    if spec.json_root:
        document = f"json_extract({document}, {quote_literal(spec.json_root)})"
    rows = f"SELECT __p, __o, __v, __s, {document} AS __j FROM (SELECT *, TRY(decode(__v)) AS __s FROM __records)"
    if spec.strip_outer_array:
        # One record holds many rows: each element of its outer array (a record that is no array is bad).
        rows = (f"SELECT __p, __o, __v, __s, unnest(CASE WHEN json_type(__j) = 'ARRAY' THEN json_extract(__j, '$[*]') "
                f"ELSE [CASE WHEN __j IS NOT NULL THEN CAST('\"not an array\"' AS JSON) END] END) AS __j, "
                f"json_type(__j) AS __outer FROM ({rows})")
    paths = list(spec.jsonpaths) or ["$." + '"' + name.replace('"', '\\"') + '"' for name in fields]
    values = ", ".join(f"json_extract_string(__j, {quote_literal(path)}) AS __f{i}" for i, path in enumerate(paths))
    not_object = "'the record is a JSON ' || lower(json_type(__j)) || ', not an object'"
    if spec.strip_outer_array:
        not_object = ("CASE WHEN __outer <> 'ARRAY' THEN 'strip_outer_array is set but the record is a JSON ' || "
                      "lower(__outer) ELSE 'an element of the outer array is a JSON ' || lower(json_type(__j)) || "
                      "', not an object' END")
    bad = (f"CASE WHEN __v IS NULL THEN 'the record is empty (a tombstone)' "
           f"WHEN __s IS NULL THEN 'the record is not valid UTF-8' "
           f"WHEN __j IS NULL THEN 'the record is not valid JSON' "
           f"WHEN json_type(__j) <> 'OBJECT' THEN {not_object} END")
    return f"SELECT __p, __o, {bad} AS __bad, {values} FROM ({rows})"


@dataclass(frozen=True)
class LoadPlan:
    """How one job's records become rows of its table under the table's schema at `schema_version`."""

    schema_version: int
    targets: tuple[Column, ...]
    sql: str  # over `__records`: __p, __o, __bad, __keep, a0..an (one per target)
    # a<sign_from> (after the targets) is each row's delete sign (a Stream Load's merge_type DELETE / MERGE)
    sign_from: int | None = None


def plan_load(spec: LoadMapping, table: TableState, *, parsed_sql: str | None = None,
              delete_sql: str | None = None) -> LoadPlan:
    """Builds the batch query; raises RowsRejected when the mapping names a column the table lacks.
    `parsed_sql` replaces the parsing of `__records` for a source its reader already split into fields
    (`__p, __o, __bad, __f0..__fn`); `delete_sql`, a condition over the fields, gives each row of a
    Unique Key table its delete sign. So does a field (or COLUMNS expression) named __DORIS_DELETE_SIGN__:
    a row whose value is 1 deletes its key, how CDC pipelines delete through a routine load."""
    schema = table.schema_now
    fields = source_fields(spec, table)
    named_sign = next((n for n in [*fields, *(c.name for c in spec.columns if c.expr_sql is not None)]
                       if n.upper() == DELETE_SIGN_COLUMN), None)
    if named_sign is not None:
        if delete_sql is not None:
            raise RowsRejected(ErrorCode.WRONG_ARGUMENTS, f"the load gives both a delete condition and a "
                                                          f"{DELETE_SIGN_COLUMN} column; give one")
        delete_sql = f"TRY_CAST({quote_ident(named_sign)} AS INTEGER) = 1"
    if spec.jsonpaths and len(spec.jsonpaths) != len(fields):
        raise RowsRejected(ErrorCode.WRONG_ARGUMENTS, f"jsonpaths has {len(spec.jsonpaths)} paths but the job reads "
                                                      f"{len(fields)} source columns ({', '.join(fields)})")
    # Derived expressions and WHERE see each source field typed as the table column it fills (a
    # field the table lacks stays text), while a column filled straight from a field keeps its
    # text, so that strict mode can tell a value that does not convert from a NULL.
    scope = []
    for i, name in enumerate(fields):
        column = schema.column(name)
        value = converted_sql(f"__f{i}", column.type) if column is not None else f"__f{i}"
        scope.append(f"{value} AS {quote_ident(name)}")
    derived = [(c.name, c.expr_sql) for c in spec.columns if c.expr_sql is not None]
    scope_sql = f"SELECT __p, __o, __bad, {', '.join(['__f' + str(i) for i in range(len(fields))] + scope)} " \
                f"FROM ({parsed_sql or _parsed_sql(spec, fields)})"
    if derived:
        computed = ", ".join(f"{expr} AS {quote_ident(name)}" for name, expr in derived)
        scope_sql = f"SELECT *, {computed} FROM ({scope_sql})"
    targets: list[Column] = []
    values: list[str] = []
    seen: set[str] = set()
    for name in [*fields, *(name for name, _ in derived)]:
        if name.lower() in seen:
            raise RowsRejected(ErrorCode.DUP_FIELDNAME, f"column '{name}' is named twice in COLUMNS")
        seen.add(name.lower())
        column = schema.column(name)
        if column is None:
            if name in dict(derived) and name != named_sign:
                raise RowsRejected(ErrorCode.BAD_FIELD_ERROR, f"Unknown column '{name}' in table '{table.name}'")
            continue  # a source field only the mapping uses
        targets.append(column)
        values.append(f"__f{fields.index(name)}" if name in fields and name not in dict(derived) else quote_ident(name))
    if not targets:
        raise RowsRejected(ErrorCode.WRONG_ARGUMENTS, f"the job fills no column of table '{table.name}'")
    for column in schema.columns:
        if column not in targets and column.name == SEQUENCE_COLUMN:
            # Doris' rule: a table with a hidden sequence column orders loads by it, so each load names it.
            raise RowsRejected(ErrorCode.WRONG_ARGUMENTS, f"Table {table.name} has sequence column, need to "
                                                          f"specify the sequence column ({SEQUENCE_COLUMN} in COLUMNS)")
        if column not in targets and not column.nullable and column.default is None:
            raise RowsRejected(1364, f"Field '{column.name}' of table '{table.name}' doesn't have a default value "
                                     "and the job does not fill it")
    keep = f"COALESCE({spec.where_sql}, false)" if spec.where_sql else "true"
    sign_from = None
    if delete_sql is not None:
        if table.keys_model != "UNIQUE":
            raise RowsRejected(ErrorCode.WRONG_ARGUMENTS, f"only a UNIQUE KEY table takes deletes; '{table.name}' "
                                                          f"is {table.keys_model} KEY")
        sign_from = len(values)
        values.append(f"CASE WHEN COALESCE({delete_sql}, false) THEN 1 ELSE 0 END")
    selected = ", ".join(f"{v} AS a{i}" for i, v in enumerate(values))
    sql = f"SELECT __p, __o, __bad, {keep} AS __keep, {selected} FROM ({scope_sql})"
    return LoadPlan(schema.schema_version, tuple(targets), sql, sign_from)


@dataclass(frozen=True)
class LoadedBatch:
    rows: pa.Table  # prepared for `rows.write_rowsets`
    bad: pa.Table  # __p, __o, __reason: one line per bad row (a record may have several)
    unselected: int
    # AUTO PARTITION: the partitions the rows need, which the batch's commit creates, and the table
    # with them (what `write_rowsets` is given); None: the table as it was.
    new_partitions: tuple[Partition, ...] = ()
    table: TableState | None = None


def load_batch(cur: duckdb.DuckDBPyConnection, table: TableState, spec: LoadMapping, plan: LoadPlan,
               records: pa.Table, *, next_partition_id: int | None = None,
               allocate: Allocate | None = None, rewrite: Rewrite | None = None) -> LoadedBatch:
    """Turns one batch of records into rows; a DuckDB error raised by the job's own expressions on
    some record is pinned to that record by halving the batch, so the other records still load.
    With `next_partition_id`, an AUTO PARTITION table gets the partitions its rows need (ids from it);
    `allocate` fills an AUTO_INCREMENT column (see `rows.prepare_rows`)."""
    try:
        return _load(cur, table, spec, plan, records, next_partition_id, allocate, rewrite)
    except duckdb.Error as exc:
        if records.num_rows <= 1:
            reason = f"the job's COLUMNS or WHERE failed on this record: {str(exc).splitlines()[0]}"
            bad = records.select(list(CARRIED)).append_column(REASON, pa.array([reason] * records.num_rows,
                                                                                pa.string()))
            return LoadedBatch(_empty_rows(cur, table, spec, plan, rewrite), bad, 0)
    half = records.num_rows // 2
    first = load_batch(cur, table, spec, plan, records.slice(0, half), next_partition_id=next_partition_id,
                       allocate=allocate, rewrite=rewrite)
    # The second half routes against the partitions the first half makes, so none is made twice.
    following = None if next_partition_id is None else next_partition_id + len(first.new_partitions)
    second = load_batch(cur, first.table or table, spec, plan, records.slice(half), next_partition_id=following,
                        allocate=allocate, rewrite=rewrite)
    return LoadedBatch(pa.concat_tables([first.rows, second.rows]), pa.concat_tables([first.bad, second.bad]),
                       first.unselected + second.unselected, first.new_partitions + second.new_partitions,
                       second.table or first.table)


def _empty_rows(cur: duckdb.DuckDBPyConnection, table: TableState, spec: LoadMapping, plan: LoadPlan,
                rewrite: Rewrite | None) -> pa.Table:
    return _load(cur, table, spec, plan, RECORDS.empty_table(), rewrite=rewrite).rows


def _load(cur: duckdb.DuckDBPyConnection, table: TableState, spec: LoadMapping, plan: LoadPlan,
          records: pa.Table, next_partition_id: int | None = None,
          allocate: Allocate | None = None, rewrite: Rewrite | None = None) -> LoadedBatch:
    cur.register("__records", records)
    try:
        parsed: pa.Table = cur.sql(plan.sql).to_arrow_table()
    finally:
        cur.unregister("__records")
    unparsed = pc.is_valid(parsed["__bad"])
    bad = parsed.filter(unparsed).select([*CARRIED, "__bad"]).rename_columns([*CARRIED, REASON])
    parsed = kept_rows(parsed, pc.invert(unparsed))
    kept = pc.fill_null(parsed["__keep"], False)
    unselected = parsed.num_rows - pc.sum(kept).as_py() if parsed.num_rows else 0
    parsed = kept_rows(parsed, kept).drop_columns(["__bad", "__keep"])
    cur.register("__parsed", parsed)
    source_sql, targets = "SELECT * FROM __parsed", list(plan.targets)
    if rewrite is not None:
        source_sql, targets = rewrite(source_sql, targets)
    try:
        if next_partition_id is not None and table.auto_partition is not None and not spec.partitions:
            routed, unfit = split_rows_creating_partitions(
                cur, table, source_sql, targets, strict=spec.strict_mode,
                passthrough=CARRIED, next_partition_id=next_partition_id, allocate=allocate)
            return LoadedBatch(routed.data, pa.concat_tables([bad, unfit.cast(bad.schema)]), unselected,
                               routed.new_partitions, routed.table if routed.new_partitions else None)
        good, unfit = split_rows(cur, table, source_sql, targets, strict=spec.strict_mode,
                                 partitions=spec.partitions, passthrough=CARRIED, allocate=allocate,
                                 sign_from=plan.sign_from)
    finally:
        cur.unregister("__parsed")
    return LoadedBatch(good, pa.concat_tables([bad, unfit.cast(bad.schema)]), unselected)
