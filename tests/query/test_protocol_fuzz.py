"""The MySQL protocol layer against hostile clients (query.wire): raw sockets send malformed
handshakes and commands; after each, the server must have answered or closed that socket within a
bound, and still serve a normal client (pymysql SELECT 1) and /health within a few seconds.

mysql-mimic 3.0.5 alone hung the whole server on a user name without a NUL, ran statements for a
client whose login had been refused, and kept silent pre-login sockets forever."""

from __future__ import annotations

import random
import struct
import time
from collections.abc import Iterator

import pytest

from schemas.config import settings
from tests.query.wire_kit import (
    CLIENT_FLAGS,
    CONNECT_WITH_DB,
    DEPRECATE_EOF,
    RawClient,
    error_code,
    frame,
    server_answers,
)

pytestmark = pytest.mark.usefixtures("server")

UTF8MB4 = 45
QUERY_ATTRIBUTES = 0x8000000
CONNECT_ATTRS = 0x100000


def head(flags: int = CLIENT_FLAGS, charset: int = UTF8MB4) -> bytes:
    """The fixed 32 bytes of a HandshakeResponse41."""
    return struct.pack("<IIB", flags, 1 << 24, charset) + b"\0" * 23


@pytest.fixture
def raw() -> Iterator[RawClient]:
    client = RawClient()
    yield client
    client.close()
    server_answers()


@pytest.fixture
def logged_in() -> Iterator[RawClient]:
    client = RawClient()
    assert client.login()[:1] == b"\x00", "root login failed"
    yield client
    client.close()
    server_answers()


def test_user_name_without_nul_fails_the_login_not_the_server(raw: RawClient) -> None:
    """The reported hang: the NUL that ends the user name never comes."""
    raw.send_packet(head() + b"root" * 8, 1)
    seq, answer = raw.read_packet()
    assert error_code(answer) == 1835 and b"NUL" in answer, answer
    assert raw.closed_by_server(within=2)
    assert server_answers(within=2) < 2


# Handshake responses that must each get an error or a close, never a hang.
BAD_HANDSHAKES: dict[str, bytes] = {
    "empty packet": frame(b"", 1),
    "truncated fixed part": frame(head()[:10], 1),
    "database without NUL": frame(head(CLIENT_FLAGS | CONNECT_WITH_DB) + b"root\0\0" + b"shop", 1),
    "auth plugin without NUL": frame(head() + b"root\0\0" + b"mysql_native_password", 1),
    "auth response longer than the packet": frame(head() + b"root\0" + b"\xfc\xff\xff" + b"x" * 10, 1),
    "auth response with a 2^64 length": frame(head() + b"root\0" + b"\xfe" + b"\xff" * 8, 1),
    "auth response length 0xFF": frame(head() + b"root\0" + b"\xff", 1),
    "connect attributes longer than the packet": frame(
        head(CLIENT_FLAGS | CONNECT_ATTRS) + b"root\0\0mysql_native_password\0" + b"\xfd\xff\xff\xff" + b"\x01a", 1),
    "connect attribute value longer than the attributes": frame(
        head(CLIENT_FLAGS | CONNECT_ATTRS) + b"root\0\0mysql_native_password\0" + b"\x04\x01a\xfc\xff", 1),
    "unknown character set": frame(head(charset=0) + b"root\0\0", 1),
    "pre-4.1 client": frame(struct.pack("<HI", 0x8000, 1 << 16) + b"root\0", 1),
    "wrong sequence id": frame(head() + b"root\0\0", 7),
    "header only, payload never sent": struct.pack("<I", 0xFFFF | (1 << 24)),
    "half a header": b"\x05\x00",
    "a 1 MB handshake": struct.pack("<I", (1 << 20) | (1 << 24)) + b"\0" * 1000,
    "user name not UTF-8": frame(head() + b"\xff\xfe\xfd\0\0", 1),
}


@pytest.mark.parametrize("name", sorted(BAD_HANDSHAKES))
def test_malformed_handshake_is_refused(raw: RawClient, name: str) -> None:
    raw.send(BAD_HANDSHAKES[name])
    if name in ("header only, payload never sent", "half a header"):
        # Nothing to parse yet: the server waits for the rest, but not beyond the login deadline.
        raw.sock.shutdown(1)  # the client gives up: the server sees EOF mid-packet
    assert raw.closed_by_server(within=3), name


