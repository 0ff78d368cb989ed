"""The object stores of the catalog's resources, built from the replica's resource entries
(secrets opened with the machine-local key), and the rowset locator a process reads through."""

from __future__ import annotations

import json
import threading

from projections.projection import Projection
from schemas.config import Settings
from storage.file_cache import FileCache
from storage.locator import RowsetLocator
from storage.object_store import ObjectStore, ResourceError, S3Location
from storage.secrets import SecretBox, SecretError
from storage.tiers import LocalTiers


class RemoteStores:
    """`stores(name)` is the ObjectStore of resource `name` as the log defines it now."""

    def __init__(self, projection: Projection, config: Settings) -> None:
        self.projection = projection
        self.config = config
        self.box = SecretBox(config.secret_key_file)
        self._lock = threading.Lock()
        self._built: dict[str, tuple[str, ObjectStore]] = {}

    def properties(self, name: str) -> dict[str, str]:
        """A resource's properties, secrets opened."""
        found = self.projection.named["resource"].get(name)
        if found is None:
            raise ResourceError(name, "does not exist (dropped?)")
        try:
            return self.box.open_properties(dict(found["properties"]))
        except SecretError as exc:  # a key file from another machine: every use says so, nothing crashes
            raise ResourceError(name, str(exc)) from None

    def build(self, name: str, properties: dict[str, str]) -> ObjectStore:
        return ObjectStore(name, S3Location.from_properties(name, properties),
                           connect_timeout_s=self.config.s3_connect_timeout_s,
                           read_timeout_s=self.config.s3_read_timeout_s, ca_file=self.config.s3_ca_file)

    def __call__(self, name: str) -> ObjectStore:
        found = self.projection.named["resource"].get(name)
        if found is None:
            raise ResourceError(name, "does not exist (dropped?)")
        fingerprint = json.dumps(found["properties"], sort_keys=True)
        with self._lock:
            built = self._built.get(name)
            if built is None or built[0] != fingerprint:  # ALTER RESOURCE changed it
                built = (fingerprint, self.build(name, self.properties(name)))
                self._built[name] = built
            return built[1]


def open_locator(config: Settings, projection: Projection, process: str) -> tuple[RowsetLocator, RemoteStores]:
    """The locator of one process: its local tiers, the resources' stores, its own file cache."""
    stores = RemoteStores(projection, config)
    cache = FileCache(config.cache_dir / process, config.file_cache_bytes)
    return RowsetLocator(LocalTiers.from_config(config), stores, cache), stores
