"""Column definitions from the executor's types, and values encoded as MySQL sends them
(query.wire.columns, query.wire.values). No server needed: the definitions are compared with what
MySQL 5.7 / Doris send for the same types, the values with MySQL's text and binary forms."""

from __future__ import annotations

import datetime as dt
import struct
import uuid
from decimal import Decimal
from zoneinfo import ZoneInfo

import pytest
from mysql_mimic.errors import MysqlError
from mysql_mimic.types import ColumnType

from query.wire.columns import BINARY, UTF8_GENERAL_CI, Flags, WireColumn, binary_row, describe, from_type
from query.wire.reader import PacketReader

UTC = dt.UTC
SHANGHAI = ZoneInfo("Asia/Shanghai")
NUM = Flags.NUM | Flags.BINARY


@pytest.mark.parametrize(("duck", "mysql_type", "length", "decimals", "flags", "charset"), [
    ("BOOLEAN", ColumnType.TINY, 1, 0, Flags.NUM, BINARY),  # no BINARY flag: Connector/J's Boolean
    ("TINYINT", ColumnType.TINY, 4, 0, NUM, BINARY),
    ("UTINYINT", ColumnType.TINY, 3, 0, NUM | Flags.UNSIGNED, BINARY),
    ("SMALLINT", ColumnType.SHORT, 6, 0, NUM, BINARY),
    ("USMALLINT", ColumnType.SHORT, 5, 0, NUM | Flags.UNSIGNED, BINARY),
    ("INTEGER", ColumnType.LONG, 11, 0, NUM, BINARY),
    ("UINTEGER", ColumnType.LONG, 10, 0, NUM | Flags.UNSIGNED, BINARY),
    ("BIGINT", ColumnType.LONGLONG, 20, 0, NUM, BINARY),
    ("UBIGINT", ColumnType.LONGLONG, 20, 0, NUM | Flags.UNSIGNED, BINARY),
    ("HUGEINT", ColumnType.NEWDECIMAL, 40, 0, NUM, BINARY),
    ("FLOAT", ColumnType.FLOAT, 12, 31, NUM, BINARY),
    ("DOUBLE", ColumnType.DOUBLE, 22, 31, NUM, BINARY),
    ("DECIMAL(10,2)", ColumnType.NEWDECIMAL, 12, 2, NUM, BINARY),
    ("DECIMAL(18,0)", ColumnType.NEWDECIMAL, 19, 0, NUM, BINARY),
    ("VARCHAR", ColumnType.VAR_STRING, 65535 * 4, 0, Flags(0), UTF8_GENERAL_CI),
    ("VARCHAR(50)", ColumnType.VAR_STRING, 200, 0, Flags(0), UTF8_GENERAL_CI),
    ("BLOB", ColumnType.BLOB, 2**32 - 1, 0, Flags.BLOB | Flags.BINARY, BINARY),
    ("DATE", ColumnType.DATE, 10, 0, Flags.BINARY, BINARY),
    ("TIME", ColumnType.TIME, 17, 6, Flags.BINARY, BINARY),
    ("INTERVAL", ColumnType.TIME, 17, 6, Flags.BINARY, BINARY),
    ("TIMESTAMP_S", ColumnType.DATETIME, 19, 0, Flags.BINARY, BINARY),
    ("TIMESTAMP_MS", ColumnType.DATETIME, 23, 3, Flags.BINARY, BINARY),
    ("TIMESTAMP", ColumnType.DATETIME, 26, 6, Flags.BINARY, BINARY),
    ("TIMESTAMP_NS", ColumnType.DATETIME, 26, 6, Flags.BINARY, BINARY),
    ("TIMESTAMP WITH TIME ZONE", ColumnType.DATETIME, 26, 6, Flags.BINARY, BINARY),
    ("TIMESTAMP(0)", ColumnType.DATETIME, 19, 0, Flags.BINARY, BINARY),
    ("TIMESTAMP(3)", ColumnType.DATETIME, 23, 3, Flags.BINARY, BINARY),
    ("TIME(0)", ColumnType.TIME, 10, 0, Flags.BINARY, BINARY),
    ("UUID", ColumnType.VAR_STRING, 144, 0, Flags(0), UTF8_GENERAL_CI),
    ("ENUM('a', 'b')", ColumnType.VAR_STRING, 65535 * 4, 0, Flags(0), UTF8_GENERAL_CI),
    ("JSON", ColumnType.JSON, 2**32 - 1, 0, Flags(0), UTF8_GENERAL_CI),
    ("INTEGER[]", ColumnType.STRING, 65535 * 4, 0, Flags(0), UTF8_GENERAL_CI),
    ("INTEGER[3]", ColumnType.STRING, 65535 * 4, 0, Flags(0), UTF8_GENERAL_CI),
    ("STRUCT(a INTEGER, b VARCHAR)", ColumnType.STRING, 65535 * 4, 0, Flags(0), UTF8_GENERAL_CI),
    ("MAP(VARCHAR, INTEGER)", ColumnType.STRING, 65535 * 4, 0, Flags(0), UTF8_GENERAL_CI),
    ('"NULL"', ColumnType.NULL, 0, 0, Flags.BINARY, BINARY),
])
def test_definition_from_the_executor_type(duck: str, mysql_type: ColumnType, length: int, decimals: int,
                                           flags: Flags, charset: int) -> None:
    column = from_type("c", duck, UTC)
    assert (column.type, column.length, column.decimals, column.flags, column.charset) == (
        mysql_type, length, decimals, flags, charset)


