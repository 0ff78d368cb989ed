"""Doris' file formats as Arrow tables: reading what S3() and Broker Load fetch, writing what INTO
OUTFILE and EXPORT store.

As in Doris, a CSV file's columns are strings named `c1`, `c2`, … (`csv_with_names`: named by its
first line; `csv_with_names_and_types`: the second line is skipped), `\\N` is NULL, and the column
separator (default `\\t`) and line delimiter (default `\\n`) may be several characters. JSON
(one object per line, or one array with `strip_outer_array`) gives string columns too, nested values
as JSON text. Parquet and ORC keep their own types.
"""

from __future__ import annotations

import bz2
import gzip
import io
import json
from collections.abc import Iterator
from dataclasses import dataclass
from typing import Any, BinaryIO

import pyarrow as pa
import pyarrow.parquet as pq

from query.context import SqlFailure
from schemas.errors import ErrorCode

READ_FORMATS = ("csv", "csv_with_names", "csv_with_names_and_types", "json", "parquet", "orc")
WRITE_FORMATS = ("csv", "csv_with_names", "csv_with_names_and_types", "parquet")
NULL_TEXT = "\\N"


@dataclass(frozen=True)
class TextOptions:
    column_separator: str = "\t"
    line_delimiter: str = "\n"
    skip_lines: int = 0
    trim_double_quotes: bool = False
    strip_outer_array: bool = False
    read_json_by_line: bool = True
    compress_type: str = "plain"


def _unescape(text: str) -> str:
    """Doris writes separators as `\\t`, `\\x01`; the value may arrive with the backslash kept."""
    if "\\" not in text:
        return text
    return text.encode("latin-1", "backslashreplace").decode("unicode_escape")


def _flag(value: str, name: str) -> bool:
    if value.lower() not in ("true", "false"):
        raise SqlFailure(ErrorCode.WRONG_ARGUMENTS, f"'{name}' must be true or false, not '{value}'")
    return value.lower() == "true"


def text_options(properties: dict[str, str]) -> TextOptions:
    """The format options among `properties` (lower-cased keys)."""
    skip = properties.get("skip_lines", "0")
    if not skip.isdigit():
        raise SqlFailure(ErrorCode.WRONG_ARGUMENTS, f"'skip_lines' must be a whole number, not '{skip}'")
    separator = _unescape(properties.get("column_separator", "\t"))
    delimiter = _unescape(properties.get("line_delimiter", "\n"))
    if not separator or not delimiter:
        raise SqlFailure(ErrorCode.WRONG_ARGUMENTS, "'column_separator' and 'line_delimiter' may not be empty")
    compress = properties.get("compress_type", "plain").lower()
    if compress not in ("plain", "unknown", "gz", "gzip", "bz2"):
        raise SqlFailure(ErrorCode.NOT_SUPPORTED_YET, f"compress_type '{compress}' is not supported (plain, gz, "
                                                      "bz2)")
    return TextOptions(column_separator=separator, line_delimiter=delimiter, skip_lines=int(skip),
                       trim_double_quotes=_flag(properties.get("trim_double_quotes", "false"), "trim_double_quotes"),
                       strip_outer_array=_flag(properties.get("strip_outer_array", "false"), "strip_outer_array"),
                       read_json_by_line=_flag(properties.get("read_json_by_line", "true"), "read_json_by_line"),
                       compress_type=compress)


def check_format(name: str, allowed: tuple[str, ...], what: str) -> str:
    fmt = name.lower()
    if fmt not in allowed:
        raise SqlFailure(ErrorCode.NOT_SUPPORTED_YET, f"{what}: format '{name}' is not supported (one of "
                                                      f"{', '.join(allowed)})")
    return fmt


def _codec(key: str, compress: str) -> str | None:
    """The codec a file is read through: `compress` (gz, bz2), or with `unknown` the key's suffix; None: plain."""
    if compress in ("gz", "gzip") or (compress == "unknown" and key.endswith(".gz")):
        return "gz"
    if compress == "bz2" or (compress == "unknown" and key.endswith(".bz2")):
        return "bz2"
    return None


