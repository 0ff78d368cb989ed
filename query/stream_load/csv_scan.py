"""A plain CSV body loaded by one DuckDB statement: DuckDB's parallel CSV reader splits the whole
spooled file, and the same statement maps, types, checks and routes its rows (`rows.routed_query`
over `load_source.plan_load`), which come out as Arrow batches for the load's `RowsetsWriter`.

The chunked path (`readers`) cuts the body into lines with Arrow, has DuckDB split each line again,
and runs two statements and several Arrow filters per 8 MB chunk; this one reads each byte once, in
C++, on every core. Only the bodies whose meaning DuckDB's reader gives exactly take it (`usable`):
no enclose, escape or trim_double_quotes, `\\n` lines without `\\r`, an uncompressed body, a
separator that cannot overlap itself, and a mapping with no expression that could fail on a row
(no COLUMNS expression, WHERE or delete condition) into a table without AUTO_INCREMENT or set
columns. Everything else keeps the chunked path.

What the chunked path gives, this one gives too: a line whose number of fields is not the load's is
filtered with the same reason (DuckDB's rejects table names it), a line that is not UTF-8 too; the
rows a check rejects are found again by their place in the file for the error log's text (a second
read, only when there are any); `\\N` is NULL, an empty field the empty string; empty lines are
skipped; `skip_lines` skips lines before any of that. Rows keep the file's order (`__seq`), as rows
of one key merge in it.
"""

from __future__ import annotations

import threading
import uuid
from collections.abc import Iterator
from pathlib import Path

import duckdb
import numpy as np
import pyarrow as pa

from projections.load_source import LoadedBatch, plan_load, source_fields
from projections.rows import REASON, routed_query, split_routed
from projections.state import TableState
from query.context import running_guard
from query.spool import spool_dir
from query.stream_load.request import StreamLoadRequest
from storage.paths import HIDDEN_SEQ
from storage.rowset_sql import duck_type, quote_literal
from storage.sandbox import sandboxed_connection
from storage.set_values import SET_DUCK_TYPE

# Rows per Arrow batch: large enough that per-batch costs vanish, small enough that a load holds
# little (a batch, the writer's part in flight, DuckDB's own buffers) whatever the body's size.
BATCH_ROWS = 1 << 19
_SCAN_BYTES = 8 << 20  # the pre-scan for carriage returns reads this much at a time
_OFFSET = "__o"
# A line longer than DuckDB's default (2 MB) would be rejected, where the chunked path reads it.
_MAX_LINE_BYTES = 64 << 20

_connections: dict[Path, duckdb.DuckDBPyConnection] = {}
_connections_lock = threading.Lock()


def _connection(folder: Path) -> duckdb.DuckDBPyConnection:
    """A sandboxed DuckDB that may read the spool folder (and nothing else), one per folder."""
    with _connections_lock:
        if folder not in _connections:
            _connections[folder] = sandboxed_connection([folder])
        return _connections[folder]


def _separator_fits(separator: str) -> bool:
    """DuckDB takes a separator of up to 4 bytes; one that may overlap itself (`||` in `|||`) is
    split left to right by the chunked path, which DuckDB does not promise."""
    raw = separator.encode()
    if not 1 <= len(raw) <= 4 or b"\n" in raw or b"\r" in raw:
        return False
    return all(raw[:k] != raw[-k:] for k in range(1, len(raw)))


def usable(table: TableState, request: StreamLoadRequest, path: Path, home: Path) -> bool:
    """Whether this body (spooled under `home`) loads by one statement with exactly the chunked
    path's result."""
    if request.format != "csv" or request.enclose is not None or request.escape is not None \
            or request.trim_double_quotes or request.compress_type is not None or request.line_delimiter != "\n":
        return False
    if not _separator_fits(request.column_separator) or request.where_sql is not None \
            or request.delete_sql not in (None, "true") or any(c.expr_sql is not None for c in request.columns):
        return False
    if table.auto_increment_column is not None or \
            any(duck_type(c.type) == SET_DUCK_TYPE for c in table.schema_now.columns):
        return False
    if len(source_fields(request, table)) < 2:
        return False  # one field: an empty line is a row to DuckDB, skipped by the chunked path
    if path.resolve().parent != spool_dir(home).resolve():
        return False  # DuckDB may read the spool folder only
    return _plain_lines(path)


def _plain_lines(path: Path) -> bool:
    """No carriage return anywhere (DuckDB's reader ends a line at one, the chunked path only drops
    one ending a line) and no byte order mark (DuckDB drops it, the chunked path keeps it)."""
    with open(path, "rb") as body:
        first = True
        while chunk := body.read(_SCAN_BYTES):
            if (first and chunk.startswith(b"\xef\xbb\xbf")) or b"\r" in chunk:
                return False
            first = False
    return True


def _read_csv(path: Path, request: StreamLoadRequest, fields: list[str], rejects: str) -> str:
    columns = ", ".join(f"'__f{i}': 'VARCHAR'" for i in range(len(fields)))
    return (f"read_csv({quote_literal(str(path))}, delim = {quote_literal(request.column_separator)}, "
            f"header = false, quote = '', escape = '', nullstr = '\\N', new_line = '\\n', auto_detect = false, "
            f"columns = {{{columns}}}, skip = {request.skip_lines}, null_padding = false, strict_mode = true, "
            f"max_line_size = {_MAX_LINE_BYTES}, store_rejects = true, rejects_table = '{rejects}', "
            f"rejects_scan = '{rejects}_scan')")


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


