"""How a Flight login ends, without a stack: whichever way a token goes — closed (CloseSession, KILL
CONNECTION through the session directory), idle past TOKEN_IDLE_S — its session closes and the server
hears of it (`ended`), so the token's unread results go too."""

from __future__ import annotations

import time
from types import SimpleNamespace
from typing import Any, cast

from query.flight.logins import TOKEN_IDLE_S, FlightLogin, FlightLogins


def _logins() -> tuple[FlightLogins, list[int], list[str]]:
    closed: list[int] = []
    ended: list[str] = []
    engine = SimpleNamespace(ctx=SimpleNamespace(sessions=SimpleNamespace(close=closed.append)))
    logins = FlightLogins(cast(Any, engine), cast(Any, None), cast(Any, lambda: None), ended=ended.append)
    return logins, closed, ended


def _login(logins: FlightLogins, token: str, connection_id: int, used: float) -> None:
    logins._tokens[token] = FlightLogin(token, "u", cast(Any, None), connection_id, used=used)


def test_a_forgotten_token_closes_its_session_and_is_reported_once() -> None:
    logins, closed, ended = _logins()
    _login(logins, "a", 7, time.monotonic())
    logins.forget("a")
    logins.forget("a")  # a second close (CloseSession after KILL) finds nothing
    assert closed == [7] and ended == ["a"]


def test_idle_tokens_end_and_the_others_stay() -> None:
    logins, closed, ended = _logins()
    _login(logins, "idle", 1, time.monotonic() - TOKEN_IDLE_S - 1)
    _login(logins, "busy", 2, time.monotonic())
    logins.expire()
    assert closed == [1] and ended == ["idle"]
    assert list(logins._tokens) == ["busy"]
