"""Writes one rowset file durably: temp name → fsync → rename → fsync of the directory.

Only after `write_rowset` returns may a command name the file (DESIGN §7): an event never points
at bytes that a crash could lose.
"""

from __future__ import annotations

import hashlib
import itertools
import os
import uuid
from collections.abc import Sequence
from dataclasses import dataclass
from pathlib import Path

import duckdb
import pyarrow as pa
import pyarrow.compute as pc
import pyarrow.parquet as pq

from storage.grouped_calls import GroupedCalls
from storage.parquet_codecs import DEFAULT_CODEC
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
# Data pages of about this size, with a page index (each page's min/max, Parquet's ColumnIndex), and
# dictionaries only for text and binary columns: DuckDB then decodes only the pages of a row group whose
# range can match, and numbers plain. On a 5M-row key-sorted table, against DuckDB's own writer (1 MB
# pages, dictionaries on any column of few values): a point lookup by key 3.7 → 2.8 ms, GROUP BY a
# 21-value DECIMAL 17 → 13 ms, a filtered aggregate 25 → 21 ms, files 2 % larger. Smaller pages cost
# scans (16 KB: twice the time of a 1M-row scan).
_PAGE_BYTES = 64 << 10
# An integer-valued column (integers, dates, times, DECIMALs up to 18 digits: Parquet stores them as
# INT32/INT64) whose values spread over at least a row group's rows ÷ this is delta-encoded
# (DELTA_BINARY_PACKED: the differences between neighbours, bit-packed); narrower ones stay plain. Measured
# with DuckDB on a 5M-row table sorted by its key, random values (ids, prices, a shuffled `__seq`): files
# 138 → 100 MB, a filtered aggregate 37 → 33 ms, GROUP BY 1000 values 33 → 29 ms, a top-10 9.7 → 8.0 ms, sums
# of the delta-encoded columns 44 → 31 ms, a point lookup unchanged. Keys, times and sequences that grow
# step by step shrink to a few bits a value: sums of two sequential BIGINTs over 1M of a version-keeping
# file's 2M rows 13 → 5 ms, files 23 MB → 0.2 MB. A column of few values (a 21-value DECIMAL, a quantity, a
# date among 2,500) decodes faster plain: delta on every column made GROUP BY 21 values 13 → 18 ms.
_DELTA_SPREAD = 8
# Rows per row group, at most. Files are sorted by the table's key and each row group has min/max
# statistics, so a read that filters on the key skips the row groups whose range cannot match, and
# inside the group it reads, DuckDB skips the pages the page index rules out: a point lookup reads a
# page or two either way, and pays per row group of the file for the footer's statistics and the scan's
# setup. Measured with DuckDB on a 5M-row table sorted by its key (9 columns, ~80 bytes a row in Arrow):
# point lookup 3.2 / 3.3 / 2.7 / 2.5 ms with groups of 64k / 128k / 256k / 1M rows, and 6.4 ms with 16k; a
# filtered aggregate 17.5 / 15.3 / 14.1 / 14.9 ms. Groups of 256k keep four groups a million rows for
# the scan's threads; past `_ROW_GROUP_BYTES` a group holds fewer rows (`group_rows`), down to 64k.
ROW_GROUP_ROWS = 262144
_MIN_GROUP_ROWS = 65536
# What one row group of a wide table may take in memory as Arrow while it is written (pyarrow's writer
# holds the group being written, `_WholeGroups` the rows after the last whole one).
_ROW_GROUP_BYTES = 32 << 20
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


