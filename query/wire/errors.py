"""The protocol layer's errors, with the SQLSTATE MySQL sends for each.

mysql-mimic 3.0.5 builds error packets from its own SQLSTATE table (`mysql_mimic.errors.SQLSTATES`)
and answers HY000 for every code it does not list; the connection-level codes below are 08S01 in
MySQL (clients treat 08xxx as "the connection is gone"), so they are added to that table.
"""

from __future__ import annotations

from mysql_mimic import errors as mimic_errors
from mysql_mimic.errors import MysqlError

from schemas.errors import ErrorCode

_SQLSTATES = {
    ErrorCode.HANDSHAKE_ERROR: b"08S01",
    ErrorCode.UNKNOWN_COM_ERROR: b"08S01",
    ErrorCode.NET_PACKET_TOO_LARGE: b"08S01",
    ErrorCode.NET_PACKETS_OUT_OF_ORDER: b"08S01",
    ErrorCode.NET_READ_INTERRUPTED: b"08S01",
    ErrorCode.WRONG_ARGUMENTS: b"HY000",
    ErrorCode.UNKNOWN_STMT_HANDLER: b"HY000",
    ErrorCode.MAX_PREPARED_STMT_COUNT_REACHED: b"42000",
    ErrorCode.MALFORMED_PACKET: b"HY000",
}
for _code, _state in _SQLSTATES.items():
    mimic_errors.SQLSTATES.setdefault(int(_code), _state)  # type: ignore[call-overload]


def wire_error(message: str, code: ErrorCode) -> MysqlError:
    return MysqlError(message, code)  # type: ignore[arg-type]  # mimic's enum lacks Strata's codes


class MalformedPacket(MysqlError):
    """A packet whose fields do not fit its length."""

    def __init__(self, message: str) -> None:
        super().__init__(f"Malformed packet: {message}", ErrorCode.MALFORMED_PACKET)  # type: ignore[arg-type]


class ConnectionFault(MysqlError):
    """The byte stream itself cannot be trusted (oversized packet, wrong sequence id, truncated
    header, handshake deadline): the server answers once with this error and closes the socket."""
