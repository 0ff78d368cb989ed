"""Logging in on the SQL port: mysql_native_password or caching_sha2_password against the users of
the log (and root's password from the configuration). A failed login is logged with the user name only, never the
password, and each further failure of one user name waits longer before it is answered, so a
password cannot be guessed at network speed. Guesses at one user name are also checked one at a
time, however many connections make them (`FailedLogins.wait_turn`), so parallel connections do not
multiply the rate. An unknown user fails exactly like a wrong password, so user names cannot be
probed either. Around the password, a `LoginGate` (query.login_policy through query.connections)
refuses a locked account, a database the user may not use and one connection too many.

caching_sha2_password (the default of MySQL 8 and the only password plugin of MySQL 9 clients)
is answered with its full authentication: the client asks for the server's RSA public key and
sends the password encrypted with it (RSA-OAEP, XORed with the nonce), and it is checked against
the same stored hash. Its fast path is not offered: it needs the server to write an extra packet
without reading one, which mysql-mimic's authentication loop cannot do — and it would need a
SHA-256 hash stored besides the native one. The RSA key pair lives in memory, one per server
start; the mysql CLI needs `--get-server-public-key` for it (pymysql asks by itself).
"""

from __future__ import annotations

import asyncio
import hmac
import logging
import secrets
import time
from collections.abc import Callable
from typing import Optional, Protocol

from cryptography.hazmat.primitives import hashes, serialization
from cryptography.hazmat.primitives.asymmetric import padding, rsa
from mysql_mimic.auth import (
    AuthInfo,
    AuthState,
    Forbidden,
    IdentityProvider,
    NativePasswordAuthPlugin,
    Success,
    User,
)
from mysql_mimic.auth import (
    AuthPlugin as _AuthPlugin,
)
from mysql_mimic.utils import nonce as nonce_bytes

from projections.users import ROOT
from storage.secrets import SecretBox, SecretError

log = logging.getLogger("strata.auth")
FIRST_DELAY_S = 0.5
MAX_DELAY_S = 8.0
FORGET_AFTER_S = 600.0
SHA2_PLUGIN = "caching_sha2_password"
# caching_sha2_password's AuthMoreData codes (sql-common/client_authentication.cc).
_PERFORM_FULL_AUTHENTICATION = b"\x04"
_REQUEST_PUBLIC_KEY = b"\x02"


class FailedLogins:
    """Per user name: how many logins failed in a row, and when the last one did."""

    def __init__(self) -> None:
        self._failures: dict[str, tuple[int, float]] = {}
        self._next_turn: dict[str, float] = {}  # per user name: the earliest time its next guess is checked

    def delay_s(self, name: str) -> float:
        count, last = self._failures.get(name.lower(), (0, 0.0))
        if count == 0 or time.monotonic() - last > FORGET_AFTER_S:
            return 0.0
        return min(MAX_DELAY_S, FIRST_DELAY_S * 2 ** (count - 1))

    def failed(self, name: str) -> int:
        count, last = self._failures.get(name.lower(), (0, 0.0))
        if time.monotonic() - last > FORGET_AFTER_S:
            count = 0
        self._failures[name.lower()] = (count + 1, time.monotonic())
        return count + 1

    def succeeded(self, name: str) -> None:
        self._failures.pop(name.lower(), None)

    async def wait_turn(self, name: str) -> None:
        """After failures, the guesses at one user name are checked one at a time, `delay_s` apart,
        however many connections make them: parallel connections do not multiply the guess rate."""
        delay = self.delay_s(name)
        if delay <= 0:
            return
        key = name.lower()
        now = time.monotonic()
        slot = max(now, self._next_turn.get(key, 0.0))
        self._next_turn[key] = slot + delay
        await asyncio.sleep(slot - now)


class LoginGate(Protocol):
    """The checks around the password (query.login_policy, wired to the connection by query.connections);
    each refusal is a `Forbidden` whose message may carry its own MySQL error code."""

    def locked(self, name: str) -> str | None: ...

    def failed(self, name: str) -> bool: ...

    def succeeded(self, name: str) -> None: ...

    def admit(self, name: str) -> str | None: ...


