"""A Stream Load's HTTP headers (Doris' names and defaults) read into one checked request.

The request is also the load's `projections.load_source.LoadMapping`: the same COLUMNS/WHERE
machinery as a routine load turns its fields into rows."""

from __future__ import annotations

import codecs
import re
import uuid
from collections.abc import Mapping
from dataclasses import dataclass, field
from zoneinfo import ZoneInfo, ZoneInfoNotFoundError

from sqlglot import exp

from projections.state import TableState
from query import group_commit
from query.load_mapping import load_expression_sql, mapping, parse_jsonpaths, source_names
from query.parser import SqlError
from query.parser.misc import load_columns, load_condition
from query.parser.statements import LoadColumn as ParsedColumn
from schemas.model import SEQUENCE_COLUMN, LoadColumn

FORMATS = ("csv", "json", "parquet", "orc")
# CSV formats whose first lines are a header, skipped by a load (Doris maps fields by position,
# or by the `columns` header; the header line only names them for S3() queries).
_HEADER_LINES = {"csv_with_names": 1, "csv_with_names_and_types": 2}
# Doris' compress_type names → pyarrow's codec names (pa.CompressedInputStream).
COMPRESSIONS = {"gz": "gzip", "gzip": "gzip", "bz2": "bz2", "lz4": "lz4", "lz4frame": "lz4", "zstd": "zstd"}
MERGE_TYPES = ("APPEND", "DELETE", "MERGE")
# Headers Doris defines that change what is loaded and that Strata does not implement: refused, never ignored.
_UNSUPPORTED = ("hidden_columns", "fuzzy_parse", "num_as_string", "load_to_single_tablet", "skip_lines_with_header",
                "unique_key_update_mode", "partial_update_new_key_behavior", "memtable_on_sink_node", "sql")
# Functions whose answer depends on the time zone: with one in the mapping, `timezone` must be UTC.
_ZONED = re.compile(r"\b(now|current_timestamp|current_date|curdate|curtime|from_unixtime|unix_timestamp|"
                    r"localtime|localtimestamp|convert_tz)\b", re.IGNORECASE)


class BadRequest(Exception):
    """A header that cannot be honoured; the load fails with this message and loads nothing."""


@dataclass(frozen=True)
class StreamLoadRequest:
    label: str
    format: str = "csv"
    columns: tuple[LoadColumn, ...] = ()
    where: str | None = None
    where_sql: str | None = None
    delete_sql: str | None = None  # each row's delete sign (merge_type DELETE / MERGE)
    partitions: tuple[int, ...] = ()
    column_separator: str = "\t"
    line_delimiter: str = "\n"
    enclose: str | None = None
    escape: str | None = None
    skip_lines: int = 0
    trim_double_quotes: bool = False
    compress_type: str | None = None  # a pyarrow codec name
    jsonpaths: tuple[str, ...] = ()
    json_root: str | None = None
    strip_outer_array: bool = False
    read_json_by_line: bool = False
    strict_mode: bool = False
    max_filter_ratio: float = 0.0
    merge_type: str = "APPEND"
    partial_columns: bool = False
    group_commit: str = "off_mode"
    two_phase_commit: bool = False
    timeout_s: int = 600
    timeout_given: bool = False  # a 2PC load's prepared transaction then expires after timeout_s
    user_label: bool = field(default=False)  # the client named the label


def _flag(headers: Mapping[str, str], name: str) -> bool:
    text = headers.get(name, "false").strip().lower()
    if text not in ("true", "false"):
        raise BadRequest(f"{name} must be true or false, not '{headers[name]}'")
    return text == "true"


def _text_separator(headers: Mapping[str, str], name: str, default: str) -> str:
    """Doris' separators: an escape (`\\t`), or `\\x01`-style hex bytes for invisible ones."""
    text = headers.get(name)
    if text is None:
        return default
    if re.fullmatch(r"(\\x[0-9a-fA-F]{2})+", text):
        try:
            return bytes.fromhex(text.replace("\\x", "")).decode("utf-8")
        except UnicodeDecodeError:
            raise BadRequest(f"{name} '{text}' is not valid UTF-8") from None
    try:
        decoded = codecs.decode(text, "unicode_escape") if "\\" in text else text
    except UnicodeDecodeError:
        raise BadRequest(f"{name} '{text}' is not a valid escape sequence") from None
    if not decoded:
        raise BadRequest(f"{name} must not be empty")
    return decoded


