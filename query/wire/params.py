"""Prepared-statement parameters: decoded from COM_STMT_EXECUTE's binary values and bound into the
statement as typed SQL literals (`bind`, which Flight SQL's bound parameters go through too:
query.flight.parameters).

mysql-mimic 3.0.5 spliced each parameter into the SQL text as `f"'{param}'"`: a string parameter
`nobody' OR '1'='1` became SQL (injection), `O'Brien` a syntax error; and it refused DECIMAL, DATE,
TIME and DATETIME parameters. Here:
- every MySQL binary type a client sends is decoded (`decode_value`), lengths checked by PacketReader;
- each value becomes exactly one literal token of its type (`literal`): strings with quotes and
  backslashes escaped, undecodable bytes as X'…', decimals as exact numbers, floats with an exponent
  (a DOUBLE literal), dates, times and datetimes as CASTs of their ISO text (a TIME beyond a day as
  an INTERVAL), NULL from the null bitmap;
- placeholders are found by Strata's own tokenizer (`placeholders`), not by a regex, so a `?` inside
  a string, a quoted identifier or a comment is never a parameter, and the count sent in the
  prepare response is the count the parser will see.
"""

from __future__ import annotations

import datetime as dt
import math
from decimal import Decimal, InvalidOperation
from typing import Any

from mysql_mimic.charset import CharacterSet
from mysql_mimic.types import ColumnType
from sqlglot.tokens import TokenType

from query.parser.errors import SqlSyntaxError
from query.parser.lexing import tokenize
from query.wire.errors import MalformedPacket, wire_error
from query.wire.reader import PacketReader
from schemas.errors import ErrorCode

# String-like types: the value is a length-encoded byte string.
_BYTES_TYPES = {ColumnType.VARCHAR, ColumnType.VAR_STRING, ColumnType.STRING, ColumnType.TINY_BLOB,
                ColumnType.MEDIUM_BLOB, ColumnType.LONG_BLOB, ColumnType.BLOB, ColumnType.ENUM, ColumnType.SET,
                ColumnType.JSON, ColumnType.BIT, ColumnType.GEOMETRY}
_DECIMAL_TYPES = {ColumnType.DECIMAL, ColumnType.NEWDECIMAL}
_DATE_TYPES = {ColumnType.DATE, ColumnType.NEWDATE, ColumnType.DATETIME, ColumnType.TIMESTAMP,
               ColumnType.DATETIME2, ColumnType.TIMESTAMP2}
_TIME_TYPES = {ColumnType.TIME, ColumnType.TIME2}
_INT_SIZES = {ColumnType.TINY: 1, ColumnType.BOOL: 1, ColumnType.SHORT: 2, ColumnType.YEAR: 2,
              ColumnType.LONG: 4, ColumnType.INT24: 4, ColumnType.LONGLONG: 8}
_MAX_DECIMAL_CHARS = 100


class Text(bytes):
    """A string parameter's raw bytes, decoded (or hex-encoded) only when rendered."""


def param_type(code: int) -> ColumnType:
    try:
        return ColumnType(code)
    except ValueError:
        raise MalformedPacket(f"parameter type {code} is not a MySQL type") from None


def decode_value(reader: PacketReader, kind: ColumnType, unsigned: bool) -> Any:
    """One binary-protocol value of `kind` (https://dev.mysql.com/doc/dev/mysql-server/latest/page_protocol_binary_resultset.html)."""
    if kind in _BYTES_TYPES:
        return Text(reader.str_len("string parameter"))
    if kind in _INT_SIZES:
        size = _INT_SIZES[kind]
        return reader.uint(size, "integer parameter") if unsigned else reader.sint(size, "integer parameter")
    if kind == ColumnType.FLOAT:
        return reader.float4()
    if kind == ColumnType.DOUBLE:
        return reader.float8()
    if kind in _DECIMAL_TYPES:
        return decimal_value(reader.str_len("DECIMAL parameter"))
    if kind in _DATE_TYPES:
        return _datetime(reader, date_only=kind in {ColumnType.DATE, ColumnType.NEWDATE})
    if kind in _TIME_TYPES:
        return _time(reader)
    if kind == ColumnType.NULL:
        return None
    raise wire_error(f"Unsupported parameter type: {kind.name} ({int(kind)})", ErrorCode.NOT_SUPPORTED_YET)


def decimal_value(raw: bytes) -> Decimal:
    text = raw.decode("ascii", "replace").strip()
    try:
        if len(text) > _MAX_DECIMAL_CHARS:
            raise InvalidOperation
        value = Decimal(text)
        # MySQL's DECIMAL has at most 65 digits; a huge exponent would render as a huge literal.
        if not value.is_finite() or not -_MAX_DECIMAL_CHARS < value.adjusted() <= 65:
            raise InvalidOperation
    except InvalidOperation:
        raise wire_error(f"Incorrect DECIMAL parameter value: '{text[:40]}'", ErrorCode.WRONG_ARGUMENTS) from None
    return value


