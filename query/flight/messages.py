"""The few Flight SQL protobuf messages Strata reads and writes, encoded by hand.

Flight SQL commands travel as `google.protobuf.Any` (a type URL and the message's bytes) in a
FlightDescriptor's `cmd`, a Ticket or an Action's body. Strata needs a dozen messages of scalar
fields only, so they are encoded here with the field numbers of Arrow's `format/FlightSql.proto`
instead of generating code for the whole protocol: a field this module does not know is skipped, as
protobuf does, and a message it does not know is refused by its type URL.
"""

from __future__ import annotations

from collections.abc import Iterator
from dataclasses import dataclass

_PREFIX = "type.googleapis.com/arrow.flight.protocol.sql."
_VARINT, _I64, _LEN, _I32 = 0, 1, 2, 5

# Type names (after `_PREFIX`) of the messages Strata understands.
STATEMENT_QUERY = "CommandStatementQuery"  # query: string = 1; transaction_id: bytes = 2
STATEMENT_UPDATE = "CommandStatementUpdate"  # query: string = 1; transaction_id: bytes = 2
TICKET_STATEMENT_QUERY = "TicketStatementQuery"  # statement_handle: bytes = 1
PREPARED_STATEMENT_QUERY = "CommandPreparedStatementQuery"  # prepared_statement_handle: bytes = 1
PREPARED_STATEMENT_UPDATE = "CommandPreparedStatementUpdate"  # prepared_statement_handle: bytes = 1
GET_SQL_INFO = "CommandGetSqlInfo"  # info: repeated uint32 = 1
GET_CATALOGS = "CommandGetCatalogs"
GET_DB_SCHEMAS = "CommandGetDbSchemas"  # catalog = 1; db_schema_filter_pattern = 2
# catalog = 1; db_schema_filter_pattern = 2; table_name_filter_pattern = 3; table_types = 4 (repeated);
# include_schema: bool = 5
GET_TABLES = "CommandGetTables"
GET_TABLE_TYPES = "CommandGetTableTypes"
GET_PRIMARY_KEYS = "CommandGetPrimaryKeys"  # catalog = 1; db_schema = 2; table = 3
GET_IMPORTED_KEYS = "CommandGetImportedKeys"  # catalog = 1; db_schema = 2; table = 3
GET_EXPORTED_KEYS = "CommandGetExportedKeys"  # catalog = 1; db_schema = 2; table = 3
GET_CROSS_REFERENCE = "CommandGetCrossReference"  # pk_catalog … fk_table = 1 … 6
GET_XDBC_TYPE_INFO = "CommandGetXdbcTypeInfo"  # optional data_type: int32 = 1
CREATE_PREPARED_STATEMENT_REQUEST = "ActionCreatePreparedStatementRequest"  # query = 1; transaction_id = 2
# prepared_statement_handle: bytes = 1; dataset_schema: bytes = 2; parameter_schema: bytes = 3
CREATE_PREPARED_STATEMENT_RESULT = "ActionCreatePreparedStatementResult"
CLOSE_PREPARED_STATEMENT_REQUEST = "ActionClosePreparedStatementRequest"  # prepared_statement_handle = 1
DO_PUT_UPDATE_RESULT = "DoPutUpdateResult"  # record_count: int64 = 1 (not wrapped in Any)


class MessageError(ValueError):
    """Bytes that are no protobuf message of the expected shape."""


