"""A Stream Load's spooled body as the input of `projections.load_source.load_batch`.

Two shapes, both read from the spool file (decompressed on the fly), never from the request:
- records (`load_source.RECORDS`): one per line for line-based CSV and JSON, or the whole body as
  one JSON document; load_source parses them exactly as a routine load parses Kafka records;
- fields already split (`__p, __o, __bad, __f0..__fn`, all text): CSV with quoting (pyarrow's CSV
  reader) and Parquet, whose columns are matched by name. `PARSED_SQL` reads them.
"""

from __future__ import annotations

from collections.abc import Callable, Iterable, Iterator
from dataclasses import dataclass, replace
from pathlib import Path
from typing import BinaryIO

import pyarrow as pa
import pyarrow.compute as pc
import pyarrow.csv as pacsv
import pyarrow.parquet as pq

from projections.load_source import RECORDS
from query.stream_load.request import BadRequest, StreamLoadRequest

PARSED_SQL = "SELECT * FROM __records"
_CHUNK = 1 << 20


@dataclass(frozen=True)
class Source:
    """What `load_batch` reads: `records`, and `parsed_sql` when they hold fields, not raw records."""

    records: pa.Table
    parsed_sql: str | None
    # The text of a record or row by its `__o`, for the error log (Doris prints the source line);
    # made only for the rows a load rejects ("" for an offset it does not know).
    line: Callable[[int], str]
    # How much of the body was read once these records were cut, from 0 to 1 (a Broker Load's SHOW LOAD
    # progress): the file's position, or the rows read of a Parquet file's.
    read_share: float = 1.0


def _text_at(values: pa.Array) -> Callable[[int], str]:
    def line(offset: int) -> str:
        if not 0 <= offset < len(values):
            return ""
        value = values[offset].as_py()
        return value.decode("utf-8", "replace") if isinstance(value, bytes) else "" if value is None else str(value)
    return line


def _split_lines(body: BinaryIO, delimiter: bytes) -> Iterator[bytes]:
    """The body's records between delimiters, read a chunk at a time; a last empty record is dropped."""
    for lines in _line_arrays(body, delimiter):
        yield from lines.to_pylist()


def _line_arrays(body: BinaryIO, delimiter: bytes, read_bytes: int = _CHUNK) -> Iterator[pa.Array]:
    """The body's records between delimiters as binary arrays, `read_bytes` at a time, split by Arrow:
    a Python bytes object per line cost more than the rest of a CSV load. A last empty record is dropped."""
    rest = b""
    while True:
        chunk = body.read(read_bytes)
        if not chunk:
            break
        # Split left to right, the last part kept for the next chunk: a delimiter of several bytes is
        # then found where a split of the whole body finds it, even across chunks ("||" in "|||").
        parts = pc.list_flatten(pc.split_pattern(pa.array([rest + chunk], pa.binary()), delimiter))
        rest = parts[len(parts) - 1].as_py()
        if len(parts) > 1:
            yield parts.slice(0, len(parts) - 1)
    if rest:
        yield pa.array([rest], pa.binary())


def _counting(n: int) -> pa.Array:
    """0, 1, …, n-1 (a record's offset in its batch)."""
    return pc.subtract(pc.cumulative_sum(pa.nulls(n, pa.int64()).fill_null(1)), 1)


def _records(lines: list[bytes] | pa.Array) -> Source:
    values = lines if isinstance(lines, pa.Array) else pa.array(lines, pa.binary())
    n = len(values)
    table = pa.table([pa.nulls(n, pa.int32()).fill_null(0), _counting(n), values], schema=RECORDS)
    return Source(table, None, _text_at(values))


def _batches(lines: Iterable[bytes], max_bytes: int | None) -> Iterator[Source]:
    """Records of about `max_bytes` at a time (None: all in one); always at least one, maybe empty."""
    batch: list[bytes] = []
    size = 0
    for line in lines:
        batch.append(line)
        size += len(line) + 1
        if max_bytes is not None and size >= max_bytes:
            yield _records(batch)
            batch, size = [], 0
    if batch or size == 0:
        yield _records(batch)


def _array_batches(arrays: Iterable[pa.Array], max_bytes: int | None) -> Iterator[Source]:
    """`_batches` of records already in Arrow arrays."""
    batch: list[pa.Array] = []
    size = 0
    for lines in arrays:
        batch.append(lines)
        size += lines.nbytes
        if max_bytes is not None and size >= max_bytes:
            yield _records(pa.concat_arrays(batch))
            batch, size = [], 0
    if batch or size == 0:
        yield _records(pa.concat_arrays(batch) if batch else pa.array([], pa.binary()))


def _skipped(arrays: Iterable[pa.Array], count: int) -> Iterator[pa.Array]:
    """The records after the first `count`."""
    for lines in arrays:
        if count >= len(lines):
            count -= len(lines)
            continue
        yield lines.slice(count)
        count = 0