def test_random_garbage_before_login(raw: RawClient) -> None:
    rng = random.Random(20261202)
    raw.close()
    for _ in range(40):
        client = RawClient()
        try:
            body = bytes(rng.randrange(256) for _ in range(rng.randrange(1, 120)))
            client.send(frame(body, rng.choice([0, 1, 1, 1, 2])) if rng.random() < 0.8 else body)
            client.sock.shutdown(1)
            assert client.closed_by_server(within=3)
        finally:
            client.close()


def test_a_refused_login_gets_no_statement_run(raw: RawClient) -> None:
    """mysql-mimic wrote the error and went on to the command phase, where the session counted as root."""
    answer = raw.login(b"nobody_at_all")
    assert error_code(answer) == 1045, answer
    try:
        raw.send_packet(b"\x03SELECT 42", 0)
    except OSError:
        return  # already closed
    assert raw.closed_by_server(within=2)


def test_a_silent_socket_is_closed_at_the_login_deadline(raw: RawClient) -> None:
    deadline = settings().sql_handshake_timeout_s
    started = time.monotonic()
    assert raw.closed_by_server(within=deadline + 5)
    took = time.monotonic() - started
    assert deadline - 1 <= took <= deadline + 5, took


def test_a_slow_login_is_closed_at_the_deadline_too(raw: RawClient) -> None:
    """Dribbling the handshake a byte at a time does not extend the deadline."""
    deadline = settings().sql_handshake_timeout_s
    packet = frame(head() + b"root\0\0", 1)
    started = time.monotonic()
    closed = False
    for byte in packet:
        try:
            raw.send(bytes([byte]))
        except OSError:
            closed = True
            break
        if raw.closed_by_server(within=deadline / 10):
            closed = True
            break
    assert closed or raw.closed_by_server(within=5)
    assert time.monotonic() - started <= deadline + 5


def stmt_execute(stmt_id: int, tail: bytes, flags: int = 0) -> bytes:
    return b"\x17" + struct.pack("<IBI", stmt_id, flags, 1) + tail


def prepare(client: RawClient, sql: bytes) -> tuple[int, int]:
    """COM_STMT_PREPARE; returns (statement id, parameter count) and reads the whole answer."""
    client.send_packet(b"\x16" + sql, 0)
    answer = client.read_packet()[1]
    assert answer[0] == 0, answer
    stmt_id, columns, params = struct.unpack("<IHH", answer[1:9])
    for _ in range(params + (1 if params else 0) + columns + (1 if columns else 0)):
        client.read_packet()
    return stmt_id, params


# Commands after a good login: (command bytes, expected error code; None: no answer at all).
BAD_COMMANDS: dict[str, tuple[bytes, int | None]] = {
    "command byte 0x00 (COM_SLEEP)": (b"\x00", 1047),
    "command byte 0x05": (b"\x05abc", 1047),
    "command byte 0x20": (b"\x20", 1047),
    "command byte 0xFF": (b"\xff\xff\xff", 1047),
    "COM_QUERY not UTF-8": (b"\x03SELECT '\xff\xfe'", 1835),
    "COM_INIT_DB not UTF-8": (b"\x02\xff\xfe", 1835),
    "COM_FIELD_LIST without NUL": (b"\x04orders", 1835),
    "COM_CHANGE_USER without NUL": (b"\x11root", 1835),
    "COM_CHANGE_USER truncated auth": (b"\x11root\0\x50ab", 1835),
    "COM_STMT_PREPARE not UTF-8": (b"\x16SELECT \xff", 1835),
    "COM_STMT_EXECUTE truncated": (b"\x17\x01\x00", 1835),
    "COM_STMT_EXECUTE unknown statement": (stmt_execute(4242, b""), 1243),
    "COM_STMT_EXECUTE statement id 0": (stmt_execute(0, b""), 1243),
    "COM_STMT_EXECUTE bad cursor flags": (stmt_execute(1, b"", flags=0x04), 1235),
    "COM_STMT_FETCH unknown statement": (b"\x1c" + struct.pack("<II", 99, 10), 1243),
    "COM_STMT_FETCH truncated": (b"\x1c\x01", 1835),
    "COM_STMT_RESET unknown statement": (b"\x1a" + struct.pack("<I", 77), 1243),
    "COM_STMT_RESET truncated": (b"\x1a\x01", 1835),
    "COM_STMT_CLOSE truncated": (b"\x19\x01", None),
    "COM_STMT_CLOSE unknown statement": (b"\x19" + struct.pack("<I", 5), None),
    "COM_STMT_SEND_LONG_DATA truncated": (b"\x18\x01", None),
    "COM_STMT_SEND_LONG_DATA unknown statement": (b"\x18" + struct.pack("<IH", 999, 0) + b"data", None),
}


