"""A handful of literal rows typed, checked and routed in Python: the single-row INSERTs of many small
writers, which the DuckDB path (`rows.prepare_rows`) prepares in about 4 ms of CPU, mostly binding its
query, where the rows themselves need microseconds.

`prepare_literal_rows` gives exactly what `rows.prepare_rows` gives for the same rows — the same values,
Arrow types, `__seq`, partition and bucket — or None, and the caller then takes the DuckDB path, which
also answers every error. It takes only what it can convert exactly as DuckDB does: the conversions in
`_CONVERSIONS` (integers, strings, DECIMAL, DATE and DATETIME from ISO text, BOOLEAN, exact doubles),
columns left out whose default is NULL, unpartitioned tables and RANGE / LIST tables partitioned on one
column, buckets by the hash of the distribution columns (one small DuckDB query of the rows' typed keys,
so the hash is DuckDB's own). Any row that would fail a check (a NULL in a NOT NULL column, a value
that does not convert, a string too long, no partition) also gives None: the DuckDB path names the
failure as it always has.
"""

from __future__ import annotations

import re
from collections.abc import Callable, Sequence
from datetime import date, datetime, timedelta
from decimal import ROUND_HALF_UP, Decimal, InvalidOperation
from typing import Any

import duckdb
import pyarrow as pa

from projections.state import TableState
from schemas.model import Column
from storage.paths import HIDDEN_DELETE_SIGN, HIDDEN_SEQ
from storage.rowset_sql import datetime_precision, duck_type, quote_literal

# A value not converted: the row leaves the fast path (a failed TRY_CAST is NULL there, and a check).
_NO = object()
Convert = Callable[[object], object]

_INTEGER_TEXT = re.compile(r"-?[0-9]{1,18}")
_DECIMAL_TEXT = re.compile(r"-?[0-9]+(?:\.[0-9]+)?")
_DATE_TEXT = re.compile(r"[0-9]{4}-[0-9]{2}-[0-9]{2}")
_DATETIME_TEXT = re.compile(r"[0-9]{4}-[0-9]{2}-[0-9]{2}(?: [0-9]{2}:[0-9]{2}:[0-9]{2}(?:\.[0-9]{1,6})?)?")
_INT32_MAX = (1 << 31) - 1
_INTEGER_RANGES = {"TINYINT": 7, "SMALLINT": 15, "INTEGER": 31, "BIGINT": 63}
_ARROW_TYPES = {"TINYINT": pa.int8(), "SMALLINT": pa.int16(), "INTEGER": pa.int32(), "BIGINT": pa.int64(),
                "VARCHAR": pa.string(), "DATE": pa.date32(), "TIMESTAMP": pa.timestamp("us"),
                "BOOLEAN": pa.bool_(), "DOUBLE": pa.float64()}


def _integer(bits: int) -> Convert:
    low, high = -(1 << bits), (1 << bits) - 1

    def convert(value: object) -> object:
        if isinstance(value, str):
            if _INTEGER_TEXT.fullmatch(value) is None:
                return _NO
            value = int(value)
        return value if isinstance(value, int) and not isinstance(value, bool) and low <= value <= high else _NO
    return convert


def _string(value: object) -> object:
    if isinstance(value, str):
        return value
    return str(value) if isinstance(value, int) and not isinstance(value, bool) else _NO


def _decimal(precision: int, scale: int) -> Convert:
    step = Decimal(1).scaleb(-scale)
    limit = Decimal(10) ** (precision - scale)

    def convert(value: object) -> object:
        if isinstance(value, str):
            # Text is taken only when it needs no rounding (DuckDB's parse of longer fractions is its own).
            whole, _, fraction = value.partition(".")
            if _DECIMAL_TEXT.fullmatch(value) is None or len(fraction) > scale:
                return _NO
            number = Decimal(value)
        elif isinstance(value, Decimal | int) and not isinstance(value, bool):
            number = Decimal(value)
        else:
            return _NO
        try:
            number = number.quantize(step, rounding=ROUND_HALF_UP)  # DuckDB rounds half away from zero
        except InvalidOperation:
            return _NO  # more digits than Python's decimal context holds: DuckDB's to convert
        return number if abs(number) < limit else _NO
    return convert


def _date(value: object) -> object:
    if not isinstance(value, str) or _DATE_TEXT.fullmatch(value) is None:
        return _NO
    try:
        return date.fromisoformat(value)
    except ValueError:
        return _NO


