"""Bounded reads of the fields of one MySQL packet.

mysql-mimic 3.0.5 reads packet fields from an `io.BytesIO` with no bounds: `read_str_null` loops
forever when the NUL is missing (one unauthenticated handshake hung the whole SQL server), and a
length-encoded string longer than what remains is silently cut short. Every read here is checked
against the bytes that remain and raises `MalformedPacket` (ER_MALFORMED_PACKET, 1835) instead.
"""

from __future__ import annotations

import struct

from query.wire.errors import MalformedPacket


class PacketReader:
    """A cursor over one packet's payload; every read is bounded by the payload's length."""

    def __init__(self, data: bytes) -> None:
        self._data = bytes(data)
        self._pos = 0

    @property
    def remaining(self) -> int:
        return len(self._data) - self._pos

    def at_end(self) -> bool:
        return self._pos >= len(self._data)

    def peek(self) -> int | None:
        """The next byte, not consumed; None at the end."""
        return None if self.at_end() else self._data[self._pos]

    def fixed(self, length: int, what: str = "field") -> bytes:
        if length < 0 or length > self.remaining:
            raise MalformedPacket(f"{what} needs {length} bytes, {self.remaining} remain")
        start, self._pos = self._pos, self._pos + length
        return self._data[start : self._pos]

    def rest(self) -> bytes:
        return self.fixed(self.remaining, "rest")

    def uint(self, size: int, what: str = "integer") -> int:
        return int.from_bytes(self.fixed(size, what), "little", signed=False)

    def sint(self, size: int, what: str = "integer") -> int:
        return int.from_bytes(self.fixed(size, what), "little", signed=True)

    def float4(self) -> float:
        return float(struct.unpack("<f", self.fixed(4, "FLOAT"))[0])

    def float8(self) -> float:
        return float(struct.unpack("<d", self.fixed(8, "DOUBLE"))[0])

    def uint_len(self, what: str = "length") -> int:
        """A length-encoded integer. 0xFB (NULL) and 0xFF (error) are not lengths."""
        first = self.uint(1, what)
        if first < 0xFB:
            return first
        if first == 0xFC:
            return self.uint(2, what)
        if first == 0xFD:
            return self.uint(3, what)
        if first == 0xFE:
            return self.uint(8, what)
        raise MalformedPacket(f"{what}: 0x{first:02X} is not a length-encoded integer")

    def str_len(self, what: str = "string") -> bytes:
        """A length-encoded string; its length is checked against what remains before any read."""
        length = self.uint_len(what)
        if length > self.remaining:
            raise MalformedPacket(f"{what} claims {length} bytes, {self.remaining} remain")
        return self.fixed(length, what)

    def str_null(self, what: str = "string") -> bytes:
        """A NUL-terminated string; a missing NUL is an error, never a wait for more bytes."""
        end = self._data.find(b"\x00", self._pos)
        if end < 0:
            raise MalformedPacket(f"{what} has no terminating NUL")
        value = self.fixed(end - self._pos, what)
        self._pos += 1
        return value
