"""ProjectionStore's floors: a scan of a front-trimmed index starts where its live entries begin, and
never misses one — put below the floor, un-deleted by a discarded batch, or put while a scan reads."""

from __future__ import annotations

from collections.abc import Iterator
from pathlib import Path

import pytest
from pytest import MonkeyPatch
from rocksdict import RdictIter

from projections import keys
from projections.store import ProjectionStore

STALE = keys.keeping_stale_prefix(7)


def _key(n: int, suffix: str = "r") -> bytes:
    return STALE + f"{n:015d}/{suffix}".encode()


def _store(tmp_path: Path) -> ProjectionStore:
    return ProjectionStore(tmp_path / "db", front_trimmed=keys.FRONT_TRIMMED)


def _filled(tmp_path: Path, count: int) -> ProjectionStore:
    store = _store(tmp_path)
    for n in range(count):
        store.put(_key(n), b"v")
    store.commit({})
    return store


def _listed(store: ProjectionStore, prefix: bytes = STALE, **kwargs: bytes) -> list[bytes]:
    return [key for key, _ in store.scan(prefix, **kwargs)]


def test_a_scan_after_the_front_is_deleted_starts_at_the_first_live_entry(tmp_path: Path) -> None:
    store = _filled(tmp_path, 40)
    assert _listed(store) == [_key(n) for n in range(40)]
    for n in range(30):
        store.delete(_key(n))
    store.commit({})
    assert _listed(store) == [_key(n) for n in range(30, 40)]
    assert store._floors[STALE] == _key(30)
    assert _listed(store) == [_key(n) for n in range(30, 40)]


def test_a_put_below_the_floor_is_found(tmp_path: Path) -> None:
    store = _filled(tmp_path, 10)
    for n in range(8):
        store.delete(_key(n))
    store.commit({})
    assert _listed(store) == [_key(8), _key(9)]
    store.put(_key(3, "again"), b"v")  # pending: found before it is committed, and after
    assert _listed(store) == [_key(3, "again"), _key(8), _key(9)]
    store.commit({})
    assert _listed(store) == [_key(3, "again"), _key(8), _key(9)]


def test_a_discarded_delete_leaves_its_key_found(tmp_path: Path) -> None:
    store = _filled(tmp_path, 5)
    store.delete(_key(0))
    store.delete(_key(1))
    assert _listed(store) == [_key(2), _key(3), _key(4)]  # learnt while the deletes were pending
    store.discard()
    assert _listed(store) == [_key(n) for n in range(5)]


def test_a_put_while_a_scan_reads_is_not_skipped_by_its_floor(tmp_path: Path, monkeypatch: MonkeyPatch) -> None:
    store = _filled(tmp_path, 6)
    for n in range(3):
        store.delete(_key(n))
    store.commit({})
    reading = ProjectionStore._committed

    def put_meanwhile(it: RdictIter) -> Iterator[tuple[bytes, bytes]]:
        # Another thread's put, after the scan's iterator was made and before its first key: the scan
        # does not see it, and must not make it a floor above it.
        store.put(_key(1, "late"), b"v")
        store.commit({})
        yield from reading(it)

    monkeypatch.setattr(store, "_committed", put_meanwhile)
    assert _listed(store) == [_key(3), _key(4), _key(5)]
    monkeypatch.undo()
    assert _listed(store) == [_key(1, "late"), _key(3), _key(4), _key(5)]


def test_bounded_and_started_scans(tmp_path: Path) -> None:
    store = _filled(tmp_path, 10)
    for n in range(4):
        store.delete(_key(n))
    store.commit({})
    # Nothing below `before`: the floor moves to it, and a key put there later is still found.
    assert _listed(store, before=_key(3, "z")) == []
    assert _listed(store, before=_key(6)) == [_key(4), _key(5)]
    # A scan from a start above the floor learns nothing of what lies below its start.
    assert _listed(store, start=_key(8)) == [_key(8), _key(9)]
    assert _listed(store) == [_key(n) for n in range(4, 10)]
    # An empty index: its floor sits past every key of it, and a put lowers it.
    for n in range(4, 10):
        store.delete(_key(n))
    store.commit({})
    assert _listed(store) == []
    store.put(_key(2), b"v")
    store.commit({})
    assert _listed(store) == [_key(2)]


def test_only_whole_family_prefixes_keep_floors(tmp_path: Path) -> None:
    store = _filled(tmp_path, 3)
    other = keys.keeping_stale_prefix(8) + b"000000000000001/r"
    store.put(other, b"v")
    store.delete(_key(0))
    store.commit({})
    # A scan of every table's index names no one family prefix: it keeps no floor.
    assert _listed(store, b"sk/") == [_key(1), _key(2), other]
    assert b"sk/" not in store._floors
    store.put(keys.keeping_stale_prefix(7) + b"000000000000000/s", b"v")
    store.commit({})
    assert _listed(store, b"sk/")[0] == keys.keeping_stale_prefix(7) + b"000000000000000/s"


def test_families_the_put_path_could_not_tell_apart_are_refused(tmp_path: Path) -> None:
    with pytest.raises(ValueError, match="first two bytes"):
        ProjectionStore(tmp_path / "db", front_trimmed={b"sx/": 14, b"sxy/": 15})


def test_the_families_named_are_the_indexes_trimmed_from_the_front() -> None:
    assert keys.FRONT_TRIMMED == {
        b"sx/": len(keys.stale_prefix(1)), b"sk/": len(keys.keeping_stale_prefix(1)),
        b"v/": len(keys.version_prefix(1, 2)), b"kt/": len(keys.DECIDED_AGE)}


def test_scans_and_seeks_stay_inside_their_prefix(tmp_path: Path) -> None:
    """Bounded iterators (a seek into a prefix with nothing live must not walk on through the deleted
    keys of the next one): the entries right at and around each bound."""
    store = _store(tmp_path)
    next_table = keys.keeping_stale_prefix(8)
    for key in (STALE[:-1] + b".", _key(1), _key(2), STALE[:-1] + b"0", next_table + b"1", b"\xff\xff"):
        store.put(key, b"v")
    store.commit({})
    for n in range(30):  # deleted keys after the prefix
        store.put(next_table + b"0" + str(n).encode(), b"v")
    store.commit({})
    for n in range(30):
        store.delete(next_table + b"0" + str(n).encode())
    store.commit({})
    assert _listed(store) == [_key(1), _key(2)]
    assert _listed(store, before=_key(2)) == [_key(1)]
    assert _listed(store, keys.keeping_stale_prefix(6)) == []
    assert _listed(store, next_table) == [next_table + b"1"]
    assert [k for k, _ in store.scan(b"")][-1] == b"\xff\xff"
    assert store.seek_for_prev(_key(9), STALE) == (_key(2), b"v")
    assert store.seek_for_prev(_key(0), STALE) is None  # the key before the prefix is not in it
    assert store.seek_for_prev(next_table + b"0z", next_table) is None


def _filter_entries(store: ProjectionStore) -> int:
    props = store._db.property_value("rocksdb.aggregated-table-properties") or ""
    return next(int(part.split("=")[1]) for part in props.split(";") if "# entries for filter" in part)


def test_a_reopened_store_keeps_writing_bloom_filters(tmp_path: Path) -> None:
    """The fold's lookups mostly miss (`decided.remember`); the bloom filters answer those, so every
    file written after a restart must have one too."""
    for round_ in range(3):
        store = _store(tmp_path)
        store.put(b"k/" + str(round_).encode(), b"v")
        store.commit({})
        store._db.flush()
        assert _filter_entries(store) == round_ + 1  # one key per flushed file, every file filtered
        store.close()
