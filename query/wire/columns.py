"""Result columns as MySQL describes them: the one place that maps the executor's types to MySQL
column definitions (type, length, decimals, flags, character set) and picks each column's encoders.

A result from the engine carries DuckDB's type name per column (`Rows.types`), so a column is
described from its schema: an empty result has real types, a BIGINT column is LONGLONG(20) whatever
its values, DECIMAL(10,2) is NEWDECIMAL(12, 2). Lengths, decimals and flags are those MySQL 5.7 /
Doris send for the same type (`SELECT` of a table column), which drivers use: Connector/J's
precision and display size, pandas' dtypes through the drivers' type codes, mysqlclient's binary
flag (bytes or str), the charset (33 = utf8_general_ci for text, as Doris; 63 = binary for numbers,
dates and BLOBs). Results built by hand (`types` None: SHOW …) and mysql-mimic's own answers (SET,
SHOW VARIABLES) are described from their values instead (`from_value`).

Doris ARRAY/MAP/STRUCT have no MySQL type: they go out as text (MYSQL_TYPE_STRING), as Doris sends
them; LARGEINT (DuckDB's HUGEINT, also what DuckDB makes of SUM(BIGINT)) as DECIMAL(39,0). A type
with no MySQL counterpart here (DuckDB's UNION, BIT, TIME WITH TIME ZONE) is refused with a "not
supported" error rather than sent as some text a client would misread.
"""

from __future__ import annotations

import datetime as dt
import enum
import re
import uuid
from collections.abc import Callable, Sequence
from dataclasses import dataclass
from decimal import Decimal
from typing import TYPE_CHECKING, Any

from mysql_mimic.errors import MysqlError
from mysql_mimic.types import ColumnType, str_len, uint_1, uint_2, uint_4, uint_len

from query.wire import values as v
from schemas.errors import ErrorCode

if TYPE_CHECKING:
    from query.wire.text_batches import RecordBatches

UTF8_GENERAL_CI = 33  # what Doris announces for text columns; clients decode it as UTF-8 (4-byte too)
BINARY = 63
# NOT_FIXED_DEC: MySQL's `decimals` of a FLOAT/DOUBLE without a declared scale.
_FLOATING_DECIMALS = 31
# A VARCHAR without a declared length (DuckDB's VARCHAR, Doris' STRING): 65535 characters of up to
# 4 bytes, MySQL's TEXT length.
_TEXT_LENGTH = 65535 * 4
_LONG_BLOB_LENGTH = 2**32 - 1


class Flags(enum.IntFlag):
    """Column definition flags (include/mysql_com.h; mysql-mimic's enum has NUM_FLAG wrong)."""

    NOT_NULL = 1
    BLOB = 16
    UNSIGNED = 32
    BINARY = 128
    NUM = 32768


_NUMBER = Flags.NUM | Flags.BINARY


@dataclass(frozen=True)
class WireColumn:
    """One column of a result: its definition packet's fields and how its values are encoded."""

    name: str
    type: ColumnType
    length: int
    decimals: int
    flags: Flags
    charset: int
    text: v.Encode
    binary: v.Encode

    def definition(self, table: str = "", schema: str = "") -> bytes:
        """Protocol::ColumnDefinition41."""
        name = self.name.encode("utf-8")
        return b"".join([
            str_len(b"def"), str_len(schema.encode("utf-8")), str_len(table.encode("utf-8")),
            str_len(table.encode("utf-8")), str_len(name), str_len(name),
            uint_len(0x0C), uint_2(self.charset), uint_4(min(self.length, 2**32 - 1)), uint_1(self.type),
            uint_2(self.flags), uint_1(self.decimals), uint_2(0),
        ])


@dataclass
class WireResult:
    """A result set ready for the wire: rows and their column descriptions. Stands in for
    mysql-mimic's ResultSet (whose ResultColumn has no length, decimals or flags)."""

    rows: Sequence[Sequence[Any]]
    columns: list[WireColumn]
    # Rows streamed as record batches (query.wire.text_batches) instead of `rows`; the connection
    # sends and closes them.
    batches: RecordBatches | None = None

    def __bool__(self) -> bool:
        return bool(self.columns)


def _text(name: str, kind: ColumnType = ColumnType.VAR_STRING, length: int = _TEXT_LENGTH,
          encode: v.Encode = v.text_str) -> WireColumn:
    return WireColumn(name, kind, length, 0, Flags(0), UTF8_GENERAL_CI, encode, v.binary_lenenc(encode))


def _integer(name: str, kind: ColumnType, size: int, length: int, unsigned: bool) -> WireColumn:
    flags = _NUMBER | Flags.UNSIGNED if unsigned else _NUMBER
    return WireColumn(name, kind, length, 0, flags, BINARY, v.text_int, v.binary_int(size, unsigned))


