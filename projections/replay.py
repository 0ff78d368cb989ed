"""Rebuilding a projection from offset 0 of `strata.events`, and proving it with a checksum.

`replay(..., until_ms=T)` folds only the events committed at or before T: the projection of the
past moment T, whose latest state is what `FOR TIME AS OF T` answers. It is a scratch copy — a
marker file in it names the instant, and it is never one of the processes' replicas.
"""

from __future__ import annotations

import json
import shutil
import time
from collections.abc import Callable
from dataclasses import dataclass
from datetime import UTC, datetime
from pathlib import Path

from projections.follower import EventFollower
from projections.projection import Projection
from schemas.config import Settings
from schemas.envelope import EventEnvelope

# In every projection `replay --until` builds; says which instant it holds (and that it is scratch).
UNTIL_MARKER = "STRATA_REPLAY_UNTIL.json"


class ReplayRefused(ValueError):
    """`replay --until` would overwrite a directory that is not one of its own scratch projections."""


def format_instant_ms(ts_ms: int) -> str:
    """UTC milliseconds → 'YYYY-MM-DD HH:MM:SS.fff' (UTC), the form FOR TIME AS OF accepts."""
    return datetime.fromtimestamp(ts_ms / 1000, tz=UTC).strftime("%Y-%m-%d %H:%M:%S.%f")[:-3]


def until_dir_name(until_ms: int) -> str:
    """`replay-until-20261201T100000.000Z`: no process opens a projection named so as its replica."""
    return "replay-until-" + datetime.fromtimestamp(until_ms / 1000, tz=UTC).strftime("%Y%m%dT%H%M%S.%f")[:-3] + "Z"


@dataclass(frozen=True)
class ReplayResult:
    path: Path
    events: int
    seconds: float
    checksum: str
    decode_errors: int
    # The instant the projection holds (UTC ms, inclusive); None for a replay of the whole log.
    until_ms: int | None = None

    @property
    def events_per_second(self) -> float:
        return self.events / self.seconds if self.seconds > 0 else 0.0

    @property
    def instant(self) -> str | None:
        """`until_ms` as 'YYYY-MM-DD HH:MM:SS.fff' UTC."""
        return None if self.until_ms is None else format_instant_ms(self.until_ms)


def _check_scratch(path: Path) -> None:
    # The directory is removed before folding: refuse anything that is not empty and not an earlier
    # `--until` projection, so a mistyped --into cannot wipe a live replica.
    if path.exists() and (not path.is_dir() or (any(path.iterdir()) and not (path / UNTIL_MARKER).is_file())):
        raise ReplayRefused(f"{path} exists and is not a `replay --until` projection; choose another directory")


def until_of(path: Path) -> int | None:
    """The instant (UTC ms) a `replay --until` projection at `path` holds; None when it is not one."""
    try:
        return int(json.loads((path / UNTIL_MARKER).read_text())["until_ms"])
    except (OSError, ValueError, KeyError, TypeError):
        return None


def replay(config: Settings, path: Path, progress: Callable[[int, int], None] | None = None,
           until_ms: int | None = None) -> ReplayResult:
    """Folds the whole log into a fresh projection at `path` (removed first).

    With `until_ms`, folds only the events whose `commit_ts_ms <= until_ms`. The log is in commit
    order per partition, so each partition stops at its first later event; `path` must then be
    absent, empty or an earlier `--until` projection (else `ReplayRefused`)."""
    if until_ms is not None:
        _check_scratch(path)
    shutil.rmtree(path, ignore_errors=True)
    # Without the write-ahead log: a replay cut short is redone from offset 0 anyway (its directory
    # is removed first), and `close` flushes the memtable before the result is used.
    projection = Projection(path, scratch=True)
    if until_ms is not None:
        # Written before folding, so even a replay cut short is recognisable as scratch.
        (path / UNTIL_MARKER).write_text(json.dumps({"until_ms": until_ms, "instant_utc": format_instant_ms(until_ms),
                                                     "note": "scratch projection of a past moment; not live"}))

    def past(envelope: EventEnvelope) -> bool:
        return until_ms is not None and envelope.commit_ts_ms > until_ms

    follower = EventFollower(projection, config, name=f"replay-{path.name}",
                             halt=past if until_ms is not None else None)
    started = time.perf_counter()
    try:
        follower.catch_up(timeout=3600, progress=progress)
        seconds = time.perf_counter() - started
        return ReplayResult(path=path, events=follower.applied_events, seconds=seconds,
                            checksum=projection.store.checksum(), decode_errors=follower.decode_errors,
                            until_ms=until_ms)
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