@pytest.mark.parametrize("name", sorted(BAD_COMMANDS))
def test_malformed_command_gets_an_error_and_the_connection_lives(logged_in: RawClient, name: str) -> None:
    payload, code = BAD_COMMANDS[name]
    logged_in.send_packet(payload, 0)
    if code is not None:
        answer = logged_in.read_packet()[1]
        assert error_code(answer) == code, (name, answer)
    # The same connection still answers (COM_PING), so no stray packet was left behind.
    assert logged_in.command(b"\x0e")[:1] == b"\x00", name


def test_empty_command_packet(logged_in: RawClient) -> None:
    assert error_code(logged_in.command(b"")) == 1835
    assert logged_in.command(b"\x0e")[:1] == b"\x00"


# COM_STMT_EXECUTE bodies for `SELECT ?` (one parameter): null bitmap, bound flag, types, values.
BAD_EXECUTES: dict[str, tuple[bytes, int]] = {
    "no null bitmap": (b"", 1835),
    "no bound flag": (b"\x00", 1835),
    "types never sent": (b"\x00\x00", 1210),
    "type byte only": (b"\x00\x01\xfd", 1835),
    "unknown type 0x99": (b"\x00\x01\x99\x00", 1835),
    "string longer than the packet": (b"\x00\x01\xfd\x00\xfc\xff\x7f" + b"a" * 20, 1835),
    "string with a 2^64 length": (b"\x00\x01\xfd\x00\xfe" + b"\xff" * 8, 1835),
    "string with length prefix 0xFB": (b"\x00\x01\xfd\x00\xfb", 1835),
    "integer cut short": (b"\x00\x01\x08\x00\x01\x02", 1835),
    "DATE of length 5": (b"\x00\x01\x0a\x00\x05\xe8\x07\x01\x02\x03", 1835),
    "DATE of 2026-13-40": (b"\x00\x01\x0a\x00\x04\xea\x07\x0d\x28", 1292),
    "TIME of length 3": (b"\x00\x01\x0b\x00\x03\x00\x00\x00", 1835),
    "DECIMAL that is no number": (b"\x00\x01\xf6\x00\x07" + b"1e99999", 1210),
    "DECIMAL text": (b"\x00\x01\xf6\x00\x08" + b"1 OR 1=1", 1210),
    "YEAR cut short": (b"\x00\x01\x0d\x00\x07", 1835),
}


@pytest.mark.parametrize("name", sorted(BAD_EXECUTES))
def test_malformed_execute_parameters(logged_in: RawClient, name: str) -> None:
    stmt_id, params = prepare(logged_in, b"SELECT ?")
    assert params == 1 and stmt_id >= 1
    body, code = BAD_EXECUTES[name]
    answer = logged_in.command(stmt_execute(stmt_id, body))
    assert error_code(answer) == code, (name, answer)
    assert logged_in.command(b"\x0e")[:1] == b"\x00", name


def test_long_data_errors_surface_at_execute(logged_in: RawClient) -> None:
    stmt_id, _ = prepare(logged_in, b"SELECT ?")
    # Parameter 3 does not exist: no answer now (MySQL never answers SEND_LONG_DATA), an error at EXECUTE.
    logged_in.send_packet(b"\x18" + struct.pack("<IH", stmt_id, 3) + b"xyz", 0)
    answer = logged_in.command(stmt_execute(stmt_id, b"\x00\x01\xfe\x00"))
    assert error_code(answer) == 1210 and b"parameter 3" in answer, answer
    # Long data for parameter 0 is its value.
    logged_in.send_packet(b"\x18" + struct.pack("<IH", stmt_id, 0) + b"it's", 0)
    logged_in.send_packet(b"\x18" + struct.pack("<IH", stmt_id, 0) + b" long", 0)
    logged_in.send_packet(stmt_execute(stmt_id, b"\x00\x01\xfe\x00"), 0)
    assert logged_in.read_packet()[1] == b"\x01"  # one column
    packets = [logged_in.read_packet()[1] for _ in range(4)]  # column, EOF, row, EOF
    assert packets[2] == b"\x00\x00" + bytes([len(b"it's long")]) + b"it's long", packets


