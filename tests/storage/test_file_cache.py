"""The file cache of cooled rowsets: LRU under a byte cap, pins, counters, and adoption at start."""

from __future__ import annotations

from collections.abc import Callable
from pathlib import Path

from storage.file_cache import FileCache


def _writer(size: int, calls: list[str]) -> Callable[[Path], None]:
    def download(dest: Path) -> None:
        calls.append(dest.name)
        dest.write_bytes(b"x" * size)
    return download


def test_hits_misses_and_lru_eviction_under_the_cap(tmp_path: Path) -> None:
    cache = FileCache(tmp_path, cap_bytes=250)
    calls: list[str] = []
    a = cache.fetch("r/a", _writer(100, calls))
    cache.fetch("r/b", _writer(100, calls))
    assert cache.fetch("r/a", _writer(100, calls)) == a  # a is now the most recently used
    cache.fetch("r/c", _writer(100, calls))              # 300 > 250: b, the least recent, goes
    assert calls == ["a", "b", "c"]
    assert "r/b" not in cache and "r/a" in cache and "r/c" in cache
    assert not (tmp_path / "r/b").exists()
    assert (cache.stats.hits, cache.stats.misses, cache.stats.evictions) == (1, 3, 1)
    assert cache.stats.bytes_downloaded == 300 and cache.bytes_cached == 200


def test_a_pinned_file_is_never_evicted_until_unpinned(tmp_path: Path) -> None:
    cache = FileCache(tmp_path, cap_bytes=150)
    calls: list[str] = []
    cache.fetch("r/a", _writer(100, calls), pin=True)
    cache.fetch("r/b", _writer(100, calls), pin=True)
    assert "r/a" in cache and "r/b" in cache  # over the cap while both are read
    cache.unpin("r/a")
    assert "r/a" not in cache and "r/b" in cache
    assert cache.bytes_cached == 100


def test_files_left_from_an_earlier_run_are_adopted_and_partial_ones_dropped(tmp_path: Path) -> None:
    (tmp_path / "r").mkdir()
    (tmp_path / "r" / "a").write_bytes(b"y" * 10)
    (tmp_path / "r" / ".a.1234.part").write_bytes(b"half")
    cache = FileCache(tmp_path, cap_bytes=100)
    calls: list[str] = []
    assert cache.fetch("r/a", _writer(10, calls)).read_bytes() == b"y" * 10
    assert calls == [] and cache.stats.hits == 1
    assert not (tmp_path / "r" / ".a.1234.part").exists()


def test_a_failed_download_caches_nothing(tmp_path: Path) -> None:
    cache = FileCache(tmp_path, cap_bytes=100)

    def broken(dest: Path) -> None:
        raise OSError("store down")

    try:
        cache.fetch("r/a", broken)
    except OSError:
        pass
    else:
        raise AssertionError("the failure was swallowed")
    assert "r/a" not in cache and cache.stats.misses == 0
    calls: list[str] = []
    cache.fetch("r/a", _writer(5, calls))
    assert calls == ["a"]


def test_clear_drops_every_unpinned_file(tmp_path: Path) -> None:
    cache = FileCache(tmp_path, cap_bytes=1000)
    calls: list[str] = []
    cache.fetch("r/a", _writer(10, calls))
    cache.fetch("r/b", _writer(10, calls), pin=True)
    assert cache.clear() == 1
    assert "r/a" not in cache and "r/b" in cache and not (tmp_path / "r" / "a").exists()
