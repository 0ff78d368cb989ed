"""MySQL packet framing with bounds: a patched copy of mysql-mimic 3.0.5's `mysql_mimic/stream.py`.

Copied (not subclassed: mysql-mimic ships `MysqlStream` compiled with mypyc, and interpreted
classes cannot inherit from it) and changed where upstream trusts the client:
- a header is read with `readexactly(4)` (upstream's `read(4)` may return a short header and then
  fails with a bare `struct.error`);
- a logical packet (a 16 MB frame plus its continuations) may not exceed `max_packet_bytes`;
  upstream concatenates continuations without limit, so one client could exhaust the memory;
- continuation frames are gathered in a list, not by `bytes +=` (quadratic for big statements).
Writing is upstream's code, except that text rows are encoded by their columns' own encoders
(query.wire.columns) instead of mysql-mimic's `str(value)`.
"""

from __future__ import annotations

import asyncio
import struct
from collections.abc import Sequence
from ssl import SSLContext
from typing import Any

from mysql_mimic.stream import ConnectionClosed
from mysql_mimic.types import uint_len
from mysql_mimic.utils import seq

from query.wire.columns import WireColumn
from query.wire.errors import ConnectionFault
from schemas.errors import ErrorCode

_header_struct = struct.Struct("<I")
_pack_header = _header_struct.pack_into
_MAX_FRAME = 0xFFFFFF

__all__ = ["ConnectionClosed", "WireStream"]


class WireStream:
    """Reads and writes MySQL packets on one socket (the interface of mysql-mimic's MysqlStream)."""

    def __init__(self, reader: asyncio.StreamReader, writer: asyncio.StreamWriter, max_packet_bytes: int,
                 buffer_size: int = 2**15) -> None:
        self.reader = reader
        self.writer = writer
        self.max_packet_bytes = max_packet_bytes
        self.seq = seq(256)
        self._buffer = bytearray()
        self._buffer_size = buffer_size
        self._header = bytearray(4)

    async def read(self) -> bytes:
        """One logical packet. Raises ConnectionClosed at EOF (also mid-packet: the client is gone)
        and ConnectionFault when the framing cannot be trusted."""
        frames: list[bytes] = []
        total = 0
        while True:
            try:
                header = await self.reader.readexactly(4)
            except asyncio.IncompleteReadError:
                raise ConnectionClosed() from None
            word = _header_struct.unpack(header)[0]
            length = word & _MAX_FRAME
            sequence_id = word >> 24
            expected = next(self.seq)
            if sequence_id != expected:
                raise ConnectionFault(f"Got packets out of order (expected sequence {expected}, got {sequence_id})",
                                      ErrorCode.NET_PACKETS_OUT_OF_ORDER)  # type: ignore[arg-type]
            total += length
            if total > self.max_packet_bytes:
                raise ConnectionFault(f"Got a packet bigger than 'max_allowed_packet' bytes ({self.max_packet_bytes})",
                                      ErrorCode.NET_PACKET_TOO_LARGE)  # type: ignore[arg-type]
            if length:
                try:
                    frames.append(await self.reader.readexactly(length))
                except asyncio.IncompleteReadError:
                    raise ConnectionClosed() from None
            if length < _MAX_FRAME:
                return frames[0] if len(frames) == 1 else b"".join(frames)

    async def write(self, data: bytes, drain: bool = True) -> None:
        if len(data) < _MAX_FRAME:
            _pack_header(self._header, 0, len(data) | (next(self.seq) << 24))
            self._buffer.extend(self._header)
            self._buffer.extend(data)
            if drain or len(self._buffer) >= self._buffer_size:
                await self.drain()
            return

        while True:
            payload = data[:_MAX_FRAME]
            data = data[_MAX_FRAME:]
            _pack_header(self._header, 0, len(payload) | (next(self.seq) << 24))
            self._buffer.extend(self._header)
            self._buffer.extend(payload)
            if drain or len(self._buffer) >= self._buffer_size:
                await self.drain()
            if len(payload) != _MAX_FRAME:
                return

    def write_many(self, packets: Sequence[bytes]) -> None:
        """Frame and buffer multiple packets without awaiting."""
        for data in packets:
            _pack_header(self._header, 0, len(data) | (next(self.seq) << 24))
            self._buffer.extend(self._header)
            self._buffer.extend(data)

    def write_text_rows(self, rows: Sequence[Sequence[Any]], columns: Sequence[WireColumn]) -> int:
        """Serialize and frame text result rows directly into the buffer; returns the rows written."""
        buf = self._buffer
        num_cols = len(columns)
        count = 0
        seq_val = self.seq.value
        seq_size = self.seq.size or 0
        encoders = [column.text for column in columns]
        for row in rows:
            header_pos = len(buf)
            buf.extend(b"\x00\x00\x00\x00")
            for i in range(num_cols):
                value = row[i]
                if value is None:
                    buf.append(0xFB)
                    continue
                encoded = encoders[i](value)
                n = len(encoded)
                if n < 251:
                    buf.append(n)
                else:
                    buf.extend(uint_len(n))
                buf.extend(encoded)
            payload_len = len(buf) - header_pos - 4
            _pack_header(buf, header_pos, payload_len | (seq_val << 24))
            seq_val += 1
            if seq_size:
                seq_val = seq_val % seq_size
            count += 1
        self.seq.value = seq_val
        return count

    async def write_framed(self, data: bytes, next_seq: int) -> None:
        """Packets framed elsewhere (query.wire.text_batches), which continue this stream's sequence
        ids up to `next_seq`; handed to the socket as one piece, after what is buffered."""
        if self._buffer:
            self.writer.write(self._buffer)
            self._buffer = bytearray()
        self.writer.write(data)
        self.seq.value = next_seq
        await self.writer.drain()

    async def drain(self) -> None:
        if self._buffer:
            self.writer.write(self._buffer)
            self._buffer = bytearray()
        await self.writer.drain()

    def reset_seq(self) -> None:
        self.seq.reset()

    async def start_tls(self, ssl: SSLContext) -> None:
        transport = self.writer.transport
        protocol = transport.get_protocol()
        loop = asyncio.get_event_loop()
        new_transport = await loop.start_tls(transport=transport, protocol=protocol, sslcontext=ssl, server_side=True)
        self.writer._transport = new_transport  # type: ignore[attr-defined]  # upstream's way of wrapping the socket
        self.reader._transport = new_transport  # type: ignore[attr-defined]
