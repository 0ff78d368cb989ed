"""Running a test's work on several threads at once, each failure collected for the test to assert."""

from __future__ import annotations

import threading
from collections.abc import Callable


def in_threads(count: int, work: Callable[[int], None], *, join_s: float = 120.0) -> list[BaseException]:
    """Runs `work(i)` for i in 0..count-1, each on a thread of its own, all at once; returns what they raised."""
    errors: list[BaseException] = []

    def guarded(i: int) -> None:
        try:
            work(i)
        except BaseException as exc:  # noqa: BLE001 - reported by the test
            errors.append(exc)

    threads = [threading.Thread(target=guarded, args=(i,)) for i in range(count)]
    for thread in threads:
        thread.start()
    for thread in threads:
        thread.join(join_s)
    return errors