def _csv_by_lines(request: StreamLoadRequest, body: BinaryIO, max_bytes: int | None) -> Iterator[Source]:
    """Plain CSV (any separator and line delimiter, no enclose): load_source splits each line."""
    delimiter = request.line_delimiter.encode()
    arrays = _skipped(_line_arrays(body, delimiter, min(_CHUNK, max_bytes or _CHUNK)), request.skip_lines)
    if delimiter == b"\n":
        arrays = (pc.if_else(pc.ends_with(lines, "\r"), pc.binary_slice(lines, 0, -1), lines) for lines in arrays)
    arrays = (pc.filter(lines, pc.greater(pc.binary_length(lines), 0)) for lines in arrays)
    if request.trim_double_quotes:
        separator = request.column_separator.encode()
        arrays = (pa.array([separator.join(_unquoted(f) for f in line.split(separator)) for line in lines.to_pylist()],
                           pa.binary()) for lines in arrays)
    return _array_batches(arrays, max_bytes)


def _unquoted(field: bytes) -> bytes:
    return field[1:-1] if len(field) >= 2 and field.startswith(b'"') and field.endswith(b'"') else field


def _csv_quoted(request: StreamLoadRequest, body: BinaryIO, count: int) -> Source:
    """CSV with `enclose`/`escape`: pyarrow's reader, every field text; rows with another number of
    fields are kept aside as bad rows with Doris' reason."""
    bad: list[tuple[int, str, str]] = []

    def invalid(row: pacsv.InvalidRow) -> str:
        which = "less" if row.actual_columns < row.expected_columns else "more"
        bad.append((row.number or 0, f"actual column number is {which} than schema column number "
                                     f"({row.actual_columns} vs {row.expected_columns})", row.text))
        return "skip"

    names = [f"__f{i}" for i in range(count)]
    try:
        table = pacsv.read_csv(
            body,
            read_options=pacsv.ReadOptions(column_names=names, skip_rows=request.skip_lines, block_size=_CHUNK),
            parse_options=pacsv.ParseOptions(delimiter=request.column_separator, quote_char=request.enclose or False,
                                             escape_char=request.escape or False,
                                             newlines_in_values=request.enclose is not None,
                                             invalid_row_handler=invalid),
            convert_options=pacsv.ConvertOptions(column_types=dict.fromkeys(names, pa.string()),
                                                 null_values=["\\N"], strings_can_be_null=True,
                                                 quoted_strings_can_be_null=False))
    except pa.ArrowInvalid as exc:
        raise BadRequest(f"the CSV body cannot be read: {exc}") from None
    if request.trim_double_quotes:
        table = pa.table([_trimmed(table.column(n)) for n in names], names=names)
    good = table.num_rows
    fields = [pa.concat_arrays([table.column(n).combine_chunks().cast(pa.string()),
                                pa.nulls(len(bad), pa.string())]) for n in names]
    reasons = pa.array([None] * good + [reason for _, reason, _ in bad], pa.string())
    sep = request.column_separator

    def line(offset: int) -> str:
        if 0 <= offset < good:
            values = (column[offset].as_py() for column in table.columns)
            return sep.join("\\N" if v is None else str(v) for v in values)
        return bad[offset - good][2] if good <= offset < good + len(bad) else ""
    total = good + len(bad)
    parsed = pa.table([pa.array([0] * total, pa.int32()), pa.array(range(total), pa.int64()), reasons, *fields],
                      names=["__p", "__o", "__bad", *names])
    return Source(parsed, PARSED_SQL, line)


def _trimmed(column: pa.ChunkedArray) -> pa.ChunkedArray:
    quoted = pc.and_(pc.and_(pc.starts_with(column, '"'), pc.ends_with(column, '"')),
                     pc.greater_equal(pc.utf8_length(column), 2))
    return pc.if_else(quoted, pc.utf8_slice_codeunits(column, 1, -1), column)


def _json(request: StreamLoadRequest, body: BinaryIO, max_bytes: int | None) -> Iterator[Source]:
    if request.read_json_by_line:
        delimiter = request.line_delimiter.encode()
        stripped = (line.strip() for line in _split_lines(body, delimiter))
        return _batches((line for line in stripped if line), max_bytes)
    document = body.read()
    return iter([_records([document] if document.strip() else [])])


