"""Result sets on the wire, read packet by packet from the running server: the column definitions
carry MySQL's type, length, decimals, flags and charset from the result's schema (empty results
too), and values are MySQL's text and binary forms (query.wire.columns)."""

from __future__ import annotations

import struct
from collections.abc import Iterator

import pytest

from query.wire.reader import PacketReader
from tests.query.wire.test_columns import parse_definition
from tests.query.wire_kit import CLIENT_FLAGS, DEPRECATE_EOF, RawClient

pytestmark = pytest.mark.usefixtures("server")

COM_QUERY = 0x03
COM_STMT_PREPARE = 0x16
COM_STMT_EXECUTE = 0x17


@pytest.fixture
def raw(db: str) -> Iterator[RawClient]:
    client = RawClient()
    assert client.login()[:1] == b"\x00"
    assert client.command(bytes([COM_QUERY]) + f"USE {db}".encode())[:1] == b"\x00"
    client.command(bytes([COM_QUERY]) + b"CREATE TABLE t (id BIGINT, amount DECIMAL(10,2), at DATETIME, "
                   b"name VARCHAR(20), born DATE) DUPLICATE KEY(id) DISTRIBUTED BY HASH(id) BUCKETS 1")
    client.command(bytes([COM_QUERY]) + "INSERT INTO t VALUES (7, -12.50, '2026-12-02 11:33:02', 'Zoë', "
                   "'2020-02-29'), (8, NULL, NULL, NULL, NULL)".encode())
    yield client
    client.close()


def result(client: RawClient, first: bytes) -> tuple[list[dict[str, object]], list[bytes]]:
    """Column definitions and raw row packets of a result set whose first packet is `first`
    (no CLIENT_DEPRECATE_EOF: an EOF ends the definitions and the rows)."""
    count = PacketReader(first).uint_len("column count")
    columns = [parse_definition(client.read_packet()[1]) for _ in range(count)]
    assert client.read_packet()[1][:1] == b"\xfe"
    rows: list[bytes] = []
    while True:
        packet = client.read_packet()[1]
        if packet[:1] == b"\xfe" and len(packet) < 9:
            return columns, rows
        rows.append(packet)


def text_values(packet: bytes, count: int) -> list[bytes | None]:
    r = PacketReader(packet)
    values: list[bytes | None] = []
    for _ in range(count):
        if r.peek() == 0xFB:
            r.uint(1)
            values.append(None)
        else:
            values.append(r.str_len("value"))
    return values


def kinds(columns: list[dict[str, object]]) -> list[tuple[object, ...]]:
    return [(c["name"], c["type"], c["length"], c["decimals"], c["flags"], c["charset"]) for c in columns]


EXPECTED = [
    (b"id", 8, 20, 0, 32768 | 128, 63),                # LONGLONG
    (b"amount", 246, 12, 2, 32768 | 128, 63),          # NEWDECIMAL(10,2)
    (b"name", 253, 65535 * 4, 0, 0, 33),               # VAR_STRING, utf8
    (b"born", 10, 10, 0, 128, 63),                     # DATE
]


def test_text_result_columns_from_the_schema(raw: RawClient) -> None:
    columns, rows = result(raw, raw.command(bytes([COM_QUERY]) + b"SELECT id, amount, name, born FROM t ORDER BY id"))
    assert kinds(columns) == EXPECTED
    assert [text_values(row, 4) for row in rows] == [[b"7", b"-12.50", "Zoë".encode(), b"2020-02-29"],
                                                     [b"8", None, None, None]]


def test_empty_result_has_the_same_columns(raw: RawClient) -> None:
    columns, rows = result(raw, raw.command(bytes([COM_QUERY]) + b"SELECT id, amount, name, born FROM t WHERE false"))
    assert kinds(columns) == EXPECTED and rows == []


