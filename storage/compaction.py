"""Merging a run of a tablet's rowsets into one file (the data half of a compaction).

Which rowsets to merge, and committing the result, belong to the callers (the compaction agent
and ADMIN COMPACT); this writes the merged file durably and says what it holds.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass
from pathlib import Path

import duckdb

from storage.parquet_codecs import DEFAULT_CODEC
from storage.rowset_sql import DeleteRule, MergeSpec, RowsetFile, compacted_rows_sql
from storage.rowset_writer import WrittenFile, write_rowset


@dataclass(frozen=True)
class CompactedFile:
    written: WrittenFile
    column_ids: tuple[int, ...]
    start_version: int
    end_version: int


def compact_files(cursor: duckdb.DuckDBPyConnection, root: Path, table_id: int, partition_id: int, bucket: int,
                  spec: MergeSpec, inputs: Sequence[RowsetFile], deletes: Sequence[DeleteRule], *,
                  base: bool, keep_versions: bool = False, codec: str = DEFAULT_CODEC) -> CompactedFile:
    """Writes the merge of `inputs` (a contiguous run, oldest first) under `root`; with `keep_versions`,
    their rows unmerged, each with its version, no delete applied (`compacted_rows_sql`).

    `spec.columns` should be every column any input holds — today's and dropped ones alike — so
    that a read at an instant before a DROP COLUMN still finds the values."""
    ordered = sorted(inputs, key=lambda f: f.start_version)
    relevant = [] if keep_versions else [
        d for d in deletes
        if ordered[0].start_version < d.version <= ordered[-1].end_version and d.partition_id == partition_id]
    data = cursor.sql(compacted_rows_sql(spec, ordered, relevant, base=base,
                                         keep_versions=keep_versions)).to_arrow_table()
    written = write_rowset(root, table_id, partition_id, bucket, data,
                           sort_key=[c.file_column for c in spec.columns if c.is_key], codec=codec)
    return CompactedFile(written=written, column_ids=tuple(c.unique_id for c in spec.columns),
                         start_version=ordered[0].start_version, end_version=ordered[-1].end_version)