def _counting(start: int, n: int) -> pa.Array:
    return pa.array(np.arange(start, start + n, dtype=np.int64))


class _Scan:
    """One body's statement on its own cursor, with its rejects tables dropped after."""

    def __init__(self, path: Path, request: StreamLoadRequest, fields: list[str]) -> None:
        self.path, self.request, self.fields = path, request, fields
        self.cur = _connection(path.resolve().parent).cursor()
        guard = running_guard()
        if guard is not None:
            guard.track(self.cur)  # a KILL or a timeout interrupts the statement
        self.rejects = f"__rejects_{uuid.uuid4().hex}"

    def source_sql(self) -> str:
        names = ", ".join(f"__f{i}" for i in range(len(self.fields)))
        return (f"SELECT 0::INTEGER AS __p, 0::BIGINT AS __o, NULL::VARCHAR AS __bad, {names} "
                f"FROM {_read_csv(self.path, self.request, self.fields, self.rejects)}")

    def rejected_lines(self) -> list[tuple[str, str]]:
        """(reason, text) of each line the reader rejected, in the file's order; the text is read
        from the file (the rejects table's copy has '?' for bytes that are not UTF-8)."""
        found = self.cur.sql(f"SELECT line, error_type, error_message FROM {self.rejects} ORDER BY line").fetchall()
        lines = _lines(self.path, [int(number) for number, _, _ in found])
        sep, count = self.request.column_separator, len(self.fields)
        rejected = []
        for number, kind, message in found:
            text = lines.get(int(number), b"").decode("utf-8", "replace")
            rejected.append((_reason(kind, text, message or "", sep, count), text))
        return rejected

    def texts(self, offsets: list[int]) -> dict[int, str]:
        """The source text of the rows at `offsets` (their places among the rows the reader gave)."""
        wanted = sorted(set(offsets))
        found: dict[int, str] = {}
        sep = self.request.column_separator
        reader = self.cur.sql(self.source_sql().replace(self.rejects, f"{self.rejects}_again")) \
            .fetch_record_batch(BATCH_ROWS)
        start = 0
        names = [f"__f{i}" for i in range(len(self.fields))]
        for batch in reader:
            inside = [o for o in wanted if start <= o < start + batch.num_rows]
            if inside:
                picked = batch.select(names).take(pa.array([o - start for o in inside], pa.int64())).to_pylist()
                for offset, row in zip(inside, picked, strict=True):
                    found[offset] = sep.join("\\N" if row[n] is None else str(row[n]) for n in names)
            start += batch.num_rows
            if start > wanted[-1]:
                break
        return found

    def close(self) -> None:
        for name in (self.rejects, f"{self.rejects}_again"):
            for suffix in ("", "_scan"):
                try:
                    self.cur.execute(f"DROP TABLE IF EXISTS {name}{suffix}")
                except duckdb.Error:
                    pass
        self.cur.close()


Checked = tuple[LoadedBatch, list[tuple[str, str]]]  # a batch and the (reason, text) of the rows it rejects


def scan(table: TableState, request: StreamLoadRequest, path: Path) -> Iterator[Checked]:
    """The body's rows, mapped, typed, checked and routed, a batch at a time, each with the
    (reason, source text) of the rows it rejects, which the last one carries; `usable` must hold.
    Raises RowsRejected for a mapping that names a column the table lacks (nothing read yet)."""
    fields = source_fields(request, table)
    job = _Scan(path, request, fields)
    try:
        plan = plan_load(request, table, parsed_sql=job.source_sql(), delete_sql=request.delete_sql)
        query = routed_query(table, plan.sql, plan.targets, strict=request.strict_mode,
                             partitions=request.partitions, passthrough=(), sign_from=plan.sign_from, seq_sql="0")
        reader = job.cur.sql(query.sql).fetch_record_batch(BATCH_ROWS)
        start = 0
        failed: list[tuple[int, str]] = []  # (offset, reason) of the rows a check rejected
        for batch in reader:
            n = batch.num_rows
            if not n:
                continue
            data = pa.Table.from_batches([batch])
            data = data.set_column(data.column_names.index(HIDDEN_SEQ), HIDDEN_SEQ, _counting(0, n))
            data = data.append_column(_OFFSET, _counting(start, n))
            good, bad = split_routed(table, data, query.checks, request.partitions, (_OFFSET,))
            failed += zip(bad[_OFFSET].to_pylist(), bad[REASON].to_pylist(), strict=True)
            start += n
            yield LoadedBatch(good, _rejected(0), 0), []
        lines = job.rejected_lines()
        texts = job.texts([o for o, _ in failed]) if failed else {}
        rejected = lines + [(reason, texts.get(offset, "")) for offset, reason in failed]
        yield LoadedBatch(pa.table({}), _rejected(len(rejected)), 0), rejected
    finally:
        job.close()


def _rejected(count: int) -> pa.Table:
    """A LoadedBatch's `bad` of `count` rows (their texts travel beside it)."""
    return pa.table({"__p": pa.array([0] * count, pa.int32()), "__o": pa.array(range(count), pa.int64()),
                     REASON: pa.array([""] * count, pa.string())})