def parse_definition(packet: bytes) -> dict[str, object]:
    """Protocol::ColumnDefinition41, field by field, as a client reads it."""
    r = PacketReader(packet)
    names = [r.str_len("field") for _ in range(6)]
    assert r.uint_len("fixed length") == 0x0C
    fields = {"catalog": names[0], "schema": names[1], "table": names[2], "org_table": names[3],
              "name": names[4], "org_name": names[5], "charset": r.uint(2), "length": r.uint(4),
              "type": r.uint(1), "flags": r.uint(2), "decimals": r.uint(1)}
    assert r.uint(2) == 0 and r.at_end()
    return fields


def test_definition_packet_carries_every_field() -> None:
    packet = from_type("amount €", "DECIMAL(10,2)", UTC).definition()
    assert parse_definition(packet) == {
        "catalog": b"def", "schema": b"", "table": b"", "org_table": b"", "name": "amount €".encode(),
        "org_name": "amount €".encode(), "charset": 63, "length": 12, "type": 246, "flags": 32768 | 128,
        "decimals": 2}


def test_empty_results_keep_their_types() -> None:
    columns = describe(["n", "s", "t"], ["BIGINT", "VARCHAR", "TIMESTAMP_MS"], [], UTC)
    assert [c.type for c in columns] == [ColumnType.LONGLONG, ColumnType.VAR_STRING, ColumnType.DATETIME]


def test_hand_built_results_are_described_from_values() -> None:
    rows = [(None, "x", 1, Decimal("1.50"), dt.datetime(2020, 1, 1), b"\x00", True)]
    columns = describe(["a", "b", "c", "d", "e", "f", "g"], None, rows, UTC)
    assert [c.type for c in columns] == [ColumnType.NULL, ColumnType.VAR_STRING, ColumnType.LONGLONG,
                                         ColumnType.NEWDECIMAL, ColumnType.DATETIME, ColumnType.BLOB, ColumnType.TINY]
    assert (columns[3].length, columns[3].decimals) == (5, 2)  # DECIMAL(3,2): sign + point
    # Two columns of one name are two columns (mysql-mimic keyed them by name).
    assert len(describe(["v", "v"], None, [(1, 2)], UTC)) == 2


def test_types_without_a_mysql_form_are_refused() -> None:
    with pytest.raises(MysqlError) as caught:
        from_type("u", "UNION(a INTEGER, b VARCHAR)", UTC)
    assert caught.value.code == 1235 and "CAST it" in caught.value.msg
    with pytest.raises(MysqlError):
        from_type("b", "BIT", UTC)
    with pytest.raises(MysqlError):
        from_type("t", "TIME WITH TIME ZONE", UTC)  # the offset would be lost


def text(duck: str, value: object, zone: dt.tzinfo = UTC) -> str:
    return from_type("c", duck, zone).text(value).decode()


def test_datetime_text_has_exactly_the_column_decimals() -> None:
    moment = dt.datetime(2026, 12, 2, 11, 33, 2, 804755)
    assert text("TIMESTAMP", moment) == "2026-12-02 11:33:02.804755"
    assert text("TIMESTAMP", moment.replace(microsecond=0)) == "2026-12-02 11:33:02.000000"
    assert text("TIMESTAMP_MS", moment) == "2026-12-02 11:33:02.804"
    assert text("TIMESTAMP_S", moment) == "2026-12-02 11:33:02"
    assert text("TIMESTAMP(0)", dt.datetime(9, 1, 2, 3, 4, 5)) == "0009-01-02 03:04:05"


def test_instants_are_shown_in_the_session_time_zone_without_offset() -> None:
    instant = dt.datetime(2026, 12, 2, 11, 33, 2, 804755, tzinfo=UTC)
    assert text("TIMESTAMP WITH TIME ZONE", instant) == "2026-12-02 11:33:02.804755"
    assert text("TIMESTAMP WITH TIME ZONE", instant, SHANGHAI) == "2026-12-02 19:33:02.804755"
    assert text("TIMESTAMP WITH TIME ZONE", instant, dt.timezone(-dt.timedelta(hours=5))) == \
        "2026-12-02 06:33:02.804755"


