"""The MySQL connections of the SQL server, as mysql-mimic's `Control` sees them: each one is
entered in the session directory (query.sessions) with its client address and a way to close it
(KILL CONNECTION), and the login checks of query.login_policy reach the handshake through here —
before mysql-mimic writes the OK, so a refused login never becomes a session.

mysql-mimic answers every `Forbidden` login with error 1045; a refusal that is a `CodedRefusal`
(unknown or forbidden database, locked account, too many connections) carries its own code, which
`query.wire.connection.WireConnection.error` sends instead.
"""

from __future__ import annotations

import asyncio

from mysql_mimic import context as mimic_context
from mysql_mimic.connection import Connection
from mysql_mimic.control import LocalControl, TooManyConnections

from query.login_policy import LoginPolicy
from query.sessions import SessionDirectory


def _peer(connection: Connection) -> str:
    peer = connection.stream.writer.get_extra_info("peername")
    if isinstance(peer, tuple) and len(peer) >= 2:
        return f"{peer[0]}:{peer[1]}"
    return str(peer or "")


class StrataControl(LocalControl):
    """Connection ids, the session directory's entries, and the login gate (query.auth.LoginGate)."""

    def __init__(self, sessions: SessionDirectory, policy: LoginPolicy, max_connections: int) -> None:
        super().__init__()
        self.sessions = sessions
        self.policy = policy
        self.max_connections = max_connections

    async def add(self, connection: Connection) -> int:
        if len(self._connections) >= self.max_connections:
            # The server answers it with MySQL's 1040 "Too many connections" and closes the socket.
            raise TooManyConnections()
        connection_id = await super().add(connection)
        loop = asyncio.get_running_loop()
        # KILL runs in an executor thread; the connection's task belongs to the event loop.

        def disconnect() -> None:
            loop.call_soon_threadsafe(connection.kill)

        self.sessions.open(connection_id, _peer(connection), disconnect=disconnect)
        return connection_id

    def _new_connection_id(self) -> int:
        # Flight SQL sessions take ids from the same directory (query.sessions.open_new).
        connection_id = super()._new_connection_id()
        while self.sessions.taken(connection_id):
            connection_id = super()._new_connection_id()
        return connection_id

    async def remove(self, connection_id: int) -> None:
        await super().remove(connection_id)
        self.sessions.close(connection_id)

    # -- query.auth.LoginGate ---------------------------------------------------------------------
    def locked(self, name: str) -> str | None:
        return self.policy.locked(name)

    def failed(self, name: str) -> bool:
        return self.policy.failed(name)

    def succeeded(self, name: str) -> None:
        self.policy.succeeded(name)

    def admit(self, name: str) -> str | None:
        """Runs inside the connection's task, whose context names the connection being authenticated."""
        connection_id = mimic_context.connection_id.get(0)
        connection = self._connections.get(connection_id)
        database = connection.session.database if connection is not None else None
        return self.policy.admit(name, database, connection_id)
