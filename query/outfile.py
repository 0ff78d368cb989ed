"""Doris' `SELECT … INTO OUTFILE "s3://bucket/prefix_" FORMAT AS … PROPERTIES (…)`: the query's rows
written to S3 by Strata's object store client, answered with Doris' row (FileNumber, TotalRows,
FileSize, URL). Any FOR TIME AS OF in the query reads its snapshot as usual. Only s3:// targets:
the SQL server writes no local files on a user's behalf.

Files are named as Doris names them, `<prefix><query id>_<n>.<csv|parquet>`, and a result larger
than `max_file_size` (Doris: 5MB to 2GB, default 1GB) is split into several. The result is written
as DuckDB gives its batches, a file at a time (staged on local disk, uploaded once complete), so a
result larger than the server's memory is written too.
"""

from __future__ import annotations

import re
import uuid
from collections.abc import Iterator
from dataclasses import dataclass
from pathlib import Path

import pyarrow as pa
import pyarrow.parquet as pq

from query import mysql_semantics
from query.context import Context, Rows, SessionState, SqlFailure
from query.file_formats import WRITE_FORMATS, TextOptions, check_format, text_header, text_options, text_rows
from query.parser import statements as st
from query.reads import query_batches
from query.s3_location import CONNECTION_KEYS, S3Target, store_errors, target
from query.spool import spool_file
from schemas.errors import ErrorCode
from storage.object_store import file_digests

_OPTION_KEYS = frozenset({"column_separator", "line_delimiter", "max_file_size", "delete_existing_files",
                          "success_file_name"})
_SIZE = re.compile(r"^\s*(\d+)\s*(b|kb|mb|gb)?\s*$", re.IGNORECASE)
_UNITS = {None: 1, "b": 1, "kb": 1 << 10, "mb": 1 << 20, "gb": 1 << 30}
MIN_FILE_SIZE, MAX_FILE_SIZE, DEFAULT_FILE_SIZE = 5 << 20, 2 << 30, 1 << 30
COLUMNS = ["FileNumber", "TotalRows", "FileSize", "URL"]


@dataclass(frozen=True)
class Written:
    files: int
    rows: int
    bytes: int
    url: str  # the prefix the files were named after, as Doris answers it


def max_file_size(text: str | None) -> int:
    if text is None:
        return DEFAULT_FILE_SIZE
    found = _SIZE.match(text)
    size = int(found.group(1)) * _UNITS[found.group(2).lower() if found.group(2) else None] if found else -1
    if not MIN_FILE_SIZE <= size <= MAX_FILE_SIZE:
        raise SqlFailure(ErrorCode.WRONG_ARGUMENTS, f"max_file_size '{text}' must be between 5MB and 2GB")
    return size


def _extension(fmt: str) -> str:
    return "parquet" if fmt == "parquet" else "csv"


def _directory(key: str) -> str:
    return key[:key.rfind("/") + 1] if "/" in key else ""


class _StagedFile:
    """One output file being written on local disk, a batch at a time (Parquet: a row group each)."""

    def __init__(self, home: Path, schema: pa.Schema, fmt: str, options: TextOptions) -> None:
        self.path = spool_file(home, ".out")
        self.fmt, self.options = fmt, options
        self.rows = 0
        self._sink = pa.OSFile(str(self.path), "wb")
        self._parquet = pq.ParquetWriter(self._sink, schema) if fmt == "parquet" else None
        self._raw_bytes = 0  # Arrow bytes of the rows written (Parquet: to foresee a batch's size)
        if self._parquet is None:
            self._sink.write(text_header(schema, fmt, options))
        self._empty_size = self.size

    @property
    def size(self) -> int:
        return int(self._sink.tell())

    def encoded(self, batch: pa.RecordBatch) -> bytes | None:
        """A text file's bytes for `batch` (None for Parquet, whose writer encodes it)."""
        return None if self._parquet is not None else text_rows(batch, self.options)

    def foreseen(self, batch: pa.RecordBatch, encoded: bytes | None) -> int:
        """About how many bytes `batch` adds to this file."""
        if encoded is not None:
            return len(encoded)
        if not self._raw_bytes:
            return batch.nbytes  # no ratio yet: Arrow's bytes, more than Parquet's
        return batch.nbytes * (self.size - self._empty_size) // self._raw_bytes

    def write(self, batch: pa.RecordBatch, encoded: bytes | None) -> None:
        if self._parquet is not None:
            self._parquet.write_batch(batch)
        else:
            self._sink.write(encoded if encoded is not None else text_rows(batch, self.options))
        self.rows += batch.num_rows
        self._raw_bytes += batch.nbytes

    def close(self) -> int:
        if self._parquet is not None:
            self._parquet.close()
        size = self.size
        self._sink.close()
        return size

    def discard(self) -> None:
        if not self._sink.closed:
            self._sink.close()
        self.path.unlink(missing_ok=True)


