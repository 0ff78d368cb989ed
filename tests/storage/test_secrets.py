"""Sealed secrets: what goes on the log for a resource's secret key opens back to it on this
machine only, and never shows the secret."""

from __future__ import annotations

import base64
import stat
from pathlib import Path

import pytest

from storage.secrets import MASK, PREFIX, SecretBox, SecretError, masked

SECRET = "wJalrXUtnFEMI-K7MDENG-bPxRfiCY"


def test_seal_open_round_trip_hides_the_secret(tmp_path: Path) -> None:
    box = SecretBox(tmp_path / "secrets" / "strata.key")
    sealed = box.seal(SECRET)
    assert sealed.startswith(PREFIX) and SECRET not in sealed
    assert box.open(sealed) == SECRET
    assert box.seal(SECRET) != sealed, "a fresh nonce per seal: equal secrets do not look equal on the log"
    assert box.seal(sealed) == sealed, "sealing twice (ALTER of sealed properties) keeps one layer"
    assert stat.S_IMODE((tmp_path / "secrets" / "strata.key").stat().st_mode) == 0o600
    # Another process on the machine reads the same key file.
    assert SecretBox(tmp_path / "secrets" / "strata.key").open(sealed) == SECRET


def test_only_secret_properties_are_sealed_and_shown_masked(tmp_path: Path) -> None:
    box = SecretBox(tmp_path / "k")
    properties = {"type": "s3", "s3.access_key": "AKIA", "s3.secret_key": SECRET, "s3.bucket": "b"}
    sealed = box.seal_properties(properties)
    assert {k: v for k, v in sealed.items() if k != "s3.secret_key"} == {"type": "s3", "s3.access_key": "AKIA",
                                                                      "s3.bucket": "b"}
    assert SECRET not in str(sealed)
    assert box.open_properties(sealed) == properties
    assert masked(sealed) == {**properties, "s3.secret_key": MASK}


def test_another_machine_or_tampering_cannot_open(tmp_path: Path) -> None:
    sealed = SecretBox(tmp_path / "a").seal(SECRET)
    with pytest.raises(SecretError, match="another machine"):
        SecretBox(tmp_path / "b").open(sealed)
    raw = bytearray(base64.urlsafe_b64decode(sealed[len(PREFIX):]))
    raw[-1] ^= 1  # one bit of the ciphertext
    with pytest.raises(SecretError):
        SecretBox(tmp_path / "a").open(PREFIX + base64.urlsafe_b64encode(bytes(raw)).decode())
    assert SecretBox(tmp_path / "a").open("plain") == "plain", "values never sealed pass through"
