"""A plain CSV or a Parquet body loaded by one DuckDB statement: DuckDB's parallel reader reads the
whole spooled file, and the same statement maps, types, checks and routes its rows
(`rows.routed_query` over `load_source.plan_load`), which come out as Arrow batches for the load's
`RowsetsWriter`.

The chunked path (`readers`) cuts a CSV body into lines with Arrow and has DuckDB split each line
again, and runs two statements and several Arrow filters per 8 MB chunk; this one reads each byte
once, in C++, on every core. Only the bodies whose meaning DuckDB's reader gives exactly take it
(`usable`), everything else keeps the chunked path:
- the mapping has no expression that could fail on one row (no COLUMNS expression, WHERE or delete
  condition; the chunked path pins such a failure to its row), into a table without AUTO_INCREMENT
  or set (BITMAP/HLL) columns, and the body is in the spool folder (the only one DuckDB may read);
- CSV: no enclose, escape or trim_double_quotes, `\\n` lines and no `\\r` anywhere, no byte order
  mark, uncompressed, a separator that cannot overlap itself, at least two fields;
- Parquet: the fields it has are of types whose text DuckDB writes as Arrow does (`_parquet_text`).

What the chunked path gives, this one gives too: a CSV line whose number of fields is not the
load's is filtered with the same reason (DuckDB's rejects table names it), a line that is not UTF-8
too; the rows a check rejects are found again by their place in the file for the error log's text
(a second read, only when there are any); `\\N` is NULL, an empty field the empty string; empty
lines are skipped; `skip_lines` skips lines before any of that. Rows keep the file's order
(`__seq`), as rows of one key merge in it.
"""

from __future__ import annotations

import threading
import uuid
from collections.abc import Iterable, Iterator
from itertools import chain
from pathlib import Path

import duckdb
import numpy as np
import pyarrow as pa
import pyarrow.parquet as pq

from projections.load_source import LoadedBatch, plan_load, source_fields
from projections.rows import REASON, routed_query, split_routed
from projections.state import TableState
from query.context import running_guard
from query.spool import spool_dir
from query.stream_load.request import StreamLoadRequest
from storage.paths import HIDDEN_SEQ
from storage.rowset_sql import duck_type, quote_ident, quote_literal
from storage.sandbox import sandboxed_connection
from storage.set_values import SET_DUCK_TYPE

# Rows per Arrow batch, at most: large enough that per-batch costs vanish; fewer when rows are wide,
# so a batch holds about a chunk's bytes (STRATA_STREAM_LOAD_CHUNK_BYTES) whatever the body's size.
BATCH_ROWS = 1 << 19
_MIN_BATCH_ROWS = 1024
_SCAN_BYTES = 8 << 20  # `_lines` reads this much at a time
# DuckDB's reader rejects a line longer than its max_line_size (2 MB), which the chunked path reads:
# the pre-scan reads pieces of this size, and a full piece with no line end means a line at least
# this long (a line of 2 MB holds three whole pieces), which the chunked path takes.
_PIECE_BYTES = 512 << 10
_OFFSET = "__o"
# The reader's buffers (DuckDB's default, 16 × its 2 MB max_line_size, took ~200 MB at the peak with
# both threads reading): four lines of the longest length it reads.
_CSV_BUFFER_BYTES = 8 << 20
# strftime formats writing a Parquet timestamp as Arrow's cast to text does: the unit's fraction digits.
_TIMESTAMP_TEXT = {"s": "%Y-%m-%d %H:%M:%S", "ms": "%Y-%m-%d %H:%M:%S.%g", "us": "%Y-%m-%d %H:%M:%S.%f"}

# A batch, the (reason, text) of the rows it rejects, and the share of the file read so far (about).
Checked = tuple[LoadedBatch, Iterable[tuple[str, str]], float]

_connections: dict[Path, duckdb.DuckDBPyConnection] = {}
_connections_lock = threading.Lock()


def _connection(folder: Path) -> duckdb.DuckDBPyConnection:
    """A sandboxed DuckDB that may read the spool folder (and nothing else), one per folder."""
    with _connections_lock:
        if folder not in _connections:
            _connections[folder] = sandboxed_connection([folder])
        return _connections[folder]


def usable(table: TableState, request: StreamLoadRequest, path: Path, home: Path) -> bool:
    """Whether this body (spooled under `home`) loads by one statement with exactly the chunked
    path's result."""
    if request.where_sql is not None or request.delete_sql not in (None, "true") \
            or any(c.expr_sql is not None for c in request.columns):
        return False
    if table.auto_increment_column is not None or \
            any(duck_type(c.type) == SET_DUCK_TYPE for c in table.schema_now.columns):
        return False
    if path.resolve().parent != spool_dir(home).resolve():
        return False
    if request.format == "parquet":
        return _ParquetBody.usable(request, path, source_fields(request, table))
    if request.format == "csv":
        return _CsvBody.usable(request, path, source_fields(request, table))
    return False


