"""Sealing secrets (S3 secret keys) before they go on the log.

`strata.events` is read by outside consumers, so a resource's secret key is never written there
in clear: the query server seals it with AES-GCM under a machine-local key (created once under
`STRATA_HOME/secrets`, mode 0600) and every Strata process on the machine opens it from there.
SHOW output and logs print only `MASK`.
"""

from __future__ import annotations

import base64
import os
from pathlib import Path

from Crypto.Cipher import AES  # pycryptodome, which minio already depends on

PREFIX = "sealed:v1:"
MASK = "******"
# Resource properties whose values are secrets.
SECRET_KEYS = frozenset({"s3.secret_key", "s3.session_token", "AWS_SECRET_KEY", "AWS_TOKEN"})
# Kafka client settings of a routine load (`property.sasl.password`, `property.ssl.key.password`…).
_SECRET_WORDS = ("password", "secret", "sasl.jaas.config", "sasl.oauthbearer.config")


def is_secret(key: str) -> bool:
    return key in SECRET_KEYS or any(word in key.lower() for word in _SECRET_WORDS)


class SecretError(ValueError):
    """A sealed value cannot be opened (another machine's key, or tampered with)."""


class SecretBox:
    def __init__(self, key_file: Path) -> None:
        self.key_file = key_file
        self._key: bytes | None = None

    def _load_key(self) -> bytes:
        if self._key is None:
            self.key_file.parent.mkdir(parents=True, exist_ok=True)
            try:
                fd = os.open(self.key_file, os.O_WRONLY | os.O_CREAT | os.O_EXCL, 0o600)
            except FileExistsError:
                pass
            else:  # first use on this machine: whoever creates the file writes the key
                with os.fdopen(fd, "wb") as fh:
                    fh.write(os.urandom(32))
                    fh.flush()
                    os.fsync(fh.fileno())
            key = self.key_file.read_bytes()
            if len(key) != 32:
                raise SecretError(f"{self.key_file} does not hold a 32-byte key")
            self._key = key
        return self._key

    def seal(self, text: str) -> str:
        if text.startswith(PREFIX):
            return text
        nonce = os.urandom(12)
        cipher = AES.new(self._load_key(), AES.MODE_GCM, nonce=nonce)
        body, tag = cipher.encrypt_and_digest(text.encode())
        return PREFIX + base64.urlsafe_b64encode(nonce + tag + body).decode()

    def open(self, sealed: str) -> str:
        if not sealed.startswith(PREFIX):
            return sealed
        raw = base64.urlsafe_b64decode(sealed[len(PREFIX):])
        cipher = AES.new(self._load_key(), AES.MODE_GCM, nonce=raw[:12])
        try:
            return cipher.decrypt_and_verify(raw[28:], raw[12:28]).decode()
        except ValueError:
            raise SecretError(f"a sealed secret cannot be opened with {self.key_file} (made on another machine?)") \
                from None

    def seal_properties(self, properties: dict[str, str]) -> dict[str, str]:
        return {k: self.seal(v) if is_secret(k) else v for k, v in properties.items()}

    def open_properties(self, properties: dict[str, str]) -> dict[str, str]:
        return {k: self.open(v) if is_secret(k) else v for k, v in properties.items()}


def masked(properties: dict[str, str]) -> dict[str, str]:
    """Properties safe to show: secrets replaced by MASK."""
    return {k: MASK if is_secret(k) else v for k, v in properties.items()}
