"""Doris' S3 table function, `SELECT … FROM S3("uri" = "s3://bucket/path/*.parquet", "format" = …, …)`,
and the reading half of Broker Load: the objects a URI (with Doris' glob: `*`, `?`, `[…]`, `{a,b}`)
matches, fetched by Strata's object store client and decoded into an Arrow table.

The executor stays sandboxed: DuckDB sees only the decoded table (Parquet and ORC: a pyarrow dataset
over copies spooled to local disk, scanned a batch at a time), registered under a view name in
place of the call (`bind_s3_calls`), never the URI. A view's definition may not read S3(): the
keys would be stored in it and read with the definer's rights.
"""

from __future__ import annotations

import itertools
import re
import weakref
from pathlib import Path

import duckdb
import pyarrow as pa
import pyarrow.dataset as ds
import pyarrow.parquet as pq
from sqlglot import exp

from query.context import Context, SqlFailure
from query.file_formats import (
    READ_FORMATS,
    TextOptions,
    check_format,
    concatenated,
    decode,
    decode_pieces,
    decompressed_stream,
    text_options,
    whole_document,
)
from query.s3_location import CONNECTION_KEYS, S3Target, lowered, store_errors, target
from query.spool import spool_file
from schemas.errors import ErrorCode

FUNCTION = "s3"
_FORMAT_KEYS = frozenset({"format", "column_separator", "line_delimiter", "skip_lines", "trim_double_quotes",
                          "strip_outer_array", "read_json_by_line", "compress_type"})
_GLOB_CHARS = "*?[{"
_SPOOLED = ("parquet", "orc")  # formats S3() scans from spooled copies, never decoded whole
_view_ids = itertools.count(1)


def is_s3_call(node: exp.Expr) -> bool:
    return isinstance(node, exp.Table) and isinstance(node.this, exp.Anonymous) and \
        str(node.this.name).lower() == FUNCTION


def s3_calls(expr: exp.Expr) -> list[exp.Table]:
    return [t for t in expr.find_all(exp.Table) if is_s3_call(t)]


def call_properties(node: exp.Table) -> dict[str, str]:
    """The `"key" = "value"` arguments of one S3(…) call."""
    properties: dict[str, str] = {}
    for arg in node.this.expressions:
        if not (isinstance(arg, exp.EQ) and isinstance(arg.this, exp.Literal | exp.Column | exp.Identifier)
                and isinstance(arg.expression, exp.Literal)):
            raise SqlFailure(ErrorCode.WRONG_ARGUMENTS, 'S3() takes "key" = "value" arguments only')
        key = str(arg.this.name).lower()
        if key in properties:
            raise SqlFailure(ErrorCode.WRONG_ARGUMENTS, f"S3(): property '{key}' is given twice")
        properties[key] = str(arg.expression.this)
    return properties


def glob_regex(pattern: str) -> re.Pattern[str]:
    """Doris' (Hadoop's) glob: `*` and `?` stay inside one path segment; `[…]` and `{a,b}` as usual."""
    out, i = [], 0
    while i < len(pattern):
        ch = pattern[i]
        if ch == "*":
            out.append("[^/]*")
        elif ch == "?":
            out.append("[^/]")
        elif ch == "[":
            end = pattern.find("]", i + 1)
            if end < 0:
                raise SqlFailure(ErrorCode.WRONG_ARGUMENTS, f"unclosed '[' in '{pattern}'")
            body = pattern[i + 1:end]
            out.append("[" + ("^" + re.escape(body[1:]) if body.startswith(("!", "^")) else re.escape(body)) + "]")
            i = end
        elif ch == "{":
            end = pattern.find("}", i + 1)
            if end < 0:
                raise SqlFailure(ErrorCode.WRONG_ARGUMENTS, f"unclosed '{{' in '{pattern}'")
            out.append("(?:" + "|".join(re.escape(a) for a in pattern[i + 1:end].split(",")) + ")")
            i = end
        else:
            out.append(re.escape(ch))
        i += 1
    return re.compile("".join(out) + r"\Z")


