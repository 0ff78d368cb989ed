"""A raw MySQL-protocol client for the protocol tests: frames packets by hand so a test can send
exactly the malformed bytes a hostile client would, and read what the server answers."""

from __future__ import annotations

import os
import socket
import struct
import time
import urllib.request

from tests.query.sqlkit import connect, rows

PROTOCOL_41 = 0x200
SECURE_CONNECTION = 0x8000
PLUGIN_AUTH = 0x80000
LENENC_AUTH = 0x200000
CONNECT_WITH_DB = 0x8
DEPRECATE_EOF = 0x1000000
CLIENT_FLAGS = PROTOCOL_41 | SECURE_CONNECTION | PLUGIN_AUTH | LENENC_AUTH


def sql_port() -> int:
    return int(os.environ["STRATA_SQL_PORT"])


def frame(payload: bytes, seq: int) -> bytes:
    return struct.pack("<I", len(payload) | (seq << 24)) + payload


class RawClient:
    def __init__(self, timeout: float = 5.0) -> None:
        self.sock = socket.create_connection(("127.0.0.1", sql_port()), timeout=timeout)
        self.greeting = self.read_packet()[1]

    def close(self) -> None:
        self.sock.close()

    def send(self, data: bytes) -> None:
        self.sock.sendall(data)

    def send_packet(self, payload: bytes, seq: int) -> None:
        self.send(frame(payload, seq))

    def _exactly(self, n: int) -> bytes:
        data = b""
        while len(data) < n:
            chunk = self.sock.recv(n - len(data))
            if not chunk:
                raise ConnectionError("closed by the server")
            data += chunk
        return data

    def read_packet(self) -> tuple[int, bytes]:
        header = self._exactly(4)
        word = struct.unpack("<I", header)[0]
        return word >> 24, self._exactly(word & 0xFFFFFF)

    def closed_by_server(self, within: float) -> bool:
        """True once the server closes the socket (EOF or reset) within `within` seconds; packets it
        sends before closing are skipped."""
        deadline = time.monotonic() + within
        while time.monotonic() < deadline:
            self.sock.settimeout(max(0.05, deadline - time.monotonic()))
            try:
                if not self.sock.recv(65536):
                    return True
            except TimeoutError:
                return False
            except OSError:
                return True
        return False

    def login(self, user: bytes = b"root", flags: int = CLIENT_FLAGS) -> bytes:
        """A handshake response with an empty password; returns the server's answer (OK or error)."""
        payload = (struct.pack("<IIB", flags, 1 << 24, 45) + b"\0" * 23 + user + b"\0" + b"\0"
                   + b"mysql_native_password\0")
        self.send_packet(payload, 1)
        return self.read_packet()[1]

    def command(self, payload: bytes) -> bytes:
        """One command (sequence 0); returns the first packet of the answer."""
        self.send_packet(payload, 0)
        return self.read_packet()[1]


def error_code(packet: bytes) -> int | None:
    """The MySQL error code of an ERR packet, None for anything else."""
    if packet[:1] != b"\xff":
        return None
    return int(struct.unpack("<H", packet[1:3])[0])


def health_ok() -> bool:
    port = int(os.environ["STRATA_HTTP_PORT"])
    with urllib.request.urlopen(f"http://127.0.0.1:{port}/health", timeout=3) as response:
        return bool(response.status in (200, 503))


def server_answers(within: float = 3.0) -> float:
    """Seconds a new pymysql client needs for SELECT 1; fails the test beyond `within`."""
    started = time.monotonic()
    conn = connect()
    try:
        assert rows(conn, "SELECT 1") == [(1,)]
    finally:
        conn.close()
    took = time.monotonic() - started
    assert took < within, f"SELECT 1 took {took:.2f} s"
    assert health_ok()
    return took
