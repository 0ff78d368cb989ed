"""A SELECT's result read as the client takes it: Arrow record batches from DuckDB's streaming
reader, instead of every row fetched into Python tuples before the first is sent.

Only results whose every column comes out of Arrow as the values `fetchall` gives are streamed
(`streamable_types`); the wire layer encodes them a batch at a time (query.wire.text_batches) and
must produce the very bytes the tuples would have made. A MAP (Arrow gives key/value pairs, not a
dict), an INTERVAL (months/days/nanoseconds, not a timedelta) and a HUGEINT (Arrow's decimal128
holds 38 digits, a HUGEINT 39) are not, so a result with one is fetched whole, as before.

The reader keeps the statement's DuckDB cursor (and the views bound on it) and the file-cache pins
of the files it reads until `close`: the rows are read after the statement has returned.
"""

from __future__ import annotations

import re
import threading
from collections.abc import Callable, Sequence
from dataclasses import dataclass
from typing import Any

import duckdb
import pyarrow as pa

from query.context import SqlFailure
from storage.set_values import SET_DUCK_TYPE

# Rows a batch holds: big enough that the per-batch work (a few Arrow kernels per column) is
# negligible, small enough that a batch's text stays a few MB and the first rows leave early.
BATCH_ROWS = 16_384
# A result of at most this many rows read to its end within the statement goes to the wire whole
# (`StreamedRows.read_whole`): encoding it takes microseconds, less than a hop to a worker thread.
WHOLE_ROWS = 64
_NOT_STREAMABLE = re.compile(r"\b(MAP|INTERVAL|U?HUGEINT|BIGNUM|VARINT|UNION|BIT|TIME WITH TIME ZONE|TIMETZ)\b")


# DuckDB's statement runner (DuckDB >= 2.0): one parse, bind and run gives both the result's description
# and its Arrow batches. Older versions have no such thing; `open_result` then takes the public API's steps.
_SUBMIT = getattr(getattr(duckdb, "_seam", None), "submit", None)


@dataclass(frozen=True)
class OpenResult:
    """A statement described: (name, DuckDB type) of each column, then its rows either as a reader of
    Arrow batches, produced as they are read (memory bounded by a few batches, whatever the result's
    size), or as Python tuples — one of the two, once."""

    described: list[tuple[str, str]]
    reader: Callable[[], pa.RecordBatchReader]
    fetchall: Callable[[], list[tuple[Any, ...]]]


def open_result(cursor: duckdb.DuckDBPyConnection, sql: str, batch_rows: int, *, bind_first: bool) -> OpenResult:
    """`sql` described and run.

    DuckDB's public API describes a statement by binding it (`cursor.sql`, for the types the wire
    needs before the first row) and runs it by parsing and binding it again (`to_arrow_reader`, or
    `execute` when the types cannot stream): for a point lookup that second pass is a fifth of the
    statement's CPU. DuckDB's runner gives the description and the rows from one pass, but as Arrow
    only, and it has already run a statement that blocks (an aggregate, a sort) when it says what the
    columns are: rows of types that cannot stream are then fetched by running the statement again.
    `bind_first`: the statement's types may well not stream (SUM of integers is a HUGEINT), so it is
    bound first, as the public API does, and run once whichever way its rows go."""
    if _SUBMIT is not None and not bind_first:
        result = _SUBMIT(cursor, sql, None, "stream", batch_rows)
        described = [(str(d[0]), str(d[1])) for d in result.description or ()]

        def fetch_again() -> list[tuple[Any, ...]]:
            result.close()
            return cursor.execute(sql).fetchall()

        return OpenResult(described, result.arrow_reader, fetch_again)
    relation = cursor.sql(sql)
    return OpenResult(list(zip(relation.columns, (str(t) for t in relation.types), strict=True)),
                      lambda: relation.to_arrow_reader(batch_rows), lambda: cursor.execute(sql).fetchall())


def streamable_types(duck_types: Sequence[str]) -> bool:
    """Whether a result of these DuckDB column types may be streamed as Arrow (see the module doc). A
    BITMAP/HLL column is not: its values go out as NULL, which query.reads does to fetched rows."""
    return not any(_NOT_STREAMABLE.search(kind.upper()) or kind == SET_DUCK_TYPE for kind in duck_types)


class StreamedRows:
    """query.wire.text_batches.RecordBatches over a DuckDB reader. The first batch is read when made
    (inside the statement, under its timeout and KILL), so an error in it is the statement's, raised
    as DuckDB's (the caller retries a file cooled away meanwhile); a later one is an SqlFailure."""

    def __init__(self, cursor: duckdb.DuckDBPyConnection, reader: pa.RecordBatchReader,
                 release_pins: Callable[[], None], error: Callable[[duckdb.Error], SqlFailure]) -> None:
        self._cursor = cursor
        self._reader = reader
        self._release_pins = release_pins
        self._error = error
        self._lock = threading.Lock()
        self._closed = False
        self._first: pa.RecordBatch | None = None
        self._whole: list[pa.RecordBatch] | None = None  # a small result read to its end
        self._ahead: pa.RecordBatch | None = None  # the second batch, read after a short first one
        try:
            self._first = self._read_raw()
            if self._first is None:
                self._whole = []
            elif self._first.num_rows <= WHOLE_ROWS:
                # A short batch is almost always the last (DuckDB fills a batch unless the rows ran out):
                # asking for the next costs nothing more here and spares the wire its worker hops.
                self._ahead = self._read_raw()
                if self._ahead is None:
                    self._whole = [self._first]
        except BaseException:
            self.close()
            raise

    def _read_raw(self) -> pa.RecordBatch | None:
        try:
            return self._reader.read_next_batch()
        except StopIteration:
            return None

    def _read(self) -> pa.RecordBatch | None:
        try:
            return self._read_raw()
        except duckdb.Error as exc:
            raise self._error(exc) from None

    @property
    def schema(self) -> pa.Schema:
        """The batches' schema (DuckDB's column names and Arrow types)."""
        return self._reader.schema

    def next_batch(self) -> pa.RecordBatch | None:
        with self._lock:
            if self._closed:
                return None
            if self._first is not None:
                first, self._first = self._first, None
                return first
            if self._ahead is not None:
                ahead, self._ahead = self._ahead, None
                return ahead
            if self._whole is not None:  # read to its end already
                return None
            return self._read()

    def read_whole(self) -> list[pa.RecordBatch] | None:
        with self._lock:
            if self._closed or self._whole is None:
                return None
            whole, self._whole, self._first = self._whole, [], None
            return whole

    def interrupt(self) -> None:
        """Stops a batch being read on another thread (the client went away or was killed)."""
        self._cursor.interrupt()

    def close(self) -> None:
        with self._lock:
            if self._closed:
                return
            self._closed = True
            self._first = None
            try:
                self._reader.close()
                self._cursor.close()
            finally:
                self._release_pins()
