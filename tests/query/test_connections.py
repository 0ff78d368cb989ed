"""query.connections in a real MySQL server (query.wire's, in-process on an ephemeral port) reached
by a real client (pymysql), without the stack: a refused login gets its own error code and SQLSTATE
before any OK (unknown database, forbidden database, locked account, too many connections of the
user), and the server holds at most `qe_max_connection` connections."""

from __future__ import annotations

import asyncio
import threading
import time
from collections.abc import Iterator
from pathlib import Path

import pymysql
import pytest
from mysql_mimic import Session
from mysql_mimic.auth import NativePasswordAuthPlugin
from pymysql.connections import Connection as Conn

from projections.users import UserRecord
from query.auth import StrataIdentityProvider
from query.connections import StrataControl
from query.login_policy import LoginPolicy
from query.sessions import SessionDirectory
from query.wire import WireLimits, WireServer
from storage.secrets import SecretBox

MAX_CONNECTIONS = 3


@pytest.fixture
def server(tmp_path: Path) -> Iterator[tuple[int, SessionDirectory]]:
    box = SecretBox(tmp_path / "key")
    users = {"jack": UserRecord(name="jack", auth_string=box.seal(NativePasswordAuthPlugin.create_auth_string("pw")),
                                grants={"sales.*": ["SELECT_PRIV"]}, max_user_connections=1,
                                failed_login_attempts=2, password_lock_time_s=60)}
    sessions = SessionDirectory()
    policy = LoginPolicy(lambda name: users.get(name.lower()), lambda db: db in ("sales", "other"), sessions)
    control = StrataControl(sessions, policy, MAX_CONNECTIONS)
    identities = StrataIdentityProvider(lambda name: users[name].auth_string if name in users else None, "", box,
                                        gate=control)
    wire = WireServer(session_factory=Session, identity_provider=identities, control=control,
                      limits=WireLimits(1 << 20, 10.0, 100))
    loop = asyncio.new_event_loop()
    started = threading.Event()

    async def serve() -> None:
        await wire.start_server(host="127.0.0.1", port=0)
        started.set()

    thread = threading.Thread(target=lambda: (loop.run_until_complete(serve()), loop.run_forever()), daemon=True)
    thread.start()
    assert started.wait(10)
    port = wire.sockets()[0].getsockname()[1]
    yield port, sessions

    async def shut_down() -> None:
        # The connections a test left open end here, while the loop runs: a handler left pending in a
        # stopped loop is finalised later by the garbage collector, and closes its socket on a closed loop.
        wire.close()
        handlers = [t for t in asyncio.all_tasks() if t is not asyncio.current_task()]
        for handler in handlers:
            handler.cancel()
        await asyncio.gather(*handlers, return_exceptions=True)

    asyncio.run_coroutine_threadsafe(shut_down(), loop).result(10)
    loop.call_soon_threadsafe(loop.stop)
    thread.join(10)
    loop.close()


def _login(port: int, user: str, password: str = "", database: str | None = None) -> Conn:
    return pymysql.connect(host="127.0.0.1", port=port, user=user, password=password, database=database,
                           connect_timeout=10)


def _refused(port: int, user: str, password: str = "", database: str | None = None) -> tuple[int, str | None]:
    with pytest.raises(pymysql.MySQLError) as refused:
        _login(port, user, password, database).close()
    return int(refused.value.args[0]), getattr(refused.value, "sqlstate", None)


def test_a_refused_login_gets_its_own_code_before_any_ok(server: tuple[int, SessionDirectory]) -> None:
    port, sessions = server
    assert _refused(port, "root", database="nope") == (1049, "42000")
    assert _refused(port, "jack", "pw", "other") == (1044, "42000")
    first = _login(port, "jack", "pw", "sales")
    assert sessions.count("jack") == 1
    assert [s.user for s in sessions.all()] == ["jack"] and sessions.all()[0].host.startswith("127.0.0.1:")
    assert _refused(port, "jack", "pw", "sales") == (1203, "42000")
    first.close()
    assert _refused(port, "jack", "wrong") == (1045, "28000")
    assert _refused(port, "jack", "wrong") == (1045, "28000")
    assert _refused(port, "jack", "pw") == (3955, "HY000")


def test_at_most_qe_max_connection_connections(server: tuple[int, SessionDirectory]) -> None:
    port, sessions = server
    held = [_login(port, "root") for _ in range(MAX_CONNECTIONS)]
    assert len(sessions.all()) == MAX_CONNECTIONS
    assert _refused(port, "root")[0] == 1040
    held.pop().close()
    for _ in range(50):  # the server notices the closed socket a moment later
        if len(sessions.all()) < MAX_CONNECTIONS:
            break
        time.sleep(0.1)
    _login(port, "root").close()
    for conn in held:
        conn.close()
