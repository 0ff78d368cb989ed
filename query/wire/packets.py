"""Parsing the client's packets with bounded reads: a patched copy of the parsing half of
mysql-mimic 3.0.5's `mysql_mimic/packets.py` (handshake response, COM_CHANGE_USER, COM_QUERY,
COM_FIELD_LIST and the COM_STMT_* commands).

Upstream reads fields from an unbounded `io.BytesIO` (a missing NUL loops forever, a short packet
raises a bare `struct.error`, a length-encoded value may claim more than the packet holds); here
every read goes through `PacketReader`, so a malformed packet raises `MalformedPacket`. Building
the server's packets is left to upstream (`mysql_mimic.packets.make_*`), except the prepare OK.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any

from mysql_mimic.charset import CharacterSet, Collation
from mysql_mimic.packets import HandshakeResponse41, SSLRequest
from mysql_mimic.types import Capabilities, ColumnType, ComStmtExecuteFlags

from query.wire.errors import MalformedPacket, wire_error
from query.wire.params import Text, decimal_value, decode_value, param_type
from query.wire.reader import PacketReader
from schemas.errors import ErrorCode

_MAX_CONNECT_ATTRS = 256


def _charset(code: int) -> CharacterSet:
    try:
        return Collation(code).charset
    except ValueError:
        raise MalformedPacket(f"unknown character set {code}") from None


def decode_text(charset: CharacterSet, raw: bytes, what: str) -> str:
    try:
        return charset.decode(raw)
    except (UnicodeDecodeError, LookupError):
        raise MalformedPacket(f"{what} is not valid {charset.name}") from None


def parse_handshake_response(capabilities: Capabilities, data: bytes) -> HandshakeResponse41 | SSLRequest:
    r = PacketReader(data)
    client_capabilities = Capabilities(r.uint(4, "capability flags"))
    if Capabilities.CLIENT_PROTOCOL_41 not in client_capabilities:
        # The pre-4.1 handshake has another layout; every client of the last 20 years sends 4.1.
        raise wire_error("Bad handshake: the client does not speak protocol 4.1", ErrorCode.HANDSHAKE_ERROR)
    capabilities = capabilities & client_capabilities
    max_packet_size = r.uint(4, "max packet size")
    client_charset = _charset(r.uint(1, "character set"))
    r.fixed(23, "filler")
    if r.at_end():
        return SSLRequest(max_packet_size=max_packet_size, capabilities=capabilities, client_charset=client_charset)

    username = decode_text(client_charset, r.str_null("user name"), "user name")
    if Capabilities.CLIENT_PLUGIN_AUTH_LENENC_CLIENT_DATA in capabilities:
        auth_response = r.str_len("auth response")
    else:
        auth_response = r.fixed(r.uint(1, "auth response length"), "auth response")
    response = HandshakeResponse41(max_packet_size=max_packet_size, capabilities=capabilities,
                                   client_charset=client_charset, username=username, auth_response=auth_response)
    # The optional trailing fields: some clients announce a capability and stop before its field.
    if Capabilities.CLIENT_CONNECT_WITH_DB in capabilities and not r.at_end():
        response.database = decode_text(client_charset, r.str_null("database"), "database") or None
    if Capabilities.CLIENT_PLUGIN_AUTH in capabilities and not r.at_end():
        response.client_plugin = decode_text(client_charset, r.str_null("auth plugin name"), "auth plugin name")
    if Capabilities.CLIENT_CONNECT_ATTRS in capabilities and not r.at_end():
        response.connect_attrs = _connect_attrs(r, client_charset)
    if Capabilities.CLIENT_ZSTD_COMPRESSION_ALGORITHM in capabilities and not r.at_end():
        response.zstd_compression_level = r.uint(1, "zstd level")
    return response


def _connect_attrs(r: PacketReader, charset: CharacterSet) -> dict[str, str]:
    total = r.uint_len("connect attributes length")
    if total > r.remaining:
        raise MalformedPacket(f"connect attributes claim {total} bytes, {r.remaining} remain")
    attrs = PacketReader(r.fixed(total, "connect attributes"))
    found: dict[str, str] = {}
    while not attrs.at_end():
        if len(found) >= _MAX_CONNECT_ATTRS:
            raise MalformedPacket(f"more than {_MAX_CONNECT_ATTRS} connect attributes")
        key = decode_text(charset, attrs.str_len("attribute name"), "attribute name")
        found[key] = decode_text(charset, attrs.str_len("attribute value"), "attribute value")
    return found


@dataclass
class ChangeUser:
    username: str
    auth_response: bytes
    database: str
    client_charset: CharacterSet | None = None
    client_plugin: str | None = None
    connect_attrs: dict[str, str] = field(default_factory=dict)


def parse_com_change_user(capabilities: Capabilities, client_charset: CharacterSet, data: bytes) -> ChangeUser:
    r = PacketReader(data)
    username = decode_text(client_charset, r.str_null("user name"), "user name")
    if Capabilities.CLIENT_SECURE_CONNECTION in capabilities:
        auth_response = r.fixed(r.uint(1, "auth response length"), "auth response")
    else:
        auth_response = r.str_null("auth response")
    database = decode_text(client_charset, r.str_null("database"), "database")
    response = ChangeUser(username=username, auth_response=auth_response, database=database)
    if not r.at_end():
        if Capabilities.CLIENT_PROTOCOL_41 in capabilities:
            client_charset = _charset(r.uint(2, "character set"))
            response.client_charset = client_charset
        if Capabilities.CLIENT_PLUGIN_AUTH in capabilities and not r.at_end():
            response.client_plugin = decode_text(client_charset, r.str_null("auth plugin name"), "auth plugin name")
        if Capabilities.CLIENT_CONNECT_ATTRS in capabilities and not r.at_end():
            response.connect_attrs = _connect_attrs(r, client_charset)
    return response


@dataclass
class Param:
    kind: ColumnType
    unsigned: bool
    name: str


def read_params(capabilities: Capabilities, charset: CharacterSet, r: PacketReader, count: int,
                previous: list[Param] | None, long_data: dict[int, bytearray] | None) -> tuple[list[Param], list[Any]]:
    """Null bitmap, new-params-bound flag, types (+ names with query attributes) and values of
    `count` parameters. With the flag at 0 the types of the previous execution are reused, as
    libmysqlclient and Connector/J do when they re-execute with the same bindings."""
    if count > r.remaining * 8:
        raise MalformedPacket(f"{count} parameters announced, the packet cannot hold their null bitmap")
    bitmap = r.fixed((count + 7) // 8, "null bitmap")
    bound = r.uint(1, "new-params-bound flag")
    if bound:
        params = []
        for _ in range(count):
            kind = param_type(r.uint(1, "parameter type"))
            unsigned = bool(r.uint(1, "parameter flags") & 0x80)
            name = ""
            if Capabilities.CLIENT_QUERY_ATTRIBUTES in capabilities:
                name = decode_text(charset, r.str_len("parameter name"), "parameter name")
            params.append(Param(kind, unsigned, name))
    elif previous is not None and len(previous) == count:
        params = previous
    else:
        raise wire_error("Incorrect arguments to mysqld_stmt_execute: no parameter types were ever sent",
                         ErrorCode.WRONG_ARGUMENTS)
    values: list[Any] = []
    for i, param in enumerate(params):
        if bitmap[i // 8] & (1 << (i % 8)):
            values.append(None)
        elif long_data is not None and i in long_data:
            values.append(_long_value(param, bytes(long_data[i])))
        else:
            values.append(decode_value(r, param.kind, param.unsigned))
    return params, values


def _long_value(param: Param, raw: bytes) -> Any:
    """A value sent with COM_STMT_SEND_LONG_DATA: the raw bytes, read as the parameter's type."""
    if param.kind in (ColumnType.DECIMAL, ColumnType.NEWDECIMAL):
        return decimal_value(raw)
    return Text(raw)