class ThrottledPassword(NativePasswordAuthPlugin):
    """Announced as mysql_native_password, but it answers whichever of the two password plugins the
    client speaks (client_plugin_name None: mysql-mimic then never asks a caching_sha2_password
    client to switch to a plugin a MySQL 9 client no longer has)."""

    client_plugin_name = None  # type: ignore[assignment]

    def __init__(self, failures: FailedLogins, gate: LoginGate | None = None) -> None:
        self.failures = failures
        self.gate = gate
        self._rsa = rsa.generate_private_key(public_exponent=65537, key_size=2048)
        self._public_pem = self._rsa.public_key().public_bytes(
            serialization.Encoding.PEM, serialization.PublicFormat.SubjectPublicKeyInfo)

    async def auth(self, auth_info: Optional[AuthInfo] = None) -> AuthState:  # noqa: UP045 - mimic's signature
        if auth_info and auth_info.handshake_plugin_name == self.name and auth_info.handshake_auth_data:
            nonce = auth_info.handshake_auth_data.rstrip(b"\x00")
        else:
            # Printable ASCII, like MySQL's scramble: Connector/J decodes the scramble as text (bytes over
            # 0x7F were mangled, so every password login failed), and a nonce ending in 0x00 lost that byte
            # to the rstrip above (one login in 256 failed for every client).
            nonce = nonce_bytes(20)
            auth_info = yield nonce + b"\x00"
        user = auth_info.user
        refused = self.gate.locked(user.name) if self.gate is not None else None
        if refused is None:  # a locked account is answered at once; others may wait their turn
            await self.failures.wait_turn(user.name)
        sha2 = auth_info.client_plugin_name == SHA2_PLUGIN and bool(auth_info.data)
        if sha2:
            auth_info = yield _PERFORM_FULL_AUTHENTICATION
            if auth_info.data == _REQUEST_PUBLIC_KEY:
                auth_info = yield self._public_pem
        # From the lock check to counting the outcome nothing awaits, so logins on parallel connections
        # cannot all pass the check before the first failure is counted.
        if refused is None and self.gate is not None:
            refused = self.gate.locked(user.name)
        if refused is not None:
            log.warning("login refused for user '%s': the account is locked", user.name)
            yield Forbidden(refused)
            return
        if sha2:
            matches = self._sha2_password_matches(user, auth_info.data, nonce)
        else:
            matches = self.password_matches(user=user, scramble=auth_info.data, nonce=nonce)
        if matches:
            self.failures.succeeded(user.name)
            if self.gate is not None:
                self.gate.succeeded(user.name)
                refused = self.gate.admit(user.name)
                if refused is not None:
                    yield Forbidden(refused)
                    return
            yield Success(user.name)
            return
        if self.gate is not None and self.gate.failed(user.name):
            log.warning("user '%s' is locked after consecutive failed logins", user.name)
        await asyncio.sleep(self.failures.delay_s(user.name))
        count = self.failures.failed(user.name)
        log.warning("login failed for user '%s' (%d in a row)", user.name, count)
        yield Forbidden(f"Access denied for user '{user.name}'@'%' (using password: "
                        f"{'YES' if auth_info.data else 'NO'})")

    def _sha2_password_matches(self, user: User, encrypted: bytes, nonce: bytes) -> bool:
        """The password a caching_sha2_password client sent under the public key, against the stored hash."""
        try:
            plain = self._rsa.decrypt(encrypted, padding.OAEP(mgf=padding.MGF1(algorithm=hashes.SHA1()),
                                                              algorithm=hashes.SHA1(), label=None))
        except ValueError:
            return False
        password = bytes(b ^ nonce[i % len(nonce)] for i, b in enumerate(plain)).rstrip(b"\x00")
        try:
            text = password.decode("utf-8")
        except UnicodeDecodeError:
            return False
        if not text:
            return not user.auth_string
        return any(stored is not None and hmac.compare_digest(self.create_auth_string(text), stored.lower())
                   for stored in (user.auth_string, user.old_auth_string))


class StrataIdentityProvider(IdentityProvider):
    def __init__(self, users: Callable[[str], Optional[str]], root_password: str, box: SecretBox,  # noqa: UP045
                 gate: LoginGate | None = None) -> None:
        """`users(name)`: the sealed auth string of a user of the log (None: no such user)."""
        self._users = users
        self._root = NativePasswordAuthPlugin.create_auth_string(root_password) if root_password else None
        self._box = box
        self._plugin = ThrottledPassword(FailedLogins(), gate)

    def get_plugins(self) -> list[_AuthPlugin]:
        return [self._plugin]

    async def get_user(self, username: str) -> Optional[User]:  # noqa: UP045 - mimic's signature
        if username.lower() == ROOT:
            return User(name=ROOT, auth_string=self._root, auth_plugin=self._plugin.name)
        sealed = self._users(username)
        auth_string: str | None
        if sealed is None:
            # No such user: a hash nothing matches, so the answer is the same as for a wrong password.
            auth_string = secrets.token_hex(20)
        else:
            try:
                auth_string = self._box.open(sealed) if sealed else None
            except SecretError:
                log.error("user '%s': its password hash was sealed with another key; it cannot log in", username)
                auth_string = secrets.token_hex(20)
        return User(name=username, auth_string=auth_string, auth_plugin=self._plugin.name)
