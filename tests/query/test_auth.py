"""The login scramble (query.auth): what every client, Connector/J included, can take."""

from __future__ import annotations

import asyncio
import string

from query.auth import FailedLogins, ThrottledPassword

PRINTABLE = set((string.ascii_letters + string.digits).encode())


async def _greeting_scramble(plugin: ThrottledPassword) -> bytes:
    flow = plugin.auth()
    first = await flow.__anext__()
    await flow.aclose()
    assert isinstance(first, bytes)
    return first


def test_the_scramble_is_printable_and_ends_with_its_one_terminator() -> None:
    # Connector/J decodes the scramble as text (bytes over 0x7F broke every password login), and a
    # scramble with a NUL inside lost bytes to the terminator strip (one login in 256 failed).
    plugin = ThrottledPassword(FailedLogins())
    for _ in range(300):
        sent = asyncio.run(_greeting_scramble(plugin))
        assert sent.endswith(b"\x00") and len(sent) == 21
        assert set(sent[:-1]) <= PRINTABLE, sent