def group_rows(sample: pa.Table) -> int:
    """Rows per row group for a file of `sample`'s rows: ROW_GROUP_ROWS, fewer for rows so wide that a
    group would pass `_ROW_GROUP_BYTES` (never under `_MIN_GROUP_ROWS`)."""
    row_bytes = sample.nbytes // sample.num_rows if sample.num_rows else 0
    return max(_MIN_GROUP_ROWS, min(ROW_GROUP_ROWS, _ROW_GROUP_BYTES // max(row_bytes, 1)))


class _WholeGroups:
    """A Parquet writer whose row groups hold `rows` rows across the parts written to it (parts end
    anywhere; a short group in the middle of a file would prune worse, and DuckDB, copying such a
    file, would join its rows to the next group's)."""

    def __init__(self, writer: pq.ParquetWriter, rows: int) -> None:
        self.writer = writer
        self.rows = rows
        self._carry: pa.Table | None = None  # the rows after the last whole group written

    def write(self, data: pa.Table) -> None:
        pending = data if self._carry is None else pa.concat_tables([self._carry, data])
        whole = pending.num_rows - pending.num_rows % self.rows
        if whole:
            self.writer.write_table(pending.slice(0, whole), row_group_size=self.rows)
        self._carry = pending.slice(whole) if whole < pending.num_rows else None

    def close(self) -> None:
        if self._carry is not None:
            self.writer.write_table(self._carry, row_group_size=self.rows)
            self._carry = None
        self.writer.close()


class RowsetStream:
    """One rowset file written a part at a time (a load larger than memory appends its chunks), in row
    groups of `group_rows` of its first part; `finish` makes it durable as above and names it. Until
    then only temp files exist, which `abandon` (or, after a crash, the recycler's orphan sweep) removes.

    With a `sort_key` (file column names: the table's key) the file's rows are in that order, so that
    its row groups cover disjoint key ranges and their statistics prune reads. The first part is held
    until a second comes or the file finishes: a file of one part is sorted in memory; the parts of a
    larger one are spooled unsorted (uncompressed) and sorted as a whole by `finish` (DuckDB,
    spilling past `_SORT_MEMORY`), which also writes sorted files past `_SMALL_PART_ROWS`. Parts that
    come in key order (each sorted, each starting at or after the previous one's last key: loads of
    increasing ids or event times, a producer's usual order) are written as they are, without the
    sort. Readers never depend on the order (rows of one key are ordered by `__seq`)."""

    def __init__(self, root: Path, table_id: int, partition_id: int, bucket: int,
                 sort_key: Sequence[str] = (), codec: str = DEFAULT_CODEC) -> None:
        self.rowset_id = new_rowset_id()
        self.codec = codec  # pyarrow's name, from `parquet_codec`
        self.rel = rowset_path(table_id, partition_id, bucket, self.rowset_id)
        self.final = root / self.rel
        self.final.parent.mkdir(parents=True, exist_ok=True)
        self.tmp = self.final.with_name(f".{self.final.name}.tmp")
        self.sort_key = tuple(sort_key)
        self.num_rows = 0
        self._first: pa.Table | None = None
        self._schema: pa.Schema | None = None  # the first part's: every later part is cast to it
        self._group_rows = ROW_GROUP_ROWS  # chosen from the first part (`group_rows`)
        self._file: _WholeGroups | None = None  # the temp file, written part by part while in key order
        self._spool_file: _WholeGroups | None = None  # the parts once out of order, for `finish` to sort
        self._spool = self.tmp.with_name(f"{self.tmp.name}.spool")
        self._in_order_part = self.tmp.with_name(f"{self.tmp.name}.ordered")  # what `_file` held by then
        # Whether every part so far came in key order, and the key of the last row then.
        self._in_order = True
        self._last_key: tuple[object, ...] | None = None

    def append(self, data: pa.Table) -> None:
        if self.num_rows == 0:
            self._group_rows = group_rows(data)
        self.num_rows += data.num_rows
        if self.sort_key and self._in_order:
            self._in_order = self._continues_order(data)
        if self.sort_key and self._first is None and self._file is None and self._spool_file is None:
            self._first = data
            return
        first, self._first = self._first, None
        for part in (data,) if first is None else (first, data):
            if self._schema is None:
                self._schema = part.schema
            else:
                part = part.cast(self._schema)  # every part has the rows' types; a NULL-only part too
            if self._in_order or not self.sort_key:
                self._to_file(part)
            else:
                self._to_spool(part)

    def _to_file(self, part: pa.Table) -> None:
        if self._file is None:
            self._file = _WholeGroups(_parquet_writer(self.tmp, part, self.codec), self._group_rows)
        self._file.write(part)

    def _to_spool(self, part: pa.Table) -> None:
        if self._file is not None:  # the parts before came in order: kept aside, sorted with the rest
            self._file.close()
            self._file = None
            os.replace(self.tmp, self._in_order_part)
        if self._spool_file is None:
            # The spool is read once, by the sort: written as cheaply as Parquet allows.
            self._spool_file = _WholeGroups(pq.ParquetWriter(self._spool, part.schema, compression="none",
                                                             use_dictionary=False, write_statistics=False),
                                            self._group_rows)
        self._spool_file.write(part)

    def finish(self) -> WrittenFile:
        checksum: str | None = None
        if self._first is not None:
            by_duckdb = self.needs_sort
            first, self._first = self._first, None
            if not by_duckdb:
                ordered = first if self._in_order else first.sort_by([(n, "ascending") for n in self.sort_key])
                if ordered.nbytes <= _IN_MEMORY_BYTES:
                    checksum = _write_encoded(self.tmp, ordered, self.codec, self._group_rows)
                else:
                    with _parquet_writer(self.tmp, ordered, self.codec) as writer:
                        writer.write_table(ordered, row_group_size=self._group_rows)
            else:
                self._write_sorted(first)
        elif self._file is not None:
            self._file.close()
        elif self._spool_file is not None:
            self._spool_file.close()
            self._write_sorted(None)
            self._spool.unlink()
            self._in_order_part.unlink(missing_ok=True)
        else:
            raise ValueError("a rowset needs at least one part")
        if checksum is None:
            with open(self.tmp, "rb+") as fh:
                os.fsync(fh.fileno())
            checksum = file_sha256(self.tmp)
        os.replace(self.tmp, self.final)
        _fsync_dir(self.final.parent)
        return WrittenFile(rowset_id=self.rowset_id, path=self.rel, num_rows=self.num_rows,
                           size_bytes=self.final.stat().st_size, checksum=checksum)

    def _write_sorted(self, part: pa.Table | None) -> None:
        """The temp file sorted by DuckDB (spilling past `_SORT_MEMORY`) and written by `_parquet_writer`
        as the sort's batches come, from one part in memory or (None) from the spool and the parts
        written before the order broke. The rows keep the parts' Arrow types (DuckDB's may differ: a
        large_string comes back a string), so the file is the one the other paths would write."""
        con = duckdb.connect(config={"memory_limit": _SORT_MEMORY,
                                     "temp_directory": str(self.tmp.with_name(f"{self.tmp.name}.spill"))})
        try:
            if part is not None:
                con.register("part", part)
                source = "part"
            else:
                files = [self._spool, *([self._in_order_part] if self._in_order_part.exists() else [])]
                source = f"read_parquet([{', '.join(_literal(str(f)) for f in files)}])"
            schema = self._schema if part is None else part.schema
            assert schema is not None
            reader = con.sql(f"SELECT * FROM {source} ORDER BY {_order(self.sort_key)}").to_arrow_reader(
                self._group_rows)
            batches = (pa.Table.from_batches([batch]).cast(schema) for batch in reader)
            first = next(batches, schema.empty_table())
            # The first sorted rows choose the encodings.
            out = _WholeGroups(_parquet_writer(self.tmp, first, self.codec), self._group_rows)
            try:
                for rows in itertools.chain([first], batches):
                    out.write(rows)
            finally:
                out.close()
        finally:
            con.close()

    @property
    def needs_sort(self) -> bool:
        """Whether `finish` sorts with DuckDB (holding up to `_SORT_MEMORY`) rather than only writing: parts
        out of order, or one part out of order too large to sort in memory (and with no NULL-typed column)."""
        if self._spool_file is not None:
            return True
        first = self._first
        return first is not None and not self._in_order and first.num_rows > _SMALL_PART_ROWS and \
            not any(pa.types.is_null(f.type) for f in first.schema)

    @property
    def in_key_order(self) -> bool:
        """Whether the parts so far came in key order (the file then needs no sort)."""
        return bool(self.sort_key) and self._in_order

    def _continues_order(self, part: pa.Table) -> bool:
        """Whether `part` is sorted by the key and starts at or after the last key so far (and then
        remembers its last key). NULL keys, NaN or uncomparable values count as out of order: the
        sort then decides, as it always may."""
        if not part.num_rows:
            return True
        columns = [part[name] for name in self.sort_key]
        try:
            if any(c.null_count for c in columns) or not _sorted_within(columns):
                return False
            first = tuple(c[0].as_py() for c in columns)
            if self._last_key is not None and not self._last_key <= first:
                return False
        except (pa.ArrowNotImplementedError, pa.ArrowInvalid, TypeError):
            return False
        self._last_key = tuple(c[-1].as_py() for c in columns)
        return True

    def abandon(self) -> None:
        self._first = None
        for writer in (self._file, self._spool_file):
            if writer is not None:
                writer.writer.close()
        for path in (self.tmp, self._spool, self._in_order_part):
            path.unlink(missing_ok=True)


def _sorted_within(columns: Sequence[pa.ChunkedArray]) -> bool:
    """Whether the rows are in ascending lexicographic order of `columns` (no NULLs among them)."""
    rows = len(columns[0])
    if rows < 2:
        return True
    ahead: pa.Array | None = None  # row i sorts before row i + 1 on the columns seen so far
    tied: pa.Array | None = None  # row i equals row i + 1 on the columns seen so far
    for column in columns:
        this, after = column.slice(0, rows - 1), column.slice(1)
        less, equal = pc.less(this, after), pc.equal(this, after)
        ahead = less if ahead is None else pc.or_(ahead, pc.and_(tied, less))
        tied = equal if tied is None else pc.and_(tied, equal)
    return bool(pc.all(pc.or_(ahead, tied)).as_py())


def _literal(text: str) -> str:
    return "'" + text.replace("'", "''") + "'"


def _order(sort_key: Sequence[str]) -> str:
    return ", ".join('"' + name.replace('"', '""') + '"' for name in sort_key)


# A part up to this many rows is sorted and written by pyarrow (no DuckDB connection for a small INSERT);
# a larger one by DuckDB.
_SMALL_PART_ROWS = 100_000


# A file of one part up to this many bytes in memory is encoded there, hashed there and written with one
# write (a small INSERT's file): writing through a Parquet file writer and reading the file back to hash
# it cost four times as much CPU.
_IN_MEMORY_BYTES = 8 << 20


def _write_encoded(path: Path, data: pa.Table, codec: str, rows_per_group: int) -> str:
    """Writes `data` as the Parquet file `path` (fsynced), encoded in memory; returns its SHA-256."""
    sink = pa.BufferOutputStream()
    with _parquet_writer(sink, data, codec) as writer:
        writer.write_table(data, row_group_size=rows_per_group)
    encoded = sink.getvalue()
    fd = os.open(path, os.O_WRONLY | os.O_CREAT | os.O_TRUNC, 0o666)
    try:
        view = memoryview(encoded)
        while view:
            view = view[os.write(fd, view):]
        os.fsync(fd)
    finally:
        os.close(fd)
    return hashlib.sha256(encoded).hexdigest()


def _dictionary_columns(schema: pa.Schema) -> list[str]:
    """The columns worth a dictionary: text and binary (a number's dictionary, even of few values, makes
    DuckDB's scans and lookups slower than its plain encoding)."""
    return [f.name for f in schema if pa.types.is_string(f.type) or pa.types.is_large_string(f.type)
            or pa.types.is_binary(f.type) or pa.types.is_large_binary(f.type)]


def _stored_as_integers(kind: pa.DataType) -> bool:
    """Whether Parquet stores the type as INT32/INT64 (with `store_decimal_as_integer`), the physical
    types DELTA_BINARY_PACKED encodes."""
    return (pa.types.is_integer(kind) or pa.types.is_date32(kind) or pa.types.is_timestamp(kind)
            or pa.types.is_time(kind) or (pa.types.is_decimal(kind) and kind.precision <= 18))


def _spread(column: pa.ChunkedArray) -> int:
    """max − min of an integer-valued column, in its stored units (0 when it holds no value)."""
    kind = column.type
    if not (pa.types.is_integer(kind) or pa.types.is_decimal(kind)):
        # Dates, times and timestamps as the integers they are stored as.
        column = column.cast(pa.int32() if kind.bit_width == 32 else pa.int64())
    found = pc.min_max(column)
    low, high = found["min"].as_py(), found["max"].as_py()
    if low is None:
        return 0
    # A DECIMAL is stored as its unscaled integer.
    return int((high - low).scaleb(kind.scale)) if pa.types.is_decimal(kind) else high - low


def _delta_columns(sample: pa.Table) -> dict[str, str]:
    """The integer-valued columns of `sample` (a file's first rows) whose first row group spreads over at
    least its rows ÷ `_DELTA_SPREAD`, to be delta-encoded (see `_DELTA_SPREAD`)."""
    head = sample.slice(0, group_rows(sample))
    if head.num_rows < 2:
        return {}  # a single-row INSERT's file: nothing to gain, nothing computed
    return {field.name: "DELTA_BINARY_PACKED" for field, column in zip(head.schema, head.columns, strict=True)
            if _stored_as_integers(field.type) and _spread(column) * _DELTA_SPREAD >= head.num_rows}


def _parquet_writer(path: Path | pa.NativeFile, sample: pa.Table, codec: str) -> pq.ParquetWriter:
    """The writer of a rowset file with `sample`'s schema, its encodings chosen from `sample` (the file's
    first rows; see `_DELTA_SPREAD`)."""
    schema = sample.schema
    return pq.ParquetWriter(path, schema, compression=codec, use_dictionary=_dictionary_columns(schema),
                            column_encoding=_delta_columns(sample) or None,
                            dictionary_pagesize_limit=_DICTIONARY_PAGE_BYTES, data_page_size=_PAGE_BYTES,
                            write_page_index=True, write_statistics=True, store_decimal_as_integer=True)


def write_rowset(root: Path, table_id: int, partition_id: int, bucket: int, data: pa.Table,
                 sort_key: Sequence[str] = (), codec: str = DEFAULT_CODEC) -> WrittenFile:
    stream = RowsetStream(root, table_id, partition_id, bucket, sort_key, codec)
    stream.append(data)
    return stream.finish()
