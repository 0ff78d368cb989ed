"""The RocksDB key layout of a projection. Fixed-width decimal fields keep byte order = numeric order,
so `seek_for_prev(version_key(t, p, T))` lands on the commit visible at T in one seek."""

from __future__ import annotations

DB = b"d/"
TABLE = b"t/"
COUNTERS = b"g/counters"
# The sequencer's read position on strata.commands, carried by its events (see EventEnvelope).
COMMANDS_POSITION = b"g/commands-position"


def db_key(db_id: int) -> bytes:
    return DB + f"{db_id:010d}".encode()


def table_key(table_id: int) -> bytes:
    return TABLE + f"{table_id:010d}".encode()


def version_prefix(table_id: int, partition_id: int) -> bytes:
    return f"v/{table_id:010d}/{partition_id:010d}/".encode()


def version_key(table_id: int, partition_id: int, ts_ms: int) -> bytes:
    # `version_prefix` + the instant, in one format: the fold makes one per commit and partition.
    return f"v/{table_id:010d}/{partition_id:010d}/{ts_ms:015d}".encode()


def rowset_prefix(table_id: int, partition_id: int | None = None) -> bytes:
    base = f"r/{table_id:010d}/"
    return (base if partition_id is None else base + f"{partition_id:010d}/").encode()


_MAX_VERSION = 9_999_999_999


def tablet_prefix(table_id: int, partition_id: int, bucket: int) -> bytes:
    return rowset_prefix(table_id, partition_id) + f"{bucket:06d}/".encode()


def rowset_key(table_id: int, partition_id: int, bucket: int, start_version: int, end_version: int,
               rowset_id: str) -> bytes:
    """Ordered by end version, then widest first: `seek_for_prev(cover_seek_key(…, V))` lands on the
    widest rowset among those ending last at or before V — one step of the cover walk."""
    # `tablet_prefix` + the suffix, in one format: the fold makes one per rowset it commits.
    return (f"r/{table_id:010d}/{partition_id:010d}/{bucket:06d}/"
            f"{end_version:010d}/{_MAX_VERSION - start_version:010d}/{rowset_id}").encode()


def cover_seek_key(tablet: bytes, version: int) -> bytes:
    """`tablet`: the tablet's `tablet_prefix`, made once per walk (a walk seeks once per rowset)."""
    return tablet + f"{version:010d}/\xff".encode("latin-1")


def keeping_prefix(table_id: int, partition_id: int, bucket: int) -> bytes:
    """A tablet's version-keeping rowsets (schemas.model.Rowset.keeps_versions), ordered as `rowset_key`:
    the cover walk looks here for one whose range holds the version it must cover."""
    return f"kv/{table_id:010d}/{partition_id:010d}/{bucket:06d}/".encode()


def keeping_key(table_id: int, partition_id: int, bucket: int, start_version: int, end_version: int,
                rowset_id: str) -> bytes:
    """→ the rowset's key (`rowset_key`)."""
    inverse_start = _MAX_VERSION - start_version
    suffix = f"{end_version:010d}/{inverse_start:010d}/{rowset_id}"
    return keeping_prefix(table_id, partition_id, bucket) + suffix.encode()


def keeping_range_of(key: bytes, prefix: bytes) -> tuple[int, int]:
    """(start, end) versions a `keeping_key` names, read from the key alone."""
    end, inverse_start = key[len(prefix):].split(b"/", 2)[:2]
    return _MAX_VERSION - int(inverse_start), int(end)


def keeping_seek_key(table_id: int, partition_id: int, bucket: int, version: int) -> bytes:
    """The first `keeping_key` of the tablet ending above `version`."""
    return keeping_prefix(table_id, partition_id, bucket) + f"{version:010d}/\xff".encode("latin-1")


def delete_prefix(table_id: int, partition_id: int) -> bytes:
    return f"x/{table_id:010d}/{partition_id:010d}/".encode()


def delete_key(table_id: int, partition_id: int, version: int) -> bytes:
    return delete_prefix(table_id, partition_id) + f"{version:010d}".encode()


def bitmap_prefix(table_id: int, partition_id: int) -> bytes:
    """A merge-on-write partition's delete bitmaps, by version."""
    return f"mb/{table_id:010d}/{partition_id:010d}/".encode()


def bitmap_key(table_id: int, partition_id: int, version: int) -> bytes:
    return bitmap_prefix(table_id, partition_id) + f"{version:010d}".encode()


