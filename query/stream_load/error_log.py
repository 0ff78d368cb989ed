"""The rows a Stream Load rejected, kept as a file on this SQL server and served over HTTP at the
reply's ErrorURL (Doris BE's `/api/_load_error_log?file=…`), one line per row: its reason and its
source text."""

from __future__ import annotations

import re
import time
import uuid
from pathlib import Path

_NAME = re.compile(r"error_log_[0-9a-f]{32}")
KEEP_S = 48 * 3600  # Doris BE's load_error_log_reserve_hours


def directory(home: Path) -> Path:
    return home / "stream_load" / "error_logs"


def write(home: Path, rows: list[tuple[str, str]]) -> str:
    """Stores (reason, source text) rows; returns the file's name for the ErrorURL."""
    folder = directory(home)
    folder.mkdir(parents=True, exist_ok=True)
    prune(folder, KEEP_S)
    name = f"error_log_{uuid.uuid4().hex}"
    with open(folder / name, "w", encoding="utf-8") as out:
        for reason, text in rows:
            out.write(f"Reason: {reason}. src line [{text}]; \n")
    return name


def read(home: Path, name: str) -> str | None:
    """The file's text, or None when the name is not one `write` made or the file is gone."""
    if not _NAME.fullmatch(name):
        return None
    path = directory(home) / name
    return path.read_text(encoding="utf-8") if path.is_file() else None


def prune(folder: Path, keep_s: float) -> int:
    """Removes the files in `folder` older than `keep_s` (error logs served long enough, spool files a
    crash left behind); returns how many."""
    cutoff = time.time() - keep_s
    removed = 0
    for path in folder.iterdir() if folder.exists() else []:
        try:
            if path.is_file() and path.stat().st_mtime < cutoff:
                path.unlink(missing_ok=True)
                removed += 1
        except FileNotFoundError:
            continue
    return removed