@dataclass(frozen=True)
class Command:
    """A decoded Any: the Flight SQL message's name and its fields, by number (repeated fields keep
    every value, in order)."""

    name: str
    fields: dict[int, list[int | bytes]]

    def text(self, number: int) -> str | None:
        value = self.bytes(number)
        try:
            return None if value is None else value.decode("utf-8")
        except UnicodeDecodeError:
            raise MessageError(f"{self.name}: field {number} is not UTF-8") from None

    def bytes(self, number: int) -> bytes | None:
        values = self.fields.get(number)
        if not values:
            return None
        value = values[-1]  # protobuf: the last value of a scalar field wins
        if not isinstance(value, bytes):
            raise MessageError(f"{self.name}: field {number} is not length-delimited")
        return value

    def texts(self, number: int) -> list[str]:
        return [v.decode("utf-8", "replace") for v in self.fields.get(number, []) if isinstance(v, bytes)]

    def integer(self, number: int) -> int:
        values = self.fields.get(number)
        return int(values[-1]) if values and isinstance(values[-1], int) else 0

    def int32(self, number: int) -> int | None:
        """An `optional int32` field (None when absent): protobuf writes a negative one as a ten-byte
        varint of its 64-bit two's complement."""
        values = self.fields.get(number)
        if not values or not isinstance(values[-1], int):
            return None
        value = values[-1] & 0xFFFFFFFF
        return value - (1 << 32) if value & 0x80000000 else value

    def integers(self, number: int) -> list[int]:
        """A repeated varint field, packed (proto3's default) or not."""
        out: list[int] = []
        for value in self.fields.get(number, []):
            if isinstance(value, int):
                out.append(value)
            else:
                at = 0
                while at < len(value):
                    number_, at = _varint(value, at)
                    out.append(number_)
        return out


def _varint(data: bytes, at: int) -> tuple[int, int]:
    value = shift = 0
    while True:
        if at >= len(data) or shift > 63:
            raise MessageError("a truncated varint")
        byte = data[at]
        at += 1
        value |= (byte & 0x7F) << shift
        if not byte & 0x80:
            return value, at
        shift += 7


def _fields(data: bytes) -> Iterator[tuple[int, int | bytes]]:
    at = 0
    while at < len(data):
        key, at = _varint(data, at)
        number, wire = key >> 3, key & 7
        if number == 0:
            raise MessageError("field number 0")
        if wire == _VARINT:
            value, at = _varint(data, at)
            yield number, value
        elif wire == _LEN:
            size, at = _varint(data, at)
            if at + size > len(data):
                raise MessageError("a truncated field")
            yield number, data[at:at + size]
            at += size
        elif wire in (_I64, _I32):
            size = 8 if wire == _I64 else 4
            if at + size > len(data):
                raise MessageError("a truncated field")
            yield number, int.from_bytes(data[at:at + size], "little")
            at += size
        else:
            raise MessageError(f"wire type {wire} is not supported")


def decode(data: bytes) -> dict[int, list[int | bytes]]:
    fields: dict[int, list[int | bytes]] = {}
    for number, value in _fields(data):
        fields.setdefault(number, []).append(value)
    return fields


def unpack(data: bytes) -> Command:
    """A Flight SQL command from its Any bytes."""
    outer = decode(data)
    url, value = outer.get(1, [b""])[-1], outer.get(2, [b""])[-1]
    if not isinstance(url, bytes) or not isinstance(value, bytes):
        raise MessageError("not a google.protobuf.Any")
    type_url = url.decode("utf-8", "replace")
    if not type_url.startswith(_PREFIX):
        raise MessageError(f"'{type_url}' is not a Flight SQL command")
    return Command(type_url[len(_PREFIX):], decode(value))


def _encode_varint(value: int) -> bytes:
    value &= (1 << 64) - 1  # negative int64: two's complement in ten bytes, as protobuf writes it
    out = bytearray()
    while True:
        byte = value & 0x7F
        value >>= 7
        if value:
            out.append(byte | 0x80)
        else:
            out.append(byte)
            return bytes(out)


def field(number: int, value: int | bytes | str) -> bytes:
    """One field of a message: a varint for an int, length-delimited for bytes and text."""
    if isinstance(value, int):
        return _encode_varint(number << 3 | _VARINT) + _encode_varint(value)
    raw = value.encode("utf-8") if isinstance(value, str) else value
    return _encode_varint(number << 3 | _LEN) + _encode_varint(len(raw)) + raw


def message(*fields: tuple[int, int | bytes | str | None]) -> bytes:
    """A message of the given (number, value) fields; None values are left out."""
    return b"".join(field(number, value) for number, value in fields if value is not None)


def pack(name: str, body: bytes) -> bytes:
    """`body`, the bytes of Flight SQL message `name`, wrapped in an Any."""
    return message((1, _PREFIX + name), (2, body))
