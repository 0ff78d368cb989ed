"""Who a Flight SQL call runs as: Doris' Arrow Flight login, a user name and password sent as HTTP
Basic in the `authorization` header (ADBC's flightsql driver and pyarrow's
`authenticate_basic_token` send it on a Handshake), answered with a bearer token that every later
call carries.

The password is checked by the SQL port's rules (query.console.routes.http_login: the same users,
root's configured password, the account lockout and the per-name throttle), so Flight is no
side door for guessing. A token is good while its user exists and is not locked, for
`TOKEN_IDLE_S` after its last use; the newest `MAX_TOKENS` are kept (Doris'
`arrow_flight_token_cache_size`). Each token owns its SQL session (`USE db` lasts across calls,
as on one MySQL connection), which is a connection in the session directory as Doris registers one
per token: it counts toward the user's `max_user_connections`, shows in SHOW PROCESSLIST with the
statement it runs, and KILL stops the statement or (KILL CONNECTION) ends the token. A token that is
evicted, expires, is killed or closed (CloseSession) ends its session, and the server's unread
results of it are closed.
"""

from __future__ import annotations

import asyncio
import base64
import binascii
import secrets
import threading
import time
from collections import OrderedDict
from collections.abc import Callable
from dataclasses import dataclass, field
from typing import Any

import pyarrow.flight as flight
from mysql_mimic import errors as mimic_errors
from mysql_mimic.variables import SessionVariables

from projections.users import ROOT, UserRecord
from query.auth import FailedLogins
from query.console.routes import http_login
from query.context import SessionState
from query.engine import Engine
from query.flight.parameters import PreparedStatement
from query.wire import errors as _wire_errors  # noqa: F401 - installs Doris' SQLSTATEs into mimic's table

TOKEN_IDLE_S = 3600.0
MAX_TOKENS = 512
_AUTHORIZATION = "authorization"


def mysql_text(code: int, message: str) -> str:
    """A refusal as Flight clients see it: the MySQL client's `ERROR code (SQLSTATE): message`."""
    state = mimic_errors.SQLSTATES.get(code, b"HY000")  # type: ignore[call-overload]
    return f"ERROR {code} ({state.decode() if isinstance(state, bytes) else state}): {message}"


@dataclass
class FlightLogin:
    """One bearer token's user, SQL session and prepared statements (by handle, gone with the token);
    `lock` runs its statements one at a time."""

    token: str
    user: str
    session: SessionState
    connection_id: int
    prepared: dict[bytes, PreparedStatement] = field(default_factory=dict)
    # Statements run so far: a prepared statement's first run is used only if none ran after it.
    statements_run: int = 0
    used: float = field(default_factory=time.monotonic)
    lock: threading.Lock = field(default_factory=threading.Lock)


