"""Prometheus gauges of a process's file cache of remote rowsets (both servers publish them)."""

from __future__ import annotations

from prometheus_client import Gauge

from storage.file_cache import FileCache

_HITS = Gauge("strata_file_cache_hits", "reads of cooled rowsets served from the local file cache")
_MISSES = Gauge("strata_file_cache_misses", "reads of cooled rowsets that had to fetch the file")
_DOWNLOADED = Gauge("strata_file_cache_downloaded_bytes", "bytes fetched from remote resources")
_EVICTIONS = Gauge("strata_file_cache_evictions", "files evicted to stay under the size cap")
_CACHED = Gauge("strata_file_cache_bytes", "bytes held in the file cache now")
_CAP = Gauge("strata_file_cache_cap_bytes", "the file cache's size cap")


def publish(cache: FileCache) -> None:
    stats = cache.stats
    _HITS.set(stats.hits)
    _MISSES.set(stats.misses)
    _DOWNLOADED.set(stats.bytes_downloaded)
    _EVICTIONS.set(stats.evictions)
    _CACHED.set(cache.bytes_cached)
    _CAP.set(cache.cap_bytes)
