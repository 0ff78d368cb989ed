"""The console's browser sign-in: session tokens kept in this server's memory, and CSRF tokens.

A session is a random 256-bit token (the cookie's value) mapped server-side to the user it signed in
and an expiry; nothing about the user is in the cookie, so ending a session (sign-out, expiry, a
server restart) is forgetting the token. Each session has its own random CSRF token, which every
state-changing form carries. The sign-in form itself is protected by a token bound to a pre-login
cookie: an HMAC of that cookie under a per-process key, so a page on another site can neither read
the token nor set the cookie (SameSite=Strict, HttpOnly) and cannot post a login of its choosing.
"""

from __future__ import annotations

import hashlib
import hmac
import secrets
import threading
import time
from dataclasses import dataclass

SESSION_COOKIE = "strata_console_session"
LOGIN_COOKIE = "strata_console_login"
TOKEN_BYTES = 32  # 256 bits
SESSION_TTL_S = 8 * 3600
LOGIN_TTL_S = 15 * 60
# Sessions kept at most; the oldest are dropped first (a flood of sign-ins cannot exhaust memory).
MAX_SESSIONS = 10_000


@dataclass(frozen=True)
class WebSession:
    user: str
    csrf: str
    expires_at: float  # time.monotonic() seconds


class SessionStore:
    def __init__(self, ttl_s: float = SESSION_TTL_S) -> None:
        self._ttl_s = ttl_s
        self._sessions: dict[str, WebSession] = {}
        self._lock = threading.Lock()
        self._login_key = secrets.token_bytes(TOKEN_BYTES)

    def start(self, user: str) -> tuple[str, WebSession]:
        """A new session for `user`: (the cookie's token, the session)."""
        token = secrets.token_urlsafe(TOKEN_BYTES)
        session = WebSession(user, secrets.token_urlsafe(TOKEN_BYTES), time.monotonic() + self._ttl_s)
        with self._lock:
            self._prune()
            self._sessions[token] = session
        return token, session

    def get(self, token: str | None) -> WebSession | None:
        if not token:
            return None
        with self._lock:
            session = self._sessions.get(token)
            if session is not None and session.expires_at <= time.monotonic():
                del self._sessions[token]
                return None
            return session

    def end(self, token: str | None) -> None:
        if token:
            with self._lock:
                self._sessions.pop(token, None)

    def end_user(self, user: str) -> None:
        """Ends every session of `user` (dropped, or its account locked)."""
        with self._lock:
            for token in [t for t, s in self._sessions.items() if s.user.lower() == user.lower()]:
                del self._sessions[token]

    def _prune(self) -> None:
        now = time.monotonic()
        for token in [t for t, s in self._sessions.items() if s.expires_at <= now]:
            del self._sessions[token]
        while len(self._sessions) >= MAX_SESSIONS:
            del self._sessions[next(iter(self._sessions))]

    # -- sign-in form CSRF ---------------------------------------------------------------------
    @staticmethod
    def new_login_cookie() -> str:
        return secrets.token_urlsafe(TOKEN_BYTES)

    def login_csrf(self, login_cookie: str) -> str:
        """The sign-in form's token for this pre-login cookie."""
        return hmac.new(self._login_key, login_cookie.encode(), hashlib.sha256).hexdigest()

    def login_csrf_ok(self, login_cookie: str | None, given: str | None) -> bool:
        if not login_cookie or not given:
            return False
        return hmac.compare_digest(self.login_csrf(login_cookie), given)


def csrf_ok(session: WebSession, given: str | None) -> bool:
    return bool(given) and hmac.compare_digest(session.csrf.encode(), (given or "").encode())
