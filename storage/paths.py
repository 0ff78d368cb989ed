"""Where a rowset's files live, relative to a tier root. Built from ids only: no user string
(table or partition name) ever becomes part of a path."""

from __future__ import annotations

import re
from pathlib import Path, PurePosixPath

HIDDEN_VERSION = "__version"
HIDDEN_SEQ = "__seq"
HIDDEN_DELETE_SIGN = "__delete_sign"


def rowset_path(table_id: int, partition_id: int, bucket: int, rowset_id: str) -> str:
    if not rowset_id.isalnum():
        raise ValueError(f"rowset id {rowset_id!r} must be alphanumeric")
    return f"t{table_id}/p{partition_id}/b{bucket}/{rowset_id}.parquet"


class UnsafePath(ValueError):
    """A rowset path that is not one Strata builds from ids: never read, written or deleted."""


_ROWSET_PATH = re.compile(r"t\d+/p(\d+)/b(\d+)/([0-9A-Za-z]+)\.parquet")


def path_problem(path: str, expected: str) -> str | None:
    """Why `path`, as a command names it, is not `expected` (the path built from the rowset's ids);
    None when it is. Commands come from anyone who can write `strata.commands`: an absolute path or
    a `..` in one would otherwise reach the recycler's and the readers' file calls."""
    pure = PurePosixPath(path)
    if pure.is_absolute() or "\\" in path or (len(path) > 1 and path[1] == ":"):
        return f"rowset path '{path}' must be relative to its tier root"
    if ".." in pure.parts:
        return f"rowset path '{path}' must not contain '..'"
    if path != expected:
        return f"rowset path '{path}' is not '{expected}', the path built from the rowset's ids"
    return None


def check_rowset_path(path: str, partition_id: int, bucket: int, rowset_id: str) -> str:
    """`path` if it has the id-built shape for this rowset, else UnsafePath. Readers and deleters
    call it on paths that come from the log: a forged event bypasses the sequencer's rules."""
    found = _ROWSET_PATH.fullmatch(path)
    if found is None or found.groups() != (str(partition_id), str(bucket), rowset_id):
        raise UnsafePath(f"rowset {rowset_id!r} names path {path!r}, not one built from its ids; refused")
    return path


def under(root: Path, rel_path: str) -> Path:
    """`root / rel_path`, refusing an absolute path or one with `..` (a lexical check: no file
    system call)."""
    if PurePosixPath(rel_path).is_absolute() or ".." in PurePosixPath(rel_path).parts:
        raise UnsafePath(f"path {rel_path!r} is not relative to its tier root; refused")
    return root / rel_path


def contained(root: Path, rel_path: str) -> Path:
    """`root / rel_path`, refusing any path that would resolve outside `root` (absolute, `..`,
    or through a symlink)."""
    candidate = under(root, rel_path)
    resolved_root = root.resolve()
    if not candidate.resolve().is_relative_to(resolved_root):
        raise UnsafePath(f"path {rel_path!r} resolves outside its tier root {root}; refused")
    return candidate
