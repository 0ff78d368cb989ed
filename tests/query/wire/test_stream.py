"""Packet framing (query.wire.stream): oversized, out-of-order and truncated frames. No stack needed."""

from __future__ import annotations

import asyncio
import struct

import pytest

from query.wire.errors import ConnectionFault
from query.wire.stream import ConnectionClosed, WireStream
from schemas.errors import ErrorCode

MB = 1 << 20


def frame(payload: bytes, seq: int, length: int | None = None) -> bytes:
    return struct.pack("<I", (len(payload) if length is None else length) | (seq << 24)) + payload


def read(data: bytes, max_packet_bytes: int = MB, eof: bool = True) -> bytes:
    async def go() -> bytes:
        reader = asyncio.StreamReader()
        reader.feed_data(data)
        if eof:
            reader.feed_eof()
        stream = WireStream(reader, None, max_packet_bytes=max_packet_bytes)  # type: ignore[arg-type]
        return await asyncio.wait_for(stream.read(), 5)

    return asyncio.run(go())


def test_one_packet() -> None:
    assert read(frame(b"\x03SELECT 1", 0)) == b"\x03SELECT 1"


def test_a_packet_over_the_limit_is_refused_before_its_payload_is_read() -> None:
    # The header claims 16 MB, nothing follows: the limit is checked on the header alone.
    with pytest.raises(ConnectionFault) as caught:
        read(struct.pack("<I", 0xFFFFFF), max_packet_bytes=MB, eof=False)
    assert caught.value.code == ErrorCode.NET_PACKET_TOO_LARGE


def test_continuations_count_towards_the_limit() -> None:
    first = frame(b"a" * 0xFFFFFF, 0)
    with pytest.raises(ConnectionFault) as caught:
        read(first + struct.pack("<I", 0xFFFFFF | (1 << 24)), max_packet_bytes=0xFFFFFF + 100, eof=False)
    assert caught.value.code == ErrorCode.NET_PACKET_TOO_LARGE
    # Within the limit, the frames make one packet.
    assert read(first + frame(b"bc", 1), max_packet_bytes=0xFFFFFF + 100) == b"a" * 0xFFFFFF + b"bc"


def test_out_of_order_sequence_ids() -> None:
    with pytest.raises(ConnectionFault) as caught:
        read(frame(b"\x0e", 3))
    assert caught.value.code == ErrorCode.NET_PACKETS_OUT_OF_ORDER


@pytest.mark.parametrize("data", [b"", b"\x05\x00", frame(b"abc", 0, length=10)])
def test_truncated_input_is_a_closed_connection(data: bytes) -> None:
    with pytest.raises(ConnectionClosed):
        read(data)