def _pieces(batch: pa.RecordBatch, staged: _StagedFile,
            limit: int) -> Iterator[tuple[pa.RecordBatch, bytes | None, int]]:
    """`batch`, halved until each piece would fit a file of `limit` bytes on its own (one row always
    goes): each piece with its text (`_StagedFile.encoded`) and foreseen size."""
    encoded = staged.encoded(batch)
    size = staged.foreseen(batch, encoded)
    if batch.num_rows > 1 and size > limit:
        half = batch.num_rows // 2
        yield from _pieces(batch.slice(0, half), staged, limit)
        yield from _pieces(batch.slice(half), staged, limit)
    else:
        yield batch, encoded, size


def write_files(ctx: Context, where: S3Target, batches: pa.RecordBatchReader, fmt: str, options: TextOptions,
                limit: int, what: str, *, name: str) -> Written:
    """Writes the batches as files `<key><name>_<n>.<ext>` (one at least, even for no rows), a new
    file before one would pass `limit` bytes. Never the whole result in memory: each file is staged
    on local disk and uploaded once complete (in parts, beyond object_store.PART_SIZE)."""
    files = rows = size = 0

    def upload(staged: _StagedFile) -> None:
        nonlocal files, rows, size
        size += staged.close()
        rows += staged.rows
        checksum, etag = file_digests(staged.path)
        with store_errors(what):
            where.store.upload(staged.path, f"{where.key}{name}_{files}.{_extension(fmt)}", checksum, etag)
        staged.discard()
        files += 1

    staged = _StagedFile(ctx.config.home, batches.schema, fmt, options)
    try:
        for batch in batches:
            for piece, encoded, foreseen in _pieces(batch, staged, limit):
                if staged.rows and staged.size + foreseen > limit:
                    upload(staged)
                    staged = _StagedFile(ctx.config.home, batches.schema, fmt, options)
                staged.write(piece, encoded)
        upload(staged)
    finally:
        staged.discard()
    return Written(files, rows, size, f"{where.uri}{name}_")


def _flag(properties: dict[str, str], key: str) -> bool:
    value = properties.get(key, "false").lower()
    if value not in ("true", "false"):
        raise SqlFailure(ErrorCode.WRONG_ARGUMENTS, f"'{key}' must be true or false, not '{properties[key]}'")
    return value == "true"


def check_properties(properties: dict[str, str], allowed: frozenset[str], what: str) -> None:
    unknown = sorted(k for k in properties if k not in allowed)
    if unknown:
        raise SqlFailure(ErrorCode.NOT_SUPPORTED_YET, f"{what}: unknown or unsupported propert"
                                                      f"{'y' if len(unknown) == 1 else 'ies'} {', '.join(unknown)}")


def _clear_directory(where: S3Target, what: str) -> None:
    """Doris' delete_existing_files: every object in the prefix's folder goes first."""
    folder = _directory(where.key)
    if not folder:
        raise SqlFailure(ErrorCode.WRONG_ARGUMENTS, f"{what}: delete_existing_files needs a folder in the path "
                                                    "(s3://bucket/folder/prefix), not the bucket's root")
    with store_errors(what):
        for found in list(where.store.objects(folder)):
            where.store.remove(found.path)


def query_id() -> str:
    """A Doris-shaped query id (two 16-digit hex halves)."""
    hexed = uuid.uuid4().hex
    return f"{hexed[:16]}-{hexed[16:]}"


def select_into_outfile(ctx: Context, session: SessionState, s: st.SelectIntoOutfile) -> Rows:
    what = "INTO OUTFILE"
    properties = s.properties
    fmt = check_format(s.format, WRITE_FORMATS, what)
    check_properties(properties, CONNECTION_KEYS | _OPTION_KEYS, what)
    options = text_options({k: v for k, v in properties.items() if k in ("column_separator", "line_delimiter")})
    limit = max_file_size(properties.get("max_file_size"))
    success = properties.get("success_file_name")
    if success is not None and (not success or "/" in success):
        raise SqlFailure(ErrorCode.WRONG_ARGUMENTS, f"{what}: success_file_name is a file name, not a path")
    where = target(ctx, s.path, properties, what)
    if _flag(properties, "delete_existing_files"):
        _clear_directory(where, what)
    with query_batches(ctx, session, mysql_semantics.rewrite(s.query)) as batches:
        written = write_files(ctx, where, batches, fmt, options, limit, what, name=query_id())
    if success is not None:
        with store_errors(what):
            where.store.put_bytes(_directory(where.key) + success, b"")
    return Rows(COLUMNS, [(written.files, written.rows, written.bytes, written.url)])