def _decompressed(data: bytes, key: str, compress: str) -> bytes:
    codec = _codec(key, compress)
    return gzip.decompress(data) if codec == "gz" else bz2.decompress(data) if codec == "bz2" else data


class _CsvDecoder:
    """A CSV file's rows, fed a piece at a time (each piece whole lines): the lines to skip and the
    header may fall in any piece, and the first row (or the header) fixes the columns for the rest."""

    def __init__(self, fmt: str, options: TextOptions) -> None:
        self.options = options
        self.skip = options.skip_lines
        self.header = 2 if fmt == "csv_with_names_and_types" else 1 if fmt == "csv_with_names" else 0
        self.names: list[str] | None = None

    def table(self, lines: list[str]) -> pa.Table | None:
        """The rows of `lines` (None while no column is known yet: no row came)."""
        skipped = min(self.skip, len(lines))
        self.skip -= skipped
        lines = lines[skipped:]
        separator = self.options.column_separator
        while self.header and lines:  # the names line, then (csv_with_names_and_types) the types line
            if self.names is None:
                self.names = lines[0].split(separator)
            self.header -= 1
            lines = lines[1:]
        rows = [line.split(separator) for line in lines]
        if self.names is None and rows:
            self.names = [f"c{i}" for i in range(1, len(rows[0]) + 1)]
        if self.names is None:
            return None
        return pa.table({name: pa.array([self._value(r, i) for r in rows], pa.string())
                         for i, name in enumerate(self.names)})

    def _value(self, row: list[str], i: int) -> str | None:
        if i >= len(row) or row[i] == NULL_TEXT:
            return None
        text = row[i]
        if self.options.trim_double_quotes and len(text) >= 2 and text[0] == text[-1] == '"':
            return text[1:-1]
        return text


def _lines(text: str, delimiter: str) -> list[str]:
    lines = text.split(delimiter)
    if lines and lines[-1] == "":
        lines.pop()  # the delimiter ends the last line
    return lines


def _csv(text: str, fmt: str, options: TextOptions) -> pa.Table:
    decoded = _CsvDecoder(fmt, options).table(_lines(text, options.line_delimiter))
    return decoded if decoded is not None else pa.table({})


def _json_text(value: Any) -> str | None:
    if value is None:
        return None
    if isinstance(value, str):
        return value
    return json.dumps(value, separators=(",", ":"), ensure_ascii=False)


def whole_document(fmt: str, options: TextOptions) -> bool:
    """Whether a file of `fmt` is one JSON document, parsed whole (not a line at a time)."""
    return fmt == "json" and (options.strip_outer_array or not options.read_json_by_line)


def _json(text: str, options: TextOptions, what: str) -> pa.Table:
    try:
        if whole_document("json", options):
            parsed = json.loads(text)
            records = parsed if isinstance(parsed, list) else [parsed]
        else:
            records = [json.loads(line) for line in text.split(options.line_delimiter) if line.strip()]
    except json.JSONDecodeError as exc:
        raise SqlFailure(ErrorCode.WRONG_ARGUMENTS, f"{what}: not JSON ({exc.msg} at line {exc.lineno})") from None
    names: dict[str, None] = {}
    for record in records:
        if not isinstance(record, dict):
            raise SqlFailure(ErrorCode.WRONG_ARGUMENTS, f"{what}: a JSON record is not an object")
        names.update(dict.fromkeys(record))
    return pa.table({name: pa.array([_json_text(r.get(name)) for r in records], pa.string()) for name in names})


def decode(data: bytes, fmt: str, options: TextOptions, what: str) -> pa.Table:
    """One file's rows; `what` names the file in errors."""
    data = _decompressed(data, what, options.compress_type)
    try:
        if fmt == "parquet":
            return pq.read_table(io.BytesIO(data))
        if fmt == "orc":
            from pyarrow import orc  # optional part of pyarrow: imported only when asked for
            return orc.ORCFile(io.BytesIO(data)).read()
    except (pa.ArrowException, OSError) as exc:
        raise SqlFailure(ErrorCode.WRONG_ARGUMENTS, f"{what}: not a readable {fmt} file ({exc})") from None
    try:
        text = data.decode("utf-8")
    except UnicodeDecodeError:
        raise SqlFailure(ErrorCode.WRONG_ARGUMENTS, f"{what}: not UTF-8 text") from None
    return _json(text, options, what) if fmt == "json" else _csv(text, fmt, options)


