"""The SQL server's spool folder: local disk where a bulk path keeps what it streams instead of
holding it in memory — a Stream Load body, a Broker Load or S3() object, an OUTFILE/EXPORT file
before its upload.

Each spool file's name starts with its owner: the pid and the start time of the process that made it.
A server killed mid-load leaves its files behind; the next server to start (`prune_orphans`, when its
HTTP routes start) removes every file whose owner is no longer running, right away — a multi-GB body
must not wait a day on the disk. A file of a live process (another SQL server sharing the home) stays.
"""

from __future__ import annotations

import os
import re
import time
import uuid
from pathlib import Path

# Files named before owners were recorded: no owner to ask, so they go once no upload is that slow.
_UNOWNED_KEEP_S = 86400.0
_OWNED = re.compile(r"(?P<pid>\d+)-(?P<start>\d+)-[0-9a-f]{32}\..+")


def spool_dir(home: Path) -> Path:
    folder = home / "stream_load" / "spool"
    folder.mkdir(parents=True, exist_ok=True)
    return folder


def _start_ticks(pid: int) -> int | None:
    """When process `pid` started (clock ticks since boot, /proc's field 22), None when it does not run.
    With the pid, it names one process: a pid reused after a restart has another start."""
    try:
        stat = Path(f"/proc/{pid}/stat").read_text()
    except OSError:
        return None
    # The command name (field 2) is in parentheses and may hold spaces: count fields after its end.
    return int(stat[stat.rindex(")") + 2:].split()[19])


_OWNER = f"{os.getpid()}-{_start_ticks(os.getpid()) or 0}"


def spool_file(home: Path, suffix: str) -> Path:
    """A new file name in the spool folder, owned by this process (`suffix`: '.body', '.object', …)."""
    return spool_dir(home) / f"{_OWNER}-{uuid.uuid4().hex}{suffix}"


def _owner_runs(pid: int, start: int) -> bool:
    if f"{pid}-{start}" == _OWNER:
        return True
    if start == 0:  # made where /proc could not tell a start: any process of that pid counts
        try:
            os.kill(pid, 0)
        except ProcessLookupError:
            return False
        except PermissionError:
            return True
        return True
    return _start_ticks(pid) == start


def prune_orphans(home: Path) -> int:
    """Removes the spool files whose owning process no longer runs (and unowned ones a day old);
    returns how many."""
    removed = 0
    cutoff = time.time() - _UNOWNED_KEEP_S
    for path in spool_dir(home).iterdir():
        owned = _OWNED.fullmatch(path.name)
        try:
            if owned is not None:
                orphan = not _owner_runs(int(owned["pid"]), int(owned["start"]))
            else:
                orphan = path.stat().st_mtime < cutoff
            if orphan and path.is_file():
                path.unlink(missing_ok=True)
                removed += 1
        except FileNotFoundError:
            continue
    return removed
