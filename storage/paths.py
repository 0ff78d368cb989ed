"""Where a rowset's files live, relative to a tier root. Built from ids only: no user string
(table or partition name) ever becomes part of a path."""

from __future__ import annotations

HIDDEN_VERSION = "__version"
HIDDEN_SEQ = "__seq"
HIDDEN_DELETE_SIGN = "__delete_sign"


def rowset_path(table_id: int, partition_id: int, bucket: int, rowset_id: str) -> str:
    if not rowset_id.isalnum():
        raise ValueError(f"rowset id {rowset_id!r} must be alphanumeric")
    return f"t{table_id}/p{partition_id}/b{bucket}/{rowset_id}.parquet"