def matching_objects(where: S3Target, what: str) -> list[tuple[str, int]]:
    """(key, size) of each object `where` names, in key order: the key itself, or every key its glob
    matches. None matching is an error."""
    cut = min((where.key.find(c) for c in _GLOB_CHARS if c in where.key), default=-1)
    with store_errors(what):
        if cut < 0:
            found = [(o.path, o.size) for o in where.store.objects(where.key) if o.path == where.key]
        else:
            pattern = glob_regex(where.key)
            found = [(o.path, o.size) for o in where.store.objects(where.key[:cut]) if pattern.match(o.path)]
    if not found:
        raise SqlFailure(ErrorCode.WRONG_ARGUMENTS, f"{what}: no object matches {where.uri}")
    return sorted(found)


def matching_keys(where: S3Target, what: str, limit_bytes: int) -> list[str]:
    """The keys `where` names (`matching_objects`); more bytes than `limit_bytes` is an error."""
    found = matching_objects(where, what)
    total = sum(size for _, size in found)
    if total > limit_bytes:
        raise SqlFailure(ErrorCode.NOT_SUPPORTED_YET,
                         f"{what}: {where.uri} matches {len(found)} objects of {total} bytes, more than the "
                         f"{limit_bytes} one statement may read (STRATA_S3_TRANSFER_MAX_BYTES)")
    return [path for path, _ in found]


def read_object(where: S3Target, key: str, what: str, limit_bytes: int) -> bytes:
    with store_errors(what):
        return where.store.read_bytes(key, limit_bytes)


def read_objects(where: S3Target, keys: list[str], fmt: str, options: TextOptions, what: str,
                 limit_bytes: int) -> pa.Table:
    tables = [decode(read_object(where, key, what, limit_bytes), fmt, options, f"s3://{where.bucket}/{key}")
              for key in keys]
    return concatenated(tables, what)


def read_call(ctx: Context, properties: dict[str, str]) -> pa.Table | ds.Dataset:
    """The rows of one S3(…) call: Parquet and ORC objects as a dataset over their spooled copies
    (`spooled_dataset`), CSV and JSON lines decoded a piece at a time into spooled Arrow files
    (`decoded_dataset`); a JSON document (and a compressed Parquet or ORC object) is decoded whole, up
    to STRATA_S3_TRANSFER_MAX_BYTES."""
    what = "S3()"
    unknown = sorted(k for k in properties if k not in CONNECTION_KEYS and k not in _FORMAT_KEYS and k != "uri")
    if unknown:
        raise SqlFailure(ErrorCode.NOT_SUPPORTED_YET, f"S3(): unknown or unsupported propert"
                                                      f"{'y' if len(unknown) == 1 else 'ies'} {', '.join(unknown)}")
    if "uri" not in properties:
        raise SqlFailure(ErrorCode.WRONG_ARGUMENTS, 'S3(): "uri" is required')
    if "format" not in properties:
        raise SqlFailure(ErrorCode.WRONG_ARGUMENTS, 'S3(): "format" is required (csv, csv_with_names, json, '
                                                    'parquet, orc)')
    fmt = check_format(properties["format"], READ_FORMATS, what)
    options = text_options(properties)
    where = target(ctx, properties["uri"], properties, what)
    if fmt in _SPOOLED and options.compress_type in ("plain", "unknown"):
        return spooled_dataset(ctx.config.home, where, matching_objects(where, what), fmt, what)
    if fmt not in _SPOOLED and not whole_document(fmt, options):
        return decoded_dataset(ctx.config.home, where, matching_objects(where, what), fmt, options, what,
                               ctx.config.stream_load_chunk_bytes)
    limit = ctx.config.s3_transfer_max_bytes
    return read_objects(where, matching_keys(where, what, limit), fmt, options, what, limit)


