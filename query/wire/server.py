"""The MySQL listener: mysql-mimic 3.0.5's `MysqlServer` building Strata's hardened stream and
connection (query.wire.stream, query.wire.connection) for each socket instead of upstream's.

Also different from upstream: an exception that ends a connection (a client that vanished
mid-answer, a bug) is logged here with its connection id instead of escaping the callback, and the
socket is always closed.
"""

from __future__ import annotations

import asyncio
import inspect
import logging
from typing import Any

from mysql_mimic import MysqlServer, packets
from mysql_mimic.control import TooManyConnections
from mysql_mimic.errors import ErrorCode

from query.wire.connection import WireConnection, WireLimits
from query.wire.stream import WireStream

log = logging.getLogger("strata.sql.wire")


class WireServer(MysqlServer):
    def __init__(self, *args: Any, limits: WireLimits, **kwargs: Any) -> None:
        super().__init__(*args, **kwargs)
        self.limits = limits

    async def _client_connected_cb(self, reader: asyncio.StreamReader, writer: asyncio.StreamWriter) -> None:
        stream = WireStream(reader, writer, max_packet_bytes=self.limits.max_packet_bytes)
        connection_id: int | None = None
        try:
            session = self.session_factory()
            if inspect.isawaitable(session):
                session = await session
            connection = WireConnection(stream=stream, session=session, control=self.control,
                                        server_capabilities=self.capabilities,
                                        identity_provider=self.identity_provider, ssl=self.ssl, limits=self.limits)
            try:
                connection_id = await self.control.add(connection)
            except TooManyConnections:
                await stream.write(connection.error(msg="Too many connections", code=ErrorCode.CON_COUNT_ERROR))
                return
            connection.connection_id = connection_id
            await connection.start()
        except (ConnectionError, asyncio.IncompleteReadError):
            pass  # the client went away; nothing to answer
        except Exception:  # noqa: BLE001 - one connection's failure must not reach the event loop
            log.exception("connection %s failed", connection_id)
            try:
                await stream.write(packets.make_error(capabilities=self.capabilities))
            except (ConnectionError, RuntimeError):
                pass
        finally:
            writer.close()
            if connection_id is not None:
                await self.control.remove(connection_id)
