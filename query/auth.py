"""Logging in on the SQL port: mysql_native_password or caching_sha2_password against the users of
the log (and root's password from the configuration). A failed login is logged with the user name only, never the
password, and each further failure of one user name waits longer before it is answered, so a
password cannot be guessed at network speed. An unknown user fails exactly like a wrong password,
so user names cannot be probed either.

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
from typing import Optional

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


class ThrottledPassword(NativePasswordAuthPlugin):
    """Announced as mysql_native_password, but it answers whichever of the two password plugins the
    client speaks (client_plugin_name None: mysql-mimic then never asks a caching_sha2_password
    client to switch to a plugin a MySQL 9 client no longer has)."""

    client_plugin_name = None  # type: ignore[assignment]

    def __init__(self, failures: FailedLogins) -> None:
        self.failures = failures
        self._rsa = rsa.generate_private_key(public_exponent=65537, key_size=2048)
        self._public_pem = self._rsa.public_key().public_bytes(
            serialization.Encoding.PEM, serialization.PublicFormat.SubjectPublicKeyInfo)

    async def auth(self, auth_info: Optional[AuthInfo] = None) -> AuthState:  # noqa: UP045 - mimic's signature
        if auth_info and auth_info.handshake_plugin_name == self.name and auth_info.handshake_auth_data:
            nonce = auth_info.handshake_auth_data.rstrip(b"\x00")
        else:
            nonce = secrets.token_bytes(20)
            auth_info = yield nonce + b"\x00"
        user = auth_info.user
        if auth_info.client_plugin_name == SHA2_PLUGIN and auth_info.data:
            auth_info = yield _PERFORM_FULL_AUTHENTICATION
            if auth_info.data == _REQUEST_PUBLIC_KEY:
                auth_info = yield self._public_pem
            matches = self._sha2_password_matches(user, auth_info.data, nonce)
        else:
            matches = self.password_matches(user=user, scramble=auth_info.data, nonce=nonce)
        if matches:
            self.failures.succeeded(user.name)
            yield Success(user.name)
            return
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
    def __init__(self, users: Callable[[str], Optional[str]], root_password: str, box: SecretBox) -> None:  # noqa: UP045
        """`users(name)`: the sealed auth string of a user of the log (None: no such user)."""
        self._users = users
        self._root = NativePasswordAuthPlugin.create_auth_string(root_password) if root_password else None
        self._box = box
        self._plugin = ThrottledPassword(FailedLogins())

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
