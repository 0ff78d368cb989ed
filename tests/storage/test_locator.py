"""RowsetLocator's pins: a statement's cached files stay pinned until it ends, or, once handed over
(`take_pins`, a streamed result read after its statement returned), until released."""

from __future__ import annotations

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


def test_a_statement_unpins_its_files_when_it_ends() -> None:
    cache = Cache()
    loc = locator(cache)
    with loc.statement():
        pins = loc._pinning()
        assert pins is not None
        pins.append("a")  # as locate_many records a cached file it pinned
    assert cache.unpinned == ["a"]


def test_taken_pins_outlive_the_statement_until_released() -> None:
    cache = Cache()
    loc = locator(cache)
    with loc.statement():
        pins = loc._pinning()
        assert pins is not None
        pins.append("a")
        release = loc.take_pins()
        pins.append("b")  # pinned after the hand-over: still the statement's
    assert cache.unpinned == ["b"]
    release()
    assert cache.unpinned == ["b", "a"]


def test_outside_a_statement_there_is_nothing_to_take() -> None:
    cache = Cache()
    locator(cache).take_pins()()
    assert cache.unpinned == []