def test_scalar_texts() -> None:
    assert text("BOOLEAN", True) == "1" and text("BOOLEAN", False) == "0"
    assert text("DECIMAL(10,2)", Decimal("-12.30")) == "-12.30"
    assert text("DECIMAL(38,0)", Decimal("1E+2")) == "100"
    assert text("FLOAT", struct.unpack("<f", struct.pack("<f", 1.1))[0]) == "1.1"
    assert text("DOUBLE", 0.1) == "0.1"
    assert text("DATE", dt.date(2020, 2, 29)) == "2020-02-29"
    assert text("TIME", dt.time(10, 1, 2, 500000)) == "10:01:02.500000"
    assert text("TIME(0)", dt.time(10, 1, 2)) == "10:01:02"
    assert text("INTERVAL", dt.timedelta(hours=-30, minutes=-1)) == "-30:01:00.000000"
    assert text("INTERVAL", dt.timedelta(days=40)) == "960:00:00.000000"
    assert text("UUID", uuid.UUID(int=1)) == "00000000-0000-0000-0000-000000000001"
    assert text("HUGEINT", 2**100) == str(2**100)
    assert text("VARCHAR", "naïve ☃ 日本") == "naïve ☃ 日本"
    assert from_type("c", "BLOB", UTC).text(b"\x00\xff") == b"\x00\xff"


def test_doris_complex_types_as_doris_prints_them() -> None:
    assert text("INTEGER[]", [1, 2]) == "[1, 2]"
    assert text("VARCHAR[]", ["a", None, 'q"uote']) == '["a", null, "q\\"uote"]'
    assert text("MAP(VARCHAR, INTEGER)", {"k": 1}) == '{"k":1}'
    assert text("STRUCT(a INTEGER, b VARCHAR)", {"a": 1, "b": "x"}) == '{"a":1, "b":"x"}'
    assert text("DATE[]", [dt.date(2020, 1, 1)]) == '["2020-01-01"]'
    assert text("DECIMAL(4,2)[]", [Decimal("1.50")]) == "[1.50]"


def binary(duck: str, value: object, zone: dt.tzinfo = UTC) -> bytes:
    return from_type("c", duck, zone).binary(value)


def test_binary_integers_by_width_and_sign() -> None:
    assert binary("TINYINT", -1) == b"\xff"
    assert binary("UTINYINT", 255) == b"\xff"
    assert binary("BOOLEAN", True) == b"\x01"
    assert binary("SMALLINT", -2) == struct.pack("<h", -2)
    assert binary("INTEGER", 2**31 - 1) == struct.pack("<i", 2**31 - 1)
    assert binary("UINTEGER", 2**32 - 1) == struct.pack("<I", 2**32 - 1)
    assert binary("BIGINT", -(2**63)) == struct.pack("<q", -(2**63))
    assert binary("UBIGINT", 2**64 - 1) == b"\xff" * 8
    assert binary("DOUBLE", 2.5) == struct.pack("<d", 2.5)
    assert binary("FLOAT", 2.5) == struct.pack("<f", 2.5)


def test_binary_strings_are_length_encoded() -> None:
    assert binary("DECIMAL(10,2)", Decimal("12.30")) == b"\x0512.30"
    assert binary("VARCHAR", "é") == b"\x02\xc3\xa9"
    assert binary("HUGEINT", 2**64) == b"\x14" + str(2**64).encode()
    assert binary("INTEGER[]", [1]) == b"\x03[1]"


def test_binary_datetime_date_time() -> None:
    moment = dt.datetime(2026, 12, 2, 11, 33, 2, 804755)
    assert binary("TIMESTAMP", moment) == b"\x0b" + struct.pack("<HBBBBBI", 2026, 12, 2, 11, 33, 2, 804755)
    assert binary("TIMESTAMP_MS", moment) == b"\x0b" + struct.pack("<HBBBBBI", 2026, 12, 2, 11, 33, 2, 804000)
    assert binary("TIMESTAMP_S", moment) == b"\x07" + struct.pack("<HBBBBB", 2026, 12, 2, 11, 33, 2)
    assert binary("TIMESTAMP", dt.datetime(2026, 1, 2)) == b"\x04" + struct.pack("<HBB", 2026, 1, 2)
    assert binary("TIMESTAMP WITH TIME ZONE", moment.replace(tzinfo=UTC), SHANGHAI) == \
        b"\x0b" + struct.pack("<HBBBBBI", 2026, 12, 2, 19, 33, 2, 804755)
    assert binary("DATE", dt.date(2020, 2, 29)) == b"\x04" + struct.pack("<HBB", 2020, 2, 29)
    assert binary("TIME", dt.time(10, 1, 2)) == b"\x08" + struct.pack("<BIBBB", 0, 0, 10, 1, 2)
    assert binary("INTERVAL", dt.timedelta(hours=-30, microseconds=-5)) == \
        b"\x0c" + struct.pack("<BIBBBI", 1, 1, 6, 0, 0, 5)
    assert binary("INTERVAL", dt.timedelta(0)) == b"\x00"


def test_binary_row_null_bitmap() -> None:
    columns: list[WireColumn] = describe(["a", "b", "c"], ["INTEGER", "VARCHAR", "INTEGER"], [], UTC)
    # NULL bitmap with offset 2: column 1 (b) is bit 3.
    assert binary_row((1, None, 2), columns) == b"\x00\x08" + struct.pack("<ii", 1, 2)
    wide = describe([f"c{i}" for i in range(7)], ["INTEGER"] * 7, [], UTC)
    assert binary_row((None,) * 7, wide) == b"\x00\xfc\x01"
