"""Local media tiers: named roots (`ssd`, `hdd`) that rowset paths are relative to."""

from __future__ import annotations

from pathlib import Path

from schemas.config import Settings
from storage.paths import contained, under


class LocalTiers:
    def __init__(self, roots: dict[str, Path]) -> None:
        self._roots = {name: Path(root) for name, root in roots.items()}

    @classmethod
    def from_config(cls, config: Settings) -> LocalTiers:
        return cls(dict(zip(LOCAL_MEDIA, (config.ssd_dir, config.hdd_dir), strict=True)))

    def root(self, tier: str) -> Path:
        try:
            return self._roots[tier]
        except KeyError:
            raise KeyError(f"unknown local tier {tier!r}; configured: {sorted(self._roots)}") from None

    def locate(self, tier: str, rel_path: str) -> Path:
        """The file under the tier's root; a path leading outside it raises UnsafePath (paths come
        from the log, and a forged event must not make a reader or deleter touch any other file)."""
        return contained(self.root(tier), rel_path)

    def read_path(self, tier: str, rel_path: str) -> Path:
        """The file a reader opens: lexically under the tier's root, symlinks not resolved. Readers
        hand it to DuckDB, which opens nothing outside the tier roots (storage.sandbox); resolving
        cost ~70 µs per rowset, over 20 ms for a time-travel read of a few hundred rowsets, and what
        it adds (a symlink planted inside the data directory) needs write access there already.
        Deleters and movers use `locate`, which resolves."""
        return under(self.root(tier), rel_path)

    def names(self) -> list[str]:
        return sorted(self._roots)


REMOTE_PREFIX = "remote:"
LOCAL_MEDIA = ("ssd", "hdd")


def remote_tier(resource: str) -> str:
    """The tier name of rowsets stored on a remote resource."""
    return REMOTE_PREFIX + resource


def resource_of(tier: str) -> str | None:
    """The resource a remote tier names, or None for a local medium."""
    return tier[len(REMOTE_PREFIX):] if tier.startswith(REMOTE_PREFIX) else None
