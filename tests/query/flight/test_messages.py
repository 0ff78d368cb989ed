"""The hand-encoded Flight SQL messages (query.flight.messages) against bytes protobuf itself
writes: an Any around a command, packed repeated varints, unknown fields skipped, and malformed
input refused with MessageError rather than misread."""

from __future__ import annotations

import pytest

from query.flight import messages as m


def test_a_command_round_trips_through_any() -> None:
    packed = m.pack(m.STATEMENT_QUERY, m.message((1, "SELECT 'é'"), (2, None)))
    command = m.unpack(packed)
    assert command.name == "CommandStatementQuery"
    assert command.text(1) == "SELECT 'é'" and command.bytes(2) is None


def test_known_protobuf_bytes_decode() -> None:
    # CommandGetTables{db_schema_filter_pattern: "d%", table_types: ["VIEW", "BASE TABLE"], include_schema: true}
    body = b"\x12\x02d%" + b"\x22\x04VIEW" + b"\x22\x0aBASE TABLE" + b"\x28\x01"
    url = b"type.googleapis.com/arrow.flight.protocol.sql.CommandGetTables"
    any_ = b"\x0a" + bytes([len(url)]) + url + b"\x12" + bytes([len(body)]) + body
    command = m.unpack(any_)
    assert command.name == "CommandGetTables"
    assert command.text(1) is None and command.text(2) == "d%"
    assert command.texts(4) == ["VIEW", "BASE TABLE"] and command.integer(5) == 1


def test_repeated_varints_packed_or_not() -> None:
    packed = m.decode(b"\x0a\x04\x00\x01\xac\x02")  # info: [0, 1, 300], packed
    assert m.Command("CommandGetSqlInfo", packed).integers(1) == [0, 1, 300]
    loose = m.decode(m.field(1, 0) + m.field(1, 300))
    assert m.Command("CommandGetSqlInfo", loose).integers(1) == [0, 300]


def test_an_optional_int32_keeps_its_sign() -> None:
    # protobuf writes int32 -5 as the ten-byte varint of its 64-bit two's complement.
    negative = m.Command("CommandGetXdbcTypeInfo", m.decode(b"\x08" + b"\xfb" + b"\xff" * 8 + b"\x01"))
    assert negative.int32(1) == -5
    assert m.Command("CommandGetXdbcTypeInfo", m.decode(m.field(1, 93))).int32(1) == 93
    assert m.Command("CommandGetXdbcTypeInfo", {}).int32(1) is None


def test_unknown_fields_are_skipped() -> None:
    body = m.message((1, "x")) + b"\x39" + b"\x00" * 8 + b"\x45" + b"\x00" * 4 + m.field(99, 7)
    assert m.Command("CommandStatementQuery", m.decode(body)).text(1) == "x"


def test_negative_int64_is_ten_bytes() -> None:
    encoded = m.message((1, -1))
    assert len(encoded) == 11 and m.decode(encoded)[1] == [2**64 - 1]


@pytest.mark.parametrize("data", [b"\x0a\x05abc", b"\x0a", b"\x0b", b"\x08\xff", b"\x00\x01"])
def test_malformed_bytes_are_refused(data: bytes) -> None:
    with pytest.raises(m.MessageError):
        m.unpack(data)


def test_another_protocol_s_message_is_refused() -> None:
    with pytest.raises(m.MessageError, match="not a Flight SQL command"):
        m.unpack(m.message((1, "type.googleapis.com/google.protobuf.Empty"), (2, b"")))