# DuckDB integer type → (MySQL type, bytes, display length, unsigned); lengths as MySQL's INT(11) etc.
_INTEGERS: dict[str, tuple[ColumnType, int, int, bool]] = {
    "TINYINT": (ColumnType.TINY, 1, 4, False), "UTINYINT": (ColumnType.TINY, 1, 3, True),
    "SMALLINT": (ColumnType.SHORT, 2, 6, False), "USMALLINT": (ColumnType.SHORT, 2, 5, True),
    "INTEGER": (ColumnType.LONG, 4, 11, False), "UINTEGER": (ColumnType.LONG, 4, 10, True),
    "BIGINT": (ColumnType.LONGLONG, 8, 20, False), "UBIGINT": (ColumnType.LONGLONG, 8, 20, True),
}
_TIMESTAMP_DECIMALS = {"TIMESTAMP_S": 0, "TIMESTAMP_MS": 3, "TIMESTAMP": 6, "TIMESTAMP_US": 6, "TIMESTAMP_NS": 6,
                       "DATETIME": 6, "TIMESTAMP WITH TIME ZONE": 6, "TIMESTAMPTZ": 6}
_DECIMAL = re.compile(r"DECIMAL\((\d+),\s*(\d+)\)")
# `TIMESTAMP(p)` / `TIME(p)` / `VARCHAR(n)`: not DuckDB names, but how the engine may state what
# DuckDB's types cannot (a timestamp is in s, ms, us or ns; a VARCHAR has no length).
_PRECISION = re.compile(r"(TIMESTAMP|DATETIME|TIME)\((\d)\)")
_VARCHAR = re.compile(r"(?:VARCHAR|CHAR)\((\d+)\)")
_NESTED = re.compile(r"^(STRUCT|MAP|UNION)\(|\[\d*\]$")


def _datetime(name: str, decimals: int, zone: dt.tzinfo) -> WireColumn:
    return WireColumn(name, ColumnType.DATETIME, 19 + (decimals + 1 if decimals else 0), decimals, Flags.BINARY,
                      BINARY, v.text_datetime(decimals, zone), v.binary_datetime(decimals, zone))


def _time(name: str, decimals: int) -> WireColumn:
    return WireColumn(name, ColumnType.TIME, 10 + (decimals + 1 if decimals else 0), decimals, Flags.BINARY,
                      BINARY, v.text_time(decimals), v.binary_time(decimals))


def _date(name: str, zone: dt.tzinfo) -> WireColumn:
    return WireColumn(name, ColumnType.DATE, 10, 0, Flags.BINARY, BINARY, v.text_date, v.binary_datetime(0, zone))


def _decimal(name: str, precision: int, scale: int) -> WireColumn:
    # MySQL's length counts the sign and, with a scale, the point: DECIMAL(10,2) → 12.
    length = precision + 1 + (1 if scale else 0)
    return WireColumn(name, ColumnType.NEWDECIMAL, length, scale, _NUMBER, BINARY, v.text_decimal,
                      v.binary_lenenc(v.text_decimal))


def _boolean(name: str) -> WireColumn:
    # MySQL's BOOLEAN is TINYINT(1), and a TINYINT(1) table column is sent without the BINARY flag:
    # Connector/J reads TINYINT(1) as a BIT and returns a BIT with that flag as byte[], not Boolean.
    return WireColumn(name, ColumnType.TINY, 1, 0, Flags.NUM, BINARY, v.text_int, v.binary_int(1, False))


def _float(name: str, double: bool) -> WireColumn:
    if double:
        return WireColumn(name, ColumnType.DOUBLE, 22, _FLOATING_DECIMALS, _NUMBER, BINARY, v.text_double,
                          v.binary_double)
    return WireColumn(name, ColumnType.FLOAT, 12, _FLOATING_DECIMALS, _NUMBER, BINARY, v.text_float, v.binary_float)


def _blob(name: str) -> WireColumn:
    return WireColumn(name, ColumnType.BLOB, _LONG_BLOB_LENGTH, 0, Flags.BLOB | Flags.BINARY, BINARY, v.text_bytes,
                      v.binary_lenenc(v.text_bytes))


def _null(name: str) -> WireColumn:
    # `SELECT NULL` in MySQL: type NULL, length 0, binary; every value is NULL, so no encoder is used.
    return WireColumn(name, ColumnType.NULL, 0, 0, Flags.BINARY, BINARY, v.text_str, v.binary_lenenc(v.text_str))


def from_type(name: str, duck_type: str, zone: dt.tzinfo) -> WireColumn:
    """The column `name` of DuckDB type `duck_type` (as DuckDB names it in a cursor description)."""
    kind = duck_type.strip().strip('"').upper()
    if kind in _INTEGERS:
        mysql_type, size, length, unsigned = _INTEGERS[kind]
        return _integer(name, mysql_type, size, length, unsigned)
    if kind in _TIMESTAMP_DECIMALS:
        return _datetime(name, _TIMESTAMP_DECIMALS[kind], zone)
    decimal = _DECIMAL.fullmatch(kind)
    if decimal:
        return _decimal(name, int(decimal.group(1)), int(decimal.group(2)))
    precise = _PRECISION.fullmatch(kind)
    if precise:
        decimals = min(int(precise.group(2)), 6)
        return _time(name, decimals) if precise.group(1) == "TIME" else _datetime(name, decimals, zone)
    if _NESTED.search(kind):
        # Doris ARRAY/MAP/STRUCT: text, as Doris sends them.
        if kind.startswith("UNION("):
            raise _unsupported(name, duck_type)
        return _text(name, ColumnType.STRING, encode=v.text_nested(zone))
    varchar = _VARCHAR.fullmatch(kind)
    if varchar:
        return _text(name, length=int(varchar.group(1)) * 4)  # utf8mb4: up to 4 bytes a character
    if kind.startswith("ENUM("):
        return _text(name)
    simple = _SIMPLE.get(kind)
    if simple is None:
        raise _unsupported(name, duck_type)
    return simple(name, zone)