def _datetime(precision: int) -> Convert:
    unit = 10 ** (6 - min(precision, 6))

    def convert(value: object) -> object:
        if not isinstance(value, str) or _DATETIME_TEXT.fullmatch(value) is None:
            return _NO
        try:
            moment = datetime.fromisoformat(value)
        except ValueError:
            return _NO
        if moment.year < 1:
            return _NO
        # Rounded half up to the column's fraction digits (storage.rowset_sql.rounded_sql).
        micros = (moment.microsecond + unit // 2) // unit * unit
        try:
            return moment.replace(microsecond=0) + timedelta(microseconds=micros)
        except OverflowError:
            return _NO  # rounded past 9999-12-31
    return convert


def _boolean(value: object) -> object:
    return value if isinstance(value, bool) else _NO


def _double(value: object) -> object:
    if isinstance(value, float):
        return value
    # An integer a double holds exactly converts the same everywhere.
    return float(value) if isinstance(value, int) and not isinstance(value, bool) and abs(value) <= 1 << 53 else _NO


def _conversion(column: Column) -> tuple[Convert, pa.DataType] | None:
    """How a literal becomes `column`'s value here, and the Arrow type DuckDB gives it; None: not here."""
    duck = duck_type(column.type)
    base = column.type.partition("(")[0].strip().upper()
    if duck in _INTEGER_RANGES:
        return _integer(_INTEGER_RANGES[duck]), _ARROW_TYPES[duck]
    if duck == "VARCHAR" and base in ("CHAR", "VARCHAR", "STRING", "TEXT"):
        return _string, pa.string()
    if duck.startswith("DECIMAL("):
        precision, scale = (int(n) for n in duck[len("DECIMAL("):-1].split(","))
        return _decimal(precision, scale), pa.decimal128(precision, scale)
    if duck == "DATE":
        return _date, pa.date32()
    if duck == "TIMESTAMP":
        return _datetime(datetime_precision(column.type) or 0), pa.timestamp("us")
    if duck == "BOOLEAN":
        return _boolean, pa.bool_()
    if duck == "DOUBLE":
        return _double, pa.float64()
    return None


def _length_limit(column: Column) -> int | None:
    """A VARCHAR(n) / CHAR(n) column's limit in bytes of UTF-8 (`rows.routed_query`'s length check)."""
    if column.type.upper().startswith(("VARCHAR", "CHAR")) and "(" in column.type:
        return int(column.type.split("(")[1].rstrip(")"))
    return None


def _literal_values(column: Sequence[object], duck: str) -> list[object] | None:
    """A source column's values as Python values of their literal type (DECIMAL's text as Decimal)."""
    if duck.startswith("DECIMAL("):
        return [None if v is None else Decimal(str(v)) for v in column]
    if duck in ("BIGINT", "VARCHAR", "BOOLEAN", "DOUBLE"):
        return list(column)
    return None


def _in_list(values: list[object]) -> Callable[[object], bool]:
    """A LIST partition's test of a key: one of its values (NULL matching a NULL value)."""
    plain = {v for v in values if v is not None}
    takes_null = None in values
    return lambda key: key in plain if key is not None else takes_null


def _in_range(lower: Any, upper: Any) -> Callable[[Any], bool]:
    """A RANGE partition's test of a key: lower <= key < upper (None: unbounded); a NULL key is in none."""
    return lambda key: key is not None and (lower is None or key >= lower) and (upper is None or key < upper)


def _partition(table: TableState, converted: dict[int, list[object]], rows: int) -> list[int] | None:
    """Each row's partition id, chosen as `rows.partition_case` chooses it; None when a row has none or
    the table's partitioning is not one this path routes."""
    live = table.live_partitions()
    if table.partition_kind == "UNPARTITIONED":
        return [live[0].partition_id] * rows
    if len(table.partition_columns) != 1:
        return None
    column = table.schema_now.column(table.partition_columns[0])
    if column is None or column.unique_id not in converted:
        return None
    conversion = _conversion(column)
    if conversion is None:
        return None
    # Bounds are cast as they are (a DATETIME bound keeps its microseconds), keys are the rows' values.
    convert = _datetime(6) if duck_type(column.type) == "TIMESTAMP" else conversion[0]
    default: int | None = None
    # (partition id, test of a key) in the order the CASE tries them.
    tests: list[tuple[int, Callable[[object], bool]]] = []
    for state in live:
        bound = state.partition.bound
        if bound.is_default:
            default = state.partition_id
            continue
        if table.partition_kind == "LIST":
            values = [convert(v[0]) if v[0] is not None else None for v in bound.values]
            if any(v is _NO for v in values):
                return None
            tests.append((state.partition_id, _in_list(values)))
        elif table.partition_kind == "RANGE":
            lower = convert(bound.lower[0]) if bound.lower is not None else None
            upper = convert(bound.upper[0]) if bound.upper is not None else None
            if lower is _NO or upper is _NO:
                return None
            tests.append((state.partition_id, _in_range(lower, upper)))
        else:
            return None
    ids: list[int] = []
    for key in converted[column.unique_id]:
        found = next((pid for pid, test in tests if test(key)), default)
        if found is None:
            return None
        ids.append(found)
    return ids


def _sql_literal(value: object, duck: str) -> str:
    """A converted value as DuckDB SQL of the column's type: text cast exactly (a double's shortest
    repr reads back as the same double)."""
    if value is None:
        return f"CAST(NULL AS {duck})"
    if isinstance(value, datetime):
        text = value.isoformat(sep=" ", timespec="microseconds")
    elif isinstance(value, float):
        text = repr(value)
    else:
        text = str(value).lower() if isinstance(value, bool) else str(value)
    return f"CAST({quote_literal(text)} AS {duck})"


def _buckets(table: TableState, converted: dict[int, list[object]], partitions: list[int],
             cursor: Callable[[], duckdb.DuckDBPyConnection] | None) -> list[int] | None:
    """Each row's bucket as `rows.bucket_expr` gives it: 0 when every partition has one, else DuckDB's
    hash of the distribution columns' values (typed as the table's columns) modulo the partition's
    buckets; None for a RANDOM distribution or without a `cursor`."""
    counts = {p.partition_id: p.partition.buckets for p in table.live_partitions()}
    if all(n == 1 for n in counts.values()):
        return [0] * len(partitions)
    columns = [table.schema_now.column(n) for n in table.distribution.columns]
    if cursor is None or not columns or any(c is None or c.unique_id not in converted for c in columns):
        return None
    keyed = [c for c in columns if c is not None]
    rows = [f"({i}, hash({', '.join(_sql_literal(converted[c.unique_id][i], duck_type(c.type)) for c in keyed)}))"
            for i in range(len(partitions))]
    try:
        found = cursor().execute(f"SELECT h FROM (VALUES {', '.join(rows)}) AS t(i, h) ORDER BY i").fetchall()
    except duckdb.Error:
        return None  # the DuckDB path then answers the statement, as it would have
    return [int(h) % counts[pid] for (h,), pid in zip(found, partitions, strict=True)]


def prepare_literal_rows(table: TableState, columns: Sequence[Sequence[object]], duck_types: Sequence[str],
                         targets: Sequence[Column], cursor: Callable[[], duckdb.DuckDBPyConnection] | None = None
                         ) -> pa.Table | None:
    """`rows.prepare_rows` of literal rows (`columns[i]`: the values of target i, typed as DuckDB types
    a literal: `duck_types[i]`), or None when this path does not take them (see the module docstring).
    `cursor` gives a DuckDB connection for a table of several buckets (DuckDB's hash chooses them)."""
    if table.auto_partition is not None or table.auto_increment_column is not None:
        return None
    if any(target.unique_id < 0 for target in targets):
        return None  # the delete sign or version of a Unique Key table: the DuckDB path's
    rows = len(columns[0]) if columns else 0
    if not rows:
        return None
    given = {target.unique_id: i for i, target in enumerate(targets)}
    converted: dict[int, list[object]] = {}
    arrays: list[pa.Array] = []
    names: list[str] = []
    for column in table.schema_now.columns:
        conversion = _conversion(column)
        if conversion is None:
            return None
        convert, arrow_type = conversion
        if column.unique_id in given:
            source = _literal_values(columns[given[column.unique_id]], duck_types[given[column.unique_id]])
            if source is None:
                return None
            values = [None if v is None else convert(v) for v in source]
            if any(v is _NO for v in values):
                return None  # a value that does not convert: strict mode's error
            limit = _length_limit(column)
            if limit is not None and any(v is not None and len(str(v).encode()) > limit for v in source):
                return None  # too long: the DuckDB path's error
        elif column.default is None or column.default.upper() == "NULL":
            values = [None] * rows
        else:
            return None
        if not column.nullable and any(v is None for v in values):
            return None
        converted[column.unique_id] = values
        arrays.append(pa.array(values, arrow_type))
        names.append(column.file_column)
    partitions = _partition(table, converted, rows)
    if partitions is None or max(partitions) > _INT32_MAX:
        return None  # DuckDB would type a larger partition id BIGINT
    buckets = _buckets(table, converted, partitions, cursor)
    if buckets is None:
        return None
    arrays.append(pa.array(range(rows), pa.int64()))
    names.append(HIDDEN_SEQ)
    if table.keys_model == "UNIQUE":
        arrays.append(pa.array([False] * rows, pa.bool_()))
        names.append(HIDDEN_DELETE_SIGN)
    arrays += [pa.array(partitions, pa.int32()), pa.array(buckets, pa.int32())]
    names += ["__partition", "__bucket"]
    return pa.table(arrays, names=names)
