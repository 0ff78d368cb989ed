"""Server-side prepared statements of one connection (COM_STMT_PREPARE … COM_STMT_CLOSE).

Replaces mysql-mimic 3.0.5's `PreparedStatement` and its handling in `Connection`: ids start at 1
(libmysqlclient treats 0 as "no statement"), the parameter count comes from Strata's tokenizer, the
parameter types of the last execution are kept (a client re-executing with the same bindings sends
none), long data is bounded, and the number of open statements per connection is capped.
"""

from __future__ import annotations

from collections.abc import AsyncIterator
from dataclasses import dataclass, field

from mysql_mimic.types import uint_1, uint_2, uint_4

from query.wire.errors import wire_error
from query.wire.packets import Param
from schemas.errors import ErrorCode

_MAX_STMT_ID = 2**32 - 1


@dataclass
class Statement:
    stmt_id: int
    sql: str
    placeholders: list[int]
    params: list[Param] | None = None  # the types sent at the last execution
    long_data: dict[int, bytearray] = field(default_factory=dict)
    long_data_bytes: int = 0
    long_data_error: str | None = None  # MySQL reports SEND_LONG_DATA errors at the next EXECUTE
    cursor: AsyncIterator[bytes] | None = None

    @property
    def num_params(self) -> int:
        return len(self.placeholders)

    def add_long_data(self, param_id: int, data: bytes, limit: int) -> None:
        if param_id >= self.num_params:
            self.long_data_error = f"parameter {param_id} does not exist (the statement takes {self.num_params})"
            return
        self.long_data_bytes += len(data)
        if self.long_data_bytes > limit:
            self.long_data_error = f"long data exceeds 'max_allowed_packet' bytes ({limit})"
            self.long_data.clear()
            return
        self.long_data.setdefault(param_id, bytearray()).extend(data)

    def reset(self) -> None:
        self.long_data.clear()
        self.long_data_bytes = 0
        self.long_data_error = None
        self.cursor = None


class Statements:
    """The open prepared statements of one connection."""

    def __init__(self, limit: int) -> None:
        self.limit = limit
        self._open: dict[int, Statement] = {}
        self._last_id = 0

    def add(self, sql: str, placeholders: list[int]) -> Statement:
        if len(self._open) >= self.limit:
            # ER_MAX_PREPARED_STMT_COUNT_REACHED
            raise wire_error(f"Can't create more than max_prepared_stmt_count statements (current value: "
                             f"{self.limit})", ErrorCode.MAX_PREPARED_STMT_COUNT_REACHED)
        self._last_id = self._last_id % _MAX_STMT_ID + 1
        while self._last_id in self._open:
            self._last_id = self._last_id % _MAX_STMT_ID + 1
        stmt = Statement(self._last_id, sql, placeholders)
        self._open[stmt.stmt_id] = stmt
        return stmt

    def get(self, stmt_id: int, command: str) -> Statement:
        found = self._open.get(stmt_id)
        if found is None:
            raise wire_error(f"Unknown prepared statement handler ({stmt_id}) given to {command}",
                             ErrorCode.UNKNOWN_STMT_HANDLER)
        return found

    def find(self, stmt_id: int) -> Statement | None:
        return self._open.get(stmt_id)

    def close(self, stmt_id: int) -> None:
        self._open.pop(stmt_id, None)

    def clear(self) -> None:
        self._open.clear()


def make_prepare_ok(stmt: Statement, num_columns: int) -> bytes:
    return b"".join([
        uint_1(0),  # OK
        uint_4(stmt.stmt_id),
        uint_2(num_columns),
        uint_2(stmt.num_params),
        uint_1(0),  # filler
        uint_2(0),  # warnings
    ])