def _char(headers: Mapping[str, str], name: str) -> str | None:
    text = headers.get(name)
    if text is None or text == "":
        return None
    if len(text) != 1:
        raise BadRequest(f"{name} must be a single character, not '{text}'")
    return text


def _int(headers: Mapping[str, str], name: str, default: int) -> int:
    text = headers.get(name)
    if text is None:
        return default
    try:
        value = int(text)
    except ValueError:
        value = -1
    if value < 0:
        raise BadRequest(f"{name} must be a non-negative integer, not '{text}'")
    return value


def _jsonpaths(text: str | None) -> tuple[str, ...]:
    try:
        return parse_jsonpaths(text)
    except ValueError as exc:
        raise BadRequest(str(exc)) from None


def _parsed_columns(headers: Mapping[str, str], table: TableState, fmt: str) -> tuple[ParsedColumn, ...]:
    """The `columns` header, plus the hidden sequence column `function_column.sequence_col` names."""
    text = headers.get("columns")
    try:
        parsed = load_columns(text) if text and text.strip() else ()
    except SqlError as exc:
        raise BadRequest(f"columns '{text}': {exc}") from None
    sequence_source = headers.get("function_column.sequence_col")
    if sequence_source:
        if table.schema_now.column(SEQUENCE_COLUMN) is None:
            raise BadRequest(f"table '{table.name}' has no hidden sequence column (function_column.sequence_type); "
                             "function_column.sequence_col does not apply")
        plain = parsed or tuple(ParsedColumn(c.name) for c in table.schema_now.visible_columns)
        if not any(c.name.lower() == sequence_source.lower() for c in plain):
            raise BadRequest(f"function_column.sequence_col '{sequence_source}' is not one of the load's columns")
        parsed = (*plain, ParsedColumn(SEQUENCE_COLUMN, exp.column(sequence_source)))
    return parsed


def _condition(headers: Mapping[str, str], name: str) -> exp.Expr | None:
    text = headers.get(name)
    if text is None or not text.strip():
        return None
    try:
        return load_condition(text)
    except SqlError as exc:
        raise BadRequest(f"{name} '{text}': {exc}") from None


def _partitions(headers: Mapping[str, str], table: TableState) -> tuple[int, ...]:
    text = headers.get("partitions") or headers.get("temporary_partitions")
    if headers.get("temporary_partitions"):
        raise BadRequest("temporary_partitions is not supported")
    if not text:
        return ()
    ids = []
    for name in (n.strip() for n in text.split(",") if n.strip()):
        found = table.partition_by_name(name)
        if found is None:
            raise BadRequest(f"Unknown partition '{name}' in table '{table.name}'")
        ids.append(found.partition_id)
    return tuple(ids)


def _check_zone(headers: Mapping[str, str], texts: list[str]) -> None:
    zone = headers.get("timezone") or headers.get("time_zone")
    if zone is None:
        return
    if zone.upper() not in ("UTC", "+00:00", "GMT", "ETC/UTC"):
        try:
            ZoneInfo(zone)
        except (ZoneInfoNotFoundError, ValueError):
            if not re.fullmatch(r"[+-]\d{2}:\d{2}", zone):
                raise BadRequest(f"Unknown or incorrect time zone: '{zone}'") from None
        # Loaded values are stored as written; only time functions in the mapping would read the zone.
        if any(_ZONED.search(t) for t in texts):
            raise BadRequest(f"timezone '{zone}' with time functions in columns/where is not supported; "
                             "only UTC is")