def _unsupported(name: str, duck_type: str) -> MysqlError:
    return MysqlError(f"Column '{name}' has type {duck_type}, which cannot be sent over the MySQL protocol; "
                      "CAST it to a supported type", ErrorCode.NOT_SUPPORTED_YET)  # type: ignore[arg-type]


_SIMPLE: dict[str, Callable[[str, dt.tzinfo], WireColumn]] = {
    "BOOLEAN": lambda name, zone: _boolean(name),
    "FLOAT": lambda name, zone: _float(name, double=False),
    "DOUBLE": lambda name, zone: _float(name, double=True),
    # LARGEINT, and DuckDB's sum of a BIGINT: 128 bits have no MySQL integer type. Sent as
    # DECIMAL(39,0), as MySQL sends SUM(BIGINT): exact, and a number in every client.
    "HUGEINT": lambda name, zone: _decimal(name, 39, 0),
    "UHUGEINT": lambda name, zone: _decimal(name, 39, 0),
    "VARCHAR": lambda name, zone: _text(name),
    "UUID": lambda name, zone: _text(name, length=36 * 4),
    # JSON in UTF-8, as MySQL sends `CAST(… AS JSON)`: clients decode it as text (with the binary
    # charset of a MySQL JSON column, mysql-connector-python returns bytes).
    "JSON": lambda name, zone: _text(name, ColumnType.JSON, _LONG_BLOB_LENGTH),
    "BLOB": lambda name, zone: _blob(name),
    "DATE": lambda name, zone: _date(name, zone),
    # DuckDB's TIME and INTERVAL carry microseconds; an INTERVAL is sent as MySQL's TIME, whose
    # range (±838 hours) is wider than a day.
    "TIME": lambda name, zone: _time(name, 6),
    "INTERVAL": lambda name, zone: _time(name, 6),
    "NULL": lambda name, zone: _null(name),
}


def from_value(name: str, sample: Any, zone: dt.tzinfo) -> WireColumn:
    """A column described by its first non-NULL value (results built by hand)."""
    if sample is None:
        return _null(name)
    if isinstance(sample, bool):
        return _boolean(name)
    if isinstance(sample, int):
        return _integer(name, ColumnType.LONGLONG, 8, 20, False) if -2**63 <= sample < 2**63 else \
            _decimal(name, 39, 0)
    if isinstance(sample, float):
        return _float(name, double=True)
    if isinstance(sample, Decimal):
        digits = len(sample.as_tuple().digits)
        scale = max(0, -int(sample.as_tuple().exponent))
        return _decimal(name, max(digits, scale), scale)
    if isinstance(sample, dt.datetime):
        return _datetime(name, 6 if sample.microsecond else 0, zone)
    if isinstance(sample, dt.date):
        return _date(name, zone)
    if isinstance(sample, (dt.timedelta, dt.time)):
        return _time(name, 6 if (sample.microseconds if isinstance(sample, dt.timedelta) else sample.microsecond)
                     else 0)
    if isinstance(sample, (bytes, bytearray)):
        return _blob(name)
    if isinstance(sample, (list, tuple, dict)):
        return _text(name, ColumnType.STRING, encode=v.text_nested(zone))
    if isinstance(sample, uuid.UUID):
        return _text(name, length=36 * 4)
    return _text(name)


def describe(names: Sequence[str], types: Sequence[str] | None, rows: Sequence[Sequence[Any]],
             zone: dt.tzinfo) -> list[WireColumn]:
    """The columns of a result: from the executor's types when it has them, else from the values."""
    if types is not None:
        return [from_type(name, kind, zone) for name, kind in zip(names, types, strict=True)]
    samples = [next((row[i] for row in rows if row[i] is not None), None) for i in range(len(names))]
    return [from_value(name, sample, zone) for name, sample in zip(names, samples, strict=True)]


def binary_row(row: Sequence[Any], columns: Sequence[WireColumn]) -> bytes:
    """Protocol::BinaryResultsetRow: a 0x00 header, the NULL bitmap (offset 2) and each non-NULL
    value in its column's binary encoding."""
    bitmap = bytearray((len(columns) + 9) // 8)
    values: list[bytes] = []
    for i, (value, column) in enumerate(zip(row, columns, strict=True)):
        if value is None:
            bitmap[(i + 2) // 8] |= 1 << ((i + 2) % 8)
        else:
            values.append(column.binary(value))
    return b"\x00" + bytes(bitmap) + b"".join(values)
