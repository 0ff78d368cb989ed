"""The rows a Stream Load rejected, kept as a file on this SQL server and served over HTTP at the
reply's ErrorURL (Doris BE's `/api/_load_error_log?file=…`), one line per row: its reason and its
source text."""

from __future__ import annotations

import re
import time
import uuid
from collections.abc import Iterable
from pathlib import Path
from typing import TextIO

_NAME = re.compile(r"error_log_[0-9a-f]{32}")
KEEP_S = 48 * 3600  # Doris BE's load_error_log_reserve_hours


def directory(home: Path) -> Path:
    return home / "stream_load" / "error_logs"


class ErrorLog:
    """One load's rejected rows, written to their file as the load finds them: a load may reject
    millions of rows (`max_filter_ratio` up to 1), and none of them is held in memory."""

    def __init__(self, home: Path) -> None:
        self._home = home
        self._out: TextIO | None = None
        self.name: str | None = None  # the file's name for the ErrorURL, once a row was written

    def add(self, rows: Iterable[tuple[str, str]]) -> None:
        """Appends (reason, source text) rows."""
        for reason, text in rows:
            if self._out is None:
                folder = directory(self._home)
                folder.mkdir(parents=True, exist_ok=True)
                prune(folder, KEEP_S)
                self.name = f"error_log_{uuid.uuid4().hex}"
                self._out = open(folder / self.name, "w", encoding="utf-8")  # noqa: SIM115 - closed by close()
            self._out.write(f"Reason: {reason}. src line [{text}]; \n")

    def close(self) -> str | None:
        """Closes the file (idempotent); returns its name, None when no row was rejected."""
        if self._out is not None:
            self._out.close()
            self._out = None
        return self.name

    def __enter__(self) -> ErrorLog:
        return self

    def __exit__(self, *exc: object) -> None:
        self.close()


def path_of(home: Path, name: str) -> Path | None:
    """The file named `name`, or None when the name is not one an ErrorLog makes or the file is gone."""
    if not _NAME.fullmatch(name):
        return None
    path = directory(home) / name
    return path if path.is_file() else None


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
