"""Doris' `SELECT … INTO OUTFILE "s3://bucket/prefix_" FORMAT AS … PROPERTIES (…)`: the query's rows
written to S3 by Strata's object store client, answered with Doris' row (FileNumber, TotalRows,
FileSize, URL). Any FOR TIME AS OF in the query reads its snapshot as usual. Only s3:// targets:
the SQL server writes no local files on a user's behalf.

Files are named as Doris names them, `<prefix><query id>_<n>.<csv|parquet>`, and a result larger
than `max_file_size` (Doris: 5MB to 2GB, default 1GB) is split into several.
"""

from __future__ import annotations

import math
import re
import uuid
from dataclasses import dataclass

import pyarrow as pa

from query import mysql_semantics
from query.context import Context, Rows, SessionState, SqlFailure
from query.file_formats import WRITE_FORMATS, TextOptions, check_format, encode, text_options
from query.parser import statements as st
from query.reads import query_table
from query.s3_location import CONNECTION_KEYS, S3Target, store_errors, target
from schemas.errors import ErrorCode

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


def _parts(data: pa.Table, fmt: str, options: TextOptions, limit: int) -> list[tuple[int, bytes]]:
    """(rows, bytes) of each file: the whole result, or equal slices of it when it is over `limit`."""
    whole = encode(data, fmt, options)
    if len(whole) <= limit or data.num_rows <= 1:
        return [(data.num_rows, whole)]
    step = math.ceil(data.num_rows / math.ceil(len(whole) / limit))
    return [(min(step, data.num_rows - start), encode(data.slice(start, step), fmt, options))
            for start in range(0, data.num_rows, step)]


def _directory(key: str) -> str:
    return key[:key.rfind("/") + 1] if "/" in key else ""


def write_files(where: S3Target, data: pa.Table, fmt: str, options: TextOptions, limit: int, what: str, *,
                name: str) -> Written:
    """Writes `data` as files `<key><name>_<n>.<ext>` (one at least, even for no rows)."""
    parts = _parts(data, fmt, options, limit)
    with store_errors(what):
        for n, (_, body) in enumerate(parts):
            where.store.put_bytes(f"{where.key}{name}_{n}.{_extension(fmt)}", body)
    return Written(len(parts), data.num_rows, sum(len(b) for _, b in parts), f"{where.uri}{name}_")


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
    data = query_table(ctx, session, mysql_semantics.rewrite(s.query))
    if data.nbytes > ctx.config.s3_transfer_max_bytes:
        raise SqlFailure(ErrorCode.NOT_SUPPORTED_YET,
                         f"{what}: the result holds {data.nbytes} bytes, more than the "
                         f"{ctx.config.s3_transfer_max_bytes} one statement may write (STRATA_S3_TRANSFER_MAX_BYTES)")
    written = write_files(where, data, fmt, options, limit, what, name=query_id())
    if success is not None:
        with store_errors(what):
            where.store.put_bytes(_directory(where.key) + success, b"")
    return Rows(COLUMNS, [(written.files, written.rows, written.bytes, written.url)])
