"""Concurrent callers' requests served in shared rounds — group commit for a slow call.

Many writers at once each need a costly call whose answer only has to be *at least as new as the
request*: the directory fsync after a rename, the log's end offsets for read-your-writes. One at a
time they queue behind each other; answered in rounds, one call serves everyone waiting. A round
takes every request made before it began and serves them together with one `serve(keys)`; a request
made while a round runs waits for the next one (the running round may have looked before the
request existed). One round runs at a time, begun by a caller that finds none running — no thread of
its own. A caller waits at most for the round in flight and its own.

It lives in storage, the lowest layer that needs it; projections use it too.
"""

from __future__ import annotations

import threading
from collections.abc import Callable, Hashable, Mapping
from typing import Generic, TypeVar

K = TypeVar("K", bound=Hashable)
R = TypeVar("R")


class _Round(Generic[K, R]):
    def __init__(self) -> None:
        self.keys: set[K] = set()
        self.done = False
        self.results: Mapping[K, R] = {}
        self.error: BaseException | None = None


class GroupedCalls(Generic[K, R]):
    def __init__(self, serve: Callable[[frozenset[K]], Mapping[K, R]]) -> None:
        """`serve(keys)` answers one round: a result for every key of it. If it raises, every
        request of that round raises the same error (the next round tries again)."""
        self._serve = serve
        self._turn = threading.Condition()
        self._open: _Round[K, R] = _Round()  # collecting requests; begins when no round runs
        self._running = False

    def __call__(self, key: K) -> R:
        with self._turn:
            mine = self._open
            mine.keys.add(key)
            while not mine.done:
                if not self._running and self._open is mine:
                    self._running = True
                    self._open = _Round()
                    break  # this caller serves the round, outside the lock
                self._turn.wait()
            else:
                return self._answer(mine, key)
        try:
            mine.results = self._serve(frozenset(mine.keys))
        except BaseException as exc:  # noqa: BLE001 - handed to every request of the round
            mine.error = exc
        with self._turn:
            mine.done = True
            self._running = False
            self._turn.notify_all()  # the round's requests, and the next round's first caller
        return self._answer(mine, key)

    @staticmethod
    def _answer(done: _Round[K, R], key: K) -> R:
        if done.error is not None:
            raise done.error
        return done.results[key]