def test_datetime_is_naive_with_the_column_precision(raw: RawClient) -> None:
    sql = b"SELECT at, CAST(at AS TIMESTAMP WITH TIME ZONE) AS instant FROM t WHERE id = 7"
    columns, rows = result(raw, raw.command(bytes([COM_QUERY]) + sql))
    assert [(c["type"], c["charset"]) for c in columns] == [(12, 63), (12, 63)]
    at, instant = text_values(rows[0], 2)
    assert at is not None and at.startswith(b"2026-12-02 11:33:02") and b"+" not in at
    assert instant is not None and instant.startswith(b"2026-12-02 11:33:02") and b"+" not in instant
    assert len(at) == int(str(columns[0]["length"])) and len(instant) == int(str(columns[1]["length"]))


def test_binary_result_row(raw: RawClient) -> None:
    answer = raw.command(bytes([COM_STMT_PREPARE]) + b"SELECT id, amount, name, born FROM t WHERE id = ?")
    assert answer[:1] == b"\x00"
    stmt_id, announced, params = struct.unpack("<IHH", answer[1:9])
    assert stmt_id >= 1 and params == 1
    assert raw.read_packet()[1][:1] != b"\xfe" and raw.read_packet()[1][:1] == b"\xfe"  # the parameter, EOF
    # MySQL announces the result columns at prepare time (libmysqlclient, Connector/J bind from them).
    assert announced == 4
    assert kinds([parse_definition(raw.read_packet()[1]) for _ in range(announced)]) == EXPECTED
    assert raw.read_packet()[1][:1] == b"\xfe"
    # One LONGLONG parameter, 7; no null bitmap bits; new-params-bound 1.
    execute = struct.pack("<BIBI", COM_STMT_EXECUTE, stmt_id, 0, 1) + b"\x00\x01" + struct.pack("<BBq", 8, 0, 7)
    columns, rows = result(raw, raw.command(execute))
    assert kinds(columns) == EXPECTED
    assert rows == [b"\x00\x00" + struct.pack("<q", 7) + b"\x06-12.50" + b"\x04" + "Zoë".encode()
                    + b"\x04" + struct.pack("<HBB", 2020, 2, 29)]


def test_prepare_announces_no_columns_for_other_statements(raw: RawClient) -> None:
    for sql in [b"INSERT INTO t (id) VALUES (?)", b"SELECT id FROM no_such_table WHERE id = ?"]:
        answer = raw.command(bytes([COM_STMT_PREPARE]) + sql)
        assert answer[:1] == b"\x00"
        assert struct.unpack("<IHH", answer[1:9])[1:] == (0, 1)
        assert raw.read_packet()[1][:1] != b"\xfe" and raw.read_packet()[1][:1] == b"\xfe"
    assert raw.command(bytes([COM_QUERY]) + b"SELECT 1")[:1] == b"\x01"  # the connection goes on


def test_deprecate_eof_results(db: str) -> None:
    client = RawClient()
    try:
        assert client.login(flags=CLIENT_FLAGS | DEPRECATE_EOF)[:1] == b"\x00"
        count = client.command(bytes([COM_QUERY]) + b"SELECT 1 AS one")
        assert PacketReader(count).uint_len("column count") == 1
        assert parse_definition(client.read_packet()[1])["name"] == b"one"
        assert text_values(client.read_packet()[1], 1) == [b"1"]
        assert client.read_packet()[1][:1] == b"\xfe"  # the OK that ends the rows
    finally:
        client.close()


def test_greeting_announces_two_byte_column_flags() -> None:
    """CLIENT_LONG_FLAG: without it Connector/J reads one byte of column flags and takes NUM_FLAG's
    high byte as the column's decimals (every number had scale 128)."""
    client = RawClient()
    try:
        greeting = client.greeting
        rest = greeting[greeting.index(b"\0", 1) + 1:]
        low = struct.unpack("<H", rest[13:15])[0]
        high = struct.unpack("<H", rest[18:20])[0]
        assert (low | high << 16) & 0x4
    finally:
        client.close()