def commit_prefix(table_id: int) -> bytes:
    return f"c/{table_id:010d}/".encode()


def commit_key(table_id: int, commit_number: int) -> bytes:
    return f"c/{table_id:010d}/{commit_number:010d}".encode()


def label_key(table_id: int, label: str) -> bytes:
    return f"l/{table_id:010d}/{label}".encode()


def rowset_locator_key(rowset_id: str) -> bytes:
    """rowset id → its rowset key, so compaction and moves find a rowset by id alone."""
    return b"i/" + rowset_id.encode()


def stale_prefix(table_id: int) -> bytes:
    """The table's stale rowsets by the instant they went stale, oldest first: what the recycler
    reads, up to its horizon, instead of every rowset record of the table."""
    return f"sx/{table_id:010d}/".encode()


def stale_key(table_id: int, stale_ts_ms: int, rowset_id: str, *, by_keeping: bool = False) -> bytes:
    """→ the rowset's key (`rowset_key`); `by_keeping`: in the index of rowsets a version-keeping
    compaction replaced."""
    prefix = keeping_stale_prefix(table_id) if by_keeping else stale_prefix(table_id)
    return prefix + f"{stale_ts_ms:015d}/{rowset_id}".encode()


def keeping_stale_prefix(table_id: int) -> bytes:
    """As `stale_prefix`, for the rowsets a version-keeping compaction replaced (recycled after the grace
    alone, not after the retention)."""
    return f"sk/{table_id:010d}/".encode()


def stale_ts_of(key: bytes, prefix: bytes) -> int:
    """The instant a `stale_key` under `prefix` (its table's `stale_prefix` or `keeping_stale_prefix`) names."""
    return int(key[len(prefix):].split(b"/", 1)[0])


# The decided commands' age index (projections.decided): commands by the instant they were answered.
DECIDED_AGE = b"kt/"


def _front_trimmed() -> dict[bytes, int]:
    """Indexes read from their front and deleted from it — the recycler's stale-rowset indexes, the
    version index (trimmed to the retention horizon), the decided commands' age index (forgotten after a
    week) — as family tag → the length of the prefix a scan of one names: `ProjectionStore` keeps where
    each one's live entries begin, so a scan does not step over every tombstone at its front."""
    families = (stale_prefix(0), keeping_stale_prefix(0), version_prefix(0, 0), DECIDED_AGE)
    return {prefix[:prefix.index(b"/") + 1]: len(prefix) for prefix in families}


FRONT_TRIMMED = _front_trimmed()


def file_holder_prefix(file_rowset_id: str) -> bytes:
    """Every rowset (of any table) whose file is `file_rowset_id`'s: the file's holders."""
    return b"fh/" + file_rowset_id.encode() + b"/"


def file_holder_key(file_rowset_id: str, rowset_id: str) -> bytes:
    return f"fh/{file_rowset_id}/{rowset_id}".encode()


def table_prefixes(table_id: int) -> tuple[bytes, ...]:
    """Every per-commit key range of one table (rowsets, versions, deletes, history, labels, moves,
    the stale-rowset index, delete bitmaps, the version-keeping index)."""
    t = f"{table_id:010d}/".encode()
    return (b"r/" + t, b"v/" + t, b"x/" + t, b"c/" + t, b"l/" + t, b"mv/" + t, b"sx/" + t, b"mb/" + t, b"kv/" + t,
            b"sk/" + t)


def move_prefix(table_id: int) -> bytes:
    return f"mv/{table_id:010d}/".encode()


def move_key(table_id: int, ts_ms: int) -> bytes:
    """One table's tier moves of one instant (commit times are strictly increasing per table)."""
    return move_prefix(table_id) + f"{ts_ms:015d}".encode()


# Two-phase loads: every one by its transaction id, and the label of each one still prepared.
PREPARED_LABEL = b"tl/"


def prepared_load_key(txn_id: int) -> bytes:
    return f"tx/{txn_id:015d}".encode()


def prepared_label_key(table_id: int, label: str) -> bytes:
    return PREPARED_LABEL + f"{table_id:010d}/".encode() + label.encode()


def prepared_rowset_key(rowset_id: str) -> bytes:
    """A rowset of a load still prepared: named by the log (the recycler keeps its files), not yet read."""
    return f"tr/{rowset_id}".encode()
