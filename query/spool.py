"""The SQL server's spool folder: local disk where a bulk path keeps what it streams instead of
holding it in memory — a Stream Load body, a Broker Load or S3() object, an OUTFILE/EXPORT file
before its upload. Files left by a server that died are pruned when its HTTP routes start."""

from __future__ import annotations

from pathlib import Path


def spool_dir(home: Path) -> Path:
    folder = home / "stream_load" / "spool"
    folder.mkdir(parents=True, exist_ok=True)
    return folder
