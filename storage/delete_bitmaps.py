"""Delete bitmaps of merge-on-write Unique Key tables: their files and their SQL.

A delete bitmap lists the rows one commit superseded in one tablet, as (rowset id, row number in the
rowset's file) pairs: the rows of the keys it wrote that lost to another row (an older row replaced,
or the commit's own row when a higher sequence value was there already, or an earlier row of the same
key in the same load). A merge-on-write read is the tablet's rows minus the pairs of the bitmaps at or
below the version it reads (`storage.rowset_sql.table_rows_sql(superseded=…)`), with no window over
the rows. The file is Parquet (`rowset_id` VARCHAR, `row` BIGINT) under the tablet's folder of the
ssd tier, named from ids only (`.bitmap`, so the recycler's sweep of rowset files never takes it).
"""

from __future__ import annotations

import os
import re
import uuid
from collections.abc import Mapping, Sequence
from pathlib import Path

import pyarrow as pa
import pyarrow.parquet as pq

from storage.paths import UnsafePath
from storage.rowset_sql import DeleteRule, MergeSpec, RowsetFile, quote_literal, visible_rows_sql

BITMAP_SCHEMA = pa.schema([("rowset_id", pa.string()), ("row", pa.int64())])
_BITMAP_PATH = re.compile(r"t(\d+)/p(\d+)/b(\d+)/v(\d+)_[0-9a-f]{32}\.bitmap")
# A bitmap file's name (its version is group 1).
BITMAP_FILE = re.compile(r"v(\d+)_[0-9a-f]{32}\.bitmap")
# No position at all: what a read applies when no bitmap has a row for its files.
NOTHING_SUPERSEDED = "SELECT CAST(NULL AS INTEGER) AS __file, CAST(NULL AS BIGINT) AS __row WHERE false"


def bitmap_path(table_id: int, partition_id: int, bucket: int, version: int) -> str:
    """A new bitmap file's path relative to the tier root (unique: two computations of one version
    never write over each other's file while a reader may read it)."""
    return f"t{table_id}/p{partition_id}/b{bucket}/v{version}_{uuid.uuid4().hex}.bitmap"


def bitmap_path_problem(path: str, table_id: int, partition_id: int, bucket: int,
                        version: int | None) -> str | None:
    """Why `path` is not a bitmap path built from these ids (None: it is one; `version` None: of any
    version). Paths come from the log, which anyone who can write `strata.commands` reaches: never
    open what Strata did not build."""
    found = _BITMAP_PATH.fullmatch(path)
    if found is None or tuple(map(int, found.groups()))[:3] != (table_id, partition_id, bucket) or \
            (version is not None and int(found.group(4)) != version):
        return f"delete bitmap path {path!r} is not one built from table {table_id}, partition {partition_id}, " \
               f"bucket {bucket} and version {version}"
    return None


def checked_bitmap_path(path: str, table_id: int, partition_id: int, bucket: int, version: int | None = None) -> str:
    problem = bitmap_path_problem(path, table_id, partition_id, bucket, version)
    if problem is not None:
        raise UnsafePath(problem + "; refused")
    return path


def write_bitmap(root: Path, rel_path: str, positions: pa.Table) -> None:
    """Writes the (rowset_id, row) pairs durably (temp name, fsync, rename, fsync of the folder), as
    rowset files are: a command names the file only once it cannot be lost."""
    final = root / rel_path
    final.parent.mkdir(parents=True, exist_ok=True)
    tmp = final.with_name(f".{final.name}.tmp")
    pq.write_table(positions.select(["rowset_id", "row"]).cast(BITMAP_SCHEMA), tmp, compression="zstd")
    with open(tmp, "rb+") as fh:
        os.fsync(fh.fileno())
    os.replace(tmp, final)
    fd = os.open(final.parent, os.O_RDONLY)
    try:
        os.fsync(fd)
    finally:
        os.close(fd)


def superseded_sql(locations: Sequence[str], file_index: Mapping[str, int]) -> str:
    """The (`__file`, `__row`) positions the bitmap files at `locations` mark in the files a read
    names (`file_index`: rowset id → the file's index in the read's file list). Pairs naming rowsets
    the read does not use are left out: a compaction output that replaced them has no such rows."""
    if not locations or not file_index:
        return NOTHING_SUPERSEDED
    paths = ", ".join(quote_literal(p) for p in locations)
    mapping = ", ".join(f"({quote_literal(rowset_id)}, {i})" for rowset_id, i in file_index.items())
    return (f"SELECT CAST(__m.i AS INTEGER) AS __file, __b.row AS __row FROM read_parquet([{paths}]) AS __b "
            f"JOIN (VALUES {mapping}) AS __m(r, i) ON __b.rowset_id = __m.r")


def superseded_rows_sql(spec: MergeSpec, files: Sequence[RowsetFile], deletes: Sequence[DeleteRule]) -> str:
    """What a commit supersedes in a tablet: `files` are the tablet's cover below the commit, then the
    commit's own file (last). Every row of a key the commit wrote (older or its own) but the winner —
    as a merge-on-read merge picks it (`MergeSpec.unique_order`) — as (`__file`, `__row`)."""
    new = files[-1]
    keys = [c.file_column for c in spec.columns if c.is_key]
    visible = visible_rows_sql(spec, files, deletes, positions=True)
    written = visible_rows_sql(spec, [new], [])
    on = " AND ".join(f"__a.{k} IS NOT DISTINCT FROM __n.{k}" for k in keys)
    touched = (f"SELECT * FROM ({visible}) AS __a SEMI JOIN (SELECT DISTINCT {', '.join(keys)} "
               f"FROM ({written})) AS __n ON {on}")
    return (f"SELECT __file, __row FROM (SELECT __file, __row, row_number() OVER (PARTITION BY {', '.join(keys)} "
            f"ORDER BY {spec.unique_order()}) AS __rn FROM ({touched})) WHERE __rn > 1")
