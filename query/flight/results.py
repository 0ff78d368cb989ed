"""A statement's answer as Arrow: the schema a FlightInfo announces and the record batches DoGet
streams.

A SELECT run for Flight (`SessionState.arrow_results`) streams DuckDB's own record batches
(query.streamed_rows), so the Arrow types are the executor's, exactly as the MySQL port's types are
described from the same DuckDB types (query.wire.columns): no second mapping of types here. The
batches only get the MySQL labels as column names, and BITMAP/HLL columns go out as NULL, as on
the MySQL port (query.reads). Results built by hand (SHOW …, whose `types` are None) are small and
become Arrow from their Python values.
"""

from __future__ import annotations

from collections.abc import Iterator
from dataclasses import dataclass
from typing import Any

import pyarrow as pa

from query.context import Rows
from query.streamed_rows import BATCH_ROWS
from storage.set_values import SET_DUCK_TYPE


@dataclass
class ArrowResult:
    """A result waiting for its DoGet: its schema, its batches (read once), and what frees it."""

    schema: pa.Schema
    batches: Iterator[pa.RecordBatch]

    def close(self) -> None:
        close = getattr(self.batches, "close", None)
        if close is not None:
            close()  # a generator: its `finally` releases the DuckDB cursor and file pins


def from_rows(rows: Rows) -> ArrowResult:
    """The Arrow form of the engine's Rows (their stream, when the engine streamed them)."""
    if rows.batches is not None:
        labels = list(rows.columns)
        hidden = {i for i, kind in enumerate(rows.types or []) if kind == SET_DUCK_TYPE}
        source = rows.batches.schema
        schema = pa.schema([_field(label, pa.null() if i in hidden else f.type, f.nullable)
                            for i, (label, f) in enumerate(zip(labels, source, strict=True))])
        return ArrowResult(schema, _relabelled(rows, schema, hidden))
    table = from_values(list(rows.columns), rows.rows)
    return ArrowResult(table.schema, iter(table.to_batches(BATCH_ROWS)))


def _relabelled(rows: Rows, schema: pa.Schema, hidden: set[int]) -> Iterator[pa.RecordBatch]:
    stream = rows.batches
    assert stream is not None
    try:
        while (batch := stream.next_batch()) is not None:
            columns = [pa.nulls(batch.num_rows) if i in hidden else column for i, column in enumerate(batch.columns)]
            yield pa.RecordBatch.from_arrays(columns, schema=schema)
    finally:
        stream.close()


def from_values(names: list[str], rows: list[tuple[Any, ...]]) -> pa.Table:
    """A hand-built result (SHOW …): each column typed by Arrow from its values; a column Arrow cannot
    type so (mixed values) goes out as text, as the MySQL port sends it."""
    arrays = []
    for i in range(len(names)):
        values = [row[i] for row in rows]
        try:
            arrays.append(pa.array(values))
        except (pa.ArrowInvalid, pa.ArrowTypeError):
            arrays.append(pa.array([None if v is None else str(v) for v in values], pa.string()))
    if not names:
        return pa.table({})
    schema = pa.schema([_field(name, array.type) for name, array in zip(names, arrays, strict=True)])
    return pa.Table.from_arrays(arrays, schema=schema)


# Flight SQL's column metadata (FlightSql.proto): JDBC's getPrecision and getScale read these keys.
_PRECISION, _SCALE = "ARROW:FLIGHT:SQL:PRECISION", "ARROW:FLIGHT:SQL:SCALE"


def _field(label: str, kind: pa.DataType, nullable: bool = True) -> pa.Field:
    """A result column under its label; a DECIMAL says its precision and scale in Flight SQL's metadata too."""
    decimal = isinstance(kind, (pa.Decimal128Type, pa.Decimal256Type))
    metadata = {_PRECISION: str(kind.precision), _SCALE: str(kind.scale)} if decimal else None
    return pa.field(label, kind, nullable, metadata=metadata)
