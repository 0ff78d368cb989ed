"""The resources' object stores as the replica defines them: a secret sealed on another machine
(another key file) makes every use of the resource fail with an error naming it, nothing else."""

from __future__ import annotations

from pathlib import Path

import pytest

from projections.projection import Projection
from projections.remote import RemoteStores
from schemas import events as ev
from schemas.config import load_settings
from schemas.envelope import wrap_event
from storage.object_store import ResourceError
from storage.secrets import SecretBox


def _projection(tmp_path: Path, sealed_by: SecretBox) -> Projection:
    projection = Projection(tmp_path / "p")
    properties = {"type": "s3", "s3.endpoint": "127.0.0.1:1", "s3.region": "r", "s3.bucket": "bkt",
                  "s3.access_key": "a", "s3.secret_key": sealed_by.seal("the-secret")}
    event = ev.ResourceCreated(name="res", resource_type="s3", properties=properties)
    projection.apply(wrap_event(event, table_id=None, commit_ts_ms=1, command_id=None), "e", 0, 0)
    projection.flush()
    return projection


def test_a_store_is_built_from_the_opened_secret(tmp_path: Path) -> None:
    config = load_settings(home=tmp_path / "home")
    projection = _projection(tmp_path, SecretBox(config.secret_key_file))
    store = RemoteStores(projection, config)("res")
    assert store.location.secret_key == "the-secret" and store.location.bucket == "bkt"
    with pytest.raises(ResourceError, match="resource 'gone': does not exist"):
        RemoteStores(projection, config)("gone")


def test_a_secret_sealed_with_another_key_is_a_resource_error(tmp_path: Path) -> None:
    config = load_settings(home=tmp_path / "home")
    projection = _projection(tmp_path, SecretBox(tmp_path / "other-machine.key"))
    with pytest.raises(ResourceError, match="resource 'res': a sealed secret cannot be opened"):
        RemoteStores(projection, config)("res")
