"""RowsetLocator's pins: a statement's cached files — and whatever else it holds (`hold`) — stay pinned
until it ends, or, once handed over (`take_pins`, a streamed result read after its statement
returned), until released."""

from __future__ import annotations

import functools
from typing import Any

from storage.locator import RowsetLocator


class Cache:
    def __init__(self) -> None:
        self.unpinned: list[str] = []

    def unpin(self, key: str) -> None:
        self.unpinned.append(key)


def locator(cache: Cache) -> RowsetLocator:
    none: Any = None
    return RowsetLocator(none, none, cache)  # type: ignore[arg-type]  # only the pins are used


def test_a_statement_releases_what_it_holds_when_it_ends() -> None:
    cache = Cache()
    loc = locator(cache)
    with loc.statement():
        assert loc.hold(functools.partial(cache.unpin, "a"))  # as locate_many pins a cached file
        with loc.statement():  # a nested block is the same statement
            assert loc.hold(functools.partial(cache.unpin, "b"))
        assert cache.unpinned == []
    assert cache.unpinned == ["a", "b"]


def test_taken_pins_outlive_the_statement_until_released() -> None:
    cache = Cache()
    loc = locator(cache)
    with loc.statement():
        loc.hold(functools.partial(cache.unpin, "a"))
        release = loc.take_pins()
        loc.hold(functools.partial(cache.unpin, "b"))  # held after the hand-over: still the statement's
    assert cache.unpinned == ["b"]
    release()
    assert cache.unpinned == ["b", "a"]


def test_outside_a_statement_nothing_is_held_or_taken() -> None:
    cache = Cache()
    loc = locator(cache)
    assert not loc.hold(functools.partial(cache.unpin, "a"))
    loc.take_pins()()
    assert cache.unpinned == []
