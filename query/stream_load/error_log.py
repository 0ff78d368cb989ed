"""The rows a Stream Load rejected, kept as a file on this SQL server and served over HTTP at the
reply's ErrorURL (Doris BE's `/api/_load_error_log?file=…`), one line per row: its reason and its
source text."""

from __future__ import annotations

import re
import uuid
from pathlib import Path

_NAME = re.compile(r"error_log_[0-9a-f]{32}")


def directory(home: Path) -> Path:
    return home / "stream_load" / "error_logs"


def write(home: Path, rows: list[tuple[str, str]]) -> str:
    """Stores (reason, source text) rows; returns the file's name for the ErrorURL."""
    folder = directory(home)
    folder.mkdir(parents=True, exist_ok=True)
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
