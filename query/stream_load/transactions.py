"""Stream Load two-phase commit (header `two_phase_commit: true`, then `_stream_load_2pc`)."""

from __future__ import annotations

from dataclasses import dataclass

import pyarrow as pa

from projections.state import TableState
from query.context import Context
from query.stream_load.request import BadRequest, StreamLoadRequest
from schemas.model import Partition


@dataclass(frozen=True)
class Prepared:
    txn_id: int
    label: str


def by_label(ctx: Context, table_id: int, label: str) -> Prepared | None:
    return None


def prepare(ctx: Context, table: TableState, data: pa.Table, request: StreamLoadRequest,
            new_partitions: tuple[Partition, ...]) -> int:
    raise BadRequest("two_phase_commit is not supported yet")


def finish_request(ctx: Context, viewer: object, db: str, headers: dict[str, str]) -> dict[str, str]:
    return {"status": "FAILED", "msg": "two_phase_commit is not supported yet"}
