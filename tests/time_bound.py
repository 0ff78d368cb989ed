"""A per-example time bound for the fuzz tests: hypothesis' own `deadline` only reports a slow
example after it returns, so a hang would hang the suite. `within(seconds)` interrupts the block
(SIGALRM, main thread only) and fails it with `TookTooLong`, also when it merely ran past the bound."""

from __future__ import annotations

import signal
import threading
import time
from collections.abc import Iterator
from contextlib import contextmanager
from types import FrameType


class TookTooLong(AssertionError):
    pass


class _Interrupted(BaseException):
    """Raised into the running code; a BaseException, so the code's own `except Exception` (a parser
    turning any failure into its syntax error) cannot swallow it."""


@contextmanager
def within(seconds: float, what: object = "") -> Iterator[None]:
    started = time.monotonic()
    fired = False
    main = threading.current_thread() is threading.main_thread()

    def interrupt(signum: int, frame: FrameType | None) -> None:
        nonlocal fired
        fired = True
        raise _Interrupted

    previous = signal.signal(signal.SIGALRM, interrupt) if main else None
    if main:
        signal.setitimer(signal.ITIMER_REAL, seconds)
    try:
        yield
    except _Interrupted:
        pass
    finally:
        if main:
            signal.setitimer(signal.ITIMER_REAL, 0)
            signal.signal(signal.SIGALRM, previous)
    if fired or time.monotonic() - started > seconds:
        raise TookTooLong(f"took more than {seconds}s: {what!r:.300}")