def spooled_dataset(home: Path, where: S3Target, found: list[tuple[str, int]], fmt: str, what: str) -> ds.Dataset:
    """The objects (Parquet or ORC) downloaded to the spool folder a buffer at a time, as one dataset DuckDB
    scans lazily, a batch at a time (so an object larger than memory is read too). The copies are
    removed once nothing holds the dataset (the statement's cursor closed)."""
    paths = [spool_file(home, f".{fmt}") for _ in found]
    try:
        schemas = []
        for (key, _), path in zip(found, paths, strict=True):
            with store_errors(what):
                where.store.download(key, path)
            try:
                schemas.append(pq.read_schema(str(path)) if fmt == "parquet" else _orc_schema(path))
            except (pa.ArrowException, OSError) as exc:
                raise SqlFailure(ErrorCode.WRONG_ARGUMENTS, f"{what}: s3://{where.bucket}/{key}: not a readable "
                                                            f"{fmt} file ({exc})") from None
        return _spooled_files_dataset(paths, fmt, schemas, what)
    except BaseException:
        _remove(paths)
        raise


def decoded_dataset(home: Path, where: S3Target, found: list[tuple[str, int]], fmt: str, options: TextOptions,
                    what: str, piece_bytes: int) -> pa.Table | ds.Dataset:
    """CSV and JSON-lines objects, each downloaded to the spool folder and decoded about `piece_bytes` of
    text at a time into Arrow files there, as one dataset DuckDB scans a file at a time (and again, for
    a query that reads the call twice); columns unified by name as `concatenated` unifies them. Memory
    holds one piece, whatever the objects' size. The files go once nothing holds the dataset."""
    decoded: list[Path] = []
    schemas: list[pa.Schema] = []
    try:
        for key, _ in found:
            uri = f"s3://{where.bucket}/{key}"
            copy = spool_file(home, ".object")
            try:
                with store_errors(what):
                    where.store.download(key, copy)
                with open(copy, "rb") as raw:
                    stream = decompressed_stream(raw, key, options.compress_type)
                    for table in decode_pieces(stream, fmt, options, uri, piece_bytes):
                        decoded.append(spool_file(home, ".arrow"))
                        with pa.OSFile(str(decoded[-1]), "wb") as sink, pa.ipc.new_file(sink, table.schema) as out:
                            out.write_table(table)
                        schemas.append(table.schema)
            except (OSError, EOFError, pa.ArrowException) as exc:  # a corrupt gzip or bz2 stream
                raise SqlFailure(ErrorCode.WRONG_ARGUMENTS, f"{what}: {uri}: cannot be read ({exc})") from None
            finally:
                copy.unlink(missing_ok=True)
        return _spooled_files_dataset(decoded, "ipc", schemas, what) if schemas else pa.table({})
    except BaseException:
        _remove(decoded)
        raise


def _spooled_files_dataset(paths: list[Path], fmt: str, schemas: list[pa.Schema], what: str) -> ds.Dataset:
    """One dataset over spooled files of `fmt`, their columns unified by name; the files are removed once
    nothing holds the dataset (the statement's cursor closed). On failure the caller removes them."""
    try:
        dataset = ds.dataset([str(p) for p in paths], format=fmt, schema=pa.unify_schemas(schemas))
    except pa.ArrowException as exc:
        raise SqlFailure(ErrorCode.WRONG_ARGUMENTS, f"{what}: the files' columns differ ({exc})") from None
    weakref.finalize(dataset, _remove, list(paths))
    return dataset


def _remove(paths: list[Path]) -> None:
    for path in paths:
        path.unlink(missing_ok=True)


def _orc_schema(path: Path) -> pa.Schema:
    from pyarrow import orc  # optional part of pyarrow: imported only when asked for
    return orc.ORCFile(str(path)).schema


def bind_s3_calls(ctx: Context, expr: exp.Expr, cur: duckdb.DuckDBPyConnection, *, in_view: bool) -> None:
    """Replaces every S3(…) call in `expr` by a view of its fetched rows, registered on `cur`."""
    for node in s3_calls(expr):
        if in_view:
            raise SqlFailure(ErrorCode.NOT_SUPPORTED_YET, "a view may not read S3(): its keys would be stored in "
                                                          "the view and used with the definer's rights")
        data = read_call(ctx, lowered(call_properties(node)))
        view = f"__strata_s3_{next(_view_ids)}"
        cur.register(view, data)
        alias = node.args.get("alias")
        node.replace(exp.Table(this=exp.to_identifier(view), alias=alias.copy() if alias is not None else None))