def _counting(start: int, n: int) -> pa.Array:
    return pa.array(np.arange(start, start + n, dtype=np.int64))


class _Body:
    """A spooled body read by DuckDB on a cursor of its own: its rows as the fields `__f0..` (text,
    as the chunked path's readers give them), and what the chunked path tells of the rows it
    rejects."""

    def __init__(self, path: Path, request: StreamLoadRequest, fields: list[str], batch_bytes: int) -> None:
        self.path, self.request, self.fields = path, request, fields
        row_bytes = self.row_bytes()
        self.batch_rows = min(BATCH_ROWS, max(_MIN_BATCH_ROWS, batch_bytes // row_bytes))
        self.expected_rows = max(1, self.total_rows(row_bytes))
        self.cur = _connection(path.resolve().parent).cursor()
        guard = running_guard()
        if guard is not None:
            guard.track(self.cur)  # a KILL or a timeout interrupts the statement
        self.scratch: list[str] = []  # tables the reads made, dropped by `close`

    def source_sql(self) -> str:
        """`__p, __o, __bad, __f0..`: what `plan_load` reads (`__o` is filled in later)."""
        raise NotImplementedError

    def row_bytes(self) -> int:
        """About how many bytes a row takes, for the batch size."""
        raise NotImplementedError

    def total_rows(self, row_bytes: int) -> int:
        """About how many rows the body holds, for the progress a Broker Load shows."""
        return self.path.stat().st_size // row_bytes

    def rejected_lines(self) -> list[tuple[str, str]]:
        """(reason, text) of the records the reader itself rejected, in the file's order."""
        return []

    def texts(self, offsets: np.ndarray) -> Iterator[str]:
        """The source text of the rows at `offsets` (ascending places among the rows `source_sql`
        gives), in their order, read again from the file as they are asked for."""
        raise NotImplementedError

    def close(self) -> None:
        for name in self.scratch:
            try:
                self.cur.execute(f"DROP TABLE IF EXISTS {name}")
            except duckdb.Error:
                pass
        self.cur.close()


class _CsvBody(_Body):
    @staticmethod
    def usable(request: StreamLoadRequest, path: Path, fields: list[str]) -> bool:
        if request.enclose is not None or request.escape is not None or request.trim_double_quotes \
                or request.compress_type is not None or request.line_delimiter != "\n":
            return False
        if not _separator_fits(request.column_separator):
            return False
        if len(fields) < 2:
            return False  # one field: an empty line is a row to DuckDB, skipped by the chunked path
        return _plain_lines(path)

    def __init__(self, path: Path, request: StreamLoadRequest, fields: list[str], batch_bytes: int) -> None:
        super().__init__(path, request, fields, batch_bytes)
        self.rejects = self._read_csv()

    def _read_csv(self) -> str:
        """A new `read_csv(…)` of the body, its rejects table named; the rejects table's name."""
        name = f"__rejects_{uuid.uuid4().hex}"
        self.scratch += [name, f"{name}_scan"]
        columns = ", ".join(f"'__f{i}': 'VARCHAR'" for i in range(len(self.fields)))
        self.read_sql = (
            f"read_csv({quote_literal(str(self.path))}, delim = {quote_literal(self.request.column_separator)}, "
            f"header = false, quote = '', escape = '', nullstr = '\\N', new_line = '\\n', auto_detect = false, "
            f"columns = {{{columns}}}, skip = {self.request.skip_lines}, null_padding = false, "
            f"strict_mode = true, buffer_size = {_CSV_BUFFER_BYTES}, store_rejects = true, "
            f"rejects_table = '{name}', rejects_scan = '{name}_scan')")
        return name

    def source_sql(self) -> str:
        names = ", ".join(f"__f{i}" for i in range(len(self.fields)))
        return f"SELECT 0::INTEGER AS __p, 0::BIGINT AS __o, NULL::VARCHAR AS __bad, {names} FROM {self.read_sql}"

    def row_bytes(self) -> int:
        with open(self.path, "rb") as body:
            sample = body.read(1 << 20)
        return max(1, len(sample) // max(1, sample.count(b"\n")))

    def rejected_lines(self) -> list[tuple[str, str]]:
        """The text is read from the file (the rejects table's copy has '?' for bytes not UTF-8)."""
        found = self.cur.sql(f"SELECT line, error_type, error_message FROM {self.rejects} ORDER BY line").fetchall()
        lines = _lines(self.path, [int(number) for number, _, _ in found])
        sep, count = self.request.column_separator, len(self.fields)
        rejected = []
        for number, kind, message in found:
            text = lines.get(int(number), b"").decode("utf-8", "replace")
            rejected.append((_reason(kind, text, message or "", sep, count), text))
        return rejected

    def texts(self, offsets: np.ndarray) -> Iterator[str]:
        self._read_csv()  # read again (with a rejects table of its own, so the rows are the same)
        sep = self.request.column_separator
        names = [f"__f{i}" for i in range(len(self.fields))]
        for row in _rows_at(self.cur.sql(self.source_sql()).to_arrow_reader(self.batch_rows), offsets, names):
            yield sep.join("\\N" if row[n] is None else str(row[n]) for n in names)


class _ParquetBody(_Body):
    @staticmethod
    def usable(request: StreamLoadRequest, path: Path, fields: list[str]) -> bool:
        if request.compress_type is not None:
            return False  # the chunked path refuses it
        try:
            schema = pq.read_schema(str(path))
        except (pa.ArrowInvalid, OSError):
            return False  # the chunked path says why
        by_name = {n.lower(): n for n in schema.names}
        present = [by_name[f.lower()] for f in fields if f.lower() in by_name]
        return bool(present) and len(set(present)) == len(present) and len(by_name) == len(schema.names) \
            and all(_parquet_text(quote_ident(n), schema.field(n).type) is not None for n in present)

    def __init__(self, path: Path, request: StreamLoadRequest, fields: list[str], batch_bytes: int) -> None:
        super().__init__(path, request, fields, batch_bytes)
        self.schema = pq.read_schema(str(path))

    def source_sql(self) -> str:
        by_name = {n.lower(): n for n in self.schema.names}
        columns = []
        for i, name in enumerate(self.fields):
            found = by_name.get(name.lower())
            text = None if found is None else _parquet_text(quote_ident(found), self.schema.field(found).type)
            columns.append(f"{text or 'NULL::VARCHAR'} AS __f{i}")
        return (f"SELECT 0::INTEGER AS __p, 0::BIGINT AS __o, NULL::VARCHAR AS __bad, {', '.join(columns)} "
                f"FROM read_parquet({quote_literal(str(self.path))})")

    def total_rows(self, row_bytes: int) -> int:
        return int(pq.ParquetFile(str(self.path)).metadata.num_rows)

    def row_bytes(self) -> int:
        meta = pq.ParquetFile(str(self.path)).metadata
        total = sum(meta.row_group(i).total_byte_size for i in range(meta.num_row_groups))
        return max(1, total // max(1, meta.num_rows))

    def texts(self, offsets: np.ndarray) -> Iterator[str]:
        # As the chunked path prints a Parquet row (readers.fields_source): its fields the file has.
        by_name = {n.lower(): n for n in self.schema.names}
        shown = [by_name[f.lower()] for f in self.fields if f.lower() in by_name]
        batches = pq.ParquetFile(str(self.path)).iter_batches(batch_size=self.batch_rows, columns=shown)
        return (str(row) for row in _rows_at(batches, offsets, shown))


def _parquet_text(column: str, kind: pa.DataType) -> str | None:
    """DuckDB SQL writing a Parquet column as `readers._as_text` writes it, or None for a type whose
    text could differ (floats, zoned or nanosecond times, nested and binary values)."""
    if pa.types.is_integer(kind) or pa.types.is_decimal(kind) or pa.types.is_date32(kind):
        return f"CAST({column} AS VARCHAR)"
    if pa.types.is_string(kind) or pa.types.is_large_string(kind):
        return column
    if pa.types.is_boolean(kind):
        return f"CAST(CAST({column} AS TINYINT) AS VARCHAR)"
    if pa.types.is_timestamp(kind) and kind.tz is None and kind.unit in _TIMESTAMP_TEXT:
        return f"strftime({column}, '{_TIMESTAMP_TEXT[kind.unit]}')"
    return None


def _rows_at(batches: Iterator[pa.RecordBatch], offsets: np.ndarray, names: list[str]) -> Iterator[dict[str, object]]:
    """The rows at `offsets` (ascending) among the batches' rows (their `names` columns), in order."""
    start = 0
    for batch in batches:
        first, end = np.searchsorted(offsets, [start, start + batch.num_rows])
        if end > first:
            yield from batch.select(names).take(pa.array(offsets[first:end] - start)).to_pylist()
        start += batch.num_rows
        if end == len(offsets):
            return


def _separator_fits(separator: str) -> bool:
    """DuckDB takes a separator of up to 4 bytes; one that may overlap itself (`||` in `|||`) is
    split left to right by the chunked path, which DuckDB does not promise."""
    raw = separator.encode()
    if not 1 <= len(raw) <= 4 or b"\n" in raw or b"\r" in raw:
        return False
    return all(raw[:k] != raw[-k:] for k in range(1, len(raw)))


def _plain_lines(path: Path) -> bool:
    """No carriage return anywhere (DuckDB's reader ends a line at one, the chunked path only drops
    one ending a line), no byte order mark (DuckDB drops it, the chunked path keeps it) and no line
    that may be too long for DuckDB's reader (see _PIECE_BYTES)."""
    with open(path, "rb") as body:
        first = True
        while piece := body.read(_PIECE_BYTES):
            if (first and piece.startswith(b"\xef\xbb\xbf")) or b"\r" in piece \
                    or (len(piece) == _PIECE_BYTES and b"\n" not in piece):
                return False
            first = False
    return True


def _reason(error_type: str, line: str, message: str, separator: str, count: int) -> str:
    """The chunked path's reason for a line DuckDB's reader rejected."""
    if error_type in ("MISSING COLUMNS", "TOO MANY COLUMNS"):
        found = len(line.split(separator))
        return f"the record has {found} columns separated by {separator!r}, the job expects {count}"
    if error_type == "INVALID ENCODING":
        return "the record is not valid UTF-8"
    return f"the record cannot be read: {message}"


def _lines(path: Path, numbers: list[int]) -> dict[int, bytes]:
    """The file's lines of these numbers (1 up, as DuckDB counts them), read in one pass."""
    wanted = sorted(set(numbers))
    found: dict[int, bytes] = {}
    number, rest = 1, b""  # the number of the line `rest` starts
    with open(path, "rb") as body:
        while wanted:
            chunk = body.read(_SCAN_BYTES)
            data = rest + chunk
            complete = data.count(b"\n") if chunk else data.count(b"\n") + 1
            if wanted[0] < number + complete:
                lines = data.split(b"\n")
                while wanted and wanted[0] < number + complete:
                    line = wanted.pop(0)
                    found[line] = lines[line - number]
            if not chunk:
                break
            cut = data.rfind(b"\n") + 1
            number, rest = number + data.count(b"\n", 0, cut), data[cut:]
    return found


def batches(table: TableState, request: StreamLoadRequest, path: Path, batch_bytes: int) -> Iterator[Checked]:
    """The body's rows, mapped, typed, checked and routed, about `batch_bytes` at a time, each with the
    (reason, source text) of the rows it rejects, which the last one carries, and the share of the
    file read; `usable` must hold.
    Raises RowsRejected for a mapping that names a column the table lacks (nothing read yet)."""
    fields = source_fields(request, table)
    body: _Body = (_ParquetBody if request.format == "parquet" else _CsvBody)(path, request, fields, batch_bytes)
    try:
        plan = plan_load(request, table, parsed_sql=body.source_sql(), delete_sql=request.delete_sql)
        query = routed_query(table, plan.sql, plan.targets, strict=request.strict_mode,
                             partitions=request.partitions, passthrough=(), sign_from=plan.sign_from, seq_sql="0")
        start = 0
        # The rows a check rejected: their offsets and reasons, compact (a load may reject millions).
        offsets: list[pa.Array] = []
        reasons: list[pa.Array] = []
        for batch in body.cur.sql(query.sql).to_arrow_reader(body.batch_rows):
            n = batch.num_rows
            if not n:
                continue
            data = pa.Table.from_batches([batch])
            # The reader keeps the file's order: a row's place in it is its offset and its order.
            data = data.set_column(data.column_names.index(HIDDEN_SEQ), HIDDEN_SEQ, _counting(0, n))
            data = data.append_column(_OFFSET, _counting(start, n))
            good, bad = split_routed(table, data, query.checks, request.partitions, (_OFFSET,))
            if bad.num_rows:
                offsets.append(bad[_OFFSET].combine_chunks())
                reasons.append(bad[REASON].combine_chunks().dictionary_encode())
            start += n
            yield LoadedBatch(good, _rejected(0), 0), [], min(1.0, start / body.expected_rows)
        lines = body.rejected_lines()
        failed = np.concatenate([o.to_numpy() for o in offsets]) if offsets else np.zeros(0, np.int64)
        # The texts are read again as the error log takes them, never all held.
        checked = zip((r for chunk in reasons for r in chunk.to_pylist()), body.texts(failed), strict=True) \
            if len(failed) else iter(())
        yield LoadedBatch(pa.table({}), _rejected(len(lines) + len(failed)), 0), chain(lines, checked), 1.0
    finally:
        body.close()


def _rejected(count: int) -> pa.Table:
    """A LoadedBatch's `bad` of `count` rows (their texts travel beside it)."""
    return pa.table({"__p": pa.array([0] * count, pa.int32()), "__o": pa.array(range(count), pa.int64()),
                     REASON: pa.array([""] * count, pa.string())})
