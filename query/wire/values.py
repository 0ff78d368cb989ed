"""Result values as MySQL sends them, in the text protocol (COM_QUERY) and the binary protocol
(COM_STMT_EXECUTE, https://dev.mysql.com/doc/dev/mysql-server/latest/page_protocol_binary_resultset.html).

Each function here makes the encoder of one kind of column; query.wire.columns picks it from the
column's type, so a value is encoded by what its column is, never guessed from the value. Why not
`str(value)` as mysql-mimic does: Python prints an aware datetime with `+00:00` (Connector/J fails on
the length, mysqlclient returns None), a datetime with as many fraction digits as it happens to
have (MySQL sends exactly the column's), True as `True`, a timedelta as `1 day, 2:00:00`, a float32
widened to a double as `1.100000023841858`, a Doris ARRAY as a Python list.
"""

from __future__ import annotations

import datetime as dt
import json
import struct
import uuid
from collections.abc import Callable
from decimal import Decimal
from typing import Any

from mysql_mimic.types import str_len, uint_1, uint_2, uint_4

Encode = Callable[[Any], bytes]
Zone = dt.tzinfo

_INT_FORMATS = {(1, False): "<b", (1, True): "<B", (2, False): "<h", (2, True): "<H", (4, False): "<i",
                (4, True): "<I", (8, False): "<q", (8, True): "<Q"}


# -- text protocol -------------------------------------------------------------------------------
def text_str(value: Any) -> bytes:
    return value.encode("utf-8") if isinstance(value, str) else str(value).encode("utf-8")


def text_bytes(value: Any) -> bytes:
    return bytes(value) if isinstance(value, (bytes, bytearray, memoryview)) else text_str(value)


def text_int(value: Any) -> bytes:
    """Integers, and BOOLEAN as MySQL's TINYINT(1): 1/0, not True/False."""
    return str(int(value)).encode("ascii")


def text_decimal(value: Any) -> bytes:
    """The exact digits (never an exponent: Decimal('1E+2') is `100`)."""
    return format(value, "f").encode("ascii") if isinstance(value, Decimal) else str(value).encode("ascii")


def text_double(value: Any) -> bytes:
    return repr(float(value)).encode("ascii")


def text_float(value: Any) -> bytes:
    """A FLOAT comes from the executor widened to a double (1.1 → 1.100000023841858); MySQL prints
    the shortest text that reads back as the same 4-byte float."""
    value = float(value)
    single = struct.unpack("<f", struct.pack("<f", value))[0]
    for digits in range(6, 10):
        text = f"{value:.{digits}g}"
        if struct.unpack("<f", struct.pack("<f", float(text)))[0] == single:
            return text.encode("ascii")
    return repr(value).encode("ascii")


def naive(value: dt.datetime, zone: Zone) -> dt.datetime:
    """A DATETIME as the client sees it: an instant (aware value) in the session time zone, without
    an offset; a naive value is already a wall-clock time."""
    return value if value.tzinfo is None else value.astimezone(zone).replace(tzinfo=None)


def _truncate(micro: int, decimals: int) -> int:
    step = 10 ** (6 - decimals)
    return micro // step * step


def datetime_text(value: dt.datetime, decimals: int) -> str:
    text = f"{value.year:04d}-{value.month:02d}-{value.day:02d} {value.hour:02d}:{value.minute:02d}:{value.second:02d}"
    return text + f".{value.microsecond:06d}"[: decimals + 1] if decimals else text


def text_datetime(decimals: int, zone: Zone) -> Encode:
    def encode(value: Any) -> bytes:
        if isinstance(value, dt.datetime):
            return datetime_text(naive(value, zone), decimals).encode("ascii")
        if isinstance(value, dt.date):
            return datetime_text(dt.datetime(value.year, value.month, value.day), decimals).encode("ascii")
        return text_str(value)
    return encode


def text_date(value: Any) -> bytes:
    if isinstance(value, dt.date):
        return f"{value.year:04d}-{value.month:02d}-{value.day:02d}".encode("ascii")
    return text_str(value)


def time_parts(value: dt.timedelta | dt.time) -> tuple[bool, int, int, int, int, int]:
    """(negative, days, hours, minutes, seconds, microseconds) of a TIME value; an interval may be
    negative or longer than a day, as MySQL's TIME (-838:59:59 … 838:59:59)."""
    if isinstance(value, dt.time):
        return False, 0, value.hour, value.minute, value.second, value.microsecond
    negative = value < dt.timedelta(0)
    value = abs(value)
    hours, rest = divmod(value.seconds, 3600)
    minutes, seconds = divmod(rest, 60)
    return negative, value.days, hours, minutes, seconds, value.microseconds


