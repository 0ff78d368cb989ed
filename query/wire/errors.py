"""The protocol layer's errors, with the SQLSTATE MySQL sends for each.

mysql-mimic 3.0.5 builds error packets from its own SQLSTATE table (`mysql_mimic.errors.SQLSTATES`)
and answers HY000 for every code it does not list; this is the one place Strata's codes join that
table (the connection-level ones are 08S01 in MySQL: clients treat 08xxx as "the connection is gone").
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
    # Logins, timeouts, KILL and naming rules (query.login_policy, query.timeouts, query.processlist,
    # query.identifiers).
    ErrorCode.DB_ACCESS_DENIED: b"42000", ErrorCode.BAD_DB_ERROR: b"42000",
    ErrorCode.TOO_MANY_USER_CONNECTIONS: b"42000", ErrorCode.ACCOUNT_LOCKED: b"HY000",
    ErrorCode.SPECIFIC_ACCESS_DENIED: b"42000", ErrorCode.NO_SUCH_THREAD: b"HY000", ErrorCode.KILL_DENIED: b"HY000",
    ErrorCode.QUERY_INTERRUPTED: b"70100", ErrorCode.QUERY_TIMEOUT: b"HY000", ErrorCode.WRONG_DB_NAME: b"42000",
    ErrorCode.WRONG_TABLE_NAME: b"42000", ErrorCode.WRONG_COLUMN_NAME: b"42000",
    ErrorCode.TABLE_NAME_LENGTH_LIMIT: b"42000", ErrorCode.WRONG_PARTITION_NAME: b"HY000",
    ErrorCode.WRONG_NAME_FORMAT: b"42000", ErrorCode.WRONG_VALUE_FOR_VAR: b"42000",
    # Statements (MySQL's server error reference): clients branch on the class, e.g. 42S02 "no such
    # table" (SQLAlchemy's has_table, dbt's relation cache) and 23000 "integrity constraint".
    ErrorCode.DB_CREATE_EXISTS: b"HY000", ErrorCode.DB_DROP_EXISTS: b"HY000", ErrorCode.NO_DB_ERROR: b"3D000",
    ErrorCode.TABLE_EXISTS_ERROR: b"42S01", ErrorCode.BAD_FIELD_ERROR: b"42S22", ErrorCode.DUP_FIELDNAME: b"42S21",
    ErrorCode.PARSE_ERROR: b"42000", ErrorCode.WRONG_VALUE_COUNT: b"21S01", ErrorCode.NO_SUCH_TABLE: b"42S02",
    ErrorCode.NOT_SUPPORTED_YET: b"42000", ErrorCode.TRUNCATED_WRONG_VALUE: b"22007",
    ErrorCode.UNKNOWN_PARTITION: b"HY000", ErrorCode.SAME_NAME_PARTITION: b"HY000",
    ErrorCode.NO_PARTITION_FOR_GIVEN_VALUE: b"HY000", ErrorCode.BAD_NULL_ERROR: b"23000",
    ErrorCode.DATA_OUT_OF_RANGE: b"22003", ErrorCode.WRONG_VALUE: b"HY000", ErrorCode.UNKNOWN_ERROR: b"HY000",
    ErrorCode.LOCK_WAIT_TIMEOUT: b"HY000", ErrorCode.CANNOT_USER: b"HY000", ErrorCode.ACCESS_DENIED: b"28000",
    ErrorCode.TABLE_ACCESS_DENIED: b"42000", ErrorCode.NON_UNIQ_ERROR: b"23000", ErrorCode.SP_DOES_NOT_EXIST: b"42000",
    ErrorCode.UNKNOWN_COLLATION: b"HY000",
}
for _code, _state in _SQLSTATES.items():
    mimic_errors.SQLSTATES.setdefault(int(_code), _state)  # type: ignore[call-overload]


class CodedRefusal(str):
    """A login refusal's message carrying the MySQL error code the client must see instead of 1045.
    A str, because mysql-mimic's `Forbidden` carries only text; `WireConnection.error` reads the code."""

    code: int

    def __new__(cls, code: int, message: str) -> CodedRefusal:
        refused = super().__new__(cls, message)
        refused.code = int(code)
        return refused


def wire_error(message: str, code: ErrorCode) -> MysqlError:
    return MysqlError(message, code)  # type: ignore[arg-type]  # mimic's enum lacks Strata's codes


class MalformedPacket(MysqlError):
    """A packet whose fields do not fit its length."""

    def __init__(self, message: str) -> None:
        super().__init__(f"Malformed packet: {message}", ErrorCode.MALFORMED_PACKET)  # type: ignore[arg-type]


class ConnectionFault(MysqlError):
    """The byte stream itself cannot be trusted (oversized packet, wrong sequence id, truncated
    header, handshake deadline): the server answers once with this error and closes the socket."""