def test_statement_ids_start_at_one_and_close_frees_them(logged_in: RawClient) -> None:
    first, _ = prepare(logged_in, b"SELECT 1")
    second, _ = prepare(logged_in, b"SELECT ?, ?")
    assert (first, second) == (1, 2)
    logged_in.send_packet(b"\x19" + struct.pack("<I", first), 0)
    answer = logged_in.command(stmt_execute(first, b""))
    assert error_code(answer) == 1243, answer


def test_query_attributes_with_bad_counts() -> None:
    client = RawClient()
    try:
        assert client.login(flags=CLIENT_FLAGS | QUERY_ATTRIBUTES)[:1] == b"\x00"
        # 2^64-1 attributes announced: the null bitmap alone could not fit.
        answer = client.command(b"\x03\xfe" + b"\xff" * 8 + b"\x01SELECT 1")
        assert error_code(answer) == 1835, answer
        # A plain query with zero attributes still works on the same connection.
        assert client.command(b"\x03\x00\x01SELECT 1") == b"\x01"
    finally:
        client.close()
    server_answers()


def test_many_hostile_connections_at_once_do_not_starve_others() -> None:
    """Sixty sockets sit in the handshake (and one per kind of garbage): a normal client still gets in."""
    idle = [RawClient() for _ in range(60)]
    try:
        for client, junk in zip(idle[:len(BAD_HANDSHAKES)], BAD_HANDSHAKES.values(), strict=False):
            client.send(junk)
        assert server_answers(within=3) < 3
    finally:
        for client in idle:
            client.close()



def test_prepare_answer_has_no_eof_after_the_parameters_with_deprecate_eof() -> None:
    """libmysqlclient (CLIENT_DEPRECATE_EOF) read mysql-mimic's extra EOF as the next answer and
    lost the connection ("2013")."""
    client = RawClient()
    try:
        assert client.login(flags=CLIENT_FLAGS | DEPRECATE_EOF)[:1] == b"\x00"
        client.send_packet(b"\x16SELECT ?, ?", 0)
        ok = client.read_packet()[1]
        stmt_id, columns, params = struct.unpack("<IHH", ok[1:9])
        assert (stmt_id, params) == (1, 2)
        for _ in range(params + columns):
            assert client.read_packet()[1][:4] == b"\x03def"  # column definitions only
        # The next packet is the answer to the next command: a PING's OK, not a stray EOF.
        assert client.command(b"\x0e")[:1] == b"\x00"
    finally:
        client.close()


def test_execute_with_a_cursor_then_fetch(logged_in: RawClient) -> None:
    stmt_id, _ = prepare(logged_in, b"SELECT ?")
    # CURSOR_TYPE_READ_ONLY; one STRING parameter "x".
    assert logged_in.command(stmt_execute(stmt_id, b"\x00\x01\xfe\x00\x01x", flags=0x01)) == b"\x01"
    logged_in.read_packet()  # column definition
    eof = logged_in.read_packet()[1]
    assert eof[0] == 0xFE and struct.unpack("<H", eof[3:5])[0] & 0x40  # SERVER_STATUS_CURSOR_EXISTS
    logged_in.send_packet(b"\x1c" + struct.pack("<II", stmt_id, 10), 0)
    assert logged_in.read_packet()[1] == b"\x00\x00\x01x"  # the row
    last = logged_in.read_packet()[1]
    assert last[0] == 0xFE and struct.unpack("<H", last[3:5])[0] & 0x80  # SERVER_STATUS_LAST_ROW_SENT
    assert logged_in.command(b"\x0e")[:1] == b"\x00"


def test_a_refused_change_user_closes_the_connection(logged_in: RawClient) -> None:
    answer = logged_in.command(b"\x11nobody_at_all\0\x14" + b"x" * 20 + b"\0")
    assert error_code(answer) == 1045, answer
    assert logged_in.closed_by_server(within=2)