def _datetime(reader: PacketReader, date_only: bool) -> dt.date | dt.datetime | Text:
    length = reader.uint(1, "date length")
    if length not in (0, 4, 7, 11):
        raise MalformedPacket(f"a DATE/DATETIME parameter has length {length} (0, 4, 7 or 11)")
    body = PacketReader(reader.fixed(length, "date parameter"))
    if length == 0:
        # MySQL's zero date has no Python value; it is passed on as the text MySQL shows for it.
        return Text(b"0000-00-00" if date_only else b"0000-00-00 00:00:00")
    year, month, day = body.uint(2), body.uint(1), body.uint(1)
    hour = minute = second = micro = 0
    if length >= 7:
        hour, minute, second = body.uint(1), body.uint(1), body.uint(1)
    if length == 11:
        micro = body.uint(4)
    try:
        if date_only and length == 4:
            return dt.date(year, month, day)
        return dt.datetime(year, month, day, hour, minute, second, micro)
    except ValueError as exc:
        raise wire_error(f"Incorrect DATETIME parameter value: {exc}", ErrorCode.TRUNCATED_WRONG_VALUE) from None


def _time(reader: PacketReader) -> dt.timedelta:
    length = reader.uint(1, "time length")
    if length not in (0, 8, 12):
        raise MalformedPacket(f"a TIME parameter has length {length} (0, 8 or 12)")
    body = PacketReader(reader.fixed(length, "time parameter"))
    if length == 0:
        return dt.timedelta(0)
    negative, days = body.uint(1), body.uint(4)
    hours, minutes, seconds = body.uint(1), body.uint(1), body.uint(1)
    micro = body.uint(4) if length == 12 else 0
    if hours > 23 or minutes > 59 or seconds > 59 or micro > 999_999 or days > 34:
        raise wire_error("Incorrect TIME parameter value", ErrorCode.TRUNCATED_WRONG_VALUE)
    value = dt.timedelta(days=days, hours=hours, minutes=minutes, seconds=seconds, microseconds=micro)
    return -value if negative else value


def string_literal(text: str) -> str:
    """A single-quoted literal the Doris/MySQL tokenizer reads back as exactly `text`."""
    return "'" + text.replace("\\", "\\\\").replace("'", "''") + "'"


def _time_text(value: dt.timedelta) -> str:
    sign = "-" if value < dt.timedelta(0) else ""
    value = abs(value)
    total = value.days * 86400 + value.seconds
    text = f"{sign}{total // 3600:02d}:{total % 3600 // 60:02d}:{total % 60:02d}"
    return text + (f".{value.microseconds:06d}" if value.microseconds else "")


def literal(value: Any, charset: CharacterSet) -> str:
    """`value` as one SQL literal of its type."""
    if value is None:
        return "NULL"
    if isinstance(value, bool):
        return "TRUE" if value else "FALSE"
    if isinstance(value, int):
        return str(value)
    if isinstance(value, float):
        if not math.isfinite(value):
            raise wire_error(f"Incorrect DOUBLE parameter value: {value}", ErrorCode.WRONG_ARGUMENTS)
        # With an exponent the literal is a DOUBLE, as the parameter was; `0.5` would be a DECIMAL.
        text = repr(value)
        return text if "e" in text else text + "e0"
    if isinstance(value, Decimal):
        return format(value, "f")
    if isinstance(value, dt.datetime):
        # DATETIME alone is DATETIME(0) in Doris' CAST, which would round a fraction away.
        return f"CAST('{value.isoformat(sep=' ')}' AS {'DATETIME(6)' if value.microsecond else 'DATETIME'})"
    if isinstance(value, dt.date):
        return f"CAST('{value.isoformat()}' AS DATE)"
    if isinstance(value, dt.timedelta):
        if dt.timedelta(0) <= value < dt.timedelta(days=1):
            return f"CAST('{_time_text(value)}' AS TIME)"
        # MySQL's TIME range (±838 hours) is wider than a time of day, DuckDB's TIME: an INTERVAL,
        # which goes back to the client as a TIME (query.wire.columns).
        return f"INTERVAL {string_literal(_time_text(value))}"
    if isinstance(value, (bytes, bytearray)):
        try:
            text = bytes(value).decode(charset.codec)
        except UnicodeDecodeError:
            return f"X'{bytes(value).hex()}'"
        return string_literal(text)
    if isinstance(value, str):
        return string_literal(value)
    raise wire_error(f"Unsupported parameter value of type {type(value).__name__}", ErrorCode.NOT_SUPPORTED_YET)


def placeholders(sql: str) -> list[int]:
    """Character offsets of the `?` placeholders, as Strata's tokenizer sees them. Text that does not
    tokenize (an unterminated quote or comment) is a syntax error already at PREPARE, as in MySQL."""
    try:
        tokens = tokenize(sql)
    except SqlSyntaxError as exc:
        raise wire_error(exc.message, ErrorCode.PARSE_ERROR) from None
    return [token.start for token in tokens if token.token_type == TokenType.PLACEHOLDER]


def bind(sql: str, offsets: list[int], values: list[Any], charset: CharacterSet) -> str:
    """The statement with each placeholder replaced by its value's literal."""
    if len(values) != len(offsets):
        raise wire_error(f"Incorrect arguments to mysqld_stmt_execute: the statement takes {len(offsets)} "
                         f"parameters, {len(values)} were sent", ErrorCode.WRONG_ARGUMENTS)
    parts: list[str] = []
    last = 0
    for offset, value in zip(offsets, values, strict=True):
        parts.append(sql[last:offset])
        # Spaces around the literal: `1-?` with -1 must not become the comment `1--1`.
        parts.append(f" {literal(value, charset)} ")
        last = offset + 1
    parts.append(sql[last:])
    return "".join(parts)