@dataclass
class Query:
    sql: str
    attrs: dict[str, str]


def parse_com_query(capabilities: Capabilities, charset: CharacterSet, data: bytes) -> Query:
    r = PacketReader(data)
    attrs: dict[str, str] = {}
    if Capabilities.CLIENT_QUERY_ATTRIBUTES in capabilities:
        count = r.uint_len("attribute count")
        r.uint_len("parameter set count")  # always 1
        if count:
            params, values = read_params(capabilities, charset, r, count, None, None)
            attrs = {p.name: attr_text(v) for p, v in zip(params, values, strict=True) if p.name}
    return Query(sql=decode_text(charset, r.rest(), "statement"), attrs=attrs)


def attr_text(value: Any) -> str:
    if isinstance(value, bytes):
        return value.decode("utf-8", "replace")
    return "" if value is None else str(value)


@dataclass
class Execute:
    stmt_id: int
    use_cursor: bool
    parameter_count_available: bool
    reader: PacketReader


def parse_com_stmt_execute(data: bytes) -> Execute:
    """The fixed head of COM_STMT_EXECUTE; the parameters are read once the statement is known."""
    r = PacketReader(data)
    stmt_id = r.uint(4, "statement id")
    flags = ComStmtExecuteFlags(r.uint(1, "cursor flags") & 0x0F)
    r.uint(4, "iteration count")  # always 1
    cursor = flags & ~ComStmtExecuteFlags.PARAMETER_COUNT_AVAILABLE
    if cursor not in (ComStmtExecuteFlags.CURSOR_TYPE_NO_CURSOR, ComStmtExecuteFlags.CURSOR_TYPE_READ_ONLY):
        raise wire_error(f"Unsupported cursor flags: {int(flags)}", ErrorCode.NOT_SUPPORTED_YET)
    return Execute(stmt_id=stmt_id, use_cursor=cursor == ComStmtExecuteFlags.CURSOR_TYPE_READ_ONLY,
                   parameter_count_available=ComStmtExecuteFlags.PARAMETER_COUNT_AVAILABLE in flags, reader=r)


def parse_stmt_id(data: bytes) -> int:
    """COM_STMT_CLOSE and COM_STMT_RESET: a statement id."""
    return PacketReader(data).uint(4, "statement id")


def parse_com_stmt_fetch(data: bytes) -> tuple[int, int]:
    r = PacketReader(data)
    return r.uint(4, "statement id"), r.uint(4, "row count")


def parse_com_stmt_send_long_data(data: bytes) -> tuple[int, int, bytes]:
    r = PacketReader(data)
    return r.uint(4, "statement id"), r.uint(2, "parameter id"), r.rest()


def parse_com_init_db(charset: CharacterSet, data: bytes) -> str:
    return decode_text(charset, data, "database")


def parse_com_field_list(charset: CharacterSet, data: bytes) -> tuple[str, str]:
    r = PacketReader(data)
    table = decode_text(charset, r.str_null("table"), "table")
    return table, decode_text(charset, r.rest(), "wildcard")