class FlightLogins:
    def __init__(self, engine: Engine, loop: asyncio.AbstractEventLoop,
                 variables: Callable[[], SessionVariables], ended: Callable[[str], None]) -> None:
        """`ended(token)` is called for every token that ends (closed, killed, idle, pushed out), after its
        session closed: what the server keeps for the token goes with it."""
        self._engine = engine
        self._variables = variables
        self._ended = ended
        self._loop = loop  # http_login's throttle waits on the SQL server's event loop
        self._failures = FailedLogins()
        self._lock = threading.Lock()
        self._tokens: OrderedDict[str, FlightLogin] = OrderedDict()

    def basic(self, header: str) -> FlightLogin:
        """A new token for the `Basic …` credentials, or FlightUnauthenticatedError. Its session's
        host is filled in by the first call's handler (SessionDirectory.locate): a middleware does not see
        the peer."""
        encoded = header.strip()
        encoded += "=" * (-len(encoded) % 4)  # Go's Flight client sends base64 without its padding
        try:
            name, sep, password = base64.b64decode(encoded, validate=True).decode("utf-8").partition(":")
        except (binascii.Error, UnicodeDecodeError):
            raise flight.FlightUnauthenticatedError("malformed Basic authorization") from None
        if not sep:
            raise flight.FlightUnauthenticatedError("malformed Basic authorization")
        checked = http_login(self._engine, self._failures, name, password, via="Arrow Flight SQL")
        outcome = asyncio.run_coroutine_threadsafe(checked, self._loop).result()
        if isinstance(outcome, str):
            raise flight.FlightUnauthenticatedError(outcome)
        token = secrets.token_urlsafe(32)
        sessions = self._engine.ctx.sessions
        entry = sessions.open_new("", disconnect=lambda: self.forget(token))
        refusal = self._engine.login_policy.admit(outcome.name, None, entry.connection_id)
        if refusal is not None:
            sessions.close(entry.connection_id)
            raise flight.FlightUnauthenticatedError(mysql_text(refusal.code, str(refusal)))
        variables = self._variables()
        session = SessionState(user=outcome.name, system_variables=variables,
                               global_variables=variables.global_variables, connection_id=entry.connection_id)
        login = FlightLogin(token, outcome.name, session, entry.connection_id)
        with self._lock:
            self._tokens[login.token] = login
            evicted = [self._tokens.popitem(last=False)[1] for _ in range(len(self._tokens) - MAX_TOKENS)]
        self._end(evicted)
        return login

    def bearer(self, token: str) -> FlightLogin:
        self.expire()  # an idle token is gone before it is looked up
        with self._lock:
            login = self._tokens.get(token.strip())
            if login is not None:
                login.used = time.monotonic()
                self._tokens.move_to_end(login.token)
        if login is None:
            raise flight.FlightUnauthenticatedError("the bearer token is unknown or expired: log in again")
        if login.user.lower() != ROOT and (self.user(login) is None or
                                           self._engine.login_policy.locked(login.user) is not None):
            self.forget(login.token)
            raise flight.FlightUnauthenticatedError(f"Access denied for user '{login.user}'")
        return login

    def user(self, login: FlightLogin) -> UserRecord | None:
        """The login's user as it is now (None: root, or dropped)."""
        return self._engine.ctx.projection.users.get(login.user.lower())

    def forget(self, token: str) -> None:
        with self._lock:
            login = self._tokens.pop(token, None)
        self._end([login] if login is not None else [])

    def expire(self) -> None:
        """Drops the tokens idle longer than `TOKEN_IDLE_S`; their sessions end, so they stop counting.
        The tokens are kept least recently used first, so the idle ones are at the front."""
        cutoff = time.monotonic() - TOKEN_IDLE_S
        idle = []
        with self._lock:
            while self._tokens and next(iter(self._tokens.values())).used < cutoff:
                idle.append(self._tokens.popitem(last=False)[1])
        self._end(idle)

    def _end(self, logins: list[FlightLogin]) -> None:
        """The sessions of tokens just dropped (outside the token lock: the directory has its own)."""
        for login in logins:
            self._engine.ctx.sessions.close(login.connection_id)
            self._ended(login.token)


class _LoginMiddleware(flight.ServerMiddleware):
    def __init__(self, login: FlightLogin, fresh: bool) -> None:
        self.login = login
        self._fresh = fresh

    def sending_headers(self) -> dict[str, str]:
        # The bearer token goes back on the call that logged in (the Handshake); clients keep it.
        return {_AUTHORIZATION: f"Bearer {self.login.token}"} if self._fresh else {}


class LoginMiddlewareFactory(flight.ServerMiddlewareFactory):
    """Every call is authenticated before its handler runs: Basic makes a token, Bearer names one."""

    def __init__(self, logins: FlightLogins) -> None:
        self.logins = logins

    def start_call(self, info: Any, headers: dict[str, list[str]]) -> _LoginMiddleware:
        values = headers.get(_AUTHORIZATION) or headers.get(_AUTHORIZATION.title()) or []
        scheme, _, credential = (values[0] if values else "").partition(" ")
        if scheme.lower() == "basic" and credential:
            return _LoginMiddleware(self.logins.basic(credential), fresh=True)
        if scheme.lower() == "bearer" and credential:
            return _LoginMiddleware(self.logins.bearer(credential), fresh=False)
        raise flight.FlightUnauthenticatedError("log in with a SQL user: HTTP Basic authorization, then its "
                                                "bearer token")


class NoHandshake(flight.ServerAuthHandler):
    """The Handshake itself carries nothing: the login is in its headers (LoginMiddlewareFactory)."""

    def authenticate(self, outgoing: Any, incoming: Any) -> None:
        return None

    def is_valid(self, token: bytes) -> str:
        return ""