def text_time(decimals: int) -> Encode:
    def encode(value: Any) -> bytes:
        if not isinstance(value, (dt.timedelta, dt.time)):
            return text_str(value)
        negative, days, hours, minutes, seconds, micro = time_parts(value)
        text = f"{'-' if negative else ''}{days * 24 + hours:02d}:{minutes:02d}:{seconds:02d}"
        if decimals:
            text += f".{micro:06d}"[: decimals + 1]
        return text.encode("ascii")
    return encode


def _nested(value: Any, zone: Zone) -> str:
    """One element of a Doris ARRAY/MAP/STRUCT as Doris prints it: strings and times quoted, NULL as
    `null`, numbers bare."""
    if value is None:
        return "null"
    if isinstance(value, bool):
        return "1" if value else "0"
    if isinstance(value, (int, Decimal)):
        return text_decimal(value).decode() if isinstance(value, Decimal) else str(value)
    if isinstance(value, float):
        return repr(value)
    if isinstance(value, dt.datetime):
        return json.dumps(datetime_text(naive(value, zone), 6 if value.microsecond else 0))
    if isinstance(value, (dt.date, dt.time, uuid.UUID)):
        return json.dumps(str(value))
    if isinstance(value, dict):
        return "{" + ", ".join(f"{_nested(str(k), zone)}:{_nested(v, zone)}" for k, v in value.items()) + "}"
    if isinstance(value, (list, tuple)):
        return "[" + ", ".join(_nested(item, zone) for item in value) + "]"
    if isinstance(value, (bytes, bytearray)):
        return json.dumps(bytes(value).decode("utf-8", "replace"), ensure_ascii=False)
    return json.dumps(str(value), ensure_ascii=False)


def text_nested(zone: Zone) -> Encode:
    """Doris ARRAY/MAP/STRUCT values: `[1, 2]`, `{"k":1}`, `{"a":1, "b":"x"}`."""
    def encode(value: Any) -> bytes:
        return _nested(value, zone).encode("utf-8")
    return encode


# -- binary protocol -----------------------------------------------------------------------------
def binary_int(size: int, unsigned: bool) -> Encode:
    packer = struct.Struct(_INT_FORMATS[(size, unsigned)]).pack

    def encode(value: Any) -> bytes:
        return packer(int(value))
    return encode


def binary_double(value: Any) -> bytes:
    return struct.pack("<d", float(value))


def binary_float(value: Any) -> bytes:
    return struct.pack("<f", float(value))


def binary_lenenc(text: Encode) -> Encode:
    """String-like values (DECIMAL, VARCHAR, BLOB, JSON, …): the text form, length-encoded."""
    def encode(value: Any) -> bytes:
        return str_len(text(value))
    return encode


def binary_datetime(decimals: int, zone: Zone) -> Encode:
    """MYSQL_TYPE_DATETIME/DATE: length 0 (zero date), 4 (date), 7 (+ time) or 11 (+ microseconds)."""
    def encode(value: Any) -> bytes:
        if isinstance(value, dt.datetime):
            value = naive(value, zone)
            micro = _truncate(value.microsecond, decimals)
            clock = (value.hour, value.minute, value.second)
        elif isinstance(value, dt.date):
            micro, clock = 0, (0, 0, 0)
        else:
            raise TypeError(f"a DATETIME column holds {type(value).__name__}")
        day = uint_2(value.year) + uint_1(value.month) + uint_1(value.day)
        if micro:
            return uint_1(11) + day + bytes(clock) + uint_4(micro)
        if any(clock):
            return uint_1(7) + day + bytes(clock)
        return uint_1(4) + day
    return encode


def binary_time(decimals: int) -> Encode:
    """MYSQL_TYPE_TIME: length 0 (zero), 8 (sign, days, h:m:s) or 12 (+ microseconds)."""
    def encode(value: Any) -> bytes:
        negative, days, hours, minutes, seconds, micro = time_parts(value)
        micro = _truncate(micro, decimals)
        if not (days or hours or minutes or seconds or micro):
            return uint_1(0)
        head = uint_1(negative) + uint_4(days) + bytes((hours, minutes, seconds))
        return uint_1(12) + head + uint_4(micro) if micro else uint_1(8) + head
    return encode
