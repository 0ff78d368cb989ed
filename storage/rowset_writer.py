"""Writes one rowset file durably: temp name → fsync → rename → fsync of the directory.

Only after `write_rowset` returns may a command name the file (DESIGN §7): an event never points
at bytes that a crash could lose.
"""

from __future__ import annotations

import hashlib
import os
import uuid
from dataclasses import dataclass
from pathlib import Path

import pyarrow as pa
import pyarrow.parquet as pq

from storage.grouped_calls import GroupedCalls
from storage.paths import rowset_path


@dataclass(frozen=True)
class WrittenFile:
    rowset_id: str
    path: str
    num_rows: int
    size_bytes: int
    checksum: str


# A column's dictionary stops (the rest of its row group is written plain) once it holds this many
# bytes. Arrow's default, 1 MB, made a column of mostly distinct values (names, ids, times) cost three
# times its plain encoding before giving up, for files no smaller; a column of few values keeps one.
_DICTIONARY_PAGE_BYTES = 64 << 10


def new_rowset_id() -> str:
    return uuid.uuid4().hex


def _fsync_dirs(paths: frozenset[Path]) -> dict[Path, OSError | None]:
    """Each directory fsynced once; a failure is its own directory's answer, not the round's."""
    failed: dict[Path, OSError | None] = {}
    for path in paths:
        try:
            fd = os.open(path, os.O_RDONLY)
            try:
                os.fsync(fd)
            finally:
                os.close(fd)
            failed[path] = None
        except OSError as exc:
            failed[path] = exc
    return failed


# Concurrent loads into one tablet rename into one directory: one fsync of it, begun after every
# rename it stands for, makes them all durable (grouped, as a journal's group commit).
_DIR_SYNCS: GroupedCalls[Path, OSError | None] = GroupedCalls(_fsync_dirs)


def _fsync_dir(path: Path) -> None:
    failed = _DIR_SYNCS(path)
    if failed is not None:
        raise failed


def file_sha256(path: Path) -> str:
    digest = hashlib.sha256()
    with open(path, "rb") as fh:
        for chunk in iter(lambda: fh.read(1 << 20), b""):
            digest.update(chunk)
    return digest.hexdigest()


class RowsetStream:
    """One rowset file written a part at a time (a load larger than memory appends its chunks), each
    part a row group; `finish` makes it durable as above and names it. Until then only a temp file
    exists, which `abandon` (or, after a crash, the recycler's orphan sweep) removes."""

    def __init__(self, root: Path, table_id: int, partition_id: int, bucket: int) -> None:
        self.rowset_id = new_rowset_id()
        self.rel = rowset_path(table_id, partition_id, bucket, self.rowset_id)
        self.final = root / self.rel
        self.final.parent.mkdir(parents=True, exist_ok=True)
        self.tmp = self.final.with_name(f".{self.final.name}.tmp")
        self.num_rows = 0
        self._writer: pq.ParquetWriter | None = None

    def append(self, data: pa.Table) -> None:
        if self._writer is None:
            self._writer = pq.ParquetWriter(self.tmp, data.schema, compression="zstd",
                                            dictionary_pagesize_limit=_DICTIONARY_PAGE_BYTES)
        else:
            data = data.cast(self._writer.schema)  # every part has the rows' types; a NULL-only part too
        self._writer.write_table(data)
        self.num_rows += data.num_rows

    def finish(self) -> WrittenFile:
        if self._writer is None:
            raise ValueError("a rowset needs at least one part")
        self._writer.close()
        with open(self.tmp, "rb+") as fh:
            os.fsync(fh.fileno())
        checksum = file_sha256(self.tmp)
        os.replace(self.tmp, self.final)
        _fsync_dir(self.final.parent)
        return WrittenFile(rowset_id=self.rowset_id, path=self.rel, num_rows=self.num_rows,
                           size_bytes=self.final.stat().st_size, checksum=checksum)

    def abandon(self) -> None:
        if self._writer is not None:
            self._writer.close()
        self.tmp.unlink(missing_ok=True)


def write_rowset(root: Path, table_id: int, partition_id: int, bucket: int, data: pa.Table) -> WrittenFile:
    stream = RowsetStream(root, table_id, partition_id, bucket)
    stream.append(data)
    return stream.finish()
