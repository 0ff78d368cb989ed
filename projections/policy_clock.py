"""The clock policies run on: the dynamic partition scheduler and the tiering agent ask it whether
a partition is due. It is the wall clock, unless the stack runs with `simulated_clock` (tests):
then it is the wall clock plus an offset, kept in a file under the state directory so that a test
process can move the worker's clock forward. Commit timestamps never come from it — the log's
time is always real, and time travel reads are judged against it."""

from __future__ import annotations

import time
from collections.abc import Callable
from pathlib import Path

from schemas.config import Settings

OFFSET_FILE = "policy_clock_offset_s"


def _offset_path(config: Settings) -> Path:
    return config.state_dir / OFFSET_FILE


def offset_s(config: Settings) -> float:
    try:
        return float(_offset_path(config).read_text())
    except (FileNotFoundError, ValueError):
        return 0.0


def policy_clock(config: Settings) -> Callable[[], float]:
    if not config.simulated_clock:
        return time.time
    return lambda: time.time() + offset_s(config)


def advance(config: Settings, seconds: float) -> float:
    """Moves the simulated clock forward (tests); returns the new offset."""
    if not config.simulated_clock:
        raise RuntimeError("the stack does not run on a simulated clock (STRATA_SIMULATED_CLOCK)")
    offset = offset_s(config) + seconds
    path = _offset_path(config)
    path.parent.mkdir(parents=True, exist_ok=True)
    tmp = path.with_suffix(".tmp")
    tmp.write_text(repr(offset))
    tmp.replace(path)
    return offset


def reset(config: Settings) -> None:
    _offset_path(config).unlink(missing_ok=True)