def parse_request(headers: Mapping[str, str], table: TableState) -> StreamLoadRequest:
    """The request of these headers (any case) for `table`; raises BadRequest (or SqlFailure from the
    mapping, which names a column the table lacks)."""
    h = {k.lower(): v for k, v in headers.items()}
    unsupported = [name for name in _UNSUPPORTED if name in h]
    if unsupported:
        raise BadRequest(f"Stream Load header {', '.join(unsupported)} is not supported")
    fmt = h.get("format", "csv").strip().lower()
    skip_lines = _int(h, "skip_lines", 0)
    if fmt in _HEADER_LINES:
        fmt, skip_lines = "csv", _HEADER_LINES[fmt]  # as Doris' CsvReader: the header type wins over skip_lines
    if fmt not in FORMATS:
        raise BadRequest(f"format must be one of {', '.join(FORMATS)}, not '{h['format']}'")
    compress = h.get("compress_type")
    if compress and compress.lower() not in COMPRESSIONS:
        raise BadRequest(f"compress_type {compress} is not supported (one of {', '.join(sorted(COMPRESSIONS))})")
    merge_type = h.get("merge_type", "APPEND").strip().upper()
    if merge_type not in MERGE_TYPES:
        raise BadRequest(f"merge_type must be APPEND, DELETE or MERGE, not '{h['merge_type']}'")
    if merge_type != "APPEND" and table.keys_model != "UNIQUE":
        raise BadRequest(f"merge_type {merge_type} needs a UNIQUE KEY table; '{table.name}' is {table.keys_model} KEY")
    if merge_type == "MERGE" and not h.get("delete"):
        raise BadRequest("merge_type MERGE needs a delete condition (header delete)")
    if merge_type != "MERGE" and h.get("delete"):
        raise BadRequest("the delete header applies to merge_type MERGE only")
    mode = h.get("group_commit", "off_mode").strip().lower()
    if mode not in group_commit.MODES:
        raise BadRequest(f"group_commit must be one of {', '.join(group_commit.MODES)}, not '{h['group_commit']}'")
    two_phase = _flag(h, "two_phase_commit")
    if mode != "off_mode" and (h.get("label") or two_phase):
        raise BadRequest("group commit cannot be used with a label or two_phase_commit")
    try:
        ratio = float(h.get("max_filter_ratio", "0"))
    except ValueError:
        ratio = -1.0
    if not 0.0 <= ratio <= 1.0:
        raise BadRequest(f"max_filter_ratio must be a number from 0 to 1, not '{h.get('max_filter_ratio')}'")
    parsed = _parsed_columns(h, table, fmt)
    where = _condition(h, "where")
    delete = _condition(h, "delete")
    _check_zone(h, [h.get("columns", ""), h.get("where", ""), h.get("delete", "")])
    columns, where_text, where_sql = mapping(parsed, where, table)
    typed = {c.name.lower() for c in table.schema_now.columns}
    delete_sql = "true" if merge_type == "DELETE" else \
        load_expression_sql(delete, source_names(parsed, table), typed, "delete") if delete is not None else None
    label = h.get("label", "").strip()
    if len(label) > 128 or not re.fullmatch(r"[-_A-Za-z0-9:.]*", label):
        raise BadRequest(f"Label format error: '{label}' (letters, digits, '-', '_', ':' and '.', at most 128)")
    return StreamLoadRequest(
        label=label or f"stream_load_{uuid.uuid4().hex}", user_label=bool(label), format=fmt, columns=columns,
        where=where_text, where_sql=where_sql, delete_sql=delete_sql, partitions=_partitions(h, table),
        column_separator=_text_separator(h, "column_separator", "\t"),
        line_delimiter=_text_separator(h, "line_delimiter", "\n"), enclose=_char(h, "enclose"),
        escape=_char(h, "escape"), skip_lines=skip_lines,
        trim_double_quotes=_flag(h, "trim_double_quotes"),
        compress_type=COMPRESSIONS[compress.lower()] if compress else None,
        jsonpaths=_jsonpaths(h.get("jsonpaths")), json_root=h.get("json_root") or None,
        strip_outer_array=_flag(h, "strip_outer_array"), read_json_by_line=_flag(h, "read_json_by_line"),
        strict_mode=_flag(h, "strict_mode"), max_filter_ratio=ratio, merge_type=merge_type,
        partial_columns=_flag(h, "partial_columns"), group_commit=mode, two_phase_commit=two_phase,
        timeout_s=_int(h, "timeout", 600) or 600, timeout_given="timeout" in h)


