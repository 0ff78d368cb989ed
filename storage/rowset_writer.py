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

from storage.paths import rowset_path


@dataclass(frozen=True)
class WrittenFile:
    rowset_id: str
    path: str
    num_rows: int
    size_bytes: int
    checksum: str


def new_rowset_id() -> str:
    return uuid.uuid4().hex


def _fsync_dir(path: Path) -> None:
    fd = os.open(path, os.O_RDONLY)
    try:
        os.fsync(fd)
    finally:
        os.close(fd)


def file_sha256(path: Path) -> str:
    digest = hashlib.sha256()
    with open(path, "rb") as fh:
        for chunk in iter(lambda: fh.read(1 << 20), b""):
            digest.update(chunk)
    return digest.hexdigest()


def write_rowset(root: Path, table_id: int, partition_id: int, bucket: int, data: pa.Table) -> WrittenFile:
    rowset_id = new_rowset_id()
    rel = rowset_path(table_id, partition_id, bucket, rowset_id)
    final = root / rel
    final.parent.mkdir(parents=True, exist_ok=True)
    tmp = final.with_name(f".{final.name}.tmp")
    pq.write_table(data, tmp, compression="zstd")
    with open(tmp, "rb+") as fh:
        os.fsync(fh.fileno())
    checksum = file_sha256(tmp)
    os.replace(tmp, final)
    _fsync_dir(final.parent)
    return WrittenFile(rowset_id=rowset_id, path=rel, num_rows=data.num_rows,
                       size_bytes=final.stat().st_size, checksum=checksum)
