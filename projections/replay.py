"""Rebuilding a projection from offset 0 of `strata.events`, and proving it with a checksum."""

from __future__ import annotations

import shutil
import time
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path

from projections.follower import EventFollower
from projections.projection import Projection
from schemas.config import Settings


@dataclass(frozen=True)
class ReplayResult:
    path: Path
    events: int
    seconds: float
    checksum: str
    decode_errors: int

    @property
    def events_per_second(self) -> float:
        return self.events / self.seconds if self.seconds > 0 else 0.0


def replay(config: Settings, path: Path, progress: Callable[[int, int], None] | None = None) -> ReplayResult:
    """Folds the whole log into a fresh projection at `path` (removed first)."""
    shutil.rmtree(path, ignore_errors=True)
    projection = Projection(path)
    follower = EventFollower(projection, config, name=f"replay-{path.name}")
    started = time.perf_counter()
    try:
        follower.catch_up(timeout=3600, progress=progress)
        seconds = time.perf_counter() - started
        return ReplayResult(path=path, events=follower.applied_events, seconds=seconds,
                            checksum=projection.store.checksum(), decode_errors=follower.decode_errors)
    finally:
        follower.stop()
        projection.close()


def checksum(path: Path) -> tuple[str, dict[tuple[str, int], int]]:
    """The digest and tracking offsets of the projection at `path` (readable while a process uses it)."""
    projection = Projection(path, read_only=True)
    try:
        return projection.store.checksum(), projection.offsets()
    finally:
        projection.close()