def _parquet(path: Path, fields: list[str], max_bytes: int | None) -> Iterator[Source]:
    """The file's rows, about `max_bytes` (uncompressed) at a time (None: all at once)."""
    try:
        file = pq.ParquetFile(str(path))
        if max_bytes is None:
            yield fields_source(file.read(), fields, "Parquet file")
            return
        meta = file.metadata
        per_row = sum(meta.row_group(i).total_byte_size for i in range(meta.num_row_groups)) // max(meta.num_rows, 1)
        batches = file.iter_batches(batch_size=max(1024, max_bytes // max(per_row, 1)))
        read = 0
        for batch in batches:
            read += batch.num_rows
            source = fields_source(pa.Table.from_batches([batch]), fields, "Parquet file")
            yield replace(source, read_share=read / max(meta.num_rows, 1))
        if not read:
            yield fields_source(file.schema_arrow.empty_table(), fields, "Parquet file")
    except (pa.ArrowInvalid, OSError) as exc:
        raise BadRequest(f"the body is not a Parquet file: {exc}") from None


def _orc(path: Path, fields: list[str], max_bytes: int | None) -> Iterator[Source]:
    """The file's rows, a stripe at a time (None: all at once). A stripe is ORC's unit of reading, as a
    row group is Parquet's: writers bound it (64 MB by default), so memory stays bounded."""
    from pyarrow import orc  # optional part of pyarrow: imported only when asked for
    try:
        file = orc.ORCFile(str(path))
        if max_bytes is None or file.nstripes == 0:
            yield fields_source(file.read(), fields, "ORC file")
            return
        read = 0
        for stripe in range(file.nstripes):
            batch = file.read_stripe(stripe)
            read += batch.num_rows
            source = fields_source(pa.Table.from_batches([batch]), fields, "ORC file")
            yield replace(source, read_share=read / max(file.nrows, 1))
    except (pa.ArrowInvalid, OSError) as exc:
        raise BadRequest(f"the body is not an ORC file: {exc}") from None


def fields_source(table: pa.Table, fields: list[str], what: str) -> Source:
    """A decoded file's columns (Parquet, ORC, CSV with names) matched to the load's fields by name
    (any case); a field the file lacks is NULL."""
    by_name = {n.lower(): n for n in table.column_names}
    missing = [f for f in fields if f.lower() not in by_name]
    if len(missing) == len(fields):
        raise BadRequest(f"the {what} has none of the columns {', '.join(fields)}")
    columns = []
    for name in fields:
        found = by_name.get(name.lower())
        columns.append(pa.nulls(table.num_rows, pa.string()) if found is None else
                       _as_text(table.column(found).combine_chunks()))
    n = table.num_rows
    parsed = pa.table([pa.array([0] * n, pa.int32()), pa.array(range(n), pa.int64()), pa.nulls(n, pa.string()),
                       *columns], names=["__p", "__o", "__bad", *(f"__f{i}" for i in range(len(fields)))])
    shown = table.select([by_name[f.lower()] for f in fields if f.lower() in by_name])

    def line(offset: int) -> str:
        return str(shown.slice(offset, 1).to_pylist()[0]) if 0 <= offset < shown.num_rows else ""
    return Source(parsed, PARSED_SQL, line)


def _as_text(values: pa.Array) -> pa.Array:
    """A Parquet column as the text a CSV would hold: times without a zone, booleans as 0/1."""
    kind = values.type
    if pa.types.is_timestamp(kind):
        # Arrow's cast writes `YYYY-MM-DD HH:MM:SS` and the unit's fraction digits, as strftime's %S does,
        # at a thirtieth of strftime's cost (which was a third of a Parquet load's time).
        return pc.cast(values.cast(pa.timestamp(kind.unit)), pa.string())
    if pa.types.is_boolean(kind):
        return values.cast(pa.int8()).cast(pa.string())
    return values.cast(pa.string())


def read_sources(request: StreamLoadRequest, path: Path, fields: list[str], max_bytes: int | None) -> Iterator[Source]:
    """The body as load_batch's inputs, read about `max_bytes` at a time (None: the whole body as one;
    a CSV with enclose/escape and a JSON document are always one); `fields` are the load's source
    fields (load_source.source_fields). At least one Source comes, maybe empty."""
    if request.format in ("parquet", "orc"):
        if request.compress_type is not None:
            raise BadRequest(f"compress_type does not apply to {request.format} (it compresses inside)")
        yield from _parquet(path, fields, max_bytes) if request.format == "parquet" else _orc(path, fields, max_bytes)
        return
    size = max(path.stat().st_size, 1)
    with open(path, "rb") as raw:
        body: BinaryIO = raw
        if request.compress_type is not None:
            body = pa.CompressedInputStream(raw, request.compress_type)  # type: ignore[assignment]
        for source in _text(request, body, fields, max_bytes):
            yield replace(source, read_share=min(raw.tell() / size, 1.0))


def _text(request: StreamLoadRequest, body: BinaryIO, fields: list[str], max_bytes: int | None) -> Iterator[Source]:
    if request.format == "json":
        return _json(request, body, max_bytes)
    if request.enclose is not None or request.escape is not None:
        if len(request.column_separator) != 1 or request.line_delimiter not in ("\n", "\r\n"):
            raise BadRequest("enclose/escape with a multi-character column_separator or a line_delimiter "
                             "other than \\n is not supported")
        return iter([_csv_quoted(request, body, len(fields))])
    return _csv_by_lines(request, body, max_bytes)
