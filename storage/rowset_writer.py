"""Writes one rowset file durably: temp name → fsync → rename → fsync of the directory.

Only after `write_rowset` returns may a command name the file (DESIGN §7): an event never points
at bytes that a crash could lose.
"""

from __future__ import annotations

import hashlib
import os
import uuid
from collections.abc import Sequence
from dataclasses import dataclass
from pathlib import Path

import duckdb
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
# Rows per row group. Files are sorted by the table's key and each row group has min/max statistics,
# so a read that filters on the key (or on a column that follows it) skips the row groups whose range
# cannot match; smaller groups skip more, larger ones cost less per group to scan.
ROW_GROUP_ROWS = 65536
# What re-sorting a file written in several parts may hold in memory before DuckDB spills to disk.
_SORT_MEMORY = "256MB"


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
    """One rowset file written a part at a time (a load larger than memory appends its chunks), in row
    groups of `ROW_GROUP_ROWS`; `finish` makes it durable as above and names it. Until then only temp
    files exist, which `abandon` (or, after a crash, the recycler's orphan sweep) removes.

    With a `sort_key` (file column names: the table's key) the file's rows are in that order, so that
    its row groups cover disjoint key ranges and their statistics prune reads. The first part is held
    until a second comes or the file finishes: a file of one part is sorted in memory; the parts of a
    larger one are spooled unsorted (uncompressed) and sorted as a whole by `finish` (DuckDB,
    spilling past `_SORT_MEMORY`), which also writes sorted files past `_SMALL_PART_ROWS`. Readers never
    depend on the order (rows of one key are ordered by `__seq`)."""

    def __init__(self, root: Path, table_id: int, partition_id: int, bucket: int,
                 sort_key: Sequence[str] = ()) -> None:
        self.rowset_id = new_rowset_id()
        self.rel = rowset_path(table_id, partition_id, bucket, self.rowset_id)
        self.final = root / self.rel
        self.final.parent.mkdir(parents=True, exist_ok=True)
        self.tmp = self.final.with_name(f".{self.final.name}.tmp")
        self.sort_key = tuple(sort_key)
        self.num_rows = 0
        self._first: pa.Table | None = None
        self._writer: pq.ParquetWriter | None = None
        self._spool = self.tmp.with_name(f"{self.tmp.name}.spool")

    def append(self, data: pa.Table) -> None:
        self.num_rows += data.num_rows
        if self.sort_key and self._writer is None and self._first is None:
            self._first = data
            return
        if self._writer is None:
            first, self._first = self._first, None
            if first is None:
                self._writer = _parquet_writer(self.tmp, data.schema)
            else:
                # The spool is read once, by the sort: written as cheaply as Parquet allows.
                self._writer = pq.ParquetWriter(self._spool, first.schema, compression="none", use_dictionary=False,
                                                write_statistics=False)
                self._writer.write_table(first, row_group_size=ROW_GROUP_ROWS)
                data = data.cast(self._writer.schema)
        else:
            data = data.cast(self._writer.schema)  # every part has the rows' types; a NULL-only part too
        self._writer.write_table(data, row_group_size=ROW_GROUP_ROWS)

    def finish(self) -> WrittenFile:
        if self._first is not None:
            first, self._first = self._first, None
            if first.num_rows <= _SMALL_PART_ROWS or any(pa.types.is_null(f.type) for f in first.schema):
                with _parquet_writer(self.tmp, first.schema) as writer:
                    writer.write_table(first.sort_by([(name, "ascending") for name in self.sort_key]),
                                       row_group_size=ROW_GROUP_ROWS)
            else:
                self._write_sorted(first)
        elif self._writer is None:
            raise ValueError("a rowset needs at least one part")
        else:
            self._writer.close()
            if self.sort_key:
                self._write_sorted(None)
                self._spool.unlink()
        with open(self.tmp, "rb+") as fh:
            os.fsync(fh.fileno())
        checksum = file_sha256(self.tmp)
        os.replace(self.tmp, self.final)
        _fsync_dir(self.final.parent)
        return WrittenFile(rowset_id=self.rowset_id, path=self.rel, num_rows=self.num_rows,
                           size_bytes=self.final.stat().st_size, checksum=checksum)

    def _write_sorted(self, part: pa.Table | None) -> None:
        """The temp file written by DuckDB, sorted, from one part in memory or (None) from the spool.

        DuckDB's Parquet (integer-backed decimals, dictionaries only where they pay) is about 40 % smaller
        than pyarrow's and scans faster; files are only ever read by DuckDB."""
        con = duckdb.connect(config={"memory_limit": _SORT_MEMORY,
                                     "temp_directory": str(self.tmp.with_name(f"{self.tmp.name}.spill"))})
        try:
            if part is not None:
                con.register("part", part)
            source = "part" if part is not None else f"read_parquet({_literal(str(self._spool))})"
            con.execute(f"COPY (SELECT * FROM {source} ORDER BY {_order(self.sort_key)}) TO "
                        f"{_literal(str(self.tmp))} (FORMAT PARQUET, COMPRESSION zstd, "
                        f"ROW_GROUP_SIZE {ROW_GROUP_ROWS})")
        finally:
            con.close()

    def abandon(self) -> None:
        self._first = None
        if self._writer is not None:
            self._writer.close()
        self.tmp.unlink(missing_ok=True)
        self._spool.unlink(missing_ok=True)


def _literal(text: str) -> str:
    return "'" + text.replace("'", "''") + "'"


def _order(sort_key: Sequence[str]) -> str:
    return ", ".join('"' + name.replace('"', '""') + '"' for name in sort_key)


# A part up to this many rows is sorted and written by pyarrow (no DuckDB connection for a small INSERT);
# a larger one by DuckDB.
_SMALL_PART_ROWS = 100_000


def _parquet_writer(path: Path, schema: pa.Schema) -> pq.ParquetWriter:
    return pq.ParquetWriter(path, schema, compression="zstd", dictionary_pagesize_limit=_DICTIONARY_PAGE_BYTES,
                            write_statistics=True, store_decimal_as_integer=True)


def write_rowset(root: Path, table_id: int, partition_id: int, bucket: int, data: pa.Table,
                 sort_key: Sequence[str] = ()) -> WrittenFile:
    stream = RowsetStream(root, table_id, partition_id, bucket, sort_key)
    stream.append(data)
    return stream.finish()
