"""Bounded packet reads (query.wire.reader): every malformed field is an error at once, never a
wait or a silent truncation. No stack needed."""

from __future__ import annotations

import time

import pytest

from query.wire.errors import MalformedPacket
from query.wire.reader import PacketReader


def test_a_missing_nul_is_an_error_not_a_loop() -> None:
    """mysql-mimic's read_str_null looped forever here (io.BytesIO.read(1) returns b"" at the end)."""
    started = time.monotonic()
    with pytest.raises(MalformedPacket, match="NUL"):
        PacketReader(b"x" * 1_000_000).str_null("user name")
    assert time.monotonic() - started < 1


def test_nul_terminated_strings() -> None:
    r = PacketReader(b"root\0\0db\0")
    assert (r.str_null(), r.str_null(), r.str_null()) == (b"root", b"", b"db")
    assert r.at_end()
    with pytest.raises(MalformedPacket):
        r.str_null()


@pytest.mark.parametrize("data", [b"\xfc\xff\xff" + b"a" * 10, b"\xfd\xff\xff\xff", b"\xfe" + b"\xff" * 8,
                                  b"\x05abc", b"\xfc\x01"])
def test_a_length_encoded_string_longer_than_the_packet(data: bytes) -> None:
    with pytest.raises(MalformedPacket):
        PacketReader(data).str_len()


@pytest.mark.parametrize("first", [0xFB, 0xFF])
def test_null_and_error_markers_are_not_lengths(first: int) -> None:
    with pytest.raises(MalformedPacket, match="not a length-encoded integer"):
        PacketReader(bytes([first, 0, 0])).uint_len()


def test_length_encoded_integers() -> None:
    r = PacketReader(b"\xfa" + b"\xfc\x34\x12" + b"\xfd\x56\x34\x12" + b"\xfe" + (2**40).to_bytes(8, "little"))
    assert [r.uint_len() for _ in range(4)] == [250, 0x1234, 0x123456, 2**40]


def test_fixed_reads_are_checked() -> None:
    r = PacketReader(b"\x01\x02\x03")
    assert r.uint(2) == 0x0201
    with pytest.raises(MalformedPacket):
        r.uint(4)
    with pytest.raises(MalformedPacket):
        r.fixed(-1)
    assert r.sint(1) == 3 and r.at_end() and r.peek() is None