def _text_pieces(stream: BinaryIO, delimiter: bytes, piece_bytes: int, what: str) -> Iterator[str]:
    """The stream's text about `piece_bytes` at a time, each piece ending where a line does. Lines are
    cut left to right, the last part kept for the next piece, so a delimiter of several bytes splits
    as it would in the whole text ("||" in "|||")."""
    rest = b""
    while chunk := stream.read(piece_bytes):
        parts = (rest + chunk).split(delimiter)
        rest = parts.pop()
        if parts:
            yield _utf8(delimiter.join(parts) + delimiter, what)
    if rest:
        yield _utf8(rest, what)


def _utf8(data: bytes, what: str) -> str:
    try:
        return data.decode("utf-8")
    except UnicodeDecodeError:
        raise SqlFailure(ErrorCode.WRONG_ARGUMENTS, f"{what}: not UTF-8 text") from None


def decode_pieces(stream: BinaryIO, fmt: str, options: TextOptions, what: str, piece_bytes: int) -> Iterator[pa.Table]:
    """A CSV or JSON-lines file's rows as tables of about `piece_bytes` of text each (`stream` already
    decompressed), decoded as `decode` decodes the whole file. JSON tables name the keys of their own
    records: a reader unifies them by name, as `concatenated` does."""
    assert not whole_document(fmt, options) and fmt not in ("parquet", "orc")
    delimiter = options.line_delimiter
    csv = _CsvDecoder(fmt, options) if fmt != "json" else None
    for text in _text_pieces(stream, delimiter.encode(), piece_bytes, what):
        table = _json(text, options, what) if csv is None else csv.table(_lines(text, delimiter))
        if table is not None and table.num_columns:
            yield table


def decompressed_stream(raw: BinaryIO, key: str, compress: str) -> BinaryIO:
    """`raw` read through its codec (`_codec`), as `decode` reads a whole file."""
    codec = _codec(key, compress)
    if codec == "gz":
        return gzip.GzipFile(fileobj=raw)  # type: ignore[return-value]
    return bz2.BZ2File(raw) if codec == "bz2" else raw  # type: ignore[return-value]


def concatenated(tables: list[pa.Table], what: str) -> pa.Table:
    """Several files' rows as one table; their columns must agree (by name)."""
    if len(tables) == 1:
        return tables[0]
    try:
        return pa.concat_tables(tables, promote_options="permissive")
    except pa.ArrowException as exc:
        raise SqlFailure(ErrorCode.WRONG_ARGUMENTS, f"{what}: the files' columns differ ({exc})") from None


def _csv_cell(value: Any) -> str:
    if value is None:
        return NULL_TEXT
    if isinstance(value, bool):
        return "1" if value else "0"
    if isinstance(value, dict | list):
        return json.dumps(value, default=str, ensure_ascii=False)
    return str(value)


def text_header(schema: pa.Schema, fmt: str, options: TextOptions) -> bytes:
    """The lines a text file of `fmt` starts with: the column names (and types), or nothing."""
    lines: list[str] = []
    if fmt in ("csv_with_names", "csv_with_names_and_types"):
        lines.append(options.column_separator.join(schema.names))
        if fmt == "csv_with_names_and_types":
            lines.append(options.column_separator.join(str(f.type) for f in schema))
    return "".join(line + options.line_delimiter for line in lines).encode("utf-8")


def text_rows(table: pa.Table | pa.RecordBatch, options: TextOptions) -> bytes:
    """Rows as CSV lines (no header)."""
    # By position: a query's result may name two columns alike.
    lines = [options.column_separator.join(_csv_cell(v) for v in row)
             for row in zip(*(column.to_pylist() for column in table.columns), strict=True)]
    return "".join(line + options.line_delimiter for line in lines).encode("utf-8")
